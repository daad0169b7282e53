/* Software-stack presets (--stack): the kernels, precision recipe and
 * data-parallel overlaps a training framework uses, one table row per stack. */
#ifndef TS_STACK_H
#define TS_STACK_H

#include <stddef.h>

/* Attention kernels (layout key attn=): unfused stores the s x s scores
 * (Megatron's 5as^2b), the flash kernels only O(s) softmax statistics. */
typedef enum { WL_ATTN_STACK = 0, WL_ATTN_UNFUSED, WL_ATTN_FLASH, WL_ATTN_FLASH2, WL_ATTN_FLASH3, WL_NATTN } wl_attn;

const char *wl_attn_name(wl_attn a);
int wl_attn_from_name(const char *s);      /* -1 when unknown */

/* GEMM library generation: the achievable matmul rate of a GPU depends on it
 * (a GPU spec's "gemm_max" has one figure per era where measured). */
typedef enum { WL_GEMM_CURRENT = 0, WL_GEMM_2021 } wl_gemm_era;

/* wl_stack.eager_ops: the model code of torchtitan's Llama, eager or compiled */
enum { WL_EAGER = 1, WL_COMPILED = 2 };

typedef struct wl_stack {
    const char *name;
    const char *description;
    const char *sources;        /* where the preset's choices come from (docs/compute.md) */
    /* compute (c1) */
    wl_attn attn;               /* attention kernel when the layout does not name one */
    int fused;                  /* fused bias-GeLU/SwiGLU, bias-dropout-add, norm kernels */
    wl_gemm_era gemm_era;
    int fp8_te;                 /* --dtype fp8 as Transformer Engine: GEMMs FP8, the rest BF16 */
    int grad_accum_fused;       /* weight-gradient GEMMs accumulate into the main gradient (no extra pass) */
    int tp_bwd_async;           /* backward of a column-parallel linear: the sequence-parallel re-gather of its
                                 * input runs on NCCL's stream during the dgrad GEMM, and the dgrad's
                                 * reduce-scatter (all-reduce without SP) during the wgrad GEMM (Transformer
                                 * Engine Linear/LayerNormLinear, Megatron-Core's async TP linear) */
    /* the vocab-parallel cross-entropy: bytes moved per logit and kernels, forward and
     * backward (0: 8 bytes, one kernel each way) */
    double ce_fwd, ce_bwd;
    int ce_fwd_k, ce_bwd_k;
    /* data parallelism (c2): add overlap / bucket fields here, one column per field */
    int overlap_grad_reduce;    /* gradient reduce-scatter/all-reduce overlapped with backward */
    int overlap_param_gather;   /* distributed optimizer's parameter all-gather overlapped with forward */
    /* ZeRO-3 (c3) */
    int z3_sync;                /* DeepSpeed 2021's stage 3: one all-gather per weight before its submodule,
                                 * the next weight prefetched, the host synchronising every stream at each
                                 * fetch; one reduce-scatter per weight, the previous one awaited before the
                                 * next is issued (docs/workload.md, "DeepSpeed 2021") */
    double z3_eff;              /* achieved fraction of the modelled bandwidth of its ZeRO-3 collectives (0: 1) */
    /* pipeline (c4) */
    int p2p_2021;               /* Megatron-LM 2021's pipeline messages: scatter/gather over the TP group, and
                                 * a send awaited (with every stream) once the next receive is posted */
    /* compute (c1, continued) */
    int eager_ops;              /* WL_EAGER: the model's own PyTorch code run eagerly (torchtitan's Llama, no
                                 * torch.compile): RMSNorm as separate ops on an fp32 upcast, rotary embedding
                                 * through complex fp32 multiplies, each op a kernel (docs/compute.md, "Eager model
                                 * code"); WL_COMPILED: the same code under torch.compile: norms, SwiGLU and
                                 * residual fused (`fused`), rotary embedding and repeat_kv as the pointwise
                                 * kernels Inductor emits around SDPA (docs/compute.md, "torch.compile") */
    /* memory (c2) */
    int ds_zero_optim;          /* DeepSpeed's ZeRO-1/2 optimizer (stage_1_and_2.py): 16-bit gradients, fp32
                                 * master, m and v of the shard; the shard's fp32 gradient exists only in
                                 * step(), after the backward freed the activations (docs/compute.md) */
    /* ZeRO-3 (c3, continued) */
    int fsdp2_copies;           /* FSDP2's copies around its collectives on the compute stream: the gathered
                                 * parameters split out of the all-gather buffer (copy-out, after each gather),
                                 * the gradients concatenated and cast into the reduce-scatter input (copy-in,
                                 * awaited by the compute stream) (docs/workload.md, "FSDP2 copies") */
    /* pipeline (c4, continued) */
    int ds_pipe;                /* DeepSpeed's pipeline engine (deepspeed/runtime/pipe: TrainSchedule, p2p.py):
                                 * 2 (m + p - 1) steps, a forward or a backward each, even and odd stages in
                                 * opposite phase; each step first exchanges with one neighbour in blocking
                                 * transfers on the compute stream (forward step: receive the activation, send
                                 * the previous step's gradient; backward step: send the previous step's
                                 * activation, receive the gradient) (docs/workload.md, "DeepSpeed pipeline") */
    int ds_bf16_optim;          /* bf16 under the pipeline engine is DeepSpeed's BF16_Optimizer of 2022 (ZeRO stage 0
                                 * in the config, its own sharding of the fp32 states: zero=1 here): the fp32
                                 * gradients all-reduced over DP after the flush (engine _bf16_reduce_grads ->
                                 * buffered_allreduce_fallback over get_grads_for_reduction()), not reduce-scattered
                                 * (docs/workload.md, "DeepSpeed pipeline") */
    /* optimizer step (c1, continued) */
    double optim_bytes;         /* bytes moved per parameter the rank owns by the step as the stack runs it (0: 30 B in
                                 * one kernel: Adam reads the gradient, fp32 master, m and v, writes master, m, v and
                                 * the 16-bit weights) */
    int optim_k;                /* its kernels besides one per parameter tensor (optim_per_tensor) */
    int optim_per_tensor;       /* kernels per parameter tensor where step() loops over the tensors in Python (0: none;
                                 * megatron-2021's per-tensor copy: 1; Composer's DecoupledAdamW and FSDP1's
                                 * clip_grad_norm_: 10, over the tensors of the rank's shard; above 1 the whole step
                                 * is such eager kernels, at the streaming rate, not WL_MULTI_TENSOR_EFF) */
    /* data parallelism (c2, continued) */
    int torch_ddp;              /* overlap_grad=on is PyTorch's DistributedDataParallel (Megatron-LM's --DDP-impl
                                 * torch): each gradient copied into its bucket divided by the group size on the
                                 * compute stream as it becomes ready, and copied back into param.grad after the
                                 * backward, bucket by bucket once its all-reduce is awaited (torch/csrc/distributed/
                                 * c10d/reducer.cpp: copy_grad_to_bucket, finalize_backward) */
    /* ZeRO-3 (c3, continued) */
    int fsdp1_grads;            /* PyTorch FSDP1's gradient path (FlatParameter, torch 2.0-2.1 _post_backward_hook),
                                 * every micro-batch and FSDP unit, before its reduce-scatter: autograd assembles
                                 * the flat gradient from the parameters' gradients (a cat), FSDP casts it to the
                                 * reduce dtype and pre-divides it in place; no full-size main gradient (the
                                 * accumulation is into the 1/D shard) (docs/workload.md, "FSDP1 gradients") */
    int fsdp_one_pg;            /* FSDP (1 and 2): the parameter all-gathers and gradient reduce-scatters of ZeRO-3
                                 * share one process group, so one NCCL stream runs them one at a time in issue
                                 * order; FSDP issues the next backward all-gather before the current reduce-scatter
                                 * (PyTorch docs/source/notes/fsdp.rst, "FSDP Prefetch Nuances") */
    int fsdp1_shard;            /* PyTorch FSDP1's passes over the rank's 1/D shard, every micro-batch and unit: before
                                 * each all-gather (forward and backward) the fp32 shard cast to the 16-bit parameter
                                 * dtype (_use_low_precision_shard on the pre-unshard stream); after each reduce-scatter
                                 * the post-divide and, from the second micro-batch of a step on, the add into the
                                 * saved gradient shard (no no_sync under Composer) (docs/workload.md, "FSDP1 shards") */
    /* compute (c1, continued) */
    int fp8_torchao;            /* --dtype fp8 as torchao's Float8Linear (torchtitan's float8 converter): dynamic
                                 * tensorwise scaling, the output layer left in bf16; every forward computes the
                                 * amax of each weight and casts it to fp8 for the forward and again for the
                                 * backward (three kernels per weight), and an activation or output gradient's
                                 * amax is a kernel of its own unless torch.compile fuses it into the op that
                                 * produced the tensor (`fused`) (docs/compute.md, "FP8 as torchao runs it") */
    /* context parallelism (c4, continued) */
    int cp_torch;               /* cp > 1 as PyTorch's experimental context_parallel ran it under torchtitan (late
                                 * 2024, torch.distributed.tensor.experimental._attention): load-balanced ring with
                                 * k/v expanded to every query head and all-gathered once per pass, one SDPA call per
                                 * step on sub-blocks, outputs merged in fp32 by eager ops, dk/dv accumulated in fp32
                                 * and passed around the ring each backward step (docs/workload.md, "PyTorch context
                                 * parallelism"); 0: Megatron-Core / Transformer Engine's ring */
    /* compute (c1, continued) */
    int gemm_all_sms;           /* the GEMMs are PyTorch's own (aten matmul -> cuBLAS) and ask for every SM: no SM
                                 * target (PyTorch had none until torch._C._set_sm_carveout_experimental, 2025,
                                 * opt-in), so on a GPU whose GEMM kernels are persistent (gpu gemm.persistent) a
                                 * GEMM beside an NCCL kernel runs a second wave (docs/compute.md, "Persistent
                                 * GEMMs beside collectives"); 0: Transformer Engine's GEMMs (NVTE_EXT_MARGIN_SM) */
    /* pipeline (c4, continued) */
    int ds_ar_fallback;         /* DeepSpeed's pipeline engine of 2021 (v0.3-0.4): its ReduceGrads instruction all-
                                 * reduces every gradient whole over DP through buffered_allreduce_fallback (flatten,
                                 * scale, all-reduce, copy back) whatever the ZeRO stage (0 or 1), where later engines
                                 * hand ZeRO-1 its reduce-scatter (allreduce_gradients -> reduce_gradients)
                                 * (docs/workload.md, "DeepSpeed's pipeline engine") */
} wl_stack;

/* Multi-tensor kernels' achieved fraction of the GPU's streaming bandwidth
 * (hbm_achieved), measured on the optimizer steps of configs/measurements/
 * training/measured_1gpu.csv: 0.86 on an H100 (the three kernels' bytes over
 * their profiled times: 2.50-2.70 TB/s against 2.97), 0.76 on an H200 (the
 * step's 76.8 GB in 23.6 ms against 4.26 TB/s); their mean. */
#define WL_MULTI_TENSOR_EFF 0.81

/* The default preset (megatron-core) and lookup by name; on failure err lists
 * the valid names. */
const wl_stack *wl_stack_default(void);
const wl_stack *wl_stack_find(const char *name, char *err, size_t errlen);
/* Names of every preset, ", "-separated, into buf (for errors). */
void wl_stack_names(char *buf, size_t n);
int wl_stack_count(void);
const wl_stack *wl_stack_at(int i);

#endif
