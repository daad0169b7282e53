/* The embedding API (trainsim.h): coll, run and search return the numbers the
 * CLI prints for the same inputs; errors are statuses and messages. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "trainsim.h"

#define OUT 65536

/* The value after `key` on the CLI output's line starting with key. */
static double cli_value(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

/* printf(fmt, v) equals the text at the start of s (the CLI's rounding). */
static int same_printed(const char *fmt, double v, const char *s)
{
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    return strncmp(b, s, strlen(b)) == 0;
}

/* ---- coll: every size's time, algbw and busbw as nccl-tests' columns print them ---- */

static int coll_child(void *arg, char *msg, size_t n)
{
    (void)arg;
    char out[OUT], err[TS_MSG_MAX];
    if (test_cli("coll --platform dgx-h100-superpod --nodes 2 --op all_reduce -b 1M -e 64M -f 4", out, sizeof out))
        return snprintf(msg, n, "CLI failed: %s", out), -1;
    ts_coll_opts o = {.c = {.cluster = "dgx-h100-superpod", .nodes = 2}, .op = "all_reduce", .min_bytes = 1 << 20,
                      .max_bytes = 64 << 20, .step_factor = 4};
    ts_coll_result *r;
    if (ts_coll(&o, &r, err, sizeof err) != TS_OK) return snprintf(msg, n, "ts_coll: %s", err), -1;
    int rc = r->npoints == 4 && r->gpus == 16 ? 0 : (snprintf(msg, n, "%zu points, %d gpus", r->npoints, r->gpus), -1);
    for (size_t i = 0; rc == 0 && i < r->npoints; i++) {
        const ts_coll_point *p = &r->points[i];
        char row[64];
        snprintf(row, sizeof row, "\n%12lld", p->size);
        const char *line = strstr(out, row);
        long long count;
        char type[16], redop[16];
        int root;
        double t, alg, bus;
        if (!line || sscanf(line, "%*d %lld %15s %15s %d %lf %lf %lf", &count, type, redop, &root, &t, &alg, &bus) != 7)
            rc = -1, snprintf(msg, n, "no CLI row for %lld bytes", p->size);
        else if (count != p->count || fabs(t - p->time_s * 1e6) > 0.005 || fabs(alg - p->algbw_gbs) > 0.005 ||
                 fabs(bus - p->busbw_gbs) > 0.005)
            rc = -1, snprintf(msg, n, "%lld bytes: CLI %.2f us %.2f %.2f, API %.4f us %.4f %.4f", p->size, t, alg, bus,
                              p->time_s * 1e6, p->algbw_gbs, p->busbw_gbs);
        /* nccl-tests' busbw of an all-reduce: algbw x 2(n-1)/n */
        else if (fabs(p->busbw_gbs - p->algbw_gbs * 2 * 15 / 16) > 1e-9 * p->busbw_gbs)
            rc = -1, snprintf(msg, n, "busbw %.6f is not algbw x 2(n-1)/n", p->busbw_gbs);
    }
    if (rc == 0 && fabs(cli_value(out, "Avg bus bandwidth    : ") - r->avg_busbw_gbs) > 1e-3 * r->avg_busbw_gbs)
        rc = -1, snprintf(msg, n, "average busbw %.4f differs from the CLI's", r->avg_busbw_gbs);
    ts_coll_result_free(r);
    /* SimGrid holds one platform: another cluster in this process is refused, the same one is fine */
    ts_coll_opts other = o;
    other.c.cluster = "frontier";
    if (rc == 0 && ts_coll(&other, &r, err, sizeof err) != TS_BAD_INPUT)
        rc = -1, snprintf(msg, n, "a second platform was not refused");
    if (rc == 0 && !strstr(err, "one platform per process")) rc = -1, snprintf(msg, n, "message: %s", err);
    if (rc == 0 && ts_coll(&o, &r, err, sizeof err) != TS_OK) rc = -1, snprintf(msg, n, "same platform again: %s", err);
    else if (rc == 0) ts_coll_result_free(r);
    return rc;
}

static void test_coll_matches_cli(void)
{
    char msg[4096];
    int rc = test_child(coll_child, NULL, msg, sizeof msg);
    if (rc) fprintf(stderr, "\n%s\n", msg);
    CU_ASSERT_EQUAL(rc, 0);
}

/* ---- run ---- */

static void check_run_lines(const ts_run_result *r, const char *out)
{
    CU_ASSERT_TRUE(same_printed("%.4f", r->iteration_s, strstr(out, "iteration        ") + 17));
    const char *tp = strstr(out, "throughput       ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    CU_ASSERT_TRUE(same_printed("%.0f", r->tokens_per_s, tp + 17));
    char mfu[32];
    snprintf(mfu, sizeof mfu, "MFU %.1f%%", 100 * r->mfu);
    CU_ASSERT_PTR_NOT_NULL(strstr(tp, mfu));
    char mem[64];
    snprintf(mem, sizeof mem, "memory per GPU   %.2f GiB of %.2f GiB", r->memory.total / 1073741824.0,
             r->memory.capacity / 1073741824.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, mem));
}

static void test_run_analytical(void)
{
    char out[OUT], err[TS_MSG_MAX];
    CU_ASSERT_EQUAL_FATAL(test_cli("run --platform dgx-a100-superpod --model gpt3-175b "
                                   "--layout tp=8,pp=16,dp=8,gbs=1536 --fidelity analytical", out, sizeof out), 0);
    ts_run_opts o = {.c = {.cluster = "dgx-a100-superpod"}, .model = "gpt3-175b", .layout = "tp=8,pp=16,dp=8,gbs=1536",
                     .fidelity = "analytical"};
    ts_run_result *r;
    CU_ASSERT_EQUAL_FATAL(ts_run(&o, &r, err, sizeof err), TS_OK);
    CU_ASSERT_EQUAL(r->gpus, 1024);
    CU_ASSERT_STRING_EQUAL(r->fidelity, "analytical");
    CU_ASSERT_TRUE(r->memory.fits && r->simulated);
    check_run_lines(r, out);
    /* the breakdown adds up to no more than the iteration (ranks overlap communication with compute) */
    double sum = 0;
    for (int c = 0; c < TS_NCATS; c++) sum += r->breakdown[c];
    CU_ASSERT_TRUE(r->breakdown[TS_COMPUTE] > 0 && sum <= r->iteration_s * (1 + 1e-9) && sum > 0.5 * r->iteration_s);
    /* tokens/s is gbs x seq / iteration */
    CU_ASSERT_DOUBLE_EQUAL(r->tokens_per_s, 1536.0 * r->seq / r->iteration_s, 1e-6 * r->tokens_per_s);
    double iter = r->iteration_s;
    ts_run_result_free(r);

    /* the same model given as JSON text */
    FILE *f = fopen("configs/models/gpt3-175b.json", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char text[8192];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    o.model = text;
    CU_ASSERT_EQUAL_FATAL(ts_run(&o, &r, err, sizeof err), TS_OK);
    CU_ASSERT_DOUBLE_EQUAL(r->iteration_s, iter, 1e-12);
    ts_run_result_free(r);
}

static void test_run_estimate_and_no_fit(void)
{
    char out[OUT], err[TS_MSG_MAX];
    CU_ASSERT_EQUAL_FATAL(test_cli("run --model llama3-8b --layout tp=4,pp=2,dp=1,gbs=16,recompute=full --seq 4096 --fidelity estimate", out,
                                   sizeof out), 0);
    ts_run_opts o = {.model = "llama3-8b", .layout = "tp=4,pp=2,dp=1,gbs=16,recompute=full", .seq = 4096,
                     .fidelity = "estimate"};
    ts_run_result *r;
    CU_ASSERT_EQUAL_FATAL(ts_run(&o, &r, err, sizeof err), TS_OK);
    check_run_lines(r, out);
    char t[128];
    snprintf(t, sizeof t, "forward %.4f, backward %.4f", r->est_forward, r->est_backward);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, t));
    ts_run_result_free(r);

    /* does not fit: TS_FAILED, and the memory breakdown says why */
    o.model = "gpt3-175b", o.layout = "tp=1,pp=1,dp=8,gbs=8", o.fidelity = "analytical";
    CU_ASSERT_EQUAL_FATAL(ts_run(&o, &r, err, sizeof err), TS_FAILED);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_FALSE(r->memory.fits);
    CU_ASSERT_FALSE(r->simulated);
    CU_ASSERT_TRUE(r->memory.total > r->memory.capacity);
    ts_run_result_free(r);
}

