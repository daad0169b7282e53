/* Training workloads: model specs (HuggingFace config.json or trainsim's own
 * keys), Megatron-LM / AxoNN layouts, FLOP counts, and the op graph of one
 * training iteration per rank. Independent of SimGrid. */
#ifndef TS_WORKLOAD_H
#define TS_WORKLOAD_H

#include <stddef.h>

#include "compute/compute.h"
#include "opgraph.h"
#include "workload/stack.h"

typedef struct wl_model {
    char name[128];
    int layers, hidden, heads, kv_heads, ffn, vocab, max_seq;
    int gated;          /* SwiGLU/GeGLU MLP: three matrices (gate, up, down) */
    int tied;           /* output layer shares the input embedding */
    int learned_pos;    /* learned position embeddings (GPT-2/GPT-3) instead of rotary */
    int bias;           /* linear layers carry biases (GPT-2/GPT-3/NeoX) */
    int experts, topk;  /* MoE: routed experts and experts per token (0: dense) */
    int moe_ffn;        /* intermediate size of one routed expert */
    int shared_experts; /* DeepSeek shared experts (each of moe_ffn), every MoE layer */
    int shared_ffn;     /* intermediate width of all shared experts together (DeepSeek:
                         * n_shared_experts x moe_ffn; Qwen2-MoE: shared_expert_intermediate_size) */
    int dense_layers;   /* DeepSeek first_k_dense_replace: leading dense layers */
    /* DeepSeek multi-head latent attention (kv_lora > 0): low-rank q and kv
     * projections, per-head dims of the rotary, non-rotary and value parts */
    int q_lora, kv_lora, rope_dim, nope_dim, v_dim;
} wl_model;

/* Read a model: a HuggingFace config.json as is (llama, mistral, mixtral, gpt2,
 * gpt_neox, falcon, mpt, dbrx, qwen2_moe, deepseek keys), or trainsim's own
 * keys (docs/workload.md). path may be the JSON text itself (first character
 * '{'; messages call it "model JSON"). */
int wl_model_load(const char *path, wl_model *m, char *err, size_t errlen);
/* NAME: a path, JSON text, or configs/models/NAME.json under dir. */
int wl_model_find(const char *name, const char *dir, wl_model *m, char *err, size_t errlen);
/* Train at sequence seq: a learned position table grows to seq rows when shorter
 * (Megatron-LM requires max_position_embeddings >= seq_length); rotary models are unchanged. */
void wl_model_fit_seq(wl_model *m, int seq);

typedef enum { WL_GPIPE, WL_1F1B, WL_INTERLEAVED, WL_ZBH1, WL_NSCHEDULES } wl_schedule;
/* selective: Megatron's (the attention core recomputed); op: torchtitan's selective op
 * checkpointing (every second mm and the elementwise ops recomputed, graph.c layer_recompute_op) */
typedef enum { WL_RC_NONE, WL_RC_SELECTIVE, WL_RC_FULL, WL_RC_OP, WL_NRECOMPUTE } wl_recompute;

