/* AxoNN 4D: the closed-form estimate (wl_estimate) against the critical path of
 * the op graph, and both against hand counts of the grid's all-reduces with and
 * without AxoNN's overlap. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytic/analytic.h"
#include "coll.h"
#include "coll_params.h"
#include "tests.h"
#include "workload/workload.h"

static wl_model tiny;
static cm_gpu a100;

static int setup(void)
{
    char err[512];
    if (wl_model_load(test_data("search-tiny.json"), &tiny, err, sizeof err) < 0 ||
        cm_gpu_find("a100", "configs/gpus", &a100, err, sizeof err) < 0) {
        fprintf(stderr, "axonn setup: %s\n", err);
        return -1;
    }
    /* these tests check AxoNN's structure on the A100's burst GEMM rates (the hand counts and the
     * recorded estimates were made on them), not the A100's inferred training factor */
    memset(a100.sustained, 0, sizeof a100.sustained);
    return 0;
}

/* Critical path of the op graph (replica 0) and the compute seconds of one of its ranks. */
static int graph_time(const wl_layout *l, const wl_opts *o, double *crit, double *compute)
{
    char err[512];
    og_graph *g = NULL;
    eng_result *res = NULL;
    wl_info info;
    if (wl_build(&tiny, l, o, &g, &info, err, sizeof err) < 0 || an_run(g, o->net, &res, err, sizeof err) < 0) {
        fprintf(stderr, "axonn graph: %s\n", err);
        og_free(g);
        return -1;
    }
    *crit = res->makespan;
    *compute = info.compute_s / info.ranks_built;
    eng_result_free(res);
    og_free(g);
    return 0;
}

/* The estimate walks one rank's streams with the op graph's rules (the gather
 * prefetched one GEMM ahead, dX all-reduce beside the weight gradient, the
 * reduce-scatters and DP all-reduces on streams of their own), so on these
 * symmetric grids it must give the graph's critical path; tolerance 1e-9
 * relative (rounding only). Placement: 4 GPUs per node, so the x, y, z and dp
 * groups fall inside or across nodes depending on the grid. */
static void test_estimate_matches_graph(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    an_net net = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL};
    wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
    static const char *lays[] = {
        "gx=2,gy=2,gz=2,dp=2,gbs=16",
        "gx=1,gy=1,gz=2,dp=8,gbs=16",
        "gx=2,gy=1,gz=2,dp=4,gbs=16,recompute=full",
        "gx=1,gy=2,gz=2,dp=4,gbs=16,recompute=selective",
        "gx=1,gy=1,gz=16,dp=1,gbs=16",
        "gx=4,gy=2,gz=2,dp=1,gbs=8,mbs=2",
        "gx=1,gy=8,gz=1,dp=2,gbs=16",
        "gx=2,gy=2,gz=4,dp=1,gbs=16,overlap=off",
        "gx=8,gy=1,gz=2,dp=1,gbs=16,overlap=off",
    };
    for (size_t i = 0; i < sizeof lays / sizeof lays[0]; i++) {
        char err[512];
        wl_layout l;
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(lays[i], &l, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, o.seq, wl_layout_ngpus(&l), err, sizeof err), 0);
        wl_est e;
        CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e, err, sizeof err), 0);
        double crit, comp;
        CU_ASSERT_EQUAL_FATAL(graph_time(&l, &o, &crit, &comp), 0);
        if (fabs(e.iter - crit) > 1e-9 * crit) fprintf(stderr, "\n%s: estimate %.9g, graph %.9g\n", lays[i], e.iter, crit);
        CU_ASSERT(fabs(e.iter - crit) <= 1e-9 * crit);
        CU_ASSERT(fabs(e.compute + e.optimizer - comp) <= 1e-9 * comp); /* the same ops, costed alike */
        CU_ASSERT(e.tp_exposed >= 0 && e.dp_exposed >= 0);
    }
}

/* The estimate's cost memo must not serve one selection policy's times to
 * another: with every grid collective forced to recursive doubling, after
 * the same layout was estimated automatically, the estimate still equals
 * the op graph's critical path under that policy, and differs from the
 * automatic one. */
