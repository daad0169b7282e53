/* Recorded inputs as users have them (issue 16): each failure class reproduced
 * with a small file written here, and the fix checked (SimGrid platform
 * versions, SMPI action spellings and index files, Kineto variants, PyTorch
 * execution traces linked with Kineto). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay.h"
#include "tests.h"
#include "trace.h"
#include "util.h"

/* Write text to the scratch file name; returns its path. */
static const char *write_tmp(const char *name, const char *text)
{
    const char *p = test_tmp(name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static og_graph *import_fmt(int n, const char **paths, const char *fmt, char *err)
{
    og_graph *g = NULL;
    tr_opts o = {0};
    o.format = fmt;
    if (tr_import(n, (char *const *)paths, &o, &g, err, TS_ERRLEN) < 0) {
        printf("\n  import failed: %s", err);
        return NULL;
    }
    return g;
}

static int count_kind(const og_graph *g, int r, og_kind k)
{
    int n = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) n += g->ranks[r].ops[i].kind == k;
    return n;
}

/* ------------------------------------------------------------ SimGrid platforms */

static const char v3_platform[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"http://simgrid.gforge.inria.fr/simgrid.dtd\">\n"
    "<platform version=\"%s\">\n"
    "  <AS id=\"AS0\" routing=\"Full\">\n"
    "    <host id=\"a\" power=\"1E9\"/>\n"
    "    <host id=\"b\" power=\"1E9\"/>\n"
    "    <link id=\"l\" bandwidth=\"1E9\" latency=\"1E-6\"/>\n"
    "    <route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n"
    "  </AS>\n"
    "</platform>\n";

/* SimGrid aborts the process (exit 134) on a platform of another formalism
 * version: trainsim refuses it first, exit 2, naming simgrid_update_xml. */
static void test_simgrid_old_platform(void)
{
    char xml[1024], out[8192], args[1024];
    char tr[256]; /* test_tmp's buffers rotate */
    snprintf(tr, sizeof tr, "%s", write_tmp("v3.ti", "0 init\n1 init\n0 send 1 0 100\n1 recv 0 0 100\n"));
    static const struct { const char *version, *name, *needle; } cases[] = {
        {"3", "v3.xml", "simgrid_update_xml"},
        {"2", "v2.xml", "simgrid_update_xml"},
        {"4.2", "v42.xml", "is not one SimGrid"},
        {"four", "vbad.xml", "simgrid_update_xml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(xml, sizeof xml, v3_platform, cases[i].version);
        const char *p = write_tmp(cases[i].name, xml);
        snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), cases[i].needle));
        CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), ":3: SimGrid platform version"));
        CU_ASSERT_PTR_NULL(strstr(out, "Aborted"));
        unlink(p);
    }
    /* no version attribute at all: SimGrid's "ancient file" abort */
    const char *p = write_tmp("vnone.xml", "<?xml version='1.0'?>\n<platform>\n<zone id=\"z\" routing=\"Full\">"
                                           "<host id=\"a\" speed=\"1f\"/></zone>\n</platform>\n");
    snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "version '(none)' is older than 4"));
    unlink(p);
    /* formalism 4.1: SimGrid also aborts without its DOCTYPE line (or with
     * another one); with it, the platform runs */
    static const char v41[] = "<?xml version='1.0'?>\n%s<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                              "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>\n"
                              "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
                              "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n</zone>\n</platform>\n";
    static const struct { const char *doctype, *needle; int rc; } dt[] = {
        {"", "has no DOCTYPE", 2},
        {"<!DOCTYPE platform SYSTEM \"simgrid.dtd\">\n", "declares another DOCTYPE", 2},
        {"<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n", "ranks 2", 0},
        {"<!DOCTYPE platform SYSTEM \"http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd\">\n", "ranks 2", 0},
    };
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        snprintf(xml, sizeof xml, v41, dt[i].doctype);
        p = write_tmp("v41.xml", xml);
        snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), dt[i].rc);
        CU_ASSERT_PTR_NOT_NULL(strstr(dt[i].rc ? test_cli_err() : out, dt[i].needle));
        unlink(p);
    }
    unlink(tr);
}

/* ------------------------------------------------------------ SMPI time-independent */

/* The camel-case actions of SimGrid's older replayers (allReduce, Isend,
 * waitAll, allToAllV, ...) import as the lowercase ones do. */
