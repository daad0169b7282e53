/* ZeRO++ (hpZ, qwZ, qgZ) and the 3-level hierarchical partitioning: layout
 * keys, the collectives of the op graph against hand counts, memory terms
 * against hand calculation, and inter-node bytes on a simulated Frontier. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic/analytic.h"
#include "coll.h"
#include "memory/memory.h"
#include "tests.h"
#include "util.h"
#include "workload/workload.h"

/* The fixture model (tests/data/model_zpp_small.json): h = 512, f = 4h, biases,
 * 2 layers; per layer QKV 3h^2 + 3h, projection h^2 + h, fc1 4h^2 + 4h, fc2
 * 4h^2 + h, two layer norms 4h: 12h^2 + 13h = 3,145,728 + 6,656 = 3,152,384. */
#define P_LAYER 3152384.0

static int setup(const char *lay, int ngpus, wl_model *m, wl_layout *l, char *err)
{
    if (wl_model_find(test_data("model_zpp_small.json"), "configs/models", m, err, TS_ERRLEN) < 0) return -1;
    if (wl_layout_parse(lay, l, err, TS_ERRLEN) < 0) return -1;
    return wl_layout_check(l, m, 512, ngpus, err, TS_ERRLEN);
}

static void expect_bad(const char *lay, int ngpus, const char *msg)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN] = "";
    CU_ASSERT_EQUAL(setup(lay, ngpus, &m, &l, err), -1);
    if (!strstr(err, msg)) fprintf(stderr, "\n%s: got '%s', want '%s'\n", lay, err, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, msg));
}

static void test_keys(void)
{
    wl_model m;
    wl_layout l;
    char err[TS_ERRLEN], buf[256];
    CU_ASSERT_EQUAL_FATAL(setup("tp=1,dp=16,gbs=32,zero=3,hpz=8,qwz=on,qgz=on", 16, &m, &l, err), 0);
    CU_ASSERT(l.hpz == 8 && l.hgz == 0 && l.qwz == 1 && l.qgz == 1 && l.zero == 3);
    wl_layout_format(&l, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, ",zero=3,") && strstr(buf, ",hpz=8,hgz=1,qwz=on,qgz=on"));
    CU_ASSERT_EQUAL_FATAL(setup("tp=2,dp=8,gbs=8,zero=3,hpz=2,hgz=8,qwz=off", 16, &m, &l, err), 0);
    CU_ASSERT(l.hpz == 2 && l.hgz == 8 && !l.qwz && !l.qgz);
    /* without the keys the formatted layout keeps its old form */
    CU_ASSERT_EQUAL_FATAL(setup("tp=2,dp=8,gbs=8,zero=3,sp=on", 16, &m, &l, err), 0);
    CU_ASSERT(l.sp == 1);
    wl_layout_format(&l, buf, sizeof buf);
    CU_ASSERT_PTR_NULL(strstr(buf, "hpz"));
    static const struct { const char *lay; int ngpus; const char *msg; } bad[] = {
        {"dp=16,zero=2,hpz=8", 16, "hpz=8 needs zero=3"},
        {"dp=16,zero=3,qwz=maybe", 16, "qwz=maybe (valid: on, off)"},
        {"dp=16,zero=1,qgz=on", 16, "qgz=on needs zero=3"},
        {"dp=16,hgz=4", 16, "hgz=4 needs zero=3"},
        {"dp=16,zero=3,hpz=0", 16, "hpz=0 is not an integer >= 1"},
        {"dp=16,zero=3,hpz=x", 16, "hpz=x is not an integer >= 1"},
        {"dp=16,zero=3,hpz=5", 16, "hpz=5 does not divide the data-parallel group dp*cp = 16"},
        {"dp=16,zero=3,hgz=32", 16, "hgz=32 does not divide the data-parallel group dp*cp = 16"},
        {"dp=16,zero=3,hpz=4,hgz=2", 16, "hpz=4 does not divide hgz=2"},
        {"dp=16,zero=3,hgz=8,qgz=on", 16, "qgz=on with hgz=8"},
        {"dp=16,zero=3,hpz=2,hpz=4", 16, "'hpz' given twice"},
        {"tp=2,sp=maybe", 2, "sp=maybe (valid: on, off)"},
        {"gx=2,gy=1,gz=1,dp=8,zero=3,hpz=2", 16, "takes no tp, pp, cp, ep, vpp, sp, hpz"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad(bad[i].lay, bad[i].ngpus, bad[i].msg);
}

/* ---- the op graph ---- */

static const an_net zpp_net = {8, 1e18, 0, 1e18, 0, 0, 0, 0, NULL, 0, NULL, NULL};

static og_graph *graph(const char *lay, wl_layout *l)
{
    wl_model m;
    cm_gpu gpu;
    wl_info info;
    char err[TS_ERRLEN];
    if (setup(lay, 16, &m, l, err) < 0) {
        fprintf(stderr, "\n%s: %s\n", lay, err);
        return NULL;
    }
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
    wl_opts o = {512, CM_BF16, &gpu, &zpp_net, 0, 0, NULL};
    og_graph *g = NULL;
    if (wl_build(&m, l, &o, &g, &info, err, sizeof err) < 0) fprintf(stderr, "\n%s: %s\n", lay, err);
    if (g && og_check(g, lay, err, sizeof err) < 0) {
        fprintf(stderr, "\n%s\n", err);
        og_free(g);
        return NULL;
    }
    return g;
}

/* The collectives of rank r whose label starts with prefix: how many, and
 * whether every one has the given bytes and exactly the given group members
 * (sorted, n of them). */
static int colls(const og_graph *g, int r, const char *prefix, og_coll c, int64_t bytes, const int *mem, int n)
{
    int count = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) {
        const og_op *op = &g->ranks[r].ops[i];
        if (op->kind != OG_COLL || !og_label(g, op) || strncmp(og_label(g, op), prefix, strlen(prefix))) continue;
        count++;
        const og_group *gr = &g->groups[op->group];
        int same = op->coll == c && op->bytes == bytes && gr->n == n;
        for (int k = 0; same && k < n; k++) same = gr->ranks[k] == mem[k];
        if (!same) {
            fprintf(stderr, "\n%s: %s %lld bytes on %d ranks (first %d), want %lld on %d (first %d)\n", prefix,
                    og_coll_name(op->coll), (long long)op->bytes, gr->n, gr->ranks[0], (long long)bytes, n, mem[0]);
            return -1;
        }
    }
    return count;
}

