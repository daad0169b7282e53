/* Trace importers: sample traces of ../shared/data/traces import with the op and
 * collective counts taken independently from the files; Kineto groups match
 * across ranks; import -> native -> import round trips; bad input gets clear errors;
 * the replay command's exit statuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "trace.h"
#include "util.h"

#define TRACES "../shared/data/traces"

/* Path of a sample trace, or NULL (with a message) when ../shared is absent. */
static const char *sample(const char *rel)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], TRACES "/%s", rel);
    if (access(buf[k], R_OK) != 0) {
        printf("\n  (skipped: %s absent)", buf[k]);
        return NULL;
    }
    return buf[k];
}

static og_graph *import(int n, const char **paths, const char *fmt, char *err)
{
    og_graph *g = NULL;
    tr_opts o = {.format = fmt};
    if (tr_import(n, (char *const *)paths, &o, &g, err, TS_ERRLEN) < 0) {
        printf("\n  import failed: %s", err);
        return NULL;
    }
    return g;
}

static int count(const og_graph *g, int r, og_kind k)
{
    int n = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) n += g->ranks[r].ops[i].kind == k;
    return n;
}

/* ------------------------------------------------------------ SMPI */

static void test_smpi_isend(void)
{
    /* actions_with_isend.txt, counted with `awk 'NF>1{print $1,$2}' | sort | uniq -c`:
     * rank 0: compute 2, send 1, recv 1
     * rank 1: compute 2, irecv 1, test 1, wait 1, send 1   (wait -> one zero-length compute op)
     * rank 2: compute 4, irecv 1, test 1, wait 1, isend 1 */
    const char *p = sample("smpi-ti/replay/actions_with_isend.txt");
    if (!p) return;
    char err[TS_ERRLEN];
    og_graph *g = import(1, &p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 3);
    int want[3][3] = {{2, 1, 1}, {3, 1, 1}, {5, 1, 1}}; /* compute, send, recv */
    for (int r = 0; r < 3; r++) {
        CU_ASSERT_EQUAL(count(g, r, OG_COMPUTE), want[r][0]);
        CU_ASSERT_EQUAL(count(g, r, OG_SEND), want[r][1]);
        CU_ASSERT_EQUAL(count(g, r, OG_RECV), want[r][2]);
        CU_ASSERT_EQUAL(count(g, r, OG_COLL), 0);
    }
    /* 1e6 bytes (plain init: MPI_BYTE); compute 1e9 flops */
    CU_ASSERT_EQUAL(g->ranks[0].ops[1].bytes, 1000000);
    CU_ASSERT_DOUBLE_EQUAL(g->ranks[0].ops[0].flops, 1e9, 0);
    og_free(g);
}