typedef struct wl_layout {
    int tp, pp, dp, cp, ep, vpp;    /* Megatron-LM parallel sizes (dp 0: derived from the GPU count) */
    int mbs, gbs;                   /* micro-batch and global batch, in sequences */
    int zero;                       /* 0: plain DP, 1: distributed optimizer, 2: + sharded grads, 3: + sharded params */
    int hpz;                        /* zero=3: ZeRO++ hpZ, secondary parameter shard over groups of hpz
                                     * consecutive data-parallel ranks (0, 1: off) */
    int hgz;                        /* zero=3: gradients reduce-scattered inside groups of hgz data-parallel
                                     * ranks every micro-batch, across the groups once per iteration
                                     * (hpz=2,hgz=8: the 3-level partitioning; 0, 1: off) */
    int qwz, qgz;                   /* zero=3: ZeRO++ int8 weight gathers, int4 all-to-all gradients */
    int sp;                         /* sequence parallelism (Megatron --sequence-parallel) */
    wl_recompute recompute;
    wl_schedule schedule;
    int axonn, gx, gy, gz;          /* AxoNN 4D: gx*gy*gz tensor parallel grid, plus dp */
    int ax_serial;                  /* AxoNN overlap=off: every collective blocks where issued
                                     * (0, the default: AxoNN's overlap, docs/workload.md) */
    double bucket;                  /* DP gradient bucket, parameters (Megatron: max(4e7, 1e6*dp)) */
    int grad_serial;                /* zero<3: gradients reduced after the last backward in one bucket
                                     * (Megatron-Core without --overlap-grad-reduce, Megatron-LM 2021) */
    int grad_overlap;               /* overlap_grad=on stated: the stack's serial reduction does not
                                     * apply (PyTorch DDP under Megatron-LM 2021's --DDP-impl torch) */
    int param_overlap;              /* zero=1,2: the updated parameters' all-gathers overlap the next
                                     * forward, bucket by bucket (Megatron-Core --overlap-param-gather) */
    int prefetch;                   /* zero=3: layers whose gathers may run ahead of compute (0: 1,
                                     * DeepSpeed's and FSDP2's one-layer prefetch) */
    int tp_overlap;                 /* sp: TP all-gathers / reduce-scatters pipelined with their GEMM
                                     * (Transformer Engine userbuffers, Megatron-Core --tp-comm-overlap) */
    int no_gaf;                     /* gaf=off: no gradient-accumulation fusion whatever the stack (the
                                     * recipe's gradient_accumulation_fusion=False, e.g. Megatron-Bridge
                                     * with Megatron-FSDP): a pass adds each weight gradient to the main one */
    int keep_params;                /* zero=3: gathered parameters kept from forward to backward (FSDP2
                                     * reshard_after_forward=False): no backward gather */
    int p2p_overlap;                /* p2p_overlap=on, vpp > 1: Megatron-Core's overlap_p2p_comm (interleaved
                                     * schedule): the receive of an action posted when the previous action of
                                     * its kind ends, awaited when it starts (docs/workload.md) */
    int pp_nosg;                    /* pp_sg=off: Megatron-LM 2021's pipeline messages without the
                                     * scatter/gather optimisation (--no-scatter-gather-tensors-in-pipeline):
                                     * every TP rank sends the whole activation, no all-gather */
    int pp_grad_whole;              /* pp_grad_sg=off: DeepSpeed's pipeline engine of 2021 sends the input
                                     * gradient whole from every TP rank (engine.py is_grad_partitioned =
                                     * False) while the activations stay partitioned: no all-gather of the
                                     * received gradient (docs/workload.md, "DeepSpeed's pipeline engine") */
    int order[4];                   /* placement order, innermost first, over (0 tp, 1 cp, 2 dp, 3 pp);
                                     * all zero: Megatron's default tp-cp-dp-pp */
    wl_attn attn;                   /* attention kernel (attn=); WL_ATTN_STACK: the stack's */
    int ds_optim;                   /* zero=1,2 under DeepSpeed's ZeRO optimizer (the stack's ds_zero_optim) */
    int ds_bf16;                    /* bf16 under DeepSpeed's pipeline engine is its BF16_Optimizer (the stack's
                                     * ds_bf16_optim; applies with pp > 1, 1F1B, zero 0-1) */
    int cp_torch;                   /* the stack's cp_torch: PyTorch's ring attention, whose buffers the memory
                                     * model counts at cp > 1 (docs/workload.md, "Memory") */
    int tt_mem;                     /* torchtitan's memory (the stack's eager_ops: torchtitan's Llama, eager or
                                     * compiled): FSDP2's fp32 shard (16 B) and gathered root, the eager fp32 loss
                                     * (loss_parallel's with tp), the recomputed layer's working set, FSDP2's
                                     * unsharded gradient accumulators under pipelining (docs/workload.md, "Memory") */
    int async_tp;                   /* async_tp=on, sp: PyTorch's micro-pipelined TP (torchtitan AsyncTP): the
                                     * forward's all-gather/reduce-scatter pipelined with their GEMMs, the
                                     * backward's not (graph.c tp_ov) */
    int fp8_gather;                 /* f8ag=on, zero=3 under a torchao float8 stack and --dtype fp8: FSDP2's
                                     * float8 all-gather (torchtitan enable_fsdp_float8_all_gather): weights
                                     * cast to fp8 on the shard, gathered at 1 byte (graph.c f8_weight_cast) */
    int pp_first, pp_last;          /* layers on the first / last pipeline stage (0: an even share), the
                                     * rest split evenly over the other stages (Megatron-Core
                                     * --decoder-first/last-pipeline-num-layers; DeepSpeed's
                                     * partition_method type:transformer|embedding gives BLOOM's 5/6../6/5) */
} wl_layout;

const char *wl_schedule_name(wl_schedule s);
/* Fill what the layout leaves to the software stack (the attention kernel). */
void wl_layout_apply_stack(wl_layout *l, const wl_stack *s);
const char *wl_recompute_name(wl_recompute r);

