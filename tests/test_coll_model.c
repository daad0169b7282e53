/* The collective cost model (models/coll/coll_params.h, model.c): the small-
 * message floor and the large-message plateau of every shipped nccl-tests log
 * without calibration, NCCL's tree (a chain in each node, a tree across the
 * nodes) against its closed form on 2 and 16 DGX nodes, and the parameter
 * overlay's checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "analytic/analytic.h"
#include "cluster.h"
#include "coll.h"
#include "coll_params.h"
#include "tests.h"
#include "val.h"
#include "util.h"

#define NCCL_DIR "../shared/data/nccl-tests"

/* The one table row `compare` prints for size S of LOG on CLUSTER: the
 * measured and predicted times (us) and the error (%); NULL outputs are
 * skipped. */
static int compare_row_in(const char *dir, const char *log, const char *cluster, const char *extra, const char *algo,
                          const char *size, double *meas, double *pred, double *err)
{
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "compare %s/%s --cluster %s %s %s%s -b %s -e %s", dir, log, cluster, extra,
             algo ? "--algo " : "", algo ? algo : "", size, size);
    if (test_cli(cmd, out, sizeof out) != 0) {
        fprintf(stderr, "\n  %s: %s", cmd, out);
        return -1;
    }
    /* the one table row: size measured predicted meas_busbw pred_busbw error% */
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        double v[6];
        if (line[0] != '#' && sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6) {
            if (meas) *meas = v[1];
            if (pred) *pred = v[2];
            if (err) *err = v[5];
            fprintf(stderr, "\n  %s %s B: measured %.2f us, predicted %.2f us (%+.1f%%)", log, size, v[1], v[2], v[5]);
            return 0;
        }
    }
    return -1;
}

/* The error (%) `compare` reports for the one size S of LOG on CLUSTER. */
static int compare_error_in(const char *dir, const char *log, const char *cluster, const char *extra, const char *algo,
                            const char *size, double *err)
{
    return compare_row_in(dir, log, cluster, extra, algo, size, NULL, NULL, err);
}

static int compare_error(const char *log, const char *cluster, const char *algo, const char *size, double *err)
{
    return compare_error_in(NCCL_DIR, log, cluster, "", algo, size, err);
}

/* One size of a repository log (tests/data/accuracy), uncalibrated, the
 * library's choice: `compare` must read it and come within tol %. */
typedef struct {
    const char *log, *cluster, *extra, *size;
    double tol;
} log_pt;

static void check_log_pts(const log_pt *pts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double e = 1e9;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", pts[i].log, pts[i].cluster, pts[i].extra, NULL, pts[i].size, &e),
                        0);
        if (fabs(e) > pts[i].tol) fprintf(stderr, "\n  %s at %s B: %+.1f%% (limit %g%%)", pts[i].log, pts[i].size, e, pts[i].tol);
        CU_ASSERT(fabs(e) <= pts[i].tol);
    }
}

/* The same for the repository's own files (tests/data/accuracy): the
 * Polaris sweeps at 2 to 540 nodes, uncalibrated, the library's choice
 * (plateau NULL: not checked). */
static void test_floor_plateau_repo(void)
{
    static const struct {
        const char *log, *extra, *floor, *plateau;
    } logs[] = {
        {"nccl_polaris_a100_2nodes_8gpu_all_gather_alcf.txt", "--nodes 2", "128", "1073741824"},
        {"nccl_polaris_a100_8nodes_32gpu_all_reduce_alcf.txt", "--nodes 8 --gpus 32", "8", "1073741824"},
        {"nccl_polaris_a100_8nodes_32gpu_all_gather_alcf.txt", "--nodes 8 --gpus 32", "512", "1073741824"},
        /* 256 and 540 nodes: the floor; the 1 GiB plateau is 14% (all_reduce)
         * and 13% (all_gather) off (docs/accuracy.md) */
        {"nccl_polaris_a100_256nodes_1024gpu_all_reduce_alcf.txt", "--nodes 256 --gpus 1024", "8", NULL},
        {"nccl_polaris_a100_256nodes_1024gpu_all_gather_alcf.txt", "--nodes 256 --gpus 1024", "16384", NULL},
        {"nccl_polaris_a100_540nodes_2160gpu_all_reduce_alcf.txt", "--nodes 540 --gpus 2160", "8", NULL},
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        const char *sizes[2] = {logs[i].floor, logs[i].plateau};
        for (int k = 0; k < 2; k++) {
            if (!sizes[k]) continue;
            double e = 1e9;
            CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", logs[i].log, "polaris", logs[i].extra, NULL, sizes[k], &e), 0);
            CU_ASSERT(fabs(e) <= 10);
        }
    }
}

/* The 1 GiB plateau of the Perlmutter (4 NICs per node) and Frontier (one
 * node, xGMI) sweeps from the PCCL reproducer, uncalibrated: the shipped
 * perlmutter bw_frac.nic and frontier bw_frac.xgmi (docs/clusters.md). */
static void test_plateau_pccl_repo(void)
{
    static const struct {
        const char *log, *cluster, *extra;
    } logs[] = {
        {"nccl_perlmutter_a100_4nodes_16gpu_all_gather_pccl.txt", "perlmutter", "--nodes 4 --gpus 16"},
        {"nccl_perlmutter_a100_8nodes_32gpu_all_gather_pccl.txt", "perlmutter", "--nodes 8 --gpus 32"},
        {"nccl_perlmutter_a100_16nodes_64gpu_all_gather_pccl.txt", "perlmutter", "--nodes 16 --gpus 64"},
        {"rccl_frontier_mi250x_1node_8gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 1 --gpus 8"},
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        double e = 1e9;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", logs[i].log, logs[i].cluster, logs[i].extra, NULL,
                                         "1073741824", &e), 0);
        CU_ASSERT(fabs(e) <= 10);
    }
    /* No rendezvous step on Perlmutter (rdzv.lat 0): sizes whose ring block is
     * 16 KiB, past Polaris' 16 KiB threshold, take ~8 us per network step as
     * below it (the shipped 22 us made them +270% and +310%). */
    static const struct {
        const char *log, *extra, *size;
    } steps[] = {
        {"nccl_perlmutter_a100_16nodes_64gpu_all_gather_pccl.txt", "--nodes 16 --gpus 64", "1048576"},
        {"nccl_perlmutter_a100_128nodes_512gpu_all_gather_pccl.txt", "--nodes 128 --gpus 512", "8388608"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        double e = 1e9;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", steps[i].log, "perlmutter", steps[i].extra, NULL,
                                         steps[i].size, &e), 0);
        CU_ASSERT(fabs(e) <= 15);
    }
}

/* The middle of the Slingshot sweeps, uncalibrated, where the ring's
 * per-step network waits dominate: Perlmutter's lock-step ring at 12 us per
 * network message, half hidden by the transfers (ring_overlap 0.5; before, 8
 * us wholly hidden: 32 MiB on 16 nodes -31%, 64 MiB on 128 nodes -39%), and
 * Frontier's RCCL ring lock-stepped at 25 us (before, RCCL's 4.5 us on the
 * 2(M-1) network steps alone: 128 MiB on 16 nodes -65%). `compare` predicts
 * the library's time: the PCCL files' PyTorch per-call 60 us (the accuracy
 * report adds it, docs/accuracy.md) is 1-7% at these sizes. The 16-node
 * all_gather's 1 GiB runs at 61 GB/s busbw where the reduce_scatter's reaches
 * 79: the shared bw_frac.nic 0.80 leaves it about 20% fast. Frontier ships
 * the doubled wait past 32 KiB chunks (ring_slice_waits true): the runs
 * launched without GPU binding (all 8 GCDs visible to every rank) take 45-50
 * us a step there; the two launched with --gpu-bind=closest (4 and 64 nodes)
 * take 28-35 us, RCCL's one wait per step (ring_slice_waits false;
 * docs/accuracy.md, "Slices"). */
static void test_slingshot_mid_sizes(void)
{
    static const log_pt pts[] = {
        {"nccl_perlmutter_a100_16nodes_64gpu_all_gather_pccl.txt", "perlmutter", "--nodes 16 --gpus 64", "33554432", 15},
        {"nccl_perlmutter_a100_16nodes_64gpu_all_gather_pccl.txt", "perlmutter", "--nodes 16 --gpus 64", "67108864", 15},
        {"nccl_perlmutter_a100_8nodes_32gpu_all_gather_pccl.txt", "perlmutter", "--nodes 8 --gpus 32", "33554432", 15},
        {"nccl_perlmutter_a100_128nodes_512gpu_all_gather_pccl.txt", "perlmutter", "--nodes 128 --gpus 512", "67108864", 15},
        {"rccl_frontier_mi250x_8nodes_64gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 8 --gpus 64", "134217728", 10},
        {"rccl_frontier_mi250x_8nodes_64gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 8 --gpus 64", "1073741824", 10},
        {"rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt", "frontier", "--nodes 16 --gpus 128", "134217728", 15},
        {"rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt", "frontier", "--nodes 16 --gpus 128", "536870912", 15},
        {"rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt", "frontier", "--nodes 16 --gpus 128", "1073741824", 25},
    };
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
    /* a ring all_gather cannot beat (n - 1)/n S over the node's NICs: 4 x 25 GB/s */
    double e = 0;
    CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", "rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt",
                                     "frontier", "--nodes 16 --gpus 128", NULL, "1073741824", &e), 0);
    CU_ASSERT(17387.0 * (1 + e / 100) >= 127.0 / 128 * 1073741824 / 100e9 * 1e6);
}

/* Across Frontier nodes an all_gather and a reduce_scatter of the same size
 * move the same bytes on RCCL's same 8 rings (2 channels per NIC, 4 NICs a
 * node), and the reduction hides behind the NICs (reduce_bw), so the model's
 * all_gather is the same nodes' measured reduce_scatter (its PyTorch 60 us
 * off) at 128 MiB-1 GiB, within 15%, on 8 and 16 nodes. The 8-node
 * all_gather run itself is 1.5-2.2x that at 256-512 MiB: its job's network
 * was slow then for PCCL's hybrid method too (the file's IN-JOB CONTROL
 * lines, docs/accuracy.md, "Frontier large sizes"), so no figure is fitted
 * to it; this holds the model to the runs whose controls are clean. */
static void test_frontier_ag_rs_same_bytes(void)
{
    static const struct {
        const char *ag, *rs, *extra;
    } runs[] = {
        {"rccl_frontier_mi250x_8nodes_64gcd_all_gather_pccl.txt", "rccl_frontier_mi250x_8nodes_64gcd_reduce_scatter_pccl.txt",
         "--nodes 8 --gpus 64"},
        {"rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt",
         "rccl_frontier_mi250x_16nodes_128gcd_reduce_scatter_pccl.txt", "--nodes 16 --gpus 128"},
    };
    static const char *const sizes[] = {"134217728", "536870912", "1073741824"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            double ag_pred = 0, ag_meas = 0, rs_meas = 0, rs_pred = 0;
            CU_ASSERT_EQUAL_FATAL(compare_row_in("tests/data/accuracy", runs[i].ag, "frontier", runs[i].extra, NULL, sizes[k],
                                                 &ag_meas, &ag_pred, NULL), 0);
            CU_ASSERT_EQUAL_FATAL(compare_row_in("tests/data/accuracy", runs[i].rs, "frontier", runs[i].extra, NULL, sizes[k],
                                                 &rs_meas, &rs_pred, NULL), 0);
            double lib = rs_meas - 60; /* the PyTorch per-call cost of the reduce_scatter harness */
            fprintf(stderr, "\n    all_gather model %.0f us vs reduce_scatter measured %.0f us (%+.1f%%)", ag_pred, lib,
                    100 * (ag_pred / lib - 1));
            CU_ASSERT(fabs(ag_pred / lib - 1) <= 0.15);
            /* the two collectives' own predictions agree across nodes */
            CU_ASSERT(fabs(ag_pred / rs_pred - 1) <= 0.03);
        }
}

/* Single-node NVLS all-reduce of 8 H100 (NCCL 2.26, the library's choice),
 * uncalibrated: the mid sizes where NCCL cuts the NVLS chunk to 16-64 KiB
 * and a channel runs few loops (nvls.c) within 10% (they were 18-34% fast
 * with one bandwidth and one latency), and the 8 GiB plateau within 3%. */
static void test_nvls_mid_sizes_repo(void)
{
    static const char *const sizes[] = {"2097152", "4194304", "8388608", "16777216", "33554432", "67108864", "134217728"};
    const char *log = "nccl_h100x8_single_node_all_reduce_nvls_together.txt";
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double e = 1e9;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", log, "dgx-h100-superpod", "--nodes 1 --gpus 8", NULL, sizes[i], &e), 0);
        CU_ASSERT(fabs(e) <= 10);
    }
    double e = 1e9;
    CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", log, "dgx-h100-superpod", "--nodes 1 --gpus 8", NULL, "8589934592", &e), 0);
    CU_ASSERT(fabs(e) <= 3);
}

/* The smallest and the largest size of every shipped log within 10% with
 * the shipped clusters' defaults (the H100 logs ran NCCL_ALGO=Ring: the ring
 * with the tuner's protocol). The all-to-all's floor is its p2p round at
 * 256 B to 32 KiB per peer (2 KiB to 256 KiB, 61-66 us); up to 128 B per
 * peer the log takes 106 us, the inline sends' copies (test_p2p_inject_step). */
static void test_floor_plateau(void)
{
    if (access(NCCL_DIR, R_OK) != 0) {
        printf("\n  (skipped: %s absent)", NCCL_DIR);
        return;
    }
    static const struct {
        const char *log, *cluster, *algo, *floor, *plateau;
    } logs[] = {
        {"nccl_h100x8_single_node_all_reduce_ring_together.txt", "dgx-h100-superpod", "ring", "8", "8589934592"},
        {"nccl_h100x8_single_node_all_gather_ring_together.txt", "dgx-h100-superpod", "ring", "128", "8589934592"},
        {"nccl_polaris_a100_2nodes_8gpu_all_reduce_alcf.txt", "polaris", NULL, "8", "1073741824"},
        {"nccl_polaris_a100_2nodes_8gpu_alltoall_alcf.txt", "polaris", NULL, "4096", "1073741824"},
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        const char *sizes[2] = {logs[i].floor, logs[i].plateau};
        for (int k = 0; k < 2; k++) {
            double e = 1e9;
            CU_ASSERT_EQUAL(compare_error(logs[i].log, logs[i].cluster, logs[i].algo, sizes[k], &e), 0);
            CU_ASSERT(fabs(e) <= 10);
        }
    }
    /* the tuner's own choice for 8 B on 8 H100s: not NVLS (25 us of switch
     * latency in NCCL's model), and the floor holds without forcing */
    double e = 1e9;
    CU_ASSERT_EQUAL(compare_error(logs[0].log, "dgx-h100-superpod", NULL, "8", &e), 0);
    CU_ASSERT(fabs(e) <= 10);
}

/* The launcher: one thread driving g GPUs (nccl-tests -g g, NCCL's group
 * launch over g communicators) pays launch + launch_per_gpu (g - 1) per call;
 * one process per GPU pays launch. In the model, with arbitrary figures,
 * and end to end: `compare` of the shipped 8 x H100 log (header nGpus 8)
 * against the same log with --gpus-per-proc 1, 8 B, where the floor shows,
 * differs by 7 x the shipped cluster's launch_per_gpu. */
static double compare_predicted(const char *log, const char *extra, const char *size)
{
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "compare %s/%s --cluster dgx-h100-superpod %s -b %s -e %s", NCCL_DIR, log, extra, size,
             size);
    if (test_cli(cmd, out, sizeof out) != 0) return -1;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        double v[6];
        if (line[0] != '#' && sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6)
            return v[2];
    }
    return -1;
}

static void test_launch_per_gpu(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.launch = 7e-6, q.launch_per_gpu = 2.5e-6;
    coll_params_set(&q);
    coll_plan p;
    char err[TS_ERRLEN];
    int a = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init(&p, OG_ALLREDUCE, 8, 0, 8, NULL, a, err, sizeof err), 0);
    double gpu = 1e-6;
    CU_ASSERT_EQUAL(coll_gpus_per_proc(), 1);
    double t1 = coll_call_time(&p, gpu);
    coll_set_gpus_per_proc(8);
    double t8 = coll_call_time(&p, gpu);
    coll_set_gpus_per_proc(0); /* below 1: one */
    CU_ASSERT_EQUAL(coll_gpus_per_proc(), 1);
    CU_ASSERT_DOUBLE_EQUAL(t1, q.launch, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(t8 - t1, 7 * q.launch_per_gpu, 1e-15);
    /* a GPU time above the floor shows whole, whatever g */
    coll_set_gpus_per_proc(8);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_time(&p, 1e-3), 1e-3, 1e-15);
    coll_set_gpus_per_proc(1);
    test_bare_params();

    if (access(NCCL_DIR, R_OK) != 0) {
        printf("\n  (skipped: %s absent)", NCCL_DIR);
        return;
    }
    json_error_t je;
    json_t *c = json_load_file("configs/clusters/dgx-h100-superpod.json", 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    json_t *coll = json_object_get(c, "collectives");
    double per = json_number_value(json_object_get(coll, "launch_per_gpu"));
    double launch = json_number_value(json_object_get(coll, "launch"));
    json_decref(c);
    CU_ASSERT(per > 0);
    const char *log = "nccl_h100x8_single_node_all_reduce_ring_together.txt";
    double g8 = compare_predicted(log, "--algo ring", "8"), g1 = compare_predicted(log, "--algo ring --gpus-per-proc 1", "8");
    fprintf(stderr, "\n  8 B ring all_reduce on 8 H100: %.2f us with nGpus 8, %.2f us with one process per GPU", g8, g1);
    CU_ASSERT(g1 > 0 && g8 > 0);
    /* the g = 1 time is the GPU's or the floor, the g = 8 one the floor */
    CU_ASSERT(g1 >= launch * 1e6 - 0.01);
    CU_ASSERT(fabs(g8 - (launch + 7 * per) * 1e6) < 0.01);
    if (g1 <= launch * 1e6 + 0.01) CU_ASSERT(fabs(g8 - g1 - 7 * per * 1e6) < 0.02);
}

/* DGX-like routes for the analytical level: members a and b on nodes of 8;
 * NVLink inside, one NIC per GPU (its rail) between nodes; no latency, so the
 * time is the model's latency plus the bandwidth term. */
static const double BI = 450e9 * 0.824, BN = 50e9 * 0.92;

static void dgx_route(void *ctx, int a, int b, double *lat, double *bw)
{
    (void)ctx;
    *lat = 0;
    *bw = a / 8 == b / 8 ? BI : BN;
}

static int log2i(int n)
{
    int k = 0;
    while ((2 << k) <= n) k++;
    return k;
}

/* NCCL's tree all-reduce on M DGX nodes of L = 8 GPUs: every GPU but the
 * node's head hangs in a chain, the heads form the double binary tree over
 * the nodes. Steps: K pipeline chunks + 2 H - 1 with H = (L - 1) + ceil(log2
 * M) (the chain below the head, then the node tree). Latency (NCCL's closed
 * form): base + 2 ((L - 1) hop_nvlink + log2(M) hop_nic). Bandwidth,
 * pipelined: a chain member sends S (S/2 per tree) to each chain neighbour
 * over its NVLink, 2 S in all; each node tree runs twice, headed at either
 * end of the chain (a quarter of S each): a head's NIC sends 3 x S/4 where
 * the node is inner (a parent and two child nodes) and S/4 where it is a
 * leaf, S in all (with one child node, as on 2 nodes, S/2); over the tree
 * protocol's fraction, and the pipeline's fill (2 H - 1) / K of NCCL's 512
 * KiB chunks on 16 channels, H the tree's depth, on top. On 2 nodes the
 * channels' chains start at every NIC's GPU (R = L / 2 = 4 rotations of the
 * chain, each as four trees, at 16 channels: 16 trees of S/16): a head's NIC
 * sends S/16 in each of its two trees, S/8, and a GPU sends S/16 over NVLink
 * in each tree but where it heads (up) or ends (down) the chain: 2 (L - 1) / L
 * S, which bounds the time (235 GB/s bus bandwidth on 2 DGX A100 nodes,
 * 238 measured: docs/collectives.md). */
static void test_tree_closed_form(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    coll_params_set(&q);
    const int L = 8, ms[] = {2, 16};
    const int64_t S = (int64_t)1 << 30;
    for (int i = 0; i < 2; i++) {
        int M = ms[i], n = L * M, *ids = ts_malloc(n * sizeof *ids);
        for (int r = 0; r < n; r++) ids[r] = r / L;
        coll_topo *t = coll_topo_new(n, ids, 0);
        coll_plan p;
        char err[TS_ERRLEN];
        int a = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err);
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, S, NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        int trees = M == 2 ? 16 : 4, K = p.nchunks / trees, H = (L - 1) + (M == 2 ? 1 : 4);
        CU_ASSERT_EQUAL(p.nsteps, K + 2 * H - 1);
        double lat = q.base_lat[COLL_FAM_TREE][COLL_SIMPLE] +
                     2 * ((L - 1) * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_TREE][COLL_SIMPLE] +
                          log2i(M) * q.hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_SIMPLE]);
        CU_ASSERT_DOUBLE_EQUAL(coll_call_latency(&p), lat, 1e-12);
        /* the pipeline's fill on top (test_tree_fill): 512 KiB chunks at 1 GiB */
        double fill = (2.0 * H - 1) / (S / 16 / (512 * 1024));
        CU_ASSERT_DOUBLE_EQUAL(coll_tree_fill(&p, &q), fill, 1e-12);
        double f = q.proto_bw[COLL_FAM_TREE][COLL_SIMPLE], nic = (M == 2 ? 1.0 / 8 : 1.0) * S / BN,
               nvl = (M == 2 ? 2.0 * (L - 1) / L : 2.0) * S / BI, want = lat + (nic > nvl ? nic : nvl) / f * (1 + fill);
        double got = coll_cost(&p, COLL_COST_PIPELINED, dgx_route, NULL);
        fprintf(stderr, "\n  tree on %d DGX nodes: analytical %.6g s, closed form %.6g s", M, got, want);
        /* on 2 nodes exactly; on 16 the busiest NIC's bytes are a lower bound:
         * under max-min sharing a head's NIC idles while one of its four
         * trees' flows waits on another node's NIC (8.3% above it here) */
        if (M == 2) {
            CU_ASSERT(fabs(got - want) / want < 1e-6);
        } else {
            CU_ASSERT(got >= want * (1 - 1e-9) && got < want * 1.10);
        }
        /* every member is in both trees, once as a chain member or head */
        coll_step *m = coll_step_new(p.merged_width + 1);
        for (int r = 0; r < n; r++) {
            coll_plan_merged(&p, r, m);
            CU_ASSERT(m->nsend >= 1 && m->nsend <= 8);
        }
        coll_step_free(m);
        coll_topo_free(t);
        free(ids);
    }
    test_bare_params();
}

/* NCCL's Simple tree all-reduce pipeline (enqueue.cc's chunk rule): on 4
 * DGX nodes (depth 7 + 2 = 9) at 1 MiB on 16 channels a channel has 64 KiB:
 * the chunk halves from 512 KiB to 128 KiB (fewer than 8 x 9 chunks), to 64
 * KiB (fewer than 4 x 9), to 32 KiB (fewer than 9): 2 chunks, fill 17/2 of
 * the transfers. At 1 GiB (64 MiB a channel) the 512 KiB chunk stays: 128
 * chunks, 17/128. The pipelined tail adds the transfers' time (busy less
 * the route latency) x fill; LL, the ring and one
 * node have none; the step fidelity runs its own chunks. */
