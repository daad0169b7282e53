/* Tests: op graph validation (sim/og_check.c): one malformed trace per rule,
 * each message naming rank, op and problem; valid graphs pass, large ones fast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opgraph.h"
#include "tests.h"
#include "util.h"

/* tests/data/bad_NAME.json and the exact message og_check gives for it
 * (after "tests/data/bad_NAME.json: "). */
static const struct {
    const char *name, *msg;
} bad_files[] = {
    {"peer_range", "rank 0 op 1: send to rank 5: peer out of range (nranks 2)"},
    {"peer_self", "rank 1 op 0: recv from rank 1: peer is the rank itself"},
    {"group_unknown", "rank 0 op 0: all_reduce on unknown group 3 (the graph has 1 group)"},
    {"group_rank_range", "group 1: member 1 is rank 7, out of range (nranks 2)"},
    {"group_duplicate", "group 0: rank 0 listed twice (members 0 and 2)"},
    {"group_empty", "group 0: empty (a group needs at least one rank)"},
    {"not_member", "rank 2 op 1: all_reduce on group 0, which does not contain rank 2"},
    {"root_range", "rank 0 op 0: broadcast on group 0: root 2 out of range (the group has 2 "
                   "members)"},
    {"dep_unknown", "rank 1 op 1: dep 5 is not an op of rank 1 (it has ops 0..1)"},
    {"dep_self", "rank 0 op 2: depends on itself (deps[1] is 2)"},
    {"cycle", "rank 1 op 1: dependency cycle: op 1 -> op 2 -> op 3 -> op 1 (edges are deps and "
              "stream order)"},
    {"cycle_stream", "rank 0 op 0: dependency cycle: op 0 -> op 1 -> op 0 (edges are deps and "
                     "stream order)"},
    {"unmatched_recv", "rank 1 op 1: recv from rank 0 (tag 0, 1024 bytes) has no matching send "
                       "(rank 1 posts 1 recv with tag 0 from rank 0, which sends 0 messages)"},
    {"unmatched_send", "rank 0 op 1: send to rank 1 (tag 3, 4096 bytes) has no matching recv "
                       "(rank 0 sends 2 messages with tag 3 to rank 1, which posts 1 recv)"},
    {"p2p_bytes", "rank 0 op 1: send to rank 1 (tag 0) of 200 bytes is matched by rank 1 op 1, "
                  "a recv of 250 bytes (the 2nd message from rank 0 to rank 1 with tag 0)"},
    {"coll_type", "rank 2 op 1: the 2nd collective on group 0 is all_gather here but all_reduce "
                  "on rank 0 (op 1)"},
    {"coll_bytes", "rank 1 op 1: all_reduce on group 0 (the 2nd on the group) has bytes 2048 but "
                   "rank 0 op 1 has bytes 1024"},
    {"coll_dtype", "rank 1 op 1: all_reduce on group 0 (the 1st on the group) has dtype half but "
                   "rank 0 op 0 has dtype bfloat16"},
    {"coll_root", "rank 0 op 0: reduce on group 0 (the 1st on the group) has root 1 but rank 1 "
                  "op 0 has root 0"},
    {"coll_missing", "rank 0 op 2: all_reduce on group 0 (the 3rd on the group) has no "
                     "counterpart on rank 2, which makes only 2 on it"},
    {"coll_extra", "rank 1 op 2: all_reduce on group 0 is rank 1's 2nd collective on the group, "
                   "but rank 0 makes only 1 on it"},
    {"bytes_negative", "rank 0 op 0: bytes -1 is negative"},
    {"bytes_huge", "rank 1 op 0: bytes 1125899906842625 exceeds the limit of 1125899906842624 "
                   "(1 PiB; a unit error?)"},
    {"flops_negative", "rank 0 op 0: flops -5 is negative"},
    {"flops_huge", "rank 1 op 1: flops 2e+21 exceeds the limit of 1e+21 (a unit error?)"},
    {"duration_huge", "rank 0 op 1: duration 2000000 s exceeds the limit of 1e+06 s (a unit "
                      "error?)"},
    {"stream_range", "rank 0 op 1: stream 64 out of range (0..63)"},
    {"alltoallv_missing", "rank 1 op 0: alltoallv on group 0 without send_bytes"},
    {"alltoallv_sum", "rank 0 op 0: alltoallv send_bytes sum to 9 but bytes is 10"},
    {"alltoallv_negative", "rank 0 op 0: send_bytes[1] -5 is negative"},
    {"barrier_bytes", "rank 1 op 0: barrier with bytes 8 (a barrier moves no data: bytes must be "
                      "0)"},
};