static void test_estimate_policy(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    an_net net = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL};
    wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
    char err[512];
    wl_layout l;
    CU_ASSERT_EQUAL_FATAL(wl_layout_parse("gx=2,gy=2,gz=2,dp=2,gbs=16", &l, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, o.seq, wl_layout_ngpus(&l), err, sizeof err), 0);
    wl_est e0, e1;
    CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e0, err, sizeof err), 0);
    coll_policy *pol = coll_policy_new();
    CU_ASSERT_EQUAL_FATAL(coll_policy_force(pol, "allreduce=rhd,allgather=rhd,reducescatter=rhd", err, sizeof err), 0);
    net.policy = pol;
    CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e1, err, sizeof err), 0);
    double crit, comp;
    CU_ASSERT_EQUAL_FATAL(graph_time(&l, &o, &crit, &comp), 0);
    CU_ASSERT(fabs(e1.iter - crit) <= 1e-9 * crit);
    CU_ASSERT(fabs(e1.iter - e0.iter) > 1e-9 * e0.iter);
    coll_policy_free(pol);
}

/* ZeRO-1/2 shard the optimizer step over the data-parallel group as they shard
 * its memory: on dp=4 the step's bytes are a quarter of zero=0's (the three
 * kernels' launch floors aside), and zero=1 and zero=2 step alike. */
static void test_optimizer_sharded(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    an_net net = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL};
    wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
    char err[512];
    const char *lays[3] = {"gx=2,gy=2,gz=1,dp=4,gbs=16,zero=0", "gx=2,gy=2,gz=1,dp=4,gbs=16,zero=1",
                           "gx=2,gy=2,gz=1,dp=4,gbs=16,zero=2"};
    double opt[3];
    for (int k = 0; k < 3; k++) {
        wl_layout l;
        wl_est e;
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(lays[k], &l, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, o.seq, wl_layout_ngpus(&l), err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e, err, sizeof err), 0);
        opt[k] = e.optimizer;
    }
    double floor = 3 * a100.kernel_overhead;
    CU_ASSERT(opt[0] > 0);
    CU_ASSERT_DOUBLE_EQUAL((opt[1] - floor) / (opt[0] - floor), 0.25, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(opt[2], opt[1], 1e-15);
}

/* Overlap never loses: each layout with overlap=on is no slower than off, and
 * strictly faster when the grid has a z or y dimension across nodes. */
static void test_overlap_helps(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    an_net net = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL};
    wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
    static const char *grids[] = {"gx=2,gy=2,gz=2,dp=2", "gx=1,gy=8,gz=1,dp=2", "gx=1,gy=1,gz=8,dp=2",
                                  "gx=2,gy=1,gz=1,dp=8"};
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        double t[2];
        for (int off = 0; off < 2; off++) {
            char s[128], err[512];
            snprintf(s, sizeof s, "%s,gbs=16,overlap=%s", grids[i], off ? "off" : "on");
            wl_layout l;
            wl_est e;
            CU_ASSERT_EQUAL_FATAL(wl_layout_parse(s, &l, err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, o.seq, 0, err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e, err, sizeof err), 0);
            t[off] = e.iter;
        }
        CU_ASSERT(t[0] <= t[1]);
        if (i < 3) CU_ASSERT(t[0] < 0.99 * t[1]);
    }
}

/* Hand count: gx=1, gy=2, gz=1, dp=1 on two one-GPU nodes (10 GB/s, 5 us),
 * one micro-batch of T = 1024 tokens, the tiny model (L = 8 layers, h = 1024,
 * ffn 4096, vocabulary 32000). Every all-reduce is over y, of B = T h x 2 bytes
 * (activations or their gradients): on 2 ranks a ring of 2 steps, each
 * (1/2) B/bw + lat (the collective model's software latencies are off in
 * the tests: test_bare_params).
 * Forward: after proj and fc2 (their K is split over y): 2L. Backward: after
 * the dX of qkv and fc1 (their N is split over y) and of the logits: 2L + 1.
 * No weight gather (gz = 1), no DP. Without overlap all 4L + 1 = 33 block; with
 * AxoNN's overlap the forward ones still block and each backward one hides
 * behind its weight-gradient GEMM (K/gx x N/gy x T: h x 1.5h, h x ffn/2,
 * h x V/2), which is shorter than it here, so it exposes AR - wgrad. */
