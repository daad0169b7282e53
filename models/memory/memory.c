/* Per-rank memory: states by ZeRO stage (Rajbhandari et al. 2020, Megatron-LM's
 * distributed optimizer) and activations by Korthikanti et al. 2022. */
#include "memory/memory.h"

#include <string.h>

void mem_bytes_per_param(cm_dtype t, double *weights, double *grads, double *optim)
{
    /* Megatron-LM dist_optimizer.md: fp16 params + fp16 grads: 4 + 16/d bytes
     * (optimizer holds fp32 main params, main grads, m, v); bf16 params + fp32
     * grads: 6 + 12/d; fp32: 8 + 8/d. */
    switch (t) {
    case CM_FP16: *weights = 2, *grads = 2, *optim = 16; break;
    case CM_FP32: case CM_TF32: *weights = 4, *grads = 4, *optim = 8; break;
    default: *weights = 2, *grads = 4, *optim = 12; break; /* bf16 and fp8 (bf16 master weights) */
    }
}

/* Korthikanti et al. 2022, section 4.1, per layer with 16-bit activations:
 * attention 11sbh + 5as^2b, MLP 19sbh, layer norms 4sbh: sbh(34 + 5as/h).
 * Generalised here to GQA (K and V of width kv instead of h) and to an MLP
 * of width f, gated or not: MLP = 2sbh (input) + 2sb*f*(2 if gated) (fc1
 * output) + 2sbf (activation output) + sbh (dropout mask), which is 19sbh for
 * f = 4h. Of these, 10sbh (norm inputs 4, attention and MLP inputs 4, dropout
 * masks 2) are replicated across tensor-parallel ranks without sequence
 * parallelism (eq. 4: sbh(10 + 24/t + 5as/(ht))); with sequence parallelism
 * everything is divided by t (eq. 5). Selective recompute drops the 5as^2b
 * attention core (eq. 6: 34sbh/t); full recompute keeps only the layer input,
 * 2sbh (/t with sequence parallelism). The 5as^2b core is the unfused kernel's
 * (softmax output 2 bytes, dropout mask 1, dropout output 2 per score); the
 * FlashAttention kernels store no s x s matrix, only the fp32 log-sum-exp of
 * each query and head (4asb), the output being the projection's input.
 *
 * FP8 (fp8 != 0), as Transformer Engine runs it: a Linear or LayerNormLinear saves
 * for its weight gradient the FP8 copy of its input it cast for the forward GEMM
 * (transformer_engine/pytorch/module/linear.py, 1.x: `if fp8 and not
 * override_linear_precision.wgrad: saved_inputmat = inputmat` (the FP8 cast)
 * `else: saved_inputmat = inputmat_no_fp8`), so the four GEMM inputs keep 1 byte
 * per element instead of 2: QKV and fc1 inputs (the norms' outputs, sbh each),
 * the projection's input (sbh) and fc2's input (sbf). Norm inputs, Q, K, V, the
 * attention core, the activation's input and the masks stay 16-bit. */
static double layer_activations(const wl_model *m, const wl_layout *l, int seq, int moe, int fp8)
{
    double s = (double)seq / l->cp, b = l->mbs, h = m->hidden, a = m->heads;
    double kv = (double)m->kv_heads * (m->hidden / m->heads);
    double t = l->tp;
    if (l->axonn) s /= l->gz, t = l->gy; /* AxoNN (approximation): tokens split over gz, width over gy */
    double f = moe ? (double)m->moe_ffn * m->topk + m->shared_ffn : m->ffn;
    double sbh = s * b * h;
    if (l->recompute == WL_RC_FULL) return 2 * sbh / (l->sp ? t : 1);
    /* torchtitan's op-level checkpointing (recompute=op): the block input, the saved mm outputs q, v and
     * w1's, SDPA's output and log-sum-exp; the rest is recomputed (graph.c layer_recompute_op) */
    if (l->recompute == WL_RC_OP) {
        double in = 2 * sbh / (l->sp ? t : 1);
        return in + (2 * sbh + 2 * s * b * kv + 2 * sbh + 4 * a * s * b + 2 * s * b * f) / t;
    }
    /* 11sbh of the paper = 2 input + 4 Q,K + 2 V + 2 proj input + 1 mask; input and mask are replicated */
    double repl = 10 * sbh;
    double attn_split = 2 * sbh + 2 * s * b * kv + 2 * s * b * kv + 2 * sbh;
    double mlp_split = 2 * s * b * f * (m->gated ? 2 : 1) + 2 * s * b * f;
    wl_attn k = l->attn != WL_ATTN_STACK ? l->attn : wl_stack_default()->attn;
    double core = l->recompute == WL_RC_SELECTIVE ? 0
                  : k == WL_ATTN_UNFUSED  ? 5 * a * s * (s * l->cp) * b /* local queries x all keys */
                                          : 4 * a * s * b;
    if (fp8) repl -= 2 * sbh, attn_split -= sbh, mlp_split -= s * b * f;
    if (l->sp) return (repl + attn_split + mlp_split + core) / t;
    return repl + (attn_split + mlp_split + core) / t;
}