static void test_bad_files(void)
{
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        char file[64], err[TS_ERRLEN] = "", want[TS_ERRLEN];
        snprintf(file, sizeof file, "bad_%s.json", bad_files[i].name);
        const char *path = test_data(file);
        og_graph *g = NULL;
        int rc = og_read_file(path, &g, err, sizeof err);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc) {
            fprintf(stderr, "\n  %s does not read: %s\n", path, err);
            continue;
        }
        snprintf(want, sizeof want, "%s: %s", path, bad_files[i].msg);
        CU_ASSERT_EQUAL(og_check(g, path, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, want);
        if (strcmp(err, want) != 0) fprintf(stderr, "\n  got      '%s'\n  expected '%s'\n", err, want);
        og_free(g);
    }
}

/* The fixtures are in canonical form: reading and writing gives the same bytes. */
static void test_bad_files_canonical(void)
{
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        char file[64], err[TS_ERRLEN] = "";
        snprintf(file, sizeof file, "bad_%s.json", bad_files[i].name);
        og_graph *g = NULL;
        if (og_read_file(test_data(file), &g, err, sizeof err)) {
            CU_FAIL("fixture does not read");
            continue;
        }
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        CU_ASSERT_EQUAL(og_write(g, f), 0);
        fclose(f);
        FILE *in = fopen(test_data(file), "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(in);
        char *text = ts_calloc(len + 2, 1);
        size_t n = fread(text, 1, len + 1, in);
        fclose(in);
        CU_ASSERT_EQUAL(n, len);
        CU_ASSERT(memcmp(text, out, len) == 0);
        free(text);
        free(out);
        og_free(g);
    }
}

/* ------------------------------------------------------------ inline graphs */