static void test_smpi_all_samples(void)
{
    /* Every replay/actions_*.txt, counted per rank with awk over the action column:
     * collectives (barrier bcast reduce allreduce alltoall[v] allgather[v]
     * reducescatter), compute-kind ops (compute sleep wait waitall), send/isend,
     * recv/irecv. gather (root 0) is 3 receives on rank 0 and one send elsewhere. */
    static const struct { const char *file; int nr; int c[4][4]; /* coll, compute, send, recv */ } t[] = {
        {"allgatherv", 4, {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}},
        {"allreduce", 3, {{1, 1, 0, 0}, {1, 1, 0, 0}, {1, 1, 0, 0}}},
        {"alltoall", 3, {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}},
        {"alltoallv", 3, {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}},
        {"barrier", 3, {{1, 1, 1, 0}, {1, 1, 0, 1}, {1, 1, 0, 0}}},
        {"bcast", 3, {{3, 2, 0, 0}, {3, 2, 0, 0}, {3, 2, 0, 0}}},
        {"bcast_reduce_datatypes", 3, {{3, 2, 0, 0}, {3, 2, 0, 0}, {3, 2, 0, 0}}},
        {"gather", 4, {{0, 0, 0, 3}, {0, 0, 1, 0}, {0, 0, 1, 0}, {0, 0, 1, 0}}},
        {"reducescatter", 4, {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}},
        {"waitall", 3, {{0, 1, 0, 2}, {0, 1, 2, 0}, {0, 1, 1, 1}}},
        {"with_isend", 3, {{0, 2, 1, 1}, {0, 3, 1, 1}, {0, 5, 1, 1}}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "smpi-ti/replay/actions_%s.txt", t[i].file);
        const char *p = sample(rel);
        if (!p) return;
        char err[TS_ERRLEN];
        og_graph *g = import(1, &p, NULL, err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL(g->nranks, t[i].nr);
        for (int r = 0; r < t[i].nr && r < g->nranks; r++) {
            int got[4] = {count(g, r, OG_COLL), count(g, r, OG_COMPUTE), count(g, r, OG_SEND), count(g, r, OG_RECV)};
            for (int k = 0; k < 4; k++) {
                if (got[k] != t[i].c[r][k]) printf("\n  %s rank %d kind %d: %d, want %d", t[i].file, r, k, got[k], t[i].c[r][k]);
                CU_ASSERT_EQUAL(got[k], t[i].c[r][k]);
            }
        }
        og_free(g);
    }
}

static void test_smpi_32ranks(void)
{
    /* ti_trace<N>.txt, 32 files listed in smpi_replay.txt; each counted with
     * `awk '{print $2}' | sort | uniq -c`: compute 45, allreduce 6, alltoall 5,
     * alltoallv 2, barrier 16, bcast 9 (38 collectives), gather 1 (root 0:
     * rank 0 receives 31 messages, the others send 1). `init 1` -> 8-byte doubles. */
    const char *p = sample("smpi-ti/replay_multiple/smpi_replay.txt");
    if (!p) return;
    char err[TS_ERRLEN];
    og_graph *g = import(1, &p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 32);
    for (int r = 0; r < 32; r++) {
        CU_ASSERT_EQUAL(count(g, r, OG_COMPUTE), 45);
        CU_ASSERT_EQUAL(count(g, r, OG_COLL), 38);
        CU_ASSERT_EQUAL(count(g, r, OG_RECV), r == 0 ? 31 : 0);
        CU_ASSERT_EQUAL(count(g, r, OG_SEND), r == 0 ? 0 : 1);
    }
    /* rank 3's gather line is "3 gather 795 795 0": 795 doubles to rank 0 */
    for (int i = 0; i < g->ranks[3].nops; i++)
        if (g->ranks[3].ops[i].kind == OG_SEND) CU_ASSERT_EQUAL(g->ranks[3].ops[i].bytes, 795 * 8);
    og_free(g);
}

/* ------------------------------------------------------------ NCCL logs */

static void test_nccl_log(void)
{
    /* `grep ': opCount' | grep -o 'comm 0x[0-9a-f]*' | sort | uniq -c`: 495 calls on
     * each of the two communicator handles (ranks 0 and 1 of one commId), in both
     * logs; every call is AllReduce datatype 7 (float32); the first has count 2097152. */
    const char *fault = sample("nccl-logs/timez_nccl-tests_nccl-fault.log");
    char err[TS_ERRLEN];
    og_graph *g;
    if (fault) {
        g = import(1, &fault, NULL, err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT(g->nranks == 2 && count(g, 0, OG_COLL) == 495 && count(g, 1, OG_COLL) == 495);
        og_free(g);
    }
    const char *p = sample("nccl-logs/timez_nccl-tests_nccl.log");
    if (!p) return;
    g = import(1, &p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    CU_ASSERT_EQUAL(g->ngroups, 1);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(count(g, r, OG_COLL), 495);
        CU_ASSERT_EQUAL(g->ranks[r].nops, 495); /* no timestamps, no --gap: no compute */
        CU_ASSERT_EQUAL(g->ranks[r].ops[0].coll, OG_ALLREDUCE);
        CU_ASSERT_EQUAL(g->ranks[r].ops[0].dtype, OG_F32);
        CU_ASSERT_EQUAL(g->ranks[r].ops[0].bytes, 2097152LL * 4);
    }
    og_free(g);
    /* --gap: a compute op between two collectives of a rank */
    tr_opts o = {.gap = 0.001};
    CU_ASSERT_EQUAL(tr_import(1, (char *const *)&p, &o, &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL(count(g, 0, OG_COMPUTE), 494);
    CU_ASSERT_DOUBLE_EQUAL(g->ranks[0].ops[1].duration, 0.001, 0);
    og_free(g);
}

static void test_nccl_timestamps(void)
{
    /* tests/data/nccl_timestamps.log, by hand: two processes (pids 100, 200) on two
     * hosts, timestamps in seconds before "NCCL INFO". Rank 0 calls at 2.000, 2.010,
     * 2.030 -> compute 0.010 and 0.020 between; rank 1 at 2.001, 2.004, 2.031 ->
     * 0.003 and 0.027. AllReduce 1024 bfloat16 = 2048 B; Broadcast 256 float from
     * root 1 = 1024 B; AllGather count 100 int8 per rank -> 200 B in total. */
    const char *p = test_data("nccl_timestamps.log");
    char err[TS_ERRLEN];
    og_graph *g = import(1, &p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    static const double gaps[2][2] = {{0.010, 0.020}, {0.003, 0.027}};
    for (int r = 0; r < 2; r++) {
        const og_op *o = g->ranks[r].ops;
        CU_ASSERT_EQUAL_FATAL(g->ranks[r].nops, 5);
        CU_ASSERT(o[0].kind == OG_COLL && o[0].coll == OG_ALLREDUCE && o[0].bytes == 2048 && o[0].dtype == OG_BF16);
        CU_ASSERT(o[1].kind == OG_COMPUTE);
        CU_ASSERT_DOUBLE_EQUAL(o[1].duration, gaps[r][0], 1e-9);
        CU_ASSERT(o[2].kind == OG_COLL && o[2].coll == OG_BROADCAST && o[2].bytes == 1024 && o[2].root == 1);
        CU_ASSERT_DOUBLE_EQUAL(o[3].duration, gaps[r][1], 1e-9);
        CU_ASSERT(o[4].kind == OG_COLL && o[4].coll == OG_ALLGATHER && o[4].bytes == 200 && o[4].dtype == OG_I8);
    }
    og_free(g);
}

/* ------------------------------------------------------------ Kineto */

static void test_kineto_samples(void)
{
    /* counted with python json: events with ph == "X" and cat in {kernel,
     * gpu_memcpy, gpu_memset}; NCCL kernels with a 'Collective name' other than
     * send/recv are collectives.
     *   hta_sampled_rank-0: 1204 GPU events, 10 NCCL kernels, 0 with metadata
     *   hta_sampled_rank-1: 1154, 10, 0 */
    const char *p[2] = {sample("kineto/hta_sampled_rank-0.json.gz"), sample("kineto/hta_sampled_rank-1.json.gz")};
    if (!p[0] || !p[1]) return;
    char err[TS_ERRLEN];
    og_graph *g = import(2, p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->ranks[0].nops, 1204);
    CU_ASSERT_EQUAL(g->ranks[1].nops, 1154);
    CU_ASSERT_EQUAL(count(g, 0, OG_COLL), 0);
    CU_ASSERT_EQUAL(count(g, 1, OG_COLL), 0);
    og_free(g);
}

static void test_kineto_dlrm(void)
{
    /* param DLRM, 8 ranks: per-rank GPU events (python json, as above):
     * 261 326 262 337 273 261 262 262; 8 NCCL kernels each, none with metadata.
     * Sizes come from the nccl:* CPU annotation enclosing each kernel's launch
     * (python: launch = cuda_runtime event with the kernel's correlation id;
     * annotation on the same tid spanning the launch's ts), identical on every
     * rank: all_to_all [[6144]] float, [[24]] long int, [[384]] int, [[3392]] int,
     * all_reduce [[394241]] float, all_to_all [[6144]] float, all_reduce [[112]]
     * float, all_reduce [[226960]] float. */
    const char *tgz = sample("kineto/param_dlrm_kineto_8ranks.tar.gz");
    if (!tgz) return;
    char cmd[1024], dir[] = "/tmp/trainsim-test-dlrm-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "tar xzf %s -C %s", tgz, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    static const char *names[8] = {"worker0_step_12.1694128201545", "worker1_step_12.1694128201556",
        "worker2_step_12.1694128201554", "worker3_step_12.1694128201557", "worker4_step_12.1694128201547",
        "worker5_step_12.1694128201549", "worker6_step_12.1694128201553", "worker7_step_12.1694128201553"};
    char paths[8][512];
    const char *pp[8];
    /* given in reverse order: ranks come from distributedInfo, not the order */
    for (int i = 0; i < 8; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/dlrm_kineto/%s.pt.trace.json", dir, names[7 - i]);
        pp[i] = paths[i];
    }
    char err[TS_ERRLEN];
    og_graph *g = import(8, pp, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    static const int want[8] = {261, 326, 262, 337, 273, 261, 262, 262};
    static const og_coll wc[8] = {OG_ALLTOALL, OG_ALLTOALL, OG_ALLTOALL, OG_ALLTOALL,
                                  OG_ALLREDUCE, OG_ALLTOALL, OG_ALLREDUCE, OG_ALLREDUCE};
    static const int64_t wb[8] = {6144 * 4, 24 * 8, 384 * 4, 3392 * 4, 394241 * 4, 6144 * 4, 112 * 4, 226960 * 4};
    CU_ASSERT_EQUAL(g->ngroups, 1);
    CU_ASSERT_EQUAL(g->groups[0].n, 8);
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(g->ranks[r].nops, want[r]);
        int nccl = 0, k = 0;
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            nccl += og_label(g, op) && strncmp(og_label(g, op), "nccl", 4) == 0;
            if (op->kind == OG_COLL && k < 8) {
                CU_ASSERT_EQUAL(op->coll, wc[k]);
                CU_ASSERT_EQUAL(op->bytes, wb[k]);
                k++;
            }
        }
        CU_ASSERT_EQUAL(nccl, 8);
        CU_ASSERT_EQUAL(count(g, r, OG_COLL), 8);
    }
    og_free(g);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_kineto_matched_real(void)
{
    /* hta_nccl_data_rank0_ws2 is rank 0 of a 2-rank run: 3774 GPU events, 21 NCCL
     * kernels with metadata on process group "0" = [0, 1] (python json, grouped by
     * (Collective name, In msg nelems, dtype)): broadcast 53120 Float x3, broadcast
     * 53 Long x3, allreduce Float of 2049000, 7875584, 6563840, 6637568 and
     * 2431040 elements x3 each. Rank 1 is the same file relabelled (distributedInfo
     * rank 1), so every collective must match across the two. */
    const char *p = sample("kineto/hta_nccl_data_rank0_ws2.json.gz");
    if (!p) return;
    char r1[] = "/tmp/trainsim-test-kineto-r1-XXXXXX", cmd[1024];
    int fd = mkstemp(r1);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "zcat %s | sed 's/\"rank\": 0, \"world_size\"/\"rank\": 1, \"world_size\"/' > %s", p, r1);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    const char *pp[2] = {p, r1};
    char err[TS_ERRLEN];
    og_graph *g = import(2, pp, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->ngroups, 1);
    CU_ASSERT_EQUAL(g->groups[0].n, 2);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(g->ranks[r].nops, 3774);
        CU_ASSERT_EQUAL(count(g, r, OG_COLL), 21);
        int nb = 0, na = 0;
        int64_t bb = 0, ab = 0;
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind != OG_COLL) continue;
            CU_ASSERT_EQUAL(op->group, 0);
            if (op->coll == OG_BROADCAST) nb++, bb += op->bytes;
            if (op->coll == OG_ALLREDUCE) na++, ab += op->bytes;
        }
        /* elements x dtype size: Float 4 bytes, Long 8 */
        CU_ASSERT_EQUAL(nb, 6);
        CU_ASSERT_EQUAL(bb, 3 * (53120LL * 4 + 53LL * 8));
        CU_ASSERT_EQUAL(na, 15);
        CU_ASSERT_EQUAL(ab, 3 * 4 * (2049000LL + 7875584 + 6563840 + 6637568 + 2431040));
    }
    og_free(g);
    unlink(r1);
}

