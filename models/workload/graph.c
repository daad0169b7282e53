/* The op graph of one training iteration: per rank, the compute ops of each
 * micro-batch and layer with roofline durations, and the communication that
 * Megatron-LM / DeepSpeed / AxoNN issue, with their message sizes, in the
 * order of the pipeline schedule (docs/workload.md describes every choice). */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_params.h"
#include "memory/memory.h"
#include "util.h"
#include "workload/workload.h"

/* Memory-bound kernels of a layer and what the stack's kernel fusion changes
 * (docs/compute.md): bytes multiplier and kernel count, fused and unfused. */
typedef enum { EK_PLAIN, EK_NORM, EK_ACT, EK_RESID, EK_NKINDS } ekind;
static const struct {
    double fused_x;
    int fused_k;
    double unfused_x;
    int unfused_k;
} ekinds[EK_NKINDS] = {
    {1, 1, 1, 1},       /* embedding, loss: the same kernels either way */
    {1, 1, 1, 1},       /* LayerNorm/RMSNorm: one kernel (apex, TE or PyTorch) */
    {1, 1, 2, 2},       /* bias + GeLU / SwiGLU: one fused pass, or bias and activation apart */
    {1, 1, 2.5, 3},     /* bias-dropout-add: one fused pass, or bias, dropout and add apart */
};

/* GEMM flags: FP8 casts its input operand (Transformer Engine), stays in 16
 * bits under FP8 (the output layer, as Megatron-Core keeps it), or is a weight
 * gradient (accumulated into the main gradient, docs/compute.md); GF_AMAX
 * (set by gemm_time): the cast's tensorwise amax is a kernel of its own
 * (torchao's float8 without torch.compile's fusion). */
enum { GF_CAST = 1, GF_HIGH = 2, GF_WGRAD = 4, GF_AMAX = 8 };

static int rail_copies; /* wl_rail_copies */

typedef struct wgrad {      /* a weight-gradient GEMM deferred to a W pass (ZB-H1) */
    double M, N, K;
    int layer;
} wgrad;

typedef struct wlist {
    int n;
    size_t cap;
    wgrad *w;
} wlist;

typedef struct gen {
    const wl_model *m;
    const wl_layout *l;
    const wl_opts *o;
    og_graph *g;
    int dpb;                /* data-parallel indices built */
    int tpb;                /* tensor-parallel indices built (1: rail copies, wl_rail_copies) */
    int asym;               /* rail copies: a rank's ops would depend on its TP index */
    int p, v, mcount, lc;   /* stages, chunks, micro-batches, layers per chunk */
    int r;                  /* built rank being generated */
    int ti, ci, di, pi;
    int tpg, cpg, epg, dpg, edpg, embg;
    int wblkg, wmidg, gblkg, gxg; /* ZeRO++ / hierarchical levels (see zero3_gather, zero3_grads) */
    int gk;                 /* data-parallel ranks of the inner gradient level (hgz, or a node for qgZ) */
    int gfinal;             /* the gradients being reduced are the iteration's last */
    double tp_hide;         /* tp_overlap: seconds of the GEMM the next TP collective pipelines with */
    int in_bwd;             /* building a layer's backward (after its recomputed forward): async_tp does not apply */
    int tp_async;           /* tp_hide is a GEMM the collective runs beside, whole, on NCCL's stream */
    int sm_margin;          /* SMs the GEMM being costed leaves to a userbuffers reduce-scatter (0: none) */
    int tp_wait;            /* tp_bwd_async, simulated: the re-gather the next wgrad GEMM waits for (-1: none) */
    int tp_intra;           /* the TP group sits inside a node */
    double tok;             /* tokens of one micro-batch on a TP group (mbs * seq / cp) */
    double gb, pb;          /* gradient and parameter bytes per element */
    int dt;
    int last_comp;          /* last op of stream 0 if it is a fusable compute op, else -1 */
    int cp_seq;
    double flops, busy, tp_s;
    int ndeps;
    size_t depcap;
    int *deps;              /* DP ops the optimizer waits for */
    int *layer_wop;         /* per layer of the model: op id of its last weight-gradient op */
    double bucket_acc;      /* parameters in the open DP bucket */
    int bucket_no;
    size_t bpadcap, plancap;
    double *bpad;           /* elements of each bucket emitted, padded as Megatron-Core pads them */
    int *bk_of;             /* overlap_param: forward bucket of each layer (index layers: output
                             * layer, layers + 1: embedding), -1 when not on the rank */
    int nplan, ag_next, ag_waited;
    double *plan;           /* overlap_param: padded elements of each forward bucket */
    int *ag_op;             /* overlap_param: the all-gather op of each forward bucket */
    int z3dep;              /* zero=3: the op the next gather waits for (prefetch window) */
    int *z3wait;            /* zero=3: the last prefetch waits, a ring of l->prefetch */
    int nz3;
    int pp_pending;         /* p2p_2021: the last pipeline send, awaited after the next receive (-1: none) */
    int pp_post[2];         /* p2p_overlap: the end of the last forward (0) / backward (1) action, where the
                             * next receive of its kind is posted (-1: at the start) */
    int ds;                 /* DeepSpeed's pipeline engine (stack ds_pipe, pp > 1, no chunks): passes in
                             * TrainSchedule's steps, sends deferred to the next step (ds_steps) */
    int ds_dir, ds_mb, ds_dep; /* ds: the send of the last pass ('F' activation, 'B' gradient; 0: none) */
    char pp_next;           /* the schedule's next action ('F', 'B', 'W'; 0 at the end) */
    int pp_sends[2], npp_sends; /* p2p_2021 interleaved: sends posted since the last communicate call */
    unsigned char *pp_rcvd; /* p2p_2021 interleaved: per action of the schedule, input received by an earlier call */
    int act_no;             /* index of the action being built in the schedule */
    int z3rs_last;          /* zero=3 under a z3_sync stack: the last per-weight reduce-scatter (-1: none) */
    int rs_pend, rs_pend_dep, rs_pend_no; /* fsdp_one_pg: a reduce-scatter held until the next gather is issued */
    int rs_pend_mb, gmb;    /* micro-batch of that reduce-scatter's gradients / of the bucket being emitted */
    double rs_pend_bytes;
    wlist *wl;              /* deferred weight gradients per (micro-batch, chunk) */
    int zb;
    int ep_intra;           /* the EP group sits inside a node */
    int dry;                /* costing only (wl_estimate): no graph, times accumulate */
    double acc, acc_w, acc_side;
    double acc_g;           /* dry: seconds of GEMMs among the costed kernels (ov_extra's persistent share) */
    double acc_ov;          /* dry: seconds of the side collectives that go to ov_left (ov_issue's) */
    struct kern *kr;        /* dry, krec: the compute stream's kernels in order (ov_replay) */
    int nkr, krec, kr_fwd;  /* kr_fwd: how many of them the forward's */
    size_t krcap;
    double ov_fwd;          /* acc_ov after the forward */
    double slow;            /* compute time multiplier of the layer being built (0: 1; ds_slow) */
    double ov_left;         /* seconds of data-parallel collectives in flight beside the compute stream (ov_slow) */
    double ddp_elems;       /* gradient elements copied into PyTorch DDP's buckets so far (torch_ddp) */
    int ov_ch;              /* the NCCL channels (SMs) they hold */
    int ov_skip;            /* the collective being issued is left out of ov_left (expert gradients) */
    double zeff;            /* achieved fraction of the modelled rate of the collective being issued (0: 1) */
    long ops_before;        /* ops of the ranks built before this one */
    struct axstate *ax;     /* AxoNN: overlap bookkeeping, collective costs, dry-run records */
    const wl_stack *st;     /* the software stack (never NULL) */
    wl_attn attn;           /* attention kernel in use */
    cm_era era;             /* GEMM library era */
} gen;

/* ---- ranks and groups ---- */

int wl_rank_of(const wl_layout *l, int tp, int cp, int dp, int pp)
{
    if (l->axonn) return tp + l->gx * (cp + l->gy * (dp + l->gz * pp)); /* x, y, z, d */
    if (!l->order[0] && !l->order[1]) return tp + l->tp * (cp + l->cp * (dp + l->dp * pp));
    /* an explicit order, innermost first: dimension d of (tp, cp, dp, pp) */
    const int coord[4] = {tp, cp, dp, pp}, size[4] = {l->tp, l->cp, l->dp, l->pp};
    int r = 0;
    for (int i = 3; i >= 0; i--) r = r * size[l->order[i]] + coord[l->order[i]];
    return r;
}

/* Built rank index of a coordinate (dp index below G->dpb). */
static int built(const gen *G, int tp, int cp, int dp, int pp)
{
    const wl_layout *l = G->l;
    return tp + G->tpb * (cp + l->cp * (dp + G->dpb * pp));
}

/* vsnprintf of a format of plain %s, %d and %% only (every label's), as
 * vsnprintf writes it (truncated to n - 1 characters); -1, having consumed
 * nothing the caller keeps, at any other conversion. glibc's vsnprintf was
 * 13% of a full-detail run's instructions (a label per op, 44 M at 1,024
 * GPUs). */
static int label_fmt(char *buf, size_t n, const char *fmt, va_list ap)
{
    size_t k = 0;
    char num[16];
    for (const char *f = fmt; *f; f++) {
        const char *s = NULL;
        if (*f != '%') {
            if (k + 1 < n) buf[k] = *f;
            k++;
            continue;
        }
        f++;
        if (*f == '%') s = "%";
        else if (*f == 's') s = va_arg(ap, const char *);
        else if (*f == 'd') {
            int v = va_arg(ap, int), j = (int)sizeof num;
            unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
            num[--j] = 0;
            do num[--j] = (char)('0' + u % 10); while ((u /= 10) && j > 1);
            if (v < 0) num[--j] = '-';
            s = num + j;
        } else return -1;
        for (; *s; s++, k++)
            if (k + 1 < n) buf[k] = *s;
    }
    if (n) buf[k < n ? k : n - 1] = 0;
    return (int)k;
}

static void set_label(gen *G, og_op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_label(gen *G, og_op *op, const char *fmt, ...)
{
    char buf[128];
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    if (label_fmt(buf, sizeof buf, fmt, aq) < 0) vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(aq);
    va_end(ap);
    og_set_label(G->g, op, buf); /* the ranks of a stage repeat each other's labels */
}

/* ---- emitting ops ---- */

static int last0(gen *G)
{
    /* the last op of stream 0 (it becomes a dependency: stop fusing into it) */
    G->last_comp = -1;
    og_rank *rk = &G->g->ranks[G->r];
    for (int i = rk->nops - 1; i >= 0; i--)
        if (rk->ops[i].stream == WL_S_COMPUTE) return i;
    return -1;
}

/* --breakdown: the rank's compute-stream seconds by op kind (wl_breakdown). */
static struct {
    int stage;                  /* -1: off */
    int n;
    wl_bd_row row[WL_BD_MAX];
} bd = {-1, 0, {{"", 0, 0}}};

void wl_breakdown(int stage)
{
    bd.stage = stage;
    bd.n = 0;
}

int wl_breakdown_rows(const wl_bd_row **rows)
{
    *rows = bd.row;
    return bd.n;
}

static void bd_add(const gen *G, const char *what, double d)
{
    if (bd.stage < 0 || G->pi != bd.stage || G->ti || G->di || G->ci || (G->l->axonn && G->r)) return;
    int i = 0;
    while (i < bd.n && strcmp(bd.row[i].what, what)) i++;
    if (i == bd.n) {
        if (bd.n == WL_BD_MAX) { /* full: the last row takes the rest */
            i = WL_BD_MAX - 1;
            snprintf(bd.row[i].what, sizeof bd.row[i].what, "(other)");
        } else {
            bd.row[bd.n++] = (wl_bd_row){"", 0, 0};
            snprintf(bd.row[i].what, sizeof bd.row[i].what, "%s", what);
        }
    }
    bd.row[i].s += d;
    bd.row[i].count++;
}

/* A fixed-duration op on stream 0, merged into the previous one when fusing. */
static int add_fixed(gen *G, double d, const char *what, int layer, int mb)
{
    if (G->dry) {
        G->acc += d;
        return 0;
    }
    bd_add(G, what, d);
    og_rank *rk = &G->g->ranks[G->r];
    if (G->o->fuse && G->last_comp >= 0) {
        rk->ops[G->last_comp].duration += d;
        return G->last_comp;
    }
    og_op *op = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, d);
    if (layer >= 0) set_label(G, op, "comp.%s.l%d.mb%d", what, layer, mb);
    else set_label(G, op, "comp.%s.mb%d", what, mb);
    G->last_comp = op->id;
    return op->id;
}

/* SM sharing with overlapped collectives (docs/compute.md): an NCCL kernel
 * holds one SM per channel for its whole run, so a kernel of d seconds (on all
 * SMs) runs at (sms - ch)/sms of its rate while G->ov_left seconds of such
 * collectives are in flight beside it; the collectives' seconds are consumed
 * in program order (the side stream runs them back to back). A persistent
 * GEMM (gpu gemm_persistent) launches one CTA per SM, each looping over
 * 1/sms of the tiles: ch of them find no SM and start when the first wave
 * ends (d) or the collectives do, whichever comes first: d + min(d, left).
 * Returns the kernel's time. */
static int sm_share_on = 1; /* wl_sm_share */

typedef struct kern {
    double d;
    int gemm;
} kern;

/* One kernel of d seconds beside *left seconds of collectives, f = (sms -
 * ch)/sms: its time, the collectives' seconds it outlasts consumed. */
static double ov_kernel(double d, int gemm, int persistent, double f, double *left)
{
    if (*left <= 0 || d <= 0) return d;
    if (gemm && persistent) {
        double w = d + (*left < d ? *left : d);
        *left = *left > w ? *left - w : 0;
        return w;
    }
    if (*left >= d / f) {
        *left -= d / f;
        return d / f;
    }
    d = *left + (d - *left * f);
    *left = 0;
    return d;
}

/* GEMMs that run a second wave beside an NCCL kernel: persistent kernels
 * (the GPU's library) launched for every SM (the stack's) */
static int ov_persistent(const gen *G) { return G->o->gpu->gemm_persistent && G->st->gemm_all_sms; }

static double ov_slow(gen *G, double d, int gemm)
{
    int sms = G->o->gpu->sms, ch = G->ov_ch;
    if (!sm_share_on || G->ov_left <= 0 || d <= 0 || sms <= 0 || ch <= 0 || ch >= sms) return d;
    return ov_kernel(d, gemm, ov_persistent(G), (double)(sms - ch) / sms, &G->ov_left);
}

/* The estimate's ov_slow (persistent GEMMs): seconds a layer's kernels k[0..n)
 * gain when r seconds of collectives are issued before them, as the graph
 * consumes its budget; what one layer leaves in flight carries into the next
 * (the third layer stands for the steady state). */
static double ov_replay(const gen *G, const kern *k, int n, double r)
{
    int sms = G->o->gpu->sms, ch = G->ov_ch;
    if (!sm_share_on || r <= 0 || n <= 0 || sms <= 0 || ch <= 0 || ch >= sms) return 0;
    double f = (double)(sms - ch) / sms, left = 0, extra = 0;
    for (int it = 0; it < 3; it++) {
        left += r, extra = 0;
        for (int i = 0; i < n; i++) extra += ov_kernel(k[i].d, k[i].gemm, ov_persistent(G), f, &left) - k[i].d;
    }
    return extra;
}

/* A collective of t seconds issued on a side stream beside the compute. The
 * estimate (dry) sums them per stage and applies the same rate in closed form
 * (ov_extra). DeepSpeed 2021's layers carry their own factor (ds_slow). */
static void ov_issue(gen *G, double t, double bytes)
{
    if (t <= 0 || G->slow > 0) return;
    int ch = coll_params_channels(bytes);
    if (ch > G->ov_ch) G->ov_ch = ch;
    G->ov_left += t;
}

/* Seconds the compute of c seconds, cg of them GEMMs, gains beside s seconds
 * of collectives on ch channels (ov_slow in closed form): a second of work
 * beside them takes k seconds, sms/(sms - ch) for a kernel that spreads over
 * the SMs left, 2 for a persistent GEMM (its second wave), the mean of the
 * two by their shares; up to all of the compute. */
static double sm_share_extra(int sms, int ch, double c, double cg, double s)
{
    if (!sm_share_on || s <= 0 || c <= 0 || sms <= 0 || ch <= 0 || ch >= sms) return 0;
    double f = (double)(sms - ch) / sms;
    if (cg < 0) cg = 0;
    if (cg > c) cg = c;
    double k = (2 * cg + (c - cg) / f) / c, o = s < c * k ? s : c * k;
    return o * (1 - 1 / k);
}

/* The graph's collectives beside the compute: on their channels, persistent
 * GEMMs only where the GPU and the stack make them so (ov_persistent). */
static double ov_extra(const gen *G, double c, double cg, double s)
{
    return sm_share_extra(G->o->gpu->sms, G->ov_ch, c, ov_persistent(G) ? cg : 0, s);
}

/* The optimizer step over `owned` parameters of a stage of `layers` layers, as
 * the stack runs it (stack optim_bytes; docs/compute.md, "Optimizer step"):
 * the stack's bytes per parameter in its multi-tensor passes, plus
 * optim_per_tensor kernels per parameter tensor where it loops over them (12 a
 * layer with biases: two norms, QKV, projection, fc1, fc2, weight and bias each;
 * 6 without). The passes are multi-tensor kernels (torch's fused AdamW and
 * foreach ops, apex's and TE's multi_tensor_apply), which reach a fraction of
 * the streaming rate: WL_MULTI_TENSOR_EFF; a step that is all per-tensor eager
 * kernels (Composer's DecoupledAdamW: optim_per_tensor above 1) streams at the
 * full rate. */
static double optim_stack_time(const cm_gpu *gpu, const wl_stack *st, const wl_model *m, int layers, double owned,
                               int shards)
{
    double n = m->bias ? 12 : 6, tensors = n * layers;
    /* FSDP1 with use_orig_params (Composer's default): a rank holds the 1/D slice of
     * each unit's flat parameter, and only the tensors that slice touches get a
     * gradient and a step: on average 1 + (n - 1)/D of a layer's n */
    if (st->fsdp1_shard && shards > 1) tensors = (1 + (n - 1) / shards) * layers;
    int k = st->optim_k + (int)lround(st->optim_per_tensor * tensors);
    /* a step that loops over the tensors for all its passes runs plain eager
     * kernels, one tensor each, at the streaming rate */
    double eff = st->optim_per_tensor > 1 ? 1 : WL_MULTI_TENSOR_EFF;
    return cm_mem_time(gpu, owned * st->optim_bytes / eff, k);
}

/* Data-parallel shards of a unit's parameters the optimizer of one rank sees
 * (ZeRO-3 / FSDP: dp x cp; otherwise whole tensors: 1). */
static int optim_shards(const wl_layout *l) { return l->zero == 3 ? l->dp * l->cp : 1; }

/* An op of known duration d doing flops (counted for TFLOP/s); gemm: a GEMM
 * kernel (persistent on some GPUs: ov_slow). */
static int timed_k(gen *G, const char *what, int layer, int mb, double flops, double d, int gemm)
{
    if (G->slow > 0) d *= G->slow;
    else if (!G->dry) d = ov_slow(G, d, gemm);
    else {
        if (gemm) G->acc_g += d;
        if (G->krec) {
            ts_grow(&G->kr, sizeof *G->kr, &G->krcap, (size_t)G->nkr + 1);
            G->kr[G->nkr++] = (kern){d, gemm};
        }
    }
    G->flops += flops;
    G->busy += d;
    return add_fixed(G, d, what, layer, mb);
}

static int timed(gen *G, const char *what, int layer, int mb, double flops, double d)
{
    return timed_k(G, what, layer, mb, flops, d, 0);
}

/* A memo of gemm_time, a pure function of its arguments, the GPU spec and
 * the stack's choices it reads (searches time the same shapes for many
 * layouts): direct-mapped, every key compared. The spec is compared whole
 * once per estimate or build (gemm_memo_sync), not per GEMM. */
typedef struct gmemo {
    double batch, M, N, K, dt, gb, d;
    int t, era, flags, fused, sm, used; /* sm: the SMs left to a userbuffers reduce-scatter */
} gmemo;

static struct {
    cm_gpu gpu;     /* the spec the entries were computed with */
    int valid;
    gmemo e[2048];
} gemm_memo;
static int memo_on = 1; /* wl_memo: the GEMM and collective memos */

static size_t gpu_spec_size(const cm_gpu *g)
{
    return offsetof(cm_gpu, calib) + (size_t)(g->ncalib > 0 ? g->ncalib : 0) * sizeof(cm_calib);
}

static void gemm_memo_sync(const cm_gpu *gpu)
{
    if (gemm_memo.valid && gpu->ncalib == gemm_memo.gpu.ncalib && memcmp(gpu, &gemm_memo.gpu, gpu_spec_size(gpu)) == 0)
        return;
    memset(gemm_memo.e, 0, sizeof gemm_memo.e);
    memcpy(&gemm_memo.gpu, gpu, gpu_spec_size(gpu));
    gemm_memo.valid = 1;
}

/* Gradient-accumulation fusion: the stack's, unless the layout turns it off (gaf=off). */
static int gaf_on(const gen *G) { return G->st->grad_accum_fused && !G->l->no_gaf; }

static int ds_bf16(const gen *G);

/* How a weight gradient reaches the main gradient without that fusion, bytes per
 * element and kernels. Autograd adds it into the 16-bit .grad (fp16 under
 * DeepSpeed's ZeRO optimizer, Megatron-LM 2021) or a hook into the fp32 main
 * gradient: read the gradient and the main gradient, write the main gradient, one
 * kernel. DeepSpeed's BF16_Optimizer (ds_bf16) does it after each backward in
 * update_hp_grads (deepspeed/runtime/bf16_optimizer.py: hp_grad.add_(lp.grad.to(
 * hp_grad.dtype)), clear_lp_grads having set the bf16 .grad to None): the cast
 * materialises an fp32 copy (read 2, write 4), then the add reads both fp32
 * tensors and writes one (12): two kernels, 18 bytes where one fused add moves 10. */
static double accum_bytes(const gen *G, int *nk)
{
    *nk = ds_bf16(G) ? 2 : 1;
    return ds_bf16(G) ? G->dt + 4 * G->gb : G->dt + 2 * G->gb;
}

/* Seconds of an M x N x K GEMM (batch of them) as the stack runs it: FP8 GEMMs
 * (Transformer Engine) also cast their input operand, bf16 to fp8 plus the
 * transposed copy the weight gradient reads (4 bytes per element), one kernel. */
static double gemm_time_uncached(const gen *G, cm_dtype t, double batch, double M, double N, double K, int flags)
{
    const cm_gpu *gpu = G->o->gpu;
    /* a training step holds the card at its power limit: the sustained rate */
    double d = cm_gemm_time_era(gpu, G->era, t, batch, M, N, K), fl = 2 * batch * M * N * K;
    if (d > 0) d /= cm_sustained(gpu, t, fl / d / gpu->peak[t]);
    /* tp_overlap's pipelined reduce-scatter: the GEMM runs on the SMs its
     * communication kernel leaves (ub_rs_sms) */
    if (G->sm_margin > 0 && gpu->sms > G->sm_margin) d *= (double)gpu->sms / (gpu->sms - G->sm_margin);
    if (t == CM_FP8 && (flags & GF_CAST)) d += cm_mem_time(gpu, batch * M * K * 4, 1);
    /* torchao's tensorwise scaling reads the operand once more for its amax
     * (roofline_utils.py kernel 1), unless fused into the op that produced it */
    if (t == CM_FP8 && (flags & GF_CAST) && (flags & GF_AMAX)) d += cm_mem_time(gpu, batch * M * K * 2, 1);
    /* without gradient-accumulation fusion (the GEMM adding into the main
     * gradient), autograd's gradient is added to it by kernels of their own (accum_bytes) */
    if ((flags & GF_WGRAD) && !gaf_on(G)) {
        int nk;
        double b = accum_bytes(G, &nk);
        d += cm_mem_time(gpu, batch * M * N * b, nk);
    }
    return d;
}

static double gemm_time(const gen *G, double batch, double M, double N, double K, int flags)
{
    cm_dtype t = G->o->dtype;
    if (t == CM_FP8 && (flags & GF_HIGH)) t = CM_BF16;
    if (t == CM_FP8 && G->st->fp8_torchao && !G->st->fused) flags |= GF_AMAX;
    int fused = gaf_on(G) ? 1 : ds_bf16(G) ? 2 : 0; /* the accumulation path (accum_bytes) */
    const double key[4] = {batch, M, N, K};
    uint64_t h = 1469598103934665603ull, bits;
    for (int i = 0; i < 4; i++) {
        memcpy(&bits, &key[i], sizeof bits);
        h = (h ^ bits) * 1099511628211ull;
    }
    h = (h ^ (uint64_t)(t | G->era << 4 | flags << 8 | fused << 16 | (uint64_t)G->sm_margin << 20)) * 1099511628211ull;
    h ^= h >> 31, h *= 0x94d049bb133111ebull, h ^= h >> 29;
    gmemo *e = &gemm_memo.e[h % (sizeof gemm_memo.e / sizeof gemm_memo.e[0])];
    if (!memo_on || !gemm_memo.valid || G->o->gpu->ncalib != gemm_memo.gpu.ncalib) /* a spec gemm_memo_sync has not seen */
        return gemm_time_uncached(G, t, batch, M, N, K, flags);
    if (e->used && e->batch == batch && e->M == M && e->N == N && e->K == K && e->t == (int)t && e->era == (int)G->era &&
        e->flags == flags && e->fused == fused && e->sm == G->sm_margin && e->dt == G->dt && e->gb == G->gb)
        return e->d;
    double d = gemm_time_uncached(G, t, batch, M, N, K, flags);
    *e = (gmemo){batch, M, N, K, G->dt, G->gb, d, (int)t, (int)G->era, flags, fused, G->sm_margin, 1};
    return d;
}

static int gemm_x(gen *G, const char *what, int layer, int mb, double M, double N, double K, int flags)
{
    return timed_k(G, what, layer, mb, 2 * M * N * K, gemm_time(G, 1, M, N, K, flags), 1);
}

static int gemm(gen *G, const char *what, int layer, int mb, double M, double N, double K)
{
    return gemm_x(G, what, layer, mb, M, N, K, GF_CAST);
}

/* A memory-bound op of kind k moving bytes when fused. */
static int elem(gen *G, const char *what, int layer, int mb, double bytes, ekind k)
{
    int fused = G->st->fused;
    double x = fused ? ekinds[k].fused_x : ekinds[k].unfused_x;
    int nk = fused ? ekinds[k].fused_k : ekinds[k].unfused_k;
    return timed(G, what, layer, mb, 0, cm_mem_time(G->o->gpu, bytes * x, nk));
}