/* og_check on g must fail with exactly want (the name is "g"). */
static void expect(og_graph *g, const char *want)
{
    char err[TS_ERRLEN] = "";
    CU_ASSERT_EQUAL(og_check(g, "g", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, want);
    if (strcmp(err, want) != 0) fprintf(stderr, "\n  got      '%s'\n  expected '%s'\n", err, want);
    og_free(g);
}

static void expect_ok(const og_graph *g)
{
    char err[TS_ERRLEN] = "";
    int rc = og_check(g, "g", err, sizeof err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) fprintf(stderr, "\n  unexpected: %s\n", err);
}

static void test_non_finite(void)
{
    og_graph *g = og_new(2);
    og_compute(g, 0, 0, 1, 0);
    og_compute(g, 0, 0, NAN, 0);
    expect(g, "g: rank 0 op 1: flops nan is not finite");

    g = og_new(2);
    og_compute(g, 1, 0, INFINITY, 0);
    expect(g, "g: rank 1 op 0: flops inf is not finite");

    g = og_new(2);
    og_compute_fixed(g, 1, 0, INFINITY);
    expect(g, "g: rank 1 op 0: duration inf is not finite");

    g = og_new(2);
    og_compute_fixed(g, 1, 0, NAN);
    expect(g, "g: rank 1 op 0: duration nan is not finite");

    /* a fixed duration of 0 and the limit itself are fine */
    g = og_new(1);
    og_compute_fixed(g, 0, 0, 0);
    og_compute_fixed(g, 0, 0, OG_MAX_DURATION);
    og_compute(g, 0, 0, OG_MAX_FLOPS, OG_MAX_BYTES);
    expect_ok(g);
    og_free(g);
}

static void test_structure(void)
{
    /* hosts for some ranks only */
    og_graph *g = og_new(3);
    og_set_host(g, 0, "gpu-0");
    og_set_host(g, 2, "gpu-2");
    expect(g, "g: rank 1: no host, but rank 0 has host 'gpu-0' (give a host for every rank or "
              "for none)");

    g = og_new(0);
    expect(g, "g: nranks 0 must be >= 1");

    g = og_new(2);
    og_add_group(g, 2, (int[]){0, 1});
    g->groups[0].id = 4;
    expect(g, "g: group 0: id 4 does not match its position");

    g = og_new(2);
    og_add_group(g, 2, (int[]){0, -1});
    expect(g, "g: group 0: member 1 is rank -1, out of range (nranks 2)");

    g = og_new(2);
    og_add_op(g, 1, (og_kind)9, 0);
    expect(g, "g: rank 1 op 0: unknown kind 9");

    g = og_new(2);
    og_add_group(g, 2, (int[]){0, 1});
    og_collective(g, 0, 0, (og_coll)42, 0, 8, OG_F32);
    expect(g, "g: rank 0 op 0: unknown collective type 42");

    g = og_new(2);
    og_add_group(g, 2, (int[]){0, 1});
    og_collective(g, 0, 0, OG_ALLREDUCE, 0, 8, (og_dtype)42);
    expect(g, "g: rank 0 op 0: all_reduce: unknown dtype 42");

    g = og_new(2);
    og_compute(g, 0, -1, 1, 0);
    expect(g, "g: rank 0 op 0: stream -1 out of range (0..63)");

    g = og_new(2);
    og_send(g, 0, 0, -1, 8, 0);
    expect(g, "g: rank 0 op 0: send to rank -1: peer out of range (nranks 2)");

    g = og_new(2);
    og_compute(g, 0, 0, 1, 0);
    og_add_dep(og_compute(g, 0, 0, 1, 0), -3);
    expect(g, "g: rank 0 op 1: dep -3 is not an op of rank 0 (it has ops 0..1)");

    /* a collective on an unknown group, and one with a negative group id */
    g = og_new(2);
    og_collective(g, 1, 0, OG_BARRIER, -1, 0, OG_F32);
    expect(g, "g: rank 1 op 0: barrier on unknown group -1 (the graph has 0 groups)");

    /* alltoallv whose send_bytes sum overflows anything sensible */
    g = og_new(2);
    og_add_group(g, 2, (int[]){0, 1});
    og_op *op = og_collective(g, 0, 0, OG_ALLTOALLV, 0, OG_MAX_BYTES, OG_F32);
    op->vbytes = ts_malloc(2 * sizeof(int64_t));
    op->vbytes[0] = op->vbytes[1] = OG_MAX_BYTES;
    expect(g, "g: rank 0 op 0: alltoallv send_bytes sum to more than bytes 1125899906842624");
}

/* With several problems, the one reported is the first in a fixed order:
 * groups, then per-op checks by (rank, op), then cycles, p2p, collectives. */
static void test_order(void)
{
    og_graph *g = og_new(3);
    og_compute(g, 2, 0, -1, 0);       /* rank 2 op 0: negative flops */
    og_compute(g, 1, 0, 1, 0);
    og_compute(g, 1, 0, 1, -8);       /* rank 1 op 1: negative bytes */
    og_add_dep(og_compute(g, 0, 0, 1, 0), 0); /* rank 0 op 0: self dep */
    expect(g, "g: rank 0 op 0: depends on itself (deps[0] is 0)");

    /* per-op problems come before a cycle on an earlier rank */
    g = og_new(2);
    og_add_dep(og_compute(g, 0, 0, 1, 0), 1);
    og_add_dep(og_compute(g, 0, 1, 1, 0), 0);
    og_send(g, 1, 0, 7, 8, 0);
    expect(g, "g: rank 1 op 0: send to rank 7: peer out of range (nranks 2)");

    /* unmatched messages: the smallest (rank, op) is reported, whichever side */
    g = og_new(4);
    og_compute(g, 3, 0, 1, 0);
    og_recv(g, 3, 0, 2, 16, 0);       /* rank 3 op 1: no send */
    og_compute(g, 1, 0, 1, 0);
    og_compute(g, 1, 0, 1, 0);
    og_send(g, 1, 0, 0, 16, 5);       /* rank 1 op 2: no recv */
    expect(g, "g: rank 1 op 2: send to rank 0 (tag 5, 16 bytes) has no matching recv (rank 1 "
              "sends 1 message with tag 5 to rank 0, which posts 0 recvs)");

    /* bytes mismatch is reported at the op with the smaller (rank, op): here the recv */
    g = og_new(4);
    og_recv(g, 1, 0, 3, 32, 0);
    og_send(g, 3, 0, 1, 64, 0);
    expect(g, "g: rank 1 op 0: recv from rank 3 (tag 0) of 32 bytes is matched by rank 3 op 0, "
              "a send of 64 bytes (the 1st message from rank 3 to rank 1 with tag 0)");

    /* tags and directions are separate FIFO sequences: this is all matched */
    g = og_new(2);
    og_send(g, 0, 0, 1, 1, 1);
    og_send(g, 0, 0, 1, 2, 2);
    og_recv(g, 0, 0, 1, 3, 1);
    og_recv(g, 1, 0, 0, 2, 2);
    og_recv(g, 1, 0, 0, 1, 1);
    og_send(g, 1, 1, 0, 3, 1);
    expect_ok(g);
    og_free(g);

    /* alltoallv members may send different totals; counts must still agree */
    g = og_new(2);
    og_add_group(g, 2, (int[]){0, 1});
    for (int r = 0; r < 2; r++) {
        og_op *op = og_collective(g, r, 0, OG_ALLTOALLV, 0, 10 * (r + 1), OG_F32);
        op->vbytes = ts_malloc(2 * sizeof(int64_t));
        op->vbytes[0] = op->vbytes[1] = 5 * (r + 1);
    }
    expect_ok(g);
    og_free(g);
}

static void test_cycles(void)
{
    /* a cycle through deps only, on different streams, behind a valid prefix */
    og_graph *g = og_new(1);
    for (int i = 0; i < 5; i++) og_compute(g, 0, 0, 1, 0);
    og_op *a = og_compute(g, 0, 1, 1, 0); /* op 5 */
    og_add_dep(a, 7);
    og_add_dep(og_compute(g, 0, 2, 1, 0), 5); /* op 6 */
    og_add_dep(og_compute(g, 0, 3, 1, 0), 6); /* op 7 */
    og_add_dep(og_compute(g, 0, 4, 1, 0), 7); /* op 8: downstream, not on the cycle */
    expect(g, "g: rank 0 op 5: dependency cycle: op 5 -> op 6 -> op 7 -> op 5 (edges are deps "
              "and stream order)");

    /* deps on later ops are fine when they form no cycle; duplicates too */
    g = og_new(1);
    og_op *op = og_compute(g, 0, 0, 1, 0);
    og_add_dep(op, 2);
    og_add_dep(op, 2);
    og_compute(g, 0, 0, 1, 0);
    og_compute(g, 0, 1, 1, 0);
    expect_ok(g);
    og_free(g);

    /* a cycle of a million ops on one stream: iterative, and the path is cut short */
    int n = 1000000;
    g = og_new(1);
    for (int i = 0; i < n; i++) og_compute(g, 0, 0, 1, 0);
    og_add_dep(&g->ranks[0].ops[0], n - 1);
    expect(g, "g: rank 0 op 0: dependency cycle: op 0 -> op 1 -> op 2 -> op 3 -> op 4 -> op 5 "
              "-> op 6 -> op 7 -> ... (1000000 ops) (edges are deps and stream order)");

    /* a cycle on the second rank only */
    g = og_new(2);
    og_compute(g, 0, 0, 1, 0);
    og_add_dep(og_compute(g, 1, 3, 1, 0), 1);
    og_add_dep(og_compute(g, 1, 0, 1, 0), 0);
    expect(g, "g: rank 1 op 0: dependency cycle: op 0 -> op 1 -> op 0 (edges are deps and "
              "stream order)");
}

static void test_valid(void)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(og_read_file(test_data("example.json"), &g, err, sizeof err), 0);
    expect_ok(g);
    og_free(g);

    /* an empty trace and a single rank without ops are valid */
    g = og_new(1);
    expect_ok(g);
    og_free(g);

    /* groups listing ranks in any order; a one-member group */
    g = og_new(3);
    og_add_group(g, 3, (int[]){2, 0, 1});
    og_add_group(g, 1, (int[]){1});
    for (int r = 0; r < 3; r++) {
        og_op *op = og_collective(g, r, 1, OG_BROADCAST, 0, 64, OG_F16);
        op->root = 2;
    }
    og_collective(g, 1, 0, OG_ALLREDUCE, 1, 64, OG_F16);
    expect_ok(g);
    og_free(g);
}