static int computes(const og_graph *g, int r, const char *prefix)
{
    int count = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) {
        const og_op *op = &g->ranks[r].ops[i];
        count += op->kind == OG_COMPUTE && og_label(g, op) && !strncmp(og_label(g, op), prefix, strlen(prefix));
    }
    return count;
}

static int collectives(const og_graph *g, int r, og_coll c)
{
    int count = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) count += g->ranks[r].ops[i].kind == OG_COLL && g->ranks[r].ops[i].coll == c;
    return count;
}

/* dp = 16 (2 nodes of 8 in zpp_net), 2 micro-batches (gbs 32), 2 layers, bf16
 * weights (2 bytes), fp32 gradients (4 bytes). Per rank and iteration:
 * - ZeRO-3: 4 forward and 4 backward gathers of a layer, 2P = 6,304,768 bytes on
 *   all 16 ranks; gradients reduce-scattered every micro-batch: the 2 layers in
 *   micro-batch 0; the output layer, the 2 layers and the embeddings in micro-batch 1:
 *   6 reduce-scatters, a layer's 4P = 12,609,536 bytes.
 * - hpz=4: the first forward gather of each layer on all 16 (from the primary
 *   shards), the other 6 inside the 4 consecutive ranks {4..7} of rank 5.
 * - 3-level, hpz=2, hgz=8: the first forward gather in 3 steps: across the two
 *   groups of 8 ({5, 13}: output P/8 x 2 = 788,096 bytes), across the pairs of the
 *   group ({1, 3, 5, 7}: P/2 x 2 = 3,152,384), inside the pair ({4, 5}: 2P); the other
 *   gathers inside the pair. Gradients: every micro-batch on the 8 of the node (4P),
 *   the last also across the groups ({5, 13}, its 1/8: P/8 x 4 = 1,576,192).
 * - qwZ: int8 plus a 4-byte scale per 256: P x 65/64 = 3,201,640 bytes, rounded up to
 *   whole 2-byte elements on 16 ranks: 3,201,664. qgZ: int4 plus scales, P x 33/64 =
 *   1,625,448, on the node's 8 ranks 1,625,456 (all-to-all, what a rank sends); then
 *   the 1/8 slice across the 2 nodes: 203,181 -> 203,184. */
