/* `trainsim coll` against real nccl-tests logs (../shared/data/nccl-tests):
 * the column header lines are identical, every data line has the same column
 * layout (field widths), and size/count/type/redop/root agree line by line. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_params.h"
#include "tests.h"
#include "util.h"

#define LOGDIR "../shared/data/nccl-tests/"

static char out[1 << 18];

/* Lines of a text; returns the count, pointers into buf (modified). */
static int split_lines(char *buf, char **ls, int max)
{
    int n = 0;
    for (char *s = strtok(buf, "\n"); s && n < max; s = strtok(NULL, "\n")) ls[n++] = s;
    return n;
}

/* End column of each whitespace-separated field (nccl-tests right-aligns). */
static int field_ends(const char *l, int *ends, int max)
{
    int n = 0;
    for (int i = 0; l[i] && n < max; i++)
        if (l[i] != ' ' && (l[i + 1] == ' ' || l[i + 1] == 0)) ends[n++] = i;
    return n;
}

static char *read_log(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, LOGDIR "%s", name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = ts_malloc(1 << 18);
    size_t n = fread(buf, 1, (1 << 18) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Compare a simulated sweep with a real log: header lines (when same_header),
 * then every data line's layout and first five columns. */
static void compare(const char *log, const char *args, int same_header, int same_counts)
{
    char *real = read_log(log);
    if (!real) {
        printf("\n  skipped: %s not found (../shared/data absent)\n", log);
        return;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "coll --platform %s %s --fidelity analytical", test_crossbar(8, 25e9, 1e-6), args);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "# Collective test concluded: "));
    char *rl[128], *sl[128];
    int nr = split_lines(real, rl, 128), ns = split_lines(out, sl, 128);
    /* header: the three lines above the first data line */
    int rh = 0, sh = 0;
    while (rh < nr && rl[rh][0] == '#') rh++;
    while (sh < ns && sl[sh][0] == '#') sh++;
    CU_ASSERT_FATAL(rh >= 3 && sh >= 3);
    if (same_header)
        for (int i = 3; i >= 1; i--) {
            CU_ASSERT_STRING_EQUAL(sl[sh - i], rl[rh - i]);
            if (strcmp(sl[sh - i], rl[rh - i])) fprintf(stderr, "\n got  '%s'\n want '%s'\n", sl[sh - i], rl[rh - i]);
        }
    int ndata = 0;
    for (int i = rh, j = sh; i < nr && j < ns && rl[i][0] != '#' && sl[j][0] != '#'; i++, j++) {
        int re[16], se[16];
        int nrf = field_ends(rl[i], re, 16), nsf = field_ends(sl[j], se, 16);
        CU_ASSERT_EQUAL(nrf, 13);
        CU_ASSERT_EQUAL(nsf, 13);
        /* layout: same widths wherever the real log uses the same format */
        int upto = same_header ? 13 : 8;
        for (int k = 0; k < upto && k < nrf && k < nsf; k++) CU_ASSERT_EQUAL(se[k], re[k]);
        /* size, count, type, redop, root: identical text */
        ndata++;
        if (!same_counts) continue;
        CU_ASSERT_EQUAL(strncmp(sl[j], rl[i], re[4] + 1), 0);
        if (strncmp(sl[j], rl[i], re[4] + 1)) fprintf(stderr, "\n got  '%s'\n want '%s'\n", sl[j], rl[i]);
    }
    /* as many data lines as the real sweep */
    int rd = 0, sd = 0;
    for (int i = rh; i < nr && rl[i][0] != '#'; i++) rd++;
    for (int j = sh; j < ns && sl[j][0] != '#'; j++) sd++;
    CU_ASSERT_EQUAL(sd, rd);
    CU_ASSERT(ndata >= 20);
    free(real);
}

static void test_allreduce_h100(void)
{
    compare("nccl_h100x8_single_node_all_reduce_ring_together.txt", "--op all_reduce -b 8 -e 8G -f 2", 1, 1);
}

static void test_allgather_h100(void)
{
    compare("nccl_h100x8_single_node_all_gather_ring_together.txt", "--op all_gather -b 8 -e 8G -f 2", 1, 1);
}