static void test_hand_allreduces(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    an_net net = {1, 10e9, 5e-6, 10e9, 5e-6, 0, 0, 0, NULL, 0, NULL, NULL};
    wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
    double T = 1024, h = 1024, L = 8, B = T * h * 2, ar = B / 10e9 + 2 * 5e-6;
    double wg[3] = {cm_gemm_time(&a100, CM_BF16, h, 1.5 * h, T), cm_gemm_time(&a100, CM_BF16, h, 4096 / 2, T),
                    cm_gemm_time(&a100, CM_BF16, h, 32000 / 2, T)};
    for (int k = 0; k < 3; k++) CU_ASSERT_FATAL(wg[k] < ar); /* the case the count assumes */
    double hand_off = (4 * L + 1) * ar;
    double hand_on = 2 * L * ar + L * (ar - wg[0]) + L * (ar - wg[1]) + (ar - wg[2]);
    for (int off = 0; off < 2; off++) {
        char err[512];
        wl_layout l;
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(off ? "gx=1,gy=2,gz=1,dp=1,gbs=1,overlap=off"
                                                  : "gx=1,gy=2,gz=1,dp=1,gbs=1", &l, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, o.seq, 2, err, sizeof err), 0);
        double crit, comp, hand = off ? hand_off : hand_on;
        CU_ASSERT_EQUAL_FATAL(graph_time(&l, &o, &crit, &comp), 0);
        wl_est e;
        CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e, err, sizeof err), 0);
        if (fabs(crit - comp - hand) > 1e-6 * hand)
            fprintf(stderr, "\noverlap=%s: graph exposes %.9g s, hand %.9g s\n", off ? "off" : "on", crit - comp, hand);
        CU_ASSERT(fabs(crit - comp - hand) <= 1e-6 * hand);
        CU_ASSERT(fabs(e.tp_exposed - hand) <= 1e-6 * hand);
    }
}

/* Layout strings: overlap parses, prints, and implies an AxoNN layout; zero=3
 * is refused for AxoNN (its DP does not shard parameters). */
static void test_layout_overlap(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    char err[512], buf[256];
    wl_layout l;
    CU_ASSERT_EQUAL(wl_layout_parse("gx=2,gy=2,gz=2,overlap=off", &l, err, sizeof err), 0);
    CU_ASSERT(l.axonn && l.ax_serial);
    CU_ASSERT_EQUAL(wl_layout_check(&l, &tiny, 1024, 16, err, sizeof err), 0);
    wl_layout_format(&l, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "overlap=off"));
    CU_ASSERT_EQUAL(wl_layout_parse("gx=2,gy=2,gz=2", &l, err, sizeof err), 0);
    CU_ASSERT(!l.ax_serial);
    CU_ASSERT_EQUAL(wl_layout_parse("gx=2,overlap=maybe", &l, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "overlap=maybe"));
    CU_ASSERT_EQUAL(wl_layout_parse("tp=2,overlap=on", &l, err, sizeof err), -1);
    CU_ASSERT_EQUAL(wl_layout_parse("gx=2,gy=2,gz=2,zero=3", &l, err, sizeof err), 0);
    CU_ASSERT_EQUAL(wl_layout_check(&l, &tiny, 1024, 16, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "zero=3"));
}

/* trainsim search costs an AxoNN top K from graphs of 1 and 2 micro-batches,
 * extrapolated to m; iteration and breakdown must equal trainsim run's whole
 * graph of m = 16 micro-batches (the search keeps 9 significant digits). */