static void test_tree_fill(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    coll_params_set(&q);
    const int L = 8, M = 4, n = L * M;
    int ids[32];
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    char err[TS_ERRLEN];
    int tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err), ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    const int depth = (L - 1) + 2;
    struct {
        int64_t bytes;
        double chunks;
    } c[] = {{(int64_t)1 << 20, 2}, {(int64_t)1 << 30, 128}};
    for (int i = 0; i < 2; i++) {
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, c[i].bytes, NULL, tree, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        double fill = (2.0 * depth - 1) / c[i].chunks;
        CU_ASSERT_DOUBLE_EQUAL(coll_tree_fill(&p, &q), fill, 1e-12);
        double busy = 1e-3, a = coll_call_tail(&p, 3e-6, 0.5e-6, 0, busy), b = coll_call_tail(&p, 3e-6, 0.5e-6, 0, 0);
        CU_ASSERT_DOUBLE_EQUAL(a - b, (busy - 3e-6) * fill, 1e-12);
        /* on the transfers only: a flow that is all route latency has no fill */
        CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 3e-6, 0.5e-6, 0, 3e-6), b, 1e-15);
        /* step by step: no fill (its own pipeline of chunks) */
        CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 3e-6, 0.5e-6, 1, busy), coll_call_tail(&p, 3e-6, 0.5e-6, 1, 0), 1e-15);
        p.proto = COLL_LL;
        CU_ASSERT_DOUBLE_EQUAL(coll_tree_fill(&p, &q), 0, 0);
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, c[i].bytes, NULL, ring, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        CU_ASSERT_DOUBLE_EQUAL(coll_tree_fill(&p, &q), 0, 0);
    }
    /* one node: no network tree */
    coll_topo *t1 = coll_topo_new(L, ids, 0);
    coll_plan p1;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p1, OG_ALLREDUCE, L, 0, (int64_t)1 << 20, NULL, tree, t1, err, sizeof err), 0);
    p1.proto = COLL_SIMPLE;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_fill(&p1, &q), 0, 0);
    coll_topo_free(t1);
    coll_topo_free(t);
    test_bare_params();
}

/* Route latencies of dgx-h100-superpod (configs/clusters): 0.5 us through
 * the NVSwitch, 1.2 us per NIC and 0.3 us per switch link across nodes. */
static void dgx_lat_route(void *ctx, int a, int b, double *lat, double *bw)
{
    (void)ctx;
    *lat = a / 8 == b / 8 ? 0.5e-6 : 2 * 1.2e-6 + 2 * 0.3e-6;
    *bw = a / 8 == b / 8 ? BI : BN;
}

/* The small all-reduce on 2 DGX nodes: each step pays the route latency of
 * the link it crosses, so the tree's 14 NVLink chain steps do not pay the
 * network's 3 us; the time is NCCL's closed form base + 2 ((L-1) hop_nvlink
 * + hop_nic) (25.2 us with the preset's LL figures; 25 us measured, nccl-tests
 * issue 309) within 10%, where every step at 3 us gave 54.8 us. The wire
 * floor still holds where the steps do cross nodes (1 member per node). */
/* The ring's route latency across nodes (coll_plan_wire_lat): a chunk's
 * path round a ring laid node after node crosses the network on M - 1 of
 * its n - 1 hops (2 (M - 1) of 2 (n - 1) for all-reduce) and NVLink on the
 * rest: closed form on M nodes of G GPUs, pipelined (the transfers paid one
 * network latency) and step by step (each of the engine's steps waited for
 * its network member). */
static void test_ring_wire_lat(void)
{
    char err[TS_ERRLEN];
    const double a = 3e-6, ai = 0.7e-6;
    static const int shapes[][2] = {{2, 8}, {3, 8}, {8, 8}, {4, 4}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int M = shapes[k][0], G = shapes[k][1], n = M * G, ids[64];
        for (int r = 0; r < n; r++) ids[r] = r / G;
        coll_topo *t = coll_topo_new(n, ids, 0);
        static const og_coll colls[] = {OG_ALLGATHER, OG_REDUCESCATTER, OG_ALLREDUCE};
        for (int c = 0; c < 3; c++) {
            int ring = coll_algo_find("ring", colls[c], err, sizeof err);
            coll_plan p;
            CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, colls[c], n, 0, 1024, NULL, ring, t, err, sizeof err), 0);
            int k2 = colls[c] == OG_ALLREDUCE ? 2 : 1, net = k2 * (M - 1), nvl = k2 * (n - 1) - net;
            CU_ASSERT_EQUAL(p.nsteps, k2 * (n - 1));
            CU_ASSERT_EQUAL(coll_plan_local_steps(&p), nvl);
            CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_lat(&p, a, ai, 0), (net - 1) * a + nvl * ai, 1e-15);
            CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_lat(&p, a, ai, 1), p.nsteps * a, 1e-15);
        }
        coll_topo_free(t);
    }
    /* one GPU a node: every hop is a network one */
    coll_topo *t1 = coll_topo_new(8, NULL, 0);
    coll_plan p;
    int ring = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, 8, 0, 1024, NULL, ring, t1, err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_plan_local_steps(&p), 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_lat(&p, a, ai, 0), 6 * a, 1e-15);
    coll_topo_free(t1);
}

/* NCCL's network post overhead (tuning.cc getNetOverhead, 2.19-2.26): a
 * ring step across nodes that stays on NVLink costs at least 1 us on an
 * Intel host, 2 us on an AMD one, three times that for Simple, in the time
 * and in the tuner alike; none on one node, none for a bare alpha-beta set
 * (no GPU named), and the closed form of NCCL's ring latency on M nodes. */
static void test_ring_net_overhead(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_net_overhead(&q, COLL_LL), 0); /* no GPU: no library run */
    q.arch = COLL_ARCH_AMPERE;
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(&q, COLL_LL), 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(&q, COLL_LL128), 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(&q, COLL_SIMPLE), 3e-6, 1e-15);
    q.cpu_amd = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(&q, COLL_LL), 2e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(&q, COLL_SIMPLE), 6e-6, 1e-15);
    coll_params_set(&q);
    CU_ASSERT_DOUBLE_EQUAL(coll_net_overhead(coll_params_tuner(), COLL_SIMPLE), 6e-6, 1e-15);
    char err[TS_ERRLEN];
    const int M = 3, G = 8, n = M * G;
    int ids[24];
    for (int r = 0; r < n; r++) ids[r] = r / G;
    coll_topo *t = coll_topo_new(n, ids, 0), *one = coll_topo_new(G, ids, 0);
    for (int pr = 0; pr < COLL_NPROTOS; pr++) {
        static const og_coll colls[] = {OG_ALLGATHER, OG_ALLREDUCE};
        for (int c = 0; c < 2; c++) {
            int ring = coll_algo_find("ring", colls[c], err, sizeof err), k2 = colls[c] == OG_ALLREDUCE ? 2 : 1;
            coll_plan p;
            CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, colls[c], n, 0, 1024, NULL, ring, t, err, sizeof err), 0);
            p.proto = (coll_proto)pr;
            double intra = q.hop_lat[q.intra_tier][COLL_FAM_RING][pr], post = coll_net_overhead(&q, (coll_proto)pr);
            double inter = q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][pr];
            double want = q.base_lat[COLL_FAM_RING][pr] + k2 * (n - M) * (intra > post ? intra : post) + k2 * (M - 1) * inter;
            CU_ASSERT(post > intra); /* NVLink's table is below the post on an AMD host */
            CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), want, 1e-12);
            CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, coll_params_tuner()), want, 1e-12);
            /* one node: NVLink's own figure */
            CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, colls[c], G, 0, 1024, NULL, ring, one, err, sizeof err), 0);
            p.proto = (coll_proto)pr;
            CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), q.base_lat[COLL_FAM_RING][pr] + k2 * (G - 1) * intra, 1e-12);
        }
    }
    coll_topo_free(t);
    coll_topo_free(one);
    test_bare_params();
}

/* The ring's floor across nodes on a measured file: 2 DGX A100 nodes of
 * ALCF Sophia (NCCL 2.22, InfiniBand, AMD hosts), all_gather at 256 B-2 KiB
 * (ring LL: NCCL's 14 NVLink steps at its 2 us post overhead and one
 * network step) and 256 KiB-1 MiB (ring LL128, flat at 79-82 us: 14 of the
 * node's 5 us ring steps, which transfers this small do not hide, and one
 * network step), within 15% uncalibrated. With the network's route
 * latency on every step the LL floor was +38..+44%, and without the node's
 * step the LL128 one -26%. */
static void test_ring_floor_sophia(void)
{
#define SOPHIA_AG "nccl_sophia_a100_2nodes_16gpu_all_gather_alcf.txt"
    static const log_pt pts[] = {{SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "256", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "512", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "1024", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "2048", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "262144", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "524288", 15},
                                 {SOPHIA_AG, "dgx-a100-superpod", "--nodes 2 --gpus 16", "1048576", 15}};
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
#undef SOPHIA_AG
}

static void test_tree_small_floor(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.launch = 0;
    coll_params_set(&q);
    const int L = 8, M = 2, n = L * M;
    int ids[16];
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    coll_plan p;
    char err[TS_ERRLEN];
    int a = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 8, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_LL;
    CU_ASSERT_EQUAL(coll_plan_local_steps(&p), 2 * (L - 1));
    double nccl = q.base_lat[COLL_FAM_TREE][COLL_LL] + 2 * ((L - 1) * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_TREE][COLL_LL] +
                                                             q.hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_LL]);
    double got = coll_cost(&p, COLL_COST_PIPELINED, dgx_lat_route, NULL);
    double step = coll_cost(&p, COLL_COST_STEP, dgx_lat_route, NULL);
    fprintf(stderr, "\n  8 B tree LL on 2 DGX nodes: pipelined %.3g us, step %.3g us, NCCL %.3g us", got * 1e6, step * 1e6,
            nccl * 1e6);
    /* pipelined (the default): the hop sum plus the one network latency its
     * flows paid (3 us, 12% above NCCL's; docs/collectives.md) */
    CU_ASSERT(fabs(got - (nccl + 3e-6)) / (nccl + 3e-6) < 0.10);
    /* every step at the network's 3 us: 6.8 + 16 x 3 us. Step by step the
     * four trees' members wait on each other's steps (30 us). */
    double all_net = q.base_lat[COLL_FAM_TREE][COLL_LL] + p.nsteps * 3e-6;
    CU_ASSERT(got < 0.6 * all_net);
    CU_ASSERT(step < 0.6 * all_net);
    /* one member per node: every step crosses, every step pays 3 us */
    coll_topo *t1 = coll_topo_new(n, NULL, 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 8, NULL, a, t1, err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_plan_local_steps(&p), 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_lat(&p, 3e-6, 0.5e-6, 1), p.nsteps * 3e-6, 1e-15);
    coll_topo_free(t1);
    coll_topo_free(t);
    test_bare_params();
}

/* NCCL's tuner's treeCorrectionFactor by protocol and log2(S / 64): LL128
 * 0.6 and Simple 0.5 at 1 MiB, LL128 0.9 at 64 MiB, none from 512 MiB; the
 * selection prices the tree with it, the run does not pay it (wire bytes at
 * the protocol's fraction alone). The ring, RCCL and a tuner of one's own
 * have none. */
static void test_tree_correction(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    const int L = 8, M = 2, n = L * M;
    int ids[16];
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    coll_plan p;
    char err[TS_ERRLEN];
    int tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err), ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    const struct { int64_t bytes; coll_proto pr; double f; } c[] = {
        {1 << 20, COLL_LL128, 0.6}, {1 << 20, COLL_SIMPLE, 0.5}, {64 << 20, COLL_LL128, 0.9}, {(int64_t)512 << 20, COLL_SIMPLE, 1.0}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, c[i].bytes, NULL, tree, t, err, sizeof err), 0);
        p.proto = c[i].pr;
        CU_ASSERT_DOUBLE_EQUAL(coll_tree_correction(&p, &q), c[i].f, 1e-12);
        /* 1 MiB of payload: the protocol's fraction alone */
        double wire = (double)coll_plan_wire_bytes_with(&p, 1 << 20, &q);
        CU_ASSERT_DOUBLE_EQUAL(wire, (1 << 20) / q.proto_bw[COLL_FAM_TREE][c[i].pr], 1.0);
    }
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 1 << 20, NULL, tree, t, err, sizeof err), 0);
    p.proto = COLL_LL128;
    q.tuner_own = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_correction(&p, &q), 1.0, 1e-12);
    coll_params_preset(&q, COLL_LIB_RCCL);
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_correction(&p, &q), 1.0, 1e-12);
    coll_params_preset(&q, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 1 << 20, NULL, ring, t, err, sizeof err), 0);
    p.proto = COLL_LL128;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_correction(&p, &q), 1.0, 1e-12);
    coll_topo_free(t);
}

/* NCCL's NVLS-tree in loops of nChannels x nHeads chunks (16 x 8 on DGX H100):
 * K loops take K + 1 loop times. 2 nodes: 128 KiB chunks, 64 KiB below 64 MiB,
 * 32 KiB below 8 MiB (1 GiB: 64 loops; 16 MiB: 2; 1 MiB: less than one, 1/2);
 * from 4 nodes at most 64 KiB (1 GiB: 128 loops). The wire bytes carry it;
 * a tuner of one's own does not. */
static void test_nvlstree_efficiency(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    const int L = 8;
    int ids[32];
    char err[TS_ERRLEN];
    int a = coll_algo_find("nvlstree", OG_ALLREDUCE, err, sizeof err);
    const struct { int M; int64_t bytes; double eff; } c[] = {
        {2, (int64_t)1 << 30, 64.0 / 65}, {2, 16 << 20, 2.0 / 3}, {2, 1 << 20, 0.5}, {4, (int64_t)1 << 30, 128.0 / 129}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int n = L * c[i].M;
        for (int r = 0; r < n; r++) ids[r] = r / L;
        coll_topo *t = coll_topo_new(n, ids, 1);
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, c[i].bytes, NULL, a, t, err, sizeof err), 0);
        CU_ASSERT_DOUBLE_EQUAL(coll_nvlstree_efficiency(&p, &q), c[i].eff, 1e-12);
        double wire = (double)coll_plan_wire_bytes_with(&p, 1 << 20, &q);
        CU_ASSERT_DOUBLE_EQUAL(wire, (1 << 20) / (q.proto_bw[COLL_FAM_NVLSTREE][COLL_SIMPLE] * c[i].eff), 1.0);
        q.tuner_own = 1;
        CU_ASSERT_DOUBLE_EQUAL(coll_nvlstree_efficiency(&p, &q), 1.0, 1e-12);
        q.tuner_own = 0;
        coll_topo_free(t);
    }
}

/* CollNet on 16 DGX nodes with SHARP: a ring reduce-scatter and all-gather
 * inside the node (2 (L-1)/L S to the next GPU over NVLink) and one part S/L
 * up and down through each NIC, side by side; latency 2 (L-1) hop_nvlink +
 * hop_nic (NCCL's CollNet closed form). Without SHARP it is refused, and the
 * tuner takes it only where the fabric has it. */
static void test_collnet(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    coll_params_set(&q);
    const int L = 8, M = 16, n = L * M;
    const int64_t S = (int64_t)1 << 30;
    int *ids = ts_malloc(n * sizeof *ids);
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    coll_plan p;
    char err[TS_ERRLEN];
    int a = coll_algo_find("collnet", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_FATAL(a >= 0);
    CU_ASSERT_EQUAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, S, NULL, a, t, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs a SHARP-capable fabric"));
    coll_hw hw = {0, BI, t, 0, BN};
    coll_proto pr;
    CU_ASSERT_STRING_NOT_EQUAL(coll_algo_get(coll_select(OG_ALLREDUCE, n, S, &hw, &pr))->name, "collnet");
    q.collnet = 1;
    coll_params_set(&q);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, S, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    double lat = 2 * (L - 1) * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_COLLNET][COLL_SIMPLE] +
                 q.hop_lat[COLL_TIER_NIC][COLL_FAM_COLLNET][COLL_SIMPLE] + q.base_lat[COLL_FAM_COLLNET][COLL_SIMPLE];
    double nvl = 2.0 * (L - 1) / L * S / BI, nic = (double)S / L / BN;
    double want = lat + (nvl > nic ? nvl : nic) / q.proto_bw[COLL_FAM_COLLNET][COLL_SIMPLE];
    double got = coll_cost(&p, COLL_COST_PIPELINED, dgx_route, NULL);
    fprintf(stderr, "\n  CollNet on %d DGX nodes: analytical %.6g s, closed form %.6g s", M, got, want);
    CU_ASSERT(fabs(got - want) / want < 1e-6);
    /* the NICs carry S/L each way, where the ring's carry 2 (M-1)/M S/L:
     * at 1 GiB on 16 nodes the tuner takes it */
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_select(OG_ALLREDUCE, n, S, &hw, &pr))->name, "collnet");
    coll_topo_free(t);
    free(ids);
    test_bare_params();
}

/* The overlay: fields change what they name, unknown ones fail with the file
 * and the key, values out of range are refused, all or nothing. */
static void test_overlay(void)
{
    coll_params q, before;
    coll_params_preset(&q, COLL_LIB_NCCL);
    char err[TS_ERRLEN];
    json_error_t je;
    json_t *o = json_loads("{\"launch\": 2e-5, \"bw_frac\": {\"nic\": 0.7}, \"hop_lat\": {\"*\": {\"ring\": {\"ll\": 1e-6}}},"
                           " \"proto_bw\": {\"p2p\": {\"simple\": 0.5}}, \"collnet\": true}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), 0);
    json_decref(o);
    CU_ASSERT_DOUBLE_EQUAL(q.launch, 2e-5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(q.bw_frac[COLL_TIER_NIC], 0.7, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(q.hop_lat[COLL_TIER_PCIE][COLL_FAM_RING][COLL_LL], 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(q.proto_bw[COLL_FAM_P2P][COLL_SIMPLE], 0.5, 1e-15);
    CU_ASSERT(q.collnet);
    before = q;
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"lanch\": 1e-6}", "x.json: collectives: unknown field"},
        {"{\"bw_frac\": {\"nvlnk\": 0.8}}", "unknown link tier"},
        {"{\"bw_frac\": {\"nvlink\": 0}}", "'bw_frac.nvlink' = 0 outside"},
        {"{\"launch\": 1e-6, \"base_lat\": {\"ring\": {\"ll\": -1}}}", "'base_lat.ring.ll' = -1 outside"},
        {"{\"proto_bw\": {\"ring\": {\"ll64\": 0.5}}}", "unknown protocol"},
        {"{\"library\": \"mpich\"}", "'library' must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = json_loads(bad[i].json, 0, &je);
        CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), -1);
        if (!strstr(err, bad[i].msg)) fprintf(stderr, "\n  overlay %s: %s", bad[i].json, err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].msg));
        json_decref(o);
    }
    CU_ASSERT_EQUAL(memcmp(&q, &before, sizeof q), 0); /* failed overlays change nothing */
    /* RCCL: its own figures, not NCCL's */
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    CU_ASSERT(r.base_lat[COLL_FAM_RING][COLL_SIMPLE] > q.base_lat[COLL_FAM_RING][COLL_SIMPLE]);
    CU_ASSERT_EQUAL(r.intra_tier, COLL_TIER_XGMI);
}

/* The network's own structure (ring_lockstep, rdzv): a ring all_gather on
 * 8 nodes of 4 costs 31 NIC hops when lock-stepped (NCCL's count: 24 NVLink
 * and 7 NIC), plus the rendezvous per step past a block of 8 KiB (16 KiB of
 * LL lines: libfabric CXI sends eagerly up to its threshold + GET minimum,
 * so 16 KiB itself goes eagerly, 32 KiB by rendezvous); a tree LL step adds
 * its half buffer / eager_bw below it. The
 * overlay takes the fields and refuses unknown rdzv keys. */
static void test_network_terms(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    const int n = 32, L = 4;
    int ids[32];
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    char err[TS_ERRLEN];
    int a = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err);
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, n, 0, (int64_t)n * 4096, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_LL;
    double base = q.base_lat[COLL_FAM_RING][COLL_LL], in = q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_LL];
    q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_LL] = 8e-6;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 24 * in + 7 * 8e-6, 1e-12);
    q.ring_lockstep = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 31 * 8e-6, 1e-12);
    q.rdzv_bytes = 16384, q.rdzv_lat = 22e-6, q.eager_bw = 3.5e9;
    /* 8 KiB of lines: eager; each step's block copied out of the overflow
     * buffers, spread over the node's NICs (one per GPU here: 4) */
    int nics = q.nic_gpus > 1 ? L / q.nic_gpus : L;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 31 * (8e-6 + 8192.0 / nics / 3.5e9), 1e-12);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, n, 0, (int64_t)n * 8192, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_LL;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 31 * (8e-6 + 16384.0 / nics / 3.5e9), 1e-12); /* 16 KiB: still eager */
    q.nic_gpus = 2; /* Polaris: two GPUs a NIC, 2 NICs a node: half the block each */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 31 * (8e-6 + 16384.0 / 2 / 3.5e9), 1e-12);
    q.ring_lockstep = 0; /* a ring that is not lock-step overlaps the copy with the next step */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 24 * in + 7 * 8e-6, 1e-12);
    q.ring_lockstep = 1, q.nic_gpus = 0;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, n, 0, (int64_t)n * 16384, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_LL;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q), base + 31 * 30e-6, 1e-12);
    /* tree LL below the threshold: 2 log2(8) NIC steps, each + (S/2 x 2) / eager_bw */
    int tr = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 4096, NULL, tr, t, err, sizeof err), 0);
    p.proto = COLL_LL;
    double h = q.hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_LL] + 4096.0 / 3.5e9;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q),
                           q.base_lat[COLL_FAM_TREE][COLL_LL] +
                               2 * (3 * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_TREE][COLL_LL] + 3 * h), 1e-12);
    coll_topo_free(t);
    /* the overlay */
    json_error_t je;
    json_t *o = json_loads("{\"ring_lockstep\": true, \"rdzv\": {\"bytes\": 16384, \"lat\": 22e-6, \"eager_bw\": 3.5e9}}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT(r.ring_lockstep == 1 && r.rdzv_bytes == 16384 && r.rdzv_lat == 22e-6 && r.eager_bw == 3.5e9);
    json_decref(o);
    o = json_loads("{\"rdzv\": {\"size\": 1}}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown rdzv field"));
    json_decref(o);
    /* the tuner never sees them: NCCL's own model decides */
    CU_ASSERT_EQUAL(coll_params_tuner()->ring_lockstep, 0);
}

/* coll_params_overlay of a JSON text onto r; its return code. */
static int overlay_text(coll_params *r, const char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    int rc = coll_params_overlay(r, o, "x.json", err, errlen);
    json_decref(o);
    return rc;
}

/* Plans on one and on two nodes of 8 GPUs: p[0] a ring all-reduce on one
 * node, p[1] on two, p[2] a tree all-reduce of tree_n ranks (8: one node,
 * 16: two), all of `bytes` with protocol pr; tp[] the topologies to free. */
static void dgx_pair_plans(int64_t bytes, int tree_n, coll_proto pr, coll_topo *tp[2], coll_plan p[3])
{
    char err[TS_ERRLEN];
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    tp[0] = coll_topo_new(8, ids, 0), tp[1] = coll_topo_new(16, ids, 0);
    int ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err), tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p[0], OG_ALLREDUCE, 8, 0, bytes, NULL, ring, tp[0], err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p[1], OG_ALLREDUCE, 16, 0, bytes, NULL, ring, tp[1], err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p[2], OG_ALLREDUCE, tree_n, 0, bytes, NULL, tree, tp[tree_n > 8], err, sizeof err),
                          0);
    p[0].proto = p[1].proto = p[2].proto = pr;
}

/* node_ring_hop: a ring on one node pays the cluster's measured step (LL128
 * and Simple on one A100 node) instead of the hop_lat of its tier; on the
 * NVLink hops of a ring across nodes its extra over NCCL's figure is an
 * excess the transfers hide (coll_ring_node_excess); the tree and the tuner
 * keep NCCL's figures. The shipped dgx-a100-superpod then predicts the two A100
 * one-node sweeps' 2-4 MiB (ring LL128) and 32 MiB (Simple) within 20%,
 * where NCCL's 1.9 / 3.4 us steps gave -43% to -50%. */
