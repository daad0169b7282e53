/* `trainsim run --links N`: the busiest links of a training iteration, checked
 * against hand counts of the bytes DP rings, PP messages and the tied-embedding
 * all-reduce put on each NIC of the shipped 4-node test cluster. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

/* megatron-gpt-1.7b (configs/models): GPT-2 shape, tied embeddings, learned
 * positions of 2048, hidden 2304, 24 layers, vocabulary 51200 (a multiple of
 * 128 x tp for tp = 4: no padding). */
#define H 2304.0
#define LAYERS 24
#define VOCAB 51200.0
#define POS 2048.0
#define GRAD_BYTES 4.0 /* bf16 training keeps fp32 gradients (Megatron-LM dist_optimizer.md) */

/* Parameters of one rank of a tp-way, pp = 1 GPT-2 layout: per layer 12h^2 + 7h
 * split over tp (QKV weight and bias, projection weight, fc1 weight and bias,
 * fc2 weight) and 6h replicated (two layer norms, projection and fc2 biases);
 * the embedding split over tp (and tied to the output layer), the position
 * table and the final norm replicated. */
static double gpt_rank_params(int tp)
{
    double layer = (12 * H * H + 7 * H) / tp + 6 * H;
    return LAYERS * layer + VOCAB * H / tp + POS * H + 2 * H;
}

static char out[1 << 16];

typedef struct link_row {
    const char *name;
    double bytes, bw, busy;
} link_row;

/* run args --json; the parsed JSON (caller frees) or NULL */
static json_t *run_json(const char *args) { return test_cli_json(args, out, sizeof out); }

/* The "links" array as rows; checks the columns against each other on the way:
 * busy = bytes / (bandwidth x iteration), rows by busy fraction, descending. */
static int links_of(json_t *j, link_row *rows, int max)
{
    json_t *a = json_object_get(j, "links");
    CU_ASSERT_FATAL(json_is_array(a));
    double it = json_number_value(json_object_get(j, "iteration_s"));
    CU_ASSERT_FATAL(it > 0);
    int n = (int)json_array_size(a);
    CU_ASSERT_FATAL(n <= max);
    for (int i = 0; i < n; i++) {
        json_t *e = json_array_get(a, i);
        rows[i].name = json_string_value(json_object_get(e, "name"));
        rows[i].bytes = json_number_value(json_object_get(e, "bytes"));
        rows[i].bw = json_number_value(json_object_get(e, "bandwidth"));
        rows[i].busy = json_number_value(json_object_get(e, "busy"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rows[i].name);
        CU_ASSERT_DOUBLE_EQUAL(rows[i].busy, rows[i].bytes / (rows[i].bw * it), 1e-9);
        CU_ASSERT(rows[i].busy > 0 && rows[i].busy <= 1 + 1e-9);
        if (i) CU_ASSERT(rows[i].busy <= rows[i - 1].busy);
    }
    return n;
}

static const link_row *find(const link_row *rows, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

/* --detail replicas, tp=4 dp=4 pp=1 on 4 nodes of 4 GPUs (test-cluster: 10 GB/s
 * NIC per GPU, 40 GB/s node uplink, one switch). tp is innermost, so each DP
 * group is one GPU per node: a ring over the 4 nodes. A ring all-reduce of B
 * bytes sends 2(n-1)/n B over each edge, so every NIC carries 1.5 B each way
 * and every node uplink four of them; TP stays on NVSwitch, analytical, and
 * puts nothing on any link. Step fidelity sends the same chunks one by one. */
static void test_dp_ring_bytes(void)
{
    double B = gpt_rank_params(4) * GRAD_BYTES, nic = 2.0 * 3 / 4 * B;
    const char *fid[2] = {"pipelined", "step"};
    double first[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
        char args[512];
        snprintf(args, sizeof args, "run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,pp=1,dp=4,"
                                    "gbs=4 --seq 1024 --detail replicas --fidelity %s --links 100", fid[f]);
        json_t *j = run_json(args);
        if (!j) return;
        /* the printed table: header, then the busiest link first */
        const char *t = strstr(out, "busiest links");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "every rank's PP and DP, no intra-node TP (replicas)"));
        link_row rows[100];
        int n = links_of(j, rows, 100);
        /* 16 NICs and 4 uplinks, both directions; no NVSwitch port (n*-g*) */
        CU_ASSERT_EQUAL(n, 40);
        for (int node = 0; node < 4; node++) {
            for (int d = 0; d < 2; d++) {
                char name[64];
                for (int g = 0; g < 4; g++) {
                    snprintf(name, sizeof name, "n%d-nic%d_%s", node, g, d ? "DOWN" : "UP");
                    const link_row *r = find(rows, n, name);
                    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                    CU_ASSERT_DOUBLE_EQUAL(r->bytes, nic, 1e-9 * nic);
                    CU_ASSERT_DOUBLE_EQUAL(r->bw, 10e9, 1);
                }
                snprintf(name, sizeof name, "n%d-up_%s", node, d ? "DOWN" : "UP");
                const link_row *r = find(rows, n, name);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                CU_ASSERT_DOUBLE_EQUAL(r->bytes, 4 * nic, 4e-9 * nic);
                CU_ASSERT_DOUBLE_EQUAL(r->bw, 40e9, 1);
            }
        }
        /* the table prints the busiest link's bytes as the JSON has them */
        char row[128];
        snprintf(row, sizeof row, "%-40s %14.0f", rows[0].name, rows[0].bytes);
        CU_ASSERT_PTR_NOT_NULL(strstr(t, row));
        first[f] = rows[0].bytes;
        json_decref(j);
    }
    CU_ASSERT_DOUBLE_EQUAL(first[0], first[1], 1e-9 * first[0]);
}

