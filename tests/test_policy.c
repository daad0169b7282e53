/* The collective selection policy: --coll and tuning-table parsing (good and
 * bad rows, file:line errors), the decision order (forced, first matching row,
 * automatic; unfit choices fall back), and that the engine, the analytical
 * model and `trainsim coll` / `sim` / `run` all choose through it. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytic/analytic.h"
#include "coll.h"
#include "coll_params.h"
#include "opgraph.h"
#include "tests.h"
#include "util.h"

static char out[1 << 16];

/* Write text to a fresh temporary file; returns its path (static buffer). */
static const char *tmp_file(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/trainsim-policy-%d-%s", (int)getpid(), name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define HEADER "coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm\n"

static void test_names(void)
{
    CU_ASSERT_EQUAL(coll_from_name("all_reduce"), OG_ALLREDUCE);
    CU_ASSERT_EQUAL(coll_from_name("allreduce"), OG_ALLREDUCE);
    CU_ASSERT_EQUAL(coll_from_name("reducescatter"), OG_REDUCESCATTER);
    CU_ASSERT_EQUAL(coll_from_name("alltoallv"), OG_ALLTOALLV);
    CU_ASSERT_EQUAL(coll_from_name("allreduc"), -1);
    CU_ASSERT_EQUAL(coll_from_name(""), -1);
}

/* The fixture tests/data/tuning_good.csv: comments, a blank line, CRLF line
 * ends and "inf": 4 rows, by hand count. */
static void test_load_good(void)
{
    coll_policy *pol = coll_policy_new();
    char err[TS_ERRLEN] = "";
    CU_ASSERT_EQUAL(coll_policy_load(pol, test_data("tuning_good.csv"), err, sizeof err), 0);
    if (err[0]) fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_EQUAL(coll_policy_rules(pol), 4);
    /* a second file appends */
    CU_ASSERT_EQUAL(coll_policy_load(pol, tmp_file("more.csv", HEADER "barrier,1,inf,0,inf,ring\n"), err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_policy_rules(pol), 5);
    coll_policy_free(pol);
}

/* One bad file: -1, the error names file:line and the value, and no row of
 * the file is kept. */
static void expect_load_error(const char *text, const char *want)
{
    coll_policy *pol = coll_policy_new();
    char err[TS_ERRLEN] = "", full[TS_ERRLEN + 160];
    const char *path = tmp_file("bad.csv", text);
    CU_ASSERT_EQUAL(coll_policy_load(pol, path, err, sizeof err), -1);
    snprintf(full, sizeof full, "%s%s", path, want);
    CU_ASSERT_STRING_EQUAL(err, full);
    if (strcmp(err, full) != 0) fprintf(stderr, "\ngot  '%s'\nwant '%s'\n", err, full);
    CU_ASSERT_EQUAL(coll_policy_rules(pol), 0);
    unlink(path);
    coll_policy_free(pol);
}

static void test_load_bad(void)
{
    expect_load_error("", ": empty: no 'coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm' header");
    expect_load_error("coll,gpus,size,algorithm\nall_reduce,8,8,rhd:ll\n",
                      ":1: header 'coll,gpus,size,algorithm' is not 'coll,min_gpus,max_gpus,min_bytes,max_bytes,"
                      "algorithm'");
    expect_load_error(HEADER "all_reduce,1,8,0,inf,ring\nallreduse,1,8,0,inf,ring\n",
                      ":3: unknown collective 'allreduse'");
    expect_load_error("# comment\n" HEADER "\nall_reduce,1,8,0,inf\n",
                      ":4: 5 fields, not the 6 of 'coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm'");
    expect_load_error(HEADER "all_reduce,1,8,0,inf,ring,extra\n",
                      ":2: 7 fields, not the 6 of 'coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm'");
    expect_load_error(HEADER "all_reduce,0,8,0,inf,ring\n", ":2: min_gpus wants a group size of at least 1, not '0'");
    expect_load_error(HEADER "all_reduce,1,8x,0,inf,ring\n",
                      ":2: max_gpus wants a group size of at least 1 or inf, not '8x'");
    expect_load_error(HEADER "all_reduce,1,8,-5,inf,ring\n",
                      ":2: min_bytes wants a byte count of at least 0, not '-5'");
    expect_load_error(HEADER "all_reduce,1,8,0,,ring\n",
                      ":2: max_bytes wants a byte count of at least 0 or inf, not ''");
    expect_load_error(HEADER "all_reduce,1,inf,0,99999999999999999999,ring\n",
                      ":2: max_bytes wants a byte count of at least 0 or inf, not '99999999999999999999'");
    expect_load_error(HEADER "all_reduce,16,8,0,inf,ring\n", ":2: max_gpus '8' below min_gpus '16'");
    expect_load_error(HEADER "all_reduce,1,8,100,99,ring\n", ":2: max_bytes '99' below min_bytes '100'");
    expect_load_error(HEADER "all_gather,1,8,0,inf,tree\n",
                      ":2: unknown algorithm 'tree' for all_gather (valid: ring, rhd, bruck, pat, hierarchical, hier-rd, nvls)");
    expect_load_error(HEADER "all_reduce,1,8,0,inf,ring:fast\n",
                      ":2: unknown protocol 'fast' in 'ring:fast' (valid: simple, ll128, ll)");
    char err[TS_ERRLEN];
    coll_policy *pol = coll_policy_new();
    CU_ASSERT_EQUAL(coll_policy_load(pol, "/nonexistent/t.csv", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "/nonexistent/t.csv: cannot open: No such file or directory");
    coll_policy_free(pol);
}

static void test_force_parse(void)
{
    coll_policy *pol = coll_policy_new();
    char err[TS_ERRLEN];
    int a;
    coll_proto pr;
    CU_ASSERT_EQUAL(coll_policy_forced(pol, OG_ALLREDUCE, &a, &pr), 0);
    CU_ASSERT_EQUAL(coll_policy_force(pol, "allreduce=tree:ll128,all_gather=ring,allreduce=rhd", err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_policy_forced(pol, OG_ALLREDUCE, &a, &pr), 1); /* the later item wins */
    CU_ASSERT_STRING_EQUAL(coll_algo_get(a)->name, "rhd");
    CU_ASSERT_EQUAL(pr, COLL_PROTO_AUTO); /* no protocol given: the tuner picks it per call */
    CU_ASSERT_EQUAL(coll_policy_forced(pol, OG_ALLGATHER, &a, &pr), 1);
    CU_ASSERT_STRING_EQUAL(coll_algo_get(a)->name, "ring");
    CU_ASSERT_EQUAL(coll_policy_forced(pol, OG_BROADCAST, &a, &pr), 0);
    CU_ASSERT_EQUAL(coll_policy_force(pol, "allreduce", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "'allreduce' is not COLLECTIVE=ALGORITHM");
    CU_ASSERT_EQUAL(coll_policy_force(pol, "allfoo=ring", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "unknown collective 'allfoo'");
    CU_ASSERT_EQUAL(coll_policy_force(pol, "broadcast=ring", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "unknown algorithm 'ring' for broadcast (valid: chain, tree)");
    coll_policy_free(pol);
}

/* The decision order, on a 25 GB/s, 2 us crossbar of 8 GPUs (no topology:
 * one node per member, no NVLS) and on 2 NVLS nodes of 4. */
static void test_select(void)
{
    coll_hw hw = {2e-6, 25e9, NULL, 0, 0};
    coll_proto pr, apr;
    coll_source src;
    char err[TS_ERRLEN];
    coll_policy *pol = coll_policy_new();
    const char *path = tmp_file("sel.csv", HEADER
                                "# 1 KiB to 1 MiB on 8 to 16 ranks: rhd with LL; above: rabenseifner\n"
                                "all_reduce,8,16,1024,1048576,rhd:ll\n"
                                "all_reduce,8,16,1048577,inf,rabenseifner\n"
                                "all_reduce,1,inf,0,inf,ring:ll128\n"
                                "all_gather,1,inf,0,inf,nvls\n");
    CU_ASSERT_EQUAL_FATAL(coll_policy_load(pol, path, err, sizeof err), 0);
    unlink(path);
    /* NULL policy: exactly coll_select */
    int automatic = coll_select(OG_ALLREDUCE, 8, 4096, &hw, &apr);
    CU_ASSERT_EQUAL(coll_policy_select(NULL, OG_ALLREDUCE, 8, 4096, &hw, &pr, &src), automatic);
    CU_ASSERT_EQUAL(pr, apr);
    CU_ASSERT_EQUAL(src, COLL_BY_AUTO);
    /* rows: ranges are inclusive at both ends; the first match wins */
    int64_t sizes[] = {1024, 1048576, 1048577, 1023};
    const char *want[] = {"rhd", "rhd", "rabenseifner", "ring"};
    coll_proto wpr[] = {COLL_LL, COLL_LL, COLL_SIMPLE, COLL_LL128};
    for (int i = 0; i < 4; i++) {
        int a = coll_policy_select(pol, OG_ALLREDUCE, 8, sizes[i], &hw, &pr, &src);
        CU_ASSERT_STRING_EQUAL(coll_algo_get(a)->name, want[i]);
        CU_ASSERT_EQUAL(pr, wpr[i]);
        CU_ASSERT_EQUAL(src, COLL_BY_TABLE);
    }
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_policy_select(pol, OG_ALLREDUCE, 17, 4096, &hw, &pr, &src))->name,
                           "ring");
    /* no row for broadcast: automatic */
    automatic = coll_select(OG_BROADCAST, 8, 4096, &hw, &apr);
    CU_ASSERT_EQUAL(coll_policy_select(pol, OG_BROADCAST, 8, 4096, &hw, &pr, &src), automatic);
    CU_ASSERT_EQUAL(src, COLL_BY_AUTO);
    /* the matching row's NVLS cannot run without NVLS nodes: automatic */
    automatic = coll_select(OG_ALLGATHER, 8, 4096, &hw, &apr);
    CU_ASSERT_EQUAL(coll_policy_select(pol, OG_ALLGATHER, 8, 4096, &hw, &pr, &src), automatic);
    CU_ASSERT_EQUAL(pr, apr);
    CU_ASSERT_EQUAL(src, COLL_BY_AUTO);
    /* ... and runs on one NVLS node */
    int one[4] = {0, 0, 0, 0};
    coll_topo *t1 = coll_topo_new(4, one, 1);
    coll_hw hw1 = {1e-6, 450e9, t1, 0, 0};
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_policy_select(pol, OG_ALLGATHER, 4, 4096, &hw1, &pr, &src))->name,
                           "nvls");
    CU_ASSERT_EQUAL(src, COLL_BY_TABLE);
    /* --coll wins over the table */
    CU_ASSERT_EQUAL(coll_policy_force(pol, "allreduce=tree:ll,allgather=nvls", err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_policy_select(pol, OG_ALLREDUCE, 8, 4096, &hw, &pr, &src))->name,
                           "tree");
    CU_ASSERT_EQUAL(pr, COLL_LL);
    CU_ASSERT_EQUAL(src, COLL_BY_FORCE);
    /* a forced NVLS on two NVLS nodes cannot run (one node only): automatic */
    int two[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    coll_topo *t2 = coll_topo_new(8, two, 1);
    coll_hw hw2 = {1e-6, 450e9, t2, 3e-6, 50e9};
    automatic = coll_select(OG_ALLGATHER, 8, 1 << 20, &hw2, &apr);
    CU_ASSERT_STRING_NOT_EQUAL(coll_algo_get(automatic)->name, "nvls");
    CU_ASSERT_EQUAL(coll_policy_select(pol, OG_ALLGATHER, 8, 1 << 20, &hw2, &pr, &src), automatic);
    CU_ASSERT_EQUAL(src, COLL_BY_AUTO);
    CU_ASSERT_STRING_EQUAL(coll_source_name(COLL_BY_TABLE), "table");
    coll_topo_free(t1);
    coll_topo_free(t2);
    coll_policy_free(pol);
}

/* `trainsim sim --coll` / `--tuning` reach the engine: an 8-rank 1 MiB
 * all-reduce on a crossbar (route latency 2 x 1 us, 25 GB/s; no node
 * properties, so every step crosses "nodes") takes rhd's closed form, the
 * pipelined flows' alpha + log2(8) S/B plus the model's latency with NCCL's
 * figures (the CLI runs with the preset): the MPI family's Simple base latency
 * + log2(8) network hops, where the automatic choice (ring/tree) costs
 * otherwise. */
static double sim_time(const char *trace, const char *extra)
{
    char cmd[1024], json[128];
    snprintf(json, sizeof json, "/tmp/trainsim-policy-%d-sim.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "sim --platform %s --trace %s --quiet --json %s %s", test_crossbar(8, 25e9, 1e-6), trace,
             json, extra);
    int rc = test_cli(cmd, out, sizeof out);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0) fprintf(stderr, "\n%s: %s\n", cmd, out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    double t = root ? json_number_value(json_object_get(root, "time_s")) : -1;
    json_decref(root);
    unlink(json);
    return t;
}

static void test_sim_cli(void)
{
    const int64_t S = 1 << 20;
    char trace[128], err[TS_ERRLEN];
    snprintf(trace, sizeof trace, "/tmp/trainsim-policy-%d-trace.json", (int)getpid());
    og_graph *g = test_one_collective(8, OG_ALLREDUCE, S, NULL);
    CU_ASSERT_EQUAL_FATAL(og_write_file(g, trace, err, sizeof err), 0);
    og_free(g);
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    double rhd = 2e-6 + 3 * (double)S / 25e9 + q.base_lat[COLL_FAM_MPI][COLL_SIMPLE] +
                 3 * q.hop_lat[COLL_TIER_NIC][COLL_FAM_MPI][COLL_SIMPLE];
    CU_ASSERT_DOUBLE_EQUAL(sim_time(trace, "--coll allreduce=rhd:simple"), rhd, 1e-9 * rhd);
    /* without a protocol the tuner picks rhd's fastest by its model (here
     * LL128: 14 us base, 4 us hops, 120 of 128 bytes) */
    double tuned = sim_time(trace, "--coll allreduce=rhd");
    CU_ASSERT(tuned > 0 && tuned < rhd);
    const char *tab = tmp_file("sim.csv", HEADER "all_reduce,8,8,1048576,1048576,rhd:simple\n");
    char arg[256];
    snprintf(arg, sizeof arg, "--tuning %s", tab);
    CU_ASSERT_DOUBLE_EQUAL(sim_time(trace, arg), rhd, 1e-9 * rhd);
    double automatic = sim_time(trace, "");
    CU_ASSERT(automatic > 0 && fabs(automatic - rhd) > 1e-3 * rhd);
    /* a row that does not hold 1 MiB leaves the automatic choice */
    tab = tmp_file("sim.csv", HEADER "all_reduce,8,8,0,1048575,rhd:simple\n");
    snprintf(arg, sizeof arg, "--tuning %s", tab);
    CU_ASSERT_DOUBLE_EQUAL(sim_time(trace, arg), automatic, 1e-12);
    unlink(tab);
    unlink(trace);
}

/* Bad --coll and --tuning: one line, exit 2, on every command that takes them. */
static void test_cli_errors(void)
{
    const char *tab = tmp_file("err.csv", HEADER "all_reduce,1,8,0,inf,rign\n");
    const char *cmds[] = {"coll --op all_reduce --platform X", "sim --platform X --trace Y",
                          "run --model llama3-8b --layout tp=1 --fidelity analytical",
                          "search --cluster dgx-h100-superpod --gpus 8 --model llama3-8b"};
    for (int i = 0; i < 4; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s --coll allreduce=rign", cmds[i]);
        CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "--coll: unknown algorithm 'rign' for all_reduce"));
        snprintf(cmd, sizeof cmd, "%s --tuning %s", cmds[i], tab);
        CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 2);
        char want[256];
        snprintf(want, sizeof want, "--tuning: %s:2: unknown algorithm 'rign'", tab);
        CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), want));
        if (!strstr(out, want)) fprintf(stderr, "\n%s: %s\n", cmd, out);
    }
    unlink(tab);
}