static void test_kineto_pair(void)
{
    /* tests/data/kineto_pair_r{0,1}.json, by hand: per rank a GEMM (stream 7),
     * allreduce of 1000 Float (stream 20), a memcpy (stream 7), allgather with
     * In 256 / Out 512 BFloat16 elements; pg "0" = [0, 1]. */
    const char *pp[2] = {test_data("kineto_pair_r1.json"), test_data("kineto_pair_r0.json")};
    char err[TS_ERRLEN];
    og_graph *g = import(2, pp, "kineto", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    CU_ASSERT_EQUAL(g->ngroups, 1);
    /* rank 1's allreduce starts at 140, after its memcpy (120): ops in time order */
    static const int order[2][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}}; /* gemm, allreduce, memcpy, allgather */
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL_FATAL(g->ranks[r].nops, 4);
        const og_op *gemm = &g->ranks[r].ops[order[r][0]], *ar = &g->ranks[r].ops[order[r][1]],
                    *cp = &g->ranks[r].ops[order[r][2]], *ag = &g->ranks[r].ops[order[r][3]];
        CU_ASSERT_EQUAL(gemm->kind, OG_COMPUTE);
        CU_ASSERT_DOUBLE_EQUAL(gemm->duration, 100e-6, 1e-15);
        CU_ASSERT_EQUAL(gemm->stream, 0);
        CU_ASSERT_EQUAL(cp->kind, OG_COMPUTE);
        CU_ASSERT_EQUAL(cp->stream, 0);
        CU_ASSERT_EQUAL(ar->kind, OG_COLL);
        CU_ASSERT_EQUAL(ar->coll, OG_ALLREDUCE);
        CU_ASSERT_EQUAL(ar->bytes, 4000); /* 1000 x sizeof(float) */
        CU_ASSERT_EQUAL(ar->stream, 1);
        CU_ASSERT_EQUAL(ar->group, 0);
        CU_ASSERT_EQUAL(ag->coll, OG_ALLGATHER);
        CU_ASSERT_EQUAL(ag->dtype, OG_BF16);
        CU_ASSERT_EQUAL(ag->bytes, 1024); /* total output: 512 x 2 bytes */
    }
    CU_ASSERT_EQUAL(g->groups[0].n, 2);
    /* rank 0: the allreduce starts at 110, when the GEMM (10 + 100) has ended */
    CU_ASSERT_EQUAL(g->ranks[0].ops[1].ndeps, 1);
    CU_ASSERT_EQUAL(og_deps(&g->ranks[0].ops[1])[0], 0);
    /* the memcpy at 120 overlaps the allreduce (110-160): no dependency */
    CU_ASSERT_EQUAL(g->ranks[0].ops[2].ndeps, 0);
    og_free(g);
}