static int run_child(void *arg, char *msg, size_t n)
{
    (void)arg;
    char out[OUT], err[TS_MSG_MAX];
    const char *cli = "run --platform dgx-h100-superpod --nodes 2 --model megatron-gpt-1.7b "
                      "--layout tp=8,pp=2,gbs=16 --seq 2048 --links 2";
    if (test_cli(cli, out, sizeof out)) return snprintf(msg, n, "CLI failed: %s", out), -1;
    ts_run_opts o = {.c = {.cluster = "dgx-h100-superpod", .nodes = 2}, .model = "megatron-gpt-1.7b",
                     .layout = "tp=8,pp=2,gbs=16", .seq = 2048, .links = 2};
    ts_run_result *r;
    if (ts_run(&o, &r, err, sizeof err) != TS_OK) return snprintf(msg, n, "ts_run: %s", err), -1;
    char it[64], cats[256];
    snprintf(it, sizeof it, "iteration        %.4f s\n", r->iteration_s);
    snprintf(cats, sizeof cats, "compute %.4f s, exposed tp %.4f, cp %.4f, ep %.4f, pp %.4f, dp %.4f",
             r->breakdown[TS_COMPUTE], r->breakdown[TS_TP], r->breakdown[TS_CP], r->breakdown[TS_EP],
             r->breakdown[TS_PP], r->breakdown[TS_DP]);
    int rc = 0;
    if (!strstr(out, it) || !strstr(out, cats)) rc = -1, snprintf(msg, n, "API %s / %s not in:\n%s", it, cats, out);
    else if (r->nlinks != 2 || !strstr(out, r->links[0].name) || r->links[0].busy < r->links[1].busy)
        rc = -1, snprintf(msg, n, "links: %zu, first %s", r->nlinks, r->nlinks ? r->links[0].name : "-");
    else if (strcmp(r->fidelity, "pipelined") || r->ranks_built != 16 || r->ranks_total != 16)
        rc = -1, snprintf(msg, n, "fidelity %s, %d of %d ranks", r->fidelity, r->ranks_built, r->ranks_total);
    ts_run_result_free(r);
    return rc;
}

