/* Layout search: enumeration counts against hand counts, pruning, the best
 * layout of a constructed case, serial vs MPI output, memory never exceeded. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory/memory.h"
#include "search/search.h"
#include "tests.h"

static wl_model tiny;
static cm_gpu h100;
static an_net net;

static int setup(srch_params *p, int ngpus, int gbs, int seq)
{
    char err[512];
    if (wl_model_load(test_data("search-tiny.json"), &tiny, err, sizeof err) < 0 ||
        cm_gpu_find("h100", "configs/gpus", &h100, err, sizeof err) < 0 || an_net_default("H100", &net) < 0) {
        fprintf(stderr, "search setup: %s\n", err);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->ngpus = ngpus, p->gbs = gbs, p->seq = seq, p->space = SRCH_3D, p->objective = SRCH_TIME;
    p->dtype = CM_BF16, p->gpu = &h100, p->net = &net;
    return 0;
}

/* Enumeration on 8 GPUs, counted by hand. (tp, pp) pairs with tp*pp | 8:
 * tp=1: pp 1,2,4,8; tp=2: pp 1,2,4; tp=4: pp 1,2; tp=8: pp 1 (10 pairs).
 * Schedules: 1 when pp=1, else 7 (1f1b, interleaved with vpp 2,3,4,6,8, zbh1).
 * sp: 2 values when tp>1. Per schedule: mbs 4 x zero 4 x recompute 3 = 48.
 *   tp=1: 48 + 3*7*48 = 1056;  tp=2: 2*48 + 2*(2*7*48) = 1440
 *   tp=4: 2*48 + 2*7*48 = 768;  tp=8: 2*48 = 96;   total 3360.
 * AxoNN (4d): ordered (gx, gy, gz, dp) with product 8 = 2^3: C(6,3) = 20
 * factorisations x mbs 4 x zero 4 x recompute 3 = 960. */
static void test_enumeration_counts(void)
{
    srch_params p;
    if (setup(&p, 8, 8, 1024) < 0) {
        CU_FAIL("setup");
        return;
    }
    srch_cand *c = NULL;
    CU_ASSERT_EQUAL(srch_enumerate(&tiny, &p, &c), 3360);
    free(c);
    p.space = SRCH_4D;
    CU_ASSERT_EQUAL(srch_enumerate(&tiny, &p, &c), 960);
    free(c);
    p.space = SRCH_ALL; /* adds cp (divisors of the data-parallel part); dense model: no ep */
    size_t all = srch_enumerate(&tiny, &p, &c);
    CU_ASSERT(all > 3360 + 960);
    free(c);

    /* With mbs=1, zero=1, recompute=none: 3360 / 48 = 70 layouts. Rules (gbs 8, 8 layers):
     * interleaved needs pp*vpp | 8 layers: pp=2 keeps vpp 2,4 (drops 3: 3,6,8), pp=4 keeps
     * vpp 2 (drops 4), pp=8 keeps none (drops 5); micro-batches gbs/dp are then multiples
     * of pp everywhere. Dropped: tp=1: 3+4+5 = 12; tp=2 (x2 sp): (3+4)*2 = 14; tp=4 (x2
     * sp, pp=2): 6. Total 32 by rule, 38 left; the 165M-parameter model fits everywhere. */
    p.space = SRCH_3D;
    char err[256];
    CU_ASSERT_EQUAL(srch_parse_constraints("mbs=1,zero=1,recompute=0", &p, err, sizeof err), 0);
    size_t n = srch_enumerate(&tiny, &p, &c);
    CU_ASSERT_EQUAL(n, 70);
    for (size_t i = 0; i < n; i++) srch_evaluate(&tiny, &p, &c[i], NULL, 0);
    srch_counts k;
    srch_count(c, n, &k);
    CU_ASSERT_EQUAL(k.rule, 32);
    CU_ASSERT_EQUAL(k.memory, 0);
    CU_ASSERT_EQUAL(k.estimated, 38);
    CU_ASSERT_EQUAL(k.failed, 0);
    size_t *order = NULL;
    CU_ASSERT_EQUAL(srch_rank(c, n, &order), 38);
    for (size_t j = 1; j < 38; j++) CU_ASSERT(c[order[j - 1]].score <= c[order[j]].score);
    free(order);
    free(c);

    /* cost also tries N/2, N/4, ... down to one GPU: 8 -> 3360, 4 -> tp,pp pairs of 4:
     * (1,1),(1,2),(1,4),(2,1),(2,2),(4,1): 48 + 2*7*48 + 96 + 2*7*48 + 96 = 1584;
     * 2 -> (1,1),(1,2),(2,1): 48 + 7*48 + 96 = 480; 1 -> 48. Total 5472. */
    p.nconstr = 0;
    p.objective = SRCH_COST;
    CU_ASSERT_EQUAL(srch_enumerate(&tiny, &p, &c), 3360 + 1584 + 480 + 48);
    free(c);
}