static void test_graph_collectives(void)
{
    wl_layout l;
    const int all[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const int blk4[4] = {4, 5, 6, 7}, pair[2] = {4, 5}, mid[4] = {1, 3, 5, 7}, across[2] = {5, 13};
    const int node0[8] = {0, 1, 2, 3, 4, 5, 6, 7}, across0[2] = {0, 8};
    const int64_t w2 = 6304768, g4 = 12609536;

    og_graph *g = graph("tp=1,dp=16,gbs=32,zero=3", &l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL((int64_t)(2 * P_LAYER), w2);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.", OG_ALLGATHER, w2, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_bwd.", OG_ALLGATHER, w2, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.reduce_scatter.grads.l1.", OG_REDUCESCATTER, g4, all, 16), 1);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_REDUCESCATTER), 6);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_ALLGATHER), 8);
    og_free(g);

    g = graph("tp=1,dp=16,gbs=32,zero=3,hpz=4", &l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.l0.mb0", OG_ALLGATHER, w2, all, 16), 1);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.l1.mb0", OG_ALLGATHER, w2, all, 16), 1);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.l0.mb1", OG_ALLGATHER, w2, blk4, 4), 1);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_bwd.", OG_ALLGATHER, w2, blk4, 4), 4);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_ALLGATHER), 8);
    /* gradients unchanged: over all 16 every micro-batch */
    CU_ASSERT_EQUAL(colls(g, 5, "dp.reduce_scatter.grads.l1.", OG_REDUCESCATTER, g4, all, 16), 1);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_REDUCESCATTER), 6);
    og_free(g);

    g = graph("tp=1,dp=16,gbs=32,zero=3,hpz=2,hgz=8", &l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd_inter.", OG_ALLGATHER, 788096, across, 2), 2);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd_mid.", OG_ALLGATHER, 3152384, mid, 4), 2);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.", OG_ALLGATHER, w2, pair, 2), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_bwd.", OG_ALLGATHER, w2, pair, 2), 4);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_ALLGATHER), 12);
    /* the first gather's steps run in that order (one stream): inter, mid, pair */
    int seen = 0;
    for (int i = 0; i < g->ranks[5].nops && seen < 3; i++) {
        const char *lb = og_label(g, &g->ranks[5].ops[i]);
        if (!lb || strncmp(lb, "dp.all_gather.param_fwd", 23)) continue;
        const char *want[3] = {"_inter.l0.mb0", "_mid.l0.mb0", ".l0.mb0"};
        CU_ASSERT_STRING_EQUAL(lb + 23, want[seen]);
        seen++;
    }
    CU_ASSERT_EQUAL(colls(g, 5, "dp.reduce_scatter.grads_intra.l1.", OG_REDUCESCATTER, g4, node0, 8), 1);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.reduce_scatter.grads_inter.l3.", OG_REDUCESCATTER, 1576192, across, 2), 1);
    CU_ASSERT_EQUAL(collectives(g, 5, OG_REDUCESCATTER), 6 + 4);
    og_free(g);

    g = graph("tp=1,dp=16,gbs=32,zero=3,qwz=on,qgz=on", &l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(colls(g, 0, "dp.all_gather.param_fwd.", OG_ALLGATHER, 3201664, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 0, "dp.all_gather.param_bwd.", OG_ALLGATHER, 3201664, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 0, "dp.alltoall.grads_intra.l1.", OG_ALLTOALL, 1625456, node0, 8), 1);
    CU_ASSERT_EQUAL(colls(g, 0, "dp.alltoall.grads_inter.l1.", OG_ALLTOALL, 203184, across0, 2), 1);
    CU_ASSERT_EQUAL(collectives(g, 0, OG_ALLTOALL), 2 * 6);
    CU_ASSERT_EQUAL(collectives(g, 0, OG_REDUCESCATTER), 0);
    /* quantise / dequantise around every gather; quantise, reduce after each all-to-all */
    CU_ASSERT_EQUAL(computes(g, 0, "comp.qwz_quant."), 8);
    CU_ASSERT_EQUAL(computes(g, 0, "comp.qwz_dequant."), 8);
    CU_ASSERT_EQUAL(computes(g, 0, "comp.qgz_quant."), 6);
    CU_ASSERT_EQUAL(computes(g, 0, "comp.qgz_reduce."), 12);
    og_free(g);
}