static void test_node_ring_hop(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    char err[TS_ERRLEN];
    coll_topo *tp[2];
    coll_plan pl[3];
    dgx_pair_plans(4 << 20, 8, COLL_LL128, tp, pl);
    coll_topo *one = tp[0], *two = tp[1];
    coll_plan p1 = pl[0], p2 = pl[1], pt = pl[2];
    double base = q.base_lat[COLL_FAM_RING][COLL_LL128], hop = q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_LL128];
    double two0 = coll_call_latency_with(&p2, &q), tree0 = coll_call_latency_with(&pt, &q);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p1, &q), base + 14 * hop, 1e-12);
    q.node_ring_hop[COLL_LL128] = 5e-6;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p1, &q), base + 14 * 5e-6, 1e-12);
    /* 2 nodes: NCCL's count keeps the table's figure; the 2 (16 - 2) NVLink
     * hops' extra (5 us against 1.9) is the excess the transfers may hide,
     * none on a lock-step ring (every step waits for the network) */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q), two0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_node_excess(&p2, &q), 2 * (16 - 2) * (5e-6 - hop), 1e-12);
    CU_ASSERT_EQUAL(coll_ring_node_excess(&p1, &q), 0);
    CU_ASSERT_EQUAL(coll_ring_node_excess(&pt, &q), 0);
    q.ring_lockstep = 1;
    CU_ASSERT_EQUAL(coll_ring_node_excess(&p2, &q), 0);
    q.ring_lockstep = 0;
    /* in the tail: whole when nothing hides it, what the transfers leave else */
    coll_params_set(&q);
    double t0 = coll_call_tail(&p2, 3e-6, 0.7e-6, 0, 0), x = coll_ring_node_excess(&p2, &q);
    CU_ASSERT(x > 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p2, 3e-6, 0.7e-6, 0, x / 2) - t0, -x / 2, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p2, 3e-6, 0.7e-6, 0, 2 * x) - t0, -x, 1e-9);
    test_bare_params();
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.node_ring_hop[COLL_LL128] = 5e-6;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&pt, &q), tree0, 1e-12);
    /* another protocol keeps its tier's figure */
    p1.proto = COLL_SIMPLE;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p1, &q),
                           q.base_lat[COLL_FAM_RING][COLL_SIMPLE] + 14 * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_SIMPLE], 1e-12);
    coll_topo_free(one);
    coll_topo_free(two);
    /* the overlay takes it per protocol and refuses a negative one */
    json_error_t je;
    json_t *o = json_loads("{\"node_ring_hop\": {\"ll128\": 5e-6, \"simple\": 8e-6}}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(r.node_ring_hop[COLL_LL128], 0);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT(r.node_ring_hop[COLL_LL128] == 5e-6 && r.node_ring_hop[COLL_SIMPLE] == 8e-6 && r.node_ring_hop[COLL_LL] == 0);
    json_decref(o);
    o = json_loads("{\"node_ring_hop\": {\"ll\": -1}}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "node_ring_hop"));
    json_decref(o);
    /* the shipped A100 cluster on the two one-node sweeps: Galvatron's (-g 8)
     * and ABCI's (NCCL 2.8.4, one process per GPU) */
    static const log_pt pts[] = {
        {"nccl_a100x8_single_node_all_reduce_galvatron.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "2097152", 20},
        {"nccl_a100x8_single_node_all_reduce_galvatron.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "4194304", 20},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "2097152", 20},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "4194304", 20},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "33554432", 20}};
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
}

/* chan_bw and node_channels: a ring on one node runs NCCL's intra-node
 * channel count and pays each step's wave of a channel's lines at the
 * channel's rate, on top of the GPU's aggregate rate, which the channel cut
 * no longer divides. Without them a small LL call's channels grow with its
 * size at a constant share each and its time stays flat (32-512 KiB on 8
 * A100: 31.7 us where ABCI measured 36-59 us); with them the time grows by
 * exactly the added bytes at the aggregate rate while the channels grow,
 * and the per-step wave grows once the channels are all in use. Across
 * nodes and in the tuner nothing changes. */
static double ring_gpu_time(coll_plan *p, const coll_params *q, double bw)
{
    int64_t moved = (int64_t)(2.0 * (p->n - 1) / p->n * (double)p->bytes);
    return coll_call_latency_with(p, q) + (double)coll_plan_wire_bytes_with(p, moved, q) / bw;
}

static void test_chan_wave(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    char err[TS_ERRLEN];
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    coll_topo *one = coll_topo_new(8, ids, 0), *two = coll_topo_new(16, ids, 0);
    int ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    const double bw = 240e9;
    static const int64_t sizes[] = {64 << 10, 128 << 10, 256 << 10, 512 << 10};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    coll_plan p[NS], x;
    for (int i = 0; i < NS; i++) {
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p[i], OG_ALLREDUCE, 8, 0, sizes[i], NULL, ring, one, err, sizeof err), 0);
        p[i].proto = COLL_LL;
    }
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&x, OG_ALLREDUCE, 16, 0, 256 << 10, NULL, ring, two, err, sizeof err), 0);
    x.proto = COLL_LL;
    /* the bandwidth divided by the channel cut: flat while the channels grow */
    double flat = ring_gpu_time(&p[0], &q, bw);
    for (int i = 1; i < NS; i++) CU_ASSERT_DOUBLE_EQUAL(ring_gpu_time(&p[i], &q, bw), flat, 1e-12);
    double x_lat = coll_call_latency_with(&x, &q), x_scale = coll_plan_wire_scale_with(&x, &q);
    q.node_channels = 24;
    q.chan_bw[COLL_LL] = 5e9;
    /* the wave of a channel's step is the same while the channels grow with
     * the size (4 KiB x 8 ranks a channel: one line per thread) */
    coll_params q0 = q;
    q0.chan_bw[COLL_LL] = 0;
    double wave = coll_call_latency_with(&p[0], &q) - coll_call_latency_with(&p[0], &q0);
    /* 14 steps of a channel's 4 KiB in 16-byte lines of 8 bytes at 5 GB/s */
    CU_ASSERT_DOUBLE_EQUAL(wave, 14 * 4096.0 * 2 / 5e9, 1e-12);
    for (int i = 1; i < NS; i++) CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p[i], &q), coll_call_latency_with(&p[0], &q), 1e-12);
    /* ... and the time grows by the added bytes at the aggregate rate: the
     * link x LL's fraction, not divided by the cut */
    double frac = q.proto_bw[COLL_FAM_RING][COLL_LL];
    for (int i = 1; i < NS; i++) {
        double added = 2.0 * 7 / 8 * (double)(sizes[i] - sizes[i - 1]) / frac / bw;
        CU_ASSERT(ring_gpu_time(&p[i], &q, bw) > ring_gpu_time(&p[i - 1], &q, bw));
        CU_ASSERT_DOUBLE_EQUAL(ring_gpu_time(&p[i], &q, bw) - ring_gpu_time(&p[i - 1], &q, bw), added, 1e-9);
    }
    /* past 24 channels (768 KiB) a channel's wave grows with the size */
    coll_plan big1, big2;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&big1, OG_ALLREDUCE, 8, 0, 1 << 20, NULL, ring, one, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&big2, OG_ALLREDUCE, 8, 0, 2 << 20, NULL, ring, one, err, sizeof err), 0);
    big1.proto = big2.proto = COLL_LL;
    CU_ASSERT(coll_call_latency_with(&big2, &q) > coll_call_latency_with(&big1, &q) + 1e-7);
    /* with 16 channels (max_channels) the wave would be larger: NCCL's 24
     * channels on one node carry it */
    double lat24 = coll_call_latency_with(&big1, &q);
    q.node_channels = 0;
    CU_ASSERT(coll_call_latency_with(&big1, &q) > lat24 + 1e-7);
    q.node_channels = 24;
    /* across nodes: neither term */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&x, &q), x_lat, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_scale_with(&x, &q), x_scale, 1e-12);
    /* the tuner never sees them */
    CU_ASSERT(coll_params_tuner()->chan_bw[COLL_LL] == 0 && coll_params_tuner()->node_channels == 0);
    coll_topo_free(one);
    coll_topo_free(two);
    /* the overlay */
    json_error_t je;
    json_t *o = json_loads("{\"node_channels\": 24, \"chan_bw\": {\"ll\": 5e9, \"ll128\": 16e9}}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_NCCL);
    CU_ASSERT(r.node_channels == 0 && r.chan_bw[COLL_LL] == 0);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT(r.node_channels == 24 && r.chan_bw[COLL_LL] == 5e9 && r.chan_bw[COLL_LL128] == 16e9 && r.chan_bw[COLL_SIMPLE] == 0);
    json_decref(o);
    o = json_loads("{\"chan_bw\": {\"ll\": -1}}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "chan_bw"));
    json_decref(o);
    /* the shipped A100 cluster on the one-node sweeps: ring LL at 64 KiB-1
     * MiB (ABCI, NCCL 2.8.4), ring LL128 at 4-8 MiB (Galvatron) */
    static const log_pt pts[] = {
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "65536", 10},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "262144", 10},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "524288", 10},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "1048576", 10},
        {"nccl_a100x8_single_node_all_reduce_galvatron.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "1048576", 10},
        {"nccl_a100x8_single_node_all_reduce_galvatron.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "4194304", 10},
        {"nccl_a100x8_single_node_all_reduce_galvatron.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "8388608", 10}};
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
}

/* The A100 floors, uncalibrated: one process per GPU on one node runs an
 * 8 B all-reduce in 17 us (ABCI, NCCL 2.8.4), the GPU time of a ring LL over
 * the 12.5 us launch, where the 35 us launch dgx-a100-superpod had put it at
 * +107%; two nodes (OCI RoCE) in 36.5 us, their tree LL with 8 us network
 * steps (NCCL's table: 5 us). */
static void test_a100_floors(void)
{
    static const log_pt pts[] = {
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "8", 10},
        {"nccl_a100x8_single_node_all_reduce_abci.txt", "dgx-a100-superpod", "--nodes 1 --gpus 8", "128", 10},
        {"nccl_a100_2nodes_16gpu_all_reduce_oci_roce.txt", "dgx-a100-superpod", "--nodes 2 --gpus 16", "8", 10}};
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
}

/* NCCL's Simple ring slices (prims_simple.h: SlicePerChunk 2, a slice at
 * least 1/32 of 2 x 512 KiB): a channel's chunk S / (n x channels) of at
 * most 32 KiB is one network message per step, a larger one two, and chunks
 * past 2 MiB loop. A lock-stepped ring pays the NIC hop per message, NCCL's
 * own count (and the tuner) once per step. The channels across nodes are
 * twice the NICs of a node (ncclTopoPostset): 4 on Polaris. */
static void test_ring_slices(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 4;
    const int n = 8, L = 4;
    int ids[8];
    for (int r = 0; r < n; r++) ids[r] = r / L;
    coll_topo *t = coll_topo_new(n, ids, 0);
    char err[TS_ERRLEN];
    int a = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    coll_plan p;
    /* S / (8 x 4) = 32 KiB: one slice; 64 KiB: two; 4 MiB: two loops of two */
    const int64_t sizes[] = {1 << 20, 2 << 20, 128 << 20};
    const int msgs[] = {1, 2, 4};
    double lat[3];
    q.ring_lockstep = 1;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, sizes[i], NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        CU_ASSERT_EQUAL(coll_ring_step_msgs(&p, &q), msgs[i]);
        lat[i] = coll_call_latency_with(&p, &q) - q.base_lat[COLL_FAM_RING][COLL_SIMPLE];
        CU_ASSERT_DOUBLE_EQUAL(lat[i], 14 * msgs[i] * q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE], 1e-12);
    }
    CU_ASSERT_DOUBLE_EQUAL(lat[1], 2 * lat[0], 1e-12);
    /* LL and trees: one message per step */
    p.proto = COLL_LL;
    CU_ASSERT_EQUAL(coll_ring_step_msgs(&p, &q), 1);
    /* not lock-stepped: NCCL's count, once per step */
    q.ring_lockstep = 0;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, n, 0, 2 << 20, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - q.base_lat[COLL_FAM_RING][COLL_SIMPLE],
                           12 * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_SIMPLE] +
                               2 * q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE], 1e-12);
    /* more channels, smaller chunks: 16 channels keep 2 MiB on 8 ranks at one slice */
    q.max_channels = 16;
    CU_ASSERT_EQUAL(coll_ring_step_msgs(&p, &q), 1);
    coll_topo_free(t);
    /* channels from the NICs of the node */
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("polaris", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.max_channels, 4);
    CU_ASSERT_EQUAL_FATAL(topo_load("perlmutter", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.max_channels, 8);
    CU_ASSERT_EQUAL_FATAL(topo_load("dgx-h100-superpod", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.max_channels, 16);
}

/* ring_overlap: the share of a lock-step ring's network waits that its
 * transfers hide (pipelined tail). An all_gather on 2 nodes of 4 over 4
 * channels at 2 MiB (a 64 KiB chunk per channel: two Simple slices per step)
 * with H = 8 us per network message and 10 us of transfers: at 1 (Polaris,
 * the preset) the tail shows max(7 x 2 H - busy, NCCL's own count); at 0 the
 * waits add to the transfers, one per step (the second slice streams behind
 * the first: 7 H); at 0.5 half of each (7 x 1.5 H - busy / 2). The overlay
 * takes 0..1 and refuses more. */
static void test_ring_overlap(void)
{
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    CU_ASSERT_DOUBLE_EQUAL(q.ring_overlap, 1, 0);
    q.max_channels = 4;
    q.ring_lockstep = 1;
    const double H = 8e-6, busy = 10e-6;
    q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE] = H;
    const int n = 8;
    int ids[8];
    for (int r = 0; r < n; r++) ids[r] = r / 4;
    coll_topo *t = coll_topo_new(n, ids, 0);
    char err[TS_ERRLEN];
    int a = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err);
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, n, 0, 2 << 20, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    CU_ASSERT_EQUAL(coll_ring_step_msgs(&p, &q), 2);
    double base = q.base_lat[COLL_FAM_RING][COLL_SIMPLE];
    const double ovl[] = {1, 0, 0.5}, want[] = {7 * 2 * H - busy, 7 * H, 7 * 1.5 * H - busy / 2};
    for (int i = 0; i < 3; i++) {
        q.ring_overlap = ovl[i];
        coll_params_set(&q);
        /* no wire latency (alpha 0): the tail is base + the shown waits */
        CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 0, 0, 0, busy), base + want[i], 1e-12);
    }
    /* where the transfers outlast the waits, overlap 1 shows NCCL's count only, 0 still adds them */
    q.ring_overlap = 1;
    coll_params_set(&q);
    double own = 6 * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_SIMPLE] + H;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 0, 0, 0, 1e-3), base + own, 1e-12);
    q.ring_overlap = 0;
    coll_params_set(&q);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 0, 0, 0, 1e-3), base + 7 * H, 1e-12);
    coll_params_set(&saved);
    coll_topo_free(t);
    /* the overlay */
    json_error_t je;
    json_t *o = json_loads("{\"ring_overlap\": 0.5}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(r.ring_overlap, 0.5, 0);
    json_decref(o);
    /* NVLS's per-loop cost is a cluster figure like the rest (nvls_step_lat) */
    CU_ASSERT_DOUBLE_EQUAL(r.nvls_step_lat, 4.9e-6, 1e-15);
    o = json_loads("{\"nvls_step_lat\": 2e-6}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(r.nvls_step_lat, 2e-6, 1e-15);
    json_decref(o);
    o = json_loads("{\"nvls_step_lat\": -1}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "nvls_step_lat"));
    json_decref(o);
    o = json_loads("{\"ring_overlap\": 1.5}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ring_overlap"));
    json_decref(o);
}

/* ring_slice_waits: the kernel posts every slice of a chunk (an empty one
 * when the chunk fits one) and the proxy sends a message per slice, so
 * whether a lock-step step's wait doubles where a channel's chunk passes
 * 32 KiB is the cluster's figure. On 2 nodes of 4 over 4 channels: 1 MiB
 * (32 KiB a channel) one wait a step, 2 MiB (64 KiB) two with the preset
 * and one without, 128 MiB (4 MiB a channel: two loops) two loops of two,
 * or the two loops alone; the data messages themselves do not change.
 * Every shipped cluster keeps the preset (Frontier too: its unbound launches
 * measure the doubled wait; docs/accuracy.md, "Slices"). */
static void test_ring_slice_waits(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(q.ring_slice_waits, 1);
    q.max_channels = 4;
    q.ring_lockstep = 1;
    const int n = 8;
    int ids[8];
    for (int r = 0; r < n; r++) ids[r] = r / 4;
    coll_topo *t = coll_topo_new(n, ids, 0);
    char err[TS_ERRLEN];
    int a = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err);
    coll_plan p;
    const int64_t sizes[] = {1 << 20, 2 << 20, 128 << 20};
    const int with[] = {1, 2, 4}, without[] = {1, 1, 2};
    double hop = q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE], lat[2][3];
    for (int w = 0; w < 2; w++) {
        q.ring_slice_waits = !w;
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLGATHER, n, 0, sizes[i], NULL, a, t, err, sizeof err), 0);
            p.proto = COLL_SIMPLE;
            CU_ASSERT_EQUAL(coll_ring_step_msgs(&p, &q), with[i]);
            CU_ASSERT_EQUAL(coll_ring_step_waits(&p, &q), w ? without[i] : with[i]);
            lat[w][i] = coll_call_latency_with(&p, &q) - q.base_lat[COLL_FAM_RING][COLL_SIMPLE];
            CU_ASSERT_DOUBLE_EQUAL(lat[w][i], 7 * (w ? without[i] : with[i]) * hop, 1e-12);
        }
    }
    /* without the slice waits the step's wait does not move at 32 KiB */
    CU_ASSERT_DOUBLE_EQUAL(lat[1][1], lat[1][0], 1e-15);
    CU_ASSERT(lat[0][1] > 1.9 * lat[0][0]);
    /* LL: one message per step either way */
    p.proto = COLL_LL;
    CU_ASSERT_EQUAL(coll_ring_step_waits(&p, &q), 1);
    coll_topo_free(t);
    /* the overlay: a boolean, anything else refused by name */
    json_error_t je;
    json_t *o = json_loads("{\"ring_slice_waits\": false}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT_EQUAL(r.ring_slice_waits, 0);
    json_decref(o);
    o = json_loads("{\"ring_slice_waits\": 0}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "ring_slice_waits"));
    json_decref(o);
    /* the shipped clusters */
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("frontier", 4, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.ring_slice_waits, 1);
    CU_ASSERT_EQUAL_FATAL(topo_load("polaris", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.ring_slice_waits, 1);
    CU_ASSERT_EQUAL_FATAL(topo_load("perlmutter", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.ring_slice_waits, 1);
}

/* The launch's binding (docs/collectives.md, "Launches"): a cluster's
 * "bound" figures (ring_slice_waits, chan_lat) replace its own for a run
 * whose launch binds each rank's host threads next to its GPU
 * (--gpu-bind=closest, read from the log's header). On 2 nodes of 8 over 8
 * channels: the LL wait per step is hop + chan_lat x 8 unbound and hop +
 * bound chan_lat x 8 bound; a Simple step of 64 KiB a channel waits twice
 * unbound (slices) and once bound. A cluster without "bound" is the same
 * either way. The header decides in `compare`: the Frontier 4-node sweep
 * (bound) comes closer with its launch's figures than with the unbound ones
 * at 16 MiB, where RCCL's bound run shows no doubled wait. */
static void test_launch_bound(void)
{
    char err[TS_ERRLEN];
    json_error_t je;
    coll_params q;
    coll_params_preset(&q, COLL_LIB_RCCL);
    q.max_channels = 8;
    q.ring_lockstep = 1;
    q.ring_overlap = 1;
    q.ring_slice_waits = 1;
    q.chan_lat[COLL_LL] = 3e-6;
    coll_params plain = q;
    json_t *o = json_loads("{\"bound\": {\"ring_slice_waits\": false, \"chan_lat\": {\"ll\": 1e-6}}}", 0, &je);
    CU_ASSERT_EQUAL_FATAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), 0);
    json_decref(o);
    CU_ASSERT(q.has_bound && !q.bound_slice_waits && q.bound_chan_lat[COLL_LL] == 1e-6);
    CU_ASSERT(q.ring_slice_waits == 1 && q.chan_lat[COLL_LL] == 3e-6); /* the unbound ones stay */
    const int n = 16;
    int ids[16];
    for (int r = 0; r < n; r++) ids[r] = r / 8;
    coll_topo *t = coll_topo_new(n, ids, 0);
    int a = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err);
    coll_plan ll, simple;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&ll, OG_ALLGATHER, n, 0, 8 * 4096 * n, NULL, a, t, err, sizeof err), 0);
    ll.proto = COLL_LL;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&simple, OG_ALLGATHER, n, 0, (int64_t)65536 * 8 * n, NULL, a, t, err, sizeof err), 0);
    simple.proto = COLL_SIMPLE;
    double hop = q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_LL], base = q.base_lat[COLL_FAM_RING][COLL_LL];
    double lat[2], lat_plain[2];
    int waits[2];
    for (int b = 0; b < 2; b++) {
        coll_set_proxy_bound(b);
        CU_ASSERT_EQUAL(coll_proxy_bound(), b);
        lat[b] = coll_call_latency_with(&ll, &q) - base;
        lat_plain[b] = coll_call_latency_with(&ll, &plain) - base;
        waits[b] = coll_ring_step_waits(&simple, &q);
        CU_ASSERT_EQUAL(coll_ring_step_waits(&simple, &plain), 2);
    }
    coll_set_proxy_bound(0);
    CU_ASSERT_DOUBLE_EQUAL(lat[0], (n - 1) * (hop + 8 * q.chan_lat[COLL_LL]), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(lat[1], (n - 1) * (hop + 8 * q.bound_chan_lat[COLL_LL]), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(lat_plain[0], lat_plain[1], 0);
    CU_ASSERT_DOUBLE_EQUAL(lat_plain[0], lat[0], 1e-15);
    CU_ASSERT(waits[0] == 2 && waits[1] == 1);
    coll_topo_free(t);
    /* the parameters' JSON keeps the bound figures (written, read back) */
    FILE *jf = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(jf);
    coll_params_write_json(jf, &q, 0);
    rewind(jf);
    json_t *back = json_loadf(jf, 0, &je);
    fclose(jf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    coll_params rt;
    coll_params_preset(&rt, COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&rt, back, "rt.json", err, sizeof err), 0);
    CU_ASSERT(rt.has_bound && rt.bound_slice_waits == q.bound_slice_waits);
    CU_ASSERT_DOUBLE_EQUAL(rt.bound_chan_lat[COLL_LL], q.bound_chan_lat[COLL_LL], 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(rt.chan_lat[COLL_LL], q.chan_lat[COLL_LL], 1e-15);
    json_decref(back);
    /* the overlay refuses what it does not know, by name */
    static const struct {
        const char *json, *want;
    } bad[] = {{"{\"bound\": 3}", "'bound' must be an object"},
               {"{\"bound\": {\"ring_overlap\": 0.5}}", "ring_overlap"},
               {"{\"bound\": {\"ring_slice_waits\": 1}}", "bound.ring_slice_waits"},
               {"{\"bound\": {\"chan_lat\": {\"ll\": -1}}}", "bound.chan_lat"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coll_params r = plain;
        o = json_loads(bad[i].json, 0, &je);
        CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), -1);
        if (!strstr(err, bad[i].want)) fprintf(stderr, "\n  %s: %s", bad[i].json, err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
        CU_ASSERT_EQUAL(r.has_bound, 0);
        json_decref(o);
    }
    /* the header: the launch line's --gpu-bind=closest */
    static const struct {
        const char *file;
        int bound;
    } logs[] = {{"tests/data/accuracy/rccl_frontier_mi250x_4nodes_32gcd_reduce_scatter_pccl.txt", 1},
                {"tests/data/accuracy/rccl_frontier_mi250x_64nodes_512gcd_reduce_scatter_pccl.txt", 1},
                {"tests/data/accuracy/rccl_frontier_mi250x_8nodes_64gcd_reduce_scatter_pccl.txt", 0},
                {"tests/data/accuracy/rccl_frontier_mi250x_16nodes_128gcd_all_gather_pccl.txt", 0}};
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        val_file vf;
        CU_ASSERT_EQUAL_FATAL(val_parse_file(logs[i].file, &vf, err, sizeof err), 0);
        CU_ASSERT(vf.nruns == 1 && vf.runs[0].proxy_bound == logs[i].bound);
        val_file_free(&vf);
    }
    /* Slurm's other spellings of the launch line, on an unbound log */
    static const struct {
        const char *line;
        int bound;
    } spell[] = {{"# srun -N 8 --gpu-bind closest ./reduce_scatter_perf\n", 1},
                 {"# srun --gpus-per-node 8 --gpu-bind=verbose,closest rs\n", 1},
                 {"# srun --gpu-bind=none ./reduce_scatter_perf\n", 0},
                 {"# srun --gpu-bind=closest_gpu ./reduce_scatter_perf\n", 0}};
    for (size_t i = 0; i < sizeof spell / sizeof spell[0]; i++) {
        const char *path = test_tmp("frontier_8n_reduce_scatter_spelling.txt");
        FILE *in = fopen("tests/data/accuracy/rccl_frontier_mi250x_8nodes_64gcd_reduce_scatter_pccl.txt", "r");
        FILE *out = fopen(path, "w");
        CU_ASSERT_FATAL(in != NULL && out != NULL);
        fputs(spell[i].line, out);
        char buf[1024];
        while (fgets(buf, sizeof buf, in)) fputs(buf, out);
        fclose(in);
        fclose(out);
        val_file vf;
        CU_ASSERT_EQUAL_FATAL(val_parse_file(path, &vf, err, sizeof err), 0);
        if (vf.nruns != 1 || vf.runs[0].proxy_bound != spell[i].bound) fprintf(stderr, "\n  launch line '%s' misread", spell[i].line);
        CU_ASSERT(vf.nruns == 1 && vf.runs[0].proxy_bound == spell[i].bound);
        val_file_free(&vf);
        remove(path);
    }
    /* the shipped Frontier has both; the 4-node bound sweep at 16 MiB comes
     * closer with its launch's figures (compare reads the header) than with
     * the unbound ones (the same file without its launch line) */
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("frontier", 4, &cl, err, sizeof err), 0);
    CU_ASSERT(cl.coll.has_bound);
    double eb = 1e9, eu = 1e9;
    CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", "rccl_frontier_mi250x_4nodes_32gcd_reduce_scatter_pccl.txt", "frontier",
                                     "--nodes 4 --gpus 32", NULL, "16777216", &eb), 0);
    /* the copy keeps "reduce_scatter" in its name: compare reads the collective from it */
    const char *tmp = test_tmp("frontier_4n_reduce_scatter_unbound.txt");
    FILE *in = fopen("tests/data/accuracy/rccl_frontier_mi250x_4nodes_32gcd_reduce_scatter_pccl.txt", "r"), *out = fopen(tmp, "w");
    CU_ASSERT_FATAL(in != NULL && out != NULL);
    char line[1024];
    while (fgets(line, sizeof line, in))
        if (!strstr(line, "--gpu-bind=closest")) fputs(line, out);
    fclose(in);
    fclose(out);
    CU_ASSERT_EQUAL(compare_error_in("/tmp", strrchr(tmp, '/') + 1, "frontier", "--nodes 4 --gpus 32", NULL, "16777216", &eu), 0);
    remove(tmp);
    CU_ASSERT(fabs(eb) < fabs(eu));
    CU_ASSERT_EQUAL(coll_proxy_bound(), 0); /* compare leaves the process unbound */
}