/* Eager model code (stack eager_ops, torchtitan's Llama without torch.compile):
 * each PyTorch op is a kernel of its own and reads and writes its operands in
 * full. Bytes per element of the hidden state (RMSNorm) or of q and k (rotary
 * embedding), 16-bit activations upcast to fp32, and kernels per call
 * (docs/compute.md, "Eager model code"):
 * - RMSNorm forward, x * rsqrt(mean(x.float()^2) + eps) .type_as(x) * w:
 *   float() 2+4, pow 4+4, mean 4, mul 4+4, type_as 4+2, * w 2+2 = 36 B;
 *   7 kernels plus 2 per-row ones (add eps, rsqrt);
 * - its autograd backward: * w (input grad 2+2, weight grad 2+2+2 and its sum
 *   2), type_as 2+4, mul (x grad 4+4; rstd grad 4+4+4 and its sum 4), pow
 *   (2x 4+4, times the broadcast grad 4+4), sum of the two x grads 4+4+4,
 *   float() 4+2 = 76 B; 12 kernels;
 * - the same on an fp32 hidden state (torchtitan under autocast, no FSDP: the
 *   residual stream stays fp32): no float() or type_as, * w in fp32: 28 B in
 *   7 kernels forward, 76 B in 10 backward;
 * - rotary embedding of q or k, view_as_complex(t.float()) * freqs, then
 *   type_as: 2+4, 4+4, 4+2 = 20 B in 3 kernels, the backward the same in
 *   reverse (casts and a multiply by the conjugate);
 * - repeat_kv (GQA): k and v expanded to every query head and reshaped, a
 *   strided copy: read 2 per k/v element, write 2 per q element; backward, the
 *   expand's gradient: a sum over the repeats (read 2 per q element, write 2
 *   per k/v element); a kernel per tensor.
 * Kernel classes below the streaming rate of PyTorch's vectorized kernels
 * (fraction of hbm_achieved they reach, measured on an H100: bytes over GPU
 * time per class in configs/measurements/gpu/h100_train_profile.csv, steps
 * l3_fsdp and l3_plain; docs/compute.md, "Eager kernels' rates"): the
 * broadcast multiplies by the per-row rstd and by the weight run the
 * non-vectorized elementwise_kernel (fp32 0.77, 16 bits 0.48), a 16-to-32-bit
 * cast (float(), type_as's backward) the unrolled kernel of a dynamic cast
 * (0.62; the 32-to-16-bit one is vectorized, at the streaming rate),
 * repeat_kv's strided copy 0.39 and its sum over the repeats 0.63. */
#define EAGER_BC32 0.77    /* fp32 broadcast multiply, elementwise_kernel<128,2> */
#define EAGER_BC16 0.48    /* 16-bit broadcast multiply, elementwise_kernel<128,4> */
#define EAGER_UPCAST 0.62  /* 16-to-32-bit copy, unrolled_elementwise_kernel */
#define EAGER_STRIDED 0.39 /* repeat_kv's strided copy, elementwise_kernel<128,4> */
#define EAGER_REPSUM 0.63  /* repeat_kv's backward sum, reduce_kernel<128,4> */
enum { EAGER_NORM_FWD, EAGER_NORM_BWD, EAGER_NORM32_FWD, EAGER_NORM32_BWD, EAGER_ROPE_FWD, EAGER_ROPE_BWD, EAGER_NKINDS };
static const struct {
    double bytes, bc32, bc16, up; /* per element: at the streaming rate, fp32 and 16-bit broadcast multiplies, up-casts */
    int kernels;
} eager[EAGER_NKINDS] = {
    {18, 8, 4, 6, 9},  /* pow 8, mean 4, type_as 6; * rstd; * w; float() */
    {58, 8, 4, 6, 12}, /* weight grad 6+2, float()'s backward 6, rstd grad 12+4, pow 16, sum 12; rstd; w; type_as */
    {12, 16, 0, 0, 7}, /* pow 8, mean 4; * rstd and * w in fp32 */
    {60, 16, 0, 0, 10},
    {14, 0, 0, 6, 3},  /* complex multiply 8, type_as 6; float() */
    {14, 0, 0, 6, 3},  /* multiply by the conjugate 8, float()'s backward 6; type_as's backward */
};

/* Streaming-equivalent bytes per element of eager op k. */
static double eager_bytes(int k)
{
    return eager[k].bytes + eager[k].bc32 / EAGER_BC32 + eager[k].bc16 / EAGER_BC16 + eager[k].up / EAGER_UPCAST;
}

static int autocast_w(const gen *G);

/* A norm over elems elements of the hidden state: the stack's kernel (bytes
 * as fused), or the eager ops (on an fp32 hidden state under autocast). bwd:
 * 0 forward, else the backward, of a norm whose output feeds bwd linears.
 * Compiled (torch.compile, eager_ops WL_COMPILED), the backward is Inductor's
 * two reductions over different axes, which it does not fuse: per row, the
 * input gradient from the sum of the bwd linears' input gradients (each a
 * separate mm output: torchtitan's wq, wk, wv and w1, w3), the input and the
 * per-row rstd (read (bwd + 1) x 16 bits, write 16 bits); per column, the
 * weight gradient in a split reduction that reads the same gradients and the
 * input again: (2 bwd + 3) x 16 bits per element, 2 kernels. */
static int norm_op(gen *G, const char *what, int layer, int mb, double bytes, double elems, int bwd)
{
    if (G->st->eager_ops == WL_COMPILED && bwd)
        return timed(G, what, layer, mb, 0, cm_mem_time(G->o->gpu, elems * G->dt * (2 * bwd + 3), 2));
    if (G->st->eager_ops != WL_EAGER) return elem(G, what, layer, mb, bytes, EK_NORM);
    int k = autocast_w(G) ? (bwd ? EAGER_NORM32_BWD : EAGER_NORM32_FWD) : (bwd ? EAGER_NORM_BWD : EAGER_NORM_FWD);
    return timed(G, what, layer, mb, 0, cm_mem_time(G->o->gpu, elems * eager_bytes(k), eager[k].kernels));
}

/* Rotary embedding of q and k (q_elems + k_elems elements) under eager ops;
 * the fused stacks fold it into their attention input (not costed). The same
 * model code compiled (eager_ops WL_COMPILED, torch.compile per block):
 * Inductor has no complex code generation (torch/_inductor/lowering.py:
 * make_fallback(aten.view_as_complex, require_contiguous); a complex input
 * makes any op a fallback, unsupported_input_tensor), so torchtitan's
 * apply_rotary_emb stays three passes per tensor: Inductor writes t.float()
 * contiguous for view_as_complex (read 16 bits, write 32), the complex
 * multiply runs as the aten kernel (read 4, write 4 per real element), and
 * Inductor reads the fp32 result back for type_as, writing q, and k expanded
 * to every query head by repeat_kv's reshape (write the q-sized copy); v is
 * expanded by a copy where GQA repeats it. SDPA, an extern kernel, reads
 * them. The backward mirrors it: the cast up (k's after summing the
 * repeats), the multiply by the conjugate, the cast down: the same bytes. */
static void rope_op(gen *G, int layer, int mb, double q_elems, double k_elems, int bwd)
{
    if (G->st->eager_ops == WL_COMPILED && !G->m->learned_pos) {
        int gqa = k_elems < q_elems;
        double up = G->dt + 4, cmul = 8, down = 4 + G->dt;
        double b = q_elems * (up + cmul + down) + k_elems * (up + cmul + 4) + q_elems * G->dt +
                   (gqa ? G->dt * (k_elems + q_elems) : 0);
        timed(G, bwd ? "rope_kv_bwd" : "rope_kv", layer, mb, 0, cm_mem_time(G->o->gpu, b, gqa ? 7 : 6));
        return;
    }
    if (G->st->eager_ops != WL_EAGER || G->m->learned_pos) return;
    int k = bwd ? EAGER_ROPE_BWD : EAGER_ROPE_FWD;
    timed(G, bwd ? "rope_bwd" : "rope", layer, mb, 0,
          cm_mem_time(G->o->gpu, (q_elems + k_elems) * eager_bytes(k), 2 * eager[k].kernels));
}

/* GQA's repeat_kv under eager ops (k and v, kv_elems elements each, to
 * q_elems each), forward copy or backward sum; nothing without GQA. */
static void repeat_kv_op(gen *G, int layer, int mb, double q_elems, double kv_elems, int bwd)
{
    if (G->st->eager_ops != WL_EAGER || !(kv_elems < q_elems)) return; /* compiled: in rope_op */
    double b = 2 * (q_elems + kv_elems) * G->dt / (bwd ? EAGER_REPSUM : EAGER_STRIDED);
    timed(G, bwd ? "repeat_kv_bwd" : "repeat_kv", layer, mb, 0, cm_mem_time(G->o->gpu, b, 2));
}

/* Eager model code keeps q, k and v (w1 and w3) as separate nn.Linear layers
 * (torchtitan's Attention and FeedForward): autograd sums their input
 * gradients, n - 1 adds (read 2, write 1 of the hidden state each) for n
 * consumers of a norm's output of elems elements; fp32 under autocast (the
 * casts' backwards hand fp32 gradients), else 16-bit. */
static void grad_sum_op(gen *G, int layer, int mb, double elems, int n)
{
    if (G->st->eager_ops != WL_EAGER || n < 2) return; /* compiled: fused into the norm's backward */
    double b = autocast_w(G) ? 4 : G->dt;
    timed(G, "grad_sum", layer, mb, 0, cm_mem_time(G->o->gpu, 3 * elems * b * (n - 1), n - 1));
}

/* torchtitan without FSDP (no dp_shard, no TP or PP: maybe_enable_amp in
 * torchtitan/distributed/utils.py) runs its forward under
 * torch.autocast(bf16) on fp32 weights and an fp32 residual stream: */
static int autocast_w(const gen *G)
{
    const wl_layout *l = G->l;
    return G->st->eager_ops && l->zero == 0 && l->tp == 1 && l->pp == 1 && G->dt < 4;
}

/* each weight is cast to 16 bits once per forward (read 4, write 2 per
 * parameter; autocast caches the cast of a leaf within its region), its
 * gradient cast back to fp32 in the backward (read 2, write 4, an up-cast), a
 * kernel per weight; */
static void autocast_cast(gen *G, int layer, int mb, double params, int weights, int bwd)
{
    if (!autocast_w(G)) return;
    double b = params * (4 + G->dt) / (bwd ? EAGER_UPCAST : 1);
    timed(G, bwd ? "autocast_wgrad" : "autocast_w", layer, mb, 0, cm_mem_time(G->o->gpu, b, weights));
}

/* and a norm's fp32 output is cast to 16 bits for each of its n consumers (no
 * cache for activations), the gradient of each cast back to fp32. */
static void autocast_act(gen *G, int layer, int mb, double elems, int n, int bwd)
{
    if (!autocast_w(G) || G->st->eager_ops != WL_EAGER) return; /* compiled: fused into the norm */
    double b = n * elems * (4 + G->dt) / (bwd ? EAGER_UPCAST : 1);
    timed(G, bwd ? "autocast_act_bwd" : "autocast_act", layer, mb, 0, cm_mem_time(G->o->gpu, b, n));
}

/* The weights of a layer's linear layers (MoE: every expert's), f the FFN
 * width mlp_dims gives. */
static double layer_weights(const wl_model *m, int li, double f)
{
    double h = m->hidden, kvd = (double)m->kv_heads * (m->hidden / m->heads), g = m->gated ? 2 : 1;
    int moe = m->experts && li >= m->dense_layers;
    return h * (2 * h + 2 * kvd) + h * f * (g + 1) * (moe ? m->experts : 1);
}

/* Members of a data-parallel collective: positions first + i st (i < n) in
 * the order of the rank's data-parallel group (dp outer, cp inner). */
typedef struct dsel {
    int first, st;
} dsel;

static double grp_time(const an_net *net, int n, int stride, int rho, og_coll c, int64_t bytes);
static const dsel tp_group;
#define TP_GROUP (&tp_group) /* coll_time: the rank's tensor-parallel group */
static void param_wait(gen *G, int li, int mb);

/* A collective on the n ranks rank[] (overwritten) as the engine costs it on
 * their placement (an_sched_time: the policy's algorithm, e.g. NCCL's
 * hierarchical ring over every NIC of a node the group spans, on the routes
 * inside and between nodes); the same figure at every detail level. */
static double place_cost(const an_net *net, og_coll c, int n, int *rank, double bytes)
{
    int gpn = net->gpus_per_node > 0 ? net->gpus_per_node : 1, arith = 1;
    for (int i = 2; i < n && arith; i++) arith = rank[i] - rank[i - 1] == rank[1] - rank[0];
    if (arith) return grp_time(net, n, n > 1 ? rank[1] - rank[0] : 1, rank[0] % gpn, c, (int64_t)llround(bytes));
    int *gpu = ts_malloc((size_t)n * sizeof *gpu);
    for (int i = 0; i < n; i++) gpu[i] = rank[i] % gpn, rank[i] /= gpn;
    double t = an_sched_time_gpus(net, n, rank, gpu, c, (int64_t)llround(bytes));
    free(gpu);
    return t;
}

/* A data-parallel collective of the n members ds selects, for the rank of TP
 * index ti. */
static double dp_cost_at(gen *G, int ti, og_coll c, int n, const dsel *ds, double bytes)
{
    const wl_layout *l = G->l;
    if (!l->axonn && !l->order[0] && !l->order[1] && n > 1) {
        /* the default order (tp innermost, then cp, dp, pp): member j of the
         * group (j = c + cp d) is rank ti + tp (j + cp dp pi), so the members
         * are evenly spaced, tp st apart: place_cost's arithmetic case, without
         * listing them (cp x dp of them, for each collective of the estimate) */
        long r0 = ti + (long)l->tp * (ds->first + (long)l->cp * l->dp * G->pi);
        int gpn = G->o->net->gpus_per_node > 0 ? G->o->net->gpus_per_node : 1;
        return grp_time(G->o->net, n, l->tp * ds->st, (int)(r0 % gpn), c, (int64_t)llround(bytes));
    }
    int *rank = ts_malloc((size_t)n * sizeof *rank);
    for (int i = 0; i < n; i++) {
        int j = ds->first + i * ds->st;
        rank[i] = wl_rank_of(l, ti, j % l->cp, j / l->cp, G->pi);
    }
    double t = place_cost(G->o->net, c, n, rank, bytes);
    free(rank);
    return t;
}

/* dp_cost_at for the rank being built. Its TP index is the only coordinate a
 * rank's ops depend on besides group and peer ids: building rail copies (one
 * TP rank standing for its siblings), every sibling's figure must be the
 * same, or the copies are not exact (G->asym). */
static double dp_cost(gen *G, og_coll c, int n, const dsel *ds, double bytes)
{
    double t = dp_cost_at(G, G->ti, c, n, ds, bytes);
    if (G->tpb == 1 && G->l->tp > 1 && !G->dry)
        for (int ti = 1; ti < G->l->tp && !G->asym; ti++)
            if (dp_cost_at(G, ti, c, n, ds, bytes) != t) G->asym = 1;
    return t;
}

/* A tensor-parallel collective of the rank's TP group. */
static double tp_cost(gen *G, og_coll c, double bytes)
{
    const wl_layout *l = G->l;
    int rank[1024], n = l->tp < 1024 ? l->tp : 1024;
    for (int i = 0; i < n; i++) rank[i] = wl_rank_of(l, i, G->ci, G->di, G->pi);
    return place_cost(G->o->net, c, n, rank, bytes);
}

/* The analytical time of a collective: on the data-parallel placement ds, or
 * the ring alpha-beta form inside (intra) or between nodes. */
static double coll_time(gen *G, og_coll c, int n, double bytes, int intra, const dsel *ds)
{
    const an_net *net = G->o->net;
    if (ds == TP_GROUP) return tp_cost(G, c, bytes);
    if (ds) return dp_cost(G, c, n, ds, bytes);
    return an_coll_time(c, n, bytes, intra ? net->intra_bw : net->inter_bw, intra ? net->intra_lat : net->inter_lat);
}

/* coll_time with the bandwidth part at a fraction eff of its modelled rate
 * (a stack that moves its collectives' bytes slower than the library can):
 * the cost is affine in the bytes at these sizes, so the fixed part is
 * 2 t(B/2) - t(B) and only the rest is scaled. */
static double whole(double bytes, int n);
static double coll_time_eff(gen *G, og_coll c, int n, double bytes, int intra, const dsel *ds, double eff)
{
    double t = coll_time(G, c, n, bytes, intra, ds);
    if (eff >= 1) return t;
    double a = 2 * coll_time(G, c, n, whole(bytes / 2, n), intra, ds) - t;
    if (a < 0) a = 0;
    if (a > t) a = t;
    return a + (t - a) / eff;
}

/* tp_overlap (Transformer Engine's userbuffers, Megatron-Core --tp-comm-overlap):
 * a sequence-parallel all-gather or reduce-scatter of t seconds runs in tp
 * chunks pipelined with the tp chunks of its GEMM (g seconds), so the compute
 * stream waits for the first chunk's transfer and for the transfers the GEMM
 * chunks cannot cover: t/tp + (tp-1)/tp max(0, t - g). Not modelled: the SMs
 * the overlap's copies and reductions take from the GEMM. */
static double tp_exposed(const gen *G, double t)
{
    double g = G->tp_hide, n = G->l->tp;
    if (g <= 0 || n < 2) return t;
    if (G->tp_async) return t > g ? t - g : 0;
    return t / n + (n - 1) / n * (t > g ? t - g : 0);
}

/* A collective on stream s: a real COLL op on group grp, or (analytic) a
 * fixed-duration op costed by coll_time. */
static int coll(gen *G, int s, const char *cat, og_coll c, int grp, int n, double bytes, int analytic, int intra,
                const dsel *ds, int dep, const char *what, int layer, int mb)
{
    if (n <= 1 || bytes <= 0) return -1;
    double eff = ds && ds != TP_GROUP && G->zeff > 0 ? G->zeff : 1;
    int side_dp = s != WL_S_COMPUTE && ds && ds != TP_GROUP && !G->ov_skip;
    if (G->dry) {
        double t = coll_time_eff(G, c, n, bytes, intra, ds, eff);
        if (ds == TP_GROUP) t = tp_exposed(G, t);
        if (s == WL_S_COMPUTE) G->acc += t;
        else G->acc_side += t;
        if (side_dp && G->slow <= 0) {
            G->acc_ov += t;
            int ch = coll_params_channels(bytes);
            if (ch > G->ov_ch) G->ov_ch = ch;
        }
        return -1;
    }
    if (side_dp) ov_issue(G, coll_time_eff(G, c, n, bytes, intra, ds, eff), bytes);
    og_op *op;
    if (analytic) {
        double t = coll_time_eff(G, c, n, bytes, intra, ds, eff);
        if (ds == TP_GROUP) t = tp_exposed(G, t);
        if (s == WL_S_COMPUTE && G->o->fuse && dep < 0) {
            /* blocking and contention-free: folded into the compute run, accounted apart */
            G->tp_s += t;
            return add_fixed(G, t, cat, layer, mb);
        }
        op = og_compute_fixed(G->g, G->r, s, t);
    } else {
        if (grp < 0) G->asym = 1; /* rail copies: a collective on a group not built (TP) */
        op = og_collective(G->g, G->r, s, c, grp, (int64_t)llround(bytes), G->o->dtype == CM_FP16 ? OG_F16 : OG_BF16);
    }
    if (dep >= 0) og_add_dep(op, dep);
    set_label(G, op, "%s.%s.%s.l%d.mb%d", cat, og_coll_name(c), what, layer, mb);
    if (s == WL_S_COMPUTE) G->last_comp = -1;
    if (!analytic && eff < 1) {
        /* the stack's shortfall against the modelled rate, after the simulated collective */
        int id = op->id;
        og_op *x = og_compute_fixed(G->g, G->r, s, coll_time_eff(G, c, n, bytes, intra, ds, eff) -
                                                       coll_time(G, c, n, bytes, intra, ds));
        og_add_dep(x, id);
        set_label(G, x, "%s.%s.%s_shortfall.l%d.mb%d", cat, og_coll_name(c), what, layer, mb);
        return x->id;
    }
    return op->id;
}

/* TP collectives pipelined with their GEMMs here: everywhere under tp_overlap
 * (Transformer Engine's userbuffers); under async_tp (PyTorch's micro-pipelined
 * TP, torchtitan's enable_async_tensor_parallel: the Inductor pass
 * _micro_pipeline_tp rewrites all-gather -> mm into fused_all_gather_matmul and
 * mm -> reduce-scatter into fused_matmul_reduce_scatter, on symmetric memory
 * with copy engines) in the forward and the recomputed forward only: its
 * authors report "up to ~20% forward pass speedup and ~8% E2E speedup" on
 * Llama 3 70B (discuss.pytorch.org/t/209487), the backward's collectives as
 * before (docs/compute.md, "Async TP"). */
static int tp_ov(const gen *G) { return G->l->tp_overlap || (G->l->async_tp && !G->in_bwd); }

/* A TP collective; hide: the seconds of the GEMM it pipelines with under
 * tp_overlap (0: none). Only analytic (intra-node) TP collectives shrink: a
 * real collective op of the engine keeps its full cost. */
static void tp_coll_ov(gen *G, og_coll c, double bytes, const char *what, int layer, int mb, double hide)
{
    int analytic = G->o->fuse && G->tp_intra;
    G->tp_hide = tp_ov(G) ? hide : 0;
    coll(G, WL_S_COMPUTE, "tp", c, G->tpg, G->l->tp, bytes, analytic, G->tp_intra, TP_GROUP, -1, what, layer, mb);
    G->tp_hide = 0;
}

static void tp_coll(gen *G, og_coll c, double bytes, const char *what, int layer, int mb)
{
    tp_coll_ov(G, c, bytes, what, layer, mb, 0);
}

/* Seconds of the GEMM a TP collective pipelines with (tp_overlap): a forward
 * or input-gradient GEMM (wg 0), or a weight-gradient one (wg 1). */
static double ov_gemm(const gen *G, double M, double N, double K, int wg)
{
    return tp_ov(G) ? gemm_time(G, 1, M, N, K, wg ? GF_WGRAD : GF_CAST) : 0;
}

/* The backward of a column-parallel linear (QKV, fc1) without tp_overlap,
 * under a stack that issues its TP collectives asynchronously (tp_bwd_async,
 * Transformer Engine's Linear/LayerNormLinear backward): the re-gather of the
 * sequence-parallel input (wg 0) is issued before the dgrad GEMM and awaited
 * after it; the dgrad's reduce-scatter (all-reduce without SP; wg 1) is issued
 * after the dgrad GEMM and awaited after the wgrad GEMM. Each costs the compute
 * stream only what the GEMM beside it does not cover. A deferred wgrad (ZB-H1)
 * leaves the reduce-scatter nothing to run beside. Under tp_overlap the
 * userbuffers pipelines (ov_gemm) apply instead. */
static void tp_coll_bwd(gen *G, og_coll c, double bytes, const char *what, int layer, int mb, double M, double N,
                        double K, int wg, int dgrad)
{
    if (tp_ov(G) || !G->st->tp_bwd_async || (wg && G->l->schedule == WL_ZBH1)) {
        tp_coll_ov(G, c, bytes, what, layer, mb, ov_gemm(G, M, N, K, wg));
        return;
    }
    int analytic = G->o->fuse && G->tp_intra;
    if (analytic || G->dry) {
        G->tp_async = 1;
        G->tp_hide = gemm_time(G, 1, M, N, K, wg ? GF_WGRAD : GF_CAST);
        coll(G, WL_S_COMPUTE, "tp", c, G->tpg, G->l->tp, bytes, analytic, G->tp_intra, TP_GROUP, -1, what, layer, mb);
        G->tp_hide = 0;
        G->tp_async = 0;
        return;
    }
    /* a simulated collective on a stream of its own: the re-gather starts after
     * the compute so far and the next wgrad GEMM waits for it (tp_wait); the
     * reduce-scatter starts after the dgrad GEMM and the compute stream waits
     * for it here, after the wgrad GEMM */
    int id = coll(G, WL_S_TP_ASYNC, "tp", c, G->tpg, G->l->tp, bytes, 0, G->tp_intra, TP_GROUP,
                  wg ? dgrad : last0(G), what, layer, mb);
    if (id < 0) return;
    if (!wg) {
        G->tp_wait = id;
        return;
    }
    last0(G);
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, id);
    set_label(G, w, "comp.wait_tp.l%d.mb%d", layer, mb);
}

/* Before a wgrad GEMM: the compute stream waits for the re-gather of its input. */
static void tp_wait_regather(gen *G, int layer, int mb)
{
    if (G->dry || G->tp_wait < 0) return;
    last0(G);
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, G->tp_wait);
    set_label(G, w, "comp.wait_tp.l%d.mb%d", layer, mb);
    G->tp_wait = -1;
}

/* tp_overlap: SMs Transformer Engine's userbuffers give the pipelined
 * reduce-scatter after the forward projection (proj) and fc2 GEMMs, with
 * set_sm_margin: the GEMM is launched on the rest. NeMo's H100 configs for
 * hidden 8192 at tp=4 (tp_overlap_configs/userbuffers.py, proj_fprop and
 * fc2_fprop: PipelineOverlapCfg(num_sm=24 / 16, set_sm_margin=True)); TE's own
 * default for a pipelined overlap is 16 with the margin (docs/compute.md). The
 * ring-exchange all-gathers use copy engines and one SM; the bulk overlaps of
 * the backward (2-24 SMs, no margin) are not modelled. */
#define WL_UB_RS_SMS_PROJ 24
#define WL_UB_RS_SMS_FC2 16

/* A forward GEMM followed by its pipelined reduce-scatter: with tp_overlap it
 * runs on the SMs left by the communication kernel (sms of them taken). */
static void gemm_rs(gen *G, const char *what, int li, int mb, double M, double N, double K, int sms)
{
    G->sm_margin = G->l->tp_overlap ? sms : 0;
    gemm(G, what, li, mb, M, N, K);
    G->sm_margin = 0;
}

/* ov_gemm of such a GEMM: the time the reduce-scatter pipelines with. */
static double ov_gemm_rs(gen *G, double M, double N, double K, int sms)
{
    G->sm_margin = G->l->tp_overlap ? sms : 0;
    double d = ov_gemm(G, M, N, K, 0);
    G->sm_margin = 0;
    return d;
}

/* ---- one transformer layer ---- */

