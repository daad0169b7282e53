/* CLI behaviour: help on every command, one-line errors with exit status 2,
 * deadlock exit status 1, JSON and timeline outputs that parse, determinism. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define PLATFORM "configs/platforms/dgx-2node.xml"
#define TRACE "configs/traces/dp-overlap-16.json"

static char out[1 << 16];

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_help(void)
{
    CU_ASSERT_EQUAL(test_cli("--help", out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "validate-trace"));
    const char *cmds[] = {"sim", "validate-trace", "help"};
    for (int i = 0; i < 3; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: trainsim"));
    }
    CU_ASSERT_EQUAL(test_cli("help sim", out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--fidelity"));
}

static void expect_usage_error(const char *args, const char *needle)
{
    int rc = test_cli(args, out, sizeof out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_EQUAL(lines(test_cli_err()), 1);
    CU_ASSERT_EQUAL(out[0], 0); /* errors go to stderr only */
    if (!strstr(test_cli_err(), needle) || rc != 2 || lines(test_cli_err()) != 1)
        fprintf(stderr, "\n'%s' gave %d: %s(wanted '%s')\n", args, rc, test_cli_err(), needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), needle));
}

static void test_usage_errors(void)
{
    expect_usage_error("frobnicate", "unknown command 'frobnicate'");
    expect_usage_error("sim --bogus", "unknown option '--bogus'");
    expect_usage_error("sim --platform", "option '--platform' needs a value");
    expect_usage_error("sim --trace " TRACE, "--platform and --trace are required");
    expect_usage_error("sim --platform " PLATFORM " --trace " TRACE " --fidelity exact",
                       "unknown fidelity 'exact' (valid: step, pipelined)");
    expect_usage_error("sim --platform " PLATFORM " --trace " TRACE " --links many", "--links wants a count");
    expect_usage_error("sim --platform " PLATFORM " --trace /nonexistent.json", "/nonexistent.json: cannot open");
    expect_usage_error("sim --platform /nonexistent.xml --trace " TRACE, "/nonexistent.xml: cannot open platform");
    expect_usage_error("sim --platform tests/data/p2p.xml --trace " TRACE,
                       "16 ranks but the platform has only 2 hosts");
    expect_usage_error("validate-trace --frob", "unknown option '--frob'");
    expect_usage_error("validate-trace", "no trace given");
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "/tmp/trainsim-cli-%d-%s", (int)getpid(), name);
    FILE *f = fopen(path[k], "w");
    fputs(text, f);
    fclose(f);
    return path[k];
}