/* Polaris' logs come from an older nccl-tests (#wrong one column narrower,
 * per-rank counts not aligned to 16 bytes): the first eight columns' layout
 * agrees, and all-reduce's sizes and counts too. */
static void test_polaris(void)
{
    compare("nccl_polaris_a100_2nodes_8gpu_all_reduce_alcf.txt", "--op all_reduce -b 4 -e 1G -f 2", 0, 1);
    compare("nccl_polaris_a100_2nodes_8gpu_alltoall_alcf.txt", "--op alltoall -b 4 -e 1G -f 2", 0, 0);
}

/* NCCL's ring all-reduce latency on 8 ranks, each its own node, Simple. */
static double ring_tail(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    return q.base_lat[COLL_FAM_RING][COLL_SIMPLE] + 14 * q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE];
}

/* busbw = algbw x nccl-tests' factor; algbw = size / time. */
static void test_bandwidths(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "coll --platform %s --op all_reduce -b 1G -e 1G --algo ring --fidelity pipelined",
             test_crossbar(8, 25e9, 1e-6));
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    char *l = strstr(out, "\n  1073741824");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    long long size, count;
    char type[16], op[16];
    int root;
    double t, alg, bus;
    CU_ASSERT_EQUAL_FATAL(sscanf(l, "%lld %lld %15s %15s %d %lf %lf %lf", &size, &count, type, op, &root, &t, &alg,
                                 &bus), 8);
    /* ring with the CLI's NCCL figures: the pipelined flows (one route
     * latency, 2 us, and 2(7/8) S / B) + the base latency + 14 network hops
     * (no node properties: every step leaves its "node") */
    double want = ring_tail() + 2e-6 + 2.0 * 7 / 8 * 1073741824.0 / 25e9;
    CU_ASSERT_DOUBLE_EQUAL(t, want * 1e6, 0.06); /* printed with one decimal */
    CU_ASSERT_DOUBLE_EQUAL(alg, 1073741824.0 / want / 1e9, 0.006);
    CU_ASSERT_DOUBLE_EQUAL(bus, alg * 1.75, 0.015); /* both rounded to 0.01 */
    CU_ASSERT_EQUAL(count, 268435456);
}

/* --cfg reaches SimGrid even for the options the engine sets by default: a
 * TCP-gamma of 64 KiB caps each flow at gamma / (2 x route latency) = 65536 /
 * 4 us = 16.4 GB/s, below the 25 GB/s links (DESIGN.md's pitfall). */
static void test_cfg_override(void)
{
    char cmd[512];
    double t[2];
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "coll --platform %s --op all_reduce -b 1G -e 1G --algo ring --fidelity pipelined%s",
                 test_crossbar(8, 25e9, 1e-6), k ? " --cfg=network/TCP-gamma:65536" : "");
        CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
        char *l = strstr(out, "\n  1073741824");
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        CU_ASSERT_EQUAL_FATAL(sscanf(l, "%*d %*d %*s %*s %*d %lf", &t[k]), 1);
    }
    double capped = ring_tail() + 2e-6 + 2.0 * 7 / 8 * 1073741824.0 / (65536 / 4e-6);
    CU_ASSERT(fabs(t[1] - capped * 1e6) / (capped * 1e6) < 0.01);
    CU_ASSERT(t[1] > 1.4 * t[0]);
}

static void expect_error(const char *args, const char *needle)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "coll --platform %s %s", test_crossbar(4, 25e9, 1e-6), args);
    int rc = test_cli(cmd, out, sizeof out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), needle));
    if (!strstr(test_cli_err(), needle)) fprintf(stderr, "\n'%s': got '%s'\n", args, test_cli_err());
}