/* Seconds of the attention core (scores, softmax, weighted sum) of heads
 * heads over sq queries and sk keys, forward (bwd 0) or backward, with the
 * stack's kernel. FlashAttention kernels: causal, so half the s x s work, at
 * their measured rate (the backward is 2.5 forwards as FlashAttention counts
 * it). Unfused: batched GEMMs on the GPU's GEMM model plus the s x s score
 * traffic: fused scale-mask-softmax (read, write), dropout (read, write, 1-byte
 * mask); backward: dropout (5 B) and softmax (read y, dy, write: 6 B); without
 * the fused softmax kernel, scale, mask and softmax apart (12 B). */
static double attn_time(const gen *G, double heads, double sq, double sk, double d, int bwd)
{
    const cm_gpu *gpu = G->o->gpu;
    double fwd_flops = 4 * heads * sq * sk * d;
    if (G->attn != WL_ATTN_UNFUSED) {
        cm_attn k = G->attn == WL_ATTN_FLASH3 ? CM_ATTN_FLASH3 : G->attn == WL_ATTN_FLASH2 ? CM_ATTN_FLASH2 : CM_ATTN_FLASH;
        /* no sustained-load factor: attention draws less power than the GEMMs and
         * keeps 0.96-0.99 of its rate at the power limit (h100_attn_sustained.csv) */
        return cm_attn_time(gpu, k, fwd_flops / 2, sk, bwd);
    }
    double e = heads * sq * sk, softmax = G->st->fused ? 4 : 12;
    if (!bwd)
        return gemm_time(G, heads, sq, sk, d, GF_HIGH) + gemm_time(G, heads, sq, d, sk, GF_HIGH) +
               cm_mem_time(gpu, e * (softmax + 5), G->st->fused ? 2 : 4);
    return gemm_time(G, heads, sq, sk, d, GF_HIGH) + 3 * gemm_time(G, heads, sk, d, sq, GF_HIGH) +
           cm_mem_time(gpu, e * (softmax + 2 + 5), G->st->fused ? 2 : 4);
}

/* Seconds of one non-causal FlashAttention call of sq queries on sk keys (a
 * ring step's sub-block), at the kernel's rate for sk keys: every score is
 * computed, none masked. Unfused kernels cost the same either way. */
static double attn_block_time(const gen *G, double heads, double sq, double sk, double d, int bwd)
{
    if (G->attn == WL_ATTN_UNFUSED) return attn_time(G, heads, sq, sk, d, bwd);
    cm_attn k = G->attn == WL_ATTN_FLASH3 ? CM_ATTN_FLASH3 : G->attn == WL_ATTN_FLASH2 ? CM_ATTN_FLASH2 : CM_ATTN_FLASH;
    return cm_attn_time(G->o->gpu, k, 4 * heads * sq * sk * d, sk, bwd);
}

/* ---- PyTorch's ring attention (stack cp_torch) ----
 * torch.distributed.tensor.experimental._attention as torchtitan ran it in
 * late 2024 (docs/workload.md, "PyTorch context parallelism"): the sequence in
 * 2 cp chunks, rank c holding chunks c and 2cp-1-c (load balance for the
 * causal mask); SDPA receives k and v already expanded to every query head
 * (torchtitan's repeat_kv), made contiguous and concatenated, then all-gathered
 * over the CP group once per pass (rotate method all-gather) while step 0 runs
 * causally on the local block; step i > 0 runs one non-causal call: with the
 * first half of the received keys where i <= c, else with the second half of
 * the queries ("partial"). Partial outputs and log-sum-exps are merged in
 * fp32 by eager ops (_SDPAMerger). The backward accumulates dq, dk, dv in
 * fp32 and passes the dk/dv accumulators around the ring, fp32, one
 * permute (all-to-all) per step, the last one awaited at the end.
 * Bytes per element of the rank's q-sized block (tok x hidden / tp), reads
 * plus writes:
 * - forward: k and v made contiguous and concatenated (4 + 4 each: 16);
 *   the loop concatenates the step's k and v again before every step but the
 *   last, though the all-gather rotater sends only the first (8 at each step
 *   0 < i < cp - 1); step 0: the output and lse cast to fp32 (2+4: 6); a full merge (cast 6,
 *   out - block 12, times sigmoid(lse diff) 8, subtract 12: 38); a partial
 *   one on half the rows (19) plus _partial_update's cat of the whole fp32
 *   output (8): 27; the result cast back (4+2: 6);
 * - backward: fp32 zeros for dq, dk, dv (12), the k/v pack (16); per step
 *   dk and dv added in fp32 (read 4 + 2, write 4: 10 each) or on half the
 *   rows with a cat of the whole (5 + 8 each) where i <= c (i > 0), dq the
 *   same the other way round, the dk/dv send buffer concatenated (8 each),
 *   the k/v concatenated as in the forward (8 at 0 < i < cp - 1); the casts
 *   back to 16 bits (3 x 6). */
#define CP_T_PACK 16.0
#define CP_T_KVCAT 8.0
static double cp_torch_elem(int c, int i, int cp, int bwd, int *k)
{
    double cat = i > 0 && i < cp - 1 ? (*k += 1, CP_T_KVCAT) : 0;
    if (!bwd) {
        if (i == 0) return *k += 2, 6;
        return cat + (i <= c ? (*k += 9, 38) : (*k += 11, 27));
    }
    double kv = i > 0 && i <= c ? 2 * (5 + 8) : 2 * 10, q = i > c ? 5 + 8 : 10;
    *k += i > 0 && i <= c ? 8 : i > c ? 7 : 5;
    return cat + kv + q + 16;
}

/* Seconds the kernels of c seconds gain beside the k/v all-gather of t
 * seconds and bytes: the NCCL kernel holds its channels' SMs while it runs
 * (docs/compute.md, "SMs held by overlapped data-parallel collectives"; the
 * estimate's closed form of ov_slow for this one collective). */
static double cp_ag_extra(const gen *G, double c, double t, double bytes)
{
    return sm_share_extra(G->o->gpu->sms, coll_params_channels(bytes), c, 0, t);
}

/* Seconds of ring step i's SDPA call on rank c (sq queries of the rank). */
static double cp_torch_step(const gen *G, int c, int i, double heads, double sq, double hd, int bwd)
{
    if (i == 0) return attn_time(G, heads, sq, sq, hd, bwd);
    return i <= c ? attn_block_time(G, heads, sq, sq / 2, hd, bwd) : attn_block_time(G, heads, sq / 2, sq, hd, bwd);
}

static void attention_cp_torch(gen *G, int layer, int mb, const char *what, double mult, double heads, double hd,
                               double flops)
{
    const wl_layout *l = G->l;
    const cm_gpu *gpu = G->o->gpu;
    const an_net *net = G->o->net;
    int cp = l->cp, bwd = mult > 1, intra = (double)l->tp * cp <= net->gpus_per_node;
    double sq = G->tok / l->mbs, E = heads * sq * hd;
    double kv = 2 * E * G->dt, dkv = 2 * E * 4; /* the k/v block (16-bit), the dk/dv accumulators (fp32) */
    double pre = (CP_T_PACK + (bwd ? 12 : 0)) * E, post = (bwd ? 18 : 6) * E;
    int pre_k = bwd ? 6 : 3, post_k = bwd ? 3 : 1;
    double t_ag = an_coll_time(OG_ALLGATHER, cp, cp * kv, intra ? net->intra_bw : net->inter_bw,
                               intra ? net->intra_lat : net->inter_lat);
    double t_x = (intra ? net->intra_lat : net->inter_lat) + dkv / (intra ? net->intra_bw : net->inter_bw);
    if (G->dry) {
        /* the slowest rank's: the ranks meet at every layer's FSDP collectives and, in the
         * backward, at every step's dk/dv permute (docs/workload.md) */
        double slowest = 0;
        for (int c = 0; c < cp; c++) {
            double t = cm_mem_time(gpu, pre, pre_k) + cm_mem_time(gpu, post, post_k);
            for (int i = 0; i < cp; i++) {
                int k = 0;
                double e = cp_torch_elem(c, i, cp, bwd, &k) * E, s = cp_torch_step(G, c, i, heads, sq, hd, bwd);
                t += s + cm_mem_time(gpu, e, k);
                if (i == 0) t += cp_ag_extra(G, s, t_ag, cp * kv); /* its SMs beside step 0 */
                if (i == 0 && t_ag > s) t += t_ag - s; /* steps 1.. wait for the all-gather */
                if (bwd && i > 0 && t_x > s) t += t_x - s; /* the previous step's dk/dv */
            }
            if (bwd) t += t_x; /* the last permute, awaited */
            if (t > slowest) slowest = t;
        }
        G->flops += flops;
        G->acc += slowest;
        return;
    }
    int c = G->ci, next = built(G, G->ti, (c + 1) % cp, G->di, G->pi), prev = built(G, G->ti, (c + cp - 1) % cp, G->di, G->pi);
    timed(G, "cp_pack", layer, mb, 0, cm_mem_time(gpu, pre, pre_k));
    int ag = coll(G, WL_S_CP_RECV, "cp", OG_ALLGATHER, G->cpg, cp, cp * kv, 0, intra, NULL, last0(G), "kv", layer, mb);
    if (ag >= 0) ov_issue(G, t_ag, cp * kv); /* its channels' SMs, beside the steps it overlaps */
    int recv = -1;
    for (int i = 0; i < cp; i++) {
        int k = 0;
        double e = cm_mem_time(gpu, cp_torch_elem(c, i, cp, bwd, &k) * E, k), s = cp_torch_step(G, c, i, heads, sq, hd, bwd);
        if (i == 0) {
            timed(G, what, layer, mb, flops / cp, s + e);
        } else {
            /* the SDPA call waits for the gathered k/v; the merge of the backward for the
             * previous step's dk/dv */
            og_op *o = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, ov_slow(G, bwd ? s : s + e, 0));
            if (i == 1 && ag >= 0) og_add_dep(o, ag);
            G->flops += flops / cp, G->busy += o->duration;
            set_label(G, o, "comp.%s.l%d.mb%d", what, layer, mb);
            G->last_comp = -1;
            if (bwd) {
                og_op *a = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, e);
                if (recv >= 0) og_add_dep(a, recv);
                G->busy += e;
                set_label(G, a, "comp.cp_dkv_acc.l%d.mb%d", layer, mb);
            }
        }
        if (!bwd) continue;
        /* this step's dk/dv accumulators to the next rank */
        int have = last0(G), tag = (1 << 24) + G->cp_seq++;
        og_op *sd = og_send(G->g, G->r, WL_S_CP_SEND, next, (int64_t)llround(dkv), tag);
        if (have >= 0) og_add_dep(sd, have);
        set_label(G, sd, "cp.send.dkv.l%d.mb%d", layer, mb);
        og_op *rv = og_recv(G->g, G->r, WL_S_CP_RECV, prev, (int64_t)llround(dkv), tag);
        set_label(G, rv, "cp.recv.dkv.l%d.mb%d", layer, mb);
        recv = rv->id;
    }
    og_op *o = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, cm_mem_time(gpu, post, post_k));
    if (recv >= 0) og_add_dep(o, recv);
    G->busy += o->duration;
    set_label(G, o, "comp.cp_unpack.l%d.mb%d", layer, mb);
    G->last_comp = -1;
}

static void attention(gen *G, int layer, int mb, const char *what, double mult)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    double t = l->tp, flops = mult * 4 * G->tok * (double)G->o->seq * m->hidden / t;
    double kvd = (double)m->kv_heads * (m->hidden / m->heads);
    double heads = (double)l->mbs * m->heads / t, hd = (double)m->hidden / m->heads;
    double full = attn_time(G, heads, G->tok / l->mbs, G->o->seq, hd, mult > 1);
    (void)kvd;
    if (l->cp == 1) {
        timed(G, what, layer, mb, flops, full);
        return;
    }
    if (G->st->cp_torch) {
        attention_cp_torch(G, layer, mb, what, mult, heads, hd, flops);
        return;
    }
    /* ring attention runs one kernel per K/V block of seq/cp keys: its rate
     * is the kernel's at that length (Megatron-Core/TE context parallelism) */
    full = l->cp * attn_time(G, heads, G->tok / l->mbs, (double)G->o->seq / l->cp, hd, mult > 1);
    /* ring attention: cp steps; step j > 0 computes with the K/V block received in step j */
    double kv_bytes = mult * 2 * G->tok * kvd / t * G->dt; /* K and V (and dK, dV backward) */
    if (G->dry) {
        /* each of the cp-1 later blocks: its compute or its transfer, whichever is longer */
        const an_net *net = G->o->net;
        int intra = (double)l->tp * l->cp <= net->gpus_per_node;
        double chunk = full / l->cp;
        double xfer = (intra ? net->intra_lat : net->inter_lat) + kv_bytes / (intra ? net->intra_bw : net->inter_bw);
        G->flops += flops;
        G->acc += chunk + (l->cp - 1) * (chunk > xfer ? chunk : xfer);
        return;
    }
    int next = built(G, G->ti, (G->ci + 1) % l->cp, G->di, G->pi), prev = built(G, G->ti, (G->ci + l->cp - 1) % l->cp, G->di, G->pi);
    int have = last0(G);
    timed(G, what, layer, mb, flops / l->cp, full / l->cp);
    for (int j = 1; j < l->cp; j++) {
        int tag = (1 << 24) + G->cp_seq++;
        og_op *s = og_send(G->g, G->r, WL_S_CP_SEND, next, (int64_t)llround(kv_bytes), tag);
        if (have >= 0) og_add_dep(s, have);
        set_label(G, s, "cp.send.%s.l%d.mb%d", what, layer, mb);
        og_op *rv = og_recv(G->g, G->r, WL_S_CP_RECV, prev, (int64_t)llround(kv_bytes), tag);
        set_label(G, rv, "cp.recv.%s.l%d.mb%d", what, layer, mb);
        have = rv->id;
        og_op *c = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, full / l->cp);
        G->flops += flops / l->cp;
        G->busy += c->duration;
        og_add_dep(c, have);
        set_label(G, c, "comp.%s.l%d.mb%d", what, layer, mb);
        G->last_comp = -1;
    }
}

static void wgrad_gemm(gen *G, int layer, int mb, int chunk, double M, double N, double K)
{
    if (G->dry) {
        double save = G->acc;
        gemm_x(G, "wgrad", layer, mb, M, N, K, GF_WGRAD);
        G->acc_w += G->acc - save;
        G->acc = save;
        return;
    }
    if (G->zb) {
        wlist *w = &G->wl[mb * G->v + chunk];
        ts_grow(&w->w, sizeof *w->w, &w->cap, (size_t)w->n + 1);
        w->w[w->n++] = (wgrad){M, N, K, layer};
        return;
    }
    G->layer_wop[layer] = gemm_x(G, "wgrad", layer, mb, M, N, K, GF_WGRAD);
}

static int is_moe(const wl_model *m, int layer) { return m->experts && layer >= m->dense_layers; }

static void mlp_dims(const gen *G, int layer, double *f, double *tokm)
{
    const wl_model *m = G->m;
    if (is_moe(m, layer)) *f = m->moe_ffn, *tokm = G->tok * m->topk;
    else *f = m->ffn, *tokm = G->tok;
}

/* ---- ZeRO-3, ZeRO++ (Wang et al. 2023) and hierarchical partitioning ---- */

/* Block quantisation of qwZ and qgZ: one fp32 scale per WL_QBLOCK elements (our
 * choice of block size; ZeRO++ quantises independent blocks). */
#define WL_QBLOCK 256.0
#define WL_QW_BYTES (1 + 4 / WL_QBLOCK)     /* int8 weights, per element */
#define WL_QG_BYTES (0.5 + 4 / WL_QBLOCK)   /* int4 gradients, per element */

/* Bytes of an all-gather / reduce-scatter / all-to-all cut into whole 2-byte
 * elements per rank (the collective refuses other sizes). */
static double whole(double bytes, int n) { return n > 1 ? ceil(bytes / (2.0 * n)) * 2.0 * n : bytes; }

/* A ZeRO collective on the n data-parallel ranks st apart in the data-parallel
 * group's order that include this rank (st 1: a block of consecutive ranks). */
static int zcoll(gen *G, int s, og_coll c, int grp, int n, int st, double bytes, int dep, const char *what, int li,
                 int mb)
{
    int j = G->di * G->l->cp + G->ci;
    dsel ds = {j - (j / st % n) * st, st};
    G->zeff = G->st->z3_eff;
    int id = coll(G, s, "dp", c, grp, n, whole(bytes, n), G->o->one_replica, 0, &ds, dep, what, li, mb);
    G->zeff = 0;
    return id;
}

/* (De)quantisation kernels on a communication stream, memory-bound: costed by
 * the bytes they read and write. */
static int zquant(gen *G, int s, double bytes, int dep, const char *what, int li, int mb)
{
    double d = cm_mem_time(G->o->gpu, bytes, 1);
    if (G->dry) {
        G->acc_side += d;
        return -1;
    }
    G->busy += d;
    og_op *op = og_compute_fixed(G->g, G->r, s, d);
    if (dep >= 0) og_add_dep(op, dep);
    set_label(G, op, "comp.%s.l%d.mb%d", what, li, mb);
    return op->id;
}

/* FSDP1's passes over the rank's 1/D shard (stack fsdp1_shard; torch/distributed/
 * fsdp of PyTorch 2.0-2.1). Before every all-gather, forward and backward, of
 * every micro-batch, FlatParamHandle.pre_unshard casts the fp32 local shard to
 * the 16-bit parameter dtype (_use_low_precision_shard: read 4, write pb) on the
 * pre-unshard stream, which the unshard stream waits for. After every
 * reduce-scatter the default hook divides the shard by the post-divide factor
 * (world size over the pre-divide factor, DefaultState: none when 1; read and
 * write gb), and _post_backward_hook adds it into _saved_grad_shard when one is
 * held (every micro-batch of a step after the first: Composer's
 * ddp_sync_context gives FSDP no no_sync; read two, write one). Memory-bound
 * kernels on the collectives' streams, costed by their bytes. */
static double fsdp1_cast_bytes(const gen *G)
{
    return G->st->fsdp1_shard && G->pb < 4 ? 4 + G->pb : 0;
}

/* DefaultState._get_gradient_predivide_factor: the largest power of two f with
 * f * f < n dividing n, doubled while it can. */
static double fsdp1_predivide(int n)
{
    int f = 1;
    while (n % f == 0 && n / f > f) f *= 2;
    return f;
}

static int zquant(gen *G, int s, double bytes, int dep, const char *what, int li, int mb);

/* After the reduce-scatter rs (op id, -1 in the estimate) of P gradients of
 * micro-batch mb, on stream s: returns the last op (rs when none). */
static int fsdp1_shard_rs(gen *G, int s, double P, int rs, int mb)
{
    int D = G->l->dp * G->l->cp;
    if (!G->st->fsdp1_shard || D <= 1 || P <= 0) return rs;
    double b = (D / fsdp1_predivide(D) > 1 ? 2 * G->gb : 0) + (mb > 0 ? 3 * G->gb : 0);
    if (b <= 0) return rs;
    int id = zquant(G, s, P / D * b, rs, "fsdp1_grad_shard", -1, mb);
    return G->dry ? rs : id;
}

#define KEEP(x) do { int k_ = (x); if (k_ >= 0) last = k_; } while (0)

/* The gathers of one layer's parameters before its forward or backward, on
 * their own stream (prefetched). DeepSpeed ZeRO-3: from the 1/D shards of the
 * whole data-parallel group, every time. hpZ (ZeRO++): the first forward of
 * the iteration gathers from the primary 1/D shards (the optimizer just
 * updated them) and keeps a secondary 1/hpz shard; every later gather runs
 * inside the hpz group. 3-level (hpz and hgz): that first gather proceeds
 * level by level, across the hgz groups (ranks with the same index in each:
 * output 1/hgz), across the hpz blocks of a group (output 1/hpz: the secondary
 * shard), inside the block (the layer). qwZ: int8 blocks on the wire, quantised
 * before and dequantised after. Returns the last op (-1: none). */
/* torchao's float8 (stack fp8_torchao under --dtype fp8; torchao torchao/float8/
 * float8_linear.py and torchao/testing/float8/roofline_utils.py, tensorwise):
 * each forward of a Float8Linear computes its weight's amax (read 2 bytes per
 * element) and casts it for the forward GEMM (read 2, write 1), and the
 * backward casts it again for the input-gradient GEMM (read 2, write 1): a
 * kernel each, for each of the block's linear layers. With FSDP2's float8
 * all-gather (layout f8ag=on: torchtitan's enable_fsdp_float8_all_gather and
 * precompute_float8_dynamic_scale_for_fsdp), the shard is cast before each
 * gather instead (fsdp_pre_all_gather: read 2, write 1 per shard element; the
 * amax of every weight is one multi-tensor pass after the optimizer step, not
 * counted), the gather moves 1 byte per weight and the gathered fp8 weight
 * serves both GEMMs. */
static int f8_torchao(const gen *G) { return G->o->dtype == CM_FP8 && G->st->fp8_torchao; }

static int f8_gather(const gen *G)
{
    const wl_layout *l = G->l;
    return f8_torchao(G) && l->fp8_gather && l->zero == 3 && l->dp * l->cp > 1;
}

static void f8_weight_cast(gen *G, int li, int mb, double W, int bwd)
{
    if (!f8_torchao(G) || f8_gather(G)) return;
    int n = G->m->gated ? 7 : 6; /* wq, wk, wv, wo, w1, w2 (, w3) */
    timed(G, bwd ? "f8_wcast_bwd" : "f8_wcast", li, mb, 0, cm_mem_time(G->o->gpu, W * (bwd ? 3 : 5), bwd ? n : 2 * n));
}

static int gather_ops(gen *G, int li, int mb, const char *what, int first, double P)
{
    const wl_layout *l = G->l;
    double b = l->qwz ? WL_QW_BYTES : f8_gather(G) ? 1 : G->pb;
    int D = l->dp * l->cp, hpz = l->hpz > 1 ? l->hpz : 0, hgz = l->hgz > 1 ? l->hgz : 0, last = -1;
    int from = hpz && !first ? hpz : D; /* ranks whose shards make the layer */
    if (D <= 1) return -1;
    char w[48];
    int dep = G->z3dep; /* the prefetch window: the first op waits, the rest follow on the stream */
    double cast = fsdp1_cast_bytes(G);
    if (cast > 0) {
        KEEP(zquant(G, WL_S_ZERO3, P / D * cast, dep, "fsdp1_mp_shard", li, mb));
        dep = -1;
    }
    if (l->qwz) {
        KEEP(zquant(G, WL_S_ZERO3, P / from * (G->pb + b), dep, "qwz_quant", li, mb));
        dep = -1;
    }
    if (hpz && first && hgz) {
        snprintf(w, sizeof w, "%s_inter", what);
        KEEP(zcoll(G, WL_S_ZERO3, OG_ALLGATHER, G->gxg, D / hgz, hgz, P / hgz * b, dep, w, li, mb));
        snprintf(w, sizeof w, "%s_mid", what);
        KEEP(zcoll(G, WL_S_ZERO3, OG_ALLGATHER, G->wmidg, hgz / hpz, hpz, P / hpz * b, -1, w, li, mb));
        KEEP(zcoll(G, WL_S_ZERO3, OG_ALLGATHER, G->wblkg, hpz, 1, P * b, -1, what, li, mb));
    } else {
        KEEP(zcoll(G, WL_S_ZERO3, OG_ALLGATHER, from == D ? G->dpg : G->wblkg, from, 1, P * b, dep, what, li, mb));
    }
    if (l->qwz) KEEP(zquant(G, WL_S_ZERO3, P * (b + G->pb), -1, "qwz_dequant", li, mb));
    return last;
}

/* FSDP2 (stack fsdp2_copies; torch/distributed/_composable/fsdp/
 * _fsdp_collectives.py of PyTorch 2.4): after waiting for an all-gather the
 * compute stream splits the gathered buffer into the parameters
 * (foreach_all_gather_copy_out, torch.split_with_sizes_copy: read and write
 * every gathered 16-bit element); before a reduce-scatter the gradients are
 * concatenated and cast to the reduce dtype into its input
 * (foreach_reduce_scatter_copy_in, torch.cat) on the reduce-scatter stream,
 * which the compute stream waits for before it frees the gradients
 * (current_stream.wait_event(copy_in_event)). */
static void fsdp2_copy_out(gen *G, int li, int mb, double P)
{
    if (f8_gather(G))
        timed(G, "f8_shard_cast", li, mb, 0,
              cm_mem_time(G->o->gpu, 3 * P / (G->l->dp * G->l->cp), G->m->gated ? 7 : 6));
    if (G->st->fsdp2_copies) elem(G, "fsdp2_copy_out", li, mb, 2 * P * (f8_gather(G) ? 1 : G->pb), EK_PLAIN);
}

static int fsdp2_copy_in(gen *G, double P, int dep)
{
    if (!G->st->fsdp2_copies) return dep;
    int id = elem(G, "fsdp2_copy_in", -1, -1, P * (G->dt + G->gb), EK_PLAIN);
    return G->dry ? dep : id;
}

/* FSDP2 on one rank (dp = cp = 1) still runs its collectives, as device
 * copies: PyTorch's foreach_reduce copies the reduce-scatter input into its
 * output when the group has one rank (reduce_output.copy_(reduce_scatter_input),
 * the gradients in the reduce dtype), and the gathered parameters are copied
 * on their way in. Measured on an H100 (configs/measurements/gpu/
 * h100_train_profile.csv, "Memcpy DtoD" of steps l3_fsdp and l2_full: 11.02
 * and 10.90 ms for 1.923 and 1.881 B parameters, 5.73 and 5.80 ms per billion)
 * they scale with the parameters gathered for the forward and reduced, not
 * with the backward's re-gathers (l2_full has twice the resharded parameters
 * of l3_fsdp and no more copy time): one copy of pb bytes per parameter at the
 * forward's gather, one of gb at the reduce-scatter, read and written at
 * FSDP2_DTOD of hbm_achieved (0.705 and 0.697 on the two steps, docs/compute.md,
 * "FSDP2 on one rank"). */
#define FSDP2_DTOD 0.70

/* Parameters outside the transformer layers on the rank (pp = 1: the
 * embedding, the final norm and an untied output layer: FSDP's root unit); 0
 * under pipeline parallelism, where neither FSDP1's root unit nor FSDP2 on one
 * rank is modelled apart. */
static double root_params(const gen *G)
{
    if (G->l->pp != 1) return 0;
    wl_rank_params p;
    wl_stage_params(G->m, G->l, 0, &p);
    double in_layers = 0, dense, expert;
    for (int li = 0; li < G->m->layers; li++) {
        wl_layer_params(G->m, G->l, li, &dense, &expert);
        in_layers += dense + expert;
    }
    return p.total > in_layers ? p.total - in_layers : 0;
}