/* DeepSpeed 2021's stage 3 (--stack deepspeed-2021): one gather per weight
 * matrix before its submodule, forward and (no recompute) backward, on all 16
 * ranks: QKV 3h^2 x 2 bytes = 1,572,864, fc1 4h^2 x 2 = 2,097,152; one
 * reduce-scatter per weight after its weight gradient (fp32: QKV 3h^2 x 4 =
 * 3,145,728), 4 per layer and micro-batch; each ZeRO-3 collective followed by
 * its shortfall against the modelled rate, and the compute stream waiting for
 * the previous reduce-scatter before the next is issued. */
static void test_ds2021(void)
{
    wl_layout l;
    wl_model m;
    cm_gpu gpu;
    wl_info info;
    char err[TS_ERRLEN];
    const int all[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    CU_ASSERT_EQUAL_FATAL(setup("tp=1,dp=16,gbs=32,zero=3", 16, &m, &l, err), 0);
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &gpu, err, sizeof err), 0);
    const wl_stack *st = wl_stack_find("deepspeed-2021", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT(st->z3_sync && st->z3_eff > 0 && st->z3_eff < 1);
    wl_opts o = {512, CM_BF16, &gpu, &zpp_net, 0, 0, st};
    og_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(wl_build(&m, &l, &o, &g, &info, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(og_check(g, "ds2021", err, sizeof err), 0);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd_qkv.", OG_ALLGATHER, 1572864, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd_fc1.", OG_ALLGATHER, 2097152, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_bwd_qkv.", OG_ALLGATHER, 1572864, all, 16), 4);
    CU_ASSERT_EQUAL(colls(g, 5, "dp.all_gather.param_fwd.", OG_ALLGATHER, 0, all, 16), 0); /* no per-layer gather */
    int rs = 0, qkv = 0;
    for (int i = 0; i < g->ranks[5].nops; i++) {
        const og_op *op = &g->ranks[5].ops[i];
        if (op->kind != OG_COLL || op->coll != OG_REDUCESCATTER || !og_label(g, op)) continue;
        rs += !strncmp(og_label(g, op), "dp.reduce_scatter.grads.l0.mb", 29) && strcmp(og_label(g, op) + 29, "-1");
        qkv += op->bytes == 3145728;
    }
    CU_ASSERT_EQUAL(rs, 8);  /* 4 weights x 2 micro-batches */
    CU_ASSERT_EQUAL(qkv, 4); /* QKV's, once per layer and micro-batch */
    CU_ASSERT_EQUAL(computes(g, 5, "dp.all_gather.param_fwd_qkv_shortfall."), 4);
    CU_ASSERT(computes(g, 5, "comp.wait_grads.") >= 14);
    og_free(g);
}

/* Memory, GPT-NeoX-20B on 384 GCDs, tp=1: h = 6144, 44 layers of 12h^2 + 13h,
 * untied embeddings of V = 50,432 (already a multiple of 128) and a final norm:
 * P = 44 (12h^2 + 13h) + 2 V h + 2h = 20,554,567,680 parameters, all on the rank
 * before sharding. bf16: weights 2, gradients 4, Adam 12 bytes per parameter.
 * ZeRO-3: 2P/384, 4P/384, 12P/384; hpz=8 adds the secondary shard 2P/8; the
 * 3-level (hpz=2, hgz=8) holds 2P/384 + 2P/2 of weights and 4P/8 of gradients. */
static void test_memory_terms(void)
{
    wl_model m;
    wl_layout l;
    mem_breakdown z3, mb;
    char err[TS_ERRLEN];
    const double h = 6144, V = 50432, P = 44 * (12 * h * h + 13 * h) + 2 * V * h + 2 * h, cap = 64 * 1073741824.0;
    CU_ASSERT_DOUBLE_EQUAL(P, 20554567680.0, 0.5);
    CU_ASSERT_EQUAL_FATAL(wl_model_find("gpt-neox-20b", "configs/models", &m, err, sizeof err), 0);
    const char *lays[3] = {"tp=1,dp=384,gbs=1536,zero=3,recompute=full",
                           "tp=1,dp=384,gbs=1536,zero=3,hpz=8,qwz=on,qgz=on,recompute=full",
                           "tp=1,dp=384,gbs=1536,zero=3,hpz=2,hgz=8,recompute=full"};
    const double want_w[3] = {2 * P / 384, 2 * P / 384 + 2 * P / 8, 2 * P / 384 + 2 * P / 2};
    const double want_g[3] = {4 * P / 384, 4 * P / 384, 4 * P / 8};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(lays[i], &l, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &m, 2048, 384, err, sizeof err), 0);
        mem_estimate(&m, &l, 2048, CM_BF16, cap, i ? &mb : &z3);
        const mem_breakdown *b = i ? &mb : &z3;
        CU_ASSERT(fabs(b->weights - want_w[i]) / want_w[i] < 1e-9);
        CU_ASSERT(fabs(b->grads - want_g[i]) / want_g[i] < 1e-9);
        CU_ASSERT(fabs(b->optim - 12 * P / 384) / (12 * P / 384) < 1e-9);
        /* activations and workspace are ZeRO-3's */
        CU_ASSERT_DOUBLE_EQUAL(b->activations, z3.activations, 1);
        CU_ASSERT_DOUBLE_EQUAL(b->workspace, z3.workspace, 1);
        CU_ASSERT(b->fits);
    }
}