static void test_run_simulated(void)
{
    char msg[4096];
    int rc = test_child(run_child, NULL, msg, sizeof msg);
    if (rc) fprintf(stderr, "\n%s\n", msg);
    CU_ASSERT_EQUAL(rc, 0);
}

/* ---- search (estimate fidelity: no SimGrid) ---- */

static void test_search_matches_cli(void)
{
    char out[OUT], err[TS_MSG_MAX];
    CU_ASSERT_EQUAL_FATAL(test_cli("search --cluster dgx-a100-superpod --gpus 1024 --model gpt3-175b "
                                   "--fidelity estimate --top 4 --constraint 'tp<=8'", out, sizeof out), 0);
    ts_search_opts o = {.c = {.cluster = "dgx-a100-superpod"}, .model = "gpt3-175b", .gpus = 1024,
                        .fidelity = "estimate", .top = 4, .constraint = "tp<=8"};
    ts_search_result *r;
    CU_ASSERT_EQUAL_FATAL(ts_search(&o, &r, err, sizeof err), TS_OK);
    CU_ASSERT_EQUAL_FATAL(r->ntop, 4);
    char counts[256];
    snprintf(counts, sizeof counts, "%zu enumerated, %zu pruned by rule, %zu pruned by memory, %zu estimated",
             r->enumerated, r->pruned_rule, r->pruned_memory, r->estimated);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, counts));
    CU_ASSERT_EQUAL(r->enumerated, r->pruned_rule + r->pruned_memory + r->estimated + r->failed);
    CU_ASSERT_EQUAL_FATAL(r->ncandidates, r->enumerated);
    size_t est = 0;
    for (size_t i = 0; i < r->ncandidates; i++) est += strcmp(r->candidates[i].status, "estimated") == 0;
    CU_ASSERT_EQUAL(est, r->estimated);
    /* the best layout is the candidate it names, with the same estimate */
    CU_ASSERT_STRING_EQUAL(r->candidates[r->top[0].index].layout, r->top[0].layout);
    CU_ASSERT_DOUBLE_EQUAL(r->candidates[r->top[0].index].estimate_s, r->top[0].estimate_s, 0);
    for (size_t j = 0; j < r->ntop; j++) {
        const ts_search_layout *t = &r->top[j];
        char row[256];
        snprintf(row, sizeof row, "%4zu %10.4f %10.4f %8.1f %6.1f %8.2f", j + 1, t->iteration_s, t->estimate_s,
                 t->tflops_per_gpu, 100 * t->mfu, t->memory_bytes / 1073741824.0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, t->layout));
        CU_ASSERT_TRUE(strstr(t->layout, "tp=1,") || strstr(t->layout, "tp=2,") || strstr(t->layout, "tp=4,") ||
                       strstr(t->layout, "tp=8,"));
        if (j) CU_ASSERT_TRUE(t->iteration_s >= r->top[j - 1].iteration_s); /* objective time: best first */
    }
    ts_search_result_free(r);
}