double mem_layer_activations(const wl_model *m, const wl_layout *l, int seq, int moe)
{
    return layer_activations(m, l, seq, moe, 0);
}

/* The working memory above the stored activations at torchtitan's peak (l->tt_mem), the larger of two
 * moments of the backward:
 * - the loss, on the last stage: torchtitan's loss_fn is cross_entropy(pred.flatten(0, 1).float(), labels),
 *   left eager ("compiling loss function causes CUDA errors, turning off for now", train.py, late 2024);
 *   log_softmax saves its fp32 output (4sbV, counted with the stored activations); at the start of the
 *   backward nll_loss's fp32 gradient (4sbV) and log_softmax's fp32 input gradient (4sbV) are alive with it:
 *   8sbV more (V / t with loss_parallel, the logits sharded over the vocabulary);
 * - a recomputed layer (recompute full or op): its backward runs on the activations the recomputation
 *   rebuilt, those of a layer stored without recompute, the saved subset they replace counted already. */
/* PyTorch's ring attention (stack cp_torch, cp > 1; docs/workload.md, "PyTorch context parallelism"):
 * the buffers alive while a layer's attention backward runs, in units of the rank's q-sized block
 * (E = b s/cp h/t elements: k and v are expanded to every query head), bytes per element: the
 * backward's k/v all-gather, cp blocks of 16-bit k and v (4 cp); the local k and v made contiguous
 * (4) and one step's concatenation of them (4); the fp32 dq, dk, dv accumulators (12); the received
 * fp32 dk/dv and the concatenated one being sent (16); the step's FlashAttention-2 outputs, 16-bit dq,
 * dk, dv (6), and its fp32 dq accumulator (4). The forward's peak ((4 cp + 24) E) is below it. */
static double cp_ring_bytes(const wl_model *m, const wl_layout *l, int seq)
{
    if (!l->cp_torch || l->cp <= 1 || l->axonn) return 0;
    double E = (double)l->mbs * ((double)seq / l->cp) * m->hidden / l->tp;
    return (4.0 * l->cp + 46) * E;
}

static double tt_transient(const wl_model *m, const wl_layout *l, int seq, cm_dtype t, int last)
{
    double loss = 0, layer = 0;
    double tt = l->axonn ? l->gx * l->gy : l->tp;
    /* with tp > 1 torchtitan's loss_parallel runs DTensor's handlers (torch/distributed/tensor/parallel/
     * loss.py): _nll_loss_and_log_softmax_backward builds zeros_like(x), exp(x), their sum and its product
     * with the gradient beside the saved output, a fourth fp32 copy where aten's kernels need three */
    double copies = tt > 1 && !l->axonn ? 3 : 2;
    if (last) loss = 4.0 * copies * ((double)seq / l->cp) * l->mbs * wl_padded_vocab(m, l) / tt;
    if (l->recompute == WL_RC_FULL || l->recompute == WL_RC_OP) {
        wl_layout x = *l;
        x.recompute = WL_RC_NONE;
        int moe = m->experts && m->dense_layers == 0;
        layer = layer_activations(m, &x, seq, moe, t == CM_FP8) - layer_activations(m, l, seq, moe, t == CM_FP8);
        /* PyTorch's sequence parallelism (DTensor, torchtitan's SequenceParallel norms): the QKV and fc1
         * inputs are all-gathered by redistribution before the linear, which saves the gathered tensor
         * (Megatron saves its shard and gathers again in the backward, Korthikanti's /t): full length */
        if (l->sp && l->tp > 1 && !l->axonn) {
            double sbh = ((double)seq / l->cp) * l->mbs * m->hidden;
            layer += 2 * sbh * (t == CM_FP8 ? 1 : 2) * (1 - 1.0 / l->tp);
        }
    }
    layer += cp_ring_bytes(m, l, seq); /* beside the recomputed layer, not beside the loss */
    return loss > layer ? loss : layer;
}