/* ---- inter-node bytes on a simulated 2-node Frontier ---- */

/* Bytes carried by the GCD-NIC links (every inter-node byte crosses two: the
 * sender's and the receiver's) for ZeRO-3 and for hpz=8 on 16 GCDs. */
static int nic_bytes(void *arg, char *msg, size_t n)
{
    double *out = arg;
    const char *lays[2] = {"tp=1,dp=16,gbs=32,zero=3", "tp=1,dp=16,gbs=32,zero=3,hpz=8"};
    if (eng_load("frontier:2", 0, NULL, msg, n) < 0) return -1;
    /* the closed form counts a ring's data bytes: Simple moves no more on the
     * wire (LL128 and LL, which the tuner may pick, add their flag bytes) */
    coll_policy *pol = coll_policy_new();
    if (coll_policy_force(pol, "allgather=ring:simple,reducescatter=ring:simple,allreduce=ring:simple", msg, n) < 0)
        return -1;
    eng_set_policy(pol);
    for (int k = 0; k < 2; k++) {
        wl_model m;
        wl_layout l;
        cm_gpu gpu;
        wl_info info;
        og_graph *g = NULL;
        if (setup(lays[k], 16, &m, &l, msg) < 0 || cm_gpu_find("mi250x-gcd", "configs/gpus", &gpu, msg, n) < 0)
            return -1;
        wl_opts o = {512, CM_BF16, &gpu, &zpp_net, 0, 0, NULL};
        if (wl_build(&m, &l, &o, &g, &info, msg, n) < 0) return -1;
        eng_opts eo = {ENG_PIPELINED, 100000, 0, 0, 0};
        eng_result *res = NULL;
        int rc = eng_run(g, &eo, &res, msg, n);
        og_free(g);
        if (rc < 0) return -1;
        out[2 * k] = out[2 * k + 1] = 0;
        for (int i = 0; i < res->nlinks; i++) {
            if (strstr(res->links[i].name, "-nic")) out[2 * k] += res->links[i].bytes;
            if (strstr(res->links[i].name, "-l")) out[2 * k + 1] += res->links[i].bytes;
        }
        eng_result_free(res);
    }
    eng_set_policy(NULL);
    coll_policy_free(pol);
    snprintf(msg, n, "%.17g %.17g %.17g %.17g", out[0], out[1], out[2], out[3]);
    return 0;
}