/* rccl_tuning 3: RCCL's tuning_model_3 in the tuner (Frontier's node,
 * rome_model_63): ring hwLat 3.6 / 0.8 us (xGMI) and 19.8 / 9.5 us (NET),
 * Simple / LL, the network post overhead (6 / 2 us) on the non-network steps
 * of a ring across nodes, and ringCorrectionFactor on the bandwidth. Its
 * choice on 4 Frontier nodes: LL to 2 MiB, Simple from 4 MiB (the sweep's
 * step goes 17.6 -> 27.2 us there); on 64 nodes LL to 8 MiB, Simple from 32
 * MiB (the generic tables took Simple from 8 MiB). chan_lat: the lock-step LL
 * wait grows by chan_lat per channel the call runs on. Only 0 and 3 are
 * tabulated. */
static void test_rccl_tuning(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get();
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("frontier", 64, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.rccl_tuning, 3);
    coll_params_set(&cl.coll);
    const coll_params *t = coll_params_tuner();
    CU_ASSERT_DOUBLE_EQUAL(t->hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE], 19.8e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t->net_overhead[COLL_SIMPLE], 6e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_params_get()->net_overhead[COLL_SIMPLE], 0, 0); /* the tuner's only */
    int a = coll_algo_find("ring", OG_REDUCESCATTER, err, sizeof err);
    static const struct {
        int nodes;
        int64_t bytes;
        coll_proto want;
    } sel[] = {{4, 1 << 20, COLL_LL}, {4, 2 << 20, COLL_LL}, {4, 4 << 20, COLL_SIMPLE},
               {64, 8 << 20, COLL_LL}, {64, 32 << 20, COLL_SIMPLE}};
    for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) {
        int n = sel[i].nodes * 8, *ids = ts_malloc(n * sizeof *ids);
        for (int r = 0; r < n; r++) ids[r] = r / 8;
        coll_topo *tp = coll_topo_new(n, ids, 0);
        coll_hw hw = {1e-6, 212e9, tp, 3e-6, 20e9}; /* frontier: GCD 0 to 1 (quad x 1.06), to a NIC (25 x 0.8) */
        coll_proto got = coll_best_proto(OG_REDUCESCATTER, n, sel[i].bytes, a, &hw);
        if (got != sel[i].want) fprintf(stderr, "\n  %d nodes %lld B: %s", sel[i].nodes, (long long)sel[i].bytes, coll_proto_name(got));
        CU_ASSERT_EQUAL(got, sel[i].want);
        coll_topo_free(tp);
        free(ids);
    }
    /* the correction: Simple 0.2 at 1 MiB, 1 from 64 MiB; none without rccl_tuning */
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init(&p, OG_REDUCESCATTER, 8, 0, 1 << 20, NULL, a, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_correction(&p, t), 0.2, 1e-12);
    p.bytes = 64 << 20;
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_correction(&p, t), 1, 1e-12);
    coll_params g;
    coll_params_preset(&g, COLL_LIB_RCCL);
    p.bytes = 1 << 20;
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_correction(&p, &g), 1, 0);
    /* chan_lat: the LL lock-step wait of 4 nodes at 1 MiB (8 channels) and 8 KiB (1) */
    coll_params q = cl.coll;
    int ids[32];
    for (int r = 0; r < 32; r++) ids[r] = r / 8;
    coll_topo *tp = coll_topo_new(32, ids, 0);
    double hop = q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_LL], cl_ = q.chan_lat[COLL_LL];
    CU_ASSERT(cl_ > 0);
    const int64_t sz[] = {1 << 20, 8 << 10};
    const int nch[] = {8, 1};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_REDUCESCATTER, 32, 0, sz[i], NULL, a, tp, err, sizeof err), 0);
        p.proto = COLL_LL;
        CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - q.base_lat[COLL_FAM_RING][COLL_LL], 31 * (hop + cl_ * nch[i]),
                               1e-12);
    }
    coll_topo_free(tp);
    coll_params_set(&saved);
    /* the overlay */
    json_error_t je;
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    json_t *o = json_loads("{\"rccl_tuning\": 2}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "rccl_tuning"));
    json_decref(o);
    o = json_loads("{\"chan_lat\": {\"ll\": 1e-6}, \"rccl_tuning\": 3}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT(r.rccl_tuning == 3 && r.chan_lat[COLL_LL] == 1e-6);
    json_decref(o);
}

/* RCCL's own choice between ring LL and Simple across nodes, in closed form
 * (ROCm/rccl src/graph/tuning.cc, tuning_model_3, the ring of a reduce_scatter
 * on M > 2 nodes of 8 GCDs, n = 8 M ranks, nsteps = n - 1):
 *   lat(p) = baseLat(p) + (nsteps - (M - 1)) max(hwLat xGMI(p), netOverhead(p))
 *            + (M - 1) hwLat NET(p)
 *   time(p) = lat(p) + S / (1000 bw(p)), bw(p) = B bwRatio(p) ringCorr(p, log2(S / 64)) n / nsteps
 * with baseLat 12 / 17 us, hwLat xGMI 0.8 / 3.6, NET 9.5 / 19.8, netOverhead
 * 2 / 6 (an AMD host, x3 for Simple), bwRatio 0.2 / 1 (LL / Simple) and B =
 * the ring graph's nChannels x bwInter: its nominal NIC speeds, 4 x 25 GB/s
 * a Frontier node. The model's selection takes the same protocol on the
 * run's links (25 x 0.8 a NIC), which its tuner divides by bw_frac: LL to 16
 * MiB on 64 nodes (B > 97 GB/s at 16 MiB; the achieved 80 would give Simple,
 * the choice before), Simple from 32 MiB (B < 209), and on 128 nodes LL at
 * 16 MiB, Simple from 32 MiB (B < 104). The choice does not depend on
 * bw_frac: the links as run divided by it are the same to the tuner. */
static double rccl_ring_time(int M, double S, int ll, double B)
{
    static const double corr_ll[] = {.3, .3, .3, .3}, corr_s[] = {.3, .4, .7, 1}; /* log2(S / 64) = 17 .. 20 */
    int n = 8 * M, steps = n - 1, k = -1;
    for (long long b = (long long)S >> 6; b > 0; b >>= 1) k++;
    double intra = ll ? 2.0 : 6.0, net = ll ? 9.5 : 19.8, base = ll ? 12 : 17;
    double lat = base + (steps - (M - 1)) * intra + (M - 1) * net;
    double bw = B * (ll ? 0.2 * corr_ll[k - 17] : corr_s[k - 17]) * n / steps;
    return lat + S / (1000 * bw);
}

static void test_rccl_tuner_nominal_links(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get();
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("frontier", 128, &cl, err, sizeof err), 0);
    int a = coll_algo_find("ring", OG_REDUCESCATTER, err, sizeof err);
    static const struct {
        int nodes;
        double bytes;
    } sel[] = {{64, 8 << 20}, {64, 16 << 20}, {64, 32 << 20}, {128, 16 << 20}, {128, 32 << 20}};
    /* the closed form itself: 16 MiB on 64 nodes is LL at 4 x 25 GB/s, Simple at 4 x 20 */
    CU_ASSERT(rccl_ring_time(64, 16 << 20, 1, 100) < rccl_ring_time(64, 16 << 20, 0, 100));
    CU_ASSERT(rccl_ring_time(64, 16 << 20, 1, 80) > rccl_ring_time(64, 16 << 20, 0, 80));
    const double frac[] = {0.8, 0.5};
    for (int f = 0; f < 2; f++) {
        coll_params q = cl.coll;
        q.bw_frac[COLL_TIER_NIC] = frac[f];
        coll_params_set(&q);
        for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) {
            int n = sel[i].nodes * 8, *ids = ts_malloc(n * sizeof *ids);
            for (int r = 0; r < n; r++) ids[r] = r / 8;
            coll_topo *tp = coll_topo_new(n, ids, 0);
            coll_hw hw = {1e-6, 212e9, tp, 3e-6, 25e9 * frac[f]}; /* a NIC's 25 GB/s as run */
            int want = rccl_ring_time(sel[i].nodes, sel[i].bytes, 1, 100) < rccl_ring_time(sel[i].nodes, sel[i].bytes, 0, 100)
                           ? COLL_LL
                           : COLL_SIMPLE;
            coll_proto got = coll_best_proto(OG_REDUCESCATTER, n, (int64_t)sel[i].bytes, a, &hw);
            if ((int)got != want)
                fprintf(stderr, "\n  bw_frac %.1f, %d nodes %.0f B: %s", frac[f], sel[i].nodes, sel[i].bytes, coll_proto_name(got));
            CU_ASSERT_EQUAL(got, want);
            coll_topo_free(tp);
            free(ids);
        }
    }
    coll_params_set(&saved);
}

/* reduce_bw: a ring reduce-scatter's rank reduces (n - 1)/n of the buffer
 * with the threads that move it. On one node (8 GCDs) the kernel's stores
 * are the transfers, so the reduction adds to them: reduce_scatter takes
 * S (n - 1)/n / reduce_bw longer than all_gather of the same transfers, and
 * exactly as long without reduce_bw. Across nodes (2 of 4) the NICs move the
 * data beside the kernel: only the reduction the transfers did not cover
 * shows. End to end, the shipped Frontier files keep their one-node
 * asymmetry (all_gather ~106 GB/s busbw of RCCL's own time, reduce_scatter ~76 at 1 GiB): the
 * predicted all_gather busbw is above the reduce_scatter's and each 1 GiB
 * is within 5%. The overlay takes the field and refuses a negative one. */
static void test_reduce_bw(void)
{
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_RCCL);
    CU_ASSERT_DOUBLE_EQUAL(q.reduce_bw, 0, 0);
    const double R = 500e9, busy = 1e-3;
    const int64_t S = 64 << 20;
    char err[TS_ERRLEN];
    int ag = coll_algo_find("ring", OG_ALLGATHER, err, sizeof err), rs = coll_algo_find("ring", OG_REDUCESCATTER, err, sizeof err);
    int one[8], two[8];
    for (int r = 0; r < 8; r++) one[r] = 0, two[r] = r / 4;
    const int *ids[2] = {one, two};
    for (int k = 0; k < 2; k++) {
        coll_topo *t = coll_topo_new(8, ids[k], 0);
        coll_plan pa, pr;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&pa, OG_ALLGATHER, 8, 0, S, NULL, ag, t, err, sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&pr, OG_REDUCESCATTER, 8, 0, S, NULL, rs, t, err, sizeof err), 0);
        pa.proto = pr.proto = COLL_SIMPLE;
        q.reduce_bw = 0;
        coll_params_set(&q);
        CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&pr, 0, 0, 0, busy), coll_call_tail(&pa, 0, 0, 0, busy), 1e-12);
        q.reduce_bw = R;
        coll_params_set(&q);
        double red = (double)S * 7 / 8 / R;
        CU_ASSERT_DOUBLE_EQUAL(coll_reduce_time(&pr, &q), red, 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(coll_reduce_time(&pa, &q), 0, 0);
        if (k == 0) { /* one node: added to the transfers, at every fidelity */
            CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&pr, 0, 0, 0, busy) - coll_call_tail(&pa, 0, 0, 0, busy), red, 1e-12);
            CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&pr, 0, 0, 1, busy) - coll_call_tail(&pa, 0, 0, 1, busy), red, 1e-12);
        } else { /* across nodes: hidden by longer transfers, the rest shows */
            CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&pr, 0, 0, 0, busy) - coll_call_tail(&pa, 0, 0, 0, busy), 0, 1e-12);
            CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&pr, 0, 0, 0, red / 4) - coll_call_tail(&pa, 0, 0, 0, red / 4),
                                   red * 3 / 4, 1e-12);
        }
        coll_topo_free(t);
    }
    coll_params_set(&saved);
    /* the shipped Frontier node: all_gather faster than reduce_scatter at 1 GiB,
     * each close to the library's share of the measured time (the PyTorch
     * harness's cost taken off: the all_gather harness also allocates and
     * concatenates its output, val_harness_cost) */
    const char *logs[2] = {"rccl_frontier_mi250x_1node_8gcd_all_gather_pccl.txt",
                           "rccl_frontier_mi250x_1node_8gcd_reduce_scatter_pccl.txt"};
    const double meas[2] = {10557e-6, 12428e-6};
    const int timing[2] = {VAL_TIMING_TORCH_CAT, VAL_TIMING_TORCH};
    double hbm = 0, pred[2] = {0, 0};
    CU_ASSERT_EQUAL(val_harness_hbm("frontier", &hbm, err, sizeof err), 0);
    for (int i = 0; i < 2; i++) {
        double e = 1e9;
        char cmd[512], out[8192];
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", logs[i], "frontier", "--nodes 1", NULL, "1073741824", &e), 0);
        double lib = meas[i] - val_harness_cost(timing[i], 8, 1073741824.0, hbm);
        CU_ASSERT(fabs(meas[i] * (1 + e / 100) - lib) <= 0.05 * lib);
        snprintf(cmd, sizeof cmd, "compare tests/data/accuracy/%s --cluster frontier --nodes 1 -b 1G -e 1G", logs[i]);
        CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            double v[6];
            if (line[0] != '#' && sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6)
                pred[i] = v[4];
        }
    }
    CU_ASSERT(pred[0] > 1.1 * pred[1]);
    /* the overlay */
    json_error_t je;
    json_t *o = json_loads("{\"reduce_bw\": 5.2e11}", 0, &je);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&r, o, "x.json", err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(r.reduce_bw, 5.2e11, 1);
    json_decref(o);
    o = json_loads("{\"reduce_bw\": -1}", 0, &je);
    CU_ASSERT(coll_params_overlay(&r, o, "x.json", err, sizeof err) < 0 && strstr(err, "reduce_bw"));
    json_decref(o);
}

/* RCCL's and NCCL's tuners price each protocol at the communicator's full
 * channel count (tuning.cc ncclTopoGetAlgoTime); the channels of a small
 * call are cut after the choice (enqueue.cc, NCCL 2.8-2.26). On 512 and 1,024 Frontier GCDs the 4 MiB
 * reduce_scatter runs steps of 8-9 us (LL-sized; the lock-step Simple
 * message is 25 us): priced with the cut, the model took Simple there
 * (+218% and +172%). The time itself still pays the cut (the active set's
 * channel rule). With Frontier's LL step
 * growing with the channels (chan_lat, 1 channel at 4 MiB on 1,024 GCDs:
 * 5.5 us, the sweep's 2 and 8 MiB take 4.0 and 8.3 us a step, its 4 MiB
 * 9.2) the 1,024-GCD point is 8 MiB; 8 MiB on 512 GCDs (4 channels, LL in
 * RCCL's tuning_model_3, Simple in the generic tables: +141%) joins. */
static void test_rccl_tuner_channels(void)
{
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_RCCL);
    coll_params_set(&q);
    for (int i = 0; i < COLL_NPROTOS; i++) CU_ASSERT_DOUBLE_EQUAL(coll_params_tuner()->chan_bytes[i], 0, 0);
    CU_ASSERT(coll_params_get()->chan_bytes[COLL_LL] > 0);
    coll_params_preset(&q, COLL_LIB_NCCL);
    coll_params_set(&q);
    for (int i = 0; i < COLL_NPROTOS; i++) CU_ASSERT_DOUBLE_EQUAL(coll_params_tuner()->chan_bytes[i], 0, 0);
    CU_ASSERT(coll_params_get()->chan_bytes[COLL_LL] > 0);
    coll_params_set(&saved);
    static const log_pt pts[] = {
        {"rccl_frontier_mi250x_64nodes_512gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 64 --gpus 512", "4194304", 25},
        {"rccl_frontier_mi250x_64nodes_512gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 64 --gpus 512", "8388608", 25},
        {"rccl_frontier_mi250x_128nodes_1024gcd_reduce_scatter_pccl.txt", "frontier", "--nodes 128 --gpus 1024", "8388608", 25}};
    check_log_pts(pts, sizeof pts / sizeof pts[0]);
}

/* NCCL's tuner at full channels on one DGX A100 (ABCI nccl-tests, 8 GPUs):
 * at 32-64 KiB ring LL runs on the few channels the cut leaves it while the
 * tree LL the cut-priced tuner took was timed at 19 us flat, 47-53% under
 * the sweep's 36-40 us. Priced as NCCL prices, the choice is ring LL: the
 * uncalibrated error stays inside 25%. */
static void test_nccl_tuner_full_channels(void)
{
    static const char *sizes[] = {"32768", "65536"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double e = 1e9;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", "nccl_a100x8_single_node_all_reduce_abci.txt",
                                         "dgx-a100-superpod", "--nodes 1 --gpus 8", NULL, sizes[i], &e), 0);
        CU_ASSERT(fabs(e) <= 25);
    }
}

/* NCCL (enqueue.cc, 2.18 on) runs NVLS and NVLS-tree on comm->nvlsChannels
 * at every size: the channel cut for small calls applies to rings and trees
 * only. A 64 KiB all-reduce on 2 nodes of 8: NVLS-tree's wire bytes are those
 * of the uncut channels; the tree's are not. */
static void test_nvlstree_no_channel_cut(void)
{
    coll_params q, uncut;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 16;
    uncut = q;
    memset(uncut.chan_bytes, 0, sizeof uncut.chan_bytes);
    char err[TS_ERRLEN];
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    coll_topo *t = coll_topo_new(16, ids, 1); /* NVLS-capable nodes */
    const char *algos[] = {"nvlstree", "tree"};
    for (int k = 0; k < 2; k++) {
        int a = coll_algo_find(algos[k], OG_ALLREDUCE, err, sizeof err);
        CU_ASSERT_FATAL(a >= 0);
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 16, 0, 64 << 10, NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        double cut = coll_plan_wire_scale_with(&p, &q), whole = coll_plan_wire_scale_with(&p, &uncut);
        if (k == 0) CU_ASSERT_DOUBLE_EQUAL(cut, whole, 1e-12 * whole);
        if (k == 1) CU_ASSERT(cut > 1.5 * whole); /* the tree runs on fewer channels */
    }
    coll_topo_free(t);
}

/* q with the NCCL settings spec applied (coll_nccl_env_apply). */
static void env_params(coll_params *q, int max_channels, const char *spec)
{
    coll_nccl_env e;
    char err[TS_ERRLEN];
    coll_params_preset(q, COLL_LIB_NCCL);
    q->max_channels = max_channels;
    coll_nccl_env_init(&e);
    if (spec) CU_ASSERT_EQUAL_FATAL(coll_nccl_env_parse(&e, spec, "test", err, sizeof err), 0);
    coll_nccl_env_apply(&e, q);
}

/* NCCL's channels under its settings (src/graph/connect.cc
 * ncclTopoPostset: n = min(n, NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS), then
 * raised to max(NCCL_MIN_NCHANNELS, NCCL_MIN_CTAS) by copying channels, at
 * most MAXCHANNELS; transport/nvls.cc: NVLS max(minCTAs, min(maxCTAs,
 * NCCL_NVLS_NCHANNELS)); ncclTopoComputeP2pChannels: a power of two), and
 * what the channel count does to a call: a ring all-reduce too small for
 * the channels runs on min(channels, bytes / (512 threads x 64 B)) of them
 * (enqueue.cc), each 1/16 of the links (the topology's 16: added channels
 * are copies over the same links), its wire bytes x 16 / those. */
static void test_nccl_env_channels(void)
{
    static const struct { const char *spec; int base, run, nvls, p2p; } cases[] = {
        {NULL, 16, 16, 16, 16},
        {"NCCL_MIN_CTAS=24", 16, 24, 24, 32},
        {"NCCL_MIN_NCHANNELS=24", 16, 24, 16, 32},
        {"NCCL_MAX_NCHANNELS=4", 16, 4, 16, 4},
        {"NCCL_MAX_CTAS=4", 16, 4, 4, 4},
        {"NCCL_MIN_CTAS=24,NCCL_MAX_NCHANNELS=8", 16, 24, 24, 32}, /* max first, then min */
        {"NCCL_MIN_NCHANNELS=20,NCCL_MIN_CTAS=12", 16, 20, 16, 32},
        {"NCCL_MIN_CTAS=100", 16, 64, 64, 64},                      /* MAXCHANNELS */
        {"NCCL_NVLS_NCHANNELS=8,NCCL_MAX_CTAS=6", 16, 6, 6, 8},
        {"NCCL_NVLS_NCHANNELS=32", 4, 4, 32, 4},
        {"NCCL_MIN_CTAS=3", 4, 4, 16, 4},                          /* below the topology's: no change */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll_params q;
        env_params(&q, cases[i].base, cases[i].spec);
        CU_ASSERT_EQUAL(coll_run_channels(&q, cases[i].base), cases[i].run);
        CU_ASSERT_EQUAL(coll_nvls_channels(&q), cases[i].nvls);
        CU_ASSERT_EQUAL(coll_p2p_channels(&q), cases[i].p2p);
        if (coll_run_channels(&q, cases[i].base) != cases[i].run || coll_nvls_channels(&q) != cases[i].nvls ||
            coll_p2p_channels(&q) != cases[i].p2p)
            printf("\n  %s: run %d nvls %d p2p %d", cases[i].spec ? cases[i].spec : "(none)",
                   coll_run_channels(&q, cases[i].base), coll_nvls_channels(&q), coll_p2p_channels(&q));
        /* the tuner's per-channel ceiling keeps the graph's channels */
        CU_ASSERT_EQUAL(q.max_channels, cases[i].base);
    }
    /* a ring all-reduce of 8 channels' minimum on 16 ranks of 2 nodes */
    char err[TS_ERRLEN];
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    coll_topo *t = coll_topo_new(16, ids, 0);
    int a = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    coll_params q;
    env_params(&q, 16, NULL);
    int64_t bytes = (int64_t)(8 * q.chan_bytes[COLL_SIMPLE]);
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 16, 0, bytes, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    static const struct { const char *spec; double chans; } cut[] = {
        {NULL, 16}, {"NCCL_MAX_NCHANNELS=8", 8}, {"NCCL_MIN_CTAS=24", 24}, {"NCCL_MAX_CTAS=2", 2}};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        env_params(&q, 16, cut[i].spec);
        /* bytes / (threads x threshold) channels, each 1/16 of the links */
        double used = cut[i].chans < 8 ? cut[i].chans : 8;
        CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_scale_with(&p, &q), 16 / used, 1e-12);
    }
    coll_topo_free(t);
}