/* Parse "tp=8,pp=8,dp=16,..." or "gx=..,gy=..,gz=..,dp=.."; unknown keys and
 * malformed values are errors. Keys left out take Megatron's defaults. */
int wl_layout_parse(const char *s, wl_layout *l, char *err, size_t errlen);

/* Check l against the model, sequence length and GPU count (0: do not check
 * the count; a dp of 0 is then an error), filling a derived dp. The error
 * says which constraint fails and with which values. */
int wl_layout_check(wl_layout *l, const wl_model *m, int seq, int ngpus, char *err, size_t errlen);

int wl_layout_ngpus(const wl_layout *l);
/* Transformer layers of pipeline stage `stage` (0 .. pp-1; AxoNN: one stage),
 * the first of them in *first (may be NULL): an even share, or the
 * pp_first / pp_last counts with the rest split evenly. The layout must have
 * passed wl_layout_check (or have no pp_first / pp_last). */
int wl_stage_layers(const wl_model *m, const wl_layout *l, int stage, int *first);
int wl_layout_micro(const wl_layout *l);        /* micro-batches per iteration per pipeline */
void wl_layout_format(const wl_layout *l, char *buf, size_t n);

/* Megatron pads the vocabulary to a multiple of 128 x tp. */
int wl_padded_vocab(const wl_model *m, const wl_layout *l);

/* Parameters: whole model, and the largest count held by one rank before
 * ZeRO sharding (the worst pipeline stage, tensor/expert parallel split). */
double wl_model_params(const wl_model *m, int vocab);
typedef struct wl_rank_params {
    double total;       /* on the rank */
    double dense;       /* of which replicated over all dp ranks (reduced over dp) */
    double expert;      /* of which expert weights (reduced over dp/ep) */
    double layer;       /* one transformer layer's parameters on the rank */
    int stage;          /* the pipeline stage of the count */
} wl_rank_params;
void wl_stage_params(const wl_model *m, const wl_layout *l, int stage, wl_rank_params *out);
/* One layer's parameters on a rank: replicated over dp (dense) and expert. */
void wl_layer_params(const wl_model *m, const wl_layout *l, int layer, double *dense, double *expert);

/* FLOPs of one iteration over all GPUs as the generated op graph counts them
 * (GEMMs and attention; elementwise ops are costed by bytes), including the
 * forward recomputation of the recompute mode. model_only: WL_FLOPS_MODEL
 * without recompute (the "model FLOPs" of MFU); WL_FLOPS_MODEL_CAUSAL the same
 * with the attention scores and weighted values counted causally, half of
 * s x s (Megatron-Bridge's num_floating_point_operations, core_seq / 2). */
enum { WL_FLOPS_EXECUTED = 0, WL_FLOPS_MODEL = 1, WL_FLOPS_MODEL_CAUSAL = 2 };
double wl_iteration_flops(const wl_model *m, const wl_layout *l, int seq, int model_only);

/* ---- the op graph of one iteration ---- */

#include "analytic/analytic.h"

typedef struct wl_opts {
    int seq;
    cm_dtype dtype;
    const cm_gpu *gpu;          /* compute ops get fixed durations from the roofline */
    const an_net *net;          /* alpha-beta costs of the collectives folded in analytically */
    int fuse;                   /* tensor-parallel collectives inside a node become fixed-duration
                                 * ops (they contend with nothing) and consecutive compute ops merge */
    int one_replica;            /* build data-parallel replica 0 only (ep replicas for MoE); DP
                                 * collectives become fixed-duration alpha-beta ops, hosts are
                                 * named "gpu-<global rank>" */
    const wl_stack *stack;      /* software stack (--stack); NULL: wl_stack_default() */
} wl_opts;

/* Rail copies for later wl_build calls (on: 1; default 0): where every
 * replica is built (not one_replica) and every TP collective folded in (fuse,
 * TP inside a node), build TP index 0 of each TP group only, the rank standing
 * for its tp - 1 siblings (the same ops, groups and peers shifted by the TP
 * index; the engine checks the platform side, eng_set_copies); wl_info.copies
 * says whether it was done. Not done where a rank's ops depend on its TP
 * index. */
void wl_rail_copies(int on);

/* Breakdown (trainsim run --breakdown STAGE): the compute-stream work of one
 * built rank (TP index 0, DP and CP replica 0, pipeline stage STAGE) by op
 * kind, kernels and folded TP collectives alike, before consecutive ops are
 * merged; waits (bubble, exposed PP and DP) are not in it. Off with a
 * negative stage (the default); each wl_build with a graph refills it (the
 * estimate fidelity builds none). wl_breakdown_rows returns the row count. */