static void test_smpi_action_case(void)
{
    char err[TS_ERRLEN];
    const char *lower = write_tmp("lower.ti",
                                  "0 init\n1 init\n0 allreduce 1000 10\n1 allreduce 1000 10\n"
                                  "0 isend 1 0 64\n1 irecv 0 0 64\n0 waitall\n1 waitall\n"
                                  "0 alltoallv 200 100 100 200 100 100\n1 alltoallv 200 100 100 200 100 100\n"
                                  "0 sendrecv 8 1 8 1\n1 sendrecv 8 0 8 0\n0 reducescatter 10 10 5\n"
                                  "1 reducescatter 10 10 5\n0 finalize\n1 finalize\n");
    const char *camel = write_tmp("camel.ti",
                                  "0 init\n1 Init\n0 allReduce 1000 10\n1 AllReduce 1000 10\n"
                                  "0 Isend 1 0 64\n1 Irecv 0 0 64\n0 waitAll\n1 WAITALL\n"
                                  "0 allToAllV 200 100 100 200 100 100\n1 AllToAllv 200 100 100 200 100 100\n"
                                  "0 sendRecv 8 1 8 1\n1 SendRecv 8 0 8 0\n0 reduceScatter 10 10 5\n"
                                  "1 ReduceScatter 10 10 5\n0 finalize\n1 Finalize\n");
    const char *p1[1] = {lower}, *p2[1] = {camel};
    og_graph *a = import_fmt(1, p1, NULL, err), *b = import_fmt(1, p2, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(a->ranks[r].nops, b->ranks[r].nops);
        CU_ASSERT_EQUAL(count_kind(b, r, OG_COLL), 3);
        for (int i = 0; i < a->ranks[r].nops && i < b->ranks[r].nops; i++) {
            CU_ASSERT_EQUAL(a->ranks[r].ops[i].kind, b->ranks[r].ops[i].kind);
            CU_ASSERT_EQUAL(a->ranks[r].ops[i].bytes, b->ranks[r].ops[i].bytes);
        }
    }
    og_free(a), og_free(b);
    /* SimGrid's older examples: no tag on send/recv, wait without arguments */
    const char *tagged = write_tmp("tagged.ti", "0 init\n1 init\n0 send 1 0 1e6\n1 recv 0 0 1e6\n"
                                                "0 isend 1 0 64\n1 irecv 0 0 64\n0 wait 0 1 0\n1 wait 0 1 0\n");
    const char *untagged = write_tmp("untagged.ti", "0 init\n1 init\n0 send 1 1e6\n1 recv 0 1e6\n"
                                                    "0 Isend 1 64\n1 Irecv 0 64\n0 wait\n1 wait\n");
    const char *p4[1] = {tagged}, *p5[1] = {untagged};
    a = import_fmt(1, p4, NULL, err), b = import_fmt(1, p5, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL_FATAL(a->ranks[r].nops, b->ranks[r].nops);
        for (int i = 0; i < a->ranks[r].nops; i++) {
            const og_op *x = &a->ranks[r].ops[i], *y = &b->ranks[r].ops[i];
            CU_ASSERT(x->kind == y->kind && x->bytes == y->bytes && x->tag == y->tag && x->ndeps == y->ndeps);
        }
    }
    og_free(a), og_free(b);
    unlink(tagged), unlink(untagged);
    /* an unknown action still fails, naming it (lowercased) */
    const char *bad = write_tmp("bad.ti", "0 init\n0 allFoo 1 2\n");
    const char *p3[1] = {bad};
    og_graph *g = NULL;
    tr_opts o = {.format = "smpi-ti"};
    CU_ASSERT_EQUAL(tr_import(1, (char *const *)p3, &o, &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.ti:2: rank 0: unknown action 'allfoo'"));
    unlink(lower), unlink(camel), unlink(bad);
}

/* split_traces-style index files: one per-rank path a line, relative to the
 * index's folder; blank lines, '#' comments, CRLF and stray blanks tolerated;
 * per-rank files that start with an action other than init detected. */
static void test_smpi_index(void)
{
    char err[TS_ERRLEN], dir[256], sub[300], cmd[700];
    snprintf(dir, sizeof dir, "%s", test_tmp("idx"));
    snprintf(sub, sizeof sub, "%s/ranks", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", sub);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    char p0[400], p1[400], idx[400];
    snprintf(p0, sizeof p0, "%s/r0.txt", sub);
    snprintf(p1, sizeof p1, "%s/r1.txt", sub);
    snprintf(idx, sizeof idx, "%s/index", dir);
    FILE *f = fopen(p0, "w");
    fputs("0 compute 1e6\n0 send 1 0 1e3\n0 allReduce 100 1\n", f); /* no init, no trailing newline after */
    fclose(f);
    f = fopen(p1, "w");
    fputs("1 compute 2e6\n1 recv 0 0 1e3\n1 allReduce 100 1", f);
    fclose(f);
    f = fopen(idx, "w");
    fputs("# per-rank traces\r\n\r\n  ranks/r0.txt \r\nranks/r1.txt\r\n", f);
    fclose(f);
    const char *p[1] = {idx};
    og_graph *g = import_fmt(1, p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    CU_ASSERT_EQUAL(count_kind(g, 0, OG_SEND), 1);
    CU_ASSERT_EQUAL(count_kind(g, 1, OG_RECV), 1);
    CU_ASSERT_EQUAL(count_kind(g, 1, OG_COLL), 1);
    og_free(g);
    /* an index naming a missing file says which */
    f = fopen(idx, "w");
    fputs("ranks/r0.txt\nranks/r9.txt\n", f);
    fclose(f);
    og_graph *h = NULL;
    tr_opts o = {.format = "smpi-ti"};
    CU_ASSERT_EQUAL(tr_import(1, (char *const *)p, &o, &h, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "r9.txt: cannot open"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* ------------------------------------------------------------ Kineto */

/* A growing text buffer for writing traces. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
}

/* `record_shapes=True` traces: Input Dims of ops taking a tensor list are
 * nested one level deeper ([[[4,2048,4096]], [], ...]); once rejected as
 * "unexpected token". A nccl:all_reduce annotation over a list of two
 * 512-float tensors sizes its (metadata-less) kernel: 1024 floats. */
static void test_kineto_tensor_lists(void)
{
    char err[TS_ERRLEN];
    const char *paths[2];
    char names[2][256];
    for (int r = 0; r < 2; r++) {
        sbuf b = {0};
        put(&b, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [\n", r);
        put(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"tid\": 1, \"ts\": 1, \"dur\": 2, "
                "\"args\": {\"Input Dims\": [[[4, 2048, 4096], [4, 2048, 4096]], []], "
                "\"Input type\": [\"TensorList\", \"Scalar\"]}},\n");
        put(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::_foreach_add_\", \"tid\": 1, \"ts\": 3, \"dur\": 2, "
                "\"args\": {\"Input Dims\": [[[[16]], [[8, 8]]], [[16], [64]]], \"Input Strides\": [[[1]], []]}},\n");
        put(&b, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"tid\": 1, \"ts\": 10, "
                "\"dur\": 20, \"args\": {\"Input Dims\": [[[512], [512]], []], \"Input type\": [\"float\", \"\"]}},\n");
        put(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"tid\": 1, \"ts\": 12, "
                "\"dur\": 3, \"args\": {\"correlation\": 77}},\n");
        put(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)\", "
                "\"tid\": 20, \"ts\": 40, \"dur\": 30, \"args\": {\"stream\": 20, \"correlation\": 77}}\n]}\n");
        snprintf(names[r], sizeof names[r], "%s", write_tmp(r ? "tl1.json" : "tl0.json", b.s));
        paths[r] = names[r];
        free(b.s);
    }
    og_graph *g = import_fmt(2, paths, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(g->ranks[r].nops, 1);
        CU_ASSERT_EQUAL(g->ranks[r].ops[0].kind, OG_COLL);
        CU_ASSERT_EQUAL(g->ranks[r].ops[0].bytes, 1024 * 4);
    }
    og_free(g);
    unlink(paths[0]), unlink(paths[1]);
}

/* ROCm traces (MI250X, RCCL): hipLaunchKernel launches, RCCL's kernels named
 * ncclDevKernel_Generic (or rccl*), with PyTorch's collective metadata. */
static void test_kineto_rocm(void)
{
    char err[TS_ERRLEN];
    static const char *const kname[2] = {"ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)",
                                         "rcclGenericKernel(ncclDevComm*, ncclWork*)"};
    const char *paths[2];
    char names[2][256];
    for (int r = 0; r < 2; r++) {
        sbuf b = {0};
        put(&b, "{\"deviceProperties\": [{\"id\": 0, \"name\": \"AMD Instinct MI250X / MI250\", "
                "\"totalGlobalMem\": 68702699520}],\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, "
                "\"world_size\": 2}, \"traceEvents\": [\n", r);
        put(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipExtLaunchKernel\", \"tid\": 5, \"ts\": 1, "
                "\"dur\": 4, \"args\": {\"correlation\": 3}},\n");
        put(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"Cijk_Ailk_Bljk_BBS_BH_MT128x128x32\", \"tid\": 0, "
                "\"ts\": 10, \"dur\": 100, \"args\": {\"stream\": 0, \"device\": 0, \"correlation\": 3}},\n");
        for (int k = 0; k < 2; k++)
            put(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"tid\": 1, \"ts\": %d, \"dur\": 40, "
                    "\"args\": {\"stream\": 1, \"device\": 0, \"Collective name\": \"allreduce\", \"In msg nelems\": "
                    "1048576, \"Out msg nelems\": 1048576, \"Group size\": 2, \"dtype\": \"BFloat16\", "
                    "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}}%s\n",
                kname[k], 120 + 50 * k, k ? "" : ",");
        put(&b, "]}\n");
        snprintf(names[r], sizeof names[r], "%s", write_tmp(r ? "rocm1.json" : "rocm0.json", b.s));
        paths[r] = names[r];
        free(b.s);
    }
    og_graph *g = import_fmt(2, paths, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(count_kind(g, r, OG_COMPUTE), 1);
        CU_ASSERT_EQUAL(count_kind(g, r, OG_COLL), 2);
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_COLL) {
                CU_ASSERT_EQUAL(g->ranks[r].ops[i].coll, OG_ALLREDUCE);
                CU_ASSERT_EQUAL(g->ranks[r].ops[i].bytes, 1048576 * 2);
                CU_ASSERT_EQUAL(g->ranks[r].ops[i].dtype, OG_BF16);
            }
    }
    og_free(g);
    unlink(paths[0]), unlink(paths[1]);
}

/* A CPU-only (gloo) trace: once 0 ops, exit 0 and 0 ms; now exit 2 with a
 * message saying there is nothing to simulate and why. */
static void test_kineto_nothing(void)
{
    char out[8192], args[1024];
    const char *p = write_tmp("gloo.json",
                              "{\"distributedInfo\": {\"backend\": \"gloo\", \"rank\": 0, \"world_size\": 1},\n"
                              "\"traceEvents\": [\n"
                              "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"tid\": 1, "
                              "\"ts\": 0, \"dur\": 900},\n"
                              "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"tid\": 1, \"ts\": 5, "
                              "\"dur\": 300, \"args\": {\"Input Dims\": [[64, 64], [64, 64]]}},\n"
                              "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"gloo:all_reduce\", \"tid\": 1, "
                              "\"ts\": 400, \"dur\": 200}\n]}\n");
    snprintf(args, sizeof args, "convert %s -o %s", p, test_tmp("gloo-out.json"));
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "gloo.json: nothing to simulate: no GPU kernel, memcpy or memset"));
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "some naming gloo"));
    CU_ASSERT_EQUAL(access(test_tmp("gloo-out.json"), F_OK), -1);
    snprintf(args, sizeof args, "sim --platform %s --trace %s", test_crossbar(2, 1e10, 1e-6), p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "nothing to simulate"));
    unlink(p);
}

/* Two ranks, three ProfilerStep iterations of different lengths; in each, a
 * GEMM launched early, a host gap (data loading, Python), a 4 KiB all-reduce
 * and a last kernel launched late, then the host waits to the step's end. */
static const double step_us[3] = {10000, 12000, 15000};
static const long step_num[3] = {5, 6, 7};

static void multistep_trace(int r, char *path, size_t n)
{
    sbuf b = {0};
    put(&b, "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2}, \"traceEvents\": [\n", r);
    double t = 1000;
    int corr = 1;
    for (int s = 0; s < 3; s++) {
        double d = step_us[s];
        put(&b, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", \"tid\": 1, "
                "\"ts\": %.1f, \"dur\": %.1f},\n", step_num[s], t, d);
        /* launches at 5%, 40%, 70% of the step; kernels start 10 us after */
        static const double at[3] = {0.05, 0.40, 0.70}, dur[3] = {0.2, 0.05, 0.1};
        for (int k = 0; k < 3; k++) {
            double l = t + at[k] * d, kd = dur[k] * d;
            put(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"tid\": 1, "
                    "\"ts\": %.1f, \"dur\": 5, \"args\": {\"correlation\": %d}},\n", l, corr);
            if (k == 1)
                put(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float\", "
                        "\"tid\": 20, \"ts\": %.1f, \"dur\": %.1f, \"args\": {\"stream\": 20, \"correlation\": %d, "
                        "\"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, "
                        "\"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
                        "\"Process Group Ranks\": \"[0, 1]\"}},\n", l + 10, kd, corr);
            else
                put(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm_%d\", \"tid\": 7, \"ts\": %.1f, "
                        "\"dur\": %.1f, \"args\": {\"stream\": 7, \"correlation\": %d}},\n", k, l + 10, kd, corr);
            corr++;
        }
        t += d + 500; /* the next step starts after a pause outside any step */
    }
    put(&b, "{\"ph\": \"i\", \"cat\": \"Trace\", \"name\": \"end\", \"ts\": %.1f}\n]}\n", t);
    char name[32];
    snprintf(name, sizeof name, "steps%d.json", r);
    snprintf(path, n, "%s", write_tmp(name, b.s));
    free(b.s);
}

/* Per-step iterations (--step all) equal the recorded step spans within 1%
 * when host gaps are replayed; without them the replay is much shorter and
 * says that host gaps were dropped. --step N imports one iteration. */
static void test_kineto_steps(void)
{
    char p0[256], p1[256], args[2048];
    static char out[65536];
    multistep_trace(0, p0, sizeof p0);
    multistep_trace(1, p1, sizeof p1);
    const char *xbar = test_crossbar(2, 25e9, 1e-6);
    for (int gaps = 0; gaps < 2; gaps++) {
        snprintf(args, sizeof args, "sim --platform %s --trace %s --trace %s --step all%s", xbar, p0, p1,
                 gaps ? " --host-gaps" : "");
        CU_ASSERT_EQUAL_FATAL(test_cli(args, out, sizeof out), 0);
        int seen = 0;
        for (int s = 0; s < 3; s++) {
            char key[32];
            snprintf(key, sizeof key, "\n%8ld ", step_num[s]);
            const char *row = strstr(out, key);
            CU_ASSERT_PTR_NOT_NULL_FATAL(row);
            double rec = 0, sim = 0;
            long num = 0;
            CU_ASSERT_EQUAL(sscanf(row, "%ld %lf %lf", &num, &rec, &sim), 3);
            CU_ASSERT_DOUBLE_EQUAL(rec, step_us[s] / 1000, 1e-3);
            if (gaps) {
                CU_ASSERT(fabs(sim / rec - 1) < 0.01);
            } else {
                CU_ASSERT(sim < 0.6 * rec); /* only GPU time: the gaps are gone */
            }
            seen++;
        }
        CU_ASSERT_EQUAL(seen, 3);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "3 steps: recorded mean 12.333 ms (min 10.000, max 15.000"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, gaps ? "host gaps replayed" : "note: host gaps dropped"));
    }
    /* --step N: one iteration (3 kernels a rank); an unknown step lists them */
    char err[TS_ERRLEN];
    const char *paths[2] = {p0, p1};
    tr_info info = {0};
    tr_opts o = {.one_step = 1, .step = 6, .info = &info};
    og_graph *g = NULL;
    CU_ASSERT_EQUAL(tr_import(2, (char *const *)paths, &o, &g, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->ranks[0].nops, 3);
    CU_ASSERT_EQUAL(info.nsteps, 3);
    CU_ASSERT_DOUBLE_EQUAL(info.recorded, 0.012, 1e-9);
    og_free(g);
    o.step = 9;
    CU_ASSERT_EQUAL(tr_import(2, (char *const *)paths, &o, &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no ProfilerStep#9 in the trace (steps: 5, 6, 7)"));
    snprintf(args, sizeof args, "sim --platform %s --trace %s --trace %s --step x", xbar, p0, p1);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    snprintf(args, sizeof args, "convert %s %s --step all -o %s", p0, p1, test_tmp("steps.json"));
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "steps.step7.json: ProfilerStep#7, 2 ranks, 6 ops, recorded 15.000 ms"));
    for (int s = 0; s < 3; s++) {
        char name[64];
        snprintf(name, sizeof name, "steps.step%ld.json", step_num[s]);
        CU_ASSERT_EQUAL(unlink(test_tmp(name)), 0);
    }
    unlink(p0), unlink(p1);
}

/* ------------------------------------------------------------ PyTorch ET + Kineto */

/* One rank: an execution trace (schema 1.0.2 nested form on rank 0, 1.0.1
 * flat form on rank 1) and its Kineto trace. aten::mm writes storage 100 on
 * stream 7; nccl:all_reduce reads it (a list of two 512-float tensors) and
 * its kernel, on stream 20, has no size metadata; aten::relu on stream 21
 * reads an unrelated tensor after the GEMM ended. Rank 0's Kineto names ET
 * nodes by "Record function id", rank 1's only by name and order. */
static void et_pair(int r, char *etp, char *kp, size_t n)
{
    static const struct { long id, rf; const char *name, *in, *intypes, *out; } nodes[] = {
        {2, 0, "[pytorch|profiler|execution_trace|thread]", "[]", "[]", "[]"},
        {5, 1, "aten::mm", "[[50,60,0,4096,4,\"cuda:0\"],[51,61,0,4096,4,\"cuda:0\"]]",
         "[\"Tensor(float)\",\"Tensor(float)\"]", "[[52,100,0,1024,4,\"cuda:0\"]]"},
        {6, 2, "nccl:all_reduce", "[[[52,100,0,512,4,\"cuda:0\"],[53,100,512,512,4,\"cuda:0\"]]]",
         "[\"GenericList[Tensor(float),Tensor(float)]\"]", "[]"},
        {7, 3, "aten::relu", "[[70,300,0,64,4,\"cuda:0\"]]", "[\"Tensor(float)\"]", "[[71,301,0,64,4,\"cuda:0\"]]"},
    };
    sbuf e = {0}, k = {0};
    put(&e, "{\"schema\": \"%s\", \"pid\": %d, \"nodes\": [\n", r ? "1.0.1" : "1.0.2-chakra.0.0.4", 4000 + r);
    for (int i = 0; i < 4; i++) {
        if (r == 0)
            put(&e, "{\"id\": %ld, \"name\": \"%s\", \"ctrl_deps\": 2, \"inputs\": {\"values\": %s, \"shapes\": [], "
                    "\"types\": %s}, \"outputs\": {\"values\": %s, \"shapes\": [], \"types\": []}, \"attrs\": "
                    "[{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": %ld}]}%s\n",
                nodes[i].id, nodes[i].name, nodes[i].in, nodes[i].intypes, nodes[i].out, nodes[i].rf, i < 3 ? "," : "");
        else
            put(&e, "{\"name\": \"%s\", \"id\": %ld, \"rf_id\": %ld, \"parent\": 2, \"inputs\": %s, \"input_types\": %s, "
                    "\"outputs\": %s, \"output_types\": []}%s\n",
                nodes[i].name, nodes[i].id, nodes[i].rf, nodes[i].in, nodes[i].intypes, nodes[i].out, i < 3 ? "," : "");
    }
    put(&e, "]}\n");
    put(&k, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [\n", r);
    /* host ops (tid 1), their launches, and the kernels */
    static const struct { long rf; const char *name; double ts, dur; int corr; const char *kname; int stream;
                          double kts, kdur; } ops[] = {
        {1, "aten::mm", 100, 20, 11, "sm90_gemm", 7, 130, 400},
        {2, "nccl:all_reduce", 150, 30, 12, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 600, 50},
        {3, "aten::relu", 200, 10, 13, "relu_kernel", 21, 700, 5},
    };
    for (int i = 0; i < 3; i++) {
        if (r == 0)
            put(&k, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": 1, \"ts\": %g, "
                    "\"dur\": %g, \"args\": {\"Record function id\": %ld}},\n",
                ops[i].name, 4000 + r, ops[i].ts, ops[i].dur, ops[i].rf);
        else
            put(&k, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": 1, \"ts\": %g, "
                    "\"dur\": %g},\n", ops[i].name, 4000 + r, ops[i].ts, ops[i].dur);
        put(&k, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"tid\": 1, \"ts\": %g, "
                "\"dur\": 4, \"args\": {\"correlation\": %d}},\n", ops[i].ts + 5, ops[i].corr);
        put(&k, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"tid\": %d, \"ts\": %g, \"dur\": %g, "
                "\"args\": {\"stream\": %d, \"correlation\": %d}}%s\n",
            ops[i].kname, ops[i].stream, ops[i].kts, ops[i].kdur, ops[i].stream, ops[i].corr, i < 2 ? "," : "");
    }
    put(&k, "]}\n");
    char name[32];
    snprintf(name, sizeof name, "et%d.json", r);
    snprintf(etp, n, "%s", write_tmp(name, e.s));
    snprintf(name, sizeof name, "kineto%d.json", r);
    snprintf(kp, n, "%s", write_tmp(name, k.s));
    free(e.s), free(k.s);
}

/* Durations from Kineto, sizes and dependencies from the execution trace:
 * the all-reduce is 1024 floats (its kernel says nothing) and waits for the
 * GEMM that wrote its input; relu reads nothing the others wrote and waits
 * for nothing (the Kineto-only import orders it after the GEMM by time). */
static void test_pytorch_et(void)
{
    char et[2][256], k[2][256], err[TS_ERRLEN];
    et_pair(0, et[0], k[0], sizeof et[0]);
    et_pair(1, et[1], k[1], sizeof et[1]);
    /* any order of the files: paired by process id, ranks from Kineto */
    const char *paths[4] = {k[1], et[0], et[1], k[0]};
    og_graph *g = import_fmt(4, paths, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    for (int r = 0; r < 2; r++) {
        const og_rank *rk = &g->ranks[r];
        CU_ASSERT_EQUAL_FATAL(rk->nops, 3);
        const og_op *mm = &rk->ops[0], *ar = &rk->ops[1], *relu = &rk->ops[2];
        CU_ASSERT_EQUAL(mm->kind, OG_COMPUTE);
        CU_ASSERT_DOUBLE_EQUAL(mm->duration, 400e-6, 1e-12);
        CU_ASSERT_EQUAL(ar->kind, OG_COLL);
        CU_ASSERT_EQUAL(ar->coll, OG_ALLREDUCE);
        CU_ASSERT_EQUAL(ar->bytes, 1024 * 4);
        CU_ASSERT_EQUAL(ar->dtype, OG_F32);
        CU_ASSERT_EQUAL_FATAL(ar->ndeps, 1);
        CU_ASSERT_EQUAL(og_deps(ar)[0], mm->id);
        CU_ASSERT_EQUAL(relu->ndeps, 0);
        CU_ASSERT_DOUBLE_EQUAL(relu->duration, 5e-6, 1e-12);
    }
    og_free(g);
    /* the same Kineto traces alone: the kernel has no size, relu waits by time */
    const char *konly[2] = {k[0], k[1]};
    g = import_fmt(2, konly, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->ranks[0].ops[1].kind, OG_COMPUTE);
    CU_ASSERT(g->ranks[0].ops[2].ndeps > 0);
    og_free(g);
    /* an execution trace alone is refused, naming what is missing */
    const char *etonly[2] = {et[0], et[1]};
    og_graph *h = NULL;
    tr_opts o = {.format = NULL};
    CU_ASSERT_EQUAL(tr_import(2, (char *const *)etonly, &o, &h, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "with the Kineto trace of the same rank"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "(2 execution traces, 0 Kineto traces given)"));
    for (int r = 0; r < 2; r++) unlink(et[r]), unlink(k[r]);
}

/* The 8-rank DLRM run of PARAM (execution traces and Kineto traces of the
 * same run, older formats without per-kernel sizes): every NCCL kernel gets
 * its size from the execution trace, and the sizes equal those the Kineto
 * nccl:* annotations give independently. */
static void test_pytorch_et_dlrm(void)
{
    const char *tk = "../shared/data/traces/kineto/param_dlrm_kineto_8ranks.tar.gz",
               *te = "../shared/data/traces/chakra/param_dlrm_pytorch_et_8ranks.tar.gz";
    if (access(tk, R_OK) || access(te, R_OK)) {
        printf("\n  (skipped: DLRM tarballs absent)");
        return;
    }
    char dir[256], cmd[1024], err[TS_ERRLEN];
    snprintf(dir, sizeof dir, "%s", test_tmp("dlrm"));
    snprintf(cmd, sizeof cmd, "mkdir -p %s && tar xzf %s -C %s && tar xzf %s -C %s 2>/dev/null", dir, tk, dir, te, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "ls %s/dlrm_kineto/*.json %s/dlrm_pytorch_et/*.json", dir, dir);
    FILE *ls = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
    static char names[16][512];
    const char *paths[16];
    int n = 0;
    while (n < 16 && fgets(names[n], sizeof names[n], ls)) {
        names[n][strcspn(names[n], "\n")] = 0;
        paths[n] = names[n];
        n++;
    }
    pclose(ls);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    og_graph *linked = import_fmt(16, paths, NULL, err), *konly = import_fmt(8, paths, "kineto", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(linked);
    CU_ASSERT_PTR_NOT_NULL_FATAL(konly);
    CU_ASSERT_EQUAL(linked->nranks, 8);
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(linked->ranks[r].nops, konly->ranks[r].nops);
        CU_ASSERT_EQUAL(count_kind(linked, r, OG_COLL), 8); /* 3 all-reduce + 5 all-to-all */
        int k = 0;
        for (int i = 0; i < linked->ranks[r].nops; i++) {
            const og_op *a = &linked->ranks[r].ops[i];
            if (a->kind != OG_COLL) continue;
            while (k < konly->ranks[r].nops && konly->ranks[r].ops[k].kind != OG_COLL) k++;
            CU_ASSERT_FATAL(k < konly->ranks[r].nops);
            CU_ASSERT_EQUAL(a->coll, konly->ranks[r].ops[k].coll);
            CU_ASSERT_EQUAL(a->bytes, konly->ranks[r].ops[k].bytes);
            k++;
        }
    }
    og_free(linked), og_free(konly);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* ------------------------------------------------------------ fuzzer finds */

/* Inputs a fuzzer of this formats found (tests/data/fuzz/golden/,
 * kept as found): each is refused with a message, or read. */
static void test_fuzz_found(void)
{
    FILE *ls = popen("ls tests/data/fuzz/golden 2>/dev/null", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
    char line[256], path[512], err[TS_ERRLEN];
    int seen = 0;
    while (fgets(line, sizeof line, ls)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(path, sizeof path, "tests/data/fuzz/golden/%s", line);
        rp_metrics *m = NULL;
        err[0] = 0;
        if (rp_read_golden(path, &m, err, sizeof err) == 0) {
            CU_ASSERT_EQUAL(rp_compare(m, m, 0.03, stderr, err, sizeof err), 0);
            rp_free(m);
        } else {
            CU_ASSERT_PTR_NULL(m);
            CU_ASSERT(err[0] != 0);
        }
        seen++;
    }
    pclose(ls);
    CU_ASSERT(seen >= 1);
    /* the first find: a metric named twice was compared with either value */
    rp_metrics *m = NULL;
    CU_ASSERT_EQUAL(rp_read_golden("tests/data/fuzz/golden/duplicate-metric.json", &m, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "metric 'rank 2 comm' appears twice"));
    /* the second: no metrics at all (an empty copy into the sorted table) */
    CU_ASSERT_EQUAL(rp_read_golden("tests/data/fuzz/golden/empty-metrics.json", &m, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "empty-metrics.json: no metrics"));
}

void suite_trace_wild(void)
{
    test_add_suite("trace-wild", "simgrid: old platform versions refused, exit 2", test_simgrid_old_platform,
                   "smpi: action names in any case", test_smpi_action_case,
                   "smpi: index files of per-rank traces", test_smpi_index,
                   "kineto: tensor-list Input Dims", test_kineto_tensor_lists, "kineto: ROCm/RCCL trace", test_kineto_rocm,
                   "kineto: nothing to simulate -> exit 2", test_kineto_nothing,
                   "kineto: per-step iterations match recorded spans with host gaps", test_kineto_steps,
                   "pytorch ET + kineto: sizes and deps from the host trace", test_pytorch_et,
                   "pytorch ET + kineto: DLRM 8 ranks", test_pytorch_et_dlrm,
                   "fuzzer-found golden files stay fixed", test_fuzz_found, NULL);
}
