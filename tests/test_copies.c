/* Rail copies (`run --detail replicas`): one TP rank simulated for each TP
 * group where the engine finds its siblings' flows on links of their own,
 * against every rank simulated (--every-rank) on the same layouts. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

static char out[1 << 16];

/* run args --json; the parsed JSON (caller frees) or NULL */
static json_t *run_json(const char *args) { return test_cli_json(args, out, sizeof out); }

static double num(json_t *j, const char *key) { return json_number_value(json_object_get(j, key)); }

/* The relative difference of a and b (0 when both are 0). */
static double rel(double a, double b) { return a == b ? 0 : fabs(a - b) / fmax(fabs(a), fabs(b)); }

/* Run args with and without --every-rank: the copies run (copies ranks per
 * simulated one, or 1: refused) and the full run agree on the iteration and
 * every category of the breakdown within 0.5% (the bound; the
 * argument of the check makes them equal), and on the links' bytes. */
static void compare(const char *args, int copies)
{
    char every[1024];
    snprintf(every, sizeof every, "%s --every-rank", args);
    json_t *a = run_json(args), *b = run_json(every);
    if (a && b) {
        int ca = (int)json_integer_value(json_object_get(a, "rail_copies"));
        if (ca != copies) fprintf(stderr, "\n%s: %d rail copies, expected %d\n", args, ca, copies);
        CU_ASSERT_EQUAL(ca, copies);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(b, "rail_copies")), 1);
        double ia = num(a, "iteration_s"), ib = num(b, "iteration_s");
        CU_ASSERT(ia > 0);
        if (rel(ia, ib) > 0.005) fprintf(stderr, "\n%s: iteration %.9g with copies, %.9g every rank\n", args, ia, ib);
        CU_ASSERT(rel(ia, ib) <= 0.005);
        json_t *ba = json_object_get(a, "breakdown_s"), *bb = json_object_get(b, "breakdown_s");
        const char *key;
        json_t *v;
        CU_ASSERT(json_object_size(ba) > 0);
        json_object_foreach(ba, key, v) {
            double x = json_number_value(v), y = json_number_value(json_object_get(bb, key));
            if (rel(x, y) > 0.005 && fabs(x - y) > 1e-9 * ia)
                fprintf(stderr, "\n%s: %s %.9g with copies, %.9g every rank\n", args, key, x, y);
            CU_ASSERT(rel(x, y) <= 0.005 || fabs(x - y) <= 1e-9 * ia);
        }
        /* the links carry every copy's bytes: the busiest ones as with every rank */
        json_t *la = json_object_get(a, "links"), *lb = json_object_get(b, "links");
        CU_ASSERT_EQUAL(json_array_size(la), json_array_size(lb));
        CU_ASSERT(json_array_size(la) > 0);
        for (size_t i = 0; i < json_array_size(la) && i < json_array_size(lb); i++) {
            double x = num(json_array_get(la, i), "bytes"), y = num(json_array_get(lb, i), "bytes");
            CU_ASSERT(rel(x, y) <= 1e-9);
        }
    }
    json_decref(a);
    json_decref(b);
}

/* A non-blocking fat-tree of n GPU hosts (experiments/bench/fattree.sh, as
 * the scale benchmark's). */
static const char *fattree(int n)
{
    static char path[256];
    char cmd[512];
    snprintf(path, sizeof path, "%s", test_tmp("fattree.xml"));
    snprintf(cmd, sizeof cmd, "experiments/bench/fattree.sh %d > %s", n, path);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    return path;
}

#define GPT " --model megatron-gpt-1.7b --seq 2048 --detail replicas --links 6"

static void test_copies_equal(void)
{
    char args[1024];
    const char *ft = fattree(64);
    /* tp = 8 (a DP ring per TP rank, one GPU apart per ring member), ZeRO-1 */
    snprintf(args, sizeof args, "run --platform %s --layout tp=8,pp=2,dp=4,gbs=16,zero=1" GPT, ft);
    compare(args, 8);
    /* context parallelism: CP rings beside the DP ones */
    snprintf(args, sizeof args, "run --platform %s --layout tp=4,cp=2,pp=2,dp=4,gbs=16" GPT, ft);
    compare(args, 4);
    /* tp = 2, four stages, sequence parallelism */
    snprintf(args, sizeof args, "run --platform %s --layout tp=2,pp=4,dp=8,gbs=32,sp=on" GPT, ft);
    compare(args, 2);
    remove(ft);
    /* a 2:1 oversubscribed fat-tree: the DP rings contend in its core, each copy on uplinks of its own */
    snprintf(args, sizeof args, "run --platform %s --layout tp=2,pp=2,dp=4,gbs=16" GPT, test_data("fattree-2to1.xml"));
    compare(args, 2);
    /* shipped clusters: a node's GPUs share the builder's node uplink, divided among the copies */
    compare("run --cluster test-cluster --layout tp=4,pp=2,dp=2,gbs=8" GPT, 4);
    compare("run --cluster dgx-h100-superpod --nodes 4 --layout tp=8,pp=2,dp=2,gbs=8,zero=1" GPT, 8);
    /* a node uplink that binds (two 25 GB/s NICs on one 25 GB/s uplink): without dividing
     * it among the copies the iteration would be 36% short */
    compare("run --platform tests/data/shared-uplink.xml --gpus-per-node 2 --layout tp=2,pp=2,dp=2,gbs=8" GPT, 2);
}

/* Where some copies share a link and others do not (two GPUs per NIC), the
 * check refuses them and every rank is simulated: the same figures as
 * --every-rank, and the reason. */
static void test_copies_refused(void)
{
    compare("run --cluster tests/data/rails-shared-nic.json --layout tp=4,pp=2,dp=2,gbs=8" GPT, 1);
    CU_ASSERT_EQUAL(test_cli("run --cluster tests/data/rails-shared-nic.json --layout tp=4,pp=2,dp=2,gbs=8" GPT, out,
                             sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "every rank simulated: one TP rank per group would not be exact ("));
    /* full detail (TP collectives simulated) and reduced never use copies */
    json_t *j = run_json("run --platform tests/data/fattree-2to1.xml --layout tp=2,pp=2,dp=4,gbs=16 --model "
                         "megatron-gpt-1.7b --seq 2048 --detail full");
    if (j) CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "rail_copies")), 1);
    json_decref(j);
}

void suite_copies(void)
{
    test_add_suite("copies", "rail copies equal every rank simulated (7 layouts)", test_copies_equal,
                   "refused where some copies share a link", test_copies_refused, NULL);
}