/* NCCL_ALGO, NCCL_PROTO and NCCL_NVLS_ENABLE as the library reads them
 * (src/graph/tuning.cc: a family or protocol left out gets no bandwidth, so
 * the tuner never picks it; NVLS off: neither NVLS nor NVLS-tree): the
 * selection over every size from 8 B to 1 GiB on one NVLS node and on two
 * keeps to what they allow, and one algorithm forces it as --algo does. */
static void test_nccl_env_selection(void)
{
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    int zeros[8] = {0};
    coll_topo *one = coll_topo_new(8, zeros, 1), *two = coll_topo_new(16, ids, 1);
    coll_hw h1 = {2e-6, 150e9, one, 0, 0}, h2 = {2e-6, 150e9, two, 5e-6, 50e9};
    static const struct { const char *spec; unsigned fams, protos; } cases[] = {
        {"NCCL_ALGO=Tree", 1u << COLL_FAM_TREE, 7},
        {"NCCL_ALGO=^Ring,NVLS", ~((1u << COLL_FAM_RING) | (1u << COLL_FAM_NVLS)), 7},
        {"NCCL_PROTO=LL128", ~0u, 1u << COLL_LL128},
        {"NCCL_PROTO=^LL", ~0u, (1u << COLL_LL128) | (1u << COLL_SIMPLE)},
        {"NCCL_NVLS_ENABLE=0", ~((1u << COLL_FAM_NVLS) | (1u << COLL_FAM_NVLSTREE)), 7},
    };
    int seen_nvls = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll_nccl_env e;
        char err[TS_ERRLEN];
        coll_nccl_env_init(&e);
        CU_ASSERT_EQUAL_FATAL(coll_nccl_env_parse(&e, cases[i].spec, "test", err, sizeof err), 0);
        coll_set_nccl_env(&e);
        for (int k = 0; k < 2; k++)
            for (int64_t b = 8; b <= ((int64_t)1 << 30); b *= 4) {
                coll_proto pr;
                int a = coll_select(OG_ALLREDUCE, k ? 16 : 8, b, k ? &h2 : &h1, &pr);
                CU_ASSERT_FATAL(a >= 0);
                unsigned f = 1u << coll_family_of(a);
                if (!(f & cases[i].fams) || !((1u << pr) & cases[i].protos))
                    printf("\n  %s: %lld B on %d node(s): %s:%s", cases[i].spec, (long long)b, k + 1,
                           coll_algo_get(a)->name, coll_proto_name(pr));
                CU_ASSERT(f & cases[i].fams);
                CU_ASSERT((1u << pr) & cases[i].protos);
            }
        char spec[96];
        int forced = coll_nccl_env_forced(&e, OG_ALLREDUCE, spec, sizeof spec);
        CU_ASSERT_EQUAL(forced, i == 0);
        if (i == 0) CU_ASSERT_STRING_EQUAL(spec, "tree");
        coll_set_nccl_env(NULL);
    }
    /* without settings the same sweep does choose NVLS on one node (what
     * NCCL_NVLS_ENABLE=0 took away) */
    for (int64_t b = 8; b <= ((int64_t)1 << 30); b *= 4) {
        coll_proto pr;
        seen_nvls |= coll_family_of(coll_select(OG_ALLREDUCE, 8, b, &h1, &pr)) == COLL_FAM_NVLS;
    }
    CU_ASSERT(seen_nvls);
    /* NCCL_ALGO=Ring with NCCL_PROTO=Simple forces ring:simple; broadcast's ring is the chain */
    coll_nccl_env e;
    char err[TS_ERRLEN], spec[96];
    coll_nccl_env_init(&e);
    CU_ASSERT_EQUAL(coll_nccl_env_parse(&e, "NCCL_ALGO=Ring,NCCL_PROTO=Simple", "test", err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_nccl_env_forced(&e, OG_ALLREDUCE, spec, sizeof spec), 1);
    CU_ASSERT_STRING_EQUAL(spec, "ring:simple");
    CU_ASSERT_EQUAL(coll_nccl_env_forced(&e, OG_BROADCAST, spec, sizeof spec), 1);
    CU_ASSERT_EQUAL(coll_family_of(coll_algo_find(strtok(spec, ":"), OG_BROADCAST, err, sizeof err)), COLL_FAM_RING);
    coll_topo_free(one);
    coll_topo_free(two);
}

/* The settings of a log reach compare's prediction: the shipped 2-node ring
 * log ran NCCL_MIN_CTAS=24; compare says so, and --nccl-env over it wins:
 * NCCL_MIN_CTAS=NCCL_MAX_CTAS=2 (2 of the topology's 16 channels' links) makes
 * its 1 MiB point slower. */
static void test_nccl_env_compare(void)
{
    const char *dir = "tests/data/accuracy", *log = "nccl_h100_2nodes_16gpu_all_reduce_ring_ib_issue309.txt";
    char cmd[512], out[16384];
    snprintf(cmd, sizeof cmd, "compare %s/%s --cluster dgx-h100-superpod --nodes 2 -b 1M -e 1M", dir, log);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "NCCL settings of the run (log, --nccl-env): NCCL_ALGO=ring NCCL_MIN_CTAS=24"));
    double p24, p2;
    CU_ASSERT_EQUAL_FATAL(compare_row_in(dir, log, "dgx-h100-superpod --nodes 2", "", NULL, "1M", NULL, &p24, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(compare_row_in(dir, log, "dgx-h100-superpod --nodes 2", "--nccl-env NCCL_MAX_CTAS=2,NCCL_MIN_CTAS=2",
                                         NULL, "1M", NULL, &p2, NULL), 0);
    CU_ASSERT(p2 > 1.2 * p24);
    /* channels added beyond the topology's 16 are more network connections
     * across nodes (branch h-netlat, test_net_channels): at 1 MiB each NIC's
     * proxy serves 3 channels a step instead of 2, 2 us each, on all 30 steps */
    double p16;
    CU_ASSERT_EQUAL_FATAL(compare_row_in(dir, log, "dgx-h100-superpod --nodes 2", "--nccl-env NCCL_MIN_CTAS=16", NULL,
                                         "1M", NULL, &p16, NULL), 0);
    CU_ASSERT_DOUBLE_EQUAL(p24 - p16, 30 * (3 - 2) * 2.0, 0.05);
}

/* NCCL's all-to-all (grouped send/recv) runs its rounds on channels side by
 * side: up to 8 rounds to one node delta share a channel's work batch, the
 * batches spread over the channels. The latency is one round per wave of
 * channels, not one per peer: 2 nodes of 4 on 4 channels, one NIC round; 64
 * nodes, 16; one node of 8 on 4 channels, two NVLink rounds. */
static void test_p2p_rounds(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 4;
    char err[TS_ERRLEN];
    int a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err);
    const int nodes[] = {2, 64, 1}, waves[] = {1, 16, 2};
    for (int i = 0; i < 3; i++) {
        int n = nodes[i] * (nodes[i] == 1 ? 8 : 4), ids[256];
        for (int r = 0; r < n; r++) ids[r] = nodes[i] == 1 ? 0 : r / 4;
        coll_topo *t = coll_topo_new(n, ids, 0);
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, n, 0, (int64_t)n * n * 64, NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        coll_tier tier = nodes[i] > 1 ? COLL_TIER_NIC : COLL_TIER_NVLINK;
        /* the preset names no GPU: no proxy chain (test_p2p_proxy) */
        CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q),
                               q.base_lat[COLL_FAM_P2P][COLL_SIMPLE] + waves[i] * q.hop_lat[tier][COLL_FAM_P2P][COLL_SIMPLE],
                               1e-12);
        coll_topo_free(t);
    }
}

/* The last CSV row of `trainsim coll` for one all-reduce size on `nodes`
 * Polaris nodes at analytical fidelity (the algorithm the selection took). */
static void polaris_all_reduce_row(const char *nodes, const char *size, char *last, size_t n)
{
    char cmd[512], out[8192], line[1024];
    const char *path = test_tmp("coll_row.csv");
    snprintf(cmd, sizeof cmd, "coll --cluster polaris --nodes %s --op all_reduce -b %s -e %s --fidelity analytical --csv %s",
             nodes, size, size, path);
    CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 0);
    last[0] = 0;
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    while (fgets(line, sizeof line, f)) snprintf(last, n, "%s", line);
    fclose(f);
    unlink(path);
}

/* One all-reduce size on `nodes` nodes of cluster (name or JSON path) at the
 * analytical fidelity: the selection's algorithm and the bus bandwidth. */
static int coll_row(const char *cluster, int nodes, const char *size, char *algo, size_t n, double *busbw)
{
    char cmd[1024], out[8192], line[1024], a[64];
    const char *path = test_tmp("coll_row2.csv");
    snprintf(cmd, sizeof cmd, "coll --cluster %s --nodes %d --op all_reduce -b %s -e %s --fidelity analytical --csv %s",
             cluster, nodes, size, size, path);
    if (test_cli(cmd, out, sizeof out) != 0) return -1;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int rc = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%lf,%63[^,]", busbw, a) == 2) {
            snprintf(algo, n, "%s", a);
            rc = 0;
        }
    fclose(f);
    unlink(path);
    return rc;
}

/* A DGX H100 SuperPOD whose switches aggregate (network.sharp: true, as a
 * run with NCCL's SHARP plugin and NCCL_COLLNET_ENABLE=1): on 16 nodes the
 * selection takes CollNet at 2 GiB, faster than the same cluster without
 * SHARP (where the ring's NICs carry 2 (M-1)/M S/L, CollNet's S/L up and
 * down), and no faster than its NICs allow (algbw <= 8 NICs x 50 GB/s x
 * bw_frac.nic 0.88); on 2 nodes NVLS-tree keeps it (NCCL's choice there). */
static void test_sharp_cluster(void)
{
    char algo[64], path[512];
    json_error_t je;
    json_t *c = json_load_file("configs/clusters/dgx-h100-superpod.json", 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    json_object_set_new(json_object_get(c, "network"), "sharp", json_true());
    json_object_set_new(c, "name", json_string("dgx-h100-sharp"));
    snprintf(path, sizeof path, "%s", test_tmp("dgx_sharp.json"));
    CU_ASSERT_EQUAL_FATAL(json_dump_file(c, path, 0), 0);
    json_decref(c);
    double sharp, plain;
    CU_ASSERT_EQUAL_FATAL(coll_row(path, 16, "2G", algo, sizeof algo, &sharp), 0);
    fprintf(stderr, "\n  16 DGX H100 nodes, 2 GiB: SHARP %s %.0f GB/s", algo, sharp);
    CU_ASSERT_STRING_EQUAL(algo, "collnet");
    CU_ASSERT_EQUAL_FATAL(coll_row("dgx-h100-superpod", 16, "2G", algo, sizeof algo, &plain), 0);
    fprintf(stderr, ", without %s %.0f GB/s", algo, plain);
    CU_ASSERT_STRING_NOT_EQUAL(algo, "collnet");
    CU_ASSERT(sharp > 1.1 * plain);
    int n = 128;
    CU_ASSERT(sharp / (2.0 * (n - 1) / n) <= 8 * 50 * 0.88 + 1e-9);
    CU_ASSERT_EQUAL_FATAL(coll_row(path, 2, "2G", algo, sizeof algo, &sharp), 0);
    CU_ASSERT_STRING_EQUAL(algo, "nvlstree");
    unlink(path);
}

/* GPUs sharing a NIC in the selection: past 2 nodes NCCL's tuner takes the
 * inter-node graph bandwidth, found with the NICs shared (tuning.cc: bw =
 * nNodes <= 2 ? bwIntra : bwInter). On Polaris (2 NICs for 4 GPUs) a ring's
 * four GPUs push through two NICs, a tree's two heads through one each: at
 * 1 GiB on 256 nodes the tree, as the log's 30 GB/s bus bandwidth says
 * NCCL ran (the ring takes 2,046 lock-step steps); on 2 nodes the ring. */
static void test_nic_sharing_selection(void)
{
    char err[TS_ERRLEN];
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("polaris", 2, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.coll.nic_gpus, 2);
    CU_ASSERT_EQUAL_FATAL(topo_load("dgx-h100-superpod", 2, &cl, err, sizeof err), 0);
    CU_ASSERT(cl.coll.nic_gpus <= 1);
    static const struct {
        const char *nodes, *algo;
    } want[] = {{"256", "tree"}, {"2", "ring"}};
    for (int i = 0; i < 2; i++) {
        char last[1024];
        polaris_all_reduce_row(want[i].nodes, "1G", last, sizeof last);
        char algo[64] = "";
        sscanf(last, "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%63[^,]", algo);
        fprintf(stderr, "\n  polaris %s nodes, 1 GiB all_reduce: %s", want[i].nodes, algo);
        CU_ASSERT_STRING_EQUAL(algo, want[i].algo);
    }
}

/* The library's version reaches the tuner: NCCL 2.20-2.21 priced a tree
 * Simple step at 28 us on every tier with no base (tuning.cc), which keeps
 * LL on the tree at 512 KiB-2 MiB on 256 Polaris nodes (NCCL 2.21.5; the
 * log's 0.7-1.0 ms there are LL's, Simple's ~3 ms); the preset's figures
 * (8.4 us base, 4 / 14 us steps) take Simple. The time's own figures do
 * not move. */
static void test_tuner_version(void)
{
    coll_params q, saved = *coll_params_get();
    coll_params_preset(&q, COLL_LIB_NCCL);
    char err[TS_ERRLEN];
    json_error_t je;
    json_t *o = json_loads("{\"version\": \"2.21.5\"}", 0, &je);
    CU_ASSERT_EQUAL_FATAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), 0);
    json_decref(o);
    CU_ASSERT_EQUAL(q.version, 22105);
    CU_ASSERT_DOUBLE_EQUAL(q.hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_SIMPLE], 14e-6, 1e-15);
    coll_params_set(&q);
    CU_ASSERT_DOUBLE_EQUAL(coll_params_tuner()->hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_SIMPLE], 28e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(coll_params_tuner()->base_lat[COLL_FAM_TREE][COLL_SIMPLE], 0, 1e-15);
    q.version = 22305; /* 2.23: back to the preset's */
    coll_params_set(&q);
    CU_ASSERT_DOUBLE_EQUAL(coll_params_tuner()->hop_lat[COLL_TIER_NIC][COLL_FAM_TREE][COLL_SIMPLE], 14e-6, 1e-15);
    coll_params_set(&saved);
    o = json_loads("{\"version\": 2.21}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'version' must be a string"));
    json_decref(o);
    o = json_loads("{\"version\": \"2.21x\"}", 0, &je); /* trailing text is not a version */
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "(got '2.21x')"));
    json_decref(o);
    /* the choice on 256 Polaris nodes (the cluster names NCCL 2.21.5) */
    char last[1024];
    polaris_all_reduce_row("256", "1M", last, sizeof last);
    CU_ASSERT_PTR_NOT_NULL(strstr(last, ",tree,ll,"));
}

/* A forced protocol the library does not run with that algorithm is refused
 * at the command (exit 2), not costed as if it ran. */
static void test_forced_protocol(void)
{
    char out[8192];
    CU_ASSERT_EQUAL(test_cli("coll --cluster dgx-h100-superpod --nodes 1 --op all_reduce -b 1M -e 1M --algo nvls:ll", out,
                             sizeof out), 2);
    CU_ASSERT_EQUAL(test_cli("coll --cluster polaris --nodes 2 --op all_reduce -b 1M -e 1M --algo ring:ll128", out,
                             sizeof out), 2);
    CU_ASSERT_EQUAL(test_cli("coll --cluster dgx-h100-superpod --nodes 1 --op all_reduce -b 1M -e 1M --algo nvls:simple",
                             out, sizeof out), 0);
    CU_ASSERT_EQUAL(test_cli("coll --cluster polaris --nodes 2 --op all_reduce -b 1M -e 1M --algo ring:ll", out, sizeof out),
                    0);
}

/* Routes of the fast-path test: NVLink inside a node, the NIC between nodes,
 * each with its latency (ctx: the members' node ids). */
static void node_route(void *ctx, int a, int b, double *lat, double *bw)
{
    const int *node = ctx;
    int intra = node[a] == node[b];
    *lat = intra ? 3e-6 : 3.3e-6;
    *bw = intra ? BI : BN;
}

/* The links variant of the fast-path test: inside a node, each pair of
 * members has a link of its own (a mesh: a quarter of BI, half where the
 * lower member is a multiple of 3, so that lone flows of one latency differ
 * in capacity), and a pair whose indices add up to 3 mod 4 also crosses its
 * node's hub (BI, shared by those pairs' flows) at twice the latency. */
static char mesh_link[64 * 64], hub_link[64];

static int mesh_links(void *ctx, int a, int b, int max, const void **ids, double *bw)
{
    const int *node = ctx;
    if (max < 2) return -1;
    int lo = a < b ? a : b, hi = a < b ? b : a;
    ids[0] = &mesh_link[lo * 64 + hi], bw[0] = lo % 3 ? BI / 4 : BI / 2;
    if ((a + b) % 4 != 3) return 1;
    ids[1] = &hub_link[node[a]], bw[1] = BI;
    return 2;
}

static void mesh_route(void *ctx, int a, int b, double *lat, double *bw)
{
    node_route(ctx, a, b, lat, bw);
    const int *node = ctx;
    if (node[a] == node[b] && (a + b) % 4 == 3) *lat *= 2;
}

/* coll_cost's one-pass pipelined path (memos of wire sizes and call tails,
 * the fluid model's arrays kept between calls) gives the figures of its
 * reference (three passes, a route cache, every call made): every algorithm
 * that fits, every collective, both libraries' parameters (and lock-step
 * rings, whose call tail reads each member's busy time), on uniform,
 * uneven and one-member-per-node placements and group sizes that grow and
 * shrink between calls (the kept arrays), with byte counts that do not
 * divide into equal chunks; and again with NIC pools (two members per NIC:
 * flows between nodes share them, a flow crosses four resources) and with
 * the links inside the nodes (mesh_links: lone flows and flows sharing a
 * hub, of two latencies). Equal bit for bit, hence within 1e-12. */
static void test_cost_fast_path(void)
{
    coll_params saved = *coll_params_get(), q;
    static const int shapes[][12] = {
        /* n, then node sizes (0 ends) */
        {16, 4, 4, 4, 4, 0},  {6, 1, 1, 1, 1, 1, 1, 0}, {16, 3, 5, 1, 7, 0},
        {64, 8, 8, 8, 8, 8, 8, 8, 8, 0}, {8, 8, 0}, {12, 2, 2, 2, 2, 2, 2, 0},
    };
    static const int64_t sizes[] = {8, 1000003, (64 << 20) + 24, (int64_t)1 << 30};
    const og_coll colls[] = {OG_ALLREDUCE, OG_ALLGATHER, OG_REDUCESCATTER, OG_BROADCAST, OG_REDUCE, OG_ALLTOALL};
    int compared = 0, bad = 0, skipped = 0;
    for (int lib = 0; lib <= COLL_NLIBS; lib++) { /* and NCCL with Slingshot's lock-step rings */
        coll_params_preset(&q, lib < COLL_NLIBS ? lib : COLL_LIB_NCCL);
        if (lib == COLL_NLIBS) q.ring_lockstep = 1, q.ring_overlap = 0.5;
        coll_params_set(&q);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int n = shapes[si][0], node[64], r = 0;
            for (int k = 1; shapes[si][k]; k++)
                for (int j = 0; j < shapes[si][k]; j++) node[r++] = k - 1;
            CU_ASSERT_EQUAL_FATAL(r, n);
            for (int var = 0; var < 4; var++) { /* nvls off, on; NIC pools; links and pools */
                int nvls = var == 1;
                coll_topo *t = coll_topo_new(n, node, nvls);
                coll_route_fn route = node_route;
                if (var >= 2) {
                    int nic[64];
                    for (int i = 0; i < n; i++) nic[i] = node[i] * 64 + t->local[i] / 2;
                    coll_topo_set_nics(t, nic, NULL);
                }
                if (var == 3) {
                    CU_ASSERT_EQUAL(coll_topo_set_links(t, mesh_links, node), shapes[si][1] > 1 || n == 16);
                    route = mesh_route;
                }
                for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
                    for (int a = 0; a < coll_nalgos(); a++) {
                        if (!(coll_algo_get(a)->colls & (1u << colls[ci]))) continue;
                        for (size_t bi = 0; bi < sizeof sizes / sizeof sizes[0]; bi++)
                            for (int pr = 0; pr < COLL_NPROTOS; pr++) {
                                coll_plan p;
                                char err[TS_ERRLEN];
                                if (coll_plan_init_topo(&p, colls[ci], n, n / 3, sizes[bi], NULL, a, t, err,
                                                        sizeof err) < 0) {
                                    skipped++;
                                    continue;
                                }
                                p.proto = pr;
                                coll_cost_fast(0);
                                double ref = coll_cost(&p, COLL_COST_PIPELINED, route, node);
                                coll_cost_fast(1);
                                double got = coll_cost(&p, COLL_COST_PIPELINED, route, node);
                                compared++;
                                if (!(got == ref && fabs(got - ref) <= 1e-12 * fabs(ref)) && bad++ < 5)
                                    fprintf(stderr, "\n  %s %s on %d (shape %zu, variant %d, %lld B, proto %d): %.17g, reference %.17g",
                                            coll_algo_get(a)->name, og_coll_name(colls[ci]), n, si, var,
                                            (long long)sizes[bi], pr, got, ref);
                            }
                    }
                coll_topo_free(t);
            }
        }
    }
    coll_cost_fast(1);
    coll_params_set(&saved);
    fprintf(stderr, "\n  %d plans compared (%d that do not fit skipped)", compared, skipped);
    CU_ASSERT(compared > 500);
    CU_ASSERT_EQUAL(bad, 0);
}

/* NCCL's per-channel bandwidth ceilings by GPU generation (tuning.cc
 * perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws, llMaxBws):
 * the cluster's GPU names the row, the graph's channels are half of
 * max_channels, LL's row across nodes is the CPU vendor's; none on one node,
 * for RCCL, a tuner of one's own or a GPU without a row. The selection
 * leaves LL128 sooner where the ceiling is below the links. */
static int largest_ll128(const coll_hw *hw, int n)
{
    char err[TS_ERRLEN];
    int last = -1;
    for (int k = 16; k <= 30; k++)
        if (coll_best_proto(OG_ALLREDUCE, n, (int64_t)1 << k, coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err), hw) ==
            COLL_LL128)
            last = k;
    return last;
}