static void test_errors(void)
{
    expect_error("--op all_reduce --algo rign",
                 "unknown algorithm 'rign' for all_reduce (valid: ring, tree, rhd, rabenseifner, hierarchical, nvls, nvlstree, collnet)");
    expect_error("--op all_reduce --coll allgather=tree", "unknown algorithm 'tree' for all_gather (valid: ring, rhd, bruck, pat, hierarchical, hier-rd, nvls)");
    expect_error("--op all_reduce --gpus 0", "--gpus wants a group size of at least 1, not '0'");
    expect_error("--op all_reduce --gpus 5", "--gpus 5 but");
    expect_error("--op allgahter", "unknown --op 'allgahter'");
    expect_error("--op broadcast --root 4", "--root 4 outside the group of 4");
    expect_error("--op all_reduce -b 1X", "-b wants a size like 8, 64K, 1M or 8G, not '1X'");
    expect_error("--op all_reduce --fidelity exact", "unknown fidelity 'exact' (valid: step, pipelined, analytical)");
    CU_ASSERT_EQUAL(test_cli("coll --help", out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: trainsim coll"));
}

/* --coll forces one collective's algorithm; the CSV says which ran. */
static void test_override_csv(void)
{
    char cmd[512], path[64];
    snprintf(path, sizeof path, "/tmp/trainsim-coll-%d.csv", (int)getpid());
    snprintf(cmd, sizeof cmd, "coll --platform %s --op all_reduce -b 1M -e 4M --coll allreduce=tree:ll128,allgather=ring "
                              "--csv %s", test_crossbar(4, 25e9, 1e-6), path);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[512];
    int rows = 0;
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_EQUAL(strncmp(line, "op,gpus,size,count,type,redop,root,time_us,algbw_gbs,busbw_gbs,algorithm,protocol", 80), 0);
    while (fgets(line, sizeof line, f)) {
        rows++;
        CU_ASSERT_PTR_NOT_NULL(strstr(line, ",tree,ll128,pipelined"));
    }
    fclose(f);
    unlink(path);
    CU_ASSERT_EQUAL(rows, 3);
}

/* JSON: one record per size with the nccl-tests quantities; the same run
 * twice gives byte-identical output. */
static void test_json_deterministic(void)
{
    char cmd[512], path[64];
    snprintf(path, sizeof path, "/tmp/trainsim-coll-%d.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "coll --platform %s --op reduce_scatter -b 1K -e 1M -f 4 --json %s",
             test_crossbar(4, 25e9, 1e-6), path);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    char *first = ts_strdup(out);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *rs = json_object_get(root, "results");
    CU_ASSERT_EQUAL(json_array_size(rs), 6); /* 1K 4K 16K 64K 256K 1M */
    for (size_t i = 0; i < json_array_size(rs); i++) {
        json_t *r = json_array_get(rs, i);
        double size = json_number_value(json_object_get(r, "size")), t = json_number_value(json_object_get(r, "time_us"));
        double alg = json_number_value(json_object_get(r, "algbw_gbs")), bus = json_number_value(json_object_get(r, "busbw_gbs"));
        CU_ASSERT(t > 0);
        CU_ASSERT_DOUBLE_EQUAL(alg, size / (t * 1e-6) / 1e9, 1e-9 * alg);
        CU_ASSERT_DOUBLE_EQUAL(bus, alg * 3 / 4, 1e-9 * alg);
        CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(r, "algorithm")));
    }
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "op")), "reduce_scatter");
    json_decref(root);
    unlink(path);
    CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 0);
    CU_ASSERT_STRING_EQUAL(out, first);
    free(first);
    unlink(path);
    expect_error("--op all_reduce -i 0", "-i wants a size");
}

void suite_cmd_coll(void)
{
    test_add_suite("cmd_coll",
                   "header and columns equal nccl-tests 2.17.9 all_reduce log", test_allreduce_h100,
                   "header and columns equal nccl-tests 2.17.9 all_gather log", test_allgather_h100,
                   "sizes and columns equal older Polaris logs", test_polaris,
                   "algbw and busbw definitions", test_bandwidths,
                   "--cfg overrides the engine's SimGrid defaults", test_cfg_override,
                   "bad input: one line, exit 2", test_errors,
                   "--coll override and CSV", test_override_csv,
                   "JSON output, determinism", test_json_deterministic,
                   NULL);
}