/* ---- bad input: a status and a message naming the value, never an exit ---- */

static void test_errors(void)
{
    char err[TS_MSG_MAX];
    ts_run_result *r = (ts_run_result *)1;
    ts_run_opts o = {.model = "no-such-model", .layout = "tp=1,dp=1", .fidelity = "analytical"};
    CU_ASSERT_EQUAL(ts_run(&o, &r, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown model 'no-such-model'"));
    o.model = "gpt3-175b", o.layout = "tp=5,dp=1";
    CU_ASSERT_EQUAL(ts_run(&o, &r, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tp=5 does not divide 96 attention heads"));
    o.layout = "tp=1,dp=8", o.fidelity = "quantum";
    CU_ASSERT_EQUAL(ts_run(&o, &r, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'quantum'"));
    o.fidelity = "analytical", o.model = "{\"hidden_size\": 64}";
    CU_ASSERT_EQUAL(ts_run(&o, &r, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "model JSON: needs hidden_size"));

    ts_coll_result *c = (ts_coll_result *)1;
    ts_coll_opts co = {.c = {.cluster = "dgx-h100-superpod"}, .op = "all_mix"};
    CU_ASSERT_EQUAL(ts_coll(&co, &c, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'all_mix'"));

    ts_search_result *s = (ts_search_result *)1;
    ts_search_opts so = {.c = {.cluster = "{\"name\": \"x\", \"nodes\": 1, \"gpu\": \"h100\"}"}, .model = "gpt3-175b",
                         .gpus = 8};
    CU_ASSERT_EQUAL(ts_search(&so, &s, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster JSON"));
    so.c.cluster = "dgx-h100-superpod", so.objective = "speed";
    CU_ASSERT_EQUAL(ts_search(&so, &s, err, sizeof err), TS_BAD_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'speed'"));
    /* no layout fits: TS_FAILED with the counts */
    so.objective = NULL, so.model = "llama3-405b", so.fidelity = "estimate";
    CU_ASSERT_EQUAL_FATAL(ts_search(&so, &s, err, sizeof err), TS_FAILED);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ntop, 0);
    CU_ASSERT_TRUE(s->enumerated > 0 && s->estimated == 0);
    ts_search_result_free(s);
}

void suite_api(void)
{
    test_add_suite("api", "coll: the CLI's numbers, one platform per process", test_coll_matches_cli,
                   "run analytical: the CLI's numbers, model as JSON text", test_run_analytical,
                   "run estimate, and a layout that does not fit", test_run_estimate_and_no_fit,
                   "run simulated: iteration, breakdown and links as the CLI", test_run_simulated,
                   "search: counts and ranked layouts as the CLI", test_search_matches_cli,
                   "bad input: statuses and messages", test_errors, NULL);
}