static void test_nccl_bw_cap(void)
{
    char err[TS_ERRLEN];
    topo_cluster cl;
    static const struct {
        const char *cluster;
        coll_arch arch;
        int amd;
    } cls[] = {{"dgx-a100-superpod", COLL_ARCH_AMPERE, 1}, {"dgx-h100-superpod", COLL_ARCH_HOPPER, 0},
               {"polaris", COLL_ARCH_AMPERE, 1}, {"frontier", COLL_ARCH_NONE, 0}};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL_FATAL(topo_load(cls[i].cluster, 2, &cl, err, sizeof err), 0);
        CU_ASSERT_EQUAL(cl.coll.arch, cls[i].arch);
        CU_ASSERT_EQUAL(cl.coll.cpu_amd, cls[i].amd);
    }
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    json_error_t je;
    json_t *o = json_loads("{\"arch\": \"volta\", \"cpu\": \"amd\"}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), 0);
    CU_ASSERT(q.arch == COLL_ARCH_VOLTA && q.cpu_amd == 1);
    json_decref(o);
    o = json_loads("{\"arch\": \"blackwell\"}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'arch' must be"));
    json_decref(o);
    o = json_loads("{\"cpu\": \"arm\"}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&q, o, "x.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'cpu' must be"));
    json_decref(o);
    q.max_channels = 16; /* 8 graph channels */
    int ids[32];
    for (int r = 0; r < 32; r++) ids[r] = r / 8;
    coll_topo *t4 = coll_topo_new(32, ids, 0), *t2 = coll_topo_new(16, ids, 0), *t1 = coll_topo_new(8, ids, 0);
    int ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err), tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err);
    static const struct {
        coll_arch arch;
        int amd, algo_tree, nodes;
        coll_proto proto;
        double gbs; /* the ceiling, GB/s */
    } c[] = {
        {COLL_ARCH_AMPERE, 0, 0, 4, COLL_LL128, 8 * 20.0},  {COLL_ARCH_HOPPER, 0, 0, 4, COLL_LL128, 8 * 36.7},
        {COLL_ARCH_VOLTA, 0, 0, 2, COLL_LL128, 8 * 20.0},   {COLL_ARCH_AMPERE, 0, 1, 4, COLL_SIMPLE, 8 * 17.8},
        {COLL_ARCH_HOPPER, 0, 1, 4, COLL_SIMPLE, 8 * 36.0}, {COLL_ARCH_AMPERE, 0, 1, 2, COLL_SIMPLE, 8 * 23.6},
        {COLL_ARCH_HOPPER, 0, 1, 2, COLL_SIMPLE, 8 * 41.4}, {COLL_ARCH_HOPPER, 0, 1, 4, COLL_LL128, 8 * 29.0},
        {COLL_ARCH_AMPERE, 0, 1, 4, COLL_LL128, 8 * 17.8 * 120.0 / 128.0},
        {COLL_ARCH_HOPPER, 0, 0, 2, COLL_LL, 39.0},         {COLL_ARCH_HOPPER, 1, 0, 2, COLL_LL, 22.5},
        {COLL_ARCH_AMPERE, 0, 0, 4, COLL_LL, 20.4},         {COLL_ARCH_AMPERE, 1, 0, 4, COLL_LL, 19.0},
        {COLL_ARCH_AMPERE, 1, 1, 4, COLL_LL, 19.0},         {COLL_ARCH_VOLTA, 0, 1, 2, COLL_LL, 8 * 18.5 / 3.8},
        {COLL_ARCH_HOPPER, 0, 0, 4, COLL_SIMPLE, 0},
        {COLL_ARCH_HOPPER, 0, 0, 1, COLL_LL128, 0},         {COLL_ARCH_NONE, 0, 0, 4, COLL_LL128, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        q.arch = c[i].arch;
        q.cpu_amd = c[i].amd;
        coll_topo *t = c[i].nodes == 4 ? t4 : c[i].nodes == 2 ? t2 : t1;
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 8 * c[i].nodes, 0, (int64_t)1 << 24, NULL,
                                                  c[i].algo_tree ? tree : ring, t, err, sizeof err), 0);
        p.proto = c[i].proto;
        CU_ASSERT_DOUBLE_EQUAL(coll_nccl_bw_cap(&p, &q), c[i].gbs * 1e9, 1e-3);
        if (i == 0) {
            coll_params r = q;
            r.lib = COLL_LIB_RCCL;
            CU_ASSERT_DOUBLE_EQUAL(coll_nccl_bw_cap(&p, &r), 0, 0);
            r = q;
            r.tuner_own = 1;
            CU_ASSERT_DOUBLE_EQUAL(coll_nccl_bw_cap(&p, &r), 0, 0);
            /* bus bytes: 2 (n - 1) / n of the buffer on the ring */
            CU_ASSERT_DOUBLE_EQUAL(coll_nccl_bus_bytes(&p), 2.0 * 31 / 32 * (1 << 24), 1e-6);
        }
    }
    /* the selection: 2 nodes whose links beat 8 x 20 GB/s: LL128 ends sooner
     * on Ampere than without a row, and Hopper's ceiling (8 x 36.7) sits in between */
    coll_hw hw = {1e-6, 300e9, t2, 3e-6, 400e9};
    int k[3];
    coll_arch rows[3] = {COLL_ARCH_NONE, COLL_ARCH_HOPPER, COLL_ARCH_AMPERE};
    for (int i = 0; i < 3; i++) {
        q.arch = rows[i];
        q.cpu_amd = 0;
        coll_params_set(&q);
        k[i] = largest_ll128(&hw, 16);
        fprintf(stderr, "\n  2 x 8 ranks, %s: ring LL128 up to 2^%d B", coll_arch_name(rows[i]), k[i]);
    }
    CU_ASSERT(k[0] >= 16);
    CU_ASSERT(k[2] < k[0]);
    CU_ASSERT(k[1] >= k[2] && k[1] <= k[0]);
    coll_params_set(&saved);
    coll_topo_free(t4);
    coll_topo_free(t2);
    coll_topo_free(t1);
}

/* NCCL's tuner on 2 DGX A100 nodes (Ampere, AMD hosts, 16 channels: 8 in
 * the graph). On up to 2 nodes it prices the tree at its graph's bwIntra
 * (tuning.cc ncclTopoTuneModel: bw = nNodes <= 2 ? bwIntra : bwInter): the
 * NICs do not bound it, the per-channel ceiling perChMaxTreeBws (8 x 23.6
 * GB/s bus) does. So at 8 GiB the tree Simple on 2 nodes, whatever the NICs
 * (halved, the tree's time does not move, the ring's does); on 4 nodes the
 * same links give the ring (the tree at its NICs); and with half the graph
 * channels the ceiling (4 x 23.6) puts the 2-node choice back on the ring.
 * At 2 MiB the tree LL128 (NCCL's 48.5 us of latency against the ring's 30
 * steps). */
static int select_on(const coll_hw *hw, int n, int64_t bytes, coll_proto *pr)
{
    return coll_select(OG_ALLREDUCE, n, bytes, hw, pr);
}

/* NCCL's figures on a DGX A100 (Ampere, AMD host, 16 channels), the 2-node
 * tests' setting */
static coll_params ampere_nccl(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.arch = COLL_ARCH_AMPERE;
    q.cpu_amd = 1;
    q.max_channels = 16;
    return q;
}

static void test_tree_two_nodes_selection(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get(), q = ampere_nccl();
    coll_params_set(&q);
    int ids[32];
    for (int r = 0; r < 32; r++) ids[r] = r / 8;
    coll_topo *t2 = coll_topo_new(16, ids, 0), *t4 = coll_topo_new(32, ids, 0);
    int tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err), ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    const int64_t big = (int64_t)8 << 30;
    coll_proto pr;
    /* NVLink 300 GB/s x 0.8, NICs 25 GB/s x 0.88 (dgx-a100-superpod) */
    coll_hw hw2 = {0.7e-6, 240e9, t2, 3.6e-6, 22e9}, hw4 = hw2, slow = hw2;
    hw4.topo = t4;
    slow.inter_bw = 11e9;
    int a = select_on(&hw2, 16, big, &pr);
    fprintf(stderr, "\n  2 DGX A100 nodes, 8 GiB: %s:%s", coll_algo_get(a)->name, coll_proto_name(pr));
    CU_ASSERT_EQUAL(a, tree);
    CU_ASSERT_EQUAL(pr, COLL_SIMPLE);
    CU_ASSERT_EQUAL(select_on(&slow, 16, big, &pr), tree);
    a = select_on(&hw4, 32, big, &pr);
    fprintf(stderr, "; 4 nodes: %s:%s", coll_algo_get(a)->name, coll_proto_name(pr));
    CU_ASSERT_EQUAL(a, ring);
    q.max_channels = 8;
    coll_params_set(&q);
    a = select_on(&hw2, 16, big, &pr);
    fprintf(stderr, "; 2 nodes, 4 graph channels: %s:%s", coll_algo_get(a)->name, coll_proto_name(pr));
    CU_ASSERT_EQUAL(a, ring);
    q.max_channels = 16;
    coll_params_set(&q);
    a = select_on(&hw2, 16, (int64_t)2 << 20, &pr);
    fprintf(stderr, "; 2 nodes, 2 MiB: %s:%s", coll_algo_get(a)->name, coll_proto_name(pr));
    CU_ASSERT_EQUAL(a, tree);
    CU_ASSERT_EQUAL(pr, COLL_LL128);
    coll_params_set(&saved);
    coll_topo_free(t2);
    coll_topo_free(t4);
}

/* NCCL's tree LL128 across nodes runs at its kernel's rate, not its links':
 * the call takes at least the bus bytes (2 S) at the tuner's ceiling (8
 * graph channels x 20 GB/s on Ampere) times treeCorrectionFactor (0.9 at 8
 * MiB), 116.5 us at 8 MiB; the pipelined tail adds what the transfers leave
 * of it, and nothing once they take longer. Simple, the ring and one node
 * have no such floor. */
static void test_tree_ll128_floor(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get(), q = ampere_nccl();
    coll_params_set(&q);
    int ids[16];
    for (int r = 0; r < 16; r++) ids[r] = r / 8;
    coll_topo *t2 = coll_topo_new(16, ids, 0), *t1 = coll_topo_new(8, ids, 0);
    int tree = coll_algo_find("tree", OG_ALLREDUCE, err, sizeof err), ring = coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err);
    const int64_t S = (int64_t)8 << 20;
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 16, 0, S, NULL, tree, t2, err, sizeof err), 0);
    p.proto = COLL_LL128;
    double want = 2.0 * S / (8 * 20e9 * 0.9);
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_ll128_floor(&p, &q), want, 1e-12);
    fprintf(stderr, "\n  tree LL128 on 2 DGX A100 nodes, 8 MiB: at least %.1f us", want * 1e6);
    double none = coll_call_tail(&p, 3e-6, 0.7e-6, 0, want * 2), half = coll_call_tail(&p, 3e-6, 0.7e-6, 0, want / 2);
    CU_ASSERT_DOUBLE_EQUAL(half - none, want / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 3e-6, 0.7e-6, 0, want * 3), none, 1e-15);
    p.proto = COLL_SIMPLE;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_ll128_floor(&p, &q), 0, 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 16, 0, S, NULL, ring, t2, err, sizeof err), 0);
    p.proto = COLL_LL128;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_ll128_floor(&p, &q), 0, 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 8, 0, S, NULL, tree, t1, err, sizeof err), 0);
    p.proto = COLL_LL128;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_ll128_floor(&p, &q), 0, 0);
    coll_params_set(&saved);
    coll_topo_free(t2);
    coll_topo_free(t1);
}

/* A grouped all-to-all across nodes is two chains: the GPU's waves of
 * rounds, and each GPU's one proxy thread, which posts a send and a receive
 * for every peer on another node (NCCL's network post overhead, tuning.cc
 * getNetOverhead: 1 us Intel, 2 us AMD, x 3 for Simple), flushes each
 * received message on GPUs before Hopper (msg_flush), copies a message of
 * at most inject_bytes out of GPU memory (inject_copy), and then waits for
 * the last message's network step. 8 nodes of 4: 28 remote peers. */
static void test_p2p_proxy(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 16;
    int ids[32];
    for (int r = 0; r < 32; r++) ids[r] = r / 4; /* 8 nodes of 4 */
    coll_topo *t8 = coll_topo_new(32, ids, 0), *t1 = coll_topo_new(4, ids, 0);
    int a2a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err); /* NCCL's grouped send/recv */
    CU_ASSERT_FATAL(a2a >= 0);
    CU_ASSERT_EQUAL_FATAL(coll_family_of(a2a), COLL_FAM_P2P);
    /* 4096, 6144 and 8192 B on 32 ranks: 128, 192 and 256 B per peer */
    coll_plan p, p192, p256, p1;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, 32, 0, 4096, NULL, a2a, t8, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p192, OG_ALLTOALL, 32, 0, 6144, NULL, a2a, t8, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p256, OG_ALLTOALL, 32, 0, 8192, NULL, a2a, t8, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p1, OG_ALLTOALL, 4, 0, 4096, NULL, a2a, t1, err, sizeof err), 0);
    double base = q.base_lat[COLL_FAM_P2P][COLL_SIMPLE], hop = 1e-6;
    q.hop_lat[COLL_TIER_NIC][COLL_FAM_P2P][COLL_SIMPLE] = hop; /* one wave (8 node groups on 16 channels) */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, hop, 1e-12); /* no GPU named: no proxy */
    q.arch = COLL_ARCH_AMPERE;
    q.cpu_amd = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, 28 * 6e-6 + hop, 1e-12);
    q.cpu_amd = 0;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, 28 * 3e-6 + hop, 1e-12);
    /* the flush: per remote peer before Hopper, none on Hopper */
    q.msg_flush = 3.2e-6;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, 28 * (3e-6 + 3.2e-6) + hop, 1e-12);
    q.arch = COLL_ARCH_HOPPER;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, 28 * 3e-6 + hop, 1e-12);
    q.arch = COLL_ARCH_AMPERE;
    /* the inline send's copy: up to inject_bytes per peer, not above */
    q.inject_bytes = 192, q.inject_copy = 12e-6;
    double small = coll_call_latency_with(&p, &q), at = coll_call_latency_with(&p192, &q);
    double big = coll_call_latency_with(&p256, &q);
    CU_ASSERT_DOUBLE_EQUAL(small - base, 28 * (3e-6 + 3.2e-6 + 12e-6) + hop, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(at, small, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(small - big, 28 * 12e-6, 1e-12);
    /* the waves' own chain above the proxy's: theirs (1 channel: 8 waves) */
    q.max_channels = 1;
    q.hop_lat[COLL_TIER_NIC][COLL_FAM_P2P][COLL_SIMPLE] = 100e-6;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p256, &q) - base, 8 * 100e-6, 1e-12);
    q.max_channels = 16;
    q.hop_lat[COLL_TIER_NIC][COLL_FAM_P2P][COLL_SIMPLE] = hop;
    /* one node: no network posts; RCCL and a tuner of one's own: none */
    CU_ASSERT(coll_call_latency_with(&p1, &q) - base < 28 * 3e-6);
    q.tuner_own = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &q) - base, hop, 1e-12);
    q.tuner_own = 0;
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    r.arch = COLL_ARCH_AMPERE, r.msg_flush = 3.2e-6, r.inject_bytes = 192, r.inject_copy = 12e-6;
    r.max_channels = 16;
    r.hop_lat[COLL_TIER_NIC][COLL_FAM_P2P][COLL_SIMPLE] = hop;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p, &r) - r.base_lat[COLL_FAM_P2P][COLL_SIMPLE], hop, 1e-12);
    /* the JSON overlay reads net_msg and refuses an unknown field */
    json_error_t je;
    json_t *o = json_loads("{\"net_msg\": {\"flush\": 3.2e-6, \"inject_bytes\": 192, \"inject_copy\": 12e-6}}", 0, &je);
    coll_params z;
    coll_params_preset(&z, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&z, o, "t.json", err, sizeof err), 0);
    CU_ASSERT(z.msg_flush == 3.2e-6 && z.inject_bytes == 192 && z.inject_copy == 12e-6);
    json_decref(o);
    o = json_loads("{\"net_msg\": {\"copy\": 1e-6}}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&z, o, "t.json", err, sizeof err), -1);
    CU_ASSERT(strstr(err, "t.json") && strstr(err, "copy"));
    json_decref(o);
    coll_params_set(&saved);
    coll_topo_free(t8);
    coll_topo_free(t1);
}

/* PXN on NVLink nodes with a grouping plugin (NCCL's IB: maxRecvs 8): the
 * receives from one remote node are one irecv and one flush per step, the
 * sends stay one per remote peer. 2 nodes of 8 (16 ranks), 8 nodes of 8. */
static void test_p2p_recv_groups(void)
{
    char err[TS_ERRLEN];
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 16, q.arch = COLL_ARCH_AMPERE, q.cpu_amd = 1;
    int ids[64];
    for (int r = 0; r < 64; r++) ids[r] = r / 8;
    coll_topo *t2 = coll_topo_new(16, ids, 0), *t8 = coll_topo_new(64, ids, 0);
    int a2a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err);
    CU_ASSERT_FATAL(a2a >= 0);
    coll_plan p2, p8; /* 1 KiB a peer */
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p2, OG_ALLTOALL, 16, 0, 16384, NULL, a2a, t2, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p8, OG_ALLTOALL, 64, 0, 65536, NULL, a2a, t8, err, sizeof err), 0);
    double base = q.base_lat[COLL_FAM_P2P][COLL_SIMPLE], hop = q.hop_lat[COLL_TIER_NIC][COLL_FAM_P2P][COLL_SIMPLE];
    q.msg_flush = 3.2e-6;
    /* no grouping (the preset, as aws-ofi-nccl): 8 remote peers x (6 + 3.2) */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q) - base, 8 * (6e-6 + 3.2e-6) + hop, 1e-12);
    /* maxRecvs 8: 8 sends of 3 us, one receive of 3 + 3.2 */
    q.msg_max_recvs = 8;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q) - base, 8 * 3e-6 + (3e-6 + 3.2e-6) + hop, 1e-12);
    /* 8 nodes: 56 sends, one receive per remote node */
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p8, &q) - base, 56 * 3e-6 + 7 * (3e-6 + 3.2e-6) + hop, 1e-12);
    /* groups of at most maxRecvs: 4 -> two a remote node */
    q.msg_max_recvs = 4;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q) - base, 8 * 3e-6 + 2 * (3e-6 + 3.2e-6) + hop, 1e-12);
    /* no PXN off NVLink nodes: every receive its own */
    q.intra_tier = COLL_TIER_PCIE;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q) - base, 8 * (6e-6 + 3.2e-6) + hop, 1e-12);
    q.intra_tier = COLL_TIER_NVLINK;
    /* Hopper: no flush; the cluster JSON reads max_recvs and bounds it */
    q.msg_max_recvs = 8, q.arch = COLL_ARCH_HOPPER;
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q) - base, 9 * 3e-6 + hop, 1e-12);
    json_error_t je;
    json_t *o = json_loads("{\"net_msg\": {\"max_recvs\": 8}}", 0, &je);
    coll_params z;
    coll_params_preset(&z, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_params_overlay(&z, o, "t.json", err, sizeof err), 0);
    CU_ASSERT(z.msg_max_recvs == 8);
    json_decref(o);
    o = json_loads("{\"net_msg\": {\"max_recvs\": 100}}", 0, &je);
    CU_ASSERT_EQUAL(coll_params_overlay(&z, o, "t.json", err, sizeof err), -1);
    CU_ASSERT(strstr(err, "max_recvs") != NULL);
    json_decref(o);
    /* dgx-a100-superpod (NCCL's IB plugin) groups; polaris (aws-ofi-nccl) does not */
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("dgx-a100-superpod", 2, &cl, err, sizeof err), 0);
    CU_ASSERT(cl.coll.msg_max_recvs == 8);
    CU_ASSERT_EQUAL_FATAL(topo_load("polaris", 2, &cl, err, sizeof err), 0);
    CU_ASSERT(cl.coll.msg_max_recvs == 0);
    coll_topo_free(t2);
    coll_topo_free(t8);
}

/* NCCL's parts of a peer across nodes and the kernel floor of its channels:
 * 2 nodes of 8 on 16 p2p channels, one part up to 128 KiB a peer, two
 * above; 10 GB/s a channel on A100 (20 / 2), 10.3 on H100. */
static void test_p2p_kernel_floor(void)
{
    char err[TS_ERRLEN];
    coll_params saved = *coll_params_get(), q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.max_channels = 16, q.arch = COLL_ARCH_AMPERE;
    int ids[32];
    for (int r = 0; r < 32; r++) ids[r] = r / 8;
    int id4[32];
    for (int r = 0; r < 32; r++) id4[r] = r / 4;
    coll_topo *t2 = coll_topo_new(16, ids, 0), *t1 = coll_topo_new(8, ids, 0), *t84 = coll_topo_new(32, id4, 0);
    int a2a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err);
    CU_ASSERT_FATAL(a2a >= 0);
    const int64_t S[] = {16384, 1 << 20, 2 << 20, (2 << 20) + 16, 4 << 20, 1LL << 30};
    const int parts[] = {1, 1, 1, 2, 2, 2};
    for (int i = 0; i < 6; i++) {
        coll_plan p;
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, 16, 0, S[i], NULL, a2a, t2, err, sizeof err), 0);
        CU_ASSERT_EQUAL(coll_p2p_parts(&p, &q), parts[i]);
        /* the 8 remote peers' bytes through parts channels at 10 GB/s */
        double remote = (double)S[i] / 16 * 8;
        CU_ASSERT_DOUBLE_EQUAL(coll_p2p_kernel_floor(&p, &q), remote / (parts[i] * 10e9), 1e-12);
    }
    coll_plan p;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, 16, 0, 4 << 20, NULL, a2a, t2, err, sizeof err), 0);
    q.arch = COLL_ARCH_HOPPER;
    CU_ASSERT_DOUBLE_EQUAL(coll_p2p_kernel_floor(&p, &q), 2097152.0 / (2 * 10.3e9), 1e-12);
    /* the tail adds what the transfers leave of it */
    coll_params_set(&q);
    double kern = coll_p2p_kernel_floor(&p, &q);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 0, 0, 0, 0) - coll_call_tail(&p, 0, 0, 0, kern), kern, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p, 0, 0, 0, kern) - coll_call_tail(&p, 0, 0, 0, 2 * kern), 0, 1e-12);
    coll_params_set(&saved);
    q.arch = COLL_ARCH_AMPERE;
    /* 8 nodes of 4 on 4 p2p channels (Polaris): a peer takes 1 channel (2 x 32
     * ranks > 4 x 4), 7 remote nodes' batches on at most the 4 channels */
    q.max_channels = 4;
    coll_plan p84;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p84, OG_ALLTOALL, 32, 0, 1LL << 30, NULL, a2a, t84, err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_p2p_parts(&p84, &q), 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_p2p_kernel_floor(&p84, &q), (double)(1LL << 30) / 32 * 28 / (4 * 10e9), 1e-12);
    /* one node, RCCL, a platform naming no GPU: none */
    coll_plan p1;
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p1, OG_ALLTOALL, 8, 0, 1 << 20, NULL, a2a, t1, err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_p2p_parts(&p1, &q), 0);
    CU_ASSERT_EQUAL(coll_p2p_kernel_floor(&p1, &q), 0);
    q.arch = COLL_ARCH_NONE;
    CU_ASSERT_EQUAL(coll_p2p_kernel_floor(&p84, &q), 0);
    coll_params r;
    coll_params_preset(&r, COLL_LIB_RCCL);
    r.arch = COLL_ARCH_AMPERE, r.max_channels = 4;
    CU_ASSERT_EQUAL(coll_p2p_kernel_floor(&p84, &r), 0);
    coll_topo_free(t2);
    coll_topo_free(t1);
    coll_topo_free(t84);
}

/* The shipped Polaris all-to-all sweeps step down where a peer's message
 * leaves libfabric CXI's inline sends (192 B): 106 -> 62 us on 2 nodes
 * between 128 and 256 B per peer (1 and 2 KiB), 630 -> 289 us on 8 nodes
 * (4 and 8 KiB). The model, uncalibrated, within 10% on both sides. */
static void test_p2p_inject_step(void)
{
    static const struct {
        const char *dir, *log, *extra, *below, *above;
    } logs[] = {
        {NCCL_DIR, "nccl_polaris_a100_2nodes_8gpu_alltoall_alcf.txt", "", "1024", "2048"},
        {"tests/data/accuracy", "nccl_polaris_a100_8nodes_32gpu_alltoall_alcf.txt", "--nodes 8 --gpus 32", "4096", "8192"},
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        if (access(logs[i].dir, R_OK) != 0) {
            printf("\n  (skipped: %s absent)", logs[i].dir);
            continue;
        }
        const char *sizes[2] = {logs[i].below, logs[i].above};
        for (int k = 0; k < 2; k++) {
            double e = 1e9;
            CU_ASSERT_EQUAL(compare_error_in(logs[i].dir, logs[i].log, "polaris", logs[i].extra, NULL, sizes[k], &e), 0);
            CU_ASSERT(fabs(e) <= 10);
        }
    }
}


/* The analytical network of a loaded cluster, as `run` and `search` set it. */
static void cluster_an_net(const topo_cluster *cl, an_net *net)
{
    an_net_default("H100", net);
    topo_an_figures(cl, &net->gpus_per_node, &net->intra_bw, &net->intra_lat, &net->inter_bw, &net->inter_lat);
    net->nvls = cl->node.nvls;
    net->nic_gpus = cl->coll.nic_gpus;
}

/* GPUs that share a NIC share its bandwidth at the analytical level as on
 * the platform (the pipelined level, which the collective accuracy rows
 * check against nccl-tests and rccl-tests): on every shipped cluster of
 * several GPUs per node, 4 nodes (one switch: the fabric's own contention,
 * which the endpoint model does not see, stays out), 512 MiB, rings, the
 * tree, all-to-all and the broadcast chain agree within 3%, by `coll
 * --fidelity analytical` (the platform's routes and hosts' NICs) and by the
 * training path's network figures (an_sched_time_nodes, the library's
 * choice). Before, the analytical level gave every GPU its own NIC:
 * Polaris' rings (4 A100, 2 NICs) and Frontier's (8 GCDs, 4 NICs) came out
 * 2x and 1.5x the pipelined bus bandwidth, and the training path (each GPU
 * at its share of its NIC) took a broadcast across nodes at half. */