/* `trainsim coll --tuning`: the CSV names the table's algorithm per size,
 * and the automatic one where the row's algorithm cannot run. */
static void test_coll_cli(void)
{
    char cmd[1024], csv[128];
    snprintf(csv, sizeof csv, "/tmp/trainsim-policy-%d-coll.csv", (int)getpid());
    const char *tab = tmp_file("coll.csv", HEADER "all_reduce,4,4,0,2097151,rhd:ll\n"
                                                  "all_reduce,4,4,2097152,4194303,nvls\n"
                                                  "all_reduce,4,4,4194304,inf,rabenseifner:ll128\n");
    snprintf(cmd, sizeof cmd, "coll --platform %s --op all_reduce -b 1M -e 8M --tuning %s --fidelity analytical "
                              "--csv %s", test_crossbar(4, 25e9, 1e-6), tab, csv);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    FILE *f = fopen(csv, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[512];
    const char *want[] = {",rhd,ll,", NULL, ",rabenseifner,ll128,", ",rabenseifner,ll128,"};
    int rows = 0;
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f) && rows < 4) {
        if (want[rows]) {
            CU_ASSERT_PTR_NOT_NULL(strstr(line, want[rows]));
        } else {
            CU_ASSERT_PTR_NULL(strstr(line, ",nvls,")); /* 2 MiB: NVLS unfit on a crossbar, automatic */
        }
        rows++;
    }
    CU_ASSERT_EQUAL(rows, 4);
    fclose(f);
    unlink(csv);
    unlink(tab);
}