/* ------------------------------------------------------------ Chakra */

static void test_chakra_et(void)
{
    /* decoded with an independent python varint reader (record = varint length +
     * Node; field 3 = type): {all_reduce,all_gather,all_to_all,reduce_scatter}.N.et:
     * 1 node each, COMM_COLL (7), comm_size 1048576 (SOURCE.md: the collective of the
     * microbenchmark's name); custom_allreduce.N.et: 35 nodes: 14 COMM_SEND (5), 14 COMM_RECV (6),
     * 7 COMP (4) per rank. */
    char p4[4][512], p8[8][512];
    const char *pp[8];
    static const struct { const char *dir, *stem; og_coll c; } micro[] = {
        {"all_reduce_4npus_1MB", "all_reduce", OG_ALLREDUCE}, {"all_gather_4npus_1MB", "all_gather", OG_ALLGATHER},
        {"all_to_all_4npus_1MB", "all_to_all", OG_ALLTOALL}, {"reduce_scatter_4npus_1MB", "reduce_scatter", OG_REDUCESCATTER},
    };
    char err[TS_ERRLEN];
    og_graph *g;
    for (size_t m = 0; m < sizeof micro / sizeof micro[0]; m++) {
        for (int i = 0; i < 4; i++) {
            snprintf(p4[i], sizeof p4[i], "chakra/astra-sim/%s/%s.%d.et", micro[m].dir, micro[m].stem, i);
            if (!(pp[i] = sample(p4[i]))) return;
            snprintf(p4[i], sizeof p4[i], "%s", pp[i]);
            pp[i] = p4[i];
        }
        g = import(4, pp, NULL, err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        for (int r = 0; r < 4; r++) {
            CU_ASSERT_EQUAL_FATAL(g->ranks[r].nops, 1);
            CU_ASSERT_EQUAL(g->ranks[r].ops[0].coll, micro[m].c);
            CU_ASSERT_EQUAL(g->ranks[r].ops[0].bytes, 1048576);
        }
        og_free(g);
    }
    for (int i = 0; i < 8; i++) {
        snprintf(p8[i], sizeof p8[i], "chakra/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.%d.et", i);
        if (!(pp[i] = sample(p8[i]))) return;
        snprintf(p8[i], sizeof p8[i], "%s", pp[i]);
        pp[i] = p8[i];
    }
    g = import(8, pp, "chakra-et", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(count(g, r, OG_SEND), 14);
        CU_ASSERT_EQUAL(count(g, r, OG_RECV), 14);
        CU_ASSERT_EQUAL(count(g, r, OG_COMPUTE), 7);
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_SEND) CU_ASSERT_EQUAL(g->ranks[r].ops[i].bytes, 131072);
    }
    og_free(g);
}