static int fsdp2_one_rank(const gen *G)
{
    return G->st->fsdp2_copies && G->l->zero == 3 && G->l->dp * G->l->cp <= 1;
}

static int fsdp2_one_rank_copy(gen *G, const char *what, int li, int mb, double bytes, int dep)
{
    if (!fsdp2_one_rank(G) || bytes <= 0) return dep;
    int id = timed(G, what, li, mb, 0, cm_mem_time(G->o->gpu, 2 * bytes / FSDP2_DTOD, 1));
    return G->dry || id < 0 ? dep : id;
}

/* FSDP1 (stack fsdp1_grads; torch/distributed/fsdp/_runtime_utils.py of
 * PyTorch 2.0-2.1, _post_backward_hook, and the default reduce-scatter hook):
 * per FSDP unit and micro-batch, before the reduce-scatter of its P gradients,
 * autograd has assembled the unit's flat gradient from its parameters'
 * gradients (the views' backward, a cat: read and write pb bytes), FSDP casts
 * it to the reduce dtype (read pb, write gb; none when they match) and divides
 * it in place by the pre-divide factor (read and write gb; any D > 1 has one).
 * They run on the post-backward stream beside the next layer's compute; as
 * memory-bound kernels over the whole grid they take the SMs and the HBM
 * bandwidth they would alone, so they are costed on the compute stream, and
 * the reduce-scatter waits for them. The 1/D shard's post-divide and
 * accumulation are not counted (1/D of these bytes). */
static double fsdp1_grad_bytes(const gen *G)
{
    if (!G->st->fsdp1_grads) return 0;
    double b = 2 * G->pb;
    if (G->gb != G->pb) b += G->pb + G->gb;
    if (G->l->dp * G->l->cp > 1) b += 2 * G->gb;
    return b;
}

/* The graph's ops (the estimate adds the same seconds to each layer's backward). */
static int fsdp1_grad_path(gen *G, double P, int dep)
{
    double b = fsdp1_grad_bytes(G);
    if (b <= 0 || P <= 0 || G->dry) return dep;
    return elem(G, "fsdp1_grads", -1, -1, P * b, EK_PLAIN);
}

/* FSDP's one process group (stack fsdp_one_pg; PyTorch docs/source/notes/
 * fsdp.rst, "FSDP Prefetch Nuances"): the gathers and the reduce-scatters of
 * ZeRO-3 run one at a time on the group's NCCL stream, in the order they are
 * issued, and FSDP issues a layer's backward gather before the reduce-scatter
 * of the layer after it (explicit backward prefetch). The graph builds the
 * reduce-scatter when a layer's gradients are ready, before the next layer's
 * gather: it is held (rs_pend) and issued after that gather, before a forward
 * gather, or before the step. */
static int one_pg(const gen *G)
{
    const wl_layout *l = G->l;
    return G->st->fsdp_one_pg && l->zero == 3 && l->hgz <= 1 && !l->qgz && l->dp * l->cp > 1;
}

static int z3_stream_rs(const gen *G) { return one_pg(G) ? WL_S_ZERO3 : WL_S_DP; }

static og_coll grad_coll(const gen *G);

static void rs_flush(gen *G)
{
    if (!G->rs_pend) return;
    G->rs_pend = 0;
    int id = zcoll(G, WL_S_ZERO3, grad_coll(G), G->dpg, G->l->dp * G->l->cp, 1, G->rs_pend_bytes, G->rs_pend_dep,
                   "grads", G->rs_pend_no, -1);
    if (id >= 0) id = fsdp1_shard_rs(G, WL_S_ZERO3, G->rs_pend_bytes / G->gb, id, G->rs_pend_mb);
    if (id >= 0) {
        ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
        G->deps[G->ndeps++] = id;
    }
}

/* The layer's parameters are gathered before the layer runs, forward and
 * backward; the compute stream waits for them. */
static void zero3_gather(gen *G, int li, int mb, const char *what, double P)
{
    int first = mb == 0 && !strncmp(what, "param_fwd", 9);
    if (P <= 0) {
        wl_rank_params p;
        wl_stage_params(G->m, G->l, 0, &p);
        P = p.layer;
    }
    if (G->dry && G->l->hpz > 1 && first) {
        /* the estimate costs one micro-batch: the first forward's gather from the
         * primary shards, amortised over the iteration's micro-batches */
        double save = G->acc_side, t0, t1;
        G->acc_side = 0;
        gather_ops(G, li, mb, what, 1, P);
        t1 = G->acc_side;
        G->acc_side = 0;
        gather_ops(G, li, mb, what, 0, P);
        t0 = G->acc_side;
        G->acc_side = save + t0 + (t1 - t0) / G->mcount;
        return;
    }
    int bwd = !strncmp(what, "param_bwd", 9);
    if (fsdp2_one_rank(G)) {
        /* the root module's parameters (embedding, final norm, output) are
         * gathered with the first layer's and kept until the backward ends */
        if (!bwd) fsdp2_one_rank_copy(G, "fsdp2_gather_1rank", li, mb, (P + (li == 0 ? root_params(G) : 0)) * G->pb, -1);
        return;
    }
    if (!bwd && !G->dry) rs_flush(G);
    int ag = gather_ops(G, li, mb, what, first, P);
    if (bwd && !G->dry) rs_flush(G);
    if (G->dry) {
        if (G->l->dp * G->l->cp > 1) fsdp2_copy_out(G, li, mb, P);
        return;
    }
    if (ag < 0) return;
    last0(G);
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, ag);
    /* DeepSpeed 2021: the fetch ends with torch.cuda.synchronize(), which also
     * waits for the reduce-scatter in flight */
    if (G->st->z3_sync && G->z3rs_last >= 0) og_add_dep(w, G->z3rs_last);
    set_label(G, w, "comp.wait_param.l%d.mb%d", li, mb);
    /* prefetch (DeepSpeed's prefetch bucket, FSDP2's one-layer prefetch): the
     * gather of the layer k ahead is issued when this layer's compute starts */
    int k = G->l->prefetch > 0 ? G->l->prefetch : 1;
    G->z3wait[G->nz3 % k] = w->id;
    G->nz3++;
    G->z3dep = G->nz3 >= k ? G->z3wait[G->nz3 % k] : -1;
    fsdp2_copy_out(G, li, mb, P);
}

/* Gradients of P parameters after a backward (ZeRO-3 reduces every micro-batch).
 * qgZ (ZeRO++): int4 blocks, an all-to-all inside the node (gk ranks), dequantise,
 * reduce and requantise the 1/gk slice, an all-to-all across nodes, dequantise and
 * reduce the 1/D shard. hgz: reduce-scatter inside the hgz group every micro-batch
 * (accumulated in a 1/hgz shard), across the groups with the last micro-batch.
 * Bucket b; returns the last op (dep when nothing was issued). */
static int zero3_grads(gen *G, double P, int dep, int final, int b)
{
    const wl_layout *l = G->l;
    int D = l->dp * l->cp, k = G->gk, last = dep;
    if (l->qgz) {
        double q = WL_QG_BYTES;
        KEEP(zquant(G, WL_S_DP, P * (G->dt + q), dep, "qgz_quant", b, -1));
        if (k > 1) {
            KEEP(zcoll(G, WL_S_DP, OG_ALLTOALL, G->gblkg, k, 1, P * q, -1, "grads_intra", b, -1));
            KEEP(zquant(G, WL_S_DP, P * q + P / k * (D > k ? 8 + q : 4), -1, "qgz_reduce", b, -1));
        }
        if (D > k) {
            KEEP(zcoll(G, WL_S_DP, OG_ALLTOALL, G->gxg, D / k, k, P / k * q, -1, "grads_inter", b, -1));
            KEEP(zquant(G, WL_S_DP, P / k * q + P / D * 4, -1, "qgz_reduce", b, -1));
        }
        return last;
    }
    KEEP(zcoll(G, WL_S_DP, OG_REDUCESCATTER, G->gblkg, k, 1, P * G->gb, dep, "grads_intra", b, -1));
    if (final) KEEP(zcoll(G, WL_S_DP, OG_REDUCESCATTER, G->gxg, D / k, k, P / k * G->gb, -1, "grads_inter", b, -1));
    return last;
}

#undef KEEP

/* Data-parallel ranks of the inner gradient level: hgz, or for qgZ those of
 * one node (the largest divisor of dp x cp not above gpus per node / (tp cp)). */
static int grad_block(const wl_layout *l, const an_net *net)
{
    int D = l->dp * l->cp, k;
    if (l->hgz > 1) return l->hgz;
    if (!l->qgz) return 1;
    k = net->gpus_per_node / (l->tp * l->cp);
    if (k > D) k = D;
    while (k > 1 && D % k) k--;
    return k < 1 ? 1 : k;
}

/* Groups of cnt members st apart in the order of a data-parallel group (mem, n):
 * st 1 gives blocks of consecutive members, st = a block size the groups across
 * blocks. Each member's group id goes to gid[its built rank]. */
static void sub_groups(og_graph *g, const int *mem, int n, int st, int cnt, int *gid)
{
    if (cnt <= 1 || st < 1) return;
    int *sub = ts_malloc((size_t)cnt * sizeof *sub);
    for (int j = 0; j < n; j++) {
        if ((j / st) % cnt) continue; /* not the first of its group */
        for (int i = 0; i < cnt; i++) sub[i] = mem[j + i * st];
        int id = og_add_group(g, cnt, sub);
        for (int i = 0; i < cnt; i++) gid[sub[i]] = id;
    }
    free(sub);
}

/* ---- DeepSpeed 2021's stage 3 (stack z3_sync; docs/workload.md) ---- */

/* Layer li runs DeepSpeed 2021's per-weight ZeRO-3: a stack that says so, a
 * dense layer (MoE layers keep the per-layer model), no deferred W pass. */
static int ds_layer(const gen *G, int li)
{
    return G->l->zero == 3 && G->st->z3_sync && !G->zb && li < G->m->layers && !is_moe(G->m, li) &&
           G->l->dp * G->l->cp > 1;
}

/* The fetch of one weight of P parameters before its submodule (forward: the
 * submodule's pre-forward hook; backward without full recompute: its
 * pre-backward hook): one all-gather over the data-parallel group, issued when
 * the previous submodule's compute started (the one-weight prefetch), awaited
 * with every stream (torch.cuda.synchronize) before this submodule runs.
 * Biases and norms (under DeepSpeed's persistence threshold of 1e5 elements)
 * stay gathered and cost nothing here. */
static void ds_fetch(gen *G, int li, int mb, const char *what, double P)
{
    if (ds_layer(G, li)) zero3_gather(G, li, mb, what, P);
}

/* The gradient of one weight (P parameters) after its weight-gradient GEMM:
 * a reduce-scatter over the data-parallel group on the reduction stream
 * (overlap_comm); before issuing it the host waits for the previous one
 * (stage3.py reduce_ipg_grads: reduction_stream.synchronize()), so the compute
 * after this point waits for it too. */
static void ds_reduce(gen *G, int li, int mb, double P)
{
    if (!ds_layer(G, li)) return;
    const wl_layout *l = G->l;
    int D = l->dp * l->cp;
    if (G->dry) {
        zcoll(G, WL_S_DP, OG_REDUCESCATTER, G->dpg, D, 1, P * G->gb, -1, "grads", li, mb);
        return;
    }
    int dep = last0(G), prev = G->z3rs_last;
    int id = zcoll(G, WL_S_DP, OG_REDUCESCATTER, G->dpg, D, 1, P * G->gb, dep, "grads", li, mb);
    if (id < 0) return;
    ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
    G->deps[G->ndeps++] = id;
    if (prev >= 0) {
        og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
        og_add_dep(w, prev);
        set_label(G, w, "comp.wait_grads.l%d.mb%d", li, mb);
    }
    G->z3rs_last = id;
}

/* DeepSpeed 2021's gathers and reduce-scatters are in flight during nearly all
 * of a layer's compute (they take longer than it in every Table 2 row): NCCL
 * runs one thread block per channel, so the layer's kernels get the GPU's SMs
 * less max_channels of them (docs/workload.md). */
static double ds_slow(const gen *G)
{
    int sms = G->o->gpu->sms, ch = coll_params_get()->max_channels;
    return sms > 0 && ch > 0 && ch < sms ? (double)sms / (sms - ch) : 1;
}

static void layer_fwd(gen *G, int li, int mb, int recomp)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    double h = m->hidden, t = l->tp, kvd = (double)m->kv_heads * (m->hidden / m->heads), tok = G->tok;
    double seqpart = l->sp ? t : 1, g = m->gated ? 2 : 1, f, tokm;
    double act = tok * h * G->dt;   /* the full hidden state of the micro-batch on the TP group */
    mlp_dims(G, li, &f, &tokm);
    /* DeepSpeed 2021 fetches each weight in the forward, and again in the
     * recomputed forward of full recompute (the backward then has them) */
    int ds = ds_layer(G, li) && (!recomp || l->recompute == WL_RC_FULL);
    G->slow = ds_layer(G, li) ? ds_slow(G) : 0;
    if (l->zero == 3 && !recomp && !ds_layer(G, li)) zero3_gather(G, li, mb, "param_fwd", 0);
    if (!recomp) param_wait(G, li, mb);
    if (!recomp) autocast_cast(G, li, mb, layer_weights(m, li, f), 7, 0);
    f8_weight_cast(G, li, mb, layer_weights(m, li, f) / t, 0);
    norm_op(G, "ln1", li, mb, 2 * act / seqpart, tok * h / seqpart, 0);
    autocast_act(G, li, mb, tok * h, 3, 0);
    if (l->sp) tp_coll_ov(G, OG_ALLGATHER, act, "attn_in", li, mb, ov_gemm(G, tok, (h + 2 * kvd) / t, h, 0));
    if (ds) ds_fetch(G, li, mb, "param_fwd_qkv", h * (h + 2 * kvd) / t);
    gemm(G, "qkv", li, mb, tok, (h + 2 * kvd) / t, h);
    rope_op(G, li, mb, tok * h / t, tok * kvd / t, 0);
    repeat_kv_op(G, li, mb, tok * h / t, tok * kvd / t, 0);
    attention(G, li, mb, recomp ? "attn_recompute" : "attn", 1);
    if (ds) ds_fetch(G, li, mb, "param_fwd_proj", h * h / t);
    gemm_rs(G, "proj", li, mb, tok, h, h / t, WL_UB_RS_SMS_PROJ);
    tp_coll_ov(G, l->sp ? OG_REDUCESCATTER : OG_ALLREDUCE, act, "attn_out", li, mb,
               ov_gemm_rs(G, tok, h, h / t, WL_UB_RS_SMS_PROJ));
    norm_op(G, "ln2", li, mb, 4 * act / seqpart, tok * h / seqpart, 0);
    if (!is_moe(m, li)) autocast_act(G, li, mb, tok * h, (int)g, 0);
    if (is_moe(m, li)) {
        gemm(G, "router", li, mb, tok / t, m->experts, h);
        coll(G, WL_S_COMPUTE, "ep", OG_ALLTOALL, G->epg, l->ep, tokm * h * G->dt / t, 0, G->ep_intra, NULL, -1, "dispatch", li, mb);
        if (t > 1) tp_coll(G, OG_ALLGATHER, tokm * h * G->dt, "expert_in", li, mb);
    } else if (l->sp) {
        tp_coll_ov(G, OG_ALLGATHER, act, "mlp_in", li, mb, ov_gemm(G, tokm, f * g / t, h, 0));
    }
    if (ds) ds_fetch(G, li, mb, "param_fwd_fc1", h * f * g / t);
    gemm(G, "fc1", li, mb, tokm, f * g / t, h);
    elem(G, "act", li, mb, tokm * f * (g + 1) / t * G->dt, EK_ACT);
    if (ds) ds_fetch(G, li, mb, "param_fwd_fc2", f * h / t);
    gemm_rs(G, "fc2", li, mb, tokm, h, f / t, is_moe(m, li) ? 0 : WL_UB_RS_SMS_FC2);
    if (is_moe(m, li)) {
        if (t > 1) tp_coll(G, OG_REDUCESCATTER, tokm * h * G->dt, "expert_out", li, mb);
        coll(G, WL_S_COMPUTE, "ep", OG_ALLTOALL, G->epg, l->ep, tokm * h * G->dt / t, 0, G->ep_intra, NULL, -1, "combine", li, mb);
        if (m->shared_ffn) {
            double fs = m->shared_ffn;
            gemm(G, "shared_fc1", li, mb, tok, fs * g / t, h);
            gemm(G, "shared_fc2", li, mb, tok, h, fs / t);
        }
    } else {
        tp_coll_ov(G, l->sp ? OG_REDUCESCATTER : OG_ALLREDUCE, act, "mlp_out", li, mb,
                   ov_gemm_rs(G, tokm, h, f / t, WL_UB_RS_SMS_FC2));
    }
    elem(G, "residual", li, mb, 3 * act / seqpart, EK_RESID);
    G->slow = 0;
}

/* torchtitan's selective op activation checkpointing (recompute=op;
 * activation_checkpoint.selective_ac_option = "op", torchtitan/parallelisms/
 * parallelize_llama.py _apply_ac_to_transformer_block): within each block
 * the outputs of mm, SDPA and reduce-scatter are saved, but every second mm
 * (of wq, wk, wv, wo, w1, w3, w2 in the forward's order: wk, wo, w3), and all
 * other ops are recomputed before the block's backward, as far as the
 * backward needs them: RMSNorm before wk and w3, wk with the rotary embedding
 * and repeat_kv (SDPA's backward reads k), the residual add before the second
 * norm with wo (unless a saved reduce-scatter follows wo: sequence
 * parallelism), w3 and SwiGLU (w2's backward reads its input); with sequence
 * parallelism the all-gathers of the norms' outputs as well. Attention is not
 * recomputed. */
static void layer_recompute_op(gen *G, int li, int mb)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    double h = m->hidden, t = l->tp, kvd = (double)m->kv_heads * (m->hidden / m->heads), tok = G->tok;
    double seqpart = l->sp ? t : 1, g = m->gated ? 2 : 1, f, tokm;
    double act = tok * h * G->dt;
    mlp_dims(G, li, &f, &tokm);
    norm_op(G, "ln1_recompute", li, mb, 2 * act / seqpart, tok * h / seqpart, 0);
    if (l->sp) tp_coll(G, OG_ALLGATHER, act, "attn_in_recompute", li, mb);
    gemm(G, "wk_recompute", li, mb, tok, kvd / t, h);
    rope_op(G, li, mb, tok * h / t, tok * kvd / t, 0);
    repeat_kv_op(G, li, mb, tok * h / t, tok * kvd / t, 0);
    if (!l->sp) gemm(G, "proj_recompute", li, mb, tok, h, h / t);
    elem(G, "residual_recompute", li, mb, 3 * act / seqpart, EK_RESID);
    norm_op(G, "ln2_recompute", li, mb, 4 * act / seqpart, tok * h / seqpart, 0);
    if (l->sp) tp_coll(G, OG_ALLGATHER, act, "mlp_in_recompute", li, mb);
    if (g > 1) gemm(G, "w3_recompute", li, mb, tokm, f / t, h);
    elem(G, "act_recompute", li, mb, tokm * f * (g + 1) / t * G->dt, EK_ACT);
}

static void layer_bwd(gen *G, int li, int mb, int chunk)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    double h = m->hidden, t = l->tp, kvd = (double)m->kv_heads * (m->hidden / m->heads), tok = G->tok;
    double seqpart = l->sp ? t : 1, g = m->gated ? 2 : 1, f, tokm;
    double act = tok * h * G->dt;
    mlp_dims(G, li, &f, &tokm);
    int ds = ds_layer(G, li) && l->recompute != WL_RC_FULL; /* backward fetches (pre-backward hooks) */
    if (l->zero == 3 && !l->keep_params && !ds_layer(G, li)) zero3_gather(G, li, mb, "param_bwd", 0);
    if (l->recompute == WL_RC_FULL) layer_fwd(G, li, mb, 1);
    if (l->recompute == WL_RC_OP) layer_recompute_op(G, li, mb);
    G->in_bwd = 1;
    G->slow = ds_layer(G, li) ? ds_slow(G) : 0;
    elem(G, "residual_bwd", li, mb, 3 * act / seqpart, EK_RESID);
    /* MLP */
    if (is_moe(m, li)) {
        if (m->shared_ffn) {
            double fs = m->shared_ffn;
            gemm(G, "shared_fc2_dgrad", li, mb, tok, fs / t, h);
            wgrad_gemm(G, li, mb, chunk, fs / t, h, tok);
            gemm(G, "shared_fc1_dgrad", li, mb, tok, h, fs * g / t);
            wgrad_gemm(G, li, mb, chunk, h, fs * g / t, tok);
        }
        coll(G, WL_S_COMPUTE, "ep", OG_ALLTOALL, G->epg, l->ep, tokm * h * G->dt / t, 0, G->ep_intra, NULL, -1, "combine_bwd", li, mb);
        if (t > 1) tp_coll(G, OG_ALLGATHER, tokm * h * G->dt, "expert_out_bwd", li, mb);
    } else if (l->sp) {
        tp_coll_ov(G, OG_ALLGATHER, act, "mlp_out_bwd", li, mb, ov_gemm(G, tokm, f / t, h, 0));
    }
    if (ds) ds_fetch(G, li, mb, "param_bwd_fc2", f * h / t);
    gemm(G, "fc2_dgrad", li, mb, tokm, f / t, h);
    wgrad_gemm(G, li, mb, chunk, f / t, h, tokm);
    ds_reduce(G, li, mb, f * h / t);
    elem(G, "act_bwd", li, mb, tokm * f * (g + 2) / t * G->dt, EK_ACT);
    if (!is_moe(m, li)) autocast_act(G, li, mb, tok * h, (int)g, 1);
    grad_sum_op(G, li, mb, tok * h / seqpart, is_moe(m, li) ? 1 : (int)g);
    if (!is_moe(m, li) && l->sp)
        tp_coll_bwd(G, OG_ALLGATHER, act, "mlp_in_regather", li, mb, tokm, h, f * g / t, 0, -1);
    if (ds) ds_fetch(G, li, mb, "param_bwd_fc1", h * f * g / t);
    int dg = gemm(G, "fc1_dgrad", li, mb, tokm, h, f * g / t);
    tp_wait_regather(G, li, mb);
    wgrad_gemm(G, li, mb, chunk, h, f * g / t, tokm);
    ds_reduce(G, li, mb, h * f * g / t);
    if (is_moe(m, li)) {
        if (t > 1) tp_coll(G, OG_REDUCESCATTER, tokm * h * G->dt, "expert_in_bwd", li, mb);
        coll(G, WL_S_COMPUTE, "ep", OG_ALLTOALL, G->epg, l->ep, tokm * h * G->dt / t, 0, G->ep_intra, NULL, -1, "dispatch_bwd", li, mb);
        gemm(G, "router_dgrad", li, mb, tok / t, h, m->experts);
    } else {
        tp_coll_bwd(G, l->sp ? OG_REDUCESCATTER : OG_ALLREDUCE, act, "mlp_in_bwd", li, mb, h, f * g / t, tokm, 1, dg);
    }
    norm_op(G, "ln2_bwd", li, mb, 4 * act / seqpart, tok * h / seqpart, is_moe(m, li) ? 1 : (int)g);
    /* attention */
    if (l->sp) tp_coll_ov(G, OG_ALLGATHER, act, "attn_out_bwd", li, mb, ov_gemm(G, tok, h / t, h, 0));
    if (ds) ds_fetch(G, li, mb, "param_bwd_proj", h * h / t);
    gemm(G, "proj_dgrad", li, mb, tok, h / t, h);
    wgrad_gemm(G, li, mb, chunk, h / t, h, tok);
    ds_reduce(G, li, mb, h * h / t);
    if (l->recompute == WL_RC_SELECTIVE) attention(G, li, mb, "attn_recompute", 1);
    attention(G, li, mb, "attn_bwd", 2); /* twice the forward FLOPs (Megatron's count) */
    repeat_kv_op(G, li, mb, tok * h / t, tok * kvd / t, 1);
    rope_op(G, li, mb, tok * h / t, tok * kvd / t, 1);
    if (l->sp) tp_coll_bwd(G, OG_ALLGATHER, act, "attn_in_regather", li, mb, tok, h, (h + 2 * kvd) / t, 0, -1);
    if (ds) ds_fetch(G, li, mb, "param_bwd_qkv", h * (h + 2 * kvd) / t);
    dg = gemm(G, "qkv_dgrad", li, mb, tok, h, (h + 2 * kvd) / t);
    tp_wait_regather(G, li, mb);
    wgrad_gemm(G, li, mb, chunk, h, (h + 2 * kvd) / t, tok);
    ds_reduce(G, li, mb, h * (h + 2 * kvd) / t);
    tp_coll_bwd(G, l->sp ? OG_REDUCESCATTER : OG_ALLREDUCE, act, "attn_in_bwd", li, mb, h, (h + 2 * kvd) / t, tok, 1, dg);
    autocast_act(G, li, mb, tok * h, 3, 1);
    grad_sum_op(G, li, mb, tok * h / seqpart, 3);
    norm_op(G, "ln1_bwd", li, mb, 2 * act / seqpart, tok * h / seqpart, 3); /* wq, wk, wv */
    autocast_cast(G, li, mb, layer_weights(m, li, f), 7, 1);
    f8_weight_cast(G, li, mb, layer_weights(m, li, f) / t, 1);
    G->slow = 0;
    G->in_bwd = 0;
}

/* The cross-entropy over n logits, forward (bwd 0) or backward, as the stack
 * runs it (ce_fwd / ce_bwd bytes per logit; default 8 bytes, one kernel). */
static void loss_op(gen *G, int mb, double n, int bwd)
{
    const wl_stack *st = G->st;
    double b = bwd ? st->ce_bwd : st->ce_fwd;
    int k = bwd ? st->ce_bwd_k : st->ce_fwd_k;
    if (!(b > 0)) b = 8, k = 1;
    timed(G, bwd ? "loss_bwd" : "loss", -1, mb, 0, cm_mem_time(G->o->gpu, n * b, k));
}

/* ---- data-parallel gradient buckets (Megatron DDP: reverse layer order) ---- */

/* Megatron-Core's bucket: max(40M, 1M x dp x cp) parameters with overlapped
 * gradient reduction; without it (overlap_grad=off) one bucket holds all. */
static double bucket_size(const wl_layout *l)
{
    if (l->grad_serial) return HUGE_VAL;
    if (l->bucket > 0) return l->bucket;
    double b = 1e6 * l->dp * l->cp;
    return b > 4e7 ? b : 4e7;
}

/* Megatron-Core pads each bucket of the distributed optimizer to a multiple of
 * lcm(data-parallel size, 128) elements, so that it cuts into equal shards
 * (reduce-scatter, all-gather) at 256-byte aligned addresses. */