/* The engine and the analytical model choose the same algorithm for every
 * collective of a training iteration (ZeRO-3 on 2 DGX H100 nodes, every
 * collective a real op): run --json's "collectives" lists are equal, and
 * hold the table's choices. */
static json_t *run_colls(const char *fid, const char *tab)
{
    char cmd[1024], json[128];
    snprintf(json, sizeof json, "/tmp/trainsim-policy-%d-run.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "run --model llama3-8b --layout tp=2,pp=1,dp=8,mbs=1,gbs=8,zero=3,recompute=full "
                              "--seq 1024 --cluster dgx-h100-superpod --nodes 2 --detail full --fidelity %s "
                              "--tuning %s --json %s", fid, tab, json);
    int rc = test_cli(cmd, out, sizeof out);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) fprintf(stderr, "\n%s: %s\n", cmd, out);
    json_error_t je;
    json_t *root = json_load_file(json, 0, &je);
    unlink(json);
    json_t *c = root ? json_incref(json_object_get(root, "collectives")) : NULL;
    json_decref(root);
    return c;
}

static void test_engine_vs_analytical(void)
{
    const char *tab = tmp_file("run.csv", HEADER "all_gather,8,8,0,inf,rhd:simple\n"
                                                 "reduce_scatter,8,8,0,inf,pat:ll128\n"
                                                 "all_reduce,2,2,0,inf,nvls:ll\n");
    json_t *an = run_colls("analytical", tab), *sg = run_colls("pipelined", tab);
    CU_ASSERT_PTR_NOT_NULL_FATAL(an);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sg);
    CU_ASSERT(json_array_size(an) >= 3);
    CU_ASSERT(json_equal(an, sg));
    size_t i;
    json_t *e;
    int ag = 0, rs = 0, ar = 0;
    json_array_foreach(an, i, e) {
        const char *c = json_string_value(json_object_get(e, "collective"));
        const char *a = json_string_value(json_object_get(e, "algorithm"));
        const char *p = json_string_value(json_object_get(e, "protocol"));
        int n = (int)json_integer_value(json_object_get(e, "ranks"));
        if (strcmp(c, "all_gather") == 0 && n == 8) {
            ag++;
            CU_ASSERT(!strcmp(a, "rhd") && !strcmp(p, "simple"));
        } else if (strcmp(c, "reduce_scatter") == 0 && n == 8) {
            rs++;
            CU_ASSERT(!strcmp(a, "pat") && !strcmp(p, "ll128"));
        } else if (strcmp(c, "all_reduce") == 0 && n == 2) {
            ar++;
            CU_ASSERT(!strcmp(a, "nvls") && !strcmp(p, "ll"));
        }
    }
    CU_ASSERT(ag > 0 && rs > 0 && ar > 0);
    json_decref(an);
    json_decref(sg);
    unlink(tab);
}