#define WL_BD_MAX 64
typedef struct wl_bd_row {
    char what[32];
    double s;                   /* seconds, all micro-batches and layers of the rank */
    int count;                  /* ops of this kind */
} wl_bd_row;
void wl_breakdown(int stage);
int wl_breakdown_rows(const wl_bd_row **rows);

/* Streams of a rank in the generated graph. */
enum { WL_S_COMPUTE, WL_S_PP_FWD, WL_S_PP_BWD, WL_S_DP, WL_S_ZERO3, WL_S_CP_SEND, WL_S_CP_RECV,
       WL_S_TP_ASYNC, /* TE's asynchronous TP collectives of the backward (stack tp_bwd_async) */
       WL_S_PP_RFWD, WL_S_PP_RBWD, /* p2p_overlap: receives posted ahead of the compute that needs them */
       WL_NSTREAMS };
/* AxoNN's overlapped collectives (it has no pipeline and no CP): weight
 * all-gathers, input-gradient all-reduces, weight-gradient reduce-scatters. */
enum { WL_S_AX_AG = WL_S_ZERO3, WL_S_AX_AR = WL_S_PP_FWD, WL_S_AX_RS = WL_S_PP_BWD };

typedef struct wl_info {
    double flops;               /* GEMM + attention FLOPs of the ranks built (with recompute) */
    double compute_s;           /* busy compute seconds summed over the ranks built */
    double fused_tp_s;          /* seconds of TP collectives folded into compute ops (fuse), summed */
    int ranks_built, ranks_total;
    int micro;                  /* micro-batches per iteration */
    int copies;                 /* wl_opts.rails done: each built rank stands for this many (tp), else 0 */
    int *copy_rank;             /* copies: [built rank * copies + k] = global rank of copy k (k = 0: the
                                 * rank itself; its host is named after it); the caller frees it */
} wl_info;

/* Global rank of a coordinate in Megatron-LM's order (tp innermost, then cp,
 * then dp with ep innermost inside it, then pp); AxoNN: gx, gy, gz, dp. */
int wl_rank_of(const wl_layout *l, int tp, int cp, int dp, int pp);

/* Build the op graph of one training iteration. */
int wl_build(const wl_model *m, const wl_layout *l, const wl_opts *o, og_graph **out, wl_info *info,
             char *err, size_t errlen);

/* Direct estimate from model + layout, without building the graph (for
 * layout searches): per-stage forward/backward/weight-gradient times of a
 * micro-batch from the same per-layer ops as wl_build (dry run of one layer),
 * then the schedule's closed form: (m + p - 1) slots for GPipe and 1F1B,
 * (m + (p-1)/v) for interleaved, m slots + (p-1)(tF + tB - tW) for ZB-H1,
 * plus the data-parallel traffic not hidden behind the last backward and the
 * optimizer step. AxoNN layouts: the same per-layer dry run gives each GEMM's
 * compute and its grid collectives (costed on their groups' placement), then
 * one rank's streams are walked GEMM by GEMM with the op graph's overlap rule
 * (docs/workload.md); micro-batches repeat, the DP all-reduces trail the last. */
typedef struct wl_est {
    double iter;        /* seconds */
    double tp_exposed;  /* AxoNN: tensor-grid communication not hidden by compute, per iteration */
    double compute;     /* AxoNN: compute (GEMMs, attention, elementwise) per iteration */
    double pipeline;    /* forward/backward part, bubble included */
    double bubble;
    double dp_exposed;
    double optimizer;
    double tf, tb, tw;  /* slowest stage, one micro-batch */
} wl_est;
int wl_estimate(const wl_model *m, const wl_layout *l, const wl_opts *o, wl_est *e, char *err, size_t errlen);

/* The memos behind estimates and builds (collective times per group shape
 * and size, GEMM times, the AxoNN walk's powers, coll's merged views): on by default; off, every
 * figure is computed anew (tests compare the two: they must agree exactly). */
void wl_memo(int on);
/* wl_stage_params' memo of per-layer sums (wl_memo switches it too). */
void wl_stage_params_memo(int on);
/* 1 (the default): kernels overlapped by data-parallel collectives run on the
 * SMs the collectives' NCCL channels leave (docs/compute.md); 0: on all SMs
 * (to measure the effect). */
void wl_sm_share(int on);

#endif