static double bucket_pad(const wl_layout *l, double elems)
{
    if (l->zero != 1 && l->zero != 2) return elems;
    long n = (long)l->dp * l->cp, a = n, b = 128;
    while (b) {
        long r = a % b;
        a = b, b = r;
    }
    double q = (double)(n / a * 128);
    return ceil(elems / q) * q;
}

/* DeepSpeed's pipeline engine runs the schedule (stack ds_pipe, pp > 1, 1F1B
 * without chunks: ds_steps). */
static int ds_engine(const gen *G)
{
    return G->st->ds_pipe && G->p > 1 && G->v == 1 && G->l->schedule == WL_1F1B;
}

/* DeepSpeed's BF16_Optimizer under its pipeline engine (stack ds_bf16_optim; bf16,
 * zero 0-1; deepspeed/runtime/pipe/engine.py of 2022, _exec_reduce_grads ->
 * _bf16_reduce_grads -> buffered_allreduce_fallback(grads=optimizer.
 * get_grads_for_reduction()), bf16_optimizer.py: the flat fp32 gradients): the
 * gradients are all-reduced in fp32 over DP, whole, though the optimizer then
 * updates only its shard and all-gathers the bf16 parameters (update_lp_params). */
static int ds_bf16(const gen *G)
{
    return G->st->ds_bf16_optim && ds_engine(G) && G->o->dtype == CM_BF16 && G->l->zero <= 1;
}

/* The pipeline engine's ReduceGrads is DeepSpeed's buffered_allreduce_fallback:
 * under BF16_Optimizer (ds_bf16), and in the 2021 engine (stack ds_ar_fallback,
 * zero 0-1: samyam/DeepSpeed @f095c7da deepspeed/runtime/pipe/engine.py
 * _exec_reduce_grads calls buffered_allreduce_fallback(elements_per_buffer=
 * MEMORY_OPT_ALLREDUCE_SIZE) directly, so ZeRO-1's reduce_gradients never runs:
 * every 16-bit gradient is all-reduced whole, then the ZeRO-1 step updates the
 * shard and all-gathers the parameters). */
static int ds_fallback(const gen *G)
{
    return ds_bf16(G) || (G->st->ds_ar_fallback && ds_engine(G) && G->l->zero <= 1);
}

/* The collective of the gradient reduction: all-reduce (zero 0, DeepSpeed's
 * fallback) or reduce-scatter (ZeRO 1-3). */
static og_coll grad_coll(const gen *G)
{
    return G->l->zero == 0 || ds_fallback(G) ? OG_ALLREDUCE : OG_REDUCESCATTER;
}

/* buffered_allreduce_fallback's passes around each all-reduce, per gradient
 * element (engine.py allreduce_bucket / allreduce_and_copy): the flatten into
 * the bucket (read, write), the 1/dp scaling in place (read, write) and the
 * copy back into the gradients (read, write): six times the element's bytes
 * (fp32 under BF16_Optimizer: 24; fp16 gradients in the 2021 engine: 12). */
#define WL_DS_AR_COPY_PASSES 6.0

/* PyTorch DDP (stack torch_ddp, overlap_grad=on, zero 0): the reducer copies
 * each gradient into its bucket, divided by the group size (at::mul_out, read
 * and write a 16-bit element), on the compute stream as autograd's hook fires,
 * and after the backward copies every bucket back into the gradients (read and
 * write again), each once its all-reduce is awaited (reducer.cpp,
 * copy_grad_to_bucket, finalize_backward -> finalize_bucket_dense). */
static int torch_ddp(const gen *G)
{
    const wl_layout *l = G->l;
    return G->st->torch_ddp && !l->grad_serial && l->zero == 0 && l->dp * l->cp > 1;
}

static double ddp_copy_time(const gen *G, double elems) { return cm_mem_time(G->o->gpu, elems * 2 * G->dt, 1); }

static void bucket_emit(gen *G, int dep)
{
    const wl_layout *l = G->l;
    if (G->bucket_acc <= 0) return;
    og_coll c = grad_coll(G);
    double elems = bucket_pad(l, G->bucket_acc);
    dsel all = {0, 1};
    int id;
    if (ds_fallback(G) && !G->dry) {
        /* the copies in series with the all-reduce, before it. The engine runs ReduceGrads
         * at the schedule's last step, after the SendGrad of the stage's last backward
         * (ds_steps defers that send past this point): on the compute stream they would
         * hold the send, and every upstream stage with it, so they go in the DP stream's
         * queue, where they delay the all-reduce alone, as on the GPU. */
        og_op *cp = og_compute_fixed(G->g, G->r, WL_S_DP,
                                     cm_mem_time(G->o->gpu, elems * WL_DS_AR_COPY_PASSES * G->gb, 3));
        if (dep >= 0) og_add_dep(cp, dep);
        G->busy += cp->duration;
        set_label(G, cp, "comp.dp_flatten");
        G->last_comp = -1;
        dep = cp->id;
    }
    if (torch_ddp(G) && !G->dry) {
        /* the gradients copied into the bucket before its all-reduce */
        og_op *cp = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, ddp_copy_time(G, elems));
        if (dep >= 0) og_add_dep(cp, dep);
        G->busy += cp->duration;
        set_label(G, cp, "comp.ddp_copy_in.b%d", G->bucket_no);
        G->last_comp = -1;
        dep = cp->id;
        G->ddp_elems += elems;
    }
    if (l->zero == 3) dep = fsdp2_copy_in(G, G->bucket_acc, dep);
    dep = fsdp2_one_rank_copy(G, "fsdp2_reduce_1rank", -1, -1, G->bucket_acc * G->gb, dep);
    if (l->zero == 3) dep = fsdp1_grad_path(G, G->bucket_acc, dep);
    if (l->zero == 3 && (l->hgz > 1 || l->qgz))
        id = zero3_grads(G, G->bucket_acc, dep, G->gfinal, G->bucket_no);
    else if (l->zero == 3 && one_pg(G) && !G->dry) {
        rs_flush(G);
        G->rs_pend = 1, G->rs_pend_dep = dep, G->rs_pend_no = G->bucket_no, G->rs_pend_mb = G->gmb;
        G->rs_pend_bytes = G->bucket_acc * G->gb;
        id = -1;
    } else if (l->zero == 3) {
        id = zcoll(G, z3_stream_rs(G), c, G->dpg, l->dp * l->cp, 1, G->bucket_acc * G->gb, dep, "grads", G->bucket_no, -1);
        id = fsdp1_shard_rs(G, z3_stream_rs(G), G->bucket_acc, id, G->gmb);
    }
    else
        id = coll(G, WL_S_DP, "dp", c, G->dpg, l->dp * l->cp, elems * G->gb, G->o->one_replica, 0, &all, dep,
                  "grads", G->bucket_no, -1);
    if (id >= 0) {
        ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
        G->deps[G->ndeps++] = id;
    }
    if (!G->dry) {
        ts_grow(&G->bpad, sizeof *G->bpad, &G->bpadcap, (size_t)G->bucket_no + 1);
        G->bpad[G->bucket_no] = elems;
    }
    G->bucket_no++;
    G->bucket_acc = 0;
}

/* The gradients of layer li are final (last micro-batch): add them to the
 * open bucket; expert gradients go to the expert-data-parallel group. */
static void grads_ready(gen *G, int li, int dep, int mb)
{
    const wl_layout *l = G->l;
    double dense, expert;
    if (ds_layer(G, li)) return; /* reduced weight by weight (ds_reduce) */
    if (li >= G->m->layers) {
        /* output layer; when tied and pp = 1 it is the embedding, counted in last_bucket */
        dense = G->m->tied && l->pp == 1 ? 0 : (double)wl_padded_vocab(G->m, l) * G->m->hidden / l->tp;
        expert = 0;
    } else {
        wl_layer_params(G->m, l, li, &dense, &expert);
    }
    if (expert > 0 && l->dp / l->ep > 1) {
        dsel eds = {G->di % l->ep * l->cp + G->ci, l->ep * l->cp};
        G->ov_skip = 1; /* the estimate amortises them apart (dp_exposed) */
        int id = coll(G, WL_S_DP, "dp", l->zero == 0 ? OG_ALLREDUCE : OG_REDUCESCATTER, G->edpg, l->dp / l->ep,
                      whole(expert * G->gb, l->dp / l->ep), G->o->one_replica, 0, &eds, dep, "expert_grads", li, mb);
        G->ov_skip = 0;
        ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
        G->deps[G->ndeps++] = id;
    }
    G->bucket_acc += dense;
    G->gfinal = mb == G->mcount - 1;
    G->gmb = mb;
    if (l->zero == 3 || G->bucket_acc >= bucket_size(l)) bucket_emit(G, dep);
}

/* FSDP1's root unit (stack fsdp1_shard, zero=3, one pipeline stage): what no
 * block's unit holds (the embeddings, the final norm and an untied head: the
 * module Composer wraps first, llm-foundry wrapping each block) is the root's
 * flat parameter. The root is not resharded after the forward
 * (_post_forward_reshard frees no root parameter), so it is gathered once per
 * micro-batch, at the forward's start with nothing to hide behind, and its
 * gradient is reduce-scattered when the embedding's backward ends, every
 * micro-batch; the post-backward callback makes the compute stream wait for
 * it. */
static int fsdp1_root(const gen *G)
{
    const wl_layout *l = G->l;
    return G->st->fsdp1_shard && l->zero == 3 && l->pp == 1 && l->dp * l->cp > 1 && !G->zb;
}

/* Parameters of the stage's embeddings and final norm on this rank (last_bucket's). */
static double ends_params(const gen *G)
{
    const wl_model *m = G->m;
    double P = 0;
    if (G->pi == G->p - 1) P += (m->bias ? 2 : 1) * (double)m->hidden;
    if (G->pi == 0)
        P += (double)wl_padded_vocab(m, G->l) * m->hidden / G->l->tp + (m->learned_pos ? (double)m->max_seq * m->hidden : 0);
    return P;
}

/* The last backward of micro-batch mb on this rank (the iteration's, or every
 * micro-batch's for FSDP1's root): the first stage adds the embeddings, the
 * last its final norm, and the open bucket goes out. */
static void last_bucket(gen *G, int mb)
{
    G->bucket_acc += ends_params(G);
    G->gfinal = mb == G->mcount - 1;
    G->gmb = mb;
    bucket_emit(G, last0(G));
}

/* First layer of virtual stage vs (vs = p v: one past the last layer): lc
 * layers each, or the layout's uneven stages (pp_first / pp_last, no chunks). */
static int vs_lo(const gen *G, int vs)
{
    if (vs >= G->p * G->v) return G->m->layers;
    if (G->v > 1 || (!G->l->pp_first && !G->l->pp_last)) return vs * G->lc;
    int lo;
    wl_stage_layers(G->m, G->l, vs, &lo);
    return lo;
}

/* ---- the distributed optimizer's parameter all-gathers (overlap_param) ---- */

/* Megatron-Core's buckets of this rank as the last backward fills them (the
 * model chunks from last to first, layers in reverse, the output layer first,
 * the embedding and final norm last), numbered in forward order: bk_of[li]
 * and the padded size of each. */
static void plan_buckets(gen *G)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    int p = G->p, nvs = p * G->v, nb = 0;
    double acc = 0, bsz = bucket_size(l), dense, expert;
    for (int i = 0; i <= m->layers + 1; i++) G->bk_of[i] = -1;
    G->nplan = 0;
    for (int c = G->v - 1; c >= 0; c--) {
        int vs = c * p + G->pi;
        for (int li = (vs == nvs - 1 ? m->layers : vs_lo(G, vs + 1) - 1); li >= vs_lo(G, vs); li--) {
            if (li == m->layers) dense = m->tied && p == 1 ? 0 : (double)wl_padded_vocab(m, l) * m->hidden / l->tp;
            else wl_layer_params(m, l, li, &dense, &expert);
            acc += dense;
            G->bk_of[li] = nb;
            if (acc >= bsz) {
                ts_grow(&G->plan, sizeof *G->plan, &G->plancap, (size_t)nb + 1);
                G->plan[nb++] = bucket_pad(l, acc);
                acc = 0;
            }
        }
    }
    if (G->pi == p - 1) acc += (m->bias ? 2 : 1) * (double)m->hidden;
    if (G->pi == 0) {
        acc += (double)wl_padded_vocab(m, l) * m->hidden / l->tp + (m->learned_pos ? (double)m->max_seq * m->hidden : 0);
        G->bk_of[m->layers + 1] = nb;
    }
    if (acc > 0) {
        ts_grow(&G->plan, sizeof *G->plan, &G->plancap, (size_t)nb + 1);
        G->plan[nb++] = bucket_pad(l, acc);
    }
    /* forward order */
    for (int i = 0; i <= m->layers + 1; i++)
        if (G->bk_of[i] >= 0) G->bk_of[i] = (G->bk_of[i] < nb ? nb - 1 - G->bk_of[i] : 0);
    for (int i = 0; i < nb / 2; i++) {
        double t = G->plan[i];
        G->plan[i] = G->plan[nb - 1 - i];
        G->plan[nb - 1 - i] = t;
    }
    G->nplan = nb;
    G->ag_next = G->ag_waited = 0;
}

static void param_ag(gen *G, int b, int dep)
{
    const wl_layout *l = G->l;
    dsel all = {0, 1};
    while (G->ag_next <= b && G->ag_next < G->nplan) {
        int k = G->ag_next++;
        G->ag_op[k] = coll(G, WL_S_DP, "dp", OG_ALLGATHER, G->dpg, l->dp * l->cp, G->plan[k] * G->pb,
                           G->o->one_replica, 0, &all, k == b ? dep : -1, "params", k, -1);
    }
}

/* The first forward of layer li (m->layers: the output layer, + 1: the
 * embedding) waits for its bucket's all-gather, and the next bucket's
 * all-gather is issued then (Megatron-Core dispatches it from the forward
 * pre-hook of the bucket before: one bucket of prefetch); the first one has
 * nothing to hide behind. In the steady state these are the gathers of the
 * previous step's update, overlapping this step's first forward. */
static void param_wait(gen *G, int li, int mb)
{
    const wl_layout *l = G->l;
    if (G->dry || !l->param_overlap || mb != 0 || l->dp * l->cp <= 1 || !G->bk_of) return;
    int b = G->bk_of[li];
    if (b < G->ag_waited) return;
    param_ag(G, b, -1);
    G->ag_waited = b + 1;
    if (G->ag_op[b] < 0) return;
    last0(G);
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, G->ag_op[b]);
    set_label(G, w, "comp.wait_param.b%d", b);
    if (b + 1 < G->nplan) param_ag(G, b + 1, w->id);
}

/* ---- pipeline actions ---- */

typedef struct act {
    char k;     /* 'F', 'B', 'W' */
    int mb, c;
} act;


static int tag_of(const gen *G, int dir, int chunk, int mb) { return (dir * G->v + chunk) * G->mcount + mb; }

/* Megatron-LM 2021's scatter/gather optimisation (p2p_2021 stacks; Narayanan
 * et al. 2021, section 4.1; megatron/p2p_communication.py, _communicate): each
 * TP rank sends and receives 1/t of the activation, the receiver all-gathers it
 * over the TP group (under SP the tensor is already split). */
static int pp_sg(const gen *G) { return G->st->p2p_2021 && G->l->tp > 1 && !G->l->sp && !G->l->pp_nosg; }

static double pp_bytes(const gen *G)
{
    const wl_layout *l = G->l;
    return G->tok * G->m->hidden * G->dt / (l->sp || pp_sg(G) ? l->tp : 1);
}

/* DeepSpeed's pipeline engine of 2021 (layout pp_grad_sg=off; deepspeed/runtime/
 * pipe/engine.py of spring-summer 2021: is_pipe_partitioned = is_model_parallel,
 * is_grad_partitioned = False): the activations cross as 1/tp partitions, but
 * _exec_send_grads sends each input's .grad whole from every TP rank and
 * _exec_recv_grads receives it into a whole buffer, so the gradient needs no
 * all-gather (its output restore, part_output.full(), moves to the receive: the
 * same gather as ds_restore's). */
static int ds_grad_whole(const gen *G) { return ds_engine(G) && G->l->pp_grad_whole && pp_sg(G); }

/* The bytes of a pipeline message: bwd, the gradient sent towards stage 0. */
static double pp_msg_bytes(const gen *G, int bwd)
{
    return bwd && ds_grad_whole(G) ? G->tok * G->m->hidden * G->dt : pp_bytes(G);
}

/* After a pipeline receive (or where one would be): the received chunks are
 * all-gathered (scatter/gather), and under p2p_2021 the compute stream waits
 * for the previous send: _communicate posts the sends and receives of one call
 * with batch_isend_irecv, waits for all of them and synchronises the GPU. */
static void pp_after_recv(gen *G, int recvd, int mb)
{
    if (recvd && pp_sg(G)) tp_coll(G, OG_ALLGATHER, G->tok * G->m->hidden * G->dt, "pp_gather", -1, mb);
    if (!G->st->p2p_2021 || G->pp_pending < 0) return;
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, G->pp_pending);
    set_label(G, w, "comp.wait_pp_send.mb%d", mb);
    G->last_comp = -1;
    G->pp_pending = -1;
}

/* A pipeline send of action kind k (p2p_2021). 1F1B's steady state sends and
 * receives in one call (send_forward_recv_backward after a forward followed by
 * a backward, send_backward_recv_forward the other way): the send is awaited
 * after the next receive. Warm-up and cool-down sends (the next action of the
 * same kind) and the iteration's last send are calls of their own: awaited
 * at once. The interleaved schedule's other calls pair a send with a receive. */
static int il2021(const gen *G) { return G->st->p2p_2021 && G->v > 1; }

static void pp_sent(gen *G, int id, char k, int mb)
{
    if (!G->st->p2p_2021) return;
    if (G->pp_rcvd) { /* interleaved: awaited by the next communicate call (pp_call_2021) */
        assert(G->npp_sends < 2);
        G->pp_sends[G->npp_sends++] = id;
        return;
    }
    if (G->pp_pending >= 0) pp_after_recv(G, 0, mb); /* two sends in a row: the first is awaited first */
    G->pp_pending = id;
    if (!G->pp_next || (G->v == 1 && G->pp_next == k)) pp_after_recv(G, 0, mb); /* the last send: at once too */
}

/* Megatron-Core's overlap_p2p_comm (layout p2p_overlap, interleaved schedule;
 * megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving,
 * and p2p_communication.py, send_forward_recv_forward / send_backward_recv_backward with
 * overlap_p2p_comm=True): right after an action's compute its output is sent and the
 * input of the next action of the same kind is received, both non-blocking (isend/irecv);
 * the handles are awaited just before that next action. The receive therefore runs
 * beside the action of the other kind in between, on a stream of its own here (one
 * per kind: the forward receives arrive in order, the backward ones too). */
static int p2p_ov(const gen *G) { return G->l->p2p_overlap && G->v > 1 && !G->st->p2p_2021 && !G->ds; }

static void pp_recv(gen *G, int bwd, int peer, int c, int mb)
{
    if (!p2p_ov(G)) {
        og_op *rv = og_recv(G->g, G->r, WL_S_COMPUTE, peer, (int64_t)llround(pp_bytes(G)), tag_of(G, bwd, c, mb));
        set_label(G, rv, bwd ? "pp.recv.bwd.c%d.mb%d" : "pp.recv.fwd.c%d.mb%d", c, mb);
        G->last_comp = -1;
        return;
    }
    og_op *rv = og_recv(G->g, G->r, bwd ? WL_S_PP_RBWD : WL_S_PP_RFWD, peer, (int64_t)llround(pp_bytes(G)),
                        tag_of(G, bwd, c, mb));
    if (G->pp_post[bwd] >= 0) og_add_dep(rv, G->pp_post[bwd]);
    set_label(G, rv, bwd ? "pp.recv.bwd.c%d.mb%d" : "pp.recv.fwd.c%d.mb%d", c, mb);
    int id = rv->id; /* the next op may move the rank's ops */
    last0(G);
    og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
    og_add_dep(w, id);
    set_label(G, w, bwd ? "comp.wait_recv.bwd.c%d.mb%d" : "comp.wait_recv.fwd.c%d.mb%d", c, mb);
}

static void do_F(gen *G, int mb, int c)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    int p = G->p, vs = c * p + G->pi, nvs = p * G->v;
    if (vs > 0 && (G->ds || (G->pp_rcvd && G->pp_rcvd[G->act_no]))) {
        G->last_comp = -1; /* received (and gathered) by the previous communicate call, or ds_steps */
    } else if (vs > 0) {
        pp_recv(G, 0, built(G, G->ti, G->ci, G->di, (G->pi + p - 1) % p), c, mb);
        pp_after_recv(G, 1, mb);
    } else {
        pp_after_recv(G, 0, mb);
        param_wait(G, m->layers + 1, mb);
        if (fsdp1_root(G)) zero3_gather(G, m->layers + 1, mb, "param_fwd_root", root_params(G));
        elem(G, "embedding", -1, mb, 2 * G->tok * m->hidden * G->dt / (l->sp ? l->tp : 1), EK_PLAIN);
    }
    for (int li = vs_lo(G, vs), hi = vs_lo(G, vs + 1); li < hi; li++) layer_fwd(G, li, mb, 0);
    if (vs == nvs - 1) {
        double V = wl_padded_vocab(m, l);
        param_wait(G, m->layers, mb);
        autocast_cast(G, -1, mb, V * m->hidden, 1, 0);
        gemm_x(G, "logits", -1, mb, G->tok, V / l->tp, m->hidden, GF_HIGH);
        loss_op(G, mb, G->tok * V / l->tp, 0);
    } else if (G->ds) {
        G->ds_dir = 'F', G->ds_mb = mb, G->ds_dep = last0(G);
    } else {
        int dep = last0(G), peer = built(G, G->ti, G->ci, G->di, (G->pi + 1) % p);
        og_op *s = og_send(G->g, G->r, WL_S_PP_FWD, peer, (int64_t)llround(pp_bytes(G)), tag_of(G, 0, (vs + 1) / p, mb));
        og_add_dep(s, dep);
        set_label(G, s, "pp.send.fwd.c%d.mb%d", c, mb);
        pp_sent(G, s->id, 'F', mb);
    }
    if (p2p_ov(G)) G->pp_post[0] = last0(G);
}

static void ds_restore(gen *G, int mb);

static void do_B(gen *G, int mb, int c)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    int p = G->p, vs = c * p + G->pi, nvs = p * G->v, final = mb == G->mcount - 1 && !G->zb;
    if (vs < nvs - 1 && (G->ds || (G->pp_rcvd && G->pp_rcvd[G->act_no]))) {
        G->last_comp = -1; /* received (and gathered) by the previous communicate call, or ds_steps */
        if (G->ds && pp_sg(G)) ds_restore(G, mb);
    } else if (vs < nvs - 1) {
        pp_recv(G, 1, built(G, G->ti, G->ci, G->di, (G->pi + 1) % p), c, mb);
        pp_after_recv(G, 1, mb);
    } else {
        pp_after_recv(G, 0, mb);
        double V = wl_padded_vocab(m, l);
        loss_op(G, mb, G->tok * V / l->tp, 1);
        gemm_x(G, "logits_dgrad", -1, mb, G->tok, m->hidden, V / l->tp, GF_HIGH);
        wgrad_gemm(G, m->layers, mb, c, m->hidden, V / l->tp, G->tok);
        autocast_cast(G, -1, mb, V * m->hidden, 1, 1);
        if (final || fsdp1_root(G)) grads_ready(G, m->layers, last0(G), mb);
    }
    for (int li = vs_lo(G, vs + 1) - 1, lo = vs_lo(G, vs); li >= lo; li--) {
        layer_bwd(G, li, mb, c);
        if (final || (l->zero == 3 && !G->zb)) grads_ready(G, li, last0(G), mb);
    }
    if (vs == 0) elem(G, "embedding_bwd", -1, mb, 3 * G->tok * m->hidden * G->dt / (l->sp ? l->tp : 1), EK_PLAIN);
    if (vs > 0 && G->ds) {
        G->ds_dir = 'B', G->ds_mb = mb, G->ds_dep = last0(G);
    } else if (vs > 0) {
        int dep = last0(G), peer = built(G, G->ti, G->ci, G->di, (G->pi + p - 1) % p);
        og_op *s = og_send(G->g, G->r, WL_S_PP_BWD, peer, (int64_t)llround(pp_bytes(G)), tag_of(G, 1, (vs - 1) / p, mb));
        og_add_dep(s, dep);
        set_label(G, s, "pp.send.bwd.c%d.mb%d", c, mb);
        pp_sent(G, s->id, 'B', mb);
    }
    if (p2p_ov(G)) G->pp_post[1] = last0(G);
    if ((final || fsdp1_root(G)) && c == 0) last_bucket(G, mb); /* chunk 0 runs the last backward of every stage */
}

/* ZB-H1's W pass: the weight gradients B deferred. */
static void do_W(gen *G, int mb, int c)
{
    wlist *w = &G->wl[mb * G->v + c];
    int final = mb == G->mcount - 1;
    for (int i = 0; i < w->n; i++) {
        gemm_x(G, "wgrad", w->w[i].layer, mb, w->w[i].M, w->w[i].N, w->w[i].K, GF_WGRAD);
        int layer_done = i + 1 == w->n || w->w[i + 1].layer != w->w[i].layer;
        if (layer_done && (final || G->l->zero == 3)) grads_ready(G, w->w[i].layer, last0(G), mb);
    }
    if (final && c == 0) last_bucket(G, mb);
    free(w->w);
    memset(w, 0, sizeof *w);
}

/* Forward passes of the interleaved schedule's warm-up on this stage:
 * (p-i-1)*2 + (v-1)*p, all of them when m == p (Megatron-LM). */
static int il_warm(const gen *G)
{
    int p = G->p, total = G->mcount * G->v, warm = (p - G->pi - 1) * 2 + (G->v - 1) * p;
    return G->mcount == p || warm > total ? total : warm;
}

/* DeepSpeed's pipeline engine (stack ds_pipe): deepspeed/runtime/pipe/schedule.py
 * TrainSchedule runs 2 (m + p - 1) steps; at step t stage s runs a forward
 * when t + s is even (micro-batch t/2 - s/2), else a backward (t/2 - p + 1 +
 * s/2), nothing when that micro-batch does not exist. A forward step first
 * receives its activation (RecvActivation) then sends the gradient of the
 * previous step (SendGrad); a backward step sends the previous step's
 * activation (SendActivation) then receives its gradient (RecvGrad). p2p.py
 * sends and receives through torch.distributed.broadcast in a group of the two
 * ranks, queued on the compute stream: each transfer holds the stream until
 * the neighbour reaches it, so neighbours advance step by step together. */
static int too_big(gen *G);