static void stage_memory(const wl_model *m, const wl_layout *l, int seq, cm_dtype t, int stage, mem_breakdown *o)
{
    wl_rank_params p;
    wl_stage_params(m, l, stage, &p);
    double bw, bg, bo;
    mem_bytes_per_param(t, &bw, &bg, &bo);
    double dpd = l->dp * (l->axonn ? 1 : l->cp), dpe = dpd / l->ep; /* dense and expert data-parallel sizes */
    double shard = p.dense / dpd + p.expert / dpe;
    o->weights = (l->zero >= 3 ? shard : p.total) * bw;
    o->grads = (l->zero >= 2 ? shard : p.total) * bg;
    o->optim = (l->zero >= 1 ? shard : p.total) * bo;
    /* DeepSpeed's ZeRO-1/2 optimizer (stage_1_and_2.py): the gradients stay 16-bit (no fp32
     * main grads), the shard holds fp32 master weights, m and v (12 B); step() builds the
     * shard's fp32 gradient (4 B) after the backward freed the activations and the gradients
     * it does not own, so it counts only where it exceeds the activations (added below) */
    double ds_step = 0;
    if (l->ds_optim && (l->zero == 1 || l->zero == 2) && (t == CM_FP16 || t == CM_BF16)) {
        o->grads = (l->zero >= 2 ? shard : p.total) * 2;
        o->optim = shard * 12;
        ds_step = shard * 4;
    }
    /* DeepSpeed's BF16_Optimizer under the pipeline engine (layout ds_bf16: 2022's BigScience
     * branch, docs/workload.md): fp32 gradients for every parameter of the rank, not sharded
     * ("the additional memory usage is 4bytes x params and it's not sharded across gpus",
     * bigscience train/tr11-176B-ml/chronicles-prequel.md), beside the bf16 gradients the
     * backward leaves until the next one clears them; the shard holds fp32 master, m, v */
    if (l->ds_bf16 && t == CM_BF16 && l->zero <= 1 && l->pp > 1 && l->vpp == 1 && l->schedule == WL_1F1B &&
        !l->axonn) {
        o->grads = p.total * (2 + 4);
        o->optim = shard * 12;
        ds_step = 0;
    }
    /* ZeRO++ hpZ keeps a secondary copy of the parameters sharded over hpz ranks next to
     * the primary shard; hierarchical gradients accumulate over the micro-batches in a
     * shard of the hgz group and are reduced across groups once per iteration */
    /* FSDP2 under torchtitan (zero=3, bf16 mixed precision: MixedPrecisionPolicy param_dtype bf16,
     * reduce_dtype fp32): the shard is the fp32 parameter itself, cast to bf16 only in the all-gather
     * (the gathered layers are the workspace's), its fp32 gradient and AdamW's m and v: 4 + 4 + 8 bytes,
     * no 16-bit copy of the shard beside the fp32 master */
    if (l->tt_mem && l->zero >= 3 && (t == CM_BF16 || t == CM_FP8) && l->hpz <= 1) {
        o->weights = shard * 4;
        o->optim = shard * 8;
    }
    /* torchtitan under pipelining (torch.distributed.pipelining stage.py backward_maybe_with_nosync): every
     * backward but the last runs with FSDP2's set_requires_gradient_sync(False) and
     * set_reshard_after_backward(False), so the rank's unsharded gradients accumulate over the micro-batches,
     * upcast to the reduce dtype (FSDP2 _fsdp_param.py to_accumulated_grad_if_needed; torchtitan's
     * mixed_precision_reduce "float32"): 4 bytes per parameter of the stage, reduce-scattered after the last */
    if (l->tt_mem && l->pp > 1 && !l->axonn && dpd > 1 && o->grads < p.total * 4) o->grads = p.total * 4;
    if (l->zero == 3 && l->hpz > 1) o->weights += p.dense / l->hpz * bw;
    if (l->zero == 3 && l->hgz > 1) o->grads = (p.dense / l->hgz + p.expert / dpe) * bg;
    o->workspace = MEM_WORKSPACE_BYTES;
    if (l->zero >= 3) o->workspace += 2 * p.layer * bw; /* gathered layer + prefetched next (p.layer is the whole layer on the rank) */
    /* FSDP2's root (torchtitan's fully_shard(model): the embedding, final norm and output layer) stays
     * gathered from its forward to its backward ("The root FSDP state has its value specially set to
     * False", fully_shard's reshard_after_forward): its bf16 parameters of the rank for the whole step */
    if (l->tt_mem && l->zero >= 3 && dpd > 1) {
        int last = stage == (l->axonn ? 1 : l->pp) - 1;
        double per = (double)wl_padded_vocab(m, l) * m->hidden / (l->axonn ? l->gx * l->gy : l->tp);
        o->workspace += ((stage == 0 ? per : 0) + (last && !m->tied ? per : 0)) * 2;
    }

    int pp = l->axonn ? 1 : l->pp, lo, per = wl_stage_layers(m, l, stage, &lo), mcount = wl_layout_micro(l), v = l->vpp;
    double inflight; /* in units of "all layers of the stage, one micro-batch" */
    switch (l->schedule) {
    case WL_GPIPE: inflight = mcount; break;
    case WL_INTERLEAVED: {
        /* Megatron's warm-up on stage i: (p-i-1)*2 + (v-1)*p virtual micro-batches, one more
         * in flight in the steady state; each holds 1/v of the stage's layers. */
        double vm = (double)(pp - stage - 1) * 2 + (double)(v - 1) * pp + 1;
        if (vm > (double)mcount * v) vm = (double)mcount * v;
        inflight = vm / v;
        break;
    }
    default: inflight = pp - stage < mcount ? pp - stage : mcount; break; /* 1F1B, ZB-H1 */
    }
    o->inflight = inflight;
    double act = 0, per_kind[2];
    int have[2] = {0, 0}; /* a layer's activations depend on it only through dense or MoE */
    for (int i = lo; i < lo + per; i++) {
        int moe = m->experts && i >= m->dense_layers;
        if (!have[moe]) per_kind[moe] = layer_activations(m, l, seq, moe, t == CM_FP8), have[moe] = 1;
        act += per_kind[moe];
    }
    o->act_layer = layer_activations(m, l, seq, m->experts && m->dense_layers == 0, t == CM_FP8);
    act *= inflight;
    /* Section 4.3: embedding dropout mask sbh (x in-flight micro-batches) on the first
     * stage; on the last: final norm 2sbh, output projection input 2sbh, fp32 logits 4sbV. */
    double s = (double)seq / l->cp, b = l->mbs, h = m->hidden, tt = l->axonn ? l->gx * l->gy : l->tp;
    double div = l->sp ? tt : 1;
    if (stage == 0) act += s * b * h / div * inflight;
    if (stage == pp - 1) act += 4 * s * b * h / div + 4 * s * b * wl_padded_vocab(m, l) / tt;
    if (l->tt_mem) act += tt_transient(m, l, seq, t, stage == pp - 1);
    else act += cp_ring_bytes(m, l, seq);
    o->activations = act;
    if (ds_step > act) o->optim += ds_step - act;
    o->stage = stage;
    o->total = o->weights + o->grads + o->optim + o->activations + o->workspace;
}

void mem_estimate(const wl_model *m, const wl_layout *l, int seq, cm_dtype t, double capacity, mem_breakdown *out)
{
    int pp = l->axonn ? 1 : l->pp;
    mem_breakdown first, last;
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    stage_memory(m, l, seq, t, 0, &first);
    if (pp > 1) stage_memory(m, l, seq, t, pp - 1, &last);
    *out = last.total > first.total ? last : first;
    /* uneven stages: a middle stage may hold more layers than the ends (stage 1 stands for
     * them all: they have the same layers' count; it holds the most in-flight micro-batches) */
    if (pp > 2 && (l->pp_first || l->pp_last)) {
        stage_memory(m, l, seq, t, 1, &last);
        if (last.total > out->total) *out = last;
    }
    out->capacity = capacity;
    out->fits = out->total <= capacity;
}