/* Two ranks post an all-gather and a reduce-scatter on one group from two
 * streams in opposite orders (rank 0: all-gather at 0, reduce-scatter at
 * 2 ms; rank 1: reduce-scatter at 0, all-gather at 2 ms). Both are matched in
 * op order, as the engine does: each starts at 2 ms, when its last member
 * arrives, and lasts its ring closed form on 2 ranks, lat + Simple's step
 * latency + (S/2)/B (the engine: both at once on one link). (The
 * analytical path used to pair them in posting order: all-gather with
 * reduce-scatter.) */
static void test_op_order_matching(void)
{
    const int64_t A = 8 << 20, R = 32 << 20; /* all-gather and reduce-scatter sizes */
    og_graph *g = og_new(2);
    int ranks[2] = {0, 1};
    int gid = og_add_group(g, 2, ranks);
    og_op *op;
    /* rank 0: op0 all-gather (stream 0), op1 compute 2 ms (stream 1), op2 reduce-scatter after it */
    og_set_algo(og_collective(g, 0, 0, OG_ALLGATHER, gid, A, OG_F32), "ring");
    og_compute_fixed(g, 0, 1, 2e-3);
    op = og_collective(g, 0, 1, OG_REDUCESCATTER, gid, R, OG_F32);
    og_set_algo(op, "ring");
    og_add_dep(op, 1);
    /* rank 1: op0 compute 2 ms (stream 0), op1 all-gather after it, op2 reduce-scatter (stream 1) */
    og_compute_fixed(g, 1, 0, 2e-3);
    op = og_collective(g, 1, 0, OG_ALLGATHER, gid, A, OG_F32);
    og_set_algo(op, "ring");
    og_add_dep(op, 0);
    og_set_algo(og_collective(g, 1, 1, OG_REDUCESCATTER, gid, R, OG_F32), "ring");
    const double lat = 2e-6, bw = 25e9, d = 0.0;
    an_net net = {8, bw, lat, bw, lat, 0, 0, 0, NULL, 0, NULL, NULL}; /* both ranks on node 0 */
    double tag = lat + d + (double)A / 2 / bw, trs = lat + d + (double)R / 2 / bw;
    eng_result *res = NULL;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(an_run(g, &net, &res, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(res->end[0][0], 2e-3 + tag, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(res->end[1][1], 2e-3 + tag, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(res->end[0][2], 2e-3 + trs, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(res->end[1][2], 2e-3 + trs, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(res->makespan, 2e-3 + trs, 1e-12);
    eng_result_free(res);
    /* the engine on a crossbar with the same route (2 x 1 us, 25 GB/s) */
    eng_opts o = {ENG_PIPELINED, 0, 0, 0, 0};
    test_outcome t;
    CU_ASSERT_EQUAL(test_sim(test_crossbar(2, bw, lat / 2), g, &o, &t), 0);
    /* it matches them alike, and runs both at once over the same two links (max-min shares):
     * the reduce-scatter ends when both volumes have crossed, where the contention-free
     * analytical path lets each have the link */
    CU_ASSERT_DOUBLE_EQUAL(t.makespan, 2e-3 + lat + d + (double)(A + R) / 2 / bw, 1e-9);
    og_free(g);
}

void suite_policy(void)
{
    test_add_suite("policy",
                   "collective names with and without underscores", test_names,
                   "tuning table: good rows", test_load_good,
                   "tuning table: bad rows name file:line and the value", test_load_bad,
                   "--coll parser", test_force_parse,
                   "selection: forced, first matching row, automatic, unfit falls back", test_select,
                   "sim --coll/--tuning: rhd's closed form", test_sim_cli,
                   "coll --tuning: the table's choice per size", test_coll_cli,
                   "bad --coll/--tuning on coll, sim, run, search: exit 2", test_cli_errors,
                   "run: engine and analytical model choose alike", test_engine_vs_analytical,
                   "analytical model matches collectives in op order", test_op_order_matching,
                   NULL);
}