/* Ring collectives on a group of 16 consecutive GCDs over 2 nodes cross between
 * the nodes on 2 of their 16 edges; an all-gather or reduce-scatter of B bytes
 * sends 15/16 B over each edge, so 2 x 15/16 B cross, each byte through 2 NIC
 * links: 3.75 B of NIC-link bytes. Per iteration (see test_graph_collectives),
 * ZeRO-3: 8 gathers of 2P, 4 reduce-scatters of a layer's 4P, and those of the
 * output layer and of the embeddings with the final norm, E = 4 (2 V h + 2h) =
 * 4,198,400 bytes: 3.75 (32P + E); hpz=8 keeps 2 of the gathers (the first
 * forward's, from the primary shards) and all the gradients: 3.75 (20P + E).
 * Ratio (20P + E) / (32P + E) = 0.640. The ring runs one channel per GCD
 * across the nodes (NCCL's channels), which crosses the same bytes spread over
 * the 4 NICs of each node; it is forced with the Simple protocol, whose wire
 * bytes are the data bytes. The 5% tolerance covers chunk rounding. */
static void test_sim_internode(void)
{
    double b[4] = {0};
    char msg[4096];
    int rc = test_child(nic_bytes, b, msg, sizeof msg);
    if (rc) fprintf(stderr, "\nzeropp sim: %s\n", msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(sscanf(msg, "%lg %lg %lg %lg", &b[0], &b[1], &b[2], &b[3]), 4);
    const double E = 4 * (2 * 1024.0 * 512 + 2 * 512), want = (20 * P_LAYER + E) / (32 * P_LAYER + E);
    fprintf(stderr, "(NIC bytes zero3 %.4g, hpz %.4g: %.3f, closed form %.3f) ", b[0], b[2], b[2] / b[0], want);
    CU_ASSERT(b[2] < b[0]);
    CU_ASSERT(fabs(b[0] / (3.75 * (32 * P_LAYER + E)) - 1) < 0.05);
    CU_ASSERT(fabs(b[2] / (3.75 * (20 * P_LAYER + E)) - 1) < 0.05);
    CU_ASSERT_DOUBLE_EQUAL(b[2] / b[0], want, 0.02);
    /* the gathers that left the network run on the node's Infinity Fabric */
    CU_ASSERT(b[3] > b[1]);
}

/* trainsim run: a bad key is a usage error (exit status 2) naming it; a good
 * layout prints it back with its ZeRO++ / hierarchical keys. */
static void test_run_cli(void)
{
    static char out[1 << 14];
    CU_ASSERT_EQUAL(test_cli("run --model gpt-neox-20b --gpu mi250x-gcd --fidelity estimate --layout "
                             "tp=1,dp=16,zero=2,hpz=8", out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "hpz=8 needs zero=3"));
    CU_ASSERT_EQUAL(test_cli("run --model gpt-neox-20b --gpu mi250x-gcd --fidelity estimate --layout "
                             "tp=1,dp=16,zero=3,hpz=8,qgz=sometimes", out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "qgz=sometimes (valid: on, off)"));
    CU_ASSERT_EQUAL(test_cli("run --model gpt-neox-20b --gpu mi250x-gcd --fidelity estimate --layout "
                             "tp=1,dp=16,gbs=64,zero=3,hpz=2,hgz=8,recompute=full", out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "hpz=2,hgz=8,qwz=off,qgz=off"));
}

void suite_zeropp(void)
{
    test_add_suite("zeropp", "layout keys good and bad", test_keys, "op graph collectives by hand",
                   test_graph_collectives, "DeepSpeed 2021 per-weight ZeRO-3", test_ds2021, "memory terms by hand", test_memory_terms,
                   "hpZ moves fewer inter-node bytes (SimGrid)", test_sim_internode, "trainsim run keys",
                   test_run_cli, NULL);
}