static void test_analytical_nics(void)
{
    static const char *clusters[] = {"polaris", "frontier", "perlmutter", "dgx-a100-superpod", "dgx-h100-superpod",
                                     "jean-zay-a100"};
    static const struct {
        og_coll op;
        const char *algo;
    } calls[] = {{OG_ALLREDUCE, "ring"}, {OG_ALLREDUCE, "tree"}, {OG_ALLGATHER, NULL}, {OG_REDUCESCATTER, NULL},
                 {OG_ALLTOALL, NULL},    {OG_BROADCAST, NULL}};
    const int nodes = 4;
    const int64_t size = (int64_t)512 << 20;
    coll_params saved = *coll_params_get();
    for (size_t c = 0; c < sizeof clusters / sizeof clusters[0]; c++) {
        char err[TS_ERRLEN];
        topo_cluster cl;
        CU_ASSERT_EQUAL_FATAL(topo_load(clusters[c], nodes, &cl, err, sizeof err), 0);
        int n = nodes * cl.node.gpus;
        an_net net;
        cluster_an_net(&cl, &net);
        int *node = ts_malloc(n * sizeof *node);
        for (int i = 0; i < n; i++) node[i] = i / cl.node.gpus;
        for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
            double t[2];
            val_child_out o;
            for (int f = 0; f < 2; f++)
                CU_ASSERT_EQUAL_FATAL(val_sweep_child(clusters[c], nodes, NULL, 0, NULL, calls[k].op, n, calls[k].algo,
                                                      f ? VAL_FID_ANALYTICAL : VAL_FID_PIPELINED, &size, 1, &t[f], &o,
                                                      err, sizeof err),
                                      0);
            fprintf(stderr, "\n  %s %d nodes %s%s%s: pipelined %.4g s, analytical %.4g s (%+.1f%%)", clusters[c], nodes,
                    og_coll_name(calls[k].op), calls[k].algo ? ":" : "", calls[k].algo ? calls[k].algo : "", t[0],
                    t[1], 100 * (t[1] / t[0] - 1));
            CU_ASSERT(fabs(t[1] / t[0] - 1) < 0.03);
            if (calls[k].algo) continue;
            /* the training path: the cluster's figures, the library's choice */
            coll_params_set(&cl.coll);
            double tt = an_sched_time_nodes(&net, n, node, calls[k].op, size);
            coll_params_set(&saved);
            fprintf(stderr, "; training path %.4g s (%+.1f%%)", tt, 100 * (tt / t[0] - 1));
            CU_ASSERT(fabs(tt / t[0] - 1) < 0.03);
        }
        free(node);
    }
}

/* The links inside a node at the analytical level, as on the platform: a
 * mesh's GPU pairs each have their own links (Perlmutter: 4 NVLink3 links
 * per A100 pair) and an uneven fabric's routes their own widths and shared
 * hops (Frontier's Infinity Fabric, 1 to 4 links a pair, 2-hop routes).
 * The one-node all-to-all (every GPU sends to every other at once) and the
 * 2-node all-reduce tree (its rotated chains send to both neighbours) agree
 * with the pipelined level within 3%. Before, a GPU had one link of its
 * route's bandwidth for all its peers, and shares were not weighted by
 * route latency as SimGrid's CM02 weighs them: Perlmutter's all-to-all 2.9x
 * and its tree +13%, Frontier's all-to-all -24% and its tree -11%. */
/* coll_links_fn of members i on GPU i mod the node's GPUs (ctx: topo_gpu_links). */
static int gpu_of_member(void *ctx, int a, int b, int max, const void **ids, double *bw)
{
    topo_gpu_links *G = ctx;
    return G->links.fn(G->links.ctx, a % G->gpus, b % G->gpus, max, ids, bw);
}

static void test_analytical_mesh(void)
{
    static const struct {
        const char *cluster;
        int nodes;
        og_coll op;
        const char *algo;
    } calls[] = {{"perlmutter", 1, OG_ALLTOALL, NULL},      {"frontier", 1, OG_ALLTOALL, NULL},
                 {"perlmutter", 2, OG_ALLREDUCE, "tree"},   {"frontier", 2, OG_ALLREDUCE, "tree"},
                 {"polaris", 1, OG_ALLTOALL, NULL},         {"frontier", 1, OG_ALLREDUCE, "ring"},
                 {"dgx-a100-superpod", 2, OG_ALLREDUCE, "tree"}};
    const int64_t size = (int64_t)64 << 20;
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        char err[TS_ERRLEN];
        topo_cluster cl;
        CU_ASSERT_EQUAL_FATAL(topo_load(calls[k].cluster, calls[k].nodes, &cl, err, sizeof err), 0);
        int n = calls[k].nodes * cl.node.gpus;
        double t[2];
        val_child_out o;
        for (int f = 0; f < 2; f++)
            CU_ASSERT_EQUAL_FATAL(val_sweep_child(calls[k].cluster, calls[k].nodes, NULL, 0, NULL, calls[k].op, n,
                                                  calls[k].algo, f ? VAL_FID_ANALYTICAL : VAL_FID_PIPELINED, &size, 1,
                                                  &t[f], &o, err, sizeof err),
                                  0);
        fprintf(stderr, "\n  %s %d node(s) %s%s%s: pipelined %.4g s, analytical %.4g s (%+.1f%%)", calls[k].cluster,
                calls[k].nodes, og_coll_name(calls[k].op), calls[k].algo ? ":" : "",
                calls[k].algo ? calls[k].algo : "", t[0], t[1], 100 * (t[1] / t[0] - 1));
        CU_ASSERT(fabs(t[1] / t[0] - 1) < 0.03);
        if (calls[k].algo) continue;
        /* the training path with the node's links by GPU (an_net.gpu_links),
         * the library's choice: within 3% too (one link per GPU before) */
        an_net net;
        cluster_an_net(&cl, &net);
        topo_gpu_links gl;
        topo_gpu_links_init(&gl, &cl);
        CU_ASSERT_PTR_NOT_NULL(gl.links.fn);
        int *node = ts_malloc(2 * (size_t)n * sizeof *node), *gpu = node + n;
        for (int i = 0; i < n; i++) node[i] = i / cl.node.gpus, gpu[i] = i % cl.node.gpus;
        coll_params saved = *coll_params_get();
        coll_params_set(&cl.coll);
        double one = an_sched_time_gpus(&net, n, node, gpu, calls[k].op, size);
        net.gpu_links = &gl.links;
        double tt = an_sched_time_gpus(&net, n, node, gpu, calls[k].op, size);
        coll_params_set(&saved);
        fprintf(stderr, "; training path %.4g s (%+.1f%%; one link per GPU %+.1f%%)", tt, 100 * (tt / t[0] - 1),
                100 * (one / t[0] - 1));
        CU_ASSERT(fabs(tt / t[0] - 1) < 0.03);
        free(node);
        /* 3 nodes whose members are the same GPUs: copying the previous
         * node's routes (coll_topo_set_links_by) gives the very tables of
         * asking every route */
        int m = 3 * cl.node.gpus, *ids = ts_malloc(2 * (size_t)m * sizeof *ids), *g = ids + m;
        for (int i = 0; i < m; i++) ids[i] = i / cl.node.gpus, g[i] = i % cl.node.gpus;
        coll_topo *ta = coll_topo_new(m, ids, 0), *tb = coll_topo_new(m, ids, 0);
        CU_ASSERT_EQUAL(coll_topo_set_links(ta, gpu_of_member, &gl), 1);
        CU_ASSERT_EQUAL(coll_topo_set_links_by(tb, gpu_of_member, &gl, g), 1);
        CU_ASSERT_EQUAL_FATAL(ta->nlinks, tb->nlinks);
        CU_ASSERT(memcmp(ta->link_bw, tb->link_bw, ta->nlinks * sizeof *ta->link_bw) == 0);
        /* every route's links, the table's entries plus the node's offset */
        int same = 1, shared = 0;
        for (int k = 0; k < 3; k++) {
            shared += tb->pair_off[k] != ta->pair_off[k];
            for (int x = 0; x < cl.node.gpus * cl.node.gpus * COLL_ROUTE_HOPS; x++) {
                int a = ta->pair_link[(size_t)ta->pair_off[k] * COLL_ROUTE_HOPS + x];
                int b = tb->pair_link[(size_t)tb->pair_off[k] * COLL_ROUTE_HOPS + x];
                same &= (a >= 0 ? a + ta->link_off[k] : -1) == (b >= 0 ? b + tb->link_off[k] : -1);
            }
        }
        CU_ASSERT(same);
        CU_ASSERT_EQUAL(shared, 2); /* nodes 1 and 2 read node 0's table */
        coll_topo_free(ta);
        coll_topo_free(tb);
        free(ids);
    }
}

/* The same at the sizes where the library's choice turns on the NICs: an
 * all-reduce of 4 and 64 MiB on 32 Polaris nodes and 16 Frontier nodes (NCCL's
 * and RCCL's tuners weigh the tree against the ring there). The training path
 * gave the selection half a NIC per GPU and the tree half a NIC: Polaris 64
 * MiB at 8.7 GB/s bus bandwidth against the platform's 18.5. */
static void test_analytical_nics_selection(void)
{
    static const struct {
        const char *cluster;
        int nodes;
    } runs[] = {{"polaris", 32}, {"frontier", 16}};
    const int64_t sizes[2] = {(int64_t)4 << 20, (int64_t)64 << 20};
    coll_params saved = *coll_params_get();
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        char err[TS_ERRLEN];
        topo_cluster cl;
        CU_ASSERT_EQUAL_FATAL(topo_load(runs[c].cluster, runs[c].nodes, &cl, err, sizeof err), 0);
        int n = runs[c].nodes * cl.node.gpus;
        an_net net;
        cluster_an_net(&cl, &net);
        int *node = ts_malloc(n * sizeof *node);
        for (int i = 0; i < n; i++) node[i] = i / cl.node.gpus;
        double t[2][2];
        val_child_out o;
        for (int f = 0; f < 2; f++)
            CU_ASSERT_EQUAL_FATAL(val_sweep_child(runs[c].cluster, runs[c].nodes, NULL, 0, NULL, OG_ALLREDUCE, n, NULL,
                                                  f ? VAL_FID_ANALYTICAL : VAL_FID_PIPELINED, sizes, 2, t[f], &o, err,
                                                  sizeof err),
                                  0);
        coll_params_set(&cl.coll);
        for (int k = 0; k < 2; k++) {
            double tt = an_sched_time_nodes(&net, n, node, OG_ALLREDUCE, sizes[k]);
            fprintf(stderr, "\n  %s %d nodes all_reduce %lld B: pipelined %.4g s, analytical %.4g s, training path %.4g s",
                    runs[c].cluster, runs[c].nodes, (long long)sizes[k], t[0][k], t[1][k], tt);
            CU_ASSERT(fabs(t[1][k] / t[0][k] - 1) < 0.03);
            CU_ASSERT(fabs(tt / t[0][k] - 1) < 0.03);
        }
        coll_params_set(&saved);
        free(node);
    }
}

/* ---- the fabric between nodes at the analytical level ---- */

/* Every member on its own node, 1 us routes wide enough never to limit. */
static void wide_route(void *ctx, int a, int b, double *lat, double *bw)
{
    (void)ctx, (void)a, (void)b;
    *lat = 1e-6;
    *bw = 1e15;
}

/* A fabric of one link (id 0, per direction none) that every route crosses. */
static int one_pool(const void *ctx, int a, int b, int *ids, double *bw)
{
    (void)a, (void)b;
    ids[0] = 0;
    bw[0] = *(const double *)ctx;
    return 1;
}

/* A fabric of node uplinks: a's UP (2a), b's DOWN (2b + 1). */
static int uplinks(const void *ctx, int a, int b, int *ids, double *bw)
{
    ids[0] = 2 * a, ids[1] = 2 * b + 1;
    bw[0] = bw[1] = *(const double *)ctx;
    return 2;
}

/* Routes of 10 GB/s, 1 us. */
static void ten_route(void *ctx, int a, int b, double *lat, double *bw)
{
    (void)ctx, (void)a, (void)b;
    *lat = 1e-6;
    *bw = 10e9;
}

/* One link (id 0) into node 2 of 15 GB/s: its flows come from two senders
 * (20 GB/s of out-links) but go into one 10 GB/s in-link: it never fills. */
static int into_two(const void *ctx, int a, int b, int *ids, double *bw)
{
    (void)ctx, (void)a;
    if (b != 2) return 0;
    ids[0] = 0;
    bw[0] = 15e9;
    return 1;
}

/* The all-to-all's wire bytes: all (total) and the most one member sends (most). */
static void a2a_bytes(const coll_plan *p, double *total, double *most)
{
    coll_step *m = coll_step_new(p->merged_width + 1);
    *total = *most = 0;
    for (int r = 0; r < p->n; r++) {
        coll_plan_merged_phys(p, r, m);
        double mine = 0;
        for (int i = 0; i < m->nsend; i++) mine += (double)coll_plan_wire_bytes(p, m->send[i].bytes);
        *total += mine;
        if (mine > *most) *most = mine;
    }
    coll_step_free(m);
}

/* A fabric link shared by k flows, closed forms: the direct all-to-all on n
 * nodes (its n (n - 1) flows of equal bytes and latency start together)
 * through one link of bandwidth C that every route crosses takes
 * total bytes / C more than without it; through node uplinks of C each
 * (n - 1 flows share each) what one member sends / C more; at a share of
 * 1/2 of each link (the group beside a copy of itself) twice that. */
static void test_fabric_closed_form(void)
{
    const int ns[] = {2, 3, 5, 8};
    const int64_t S = (int64_t)64 << 20;
    const double C = 10e9;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int n = ns[i], *ids = ts_malloc(n * sizeof *ids);
        for (int r = 0; r < n; r++) ids[r] = r;
        coll_topo *t = coll_topo_new(n, ids, 0);
        coll_plan p;
        char err[TS_ERRLEN];
        int a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err);
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, n, 0, S, NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        double total, most;
        a2a_bytes(&p, &total, &most);
        double t0 = coll_cost(&p, COLL_COST_PIPELINED, wide_route, NULL);
        coll_fabric pool = {one_pool, &C, 1, 1001}, up = {uplinks, &C, 2 * n, 1002};
        coll_topo_set_fabric(t, &pool, ids, 1);
        double t1 = coll_cost(&p, COLL_COST_PIPELINED, wide_route, NULL);
        coll_topo_set_fabric(t, &up, ids, 1);
        double t2 = coll_cost(&p, COLL_COST_PIPELINED, wide_route, NULL);
        coll_topo_set_fabric(t, &up, ids, 0.5);
        double t3 = coll_cost(&p, COLL_COST_PIPELINED, wide_route, NULL);
        double step = coll_cost(&p, COLL_COST_STEP, wide_route, NULL);
        coll_topo_set_fabric(t, NULL, ids, 1);
        double t4 = coll_cost(&p, COLL_COST_PIPELINED, wide_route, NULL);
        CU_ASSERT_EQUAL(t4, t0); /* without a fabric, as before */
        t0 -= most / 1e15; /* the fixed terms: t0 less the members' own links' time */
        fprintf(stderr, "\n  all-to-all on %d nodes, %g B: one link %.9g s (closed form %.9g), uplinks %.9g (%.9g), "
                "half of each %.9g (%.9g)", n, (double)S, t1 - t0, total / C, t2 - t0, most / C, t3 - t0, 2 * most / C);
        CU_ASSERT(fabs((t1 - t0) / (total / C) - 1) < 1e-6);
        CU_ASSERT(fabs((t2 - t0) / (most / C) - 1) < 1e-6);
        CU_ASSERT(fabs((t3 - t0) / (2 * most / C) - 1) < 1e-6);
        CU_ASSERT(fabs(step - t3) < 1e-9 * t3); /* one step: the step level crosses the same links */
        coll_topo_free(t);
        free(ids);
    }
    /* a link that may fill but does not: the cost without it, bit for bit,
     * by every path (the reference; the one pass, trying without it first
     * or not) */
    int n = 3, ids[3] = {0, 1, 2};
    coll_topo *t = coll_topo_new(n, ids, 0);
    coll_plan p;
    char err[TS_ERRLEN];
    int a = coll_algo_find("direct", OG_ALLTOALL, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLTOALL, n, 0, (int64_t)48 << 20, NULL, a, t, err, sizeof err), 0);
    p.proto = COLL_SIMPLE;
    double none = coll_cost(&p, COLL_COST_PIPELINED, ten_route, NULL);
    coll_fabric two = {into_two, NULL, 1, 1003};
    coll_topo_set_fabric(t, &two, ids, 1);
    double one_pass = coll_cost(&p, COLL_COST_PIPELINED, ten_route, NULL);
    coll_cost_fabric_try(0);
    double tried = coll_cost(&p, COLL_COST_PIPELINED, ten_route, NULL);
    coll_cost_fabric_try(4096);
    coll_cost_fast(0);
    double ref = coll_cost(&p, COLL_COST_PIPELINED, ten_route, NULL);
    coll_cost_fast(1);
    CU_ASSERT_EQUAL(one_pass, none);
    CU_ASSERT_EQUAL(tried, none);
    CU_ASSERT_EQUAL(ref, none);
    coll_topo_free(t);
}

/* The fabric between nodes at the analytical level, as on the platform:
 * small fixtures where every level of the fabric is narrower than what its
 * nodes send (a dragonfly with adaptive and with minimal routing: switch
 * uplinks or switch-to-switch links, one global link per pair of groups; a
 * 3-level 2:1 tapered fat-tree: leaf and pod uplinks) and 16 Polaris nodes
 * (two switches of one group: their uplinks bind, 8 nodes of 2 NICs on 87.5
 * GB/s). The all-to-all and the all-reduce agree with the pipelined level
 * within 1% on the coll path (the platform's routes) and 3% on the training
 * path (an_sched_time_nodes, the cluster's figures and fabric). Before, the
 * analytical level saw only NICs: the fixtures' all-to-all 1.5-6x fast,
 * Polaris' 16-node all-to-all 1.78x (5.06 against 2.85 GB/s bus bandwidth). */
static void test_analytical_fabric(void)
{
    static const struct {
        const char *cluster;
        int nodes;
    } runs[] = {{"tests/data/dragonfly-small.json", 8},
                {"tests/data/dragonfly-small-minimal.json", 12},
                {"tests/data/fattree-taper.json", 8},
                {"polaris", 64}};
    static const og_coll ops[] = {OG_ALLTOALL, OG_ALLREDUCE};
    const int64_t size = (int64_t)48 << 20; /* a multiple of every group's ranks x 4 B */
    coll_params saved = *coll_params_get();
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        char err[TS_ERRLEN];
        topo_cluster cl;
        CU_ASSERT_EQUAL_FATAL(topo_load(runs[c].cluster, runs[c].nodes, &cl, err, sizeof err), 0);
        topo_net_links fab;
        topo_net_links_init(&fab, &cl);
        CU_ASSERT(fab.f.nids > 0);
        int n = runs[c].nodes * cl.node.gpus;
        an_net net;
        cluster_an_net(&cl, &net);
        int *node = ts_malloc(n * sizeof *node);
        for (int i = 0; i < n; i++) node[i] = i / cl.node.gpus;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            double t[2];
            val_child_out o;
            for (int f = 0; f < 2; f++) {
                int rc = val_sweep_child(runs[c].cluster, runs[c].nodes, NULL, 0, NULL, ops[k], n, NULL,
                                         f ? VAL_FID_ANALYTICAL : VAL_FID_PIPELINED, &size, 1, &t[f], &o, err, sizeof err);
                if (rc) fprintf(stderr, "\n  %s: %s", runs[c].cluster, err);
                CU_ASSERT_EQUAL_FATAL(rc, 0);
            }
            coll_params_set(&cl.coll);
            net.fabric = NULL;
            double without = an_sched_time_nodes(&net, n, node, ops[k], size);
            net.fabric = &fab.f;
            double tt = an_sched_time_nodes(&net, n, node, ops[k], size);
            /* the reference cost (every flow on its fabric links, no
             * folding) gives the one-pass cost's figure bit for bit (which
             * runs without links that never fill, fluid_run_fabric) */
            an_memo(0);
            double ref = an_sched_time_nodes(&net, n, node, ops[k], size);
            an_memo(1);
            CU_ASSERT_EQUAL(ref, tt);
            /* and so does its try without the links that may fill, kept
             * where none filled (here at every size) */
            coll_cost_fabric_try(0);
            an_memo(0); /* forget the kept figures */
            an_memo(1);
            double tried = an_sched_time_nodes(&net, n, node, ops[k], size);
            coll_cost_fabric_try(4096);
            CU_ASSERT_EQUAL(tried, tt);
            coll_params_set(&saved);
            fprintf(stderr, "\n  %s %d nodes %s: pipelined %.4g s, analytical %.4g s (%+.1f%%), training path %.4g s "
                    "(%+.1f%%; %+.1f%% without the fabric)", cl.name, runs[c].nodes, og_coll_name(ops[k]), t[0], t[1],
                    100 * (t[1] / t[0] - 1), tt, 100 * (tt / t[0] - 1), 100 * (without / t[0] - 1));
            CU_ASSERT(fabs(t[1] / t[0] - 1) < 0.01);
            CU_ASSERT(fabs(tt / t[0] - 1) < 0.03);
        }
        free(node);
    }
}

/* The longest route the fabric can give fits a flow: a dragonfly whose node
 * uplinks are narrower than the NICs (so they are kept) and whose switch and
 * global links all can fill crosses COLL_FABRIC_HOPS of them between two
 * groups (fabric_res copies a route into arrays of that size). */
static void test_fabric_longest_route(void)
{
    char err[TS_ERRLEN];
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("tests/data/dragonfly-small.json", 0, &cl, err, sizeof err), 0);
    cl.net.bw = 20e9; /* node uplinks of 2 x 20 GB/s under 2 NICs of 25 GB/s */
    topo_net_links fab;
    topo_net_links_init(&fab, &cl);
    int most = 0;
    for (int a = 0; a < cl.nodes; a++)
        for (int b = 0; b < cl.nodes; b++) {
            int ids[4 * COLL_FABRIC_HOPS];
            double bw[4 * COLL_FABRIC_HOPS];
            int n = a == b ? 0 : fab.f.route(fab.f.ctx, a, b, ids, bw);
            CU_ASSERT(n <= COLL_FABRIC_HOPS);
            if (n > most) most = n;
        }
    CU_ASSERT_EQUAL(most, COLL_FABRIC_HOPS);
    /* Perlmutter on 256 nodes keeps only its global links (no node uplink,
     * no switch link can fill): a route inside a group has none, one
     * between groups exactly the global link of its ordered pair of groups
     * (its name says so) */
    CU_ASSERT_EQUAL_FATAL(topo_load("perlmutter", 256, &cl, err, sizeof err), 0);
    topo_net_links_init(&fab, &cl);
    CU_ASSERT_FATAL(fab.up < 0 && fab.sw < 0 && fab.glob >= 0);
    int per_g = fab.switches * fab.per_sw, bad = 0, between = 0;
    for (int a = 0; a < cl.nodes; a++)
        for (int b = 0; b < cl.nodes; b++) {
            int ids[4 * COLL_FABRIC_HOPS];
            double bw[4 * COLL_FABRIC_HOPS];
            int n = a == b ? 0 : fab.f.route(fab.f.ctx, a, b, ids, bw), ga = a / per_g, gb = b / per_g;
            if (ga == gb) {
                bad += n != 0;
                continue;
            }
            between++;
            bad += n != 1 || ids[0] != fab.glob + ga * fab.groups + gb || bw[0] != fab.glob_bw;
            char name[64], want[64];
            topo_net_link_name(&fab, ids[0], name, sizeof name);
            snprintf(want, sizeof want, "g%d-g%d_%s", ga < gb ? ga : gb, ga < gb ? gb : ga, ga < gb ? "UP" : "DOWN");
            bad += strcmp(name, want) != 0;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(between > 0);
}
/* local_links parallel links per switch pair of a dragonfly group: the
 * adaptive group fabric a switch reaches carries (switches - 1) x local_links
 * x bw / 2 (Valiant), Polaris' 7 switches with 5 links each; a cluster that
 * names none has one (Perlmutter's 32 switches). */