/* ~1e6 ops over 1024 ranks: compute, ring send/recv, all-reduce on the world
 * and on pairs, with deps across streams. */
static og_graph *big_graph(int nranks, int iters)
{
    og_graph *g = og_new(nranks);
    int *world = ts_malloc(nranks * sizeof(int));
    for (int r = 0; r < nranks; r++) world[r] = r;
    og_add_group(g, nranks, world);
    free(world);
    for (int r = 0; r < nranks; r += 2) og_add_group(g, 2, (int[]){r, r + 1});
    for (int r = 0; r < nranks; r++) {
        char host[32];
        snprintf(host, sizeof host, "gpu-%d", r);
        og_set_host(g, r, host);
        int next = (r + 1) % nranks, prev = (r + nranks - 1) % nranks;
        for (int i = 0; i < iters; i++) {
            og_op *c = og_compute(g, r, 0, 1e9, 1 << 20);
            int cid = c->id;
            og_op *s = og_send(g, r, 1, next, 4096, i);
            og_add_dep(s, cid);
            og_recv(g, r, 2, prev, 4096, i);
            og_op *a = og_collective(g, r, 3, OG_ALLREDUCE, 0, 1 << 20, OG_BF16);
            og_add_dep(a, cid);
            og_collective(g, r, 3, OG_ALLGATHER, 1 + r / 2, 1 << 10, OG_F32);
        }
    }
    return g;
}