static void test_search_top_k_extrapolated(void)
{
    char args[1024], sj[64], rj[64], *out = malloc(1 << 16);
    snprintf(sj, sizeof sj, "/tmp/ts_axonn_%d_s.json", (int)getpid());
    snprintf(rj, sizeof rj, "/tmp/ts_axonn_%d_r.json", (int)getpid());
    snprintf(args, sizeof args, "search --cluster test-cluster --gpus 16 --model %s --gbs 64 --seq 1024 "
             "--fidelity analytical --space 4d --constraint 'gx=2,gy=2,gz=2,mbs=2,zero=1' --top 3 --json %s",
             test_data("search-tiny.json"), sj);
    CU_ASSERT_EQUAL_FATAL(test_cli(args, out, 1 << 16), 0);
    json_error_t je;
    json_t *s = json_load_file(sj, 0, &je), *top = json_object_get(s, "top");
    CU_ASSERT_EQUAL_FATAL(json_array_size(top), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *row = json_array_get(top, i);
        const char *lay = json_string_value(json_object_get(row, "layout"));
        snprintf(args, sizeof args, "run --cluster test-cluster --gpus 16 --model %s --seq 1024 --fidelity analytical "
                 "--layout %s --json %s", test_data("search-tiny.json"), lay, rj);
        CU_ASSERT_EQUAL_FATAL(test_cli(args, out, 1 << 16), 0);
        json_t *r = json_load_file(rj, 0, &je);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double a = json_real_value(json_object_get(row, "iteration_s")), b = json_real_value(json_object_get(r, "iteration_s"));
        CU_ASSERT(b > 0 && fabs(a - b) <= 1e-8 * b);
        CU_ASSERT(fabs(json_real_value(json_object_get(row, "estimate_s")) - b) <= 1e-9 * b);
        static const char *cats[] = {"compute", "tp", "dp"};
        for (int k = 0; k < 3; k++) {
            double x = json_real_value(json_object_get(json_object_get(row, "breakdown_s"), cats[k]));
            double y = json_real_value(json_object_get(json_object_get(r, "breakdown_s"), cats[k]));
            CU_ASSERT(fabs(x - y) <= 1e-8 * b);
        }
        json_decref(r);
    }
    json_decref(s);
    unlink(sj);
    unlink(rj);
    free(out);
}

/* A sample of the 4D space, estimated: the tiny model on 64 GPUs (4 per node)
 * with every grid, micro-batch size, recompute and overlap setting, and the
 * 76B model of the search benchmark on 1,024 (4 per node, the A100 network)
 * with every grid. fn is called with each valid layout and its estimate. */
typedef void (*sample_fn)(void *ctx, const char *lay, const wl_est *e);
static int sample_every = 1; /* estimate one valid layout in sample_every (fn sees the others with e NULL) */