static void test_chakra_json(void)
{
    /* small_chakra.0.json (python json): 7 nodes, NodeType 4 x4, 7 x3 (c10d::broadcast_) */
    const char *p = sample("chakra/small_chakra.0.json");
    if (!p) return;
    char err[TS_ERRLEN];
    og_graph *g = import(1, &p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(count(g, 0, OG_COMPUTE), 4);
    CU_ASSERT_EQUAL(count(g, 0, OG_COLL), 3);
    for (int i = 0; i < g->ranks[0].nops; i++)
        if (g->ranks[0].ops[i].kind == OG_COLL) CU_ASSERT_EQUAL(g->ranks[0].ops[i].coll, OG_BROADCAST);
    og_free(g);
}

static void test_chakra_et_vs_json(void)
{
    /* feeder_tests_trace.tar.gz (chakra.0.et) and json_trace.tar.gz (chakra.0.json)
     * hold the same 3,664-node graph in the two forms. From the JSON with python:
     * NodeType 4 with is_cpu_op 2434, without 1209; NodeType 7 21; runtime of the
     * type-4 nodes sums to 343769 us (381795 in all minus 38026 of the collectives).
     * The .et has a ctrl-dep cycle (node 3317 <-> 3318) that the importer breaks. */
    const char *a = sample("chakra/feeder_tests_trace.tar.gz"), *b = sample("chakra/json_trace.tar.gz");
    if (!a || !b) return;
    char dir[] = "/tmp/trainsim-test-chakra-XXXXXX", cmd[2048], pe[600], pj[600];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "tar xzf %s -C %s && tar xzf %s -C %s", a, dir, b, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(pe, sizeof pe, "%s/tests/data/chakra.0.et", dir);
    snprintf(pj, sizeof pj, "%s/jsonData/chakra.0.json", dir);
    const char *paths[2] = {pe, pj};
    for (int k = 0; k < 2; k++) {
        char err[TS_ERRLEN];
        og_graph *g = import(1, &paths[k], NULL, err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        int st[3] = {0, 0, 0};
        double dur = 0;
        for (int i = 0; i < g->ranks[0].nops; i++) {
            const og_op *op = &g->ranks[0].ops[i];
            if (op->stream < 3) st[op->stream]++;
            if (op->kind == OG_COMPUTE) dur += op->duration;
        }
        CU_ASSERT_EQUAL(g->ranks[0].nops, 3664);
        CU_ASSERT_EQUAL(st[0], 2434);
        CU_ASSERT_EQUAL(st[1], 1209);
        CU_ASSERT_EQUAL(st[2], 21);
        CU_ASSERT_EQUAL(count(g, 0, OG_COLL), 21);
        CU_ASSERT_DOUBLE_EQUAL(dur, 343769e-6, 1e-9);
        og_free(g);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* ------------------------------------------------------------ round trip */

static char *to_native(const og_graph *g)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    og_write(g, f);
    fclose(f);
    return buf;
}

static void round_trip(og_graph *g)
{
    char path[] = "/tmp/trainsim-test-rt-XXXXXX", err[TS_ERRLEN];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(og_write_file(g, path, err, sizeof err), 0);
    const char *pp[1] = {path};
    og_graph *h = import(1, pp, NULL, err); /* detected as native */
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_EQUAL(h->nranks, g->nranks);
    CU_ASSERT_EQUAL(h->ngroups, g->ngroups);
    for (int r = 0; r < g->nranks && r < h->nranks; r++) {
        CU_ASSERT_EQUAL_FATAL(h->ranks[r].nops, g->ranks[r].nops);
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *a = &g->ranks[r].ops[i], *b = &h->ranks[r].ops[i];
            CU_ASSERT(a->kind == b->kind && a->stream == b->stream && a->ndeps == b->ndeps &&
                      a->bytes == b->bytes && /* a collective's algo and send_bytes share flops' and duration's storage */
                      (a->kind == OG_COLL || (a->duration == b->duration && a->flops == b->flops)) &&
                      a->peer == b->peer && a->tag == b->tag);
            if (a->kind == OG_COLL)
                CU_ASSERT(a->coll == b->coll && a->group == b->group && a->dtype == b->dtype && a->root == b->root);
            for (int k = 0; k < a->ndeps && k < b->ndeps; k++) CU_ASSERT_EQUAL(og_deps(a)[k], og_deps(b)[k]);
        }
    }
    char *x = to_native(g), *y = to_native(h);
    CU_ASSERT_STRING_EQUAL(x, y);
    free(x), free(y);
    og_free(h);
    unlink(path);
}

static void test_round_trip(void)
{
    char err[TS_ERRLEN];
    const char *pp[2] = {test_data("kineto_pair_r0.json"), test_data("kineto_pair_r1.json")};
    og_graph *g = import(2, pp, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    round_trip(g);
    og_free(g);
    static const char *samples[] = {"smpi-ti/replay_multiple/smpi_replay.txt", "nccl-logs/timez_nccl-tests_nccl.log",
                                    "kineto/hta_nccl_data_rank0_ws2.json.gz", "chakra/small_chakra.0.json"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        const char *p = sample(samples[i]);
        if (!p) continue;
        g = import(1, &p, NULL, err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        round_trip(g);
        og_free(g);
    }
}

/* ------------------------------------------------------------ errors */

static void expect_error(int n, const char **paths, const char *fmt, const char *needle1, const char *needle2)
{
    og_graph *g = NULL;
    char err[TS_ERRLEN] = "";
    tr_opts o = {.format = fmt};
    CU_ASSERT_EQUAL(tr_import(n, (char *const *)paths, &o, &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NULL(g);
    if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2)))
        printf("\n  error '%s' lacks '%s' / '%s'", err, needle1, needle2 ? needle2 : "");
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle1));
    if (needle2) CU_ASSERT_PTR_NOT_NULL(strstr(err, needle2));
    og_free(g);
}

static void test_errors(void)
{
    const char *p[2];
    p[0] = test_data("kineto_truncated.json");
    expect_error(1, p, NULL, "kineto_truncated.json:", "rank 0: truncated document");
    p[0] = test_data("kineto_badtype.json");
    expect_error(1, p, NULL, "kineto_badtype.json:4: rank 0:", "without a valid ts and dur");
    p[0] = test_data("kineto_huge.json");
    expect_error(1, p, NULL, "kineto_huge.json:5: rank 0:", "absurd element count 1e+30");
    p[0] = test_data("kineto_unknown_coll.json");
    expect_error(1, p, NULL, "rank 0: unknown collective name 'allfoo'", NULL);
    p[0] = test_data("kineto_pair_r0.json"), p[1] = test_data("kineto_group_r1.json");
    expect_error(2, p, NULL, "kineto_group_r1.json: rank 1: process group '0' has 3 ranks here but 2 in",
                 "kineto_pair_r0.json (rank 0)");
    p[0] = test_data("kineto_pair_r0.json"), p[1] = test_data("kineto_pair_r0.json");
    expect_error(2, p, NULL, "both are rank 0", NULL);
    p[0] = test_data("nccl_unknown_coll.log");
    expect_error(1, p, NULL, "nccl_unknown_coll.log:5: comm 0x55b6aa64a990 rank 0: unknown collective 'Frobnicate'", NULL);
    p[0] = test_data("nccl_nranks.log");
    expect_error(1, p, NULL, "nccl_nranks.log:5: comm 0x55b6aa64a990 rank 0: nranks differs", NULL);
    p[0] = test_data("nccl_huge.log");
    expect_error(1, p, NULL, "nccl_huge.log:5: comm 0x55b6aa64a990 rank 0: absurd element count 99999999999999999", NULL);
    p[0] = test_data("smpi_badnum.txt");
    expect_error(1, p, NULL, "smpi_badnum.txt:4: rank 1:", "'abc' is not a number");
    p[0] = test_data("smpi_unknown.txt");
    expect_error(1, p, NULL, "smpi_unknown.txt:5: rank 1: unknown action 'frobnicate'", NULL);
    p[0] = test_data("smpi_huge.txt");
    expect_error(1, p, NULL, "smpi_huge.txt:3: rank 0:", "absurd");
    p[0] = test_data("chakra_truncated.0.et");
    expect_error(1, p, NULL, "chakra_truncated.0.et: rank 0: record 1: truncated", NULL);
    p[0] = test_data("example.json");
    expect_error(1, p, "smpi-ti", "example.json:1: expected '<rank> <action> [args]'", NULL);
    expect_error(1, p, "no-such-format", "unknown trace format 'no-such-format' (valid: native, kineto", NULL);
    p[0] = test_data("p2p.xml");
    expect_error(1, p, NULL, "unknown trace format (give --format; valid: native, kineto, chakra-json, "
                              "chakra-et, nccl-log, smpi-ti, pytorch-et)", NULL);
}

/* Inputs that crashed a fuzzer (tests/data/fuzz/<format>/, kept as found): each
 * now imports, or fails with a message and no graph. `make fuzz` replays them
 * under ASan as part of its seed corpus. */
static void test_fuzz_regressions(void)
{
    static const char *fmts[] = {"kineto", "chakra_et", "chakra_json", "nccl_log", "smpi_ti", "native"};
    int seen = 0;
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        char cmd[256], name[64], path[512];
        snprintf(name, sizeof name, "%s", fmts[i]);
        for (char *c = name; *c; c++)
            if (*c == '_') *c = '-';
        snprintf(cmd, sizeof cmd, "ls tests/data/fuzz/%s 2>/dev/null", fmts[i]);
        FILE *ls = popen(cmd, "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
        char line[256];
        while (fgets(line, sizeof line, ls)) {
            line[strcspn(line, "\n")] = 0;
            snprintf(path, sizeof path, "tests/data/fuzz/%s/%s", fmts[i], line);
            const char *pp[1] = {path};
            og_graph *g = NULL;
            char err[TS_ERRLEN] = "";
            tr_opts o = {.format = name, .gap = 0.001};
            int rc = tr_import(1, (char *const *)pp, &o, &g, err, sizeof err);
            CU_ASSERT(rc == 0 ? g != NULL : g == NULL && err[0] != 0);
            og_free(g);
            seen++;
        }
        pclose(ls);
    }
    CU_ASSERT(seen >= 4);
}

/* ------------------------------------------------------------ CLI: convert and replay */

static void test_cli_convert_replay(void)
{
    char out[16384], args[2048];
    const char *p = sample("smpi-ti/replay_multiple/smpi_replay.txt");
    if (!p) return;
    /* convert writes a native trace that validates */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "convert " TRACES "/smpi-ti/replay_multiple/smpi_replay.txt -o %s", test_tmp("conv.json"));
    CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "32 ranks, 2718 ops, 1 groups"));
    snprintf(cmd, sizeof cmd, "validate-trace %s", test_tmp("conv.json"));
    CU_ASSERT_EQUAL(test_cli(cmd, out, sizeof out), 0);
    CU_ASSERT_EQUAL(test_cli("convert --format nope x -o y", out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "valid: native, kineto, chakra-json, chakra-et, nccl-log, smpi-ti"));
    unlink(test_tmp("conv.json"));
    /* sim takes per-rank files (repeated --trace) and rejects unknown formats with the list */
    if (sample("kineto/hta_sampled_rank-1.json.gz")) {
        CU_ASSERT_EQUAL(test_cli("sim --platform tests/golden/xbar32.xml --trace " TRACES "/kineto/hta_sampled_rank-0.json.gz "
                                 "--trace " TRACES "/kineto/hta_sampled_rank-1.json.gz", out, sizeof out), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "ranks 2, ops 2358")); /* 1204 + 1154 GPU events */
    }
    CU_ASSERT_EQUAL(test_cli("sim --platform tests/golden/xbar32.xml --trace x --format bogus", out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "unknown trace format 'bogus' (valid: native, kineto"));
    /* replay: unchanged -> 0; half the bandwidth -> 1 naming the collectives that
     * moved: the 4 MB alltoallv's time doubles (bandwidth-bound) */
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32.xml --trace %s --expect tests/golden/smpi-32ranks.json", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "replay: ok, 167 metrics within 3%"));
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32-halfbw.xml --trace %s --expect tests/golden/smpi-32ranks.json", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "coll g0 alltoallv #25 (alltoallv)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "coll g0 alltoall #29 (alltoall)"));
    /* latency-bound collectives (barriers, 1-element broadcasts) do not move */
    CU_ASSERT_PTR_NULL(strstr(out, "coll g0 barrier"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "iteration"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "REGRESSION"));
    /* a huge tolerance accepts the slower platform */
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32-halfbw.xml --trace %s --expect tests/golden/smpi-32ranks.json --tolerance 200%%", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 0);
    /* bad input: golden of another trace, missing golden, bad tolerance */
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32.xml --trace %s --expect tests/golden/smpi-isend.json", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(test_cli_err(), "not in the golden file"));
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32.xml --trace %s --expect /nonexistent.json", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    snprintf(args, sizeof args, "replay --platform tests/golden/xbar32.xml --trace %s --expect x --tolerance abc", p);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_EQUAL(test_cli("replay --help", out, sizeof out), 0);
}

void suite_trace(void)
{
    test_add_suite("trace", "smpi: isend/irecv/wait counts", test_smpi_isend, "smpi: every single-file sample", test_smpi_all_samples, "smpi: 32 per-rank files",
                   test_smpi_32ranks, "nccl log: communicators and counts", test_nccl_log,
                   "nccl log: timestamps give the compute", test_nccl_timestamps,
                   "kineto: HTA pair counts", test_kineto_samples, "kineto: DLRM 8 ranks counts", test_kineto_dlrm,
                   "kineto: real collectives matched across ranks", test_kineto_matched_real,
                   "kineto: hand-made pair, bytes and deps", test_kineto_pair, "chakra .et counts", test_chakra_et,
                   "chakra JSON counts", test_chakra_json,
                   "chakra .et and JSON forms of one graph agree", test_chakra_et_vs_json, "round trip import -> native -> import", test_round_trip,
                   "bad input: clear errors", test_errors,
                   "fuzzer-found inputs stay fixed", test_fuzz_regressions, "cli: convert and replay exit statuses",
                   test_cli_convert_replay, NULL);
}