static void ds_send(gen *G)
{
    if (!G->ds_dir) return;
    int fwd = G->ds_dir == 'F', peer = built(G, G->ti, G->ci, G->di, G->pi + (fwd ? 1 : -1));
    og_op *s = og_send(G->g, G->r, WL_S_COMPUTE, peer, (int64_t)llround(pp_msg_bytes(G, !fwd)), tag_of(G, !fwd, 0, G->ds_mb));
    og_add_dep(s, G->ds_dep);
    set_label(G, s, "pp.send.%s.c0.mb%d", fwd ? "fwd" : "bwd", G->ds_mb);
    G->last_comp = -1;
    G->ds_dir = 0;
}

static void ds_recv(gen *G, int fwd, int mb)
{
    int peer = built(G, G->ti, G->ci, G->di, G->pi + (fwd ? -1 : 1));
    og_op *rv = og_recv(G->g, G->r, WL_S_COMPUTE, peer, (int64_t)llround(pp_msg_bytes(G, !fwd)), tag_of(G, !fwd, 0, mb));
    set_label(G, rv, "pp.recv.%s.c0.mb%d", fwd ? "fwd" : "bwd", mb);
    G->last_comp = -1;
    pp_after_recv(G, fwd || !ds_grad_whole(G), mb);
}

/* The engine's forward kept only this TP rank's part of the output it sent
 * (engine.py _exec_forward_pass: PartitionedTensor of outputs[0], whose data is
 * then replaced by an empty tensor); its backward all-gathers the output back
 * over the TP group before torch.autograd.backward (_exec_backward_pass:
 * part_output.full()), beside the gather of the received gradient. */
static void ds_restore(gen *G, int mb)
{
    tp_coll(G, OG_ALLGATHER, G->tok * G->m->hidden * G->dt, "pp_restore", -1, mb);
}

static int ds_steps(gen *G)
{
    int p = G->p, s = G->pi, m = G->mcount, steps = 2 * (m + p - 1);
    G->ds_dir = 0;
    for (int t = 0; t < steps; t++) {
        int fwd = (t + s) % 2 == 0, mb = fwd ? t / 2 - s / 2 : t / 2 - p + 1 + s / 2, ok = mb >= 0 && mb < m;
        G->ov_left = 0;
        if (fwd) {
            if (ok && s > 0) ds_recv(G, 1, mb);
            ds_send(G);
            if (ok) do_F(G, mb, 0);
        } else {
            ds_send(G);
            if (ok && s < p - 1) ds_recv(G, 0, mb);
            if (ok) do_B(G, mb, 0);
        }
        if (too_big(G)) return -1;
    }
    ds_send(G);
    return 0;
}

/* The order of a stage's passes under each schedule. */
static int schedule(const gen *G, act *a)
{
    int p = G->p, i = G->pi, m = G->mcount, v = G->v, n = 0;
    switch (G->l->schedule) {
    case WL_GPIPE:
        for (int k = 0; k < m; k++) a[n++] = (act){'F', k, 0};
        for (int k = 0; k < m; k++) a[n++] = (act){'B', k, 0};
        return n;
    case WL_INTERLEAVED: {
        /* Megatron-LM: virtual micro-batch k runs chunk (k mod pv)/p forward and
         * v-1 minus that backward */
        int total = m * v, warm = il_warm(G);
        int f = 0, b = 0;
#define FV(k) (act){'F', ((k) / (p * v)) * p + (k) % p, ((k) % (p * v)) / p}
#define BV(k) (act){'B', ((k) / (p * v)) * p + (k) % p, v - 1 - ((k) % (p * v)) / p}
        for (; f < warm; f++) a[n++] = FV(f);
        while (f < total) a[n++] = FV(f), f++, a[n++] = BV(b), b++;
        while (b < total) a[n++] = BV(b), b++;
#undef FV
#undef BV
        return n;
    }
    default: {
        /* 1F1B; ZB-H1 splits B into B (input gradients) and W (weight
         * gradients); stage i runs W(k - i) after B(k), the rest at the end:
         * the W passes fill the cool-down and the bubble becomes
         * (p-1)(tF + tB - tW) instead of (p-1)(tF + tB + tW) (Qi et al. 2023) */
        int warm = p - i - 1 < m ? p - i - 1 : m, zb = G->l->schedule == WL_ZBH1, wn = 0;
        for (int k = 0; k < warm; k++) a[n++] = (act){'F', k, 0};
        for (int k = 0; k < m; k++) {
            if (warm + k < m) a[n++] = (act){'F', warm + k, 0};
            a[n++] = (act){'B', k, 0};
            if (zb && k >= i) a[n++] = (act){'W', wn++, 0};
        }
        while (zb && wn < m) a[n++] = (act){'W', wn++, 0};
        return n;
    }
    }
}

/* Megatron-LM 2021's interleaved schedule communicates in blocking calls
 * (schedules.py, forward_backward_pipelining_with_interleaving, over
 * p2p_communication._communicate: batch_isend_irecv of every send and receive
 * of the call, wait for all, torch.cuda.synchronize, then the scatter/gather
 * all-gather): a call after each warm-up forward (its output sent, the next
 * forward's input received), one after each steady-state forward-backward pair
 * (both outputs sent, both next inputs received: send_forward_backward_recv_
 * forward_backward), one after each cool-down backward. The inputs of the
 * actions up to the next call are received here, not at their start; the
 * compute stream then waits for the call's sends. */
static int il_steady_f(const gen *G, const act *a, int n, int i)
{
    return i < n - 1 && a[i].k == 'F' && a[i + 1].k == 'B' && i >= il_warm(G);
}

static void pp_call_2021(gen *G, const act *a, int n, int i)
{
    if (il_steady_f(G, a, n, i)) return; /* the pair's call follows its backward */
    int p = G->p, nvs = p * G->v, got[2], ngot = 0;
    int last = i + 1 < n && il_steady_f(G, a, n, i + 1) ? i + 2 : i + 1;
    for (int j = i + 1; j <= last && j < n; j++) {
        int vs = a[j].c * p + G->pi, fwd = a[j].k == 'F';
        if (fwd ? vs == 0 : vs == nvs - 1) continue;
        int peer = built(G, G->ti, G->ci, G->di, (G->pi + (fwd ? p - 1 : 1)) % p);
        og_op *rv = og_recv(G->g, G->r, WL_S_COMPUTE, peer, (int64_t)llround(pp_bytes(G)),
                            tag_of(G, !fwd, a[j].c, a[j].mb));
        set_label(G, rv, "pp.recv.%s.c%d.mb%d", fwd ? "fwd" : "bwd", a[j].c, a[j].mb);
        G->last_comp = -1;
        G->pp_rcvd[j] = 1;
        got[ngot++] = a[j].mb;
    }
    if (G->npp_sends) {
        og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
        for (int k = 0; k < G->npp_sends; k++) og_add_dep(w, G->pp_sends[k]);
        set_label(G, w, "comp.wait_pp_send.mb%d", a[i].mb);
        G->last_comp = -1;
        G->npp_sends = 0;
    }
    for (int k = 0; k < ngot; k++)
        if (pp_sg(G)) tp_coll(G, OG_ALLGATHER, G->tok * G->m->hidden * G->dt, "pp_gather", -1, got[k]);
}

/* ---- one rank ---- */

/* More ops than this is a graph of over 4 GB (about 80 bytes per op, graph and
 * engine together: docs/performance.md): refuse it and point to the estimate
 * (the closed form has no size limit). GPT-3 175B at full detail on 1,024
 * GPUs is 44 M ops. */
#define WL_MAX_OPS 50000000L

static int too_big(gen *G)
{
    long n = G->ops_before + G->g->ranks[G->r].nops;
    return n > WL_MAX_OPS;
}

static int build_rank(gen *G)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    G->last_comp = -1;
    G->bucket_acc = 0;
    G->bucket_no = 0;
    G->ov_left = 0;
    G->ddp_elems = 0;
    G->ndeps = 0;
    G->cp_seq = 0;
    G->nz3 = 0;
    G->z3dep = -1;
    G->z3rs_last = -1;
    G->rs_pend = 0;
    G->pp_pending = -1;
    G->pp_post[0] = G->pp_post[1] = -1;
    G->tp_wait = -1;
    int ndp = l->dp * l->cp;
    if (l->param_overlap && ndp > 1) {
        plan_buckets(G);
        G->ag_op = ts_realloc(G->ag_op, (size_t)(G->nplan + 1) * sizeof *G->ag_op);
        for (int b = 0; b < G->nplan; b++) G->ag_op[b] = -1;
    }
    G->ds = ds_engine(G);
    if (G->ds && ds_steps(G) < 0) return -1;
    act *a = ts_malloc(3 * (size_t)G->mcount * G->v * sizeof *a);
    int n = G->ds ? 0 : schedule(G, a);
    G->npp_sends = 0;
    free(G->pp_rcvd);
    G->pp_rcvd = il2021(G) && G->p > 1 && l->schedule == WL_INTERLEAVED ? ts_calloc((size_t)n, 1) : NULL;
    for (int i = 0; i < n; i++) {
        G->pp_next = i + 1 < n ? a[i + 1].k : 0;
        G->act_no = i;
        /* across pipeline stages an action may start with a wait for a
         * neighbour, and a collective still in flight then runs beside no
         * kernel: the SMs it takes slow the action that issued it only */
        if (G->p > 1) G->ov_left = 0;
        if (a[i].k == 'F') do_F(G, a[i].mb, a[i].c);
        else if (a[i].k == 'B') do_B(G, a[i].mb, a[i].c);
        else do_W(G, a[i].mb, a[i].c);
        if (G->pp_rcvd) pp_call_2021(G, a, n, i);
        if (too_big(G)) {
            free(a);
            return -1;
        }
    }
    free(a);
    rs_flush(G);
    /* tied embeddings: first and last stage sum the embedding gradients */
    if (G->embg >= 0) {
        int id = coll(G, WL_S_DP, "dp", OG_ALLREDUCE, G->embg, 2,
                      (double)wl_padded_vocab(m, l) * m->hidden / l->tp * G->gb, 0, 0, NULL, last0(G), "embedding",
                      -1, -1);
        ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
        G->deps[G->ndeps++] = id;
    }
    /* optimizer step: Adam reads grad, master, m, v (16 B) and writes master,
     * m, v and the 16-bit weights (14 B) per parameter it owns */
    wl_rank_params p;
    wl_stage_params(m, l, G->pi, &p);
    double owned = l->zero >= 1 ? p.dense / (l->dp * l->cp) + p.expert / (l->dp / l->ep) : p.total;
    last0(G);
    G->ov_left = 0; /* the step waits for every data-parallel collective */
    if (G->ddp_elems > 0) {
        /* PyTorch DDP's finalize_backward: the buckets copied back into the gradients, after their all-reduces */
        og_op *cb = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, ddp_copy_time(G, G->ddp_elems));
        for (int i = 0; i < G->ndeps; i++) og_add_dep(cb, G->deps[i]);
        G->busy += cb->duration;
        set_label(G, cb, "comp.ddp_copy_back");
        G->last_comp = -1;
        ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
        G->deps[G->ndeps++] = cb->id;
    }
    double topt = optim_stack_time(G->o->gpu, G->st, m, wl_stage_layers(m, l, G->pi, NULL), owned, optim_shards(l));
    og_op *opt = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, topt);
    G->busy += opt->duration;
    set_label(G, opt, "comp.optimizer");
    for (int i = 0; i < G->ndeps; i++) og_add_dep(opt, G->deps[i]);
    int optid = opt->id;
    /* distributed optimizer: gather the updated parameters, bucket by bucket
     * (the buckets of the reduce-scatters, padded alike), after the step;
     * overlap_param: in the next forward instead (param_wait) */
    if ((l->zero == 1 || l->zero == 2) && ndp > 1 && !l->param_overlap) {
        dsel all = {0, 1};
        for (int b = 0; b < G->bucket_no; b++)
            coll(G, WL_S_DP, "dp", OG_ALLGATHER, G->dpg, ndp, G->bpad[b] * G->pb, G->o->one_replica, 0, &all,
                 b == 0 ? optid : -1, "params", b, -1);
    }
    return 0;
}

/* ---- AxoNN 4D: a 3D tensor-parallel matmul on a gx x gy x gz grid, plus dp ---- */

typedef struct axg {
    int xg, yg, zg, dg;     /* group ids of the current rank */
    int zr;                 /* overlap: the z group again, for the reduce-scatters (a communicator of
                             * their own: they run on another stream than the gathers) */
} axg;

enum { AX_X, AX_Y, AX_Z, AX_D };

typedef struct axrec {      /* one GEMM of the dry run (wl_estimate), seconds */
    double pre;             /* compute on stream 0 since the previous GEMM */
    double ag, g, ar;       /* weight all-gather, the GEMM (dgrad backward), its all-reduce */
    double wg, rs;          /* backward: weight-gradient GEMM and its reduce-scatter */
    int bwd;
} axrec;

typedef struct axcost {
    int dim;
    og_coll c;
    double bytes, t;
} axcost;

typedef struct axstate {
    int prev_ready;         /* op of stream 0 before the previous GEMM: the next gather waits for it */
    int last_rs;            /* the last weight-gradient reduce-scatter issued (overlap) */
    int ncost;
    axcost cost[64];        /* collective times by grid dimension, kind and size (memos off) */
    unsigned epoch;         /* ax_cost_memo's context of this estimate (0: not looked up yet) */
    uint64_t grid_hash;     /* and the hash of its grid (set with epoch) */
    int nrec;
    size_t reccap;
    axrec *rec;             /* dry run */
} axstate;

/* A memo of grp_time, a pure function of its arguments (searches cost
 * the same groups for many layouts): direct-mapped, every field the cost reads
 * compared (the selection policy by identity and its serial, which an
 * algorithm forced on it changes). */
typedef struct axmemo {
    an_net net;
    int n, stride, rho;
    og_coll c;
    int64_t bytes;
    double t;
    unsigned gen;           /* coll_params_generation() when computed */
    unsigned long pserial;  /* coll_policy_serial(net.policy) when computed */
    int used;
    unsigned long fserial;  /* net_serial */
} axmemo;
static axmemo ax_memo[8192];

/* The serials of the network's fabric and links inside a node (0: none),
 * for the memos below: what they point to is not compared. */
static unsigned long net_serial(const an_net *net)
{
    unsigned long f = net->fabric ? net->fabric->serial : 0, l = net->gpu_links ? net->gpu_links->serial : 0;
    return f | l << 32;
}

/* n members, member k on node (rho + k stride) / gpus_per_node. */
static double grp_time(const an_net *net, int n, int stride, int rho, og_coll c, int64_t bytes)
{
    uint64_t h = 1469598103934665603ull;
    const int64_t key[5] = {n, stride, rho, c, bytes};
    for (int i = 0; i < 5; i++) h = (h ^ (uint64_t)key[i]) * 1099511628211ull;
    h ^= h >> 31, h *= 0x94d049bb133111ebull, h ^= h >> 29; /* FNV's low bits see only the keys' low bits */
    axmemo *e = &ax_memo[h % (sizeof ax_memo / sizeof ax_memo[0])];
    unsigned gen = coll_params_generation();
    unsigned long fs = net_serial(net), ps = coll_policy_serial(net->policy);
    if (memo_on && e->used && e->gen == gen && e->fserial == fs && e->n == n && e->stride == stride && e->rho == rho && e->c == c && e->bytes == bytes &&
        e->net.gpus_per_node == net->gpus_per_node && e->net.intra_bw == net->intra_bw &&
        e->net.intra_lat == net->intra_lat && e->net.inter_bw == net->inter_bw && e->net.inter_lat == net->inter_lat &&
        e->net.nvls == net->nvls && e->net.nic_gpus == net->nic_gpus && e->net.policy == net->policy &&
        e->pserial == ps)
        return e->t;
    int gpn = net->gpus_per_node > 0 ? net->gpus_per_node : 1;
    int *node = ts_malloc(2 * (size_t)n * sizeof *node), *gpu = node + n;
    for (int k = 0; k < n; k++) {
        node[k] = (int)(((long)rho + (long)k * stride) / gpn);
        gpu[k] = (int)(((long)rho + (long)k * stride) % gpn);
    }
    double t = an_sched_time_gpus(net, n, node, gpu, c, bytes);
    free(node);
    *e = (axmemo){*net, n, stride, rho, c, bytes, t, gen, ps, 1, fs};
    return t;
}

static int gcd_int(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b, b = r;
    }
    return a;
}

/* Time of a collective over grid dimension dim (x, y, z or the dp group), on
 * the placement of its groups (rank x + gx (y + gy (z + gz d)) on node
 * rank / gpus_per_node), with the engine's algorithm selection (an_sched_time);
 * the slowest of the groups of that dimension, which differ only by the
 * offset of their first rank inside a node. */
static double ax_cost_groups(const an_net *net, const int size[4], int dim, og_coll c, double bytes);

/* A memo of ax_cost_groups across estimates, a pure function of the grid,
 * the dimension, the collective, the size and what grp_time reads (the
 * network's figures, the policy and its serial, the cost parameters'
 * generation): layouts of a search that share a grid (they differ in mbs,
 * ZeRO, recomputation) ask for the same collectives. The figures besides
 * the grid, dimension, collective and size are one context per estimate:
 * they are compared once per estimate (axc_epoch), and an entry keeps the
 * number of the context it was computed in. */
typedef struct axcmemo {
    int size[4], dim;
    og_coll c;
    double bytes, t;
    unsigned epoch;         /* 0: unused */
} axcmemo;
static axcmemo axc_memo[4096];

static struct {
    an_net net;
    unsigned gen, epoch;
    unsigned long pserial, fserial;
} axc_ctx;

/* The number of the context of net and the cost parameters now: the last
 * one's where every figure grp_time reads is the same, else a new one. */
static unsigned axc_epoch(const an_net *net)
{
    unsigned gen = coll_params_generation();
    unsigned long ps = coll_policy_serial(net->policy), fs = net_serial(net);
    const an_net *e = &axc_ctx.net;
    if (axc_ctx.epoch && axc_ctx.gen == gen && axc_ctx.pserial == ps && axc_ctx.fserial == fs && e->gpus_per_node == net->gpus_per_node &&
        e->intra_bw == net->intra_bw && e->intra_lat == net->intra_lat && e->inter_bw == net->inter_bw &&
        e->inter_lat == net->inter_lat && e->nvls == net->nvls && e->nic_gpus == net->nic_gpus &&
        e->policy == net->policy)
        return axc_ctx.epoch;
    if (++axc_ctx.epoch == 0) { /* wrapped: no entry may match */
        memset(axc_memo, 0, sizeof axc_memo);
        axc_ctx.epoch = 1;
    }
    axc_ctx.net = *net, axc_ctx.gen = gen, axc_ctx.pserial = ps, axc_ctx.fserial = fs;
    return axc_ctx.epoch;
}

static uint64_t axc_grid_hash(const int size[4])
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 4; i++) h = (h ^ (uint64_t)(unsigned)size[i]) * 1099511628211ull;
    return h;
}

/* gh: axc_grid_hash(size), the same for every collective of an estimate. */
static double ax_cost_memo(const an_net *net, const int size[4], uint64_t gh, int dim, og_coll c, double bytes,
                           unsigned epoch)
{
    uint64_t w;
    memcpy(&w, &bytes, sizeof w);
    uint64_t h = (gh ^ (uint64_t)(dim | c << 2)) * 1099511628211ull;
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 31, h *= 0x9E3779B97F4A7C15ull, h ^= h >> 29;
    axcmemo *e = &axc_memo[h % (sizeof axc_memo / sizeof axc_memo[0])];
    if (e->epoch == epoch && e->dim == dim && e->c == c && e->size[0] == size[0] && e->size[1] == size[1] &&
        e->size[2] == size[2] && e->size[3] == size[3] && memcmp(&e->bytes, &bytes, sizeof bytes) == 0)
        return e->t;
    double t = ax_cost_groups(net, size, dim, c, bytes);
    *e = (axcmemo){{size[0], size[1], size[2], size[3]}, dim, c, bytes, t, epoch};
    return t;
}

/* With the memos on, the memo across estimates answers (it holds every
 * collective of the estimate, and more); off, each is costed once per
 * estimate. */
static double ax_cost(gen *G, int dim, og_coll c, double bytes)
{
    const wl_layout *l = G->l;
    axstate *S = G->ax;
    const int size[4] = {l->gx, l->gy, l->gz, l->dp};
    int n = size[dim];
    if (n <= 1 || bytes <= 0) return 0;
    if (memo_on) {
        if (!S->epoch) S->epoch = axc_epoch(G->o->net), S->grid_hash = axc_grid_hash(size);
        return ax_cost_memo(G->o->net, size, S->grid_hash, dim, c, bytes, S->epoch);
    }
    for (int i = 0; i < S->ncost; i++)
        if (S->cost[i].dim == dim && S->cost[i].c == c && S->cost[i].bytes == bytes) return S->cost[i].t;
    double t = ax_cost_groups(G->o->net, size, dim, c, bytes);
    if (S->ncost < (int)(sizeof S->cost / sizeof S->cost[0])) S->cost[S->ncost++] = (axcost){dim, c, bytes, t};
    return t;
}

/* ax_cost's figure: the slowest of the groups of dimension dim. */
static double ax_cost_groups(const an_net *net, const int size[4], int dim, og_coll c, double bytes)
{
    int n = size[dim];
    int grid = size[0] * size[1] * size[2], stride[4] = {1, size[0], size[0] * size[1], grid};
    int gpn = net->gpus_per_node > 0 ? net->gpus_per_node : 1;
    /* a group of dim starts at each rank whose coordinate dim is 0, r = the sum
     * over the other dimensions e < 3 of c_e stride[e]; its place in its node,
     * r mod gpn, repeats in c_e with period gpn / gcd(stride[e], gpn), so the
     * places are found on at most gpn values of each coordinate, not on every
     * rank of the grid */
    char sbuf[512], *at = 2 * gpn <= (int)sizeof sbuf ? sbuf : ts_malloc(2 * (size_t)gpn), *nx = at + gpn;
    memset(at, 0, gpn);
    at[0] = 1;
    for (int e = 0; e < 3; e++) {
        if (e == dim || size[e] <= 1) continue;
        int period = gpn / gcd_int(stride[e], gpn), cmax = size[e] < period ? size[e] : period;
        memset(nx, 0, gpn);
        for (int rho = 0; rho < gpn; rho++)
            if (at[rho])
                for (int k = 0; k < cmax; k++) nx[(rho + (long)k * stride[e]) % gpn] = 1;
        memcpy(at, nx, gpn);
    }
    /* members on nodes (rho + k stride) / gpn: only rho - rho mod gcd(stride, gpn) matters */
    int a = gcd_int(stride[dim], gpn);
    double t = 0;
    for (int rho = 0; rho < gpn; rho++) {
        if (!at[rho]) continue;
        double tt = grp_time(net, n, stride[dim], rho - rho % a, c, (int64_t)llround(bytes));
        if (tt > t) t = tt;
    }
    if (at != sbuf) free(at);
    return t;
}

static og_op *op_of(gen *G, int id) { return &G->g->ranks[G->r].ops[id]; }

/* One GEMM of a layer, tokens T, Y[T, N] = X[T, K] W[K, N]. A normal layer
 * splits K over gx and N over gy, a transposed one (the next in the chain)
 * the other way round; tokens are split over gz, and the weights are sharded
 * over gz as well (gathered before use). fwd: all-gather W over z, local
 * GEMM, all-reduce Y over the K-split group. bwd: all-gather W over z, dX
 * (all-reduce over the N-split group), dW (reduce-scatter over z).
 * Overlap (Singh et al. 2024, docs/workload.md): the gather runs on its own
 * stream as soon as the previous GEMM could start (prefetched one GEMM ahead);
 * the all-reduce of dX runs beside the weight-gradient GEMM and the next op
 * waits for it; the reduce-scatter of dW runs on its own stream, waited for
 * by the layer's DP all-reduce and the optimizer. The forward all-reduce of Y
 * is needed by the next op and blocks. */
static void ax_gemm(gen *G, const axg *A, const char *what, int li, int mb, double K, double N, int transposed, int bwd)
{
    const wl_layout *l = G->l;
    axstate *S = G->ax;
    double T = G->tok / l->gz, kx = transposed ? l->gy : l->gx, ny = transposed ? l->gx : l->gy;
    int kg = transposed ? A->yg : A->xg, ng = transposed ? A->xg : A->yg;
    int kd = transposed ? AX_Y : AX_X, nd = transposed ? AX_X : AX_Y;
    int nk = transposed ? l->gy : l->gx, nn = transposed ? l->gx : l->gy, ov = !l->ax_serial;
    double wbytes = K / kx * N / ny * G->pb, gbytes = K / kx * N / ny * G->gb;
    double ybytes = T * N / ny * G->dt, xbytes = T * K / kx * G->dt;
    if (G->dry) {
        axrec r = {G->acc, ax_cost(G, AX_Z, OG_ALLGATHER, wbytes), 0, 0, 0, 0, bwd};
        G->acc = 0;
        gemm(G, bwd ? "dgrad" : what, li, mb, T, bwd ? K / kx : N / ny, bwd ? N / ny : K / kx);
        r.g = G->acc, G->acc = 0;
        if (!bwd) {
            r.ar = ax_cost(G, kd, OG_ALLREDUCE, ybytes);
        } else {
            r.ar = ax_cost(G, nd, OG_ALLREDUCE, xbytes);
            gemm_x(G, "wgrad", li, mb, K / kx, N / ny, T, GF_WGRAD);
            r.wg = G->acc, G->acc = 0;
            r.rs = ax_cost(G, AX_Z, OG_REDUCESCATTER, gbytes);
        }
        ts_grow(&S->rec, sizeof *S->rec, &S->reccap, (size_t)S->nrec + 1);
        S->rec[S->nrec++] = r;
        return;
    }
    int ag = coll(G, ov ? WL_S_AX_AG : WL_S_COMPUTE, "tp", OG_ALLGATHER, A->zg, l->gz, wbytes, 0, 0, NULL,
                  ov ? S->prev_ready : -1, what, li, mb);
    if (ov && ag >= 0) S->prev_ready = last0(G); /* also starts a new compute op: the GEMM waits for ag */
    if (!bwd) {
        int id = gemm(G, what, li, mb, T, N / ny, K / kx);
        if (ov && ag >= 0) og_add_dep(op_of(G, id), ag);
        coll(G, WL_S_COMPUTE, "tp", OG_ALLREDUCE, kg, nk, ybytes, 0, 0, NULL, -1, what, li, mb);
        return;
    }
    int dg = gemm(G, "dgrad", li, mb, T, K / kx, N / ny);
    if (ov && ag >= 0) og_add_dep(op_of(G, dg), ag);
    int ar = coll(G, ov ? WL_S_AX_AR : WL_S_COMPUTE, "tp", OG_ALLREDUCE, ng, nn, xbytes, 0, 0, NULL, ov ? dg : -1, what, li,
                  mb);
    if (ov) last0(G);   /* the weight gradient is an op of its own: the all-reduce waits for dgrad only */
    int wg = gemm_x(G, "wgrad", li, mb, K / kx, N / ny, T, GF_WGRAD);
    int rs = coll(G, ov ? WL_S_AX_RS : WL_S_COMPUTE, "tp", OG_REDUCESCATTER, ov ? A->zr : A->zg, l->gz, gbytes, 0, 0, NULL, ov ? wg : -1,
                  what, li, mb);
    if (rs >= 0 && ov) S->last_rs = rs, last0(G); /* nothing merges into the op rs waits for */
    if (ov && ar >= 0) {
        last0(G);
        og_op *w = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, 0);
        og_add_dep(w, ar);
        set_label(G, w, "comp.wait_dgrad.%s.l%d.mb%d", what, li, mb);
    }
}