static void test_large(void)
{
    og_graph *g = big_graph(1024, 200);
    CU_ASSERT_EQUAL(og_total_ops(g), 1024 * 200 * 5);
    char err[TS_ERRLEN] = "";
    double t0 = ts_wtime();
    int rc = og_check(g, "big", err, sizeof err);
    double dt = ts_wtime() - t0;
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) fprintf(stderr, "\n  unexpected: %s\n", err);
    CU_ASSERT(dt < 5.0);

    /* one bad op deep inside is found, and just as fast */
    g->ranks[700].ops[g->ranks[700].nops - 2].bytes = 2048; /* the last all_reduce */
    t0 = ts_wtime();
    rc = og_check(g, "big", err, sizeof err);
    dt = ts_wtime() - t0;
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_STRING_EQUAL(err, "big: rank 700 op 998: all_reduce on group 0 (the 200th on the "
                                "group) has bytes 2048 but rank 0 op 998 has bytes 1048576");
    CU_ASSERT(dt < 5.0);
    og_free(g);
}

void suite_opgraph_check(void)
{
    test_add_suite("opgraph_check",
                   "bad fixtures", test_bad_files,
                   "fixtures are canonical", test_bad_files_canonical,
                   "non-finite values", test_non_finite,
                   "structure", test_structure,
                   "order of reports", test_order,
                   "cycles", test_cycles,
                   "valid graphs", test_valid,
                   "large graph", test_large,
                   NULL);
}