static void sample_4d(sample_fn fn, void *ctx)
{
    wl_model big;
    char err[512];
    an_net net4 = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL}, net76;
    CU_ASSERT_EQUAL_FATAL(wl_model_find("megatron-gpt-76b", "configs/models", &big, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(an_net_default("A100", &net76), 0);
    net76.gpus_per_node = 4;
    static const char *rcs[] = {"none", "selective", "full"};
    for (int set = 0; set < 2; set++) {
        const wl_model *m = set ? &big : &tiny;
        int n = set ? 1024 : 64, seq = set ? 2048 : 1024;
        wl_opts o = {seq, CM_BF16, &a100, set ? &net76 : &net4, 1, 1, NULL};
        for (int gx = 1; gx <= n; gx *= 2)
            for (int gy = 1; gx * gy <= n; gy *= 2)
                for (int gz = 1; gx * gy * gz <= n; gz *= 2)
                    for (int mbs = 1; mbs <= 8; mbs *= set ? 8 : 2)
                        for (int rc = 0; rc < 3; rc += set ? 2 : 1)
                            for (int off = 0; off <= (set ? mbs == 1 : 1); off++) {
                                char s[256];
                                snprintf(s, sizeof s, "gx=%d,gy=%d,gz=%d,dp=%d,mbs=%d,gbs=%d,zero=%d,recompute=%s,overlap=%s",
                                         gx, gy, gz, n / (gx * gy * gz), mbs, set ? 1024 : 64, rc ? 2 : 1, rcs[rc],
                                         off ? "off" : "on");
                                wl_layout l;
                                wl_est e;
                                if (wl_layout_parse(s, &l, err, sizeof err) < 0 ||
                                    wl_layout_check(&l, m, seq, n, err, sizeof err) < 0)
                                    continue;
                                static long k;
                                if (sample_every > 1 && k++ % sample_every) {
                                    fn(ctx, s, NULL);
                                    continue;
                                }
                                CU_ASSERT_EQUAL_FATAL(wl_estimate(m, &l, &o, &e, err, sizeof err), 0);
                                fn(ctx, s, &e);
                            }
    }
}

#define EST_FIELDS(e) e.iter, e.compute, e.pipeline, e.tp_exposed, e.dp_exposed, e.optimizer, e.tf, e.tb, e.tw

static void record_one(void *ctx, const char *lay, const wl_est *e)
{
    fprintf(ctx, "%s;%.17g;%.17g;%.17g;%.17g;%.17g;%.17g;%.17g;%.17g;%.17g\n", lay, EST_FIELDS((*e)));
}

typedef struct recorded {
    FILE *f;
    int rows, bad;
} recorded;

static void compare_one(void *ctx, const char *lay, const wl_est *e)
{
    recorded *r = ctx;
    char line[512], key[256];
    wl_est x;
    if (!fgets(line, sizeof line, r->f) ||
        sscanf(line, "%255[^;];%lf;%lf;%lf;%lf;%lf;%lf;%lf;%lf;%lf", key, &x.iter, &x.compute, &x.pipeline,
               &x.tp_exposed, &x.dp_exposed, &x.optimizer, &x.tf, &x.tb, &x.tw) != 10 || strcmp(key, lay)) {
        if (r->bad++ < 5) fprintf(stderr, "\n%s: no recorded row (read '%.60s')\n", lay, line);
        return;
    }
    r->rows++;
    const double a[9] = {EST_FIELDS((*e))}, b[9] = {EST_FIELDS(x)};
    for (int k = 0; k < 9; k++)
        if (!(fabs(a[k] - b[k]) <= 1e-12 * x.iter)) {
            if (r->bad++ < 5) fprintf(stderr, "\n%s: field %d is %.17g, recorded %.17g\n", lay, k, a[k], b[k]);
            return;
        }
}

/* The estimate's walk is a closed form (layers and micro-batches repeat the
 * same max-plus map of the streams' clocks): on the sample above it must give,
 * to 1e-12 of the iteration, every figure of tests/data/axonn_estimates.csv.
 * The file was first the step-by-step walk of b325a67 with its clocks in long
 * double (in double, its 10^5-10^6 sequential sums drift by up to 2.2e-11 of
 * the iteration; the closed form stays within 1e-14 of it). When the
 * collective cost model changed under it (merge of h-coll), the step-by-step
 * walk was rebuilt on the new costs, the closed form agreed with it within
 * 1.6e-11 of the iteration (its double drift) on every row, and the sample
 * was rewritten from the closed form; rewritten again when the wire floor
 * charged each step the latency of the link it crosses (merge of h-dgx), and when the analytical
 * filling weighted link shares by route latency (merge of h-anmesh: 772 of 27,414 fields moved, by at
 * most 5.6e-16 of the iteration, rounding), and when a ring across nodes took the network latency on its
 * network hops only and NCCL's post overhead on its NVLink steps (h-ringlat: 4,892 of 27,414 fields of
 * 1,495 rows moved, by at most 5.1% of the iteration). TS_RECORD=FILE bin/test_trainsim axonn
 * writes the sample anew. */
static void test_estimate_recorded(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    const char *rec = getenv("TS_RECORD");
    if (rec) {
        FILE *f = fopen(rec, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        sample_4d(record_one, f);
        fclose(f);
        return;
    }
    recorded r = {fopen(test_data("axonn_estimates.csv"), "r"), 0, 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.f);
    sample_4d(compare_one, &r);
    char line[8];
    CU_ASSERT_PTR_NULL(fgets(line, sizeof line, r.f)); /* every recorded row compared */
    fclose(r.f);
    CU_ASSERT_EQUAL(r.bad, 0);
    CU_ASSERT(r.rows > 1000);
}

/* The memos (collective times per group shape and size, GEMM times, coll's
 * merged views) change no figure: the sample estimated with every memo off,
 * one layout in 7, equals bit for bit the sample estimated with them on
 * (warm, in sample order), and both equal the recorded sample exactly. */
typedef struct memo_run {
    int n, cap, pass, bad;
    wl_est *e;
} memo_run;

static void memo_one(void *ctx, const char *lay, const wl_est *e)
{
    memo_run *r = ctx;
    int i = r->n++;
    if (r->pass == 0) {
        if (i >= r->cap) return;
        r->e[i] = *e;
        return;
    }
    if (!e || i >= r->cap) return;
    const double a[9] = {EST_FIELDS((*e))}, b[9] = {EST_FIELDS(r->e[i])};
    for (int k = 0; k < 9; k++)
        if (a[k] != b[k] && r->bad++ < 5) fprintf(stderr, "\n%s: field %d uncached %.17g, memoised %.17g\n", lay, k, a[k], b[k]);
}

static void test_estimate_memo_exact(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    memo_run r = {0, 4096, 0, 0, NULL};
    r.e = calloc(r.cap, sizeof *r.e);
    wl_memo(1);
    sample_4d(memo_one, &r);
    int rows = r.n;
    CU_ASSERT(rows > 1000 && rows <= r.cap);
    /* the memoised figures are the recorded ones, exactly */
    recorded rec = {fopen(test_data("axonn_estimates.csv"), "r"), 0, 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec.f);
    char line[512], key[256];
    for (int i = 0; i < rows && fgets(line, sizeof line, rec.f); i++) {
        wl_est x;
        CU_ASSERT_EQUAL_FATAL(sscanf(line, "%255[^;];%lf;%lf;%lf;%lf;%lf;%lf;%lf;%lf;%lf", key, &x.iter, &x.compute,
                                     &x.pipeline, &x.tp_exposed, &x.dp_exposed, &x.optimizer, &x.tf, &x.tb, &x.tw), 10);
        const double a[9] = {EST_FIELDS(r.e[i])}, b[9] = {EST_FIELDS(x)};
        for (int k = 0; k < 9; k++)
            if (a[k] != b[k] && rec.bad++ < 5) fprintf(stderr, "\n%s: field %d %.17g, recorded %.17g\n", key, k, a[k], b[k]);
        rec.rows++;
    }
    fclose(rec.f);
    CU_ASSERT_EQUAL(rec.rows, rows);
    CU_ASSERT_EQUAL(rec.bad, 0);
    /* every memo off: the same figures, bit for bit */
    wl_memo(0);
    r.n = 0, r.pass = 1;
    sample_every = 7;
    sample_4d(memo_one, &r);
    sample_every = 1;
    wl_memo(1);
    CU_ASSERT_EQUAL(r.n, rows);
    CU_ASSERT_EQUAL(r.bad, 0);
    free(r.e);
}

/* The memo of an_sched_time_nodes keys on which members share a node, not on
 * the node ids: two placements of one shape give the uncached figure of each,
 * bit for bit; a change of the cost parameters (coll_params_set) or of the
 * policy (forcing an algorithm on the same policy object) is seen at once. */
static void test_sched_memo_key(void)
{
    an_net net;
    CU_ASSERT_EQUAL_FATAL(an_net_default("H100", &net), 0);
    coll_policy *pol = coll_policy_new();
    net.policy = pol;
    const int a[8] = {0, 0, 0, 0, 1, 1, 1, 1}, b[8] = {7, 7, 7, 7, 3, 3, 3, 3}, c[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    const int64_t bytes = 64 << 20;
    coll_params saved = *coll_params_get();
    double ref[3][3];
    for (int pass = 0; pass < 2; pass++) { /* uncached, then memoised (twice each) */
        an_memo(pass == 1);
        for (int rep = 0; rep < 1 + pass; rep++) {
            coll_policy_free(pol);
            net.policy = pol = coll_policy_new(); /* automatic selection */
            double t[3][3];
            t[0][0] = an_sched_time_nodes(&net, 8, a, OG_ALLREDUCE, bytes);
            t[0][1] = an_sched_time_nodes(&net, 8, b, OG_ALLREDUCE, bytes);
            t[0][2] = an_sched_time_nodes(&net, 8, c, OG_ALLREDUCE, bytes);
            coll_params q = saved;
            for (int f = 0; f < COLL_NFAMS; f++)
                for (int k = 0; k < COLL_NPROTOS; k++) q.base_lat[f][k] += 1e-6;
            coll_params_set(&q);
            t[1][0] = an_sched_time_nodes(&net, 8, a, OG_ALLREDUCE, bytes);
            t[1][1] = an_sched_time_nodes(&net, 8, b, OG_ALLREDUCE, bytes);
            t[1][2] = an_sched_time_nodes(&net, 8, c, OG_ALLREDUCE, bytes);
            char err[256];
            CU_ASSERT_EQUAL(coll_policy_force(pol, "allreduce=tree", err, sizeof err), 0);
            t[2][0] = an_sched_time_nodes(&net, 8, a, OG_ALLREDUCE, bytes);
            t[2][1] = an_sched_time_nodes(&net, 8, b, OG_ALLREDUCE, bytes);
            t[2][2] = an_sched_time_nodes(&net, 8, c, OG_ALLREDUCE, bytes);
            coll_params_set(&saved);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    if (pass == 0) ref[i][j] = t[i][j];
                    else CU_ASSERT_EQUAL(t[i][j], ref[i][j]); /* exactly */
                }
        }
    }
    /* the cases differ, so a stale value would show */
    CU_ASSERT_EQUAL(ref[0][0], ref[0][1]);
    CU_ASSERT_NOT_EQUAL(ref[0][0], ref[0][2]);
    CU_ASSERT_NOT_EQUAL(ref[0][0], ref[1][0]);
    CU_ASSERT_NOT_EQUAL(ref[1][0], ref[2][0]);
    an_memo(1);
    coll_policy_free(pol);
}

/* The estimate's memo across estimates follows what its collectives read:
 * the network's figures changed in place (the same an_net), the cost
 * parameters (coll_params_set) and the policy (an algorithm forced on the
 * same policy object), each seen at the next estimate: every figure equals
 * the estimate with the memos off, bit for bit, and each change moves it. */
static void test_estimate_memo_context(void)
{
    if (setup() < 0) {
        CU_FAIL("setup");
        return;
    }
    wl_layout l;
    char err[512];
    CU_ASSERT_EQUAL_FATAL(wl_layout_parse("gx=2,gy=2,gz=2,dp=2,gbs=16", &l, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(wl_layout_check(&l, &tiny, 1024, wl_layout_ngpus(&l), err, sizeof err), 0);
    coll_params saved = *coll_params_get();
    double iter[2][4];
    for (int pass = 0; pass < 2; pass++) { /* memoised, then every memo off */
        wl_memo(pass == 0);
        coll_policy *pol = coll_policy_new();
        an_net net = {4, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, pol, 0, NULL, NULL};
        wl_opts o = {1024, CM_BF16, &a100, &net, 1, 1, NULL};
        wl_est e;
        for (int step = 0; step < 4; step++) {
            if (step == 1) net.inter_bw /= 2;
            if (step == 2) {
                coll_params q = saved;
                for (int f = 0; f < COLL_NFAMS; f++)
                    for (int k = 0; k < COLL_NPROTOS; k++) q.base_lat[f][k] += 20e-6;
                coll_params_set(&q);
            }
            if (step == 3)
                CU_ASSERT_EQUAL(coll_policy_force(pol, "allreduce=rhd,allgather=rhd,reducescatter=rhd", err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(wl_estimate(&tiny, &l, &o, &e, err, sizeof err), 0);
            iter[pass][step] = e.iter;
        }
        coll_params_set(&saved);
        coll_policy_free(pol);
    }
    wl_memo(1);
    for (int step = 0; step < 4; step++) {
        CU_ASSERT_EQUAL(iter[0][step], iter[1][step]); /* exactly */
        if (step > 0) CU_ASSERT_NOT_EQUAL(iter[1][step], iter[1][step - 1]);
    }
}

void suite_axonn(void)
{
    test_add_suite("axonn", "estimate equals the op graph's critical path", test_estimate_matches_graph,
                   "estimate under a selection policy", test_estimate_policy,
                   "ZeRO-1/2 shard the optimizer step", test_optimizer_sharded,
                   "overlap never slower", test_overlap_helps, "hand count of the y all-reduces",
                   test_hand_allreduces, "layout key overlap, zero=3 refused", test_layout_overlap,
                   "search top K (1 and 2 micro-batches, extrapolated) equals run", test_search_top_k_extrapolated,
                   "estimate equals the recorded step-by-step walk", test_estimate_recorded,
                   "memoised and uncached estimates agree exactly", test_estimate_memo_exact,
                   "collective memo keys on the node pattern, parameters and policy", test_sched_memo_key,
                   "estimate memo follows the network, parameters and policy", test_estimate_memo_context, NULL);
}