static void ax_layer(gen *G, const axg *A, int li, int mb, int bwd)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    double h = m->hidden, kvd = (double)m->kv_heads * (m->hidden / m->heads), g = m->gated ? 2 : 1;
    double T = G->tok / l->gz, elem_b = T * h / l->gy * G->dt;
    /* attention on the heads of this gy slice, repeated on the gx ranks */
    double aflops = 4 * T * G->o->seq * h / l->gy, heads = (double)l->mbs * m->heads / l->gy;
    double afwd = attn_time(G, heads, T / l->mbs, G->o->seq, h / m->heads, 0);
    double abwd = attn_time(G, heads, T / l->mbs, G->o->seq, h / m->heads, 1);
    if (!bwd) {
        elem(G, "ln1", li, mb, 2 * elem_b, EK_NORM);
        ax_gemm(G, A, "qkv", li, mb, h, h + 2 * kvd, 0, 0);
        timed(G, "attn", li, mb, aflops, afwd);
        ax_gemm(G, A, "proj", li, mb, h, h, 1, 0);
        elem(G, "ln2", li, mb, 4 * elem_b, EK_NORM);
        ax_gemm(G, A, "fc1", li, mb, h, m->ffn * g, 0, 0);
        elem(G, "act", li, mb, elem_b * m->ffn / h * (g + 1), EK_ACT);
        ax_gemm(G, A, "fc2", li, mb, m->ffn, h, 1, 0);
        elem(G, "residual", li, mb, 3 * elem_b, EK_RESID);
        return;
    }
    if (l->recompute == WL_RC_FULL) ax_layer(G, A, li, mb, 0);
    elem(G, "residual_bwd", li, mb, 3 * elem_b, EK_RESID);
    ax_gemm(G, A, "fc2", li, mb, m->ffn, h, 1, 1);
    elem(G, "act_bwd", li, mb, elem_b * m->ffn / h * (g + 2), EK_ACT);
    ax_gemm(G, A, "fc1", li, mb, h, m->ffn * g, 0, 1);
    elem(G, "ln2_bwd", li, mb, 4 * elem_b, EK_NORM);
    ax_gemm(G, A, "proj", li, mb, h, h, 1, 1);
    if (l->recompute == WL_RC_SELECTIVE) timed(G, "attn_recompute", li, mb, aflops, afwd);
    timed(G, "attn_bwd", li, mb, 2 * aflops, abwd);
    ax_gemm(G, A, "qkv", li, mb, h, h + 2 * kvd, 0, 1);
    elem(G, "ln1_bwd", li, mb, 2 * elem_b, EK_NORM);
}

/* The parts of a micro-batch before the layers, between forward and
 * backward, and after: embedding; logits and loss; logits backward. */
static void ax_embedding(gen *G, int mb)
{
    const wl_layout *l = G->l;
    elem(G, "embedding", -1, mb, 2 * G->tok / l->gz * G->m->hidden / l->gy * G->dt, EK_PLAIN);
}

static void ax_logits(gen *G, const axg *A, int mb)
{
    const wl_layout *l = G->l;
    double V = wl_padded_vocab(G->m, l), h = G->m->hidden;
    ax_gemm(G, A, "logits", -1, mb, h, V, 0, 0);
    elem(G, "loss", -1, mb, G->tok / l->gz * V / l->gy * 8, EK_PLAIN);
    ax_gemm(G, A, "logits", -1, mb, h, V, 0, 1);
}

/* Optimizer step: Adam over the rank's shard of the parameters: with ZeRO-1/2
 * the states are sharded over the data-parallel group, as the memory model
 * holds them (mem_estimate's shard). */
static double ax_optimizer(gen *G)
{
    const wl_layout *l = G->l;
    wl_rank_params p;
    wl_stage_params(G->m, l, 0, &p);
    double owned = l->zero >= 1 ? p.dense / l->dp + p.expert / ((double)l->dp / l->ep) : p.total;
    return optim_stack_time(G->o->gpu, G->st, G->m, wl_stage_layers(G->m, l, 0, NULL), owned, 1);
}

static int ax_rank(gen *G, const axg *A)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    G->last_comp = -1;
    G->ndeps = 0;
    G->ax->prev_ready = G->ax->last_rs = -1;
    for (int mb = 0; mb < G->mcount; mb++) {
        ax_embedding(G, mb);
        for (int li = 0; li < m->layers; li++) ax_layer(G, A, li, mb, 0);
        ax_logits(G, A, mb);
        if (too_big(G)) return -1;
        for (int li = m->layers - 1; li >= 0; li--) {
            ax_layer(G, A, li, mb, 1);
            if (mb == G->mcount - 1 && l->dp > 1) {
                /* data parallelism: the layer's gradient shard, summed over replicas once its
                 * reduce-scatters are done (replica 0 only: a fixed-duration op) */
                double dense, expert;
                wl_layer_params(m, l, li, &dense, &expert);
                int id;
                if (G->o->one_replica) {
                    og_op *op = og_compute_fixed(G->g, G->r, WL_S_DP, ax_cost(G, AX_D, OG_ALLREDUCE, dense * G->gb));
                    set_label(G, op, "dp.allreduce.grads.l%d.mb%d", li, mb);
                    id = op->id;
                } else {
                    id = coll(G, WL_S_DP, "dp", OG_ALLREDUCE, A->dg, l->dp, dense * G->gb, 0, 0, NULL, -1, "grads", li, mb);
                }
                int dep = last0(G);
                if (dep >= 0) og_add_dep(op_of(G, id), dep);
                if (G->ax->last_rs >= 0) og_add_dep(op_of(G, id), G->ax->last_rs);
                ts_grow(&G->deps, sizeof *G->deps, &G->depcap, (size_t)G->ndeps + 1);
                G->deps[G->ndeps++] = id;
            }
        }
    }
    last0(G);
    og_op *opt = og_compute_fixed(G->g, G->r, WL_S_COMPUTE, ax_optimizer(G));
    G->busy += opt->duration;
    set_label(G, opt, "comp.optimizer");
    for (int i = 0; i < G->ndeps; i++) og_add_dep(opt, G->deps[i]);
    if (G->ax->last_rs >= 0) og_add_dep(opt, G->ax->last_rs);
    return 0;
}

/* The estimate's walk over one rank's streams, in closed form. The state is
 * the clock of stream 0, when the previous GEMM became ready (its gather's
 * successor may start; -inf before the first gather), and the free times of
 * the gather, reduce-scatter and DP streams (the dX all-reduce stream is never
 * behind stream 0 when the next one is issued: each waits for it, so it is
 * not state). Every update of the
 * walk is a sum or a max, so a stretch of records is a max-plus linear map of
 * the state, x'[i] = max_j (a[i][j] + x[j]): a layer is one map, L layers its
 * L-th power (by squaring), a micro-batch the composition of its parts, and m
 * micro-batches again a power. O(log L + log m) products of 5 x 5 maps,
 * whichever stream is the bottleneck (when one is, its lag behind stream 0
 * grows each layer and never repeats: the walk cannot stop early). */
enum { AXW_T, AXW_READY, AXW_AG, AXW_RS, AXW_DP, AXW_N };

typedef struct axform {     /* one state variable as a max-plus form of the initial state */
    double a[AXW_N];
} axform;

typedef struct axmap {      /* a map: the form of every state variable */
    axform v[AXW_N];
} axmap;

/* (the five-term loops unrolled: the walk runs them hundreds of thousands
 * of times in a search) */
static axform axf_add(axform f, double c)
{
#pragma GCC unroll 8
    for (int j = 0; j < AXW_N; j++) f.a[j] += c;
    return f;
}

static axform axf_max(axform f, const axform *g)
{
#pragma GCC unroll 8
    for (int j = 0; j < AXW_N; j++)
        if (g->a[j] > f.a[j]) f.a[j] = g->a[j];
    return f;
}

static void axm_identity(axmap *m)
{
    static axmap id;
    static int made;
    if (!made) {
        for (int i = 0; i < AXW_N; i++)
            for (int j = 0; j < AXW_N; j++) id.v[i].a[j] = i == j ? 0 : -INFINITY;
        made = 1;
    }
    *m = id;
}

/* *out = b after a (a applied first); out may alias neither. */
static void axm_then(axmap *out, const axmap *a, const axmap *b)
{
    /* row by row, k outermost: each out[i][j] is still the max over k = 0, 1,
     * ... in that order of the same sums, now over whole rows of a (kept in
     * registers: no store of out can change a or b) */
    axmap A = *a;
    for (int i = 0; i < AXW_N; i++) {
        double x[AXW_N];
        const double bi0 = b->v[i].a[0];
#pragma GCC unroll 8
        for (int j = 0; j < AXW_N; j++) x[j] = bi0 + A.v[0].a[j];
#pragma GCC unroll 8
        for (int k = 1; k < AXW_N; k++) {
            const double bik = b->v[i].a[k];
#pragma GCC unroll 8
            for (int j = 0; j < AXW_N; j++) {
                double y = bik + A.v[k].a[j];
                x[j] = y > x[j] ? y : x[j];
            }
        }
        memcpy(out->v[i].a, x, sizeof x);
    }
}

/* The state x after the map m (in place). */
static void axm_apply(const axmap *m, double *x)
{
    double y[AXW_N];
    for (int i = 0; i < AXW_N; i++) {
        y[i] = -INFINITY;
#pragma GCC unroll 8
        for (int j = 0; j < AXW_N; j++)
            if (m->v[i].a[j] + x[j] > y[i]) y[i] = m->v[i].a[j] + x[j];
    }
    memcpy(x, y, sizeof y);
}

/* *out = m^k by squaring. */
static void axm_pow_sq(axmap *out, const axmap *m, long k);

/* Layouts of a search that differ only in what the walk does not see (the
 * ZeRO stage, often) raise the same layer maps to the same powers: the last
 * powers are kept, keyed on the map's bits and k. */
static struct {
    axmap m, p;
    long k;
    int used;
} axpow_memo[512];

static void axm_pow(axmap *out, const axmap *m, long k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull, w;
    const unsigned char *b = (const unsigned char *)m;
    for (size_t i = 0; i < sizeof *m; i += sizeof w) {
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 1099511628211ull;
    }
    h ^= h >> 29;
    int slot = (int)(h % (sizeof axpow_memo / sizeof axpow_memo[0]));
    if (memo_on && axpow_memo[slot].used && axpow_memo[slot].k == k && memcmp(&axpow_memo[slot].m, m, sizeof *m) == 0) {
        *out = axpow_memo[slot].p;
        return;
    }
    axm_pow_sq(out, m, k);
    axpow_memo[slot].m = *m, axpow_memo[slot].p = *out, axpow_memo[slot].k = k, axpow_memo[slot].used = 1;
}

static void axm_pow_sq(axmap *out, const axmap *m, long k)
{
    axmap base = *m, t;
    int have = 0;
    if (k < 1) axm_identity(out);
    for (; k > 0; k >>= 1) {
        if (k & 1) {
            if (have) axm_then(&t, out, &base), *out = t;
            else *out = base, have = 1;
        }
        if (k > 1) axm_then(&t, &base, &base), base = t;
    }
}

/* The state x after k applications of m (in place): squarings of m, and
 * the state carried through those of k's bits. */
static void axm_pow_apply_sq(const axmap *m, long k, double *x);

static struct {
    axmap m;
    double x[AXW_N], y[AXW_N];
    long k;
    int used;
} axapply_memo[512];

/* Memoised like axm_pow, on the map's and the state's bits and k. */
static void axm_pow_apply(const axmap *m, long k, double *x)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull, w;
    const unsigned char *b = (const unsigned char *)m;
    for (size_t i = 0; i < sizeof *m; i += sizeof w) {
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 1099511628211ull;
    }
    for (int i = 0; i < AXW_N; i++) {
        memcpy(&w, &x[i], sizeof w);
        h = (h ^ w) * 1099511628211ull;
    }
    h ^= h >> 29;
    int slot = (int)(h % (sizeof axapply_memo / sizeof axapply_memo[0]));
    if (memo_on && axapply_memo[slot].used && axapply_memo[slot].k == k &&
        memcmp(axapply_memo[slot].x, x, sizeof axapply_memo[slot].x) == 0 &&
        memcmp(&axapply_memo[slot].m, m, sizeof *m) == 0) {
        memcpy(x, axapply_memo[slot].y, sizeof axapply_memo[slot].y);
        return;
    }
    axapply_memo[slot].m = *m, axapply_memo[slot].k = k;
    memcpy(axapply_memo[slot].x, x, sizeof axapply_memo[slot].x);
    axm_pow_apply_sq(m, k, x);
    memcpy(axapply_memo[slot].y, x, sizeof axapply_memo[slot].y);
    axapply_memo[slot].used = 1;
}

static void axm_pow_apply_sq(const axmap *m, long k, double *x)
{
    axmap base = *m, t;
    for (; k > 0; k >>= 1) {
        if (k & 1) axm_apply(&base, x);
        if (k > 1) axm_then(&t, &base, &base), base = t;
    }
}

/* The records r[0..n) then tail seconds of compute, applied to the map w
 * (in place); the rules of the op graph (docs/workload.md, "Estimate"). */
static void ax_walk(axmap *w, const axrec *r, int n, double tail, int ov)
{
    axform *t = &w->v[AXW_T], *ready = &w->v[AXW_READY], *ag = &w->v[AXW_AG], *rs = &w->v[AXW_RS];
    for (int i = 0; i < n; i++, r++) {
        if (!ov) {
            *t = axf_add(*t, r->pre + r->ag + r->g + r->ar + r->wg + r->rs);
            continue;
        }
        *t = axf_add(*t, r->pre);
        axform gs = *t;
        if (r->ag > 0) {
            /* the gather starts once the GEMM before the previous one could */
            *ag = axf_add(axf_max(*ag, ready), r->ag);
            *ready = *t;
            gs = axf_max(gs, ag);
        }
        if (!r->bwd) {
            *t = axf_add(axf_add(gs, r->g), r->ar);
            continue;
        }
        /* the dX all-reduce: its stream ended by stream 0's clock (which waited for it) */
        axform d = axf_add(gs, r->g), we = axf_add(d, r->wg), are = d;
        if (r->ar > 0) are = axf_add(d, r->ar);
        if (r->rs > 0) *rs = axf_add(axf_max(we, rs), r->rs);
        *t = axf_max(we, &are);
    }
    *t = axf_add(*t, tail);
}

/* A layer's DP all-reduce of dpc seconds, after its backward and (overlap) its
 * reduce-scatters. */
static void ax_walk_dp(axmap *w, double dpc, int ov)
{
    axform st = axf_max(w->v[AXW_T], &w->v[AXW_DP]);
    if (ov) st = axf_max(st, &w->v[AXW_RS]);
    w->v[AXW_DP] = axf_add(st, dpc);
}

/* The map of one segment of the dry run (seg: records [from, to)). */
static void ax_seg(axmap *m, const axstate *S, int from, int to, double tail, int ov)
{
    axm_identity(m);
    ax_walk(m, S->rec + from, to - from, tail, ov);
}

static int ax_estimate(gen *G, wl_est *e)
{
    const wl_model *m = G->m;
    const wl_layout *l = G->l;
    axstate *S = G->ax;
    axg A = {-1, -1, -1, -1, -1};
    int seg[4], ov = !l->ax_serial;
    double tail[4];
    /* dry run: one forward layer, the logits, one backward layer */
    ax_embedding(G, 0);
    tail[0] = G->acc, G->acc = 0;
    seg[0] = S->nrec;
    ax_layer(G, &A, 0, 0, 0);
    tail[1] = G->acc, G->acc = 0;
    seg[1] = S->nrec;
    ax_logits(G, &A, 0);
    tail[2] = G->acc, G->acc = 0;
    seg[2] = S->nrec;
    ax_layer(G, &A, 0, 0, 1);
    tail[3] = G->acc, G->acc = 0;
    seg[3] = S->nrec;
    double dense, expert;
    wl_layer_params(m, l, 0, &dense, &expert);
    double dpc = l->dp > 1 ? ax_cost(G, AX_D, OG_ALLREDUCE, dense * G->gb) : 0;
    /* a micro-batch: embedding, L forward layers, logits, L backward layers
     * (the last micro-batch's with their DP all-reduces); m - 1 of them, then the last */
    long L = m->layers;
    axmap fwd, lgt, bwd, bwd_dp, fL, bL, bdL, t1, t2, mb;
    ax_seg(&fwd, S, seg[0], seg[1], tail[1], ov);
    ax_seg(&lgt, S, seg[1], seg[2], tail[2], ov);
    ax_seg(&bwd, S, seg[2], seg[3], tail[3], ov);
    axm_pow(&fL, &fwd, L);
    axm_then(&t1, &fL, &lgt);
    axm_pow(&bL, &bwd, L);
    axm_then(&t2, &t1, &bL);    /* a micro-batch but its embedding */
    /* the embedding first: the clock of stream 0 advanced by tail[0] */
    for (int i = 0; i < AXW_N; i++) {
        mb.v[i] = t2.v[i];
        mb.v[i].a[AXW_T] += tail[0];
    }
    /* from t = 0, every stream free at 0, no GEMM ready yet */
    double x[AXW_N] = {0, -INFINITY, 0, 0, 0};
    axm_pow_apply(&mb, G->mcount - 1, x);
    x[AXW_T] += tail[0];
    axm_apply(&t1, x);
    if (dpc > 0) {
        bwd_dp = bwd;
        ax_walk_dp(&bwd_dp, dpc, ov);
        axm_pow(&bdL, &bwd_dp, L);
        axm_apply(&bdL, x);
    } else {
        axm_apply(&bL, x);
    }
    struct {
        double t, rs, dp;
    } w = {x[AXW_T], x[AXW_RS], x[AXW_DP]};
    double comm_end = ov && w.rs > w.t ? w.rs : w.t;
    double mbc = tail[0] + m->layers * (tail[1] + tail[3]) + tail[2], tf = 0, tb = 0, tw = 0;
    for (int i = 0; i < seg[3]; i++) {
        const axrec *r = &S->rec[i];
        int mult = i < seg[1] || i >= seg[2] ? m->layers : 1;
        mbc += mult * (r->pre + r->g + r->wg);
        if (r->bwd) tb += mult * (r->pre + r->g), tw += mult * r->wg;
        else tf += mult * (r->pre + r->g);
    }
    tf += tail[0] + m->layers * tail[1] + tail[2], tb += m->layers * tail[3];
    e->tf = tf, e->tb = tb, e->tw = tw;
    e->compute = G->mcount * mbc;
    e->pipeline = comm_end;
    e->tp_exposed = comm_end - e->compute;
    e->dp_exposed = w.dp > comm_end ? w.dp - comm_end : 0;
    e->optimizer = ax_optimizer(G);
    e->iter = comm_end + e->dp_exposed + e->optimizer;
    return 0;
}

/* ---- the graph ---- */

static int add_group(og_graph *g, int n, int *members)
{
    return og_add_group(g, n, members);
}

/* The stack's choices, and the activation element size: 16-bit under FP8
 * (Transformer Engine keeps activations, norms and messages between ranks in
 * bf16; only GEMM inputs are cast). */
static void gen_stack(gen *G)
{
    gemm_memo_sync(G->o->gpu);
    G->st = G->o->stack ? G->o->stack : wl_stack_default();
    G->attn = G->l->attn != WL_ATTN_STACK ? G->l->attn : G->st->attn;
    G->era = G->st->gemm_era == WL_GEMM_2021 ? CM_ERA_2021 : CM_ERA_CURRENT;
    G->dt = G->o->dtype == CM_FP8 ? 2 : cm_dtype_size(G->o->dtype);
}