static void test_constraints(void)
{
    srch_params p;
    char err[256];
    if (setup(&p, 8, 8, 1024) < 0) {
        CU_FAIL("setup");
        return;
    }
    CU_ASSERT_EQUAL(srch_parse_constraints("tp<=2,pp>=2,zero!=3", &p, err, sizeof err), 0);
    CU_ASSERT_EQUAL(p.nconstr, 3);
    srch_cand *c = NULL;
    size_t n = srch_enumerate(&tiny, &p, &c);
    /* tp=1: pp 2,4,8 -> 3*7*4*3*3 = 756 (zero 0,1,2); tp=2: pp 2,4 -> 2*7*4*3*2*3 = 1008 */
    CU_ASSERT_EQUAL(n, 756 + 1008);
    for (size_t i = 0; i < n; i++) CU_ASSERT(c[i].l.tp <= 2 && c[i].l.pp >= 2 && c[i].l.zero != 3);
    free(c);
    CU_ASSERT_EQUAL(srch_parse_constraints("tq<=2", &p, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown key"));
    CU_ASSERT_EQUAL(srch_parse_constraints("tp<<2", &p, err, sizeof err), -1);
    CU_ASSERT_EQUAL(srch_parse_constraints("tp<=", &p, err, sizeof err), -1);
    CU_ASSERT_EQUAL(srch_parse_constraints("tp", &p, err, sizeof err), -1);
}

/* Every candidate the memory model rejects is marked so, and only fitting
 * ones are estimated: on 16 GPUs a 8B model at sequence 8192 prunes many. */
static void test_memory_pruning_library(void)
{
    srch_params p;
    wl_model m;
    char err[256];
    if (setup(&p, 16, 64, 8192) < 0 || wl_model_find("llama3-8b", "configs/models", &m, err, sizeof err) < 0)
        {
        CU_FAIL("setup");
        return;
    }
    srch_cand *c = NULL;
    size_t n = srch_enumerate(&m, &p, &c);
    size_t mem = 0;
    for (size_t i = 0; i < n; i++) {
        srch_evaluate(&m, &p, &c[i], NULL, 0);
        if (c[i].status < SRCH_MEMORY) continue;
        mem_breakdown mb;
        mem_estimate(&m, &c[i].l, p.seq, p.dtype, h100.hbm_bytes, &mb);
        CU_ASSERT_EQUAL(c[i].status == SRCH_MEMORY, !mb.fits);
        mem += c[i].status == SRCH_MEMORY;
    }
    CU_ASSERT(mem > 100);
    free(c);
}

/* AxoNN layouts are ranked by their closed-form estimate (wl_estimate); on
 * these symmetric grids it must equal the critical path of the whole graph. */
static void test_axonn_extrapolation(void)
{
    srch_params p;
    if (setup(&p, 8, 32, 1024) < 0) {
        CU_FAIL("setup");
        return;
    }
    static const char *lays[] = {"gx=2,gy=2,gz=2,dp=1,mbs=1,gbs=32,zero=0", "gx=1,gy=2,gz=1,dp=4,mbs=2,gbs=32,zero=1",
                                 "gx=4,gy=1,gz=1,dp=2,mbs=1,gbs=32,zero=2,recompute=full"};
    for (size_t i = 0; i < sizeof lays / sizeof lays[0]; i++) {
        char err[512];
        srch_cand c;
        memset(&c, 0, sizeof c);
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(lays[i], &c.l, err, sizeof err), 0);
        CU_ASSERT(wl_layout_micro(&c.l) >= 4);
        srch_evaluate(&tiny, &p, &c, err, sizeof err);
        CU_ASSERT_EQUAL_FATAL(c.status, SRCH_ESTIMATED);
        wl_opts o = {p.seq, p.dtype, p.gpu, p.net, 1, 1, NULL};
        og_graph *g = NULL;
        eng_result *res = NULL;
        wl_info info;
        CU_ASSERT_EQUAL_FATAL(wl_build(&tiny, &c.l, &o, &g, &info, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(an_run(g, p.net, &res, err, sizeof err), 0);
        CU_ASSERT(fabs(c.iter - res->makespan) <= 1e-9 * res->makespan);
        eng_result_free(res);
        og_free(g);
    }
}

/* The constructed case: 8 single-GPU nodes on a 100 MB/s network
 * (tests/data/search-slow-net.json), the 165M-parameter model, sequence 128,
 * gbs 8, tensor x data layouts only (pp=1, mbs=1, zero=0, no recompute, no sp).
 * Bytes each GPU moves over its NIC per iteration (ring: 2(n-1)/n of the
 * buffer; fp32 gradients, 4 bytes; P = 8 x 12h^2 + 2 x 32000h = 166.2M):
 *   tp=1, dp=8: DP 1.75 x 4P = 1163 MB                       -> 11.6 s
 *   tp=2, dp=4: DP 1.5 x 4P/2 = 499 MB + TP 1.0 x 256 KiB x 32 x 2 = 17 MB -> 5.2 s
 *   tp=4, dp=2: DP 1.0 x 4P/4 = 166 MB + TP 1.5 x 256 KiB x 32 x 4 = 50 MB -> 2.2 s
 *   tp=8, dp=1: TP 1.75 x 256 KiB x 32 all-reduces x 8 micro-batches = 117 MB -> 1.2 s
 * (256 KiB: one all-reduce of s x h bf16 activations; 4 per layer per micro-batch).
 * Compute is under 0.1 s, so the order is tp=8, 4, 2, 1 by construction. */
static void test_best_by_construction(void)
{
    char *out = malloc(1 << 16);
    char args[1024];
    snprintf(args, sizeof args,
             "search --cluster %s --gpus 8 --model %s --gbs 8 --seq 128 --constraint "
             "'pp=1,mbs=1,zero=0,recompute=0,sp=0' --top 4 --json %s",
             test_data("search-slow-net.json"), test_data("search-tiny.json"), test_tmp("search-best.json"));
    CU_ASSERT_EQUAL(test_cli(args, out, 1 << 16), 0);
    json_error_t je;
    json_t *j = json_load_file(test_tmp("search-best.json"), 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_t *top = json_object_get(j, "top");
    CU_ASSERT_EQUAL(json_array_size(top), 4);
    static const char *want[] = {"tp=8,", "tp=4,", "tp=2,", "tp=1,"};
    static const double hand[] = {1.17, 2.16, 5.16, 11.63};
    for (size_t i = 0; i < 4 && i < json_array_size(top); i++) {
        json_t *r = json_array_get(top, i);
        const char *lay = json_string_value(json_object_get(r, "layout"));
        double it = json_number_value(json_object_get(r, "iteration_s"));
        CU_ASSERT(lay && strncmp(lay, want[i], strlen(want[i])) == 0);
        /* simulated time: the hand traffic plus < 0.1 s of compute, within 5% */
        CU_ASSERT(it >= hand[i] * 0.98 && it <= hand[i] * 1.05);
    }
    json_decref(j);
    free(out);
}

/* Memory pruning end to end: no layout simulated by the search is one the memory
 * model rejects, and the JSON's statuses agree with the memory model. */
static void test_no_unfit_simulated(void)
{
    char *out = malloc(1 << 16), err[256];
    char cmd[512];
    snprintf(cmd, sizeof cmd, "search --cluster test-cluster --gpus 16 --model llama3-8b --gbs 64 --seq 8192 --top 8 "
             "--fidelity analytical --json %s", test_tmp("search-mem.json"));
    CU_ASSERT_EQUAL(test_cli(cmd, out, 1 << 16), 0);
    json_error_t je;
    json_t *j = json_load_file(test_tmp("search-mem.json"), 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    wl_model m;
    cm_gpu gpu;
    CU_ASSERT_EQUAL_FATAL(wl_model_find("llama3-8b", "configs/models", &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("h100", "configs/gpus", &gpu, err, sizeof err), 0);
    json_t *top = json_object_get(j, "top"), *cands = json_object_get(j, "candidates"), *k = json_object_get(j, "counts");
    CU_ASSERT_EQUAL(json_array_size(top), 8);
    CU_ASSERT(json_integer_value(json_object_get(k, "pruned_memory")) > 0);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(k, "simulated")), 8);
    size_t idx;
    json_t *r;
    json_array_foreach(top, idx, r) {
        wl_layout l;
        mem_breakdown mb;
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(json_string_value(json_object_get(r, "layout")), &l, err, sizeof err), 0);
        mem_estimate(&m, &l, 8192, CM_BF16, gpu.hbm_bytes, &mb);
        CU_ASSERT(mb.fits);
    }
    size_t nmem = 0, nest = 0;
    json_array_foreach(cands, idx, r) {
        const char *st = json_string_value(json_object_get(r, "status"));
        if (strcmp(st, "memory") && strcmp(st, "estimated")) continue;
        wl_layout l;
        mem_breakdown mb;
        CU_ASSERT_EQUAL_FATAL(wl_layout_parse(json_string_value(json_object_get(r, "layout")), &l, err, sizeof err), 0);
        mem_estimate(&m, &l, 8192, CM_BF16, gpu.hbm_bytes, &mb);
        CU_ASSERT_EQUAL(mb.fits, strcmp(st, "estimated") == 0);
        nmem += !mb.fits, nest += mb.fits;
    }
    CU_ASSERT_EQUAL(nmem, (size_t)json_integer_value(json_object_get(k, "pruned_memory")));
    CU_ASSERT_EQUAL(nest, (size_t)json_integer_value(json_object_get(k, "estimated")));
    json_decref(j);
    free(out);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = calloc(1, 1 << 22);
    size_t n = fread(b, 1, (1 << 22) - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

/* Serial, forked (--jobs 2, 3, 8: fewer, as many and more processes than
 * the layouts of a rank) and MPI runs (-np 1, 2, 4, oversubscribed; also with
 * --jobs 2 inside each rank) print and write the same bytes. */
static void test_mpi_identical(void)
{
    const char *args = "search --cluster test-cluster --gpus 16 --model llama3-8b --gbs 64 --seq 2048 --top 6 "
                       "--space all --constraint 'mbs<=2,zero<=1,gx=1,gy=1,gz<=2'";
    char cmd[2048], sp[4][64]; /* per process: other checkouts may run this test at once */
    static const char *tag[4] = {"s.json", "s.txt", "m.json", "m.txt"};
    for (int i = 0; i < 4; i++) snprintf(sp[i], sizeof sp[i], "/tmp/ts_search_%d_%s", (int)getpid(), tag[i]);
    snprintf(cmd, sizeof cmd, "bin/trainsim %s --jobs 1 --json %s > %s 2>/dev/null", args, sp[0], sp[1]);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    char *s = slurp(sp[1]), *sj = slurp(sp[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "6 simulated"));
    static const int jobs[] = {2, 3, 8};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "bin/trainsim %s --jobs %d --json %s > %s 2>/dev/null", args, jobs[i], sp[2], sp[3]);
        CU_ASSERT_EQUAL(system(cmd), 0);
        char *m = slurp(sp[3]), *mj = slurp(sp[2]);
        CU_ASSERT(m && strcmp(s, m) == 0);
        CU_ASSERT(mj && sj && strcmp(sj, mj) == 0);
        free(m);
        free(mj);
    }
    /* the Makefile builds the MPI side only where mpicc exists */
    int mpi = system("command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1") == 0;
    if (!mpi) printf("\n  (MPI part skipped: no mpirun or mpicc)\n");
    static const int nps[] = {1, 2, 4, 2}, njobs[] = {1, 1, 1, 2};
    for (int i = 0; mpi && i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "mpirun %s --oversubscribe -np %d bin/trainsim %s --jobs %d --json %s > %s 2>/dev/null",
                 geteuid() == 0 ? "--allow-run-as-root" : "", nps[i], args, njobs[i], sp[2], sp[3]);
        CU_ASSERT_EQUAL(system(cmd), 0);
        char *m = slurp(sp[3]), *mj = slurp(sp[2]);
        CU_ASSERT(m && strcmp(s, m) == 0);
        CU_ASSERT(mj && sj && strcmp(sj, mj) == 0);
        free(m);
        free(mj);
    }
    free(s);
    free(sj);
    for (int i = 0; i < 4; i++) remove(sp[i]);
}

static void test_cli_explain(void)
{
    char *out = malloc(1 << 16);
    /* tp=3 does not divide 8 heads (nor 8 GPUs' worth of anything): a rule */
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --gpus 16 --model llama3-8b --explain tp=8,pp=3",
                             out, 1 << 16), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "pruned by rule"));
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --gpus 16 --model llama3-8b --seq 8192 --gbs 64 "
                             "--explain tp=1,pp=1,mbs=4,zero=0", out, 1 << 16), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "pruned by memory"));
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --gpus 16 --model llama3-8b --seq 2048 --gbs 64 "
                             "--explain tp=4,pp=2,mbs=1 --fidelity analytical", out, 1 << 16), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "estimate "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "exposed tp"));
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --model llama3-8b", out, 1 << 16), 2);
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --gpus 16 --model llama3-8b --space 5d", out, 1 << 16), 2);
    CU_ASSERT_EQUAL(test_cli("search --cluster test-cluster --gpus 16 --model llama3-8b --constraint 'x<1'", out,
                             1 << 16), 2);
    CU_ASSERT_EQUAL(test_cli("search --help", out, 1 << 16), 0);
    /* the plot: an SVG with the Pareto front */
    char pcmd[512];
    snprintf(pcmd, sizeof pcmd, "search --cluster test-cluster --gpus 16 --model llama3-8b --gbs 64 --seq 2048 "
             "--fidelity estimate --plot %s --csv %s", test_tmp("search.svg"), test_tmp("search.csv"));
    CU_ASSERT_EQUAL(test_cli(pcmd, out, 1 << 16), 0);
    char *svg = slurp(test_tmp("search.svg"));
    CU_ASSERT(svg && strstr(svg, "<svg") && strstr(svg, "<polyline") && strstr(svg, "</svg>"));
    free(svg);
    free(out);
}

void suite_search(void)
{
    test_add_suite("search", "enumeration counts (hand count)", test_enumeration_counts, "constraints", test_constraints,
                   "axonn: estimate equals the critical path", test_axonn_extrapolation,
                   "memory pruning (library)", test_memory_pruning_library, "best layout by construction",
                   test_best_by_construction, "no unfit layout simulated", test_no_unfit_simulated,
                   "serial, forked (--jobs) and MPI output identical", test_mpi_identical, "cli: explain, errors, plot",
                   test_cli_explain, NULL);
}