static void test_dragonfly_local_links(void)
{
    char err[TS_ERRLEN];
    topo_cluster cl;
    CU_ASSERT_EQUAL_FATAL(topo_load("polaris", 540, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.net.local_links, 5);
    CU_ASSERT_EQUAL(cl.net.switches, 7);
    topo_net_links fab;
    topo_net_links_init(&fab, &cl);
    double f = topo_bw_factor(&cl, COLL_TIER_SWITCH);
    CU_ASSERT_DOUBLE_EQUAL(fab.sw_bw, 6 * 5 * 25e9 * f / 2, 1);
    CU_ASSERT_DOUBLE_EQUAL(fab.glob_bw, 10 * 25e9 * f, 1);
    CU_ASSERT_EQUAL_FATAL(topo_load("perlmutter", 256, &cl, err, sizeof err), 0);
    CU_ASSERT_EQUAL(cl.net.local_links, 1);
    topo_net_links_init(&fab, &cl);
    CU_ASSERT_DOUBLE_EQUAL(fab.sw_bw, 31 * 25e9 * topo_bw_factor(&cl, COLL_TIER_SWITCH) / 2, 1);
}

/* Where the fabric can never be the bottleneck nothing changes: a fat-tree
 * without taper (every uplink carries all its nodes' ports), and a dragonfly
 * group whose switches' links carry more than their nodes' NICs (Perlmutter
 * and Frontier up to one group, 128 nodes) give no links at all, so every
 * cost is the one without a fabric, bit for bit; the tapered fixture's links
 * are there, and its all-to-all slower than the same tree untapered. */
static void test_fabric_not_binding(void)
{
    static const struct {
        const char *cluster;
        int nodes, links;
    } runs[] = {{"dgx-h100-superpod", 128, 0}, {"dgx-a100-superpod", 64, 0}, {"perlmutter", 128, 0},
                {"frontier", 128, 0},          {"polaris", 56, 0},           {"polaris", 64, 1},
                {"perlmutter", 256, 1},
                {"tests/data/fattree-taper.json", 8, 1}};
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        char err[TS_ERRLEN];
        topo_cluster cl;
        CU_ASSERT_EQUAL_FATAL(topo_load(runs[c].cluster, runs[c].nodes, &cl, err, sizeof err), 0);
        topo_net_links fab;
        topo_net_links_init(&fab, &cl);
        fprintf(stderr, "\n  %s %d nodes: %d fabric link ids", cl.name, runs[c].nodes, fab.f.nids);
        CU_ASSERT_EQUAL(fab.f.nids > 0, runs[c].links);
    }
    /* the fixture untapered: no links; its all-to-all is faster at the training path */
    char err[TS_ERRLEN];
    topo_cluster taper, flat;
    CU_ASSERT_EQUAL_FATAL(topo_load("tests/data/fattree-taper.json", 0, &taper, err, sizeof err), 0);
    flat = taper;
    flat.net.oversub = 1;
    topo_net_links ft, ff;
    topo_net_links_init(&ft, &taper);
    topo_net_links_init(&ff, &flat);
    CU_ASSERT(ft.f.nids > 0);
    CU_ASSERT_EQUAL(ff.f.nids, 0);
    an_net net;
    an_net_default("H100", &net);
    topo_an_figures(&taper, &net.gpus_per_node, &net.intra_bw, &net.intra_lat, &net.inter_bw, &net.inter_lat);
    int n = taper.nodes * taper.node.gpus, *node = ts_malloc(n * sizeof *node);
    for (int i = 0; i < n; i++) node[i] = i / taper.node.gpus;
    const int64_t size = (int64_t)64 << 20;
    double none = an_sched_time_nodes(&net, n, node, OG_ALLTOALL, size);
    net.fabric = &ff.f;
    double untapered = an_sched_time_nodes(&net, n, node, OG_ALLTOALL, size);
    net.fabric = &ft.f;
    double tapered = an_sched_time_nodes(&net, n, node, OG_ALLTOALL, size);
    fprintf(stderr, "\n  fixture all-to-all: without a fabric %.6g s, untapered %.6g s, 2:1 tapered %.6g s", none,
            untapered, tapered);
    CU_ASSERT_EQUAL(untapered, none);
    CU_ASSERT(tapered > 1.2 * none);
    free(node);
}

/* The protocol NCCL's tuner takes for a ring all_gather on Perlmutter (4 A100
 * and 4 NICs a node, 8 channels, LL128 off): ring LL up to a size, Simple
 * from it. Both protocols' latencies count the ring's n - 1 steps and their
 * bandwidths the same bus bytes, so the switch S* = (lat_Simple - lat_LL) /
 * (1 / bw_LL - 1 / bw_Simple) grows with n: on 8 nodes it is twice the
 * 4-node one, the same chunk S / (n x channels) a channel, 8-16 KiB with
 * NCCL's constants. The PCCL reproducer's sweeps behave alike at equal
 * chunks on 4-32 nodes, but forced LL fits them at 32 KiB a channel (4 MiB
 * on 4 nodes), where the selected Simple is 23-30% fast: docs/collectives.md,
 * "Perlmutter's protocol switch", for the two readings and what was
 * checked. This asserts the scaling, and that the selection is LL below its
 * switch and Simple from it. */
static void perlmutter_switch(int nodes, double *first_simple, int *ll_below)
{
    char cmd[512], out[8192], line[1024], proto[32];
    const char *path = test_tmp("pm_switch.csv");
    snprintf(cmd, sizeof cmd,
             "coll --cluster perlmutter --nodes %d --op all_gather --dtype bfloat16 -b 128K -e 64M "
             "--fidelity analytical --csv %s",
             nodes, path);
    CU_ASSERT_EQUAL_FATAL(test_cli(cmd, out, sizeof out), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    *first_simple = -1;
    *ll_below = 1;
    double size;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%*[^,],%*[^,],%lf,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%31[^,]", &size,
                   proto) != 2)
            continue;
        if (strcmp(proto, "simple") == 0) {
            if (*first_simple < 0) *first_simple = size;
        } else if (*first_simple >= 0 || strcmp(proto, "ll") != 0) {
            *ll_below = 0; /* LL after Simple, or another protocol */
        }
    }
    fclose(f);
    unlink(path);
}

/* Channels per NIC across nodes (net_chan_share, proxy_chan_step): a NIC
 * runs at the share of its rate its ring channels drive, and a ring step
 * across nodes comes no faster than its GPUs' proxies serve their channels;
 * the transfers hide the latter. Closed forms on 2 DGX H100 nodes (8 NICs,
 * 16 channels or NCCL_MIN_CTAS=24), then the shipped cluster against the
 * issue-309 logs: the 2-node ring at 1 MiB is NCCL's LL128 base latency +
 * 30 steps x 3 channels a NIC x 2 us, and the 8 GiB plateaus of the forced
 * ring (24 channels, 392 GB/s busbw) and of the default 4 and 8 node runs
 * (16 channels, 320-325 GB/s) are within 3%. */
static void test_net_channels(void)
{
    /* 1 GiB Simple: every channel runs; the tree on both nodes */
    coll_topo *tp[2];
    coll_plan pl[3];
    dgx_pair_plans(1 << 30, 16, COLL_SIMPLE, tp, pl);
    coll_plan p1 = pl[0], p2 = pl[1], pt = pl[2];
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.arch = COLL_ARCH_HOPPER;
    char err[TS_ERRLEN];
    /* off in the presets */
    CU_ASSERT_EQUAL(coll_net_chan_drive(&p2, &q), 1);
    CU_ASSERT_EQUAL(coll_ring_proxy_pace(&p2, &q), 0);
    double ws0 = coll_plan_wire_scale_with(&p2, &q);
    q.net_chan_share = 0.46;
    q.net_chan_peak = 1.116;
    /* 16 channels on 8 NICs: 2 x 0.46 of each NIC's bw_frac rate; the wire
     * bytes grow by its inverse */
    CU_ASSERT_DOUBLE_EQUAL(coll_net_chan_drive(&p2, &q), 2 * 0.46, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_scale_with(&p2, &q), ws0 / 0.92, 1e-9);
    /* NCCL_MIN_CTAS=24: 3 channels a NIC (1.38) reach the peak; without one, 1 */
    q.env_min_ch = 24;
    CU_ASSERT_DOUBLE_EQUAL(coll_net_chan_drive(&p2, &q), 1.116, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_plan_wire_scale_with(&p2, &q), ws0 / 1.116, 1e-9);
    q.net_chan_peak = 0;
    CU_ASSERT_EQUAL(coll_net_chan_drive(&p2, &q), 1);
    q.net_chan_peak = 1.116;
    q.env_min_ch = 0;
    /* not on one node, not for the tree, not on a lock-step ring */
    CU_ASSERT_EQUAL(coll_net_chan_drive(&p1, &q), 1);
    CU_ASSERT_EQUAL(coll_net_chan_drive(&pt, &q), 1);
    q.ring_lockstep = 1;
    CU_ASSERT_EQUAL(coll_net_chan_drive(&p2, &q), 1);
    q.ring_lockstep = 0;
    /* two GPUs a NIC: 16 channels on 4 NICs (4 x 0.46, the peak) */
    q.nic_gpus = 2;
    CU_ASSERT_DOUBLE_EQUAL(coll_net_chan_drive(&p2, &q), 1.116, 1e-12);
    q.nic_gpus = 0;

    /* the proxies' pace: 24 channels at 1 MiB LL128 (every channel keeps its
     * 640 x 8 bytes), 3 a NIC, 2 us each: 6 us a step on all 30 steps, beyond
     * NCCL's count of 28 NVLink steps at 1.9 us and 2 network steps at 4.0 */
    q.proxy_chan_step = 2e-6;
    q.env_min_ch = 24;
    p2.bytes = 1 << 20;
    p2.proto = COLL_LL128;
    double pace = coll_ring_proxy_pace(&p2, &q);
    CU_ASSERT_DOUBLE_EQUAL(pace, 3 * 2e-6, 1e-12);
    double base = q.base_lat[COLL_FAM_RING][COLL_LL128];
    double hops = 28 * q.hop_lat[COLL_TIER_NVLINK][COLL_FAM_RING][COLL_LL128] + 2 * q.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_LL128];
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&p2, &q), base + hops, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_node_excess(&p2, &q), 30 * pace - hops, 1e-12);
    /* in the tail: the call is base + 30 paced steps while the transfers are shorter */
    coll_params_set(&q);
    for (double busy = 0; busy < 30 * pace - hops; busy += 20e-6)
        CU_ASSERT_DOUBLE_EQUAL(coll_call_tail(&p2, 3e-6, 0.5e-6, 0, busy) + busy, base + 30 * pace, 1e-9);
    /* fewer channels at a small size: 64 KiB keeps 12 channels (640 x 8 B each) */
    p2.bytes = 64 << 10;
    CU_ASSERT_DOUBLE_EQUAL(coll_ring_proxy_pace(&p2, &q), 65536.0 / 5120 / 8 * 2e-6, 1e-12);
    /* none on one node, for the tree, or on a lock-step ring */
    CU_ASSERT_EQUAL(coll_ring_proxy_pace(&p1, &q), 0);
    CU_ASSERT_EQUAL(coll_ring_proxy_pace(&pt, &q), 0);
    q.ring_lockstep = 1;
    CU_ASSERT_EQUAL(coll_ring_proxy_pace(&p2, &q), 0);
    CU_ASSERT_EQUAL(coll_ring_node_excess(&p2, &q), 0);
    test_bare_params();
    coll_topo_free(tp[0]);
    coll_topo_free(tp[1]);

    /* the overlay takes both and refuses a share above 1 */
    coll_params r;
    coll_params_preset(&r, COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(overlay_text(&r, "{\"net_chan_share\": 0.46, \"net_chan_peak\": 1.116, \"proxy_chan_step\": 2e-6}", err,
                                 sizeof err), 0);
    CU_ASSERT(r.net_chan_share == 0.46 && r.net_chan_peak == 1.116 && r.proxy_chan_step == 2e-6);
    CU_ASSERT(overlay_text(&r, "{\"net_chan_share\": 1.5}", err, sizeof err) < 0 && strstr(err, "net_chan_share"));

    /* the shipped dgx-h100-superpod against the issue-309 logs */
    double meas = 0, pred = 0;
    CU_ASSERT_EQUAL_FATAL(compare_row_in("tests/data/accuracy", "nccl_h100_2nodes_16gpu_all_reduce_ring_ib_issue309.txt",
                                         "dgx-h100-superpod", "--nodes 2 --gpus 16", "ring", "1048576", &meas, &pred, NULL), 0);
    CU_ASSERT_DOUBLE_EQUAL(pred, (base + 30 * 3 * 2e-6) * 1e6, 0.05);
    static const struct {
        const char *log, *extra, *algo;
    } plat[] = {
        {"nccl_h100_2nodes_16gpu_all_reduce_ring_ib_issue309.txt", "--nodes 2 --gpus 16", "ring"},
        {"nccl_h100_4nodes_32gpu_all_reduce_ib_issue309.txt", "--nodes 4 --gpus 32", NULL},
        {"nccl_h100_8nodes_64gpu_all_reduce_ib_issue309.txt", "--nodes 8 --gpus 64", NULL},
    };
    for (size_t i = 0; i < sizeof plat / sizeof plat[0]; i++) {
        double e = 100;
        CU_ASSERT_EQUAL(compare_error_in("tests/data/accuracy", plat[i].log, "dgx-h100-superpod", plat[i].extra, plat[i].algo,
                                         "8589934592", &e), 0);
        fprintf(stderr, "\n    %s 8 GiB: %+.1f%%", plat[i].log, e);
        CU_ASSERT(fabs(e) <= 3);
    }
}

static void test_perlmutter_proto_switch(void)
{
    double s4, s8;
    int ll4, ll8;
    perlmutter_switch(4, &s4, &ll4);
    perlmutter_switch(8, &s8, &ll8);
    CU_ASSERT(ll4 && ll8);
    CU_ASSERT(s4 > 128 * 1024 && s8 > 128 * 1024); /* LL at the smallest size */
    CU_ASSERT_DOUBLE_EQUAL(s8, 2 * s4, 0);         /* one chunk a channel at the switch */
    /* the tuner's chunk a channel at the switch (16 ranks, 8 channels) */
    CU_ASSERT(s4 / (16 * 8) >= 8 * 1024 && s4 / (16 * 8) <= 32 * 1024);
}

/* The tree's extra proxy posts where a node's channels outnumber its NICs
 * (coll_tree_proxy_excess): tree LL keeps one channel per 4 KiB (512 x 8
 * bytes), so on 2 nodes of 8 GPUs and 8 NICs, 16 channels at 64 KiB put 2
 * on a NIC: one more post on the way up and one on the way down, 2 us each
 * on an AMD host, 1 on Intel's; none at 32 KiB (8 channels), on a ring, on
 * one node, or for NCCL's tuner. */
static void test_tree_proxy_excess(void)
{
    coll_topo *tp[2];
    coll_plan pl[3];
    dgx_pair_plans(64 << 10, 16, COLL_LL, tp, pl);
    coll_plan pt = pl[2], small = pl[2];
    small.bytes = 32 << 10;
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    q.arch = COLL_ARCH_AMPERE;
    q.cpu_amd = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_proxy_excess(&pt, &q), 2 * 1 * 2e-6, 1e-15);
    CU_ASSERT_EQUAL(coll_tree_proxy_excess(&small, &q), 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_call_latency_with(&pt, &q) - coll_call_latency_with(&small, &q), 4e-6, 1e-12);
    /* 128 KiB: still 16 channels (max_channels), still 2 a NIC */
    pt.bytes = 128 << 10;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_proxy_excess(&pt, &q), 4e-6, 1e-15);
    /* 4 NICs (two GPUs a NIC): 4 channels a NIC, 3 more posts each way */
    q.nic_gpus = 2;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_proxy_excess(&pt, &q), 2 * 3 * 2e-6, 1e-15);
    q.nic_gpus = 0;
    q.cpu_amd = 0;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_proxy_excess(&pt, &q), 2 * 1e-6, 1e-15);
    /* LL128 keeps 640 x 8 bytes a channel: 16 channels from 80 KiB */
    pt.proto = COLL_LL128;
    pt.bytes = 80 << 10;
    CU_ASSERT_DOUBLE_EQUAL(coll_tree_proxy_excess(&pt, &q), 2e-6, 1e-15);
    pt.bytes = 40 << 10;
    CU_ASSERT_EQUAL(coll_tree_proxy_excess(&pt, &q), 0);
    /* not for a ring, not on one node's ring, not for the tuner */
    CU_ASSERT_EQUAL(coll_tree_proxy_excess(&pl[1], &q), 0);
    CU_ASSERT_EQUAL(coll_tree_proxy_excess(&pl[0], &q), 0);
    coll_params saved = *coll_params_get();
    coll_params_set(&q);
    pt.proto = COLL_LL;
    pt.bytes = 64 << 10;
    CU_ASSERT_EQUAL(coll_tree_proxy_excess(&pt, coll_params_tuner()), 0);
    coll_params_set(&saved);
    coll_topo_free(tp[0]);
    coll_topo_free(tp[1]);
}

void suite_coll_model(void)
{
    test_add_suite("coll_model", "floor and plateau of every shipped log, uncalibrated", test_floor_plateau,
                   "launcher: g GPUs per thread add launch_per_gpu x (g - 1) (model, and compare of nGpus 8 vs 1)",
                   test_launch_per_gpu,
                   "floor and plateau of the Polaris sweeps at 2 to 540 nodes, uncalibrated", test_floor_plateau_repo,
                   "Perlmutter and Frontier PCCL sweeps: 1 GiB plateau, Perlmutter ring step, uncalibrated", test_plateau_pccl_repo,
                   "Slingshot mid sizes: Perlmutter and Frontier lock-step rings, uncalibrated", test_slingshot_mid_sizes,
                   "Frontier across nodes: the model's all_gather = the same nodes' measured reduce_scatter (8, 16 nodes)",
                   test_frontier_ag_rs_same_bytes,
                   "single-node NVLS all-reduce of 8 H100: mid sizes (chunk, loops) and plateau", test_nvls_mid_sizes_repo,
                   "network terms: lock-step ring, rendezvous, eager copies", test_network_terms,
                   "node_ring_hop: ring steps inside a node (A100 LL128 / Simple), on one node and across nodes, not for the tuner",
                   test_node_ring_hop,
                   "channels per NIC across nodes: the NIC's share its channels drive, the proxies' pace (H100 2/4/8 nodes)",
                   test_net_channels,
                   "tree across nodes: one more proxy post a level per extra channel on a NIC (tree LL from 64 KiB on 2 x 8 A100)",
                   test_tree_proxy_excess,
                   "ring wire latency across nodes: only the M - 1 (all-reduce 2 (M - 1)) network hops pay alpha",
                   test_ring_wire_lat,
                   "ring net overhead: NCCL's getNetOverhead on a ring's NVLink steps across nodes, time and tuner",
                   test_ring_net_overhead,
                   "ring floor on 2 DGX A100 nodes (Sophia all_gather, LL 256 B-2 KiB and LL128 256 KiB-1 MiB) within 15%",
                   test_ring_floor_sophia,
                   "chan_bw, node_channels: one-node ring time grows with bytes while the channels grow (A100 LL)",
                   test_chan_wave,
                   "A100 floors: one node, one process per GPU (12.5 us launch); two nodes (8 us tree LL network step)",
                   test_a100_floors,
                   "Simple ring slices: one network message per step to 32 KiB chunks, two above; channels = 2 x NICs",
                   test_ring_slices,
                   "ring_overlap: lock-step waits hidden (1), half hidden (0.5), added (0)", test_ring_overlap,
                   "ring_slice_waits: a step's lock-step wait per data slice (preset) or per chunk (Frontier)",
                   test_ring_slice_waits,
                   "launch binding: a bound launch's lock-step figures (cluster \"bound\", the log's --gpu-bind=closest)",
                   test_launch_bound,
                   "rccl_tuning 3: RCCL's tuning_model_3 in the tuner (LL to 2 MiB on 4 Frontier nodes); chan_lat",
                   test_rccl_tuning,
                   "RCCL's tuner prices the graph's nominal links: LL to 16 MiB on 64 Frontier nodes, RCCL's closed form",
                   test_rccl_tuner_nominal_links,
                   "reduce_bw: one node adds the reduction (all_gather vs reduce_scatter), across nodes it hides",
                   test_reduce_bw,
                   "RCCL's tuner prices protocols at full channels: LL at 4 MiB on 512 and 1,024 Frontier GCDs",
                   test_rccl_tuner_channels,
                   "NCCL's tuner prices at full channels: ring LL at 32-64 KiB on one DGX A100",
                   test_nccl_tuner_full_channels,
                   "NVLS-tree keeps its channels at every size (no cut), the tree does not",
                   test_nvlstree_no_channel_cut,
                   "selection: GPUs sharing a NIC past 2 nodes (Polaris 256 nodes: tree at 1 GiB)",
                   test_nic_sharing_selection,
                   "the library version reaches the tuner (NCCL 2.21 tree Simple latencies)", test_tuner_version,
                   "NCCL's per-channel bandwidth ceilings by GPU generation and CPU vendor (selection)", test_nccl_bw_cap,
                   "all-to-all: p2p rounds side by side on the channels, one latency per wave", test_p2p_rounds,
                   "all-to-all across nodes: the proxy's posts, flushes and inline copies per remote peer, then one step",
                   test_p2p_proxy,
                   "Polaris all-to-all: the step at 192 B per peer (CXI inline sends) on 2 and 8 nodes, uncalibrated",
                   test_p2p_inject_step,
                   "all-to-all across nodes: PXN's grouped receives, one per remote node (NCCL's IB maxRecvs 8)",
                   test_p2p_recv_groups,
                   "all-to-all across nodes: NCCL's parts per peer and the kernel floor of their channels (closed form)",
                   test_p2p_kernel_floor,
                   "Perlmutter all_gather: ring LL then Simple, the switch at one chunk a channel on 4 and 8 nodes",
                   test_perlmutter_proto_switch,
                   "a forced protocol the library does not run is refused (exit 2)", test_forced_protocol,
                   "NCCL settings: channels as connect.cc / nvls.cc set them, and the channel cut (closed form)",
                   test_nccl_env_channels,
                   "NCCL settings: NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE bound the selection; one algorithm forces it",
                   test_nccl_env_selection,
                   "NCCL settings of a log reach compare (issue 309 ring log: NCCL_MIN_CTAS=24), --nccl-env over them",
                   test_nccl_env_compare,
                   "NCCL tree on 2 and 16 DGX nodes: chain + tree closed form", test_tree_closed_form,
                   "NCCL Simple tree pipeline fill: chunk rule, (2 depth - 1) / K on the pipelined tail", test_tree_fill,
                   "NCCL's tuner on 2 DGX A100 nodes: the tree at bwIntra (per-channel ceiling, not the NICs) at 8 GiB",
                   test_tree_two_nodes_selection,
                   "NCCL's tree LL128 across nodes: at least the bus bytes at the tuner's ceiling x treeCorrectionFactor",
                   test_tree_ll128_floor,
                   "8 B tree on 2 DGX nodes: NCCL's closed form (NVLink steps pay NVLink latency)", test_tree_small_floor,
                   "NCCL's treeCorrectionFactor: the selection's, not the run's", test_tree_correction,
                   "NVLS-tree all-reduce: K loops take K + 1 loop times", test_nvlstree_efficiency,
                   "CollNet (SHARP) on 16 DGX nodes: closed form, only on SHARP fabrics", test_collnet,
                   "a SHARP DGX H100 cluster: CollNet on 16 nodes, within its NICs; NVLS-tree on 2", test_sharp_cluster,
                   "parameter overlay", test_overlay,
                   "the one-pass pipelined cost equals its reference bit for bit (6 placements, every algorithm)",
                   test_cost_fast_path,
                   "GPUs sharing a NIC: analytical = pipelined across 4 nodes of every shipped cluster (ring, tree, "
                   "all-to-all, chain; coll and training paths)",
                   test_analytical_nics,
                   "GPUs sharing a NIC: the library's choice at 4 and 64 MiB (32 Polaris, 16 Frontier nodes), both paths",
                   test_analytical_nics_selection,
                   "links inside a node: analytical = pipelined on a mesh and an uneven fabric (1-node all-to-all, also on the training path; "
                   "2-node tree; Perlmutter, Frontier)",
                   test_analytical_mesh,
                   "a fabric link shared by k flows: closed forms (one link, node uplinks, half of each)",
                   test_fabric_closed_form,
                   "the fabric between nodes: analytical = pipelined (dragonfly adaptive and minimal, tapered fat-tree, "
                   "64 Polaris nodes; all-to-all, all-reduce; coll and training paths)",
                   test_analytical_fabric,
                   "a fabric that cannot bind (fat-trees without taper, one dragonfly group) changes nothing",
                   test_fabric_not_binding, "the longest fabric route fits a flow; Perlmutter keeps its global links alone", test_fabric_longest_route,
                   "dragonfly local_links: the group fabric's bandwidth in closed form", test_dragonfly_local_links, NULL);
}