/* --detail reduced, tp=4 pp=2 dp=2: only replica 0 is built (stage 0 on node
 * 0, stage 1 on node 2), DP is analytical. Each GPU pair (g on node 0, g on
 * node 2) exchanges, each way: m = 4 micro-batches of activations or their
 * gradients (seq x hidden x 2 bytes, no sequence parallelism) and one 2-rank
 * all-reduce of the tied embedding's gradients (vocab x hidden / tp x 4 bytes:
 * a 2-rank ring sends all of it each way). Nodes 1 and 3 carry nothing. */
static void test_reduced_pp_bytes(void)
{
    json_t *j = run_json("run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,pp=2,dp=2,gbs=8 "
                         "--seq 1024 --links 100");
    if (!j) return;
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no DP gradient collectives (reduced)"));
    double nic = 4 * 1024 * H * 2 + VOCAB * H / 4 * GRAD_BYTES;
    link_row rows[100];
    int n = links_of(j, rows, 100);
    CU_ASSERT_EQUAL(n, 20);
    for (int i = 0; i < n; i++) {
        int node = -1, g = -1;
        char dir[8];
        if (sscanf(rows[i].name, "n%d-nic%d_%7s", &node, &g, dir) == 3) {
            CU_ASSERT(node == 0 || node == 2);
            CU_ASSERT_DOUBLE_EQUAL(rows[i].bytes, nic, 1e-9 * nic);
        } else {
            CU_ASSERT_EQUAL(sscanf(rows[i].name, "n%d-up_%7s", &node, dir), 2);
            CU_ASSERT(node == 0 || node == 2);
            CU_ASSERT_DOUBLE_EQUAL(rows[i].bytes, 4 * nic, 4e-9 * nic);
        }
    }
    json_decref(j);
}

/* Without --links the JSON has no "links" key; at the analytical fidelities
 * (no SimGrid, no links) --links is refused with exit status 2. */
static void test_links_cli(void)
{
    json_t *j = run_json("run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,pp=1,dp=2,gbs=2 "
                         "--seq 1024");
    if (j) CU_ASSERT_PTR_NULL(json_object_get(j, "links"));
    json_decref(j);
    CU_ASSERT_PTR_NULL(strstr(out, "busiest links"));
    /* reduced, pp=1: DP analytical, TP inside nodes: SimGrid moves no byte, and says so */
    j = run_json("run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,pp=1,dp=2,gbs=2 "
                 "--seq 1024 --links 5");
    if (j) CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "links")), 0);
    json_decref(j);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no link carried simulated traffic"));
    const char *fids[2] = {"analytical", "estimate"};
    for (int i = 0; i < 2; i++) {
        char args[512], want[128];
        snprintf(args, sizeof args, "run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,dp=2,gbs=2 "
                                    "--fidelity %s --links 5", fids[i]);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
        snprintf(want, sizeof want, "--links needs a SimGrid fidelity (pipelined or step), not '%s'", fids[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), want));
    }
    CU_ASSERT_EQUAL(test_cli("run --cluster test-cluster --model megatron-gpt-1.7b --layout tp=4,dp=2,gbs=2 "
                             "--links 0", out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "--links wants a count from 1 to 1000000, not '0'"));
    CU_ASSERT_EQUAL(test_cli("run --help", out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--links N"));
}

void suite_run_links(void)
{
    test_add_suite("run_links", "dp ring bytes on every nic", test_dp_ring_bytes, "reduced: pp and embedding bytes",
                   test_reduced_pp_bytes, "options and errors", test_links_cli, NULL);
}