static void test_malformed_inputs(void)
{
    char args[1024];
    const char *bad = write_tmp("bad.json", "{\n  \"format\": \"trainsim-trace\",\n  \"version\": 1,\n  oops\n}\n");
    snprintf(args, sizeof args, "validate-trace %s", bad);
    expect_usage_error(args, ":4:");
    snprintf(args, sizeof args, "sim --platform " PLATFORM " --trace %s", bad);
    expect_usage_error(args, ":4:");
    const char *xml = write_tmp("bad.xml", "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone>\n</platform>\n");
    snprintf(args, sizeof args, "sim --platform %s --trace " TRACE, xml);
    expect_usage_error(args, "malformed XML platform");
    const char *notplat = write_tmp("np.xml", "<?xml version='1.0'?>\n<html/>\n");
    snprintf(args, sizeof args, "sim --platform %s --trace " TRACE, notplat);
    expect_usage_error(args, "not a SimGrid platform");
    /* a log's NCCL settings and --nccl-env: the file, line, setting and what is wrong */
    const char *env = write_tmp("all_reduce.log", "# nThread 1 nGpus 1\n# ENV: NCCL_ALGO=Ring NCCL_MAX_CTAS=0\n"
                                "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                                "  1048576  262144  float  sum  -1  100.0  10.49  18.35  0  100.0  10.49  18.35  0\n");
    snprintf(args, sizeof args, "compare %s --cluster dgx-h100-superpod --gpus 8", env);
    char want[512];
    snprintf(want, sizeof want, "%s:2: NCCL_MAX_CTAS=0: want an integer from 1", env);
    expect_usage_error(args, want);
    snprintf(args, sizeof args, "compare %s --cluster dgx-h100-superpod --nccl-env NCCL_MIN_CTAS=many", env);
    expect_usage_error(args, "--nccl-env: NCCL_MIN_CTAS=many: want an integer from 1");
    snprintf(args, sizeof args, "calibrate %s --cluster dgx-h100-superpod -o /dev/null --nccl-env MIN_CTAS=4", env);
    expect_usage_error(args, "--nccl-env: 'MIN_CTAS' is not an NCCL_ variable");
    expect_usage_error("coll --platform dgx-h100-superpod --op all_reduce --nccl-env NCCL_ALGO=Fast",
                       "--nccl-env: NCCL_ALGO=Fast: unknown algorithm 'Fast' (valid: Tree, Ring");
}

static void test_validate_ok(void)
{
    CU_ASSERT_EQUAL(test_cli("validate-trace " TRACE, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "ok (16 ranks, 1168 ops, 1 groups)"));
}

static void test_deadlock_exit_status(void)
{
    const char *t = write_tmp("dead.json",
        "{\n  \"format\": \"trainsim-trace\",\n  \"version\": 1,\n  \"nranks\": 3,\n  \"ranks\": [\n"
        "    {\"rank\": 0, \"ops\": [\n      {\"id\": 0, \"kind\": \"recv\", \"peer\": 1, \"bytes\": 8},\n"
        "      {\"id\": 1, \"kind\": \"send\", \"peer\": 2, \"bytes\": 8}\n    ]},\n"
        "    {\"rank\": 1, \"ops\": [\n      {\"id\": 0, \"kind\": \"recv\", \"peer\": 2, \"bytes\": 8},\n"
        "      {\"id\": 1, \"kind\": \"send\", \"peer\": 0, \"bytes\": 8}\n    ]},\n"
        "    {\"rank\": 2, \"ops\": [\n      {\"id\": 0, \"kind\": \"recv\", \"peer\": 0, \"bytes\": 8},\n"
        "      {\"id\": 1, \"kind\": \"send\", \"peer\": 1, \"bytes\": 8}\n    ]}\n  ]\n}\n");
    char args[1024];
    snprintf(args, sizeof args, "sim --platform " PLATFORM " --trace %s", t);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "deadlock: rank 0 stream 0 op 0 (recv from rank 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "rank 2 stream 0 op 0 (recv from rank 0"));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc(n + 1);
    b[fread(b, 1, n, f)] = 0;
    fclose(f);
    return b;
}

static void test_outputs(void)
{
    char args[1024];
    const char *j1 = write_tmp("r1.json", ""), *t1 = write_tmp("t1.json", "");
    snprintf(args, sizeof args, "sim --quiet --links 3 --platform " PLATFORM " --trace " TRACE " --json %s --timeline %s", j1, t1);
    CU_ASSERT_EQUAL_FATAL(test_cli(args, out, sizeof out), 0);
    json_error_t e;
    json_t *r = json_load_file(j1, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "ranks")), 16);
    CU_ASSERT(json_real_value(json_object_get(r, "time_s")) > 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "links")), 3);
    json_t *rank0 = json_array_get(json_object_get(r, "ranks"), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(rank0, "ops")), 73);
    json_decref(r);
    json_t *t = json_load_file(t1, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    json_t *ev = json_object_get(t, "traceEvents");
    size_t nx = 0, i;
    json_t *x;
    json_array_foreach(ev, i, x) nx += strcmp(json_string_value(json_object_get(x, "ph")), "X") == 0;
    CU_ASSERT_EQUAL(nx, 1168);
    json_decref(t);
    /* determinism: a second run writes the same bytes */
    const char *j2 = write_tmp("r2.json", "");
    snprintf(args, sizeof args, "sim --quiet --links 3 --platform " PLATFORM " --trace " TRACE " --json %s", j2);
    CU_ASSERT_EQUAL_FATAL(test_cli(args, out, sizeof out), 0);
    char *a = slurp(j1), *b = slurp(j2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
}

/* Static deadlock detection: two ranks that both receive first. */
static void test_validate_deadlock(void)
{
    const char *t = write_tmp("both-recv.json",
        "{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 2, \"ranks\": [\n"
        " {\"rank\": 0, \"ops\": [{\"id\": 0, \"kind\": \"recv\", \"peer\": 1, \"bytes\": 8},\n"
        "                       {\"id\": 1, \"kind\": \"send\", \"peer\": 1, \"bytes\": 8}]},\n"
        " {\"rank\": 1, \"ops\": [{\"id\": 0, \"kind\": \"recv\", \"peer\": 0, \"bytes\": 8},\n"
        "                       {\"id\": 1, \"kind\": \"send\", \"peer\": 0, \"bytes\": 8}]}]}\n");
    char args[1024];
    snprintf(args, sizeof args, "validate-trace %s", t);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
    const char *e = test_cli_err();
    CU_ASSERT_PTR_NOT_NULL(strstr(e, "deadlock (found without simulating)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e, "rank 0 stream 0 op 0 (recv from rank 1, tag 0, 8 bytes)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e, "rank 1 stream 0 op 0 (recv from rank 0, tag 0, 8 bytes)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e, "[2 streams blocked]"));
    /* one rank sending first breaks the cycle: valid */
    t = write_tmp("one-sends.json",
        "{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 2, \"ranks\": [\n"
        " {\"rank\": 0, \"ops\": [{\"id\": 0, \"kind\": \"send\", \"peer\": 1, \"bytes\": 8},\n"
        "                       {\"id\": 1, \"kind\": \"recv\", \"peer\": 1, \"bytes\": 8}]},\n"
        " {\"rank\": 1, \"ops\": [{\"id\": 0, \"kind\": \"recv\", \"peer\": 0, \"bytes\": 8},\n"
        "                       {\"id\": 1, \"kind\": \"send\", \"peer\": 0, \"bytes\": 8}]}]}\n");
    snprintf(args, sizeof args, "validate-trace %s", t);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "ok (2 ranks, 4 ops, 0 groups)"));
    /* a collective one member reaches only after a recv that waits on the other member */
    t = write_tmp("coll-dead.json",
        "{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 2, \"groups\": [{\"id\": 0, \"ranks\": [0, 1]}],\n"
        " \"ranks\": [\n"
        " {\"rank\": 0, \"ops\": [{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 64},\n"
        "                       {\"id\": 1, \"kind\": \"send\", \"peer\": 1, \"bytes\": 8}]},\n"
        " {\"rank\": 1, \"ops\": [{\"id\": 0, \"kind\": \"recv\", \"peer\": 0, \"bytes\": 8},\n"
        "                       {\"id\": 1, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 64}]}]}\n");
    snprintf(args, sizeof args, "validate-trace %s", t);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "rank 0 stream 0 op 0 (all_reduce on group 0, waiting for its other members)"));
}