int wl_build(const wl_model *m, const wl_layout *l, const wl_opts *o, og_graph **out, wl_info *info, char *err,
             size_t errlen)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    if (!o->gpu || !o->net) return ts_err(err, errlen, "wl_build: no gpu or network model");
    bd.n = 0;
    gen G;
    memset(&G, 0, sizeof G);
    G.m = m;
    G.l = l;
    G.o = o;
    gen_stack(&G);
    double wb, gbytes, ob;
    mem_bytes_per_param(o->dtype, &wb, &gbytes, &ob);
    G.pb = wb;
    G.gb = gbytes;
    G.mcount = wl_layout_micro(l);
    if (G.mcount < 1) return ts_err(err, errlen, "layout: no micro-batch (gbs %d, mbs %d, dp %d)", l->gbs, l->mbs, l->dp);
    G.tok = (double)l->mbs * o->seq / l->cp;
    int N = wl_layout_ngpus(l), big = 0;
    info->ranks_total = N;
    /* rail copies (wl_rail_copies): with every TP collective folded in
     * analytically, the tp ranks of a TP group have the same ops, their
     * groups and peers shifted by the TP index: build TP index 0 only */
    G.tp_intra = !l->axonn && l->tp > 0 && l->tp <= o->net->gpus_per_node && o->net->gpus_per_node % l->tp == 0;
    G.tpb = rail_copies && !l->axonn && !o->one_replica && o->fuse && G.tp_intra && l->tp > 1 ? 1 : l->tp;
    {
        /* refuse up front what is sure to exceed the cap (a lower bound of the op count) */
        double nb = l->axonn ? (double)l->gx * l->gy * l->gz * (o->one_replica ? 1 : l->dp)
                             : (double)G.tpb * l->cp * l->pp * (o->one_replica ? l->ep : l->dp);
        double per_mb = l->axonn ? 4.0 * m->layers : 2.0 * m->layers / (l->axonn ? 1 : l->pp) * (o->fuse ? 1 : 20);
        if (nb * G.mcount * per_mb > WL_MAX_OPS)
            return ts_err(err, errlen, "the op graph would exceed %ld ops (%.0f ranks x %d micro-batches); use "
                          "--fidelity estimate, --detail reduced or a smaller batch", WL_MAX_OPS, nb, G.mcount);
    }
    info->micro = G.mcount;

    axstate ax;
    memset(&ax, 0, sizeof ax);
    G.ax = &ax;
    if (l->axonn) {
        int nd = o->one_replica ? 1 : l->dp, nb = l->gx * l->gy * l->gz * nd;
        G.g = og_new(nb);
        G.p = G.v = 1;
        int *mem = ts_malloc((size_t)(nb > 1 ? nb : 1) * sizeof *mem);
        int *xg = ts_malloc(nb * sizeof *xg), *yg = ts_malloc(nb * sizeof *yg), *zg = ts_malloc(nb * sizeof *zg),
            *dg = ts_malloc(nb * sizeof *dg);
        int *zr = ts_malloc(nb * sizeof *zr);
        for (int r = 0; r < nb; r++) xg[r] = yg[r] = zg[r] = dg[r] = zr[r] = -1;
        for (int r = 0; r < nb; r++) {
            int x = r % l->gx, y = r / l->gx % l->gy, z = r / (l->gx * l->gy) % l->gz;
            if (x == 0 && l->gx > 1) {
                for (int k = 0; k < l->gx; k++) mem[k] = r + k;
                int id = add_group(G.g, l->gx, mem);
                for (int k = 0; k < l->gx; k++) xg[r + k] = id;
            }
            if (y == 0 && l->gy > 1) {
                for (int k = 0; k < l->gy; k++) mem[k] = r + k * l->gx;
                int id = add_group(G.g, l->gy, mem);
                for (int k = 0; k < l->gy; k++) yg[mem[k]] = id;
            }
            if (z == 0 && l->gz > 1) {
                for (int k = 0; k < l->gz; k++) mem[k] = r + k * l->gx * l->gy;
                int id = add_group(G.g, l->gz, mem);
                for (int k = 0; k < l->gz; k++) zg[mem[k]] = id;
                if (!l->ax_serial) {
                    id = add_group(G.g, l->gz, mem);
                    for (int k = 0; k < l->gz; k++) zr[mem[k]] = id;
                }
            }
            if (r < l->gx * l->gy * l->gz && nd > 1) {
                for (int k = 0; k < nd; k++) mem[k] = r + k * l->gx * l->gy * l->gz;
                int id = add_group(G.g, nd, mem);
                for (int k = 0; k < nd; k++) dg[mem[k]] = id;
            }
        }
        for (int r = 0; r < nb; r++) {
            G.r = r;
            axg A = {xg[r], yg[r], zg[r], dg[r], zr[r]};
            if (ax_rank(&G, &A) < 0) {
                big = 1;
                break;
            }
            G.ops_before += G.g->ranks[r].nops;
        }
        free(mem);
        free(xg);
        free(yg);
        free(zg);
        free(zr);
        free(dg);
    } else {
        G.p = l->pp;
        G.v = l->vpp;
        G.lc = m->layers / (l->pp * l->vpp);
        G.zb = l->schedule == WL_ZBH1;
        G.dpb = o->one_replica ? l->ep : l->dp;
        int tp = G.tpb, cp = l->cp, dpb = G.dpb, pp = l->pp, nb = tp * cp * dpb * pp;
        G.g = og_new(nb);
        if (o->one_replica || l->order[0] || l->order[1] || G.tpb < l->tp) {
            /* placement: rank r of the layout on host gpu-r (the platform's names) */
            char host[32];
            for (int pi = 0; pi < pp; pi++)
                for (int di = 0; di < dpb; di++)
                    for (int ci = 0; ci < cp; ci++)
                        for (int ti = 0; ti < tp; ti++) {
                            snprintf(host, sizeof host, "gpu-%d", wl_rank_of(l, ti, ci, di, pi));
                            og_set_host(G.g, built(&G, ti, ci, di, pi), host);
                        }
        }
        G.gk = grad_block(l, o->net);
        G.ep_intra = (double)l->tp * cp * l->ep <= o->net->gpus_per_node;
        /* groups, by kind: id per built rank */
        int *gid[10];
        for (int k = 0; k < 10; k++) {
            gid[k] = ts_malloc(nb * sizeof(int));
            for (int r = 0; r < nb; r++) gid[k][r] = -1;
        }
        int *mem = ts_malloc((size_t)(nb + 2) * sizeof *mem);
        for (int pi = 0; pi < pp; pi++)
            for (int di = 0; di < dpb; di++)
                for (int ci = 0; ci < cp; ci++)
                    for (int ti = 0; ti < tp; ti++) {
                        int r = built(&G, ti, ci, di, pi), n;
                        if (ti == 0 && tp > 1) { /* TP */
                            for (n = 0; n < tp; n++) mem[n] = built(&G, n, ci, di, pi);
                            int id = add_group(G.g, n, mem);
                            for (int k = 0; k < n; k++) gid[0][mem[k]] = id;
                        }
                        if (ci == 0 && cp > 1) { /* CP */
                            for (n = 0; n < cp; n++) mem[n] = built(&G, ti, n, di, pi);
                            int id = add_group(G.g, n, mem);
                            for (int k = 0; k < n; k++) gid[1][mem[k]] = id;
                        }
                        if (di % l->ep == 0 && l->ep > 1) { /* EP: ep consecutive dp indices */
                            for (n = 0; n < l->ep; n++) mem[n] = built(&G, ti, ci, di + n, pi);
                            int id = add_group(G.g, n, mem);
                            for (int k = 0; k < n; k++) gid[2][mem[k]] = id;
                        }
                        if (!o->one_replica && di == 0 && ci == 0 && l->dp * cp > 1) { /* dense DP (with CP) */
                            n = 0;
                            for (int d = 0; d < l->dp; d++)
                                for (int c = 0; c < cp; c++) mem[n++] = built(&G, ti, c, d, pi);
                            int id = add_group(G.g, n, mem);
                            for (int k = 0; k < n; k++) gid[3][mem[k]] = id;
                            /* ZeRO++ / hierarchical levels inside this data-parallel group */
                            int hpz = l->hpz > 1 ? l->hpz : 1;
                            sub_groups(G.g, mem, n, 1, hpz, gid[6]);
                            if (l->hgz > 1) sub_groups(G.g, mem, n, hpz, l->hgz / hpz, gid[7]);
                            sub_groups(G.g, mem, n, 1, G.gk, gid[8]);
                            sub_groups(G.g, mem, n, G.gk, n / G.gk, gid[9]);
                        }
                        if (!o->one_replica && di < l->ep && l->ep > 1 && l->dp / l->ep > 1) { /* expert DP */
                            n = 0;
                            for (int d = di; d < l->dp; d += l->ep) mem[n++] = built(&G, ti, ci, d, pi);
                            int id = add_group(G.g, n, mem);
                            for (int k = 0; k < n; k++) gid[4][mem[k]] = id;
                        }
                        if (pi == 0 && pp > 1 && m->tied) { /* tied embeddings: first and last stage */
                            mem[0] = r;
                            mem[1] = built(&G, ti, ci, di, pp - 1);
                            int id = add_group(G.g, 2, mem);
                            gid[5][mem[0]] = gid[5][mem[1]] = id;
                        }
                    }
        G.layer_wop = ts_calloc(m->layers + 1, sizeof *G.layer_wop);
        G.bk_of = ts_calloc(m->layers + 2, sizeof *G.bk_of);
        G.z3wait = ts_calloc(l->prefetch > 0 ? l->prefetch : 1, sizeof *G.z3wait);
        G.wl = ts_calloc((size_t)G.mcount * G.v, sizeof *G.wl);
        int prev_nops = 0;
        for (int pi = 0; pi < pp; pi++)
            for (int di = 0; di < dpb; di++)
                for (int ci = 0; ci < cp; ci++)
                    for (int ti = 0; ti < tp; ti++) {
                        G.r = built(&G, ti, ci, di, pi);
                        G.ti = ti, G.ci = ci, G.di = di, G.pi = pi;
                        G.tpg = gid[0][G.r], G.cpg = gid[1][G.r], G.epg = gid[2][G.r];
                        G.dpg = gid[3][G.r], G.edpg = gid[4][G.r], G.embg = gid[5][G.r];
                        G.wblkg = gid[6][G.r], G.wmidg = gid[7][G.r], G.gblkg = gid[8][G.r], G.gxg = gid[9][G.r];
                        /* the ranks of a stage have the same op count: room for the last one's */
                        og_reserve(G.g, G.r, prev_nops + prev_nops / 64);
                        if (!big && build_rank(&G) < 0) big = 1;
                        og_trim(G.g, G.r);
                        prev_nops = G.g->ranks[G.r].nops;
                        G.ops_before += G.g->ranks[G.r].nops;
                    }
        for (int k = 0; k < 10; k++) free(gid[k]);
        free(mem);
        free(G.layer_wop);
        free(G.bk_of);
        free(G.z3wait);
        free(G.plan);
        free(G.ag_op);
        free(G.bpad);
        free(G.pp_rcvd);
        for (int i = 0; i < G.mcount * G.v; i++) free(G.wl[i].w);
        free(G.wl);
    }
    free(G.deps);
    if (G.asym && !big) { /* rail copies would not be exact: build every rank */
        og_free(G.g);
        rail_copies = 0;
        int rc = wl_build(m, l, o, out, info, err, errlen);
        rail_copies = 1;
        return rc;
    }
    if (big) {
        og_free(G.g);
        return ts_err(err, errlen, "the op graph would exceed %ld ops (%d ranks x %d micro-batches); use "
                      "--fidelity estimate, --detail reduced or a smaller batch", WL_MAX_OPS, info->ranks_total,
                      G.mcount);
    }
    og_trim(G.g, -1);
    info->flops = G.flops;
    info->compute_s = G.busy;
    info->fused_tp_s = G.tp_s;
    info->ranks_built = G.g->nranks;
    if (!l->axonn && G.tpb < l->tp) {
        info->copies = l->tp;
        info->copy_rank = ts_malloc((size_t)G.g->nranks * l->tp * sizeof *info->copy_rank);
        for (int pi = 0; pi < l->pp; pi++)
            for (int di = 0; di < G.dpb; di++)
                for (int ci = 0; ci < l->cp; ci++)
                    for (int k = 0; k < l->tp; k++)
                        info->copy_rank[(size_t)built(&G, 0, ci, di, pi) * l->tp + k] = wl_rank_of(l, k, ci, di, pi);
    }
    *out = G.g;
    return 0;
}

/* ---- direct estimate, without a graph ---- */

/* Forward, backward (input gradients) and weight-gradient times of one layer
 * on one micro-batch, with its blocking TP/EP/CP communication. */
static void layer_times(gen *G, int li, double *f, double *b, double *w, double *side, double *gm)
{
    G->acc = G->acc_w = G->acc_side = G->acc_g = G->acc_ov = 0;
    G->nkr = 0, G->krec = 1; /* the kernels in order, for ov_replay */
    layer_fwd(G, li, 0, 0);
    *f = G->acc;
    G->acc = 0;
    G->kr_fwd = G->nkr, G->ov_fwd = G->acc_ov;
    layer_bwd(G, li, 0, 0);
    G->krec = 0;
    *b = G->acc;
    *w = G->acc_w;
    *side = G->acc_side;
    *gm = G->acc_g; /* the GEMMs' share of f + b + w */
}

/* Persistent GEMMs (ov_persistent) beside ZeRO-3's per-layer collectives: the
 * seconds a layer's forward and backward gain, replaying the graph's budget
 * over the layer's kernels (layer_times' record): the forward's kernels after
 * its gather, the backward's after its gather and the reduce-scatter of the
 * layer before it (rs the layer's reduce-scatter seconds). */
static void layer_ov_gain(gen *G, double rs, double *xf, double *xb)
{
    *xf = ov_replay(G, G->kr, G->kr_fwd, G->ov_fwd);
    *xb = ov_replay(G, G->kr + G->kr_fwd, G->nkr - G->kr_fwd, G->acc_ov - G->ov_fwd + rs);
}

/* Seconds of one layer's gradient reduction per micro-batch on the side
 * stream (the last micro-batch's extra level amortised over the iteration). */
static double zero3_grad_time_ov(gen *G, double P, double *ov)
{
    double save = G->acc_side, save_ov = G->acc_ov, t[2], c[2];
    for (int f = 0; f < 2; f++) {
        G->acc_side = G->acc_ov = 0;
        G->bucket_acc = P;
        G->gfinal = f;
        G->gmb = !f; /* weighted (m - 1)/m: as many micro-batches add into a held shard */
        bucket_emit(G, -1);
        t[f] = G->acc_side, c[f] = G->acc_ov;
    }
    G->acc_side = save, G->acc_ov = save_ov;
    if (ov) *ov = c[0] + (c[1] - c[0]) / G->mcount; /* the collectives alone (ov_issue's) */
    return t[0] + (t[1] - t[0]) / G->mcount;
}

static double zero3_grad_time(gen *G, double P) { return zero3_grad_time_ov(G, P, NULL); }

/* FSDP1's root unit per micro-batch (fsdp1_root): its gather before the
 * forward and its reduce-scatter, with the flat-gradient pass and the shard's
 * passes, after the backward, neither beside any compute. */
static double fsdp1_root_time(gen *G)
{
    if (!fsdp1_root(G)) return 0;
    double P = root_params(G), save = G->acc_side;
    G->acc_side = 0;
    gather_ops(G, G->m->layers + 1, 0, "param_fwd_root", 0, P);
    double t = G->acc_side + zero3_grad_time(G, P) + cm_mem_time(G->o->gpu, P * fsdp1_grad_bytes(G), 1);
    G->acc_side = save;
    return t;
}

/* Stages of unequal times (uneven layer counts): the closed form's (m + p - 1)
 * slots of the slowest stage does not hold (the warm-up and cool-down cross
 * every stage once at its own pace), so the schedule is walked: stage i runs
 * Megatron's 1F1B order (min(p - i - 1, m) warm-up forwards, then one forward
 * and one backward each, then the remaining backwards) or GPipe's (all
 * forwards, then all backwards); a forward waits for the previous stage's
 * forward of its micro-batch, a backward for the next stage's backward, and
 * the crossing takes xfer from when both the sender has sent and the
 * receiver has posted its blocking receive (the graph's pp_recv on the
 * compute stream). f[i], b[i]: stage i's forward and backward (weight
 * gradients included) of one micro-batch; f0x, blx: added to each stage's first forward
 * and last backward (the DP collectives beside them). Returns when the last backward ends. */
static double pipeline_walk(const double *f, const double *b, int p, int m, double xfer, int gpipe, double f0x,
                            double blx)
{
    double *fe = ts_malloc((size_t)p * m * sizeof *fe), *be = ts_malloc((size_t)p * m * sizeof *be);
    double *now = ts_calloc((size_t)p, sizeof *now);
    int *next = ts_calloc((size_t)p, sizeof *next), left = p, progress = 1;
    for (int i = 0; i < p * m; i++) fe[i] = be[i] = -1;
    while (left && progress) {
        progress = 0;
        for (int i = 0; i < p; i++) {
            for (;;) {
                int k = next[i], w = gpipe ? m : (p - i - 1 < m ? p - i - 1 : m);
                if (k >= 2 * m) break;
                /* the k-th op of stage i: forward of micro-batch j or backward of j */
                int fwd, j;
                if (k < w) fwd = 1, j = k;
                else if (k < 2 * m - w) fwd = (k - w) % 2 == 0, j = fwd ? w + (k - w) / 2 : (k - w) / 2;
                else fwd = 0, j = k - m;
                /* a received input: the transfer starts when both sides have posted
                 * (the sender's end of its op, the receiver's blocking receive) */
                double dep;
                int rx = fwd ? i > 0 : i < p - 1;
                if (fwd) dep = i == 0 ? 0 : fe[(i - 1) * m + j];
                else dep = i == p - 1 ? fe[i * m + j] : be[(i + 1) * m + j];
                if (dep < 0) break;
                double start = (now[i] > dep ? now[i] : dep) + (rx ? xfer : 0);
                now[i] = start + (fwd ? f[i] + (j == 0 ? f0x : 0) : b[i] + (j == m - 1 ? blx : 0));
                (fwd ? fe : be)[i * m + j] = now[i];
                next[i]++, progress = 1;
                if (next[i] == 2 * m) left--;
            }
        }
    }
    double end = 0;
    for (int i = 0; i < p; i++) end = now[i] > end ? now[i] : end;
    free(fe), free(be), free(now), free(next);
    return end;
}

int wl_estimate(const wl_model *m, const wl_layout *l, const wl_opts *o, wl_est *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (!o->gpu || !o->net) return ts_err(err, errlen, "wl_estimate: no gpu or network model");
    gen G;
    memset(&G, 0, sizeof G);
    G.m = m, G.l = l, G.o = o, G.dry = 1, G.tpb = l->tp;
    gen_stack(&G);
    double wb, gbytes, ob;
    mem_bytes_per_param(o->dtype, &wb, &gbytes, &ob);
    G.pb = wb, G.gb = gbytes;
    G.mcount = wl_layout_micro(l);
    if (G.mcount < 1) return ts_err(err, errlen, "layout: no micro-batch");
    G.tok = (double)l->mbs * o->seq / l->cp;
    if (l->axonn) {
        /* the dry run's records kept from one estimate to the next: a search
         * estimates thousands of layouts of about as many GEMMs */
        static axrec *kept;
        static size_t keptcap;
        axstate ax;
        memset(&ax, 0, sizeof ax);
        ax.rec = kept, ax.reccap = keptcap;
        G.ax = &ax;
        int rc = ax_estimate(&G, e);
        kept = ax.rec, keptcap = ax.reccap;
        return rc;
    }
    G.p = l->pp, G.v = l->vpp, G.lc = m->layers / (l->pp * l->vpp);
    const an_net *net = o->net;
    int gpn = net->gpus_per_node;
    G.tp_intra = l->tp <= gpn && gpn % l->tp == 0;
    G.ep_intra = (double)l->tp * l->cp * l->ep <= gpn;
    G.dpg = G.tpg = G.epg = G.cpg = G.edpg = G.embg = -1;
    G.wblkg = G.wmidg = G.gblkg = G.gxg = -1;
    G.gk = grad_block(l, net);

    /* one dense and one MoE layer, then per stage */
    double fd = 0, bd = 0, wd = 0, sd = 0, gd = 0, fm = 0, bm = 0, wm = 0, sm = 0, gm = 0;
    int first_moe = m->experts ? m->dense_layers : -1;
    if (!m->experts || m->dense_layers > 0) layer_times(&G, 0, &fd, &bd, &wd, &sd, &gd);
    /* persistent GEMMs beside ZeRO-3's per-layer collectives: the graph's budget
     * replayed over a layer's kernels (dense models), instead of ov_extra's mean rate */
    int replay = ov_persistent(&G) && l->zero == 3 && l->dp * l->cp > 1 && !m->experts && !ds_layer(&G, 0);
    double xf = 0, xb = 0;
    if (replay) {
        double dense, expert, rs = 0;
        wl_layer_params(m, l, 0, &dense, &expert);
        zero3_grad_time_ov(&G, dense, &rs);
        layer_ov_gain(&G, rs, &xf, &xb);
    }
    if (first_moe >= 0) layer_times(&G, first_moe, &fm, &bm, &wm, &sm, &gm);
    double V = wl_padded_vocab(m, l), h = m->hidden, t = l->tp, sp = l->sp ? t : 1;
    double emb_f = cm_mem_time(o->gpu, 2 * G.tok * h * G.dt / sp, 1);
    double emb_b = cm_mem_time(o->gpu, 3 * G.tok * h * G.dt / sp, 1);
    /* the output layer's loss and autocast casts as the graph runs them (do_F,
     * do_B), accumulated dry */
    G.acc = 0;
    autocast_cast(&G, -1, 0, V * h, 1, 0);
    loss_op(&G, 0, G.tok * V / t, 0);
    double lg_f = gemm_time(&G, 1, G.tok, V / t, h, GF_HIGH) + G.acc;
    G.acc = 0;
    loss_op(&G, 0, G.tok * V / t, 1);
    autocast_cast(&G, -1, 0, V * h, 1, 1);
    double lg_b = gemm_time(&G, 1, G.tok, h, V / t, GF_HIGH) + G.acc;
    G.acc = 0;
    double lg_w = gemm_time(&G, 1, h, V / t, G.tok, GF_HIGH | GF_WGRAD);
    double lg_g = gemm_time(&G, 1, G.tok, V / t, h, GF_HIGH) + gemm_time(&G, 1, G.tok, h, V / t, GF_HIGH) + lg_w;
    /* the stages' times are walked where they differ: uneven layer counts, or the
     * first stage's embedding and the last's output layer and loss beside even
     * stages (1F1B and GPipe; the interleaved and ZB-H1 closed forms keep the
     * slowest stage's slot) */
    int p = l->pp, per, lo;
    int uneven = p > 1 && ((l->pp_first || l->pp_last) || l->schedule == WL_1F1B || l->schedule == WL_GPIPE);
    double tf = 0, tb = 0, tw = 0, side = 0, gshare = 0; /* gshare: GEMMs' share of the slowest stage */
    double *sf = uneven ? ts_calloc((size_t)p, sizeof *sf) : NULL, *sb = uneven ? ts_calloc((size_t)p, sizeof *sb) : NULL;
    for (int st = 0; st < p; st++) {
        int nmoe = 0;
        per = wl_stage_layers(m, l, st, &lo);
        for (int li = lo; li < lo + per; li++) nmoe += m->experts && li >= m->dense_layers;
        double f = (per - nmoe) * fd + nmoe * fm, b = (per - nmoe) * bd + nmoe * bm, w = (per - nmoe) * wd + nmoe * wm;
        double cg = (per - nmoe) * gd + nmoe * gm + (st == p - 1 ? lg_g : 0);
        double s2 = (per - nmoe) * sd + nmoe * sm, held = s2; /* held: seconds of side collectives, all streams */
        if (l->zero == 3 && l->dp * l->cp > 1) {
            /* DeepSpeed ZeRO-3 reduce-scatters each layer's gradients every micro-batch, on a
             * stream of their own: they overlap compute and the gathers */
            double r2 = 0;
            for (int li = lo; li < lo + per; li++) {
                double dense, expert;
                wl_layer_params(m, l, li, &dense, &expert);
                r2 += zero3_grad_time(&G, dense);
            }
            held += r2;
            if (one_pg(&G)) s2 += r2; /* one NCCL stream: gathers and reduce-scatters in series */
            else if (r2 > s2) s2 = r2;
        }
        if (st == 0) f += emb_f, b += emb_b;
        if (st == p - 1) f += lg_f, b += lg_b, w += lg_w;
        if (l->zero == 3 && (fsdp1_grad_bytes(&G) > 0 || fsdp2_one_rank(&G))) {
            /* bucket_emit's passes over the stage's gradients, embedding and output
             * layer included: FSDP1's flat-gradient path (at any dp) and FSDP2's
             * one-rank reduce-scatter copies */
            wl_rank_params sp_;
            wl_stage_params(m, l, st, &sp_);
            /* (FSDP1's root unit, reduced every micro-batch, is fsdp1_root_time's) */
            double P1 = sp_.dense - (fsdp1_root(&G) ? root_params(&G) : 0);
            if (fsdp1_grad_bytes(&G) > 0) b += cm_mem_time(o->gpu, P1 * fsdp1_grad_bytes(&G), 1);
            G.acc = 0;
            fsdp2_one_rank_copy(&G, "fsdp2_reduce_1rank", -1, -1, sp_.total * G.gb, -1);
            b += G.acc;
            G.acc = 0;
        }
        if (st < p - 1 && ds_engine(&G) && pp_sg(&G)) b += tp_cost(&G, OG_ALLGATHER, G.tok * h * G.dt); /* ds_restore */
        /* the stage's kernels beside its gathers and reduce-scatters (ov_slow):
         * their streams run at once, each on its channels, so their seconds add */
        double cx = f + b + w, k = cx > 0 && !ds_layer(&G, lo) && !replay ? 1 + ov_extra(&G, cx, cg, held) / cx : 1;
        f *= k, b *= k, w *= k;
        if (replay) f += per * xf, b += per * xb;
        if (uneven) sf[st] = f, sb[st] = b + w;
        if (f + b + w > tf + tb + tw) tf = f, tb = b, tw = w, side = s2, gshare = cx > 0 ? cg / cx : 0;
    }
    /* pipeline point-to-point: one transfer per stage boundary and direction */
    int pp_intra = (double)l->tp * l->cp * l->dp * (p > 1 ? 2 : 1) <= gpn;
    double xfer = p > 1 ? (pp_intra ? net->intra_lat : net->inter_lat) +
                              pp_bytes(&G) / (pp_intra ? net->intra_bw : net->inter_bw) : 0;
    if (p > 1 && pp_sg(&G)) xfer += tp_cost(&G, OG_ALLGATHER, G.tok * h * G.dt); /* scatter/gather */
    double mm = G.mcount, v = l->vpp, slot = tf + tb + tw > side ? tf + tb + tw : side; /* ZeRO-3 gathers overlap */
    if (p > 1 && ds_grad_whole(&G)) {
        /* the gradient crosses whole, without the gather, in blocking transfers on the
         * compute stream (the graph's ds_steps): each slot carries the difference
         * between its transfer and the partitioned one with its gather */
        double bwd = (pp_intra ? net->intra_lat : net->inter_lat) +
                     pp_msg_bytes(&G, 1) / (pp_intra ? net->intra_bw : net->inter_bw);
        slot += bwd - xfer;
        xfer = (xfer + bwd) / 2;
    }
    switch (l->schedule) {
    case WL_INTERLEAVED:
        /* a micro-batch crosses p v virtual stage boundaries each way; the
         * interleaved steady state leaves no slack to hide them (the graph's
         * receives block: each of the (v-1) extra crossings is exposed) */
        e->pipeline = (mm + (p - 1) / v) * slot + 2 * (p - 1) * xfer + mm * (v - 1) * xfer;
        break;
    case WL_ZBH1: e->pipeline = mm * slot + (p - 1) * (tf + tb - tw > 0 ? tf + tb - tw : 0) + 2 * (p - 1) * xfer; break;
    default: e->pipeline = (mm + p - 1) * slot + 2 * (p - 1) * xfer; break;
    }
    int walk = uneven && l->schedule != WL_ZBH1 && slot <= tf + tb + tw;
    double gslow = 0, pslow = 0; /* the DP collectives' slowdown of the last backward, the first forwards */
    if (slot > tf + tb + tw) e->pipeline += tf; /* bound by the side stream: it starts after a forward */
    e->bubble = e->pipeline - mm * slot;
    e->tf = tf, e->tb = tb, e->tw = tw;

    /* data parallelism: buckets overlap the last micro-batch's backward, except
     * the last (overlap_grad=off: one bucket after it); the distributed
     * optimizer's all-gathers follow the step, or (overlap_param) overlap the
     * next forward but for the first bucket; each collective costed on the
     * data-parallel group's placement (dp_cost), as the graph costs it */
    wl_rank_params rp;
    wl_stage_params(m, l, 0, &rp);
    int ndp = l->dp * l->cp;
    dsel all = {0, 1};
    if (ndp > 1 && l->zero < 3) {
        double bsz = bucket_size(l), nb = isinf(bsz) ? 1 : ceil(rp.dense / bsz);
        double elems = bucket_pad(l, rp.dense / nb);
        og_coll c = grad_coll(&G);
        double one = dp_cost(&G, c, ndp, &all, elems * gbytes), whole_ = nb * one;
        if (ds_fallback(&G)) one += cm_mem_time(o->gpu, elems * WL_DS_AR_COPY_PASSES * gbytes, 3), whole_ = nb * one;
        double window = (tb + tw) * (nb - 1) / nb;
        /* the last backward's kernels beside the buckets but the last (ov_slow) */
        int ch = coll_params_channels(elems * gbytes);
        if (ch > G.ov_ch) G.ov_ch = ch;
        double slow = ov_extra(&G, window, window * gshare, whole_ - one);
        window += slow;
        e->pipeline += slow;
        gslow = slow;
        e->dp_exposed = whole_ - window > one ? whole_ - window : one;
        if (l->zero >= 1) {
            double ag = dp_cost(&G, OG_ALLGATHER, ndp, &all, elems * wb), fw = tf * G.mcount;
            if (l->param_overlap) {
                /* the forward's kernels beside the gathers but the first */
                slow = ov_extra(&G, fw, fw * gshare, nb * ag - ag);
                fw += slow;
                e->pipeline += slow;
                pslow = slow;
            }
            e->dp_exposed += l->param_overlap ? ag + (nb * ag - ag > fw ? nb * ag - ag - fw : 0) : nb * ag;
        }
    }
    if (rp.expert > 0 && l->dp / l->ep > 1) {
        dsel eds = {0, l->ep * l->cp};
        e->dp_exposed += dp_cost(&G, l->zero ? OG_REDUCESCATTER : OG_ALLREDUCE, l->dp / l->ep, &eds,
                                 whole(rp.expert * gbytes, l->dp / l->ep)) / wl_stage_layers(m, l, 0, NULL);
    }
    if (walk) {
        /* uneven stages: every stage's first forward and last backward lie on the walk's
         * critical path (warm-up and cool-down), each beside its own DP collectives */
        e->pipeline = pipeline_walk(sf, sb, p, G.mcount, xfer, l->schedule == WL_GPIPE, pslow, gslow);
        e->bubble = e->pipeline - mm * slot;
    }
    free(sf);
    free(sb);
    free(G.kr);
    G.kr = NULL;
    e->dp_exposed += G.mcount * fsdp1_root_time(&G);
    double owned = l->zero >= 1 ? rp.dense / ndp + rp.expert / (l->dp / l->ep) : rp.total;
    e->optimizer = optim_stack_time(o->gpu, G.st, m, wl_stage_layers(m, l, 0, NULL), owned, optim_shards(l));
    /* PyTorch DDP's copies into and out of its buckets, on the compute stream */
    if (torch_ddp(&G)) e->optimizer += 2 * ddp_copy_time(&G, rp.dense);
    e->iter = e->pipeline + e->dp_exposed + e->optimizer;
    return 0;
}

void wl_sm_share(int on) { sm_share_on = on; }

void wl_rail_copies(int on) { rail_copies = on; }

void wl_memo(int on)
{
    memo_on = on;
    memset(ax_memo, 0, sizeof ax_memo);
    memset(axpow_memo, 0, sizeof axpow_memo);
    memset(axapply_memo, 0, sizeof axapply_memo);
    memset(axc_memo, 0, sizeof axc_memo);
    axc_ctx.epoch = 0;
    gemm_memo.valid = 0;
    wl_stage_params_memo(on);
    coll_view_memo(on);
    an_memo(on);
}