/* Write a copy of golden file src with every metric's seconds times f. */
static void scale_golden(const char *src, const char *dst, double f)
{
    json_error_t je;
    json_t *g = json_load_file(src, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(g, "metrics"), i, m)
        json_object_set_new(m, "seconds", json_real(json_number_value(json_object_get(m, "seconds")) * f));
    CU_ASSERT_EQUAL(json_dump_file(g, dst, JSON_INDENT(2)), 0);
    json_decref(g);
}

/* CI regression mode honours its tolerance: every metric moved by 5% fails at
 * 3% and passes at 10%, in both directions; unchanged passes at 0%. */
static void test_replay_tolerance(void)
{
    char gold[256], moved[256], args[1024];
    snprintf(gold, sizeof gold, "%s", test_tmp("gold.json"));
    snprintf(moved, sizeof moved, "%s", test_tmp("moved.json"));
    snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --write-golden", gold);
    CU_ASSERT_EQUAL_FATAL(test_cli(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 0%%", gold);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    const double f[] = {1.05, 1 / 1.05};
    for (int k = 0; k < 2; k++) {
        scale_golden(gold, moved, f[k]);
        snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 3%%", moved);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "REGRESSION"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "iteration"));
        snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 0.03", moved);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
        snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 10%%", moved);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "replay: ok"));
        /* the edge: 4.9% passes at 5%; 5% moved fails at 4.5% */
        snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 4.5%%", moved);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
        snprintf(args, sizeof args, "replay --platform " PLATFORM " --trace " TRACE " --expect %s --tolerance 5.1%%", moved);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    }
    unlink(gold);
    unlink(moved);
}

/* Issue 13's leftovers: did you mean; exit 2 with the option named. */
static void test_error_leftovers(void)
{
    expect_usage_error("rnu", "unknown command 'rnu'; did you mean 'run'?");
    expect_usage_error("help cmopare", "unknown command 'cmopare'; did you mean 'compare'?");
    expect_usage_error("run --modle x", "unknown option '--modle'; did you mean '--model'?");
    expect_usage_error("coll --platfrom x --op all_reduce", "unknown option '--platfrom'; did you mean '--platform'?");
    expect_usage_error("run --xyzzy 1", "unknown option '--xyzzy' (see");
    expect_usage_error("run --model llama3-8b --layout tp=1 --platform dgx-h100-superpdo",
                       "unknown cluster 'dgx-h100-superpdo'; did you mean 'dgx-h100-superpod'?");
    expect_usage_error("run --model lama3-8b --layout tp=1 --platform dgx-h100-superpod",
                       "unknown model 'lama3-8b'; did you mean 'llama3-8b'?");
    expect_usage_error("search --cluster polaris --gpus 0 --model llama3-8b", "--gpus wants a positive count, not '0'");
    expect_usage_error("search --cluster polaris:2 --gpus 64 --model llama3-8b",
                       "--gpus 64 is more than cluster 'polaris:2' has (2 nodes x 4 GPUs = 8)");
    /* calibrate: bad input is exit 2, like every command */
    const char *junk = write_tmp("junk.txt", "#  Rank  0 Group  0 Pid 1 on h device  0 [0x01] NVIDIA A100\n"
                                             "# Collective test starting: frobnicate_perf\n");
    char args[512];
    snprintf(args, sizeof args, "calibrate %s --cluster polaris -o %s", junk, test_tmp("cal.json"));
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    snprintf(args, sizeof args, "calibrate /nonexistent.txt --cluster polaris -o %s", test_tmp("cal.json"));
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    /* coll -b 0: the empty collective, then every other size up to -e */
    CU_ASSERT_EQUAL(test_cli("coll --platform " PLATFORM " --op all_reduce -b 0 -e 64 -f 2", out, sizeof out), 0);
    int rows = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        if (p[1] == ' ' && p[2] && strspn(p + 1, " ") < 14 && p[1 + strspn(p + 1, " ")] >= '0' &&
            p[1 + strspn(p + 1, " ")] <= '9')
            rows++;
    CU_ASSERT_EQUAL(rows, 6); /* 0, 4, 8, 16, 32, 64 bytes of float */
    if (rows != 6) fprintf(stderr, "\n%s\n", out);
}

void suite_cli(void)
{
    test_add_suite("cli",
                   "--help on every command", test_help,
                   "usage errors: one line, exit 2", test_usage_errors,
                   "malformed trace and platform files", test_malformed_inputs,
                   "validate-trace accepts the example", test_validate_ok,
                   "deadlock exits 1 naming the ranks", test_deadlock_exit_status,
                   "validate-trace finds deadlocks statically", test_validate_deadlock,
                   "did you mean, option names, exit 2, coll -b 0", test_error_leftovers,
                   "replay tolerance: 5% moved fails at 3%, passes at 10%", test_replay_tolerance,
                   "JSON and timeline outputs, determinism", test_outputs,
                   NULL);
}
