/* Collective schedules executed symbolically: every rank's chunks are sets of
 * contributing ranks; after the schedule each rank must hold exactly what the
 * collective defines. Also: send/recv pairing per step, merged totals, errors. */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "coll.h"
#include "coll_params.h"
#include "msccl.h"
#include "tests.h"
#include "util.h"

typedef unsigned long long set_t; /* contributing ranks, n <= 64 */

typedef struct {
    int n, nchunks;
    set_t *have; /* [rank * nchunks + chunk] */
} state;

static set_t full(int n) { return n == 64 ? ~0ULL : (1ULL << n) - 1; }

/* Rows n .. n + nnodes - 1 of the state are the nodes' NVSwitch buffers, row
 * n + nnodes the fabric's SHARP switches (CollNet). */
static int nrows(const coll_plan *p) { return p->n + (p->topo ? p->topo->nnodes + 1 : 0); }

/* The member whose segment chunk c is part of (all-gather, reduce-scatter):
 * a schedule may cut each member's segment into nchunks / n parts. */
static int seg(const coll_plan *p, int c) { return c / (p->nchunks / p->n); }

static void init_state(state *s, const coll_plan *p)
{
    s->n = p->n;
    s->nchunks = p->nchunks;
    s->have = ts_calloc((size_t)nrows(p) * p->nchunks, sizeof(set_t));
    for (int r = 0; r < p->n; r++)
        for (int c = 0; c < p->nchunks; c++) {
            set_t *h = &s->have[r * p->nchunks + c];
            switch (p->coll) {
            case OG_ALLGATHER: *h = seg(p, c) == r ? 1ULL << r : 0; break;
            case OG_BROADCAST: *h = r == p->root ? 1ULL << r : 0; break;
            case OG_ALLTOALL: *h = c / p->n == r ? 1ULL << r : 0; break;
            default: *h = 1ULL << r; /* reductions: each rank contributes everywhere */
            }
        }
}

/* The result the collective defines for rank r, chunk c. */
static set_t expected(const coll_plan *p, int r, int c, set_t cur)
{
    int n = p->n;
    switch (p->coll) {
    case OG_ALLREDUCE:
    case OG_BARRIER: return full(n);
    case OG_ALLGATHER: return 1ULL << seg(p, c);
    case OG_REDUCESCATTER: return seg(p, c) == r ? full(n) : cur; /* only segment r is defined */
    case OG_BROADCAST: return 1ULL << p->root;
    case OG_REDUCE: return r == p->root ? full(n) : cur;
    case OG_ALLTOALL: return c % n == r ? 1ULL << (c / n) : cur;
    default: return cur;
    }
}

/* Execute the schedule; returns 0 or a message in err. */
static int run_symbolic(const coll_plan *p, char *err, size_t errlen)
{
    state s;
    init_state(&s, p);
    int n = p->n, k = p->nchunks;
    coll_step **st = ts_malloc(n * sizeof *st);
    for (int r = 0; r < n; r++) st[r] = coll_step_new(p->width);
    set_t *next = ts_malloc((size_t)nrows(p) * k * sizeof(set_t));
    int64_t *sent = ts_calloc((size_t)n * n, sizeof(int64_t)); /* per (src,dst) totals */
    int rc = 0;
    for (int step = 0; step < p->nsteps && rc == 0; step++) {
        for (int r = 0; r < n; r++) {
            coll_plan_step(p, r, step, st[r]);
            /* the engine sizes its buffers by the plan's width */
            if (rc == 0 && (st[r]->nsend > p->width || st[r]->nrecv > p->width))
                rc = ts_err(err, errlen, "step %d: rank %d posts %d sends, %d recvs, width %d", step, r,
                            st[r]->nsend, st[r]->nrecv, p->width);
        }
        memcpy(next, s.have, (size_t)nrows(p) * k * sizeof(set_t));
        for (int r = 0; r < n && rc == 0; r++)
            for (int i = 0; i < st[r]->nsend && rc == 0; i++) {
                coll_xfer *x = &st[r]->send[i];
                /* the matching receive on the peer (a switch always takes it) */
                int found = coll_is_switch(n, x->peer);
                for (int j = 0; !found && j < st[x->peer]->nrecv; j++) {
                    coll_xfer *y = &st[x->peer]->recv[j];
                    if (y->peer == r && y->chunk == x->chunk && y->nchunk == x->nchunk &&
                        y->reduce == x->reduce && (y->bytes == x->bytes || y->bytes < 0))
                        found = 1;
                }
                if (!found) {
                    rc = ts_err(err, errlen, "step %d: send %d->%d chunk %d has no matching recv", step, r,
                                x->peer, x->chunk);
                    break;
                }
                if (x->bytes != coll_chunk_range_bytes(p->bytes, p->coll == OG_ALLTOALL ? n : k,
                                                       p->coll == OG_ALLTOALL ? x->chunk % n : x->chunk,
                                                       x->nchunk)) {
                    rc = ts_err(err, errlen, "step %d: send %d->%d carries %lld bytes for chunk %d", step, r,
                                x->peer, (long long)x->bytes, x->chunk);
                    break;
                }
                if (!coll_is_switch(n, x->peer)) sent[r * n + x->peer] += x->bytes;
                for (int c = x->chunk; c < x->chunk + x->nchunk; c++) {
                    set_t src = s.have[r * k + c], *dst = &next[x->peer * k + c];
                    if (!src) {
                        rc = ts_err(err, errlen, "step %d: rank %d sends chunk %d it does not hold", step, r, c);
                        break;
                    }
                    if (x->reduce) {
                        /* a barrier's "sum" is knowledge: idempotent */
                        if ((*dst & src) && p->coll != OG_BARRIER) {
                            rc = ts_err(err, errlen, "step %d: chunk %d reduced twice into rank %d", step, c,
                                        x->peer);
                            break;
                        }
                        *dst |= src;
                    } else {
                        *dst = src;
                    }
                }
            }
        /* reads from a switch see its buffer as the step starts */
        for (int r = 0; r < n && rc == 0; r++)
            for (int i = 0; i < st[r]->nrecv && rc == 0; i++) {
                coll_xfer *x = &st[r]->recv[i];
                if (!coll_is_switch(n, x->peer)) continue;
                if (x->bytes != coll_chunk_range_bytes(p->bytes, k, x->chunk, x->nchunk))
                    rc = ts_err(err, errlen, "step %d: rank %d reads %lld bytes from its switch", step, r,
                                (long long)x->bytes);
                if (x->peer != n + p->topo->node[r] && x->peer != n + p->topo->nnodes)
                    rc = ts_err(err, errlen, "step %d: rank %d reads another node's switch", step, r);
                for (int c = x->chunk; c < x->chunk + x->nchunk && rc == 0; c++) {
                    if (!s.have[x->peer * k + c])
                        rc = ts_err(err, errlen, "step %d: rank %d reads chunk %d the switch lacks", step, r, c);
                    next[r * k + c] = s.have[x->peer * k + c];
                }
            }
        /* every receive must have a sender */
        for (int r = 0; r < n && rc == 0; r++) {
            int nsend_to_r = 0, nswitch = 0;
            for (int q = 0; q < n; q++)
                for (int i = 0; i < st[q]->nsend; i++) nsend_to_r += st[q]->send[i].peer == r;
            for (int i = 0; i < st[r]->nrecv; i++) nswitch += coll_is_switch(n, st[r]->recv[i].peer);
            if (nsend_to_r != st[r]->nrecv - nswitch)
                rc = ts_err(err, errlen, "step %d: rank %d posts %d recvs for %d sends", step, r, st[r]->nrecv,
                            nsend_to_r);
        }
        memcpy(s.have, next, (size_t)nrows(p) * k * sizeof(set_t));
    }
    for (int r = 0; r < n && rc == 0; r++)
        for (int c = 0; c < k && rc == 0; c++) {
            set_t h = s.have[r * k + c];
            if (h != expected(p, r, c, h))
                rc = ts_err(err, errlen, "rank %d chunk %d ends with set %llx, want %llx", r, c, h,
                            expected(p, r, c, h));
        }
    /* the merged (pipelined) view carries exactly the step totals */
    coll_step *m = coll_step_new(p->merged_width);
    for (int r = 0; r < n && rc == 0; r++) {
        coll_plan_merged(p, r, m);
        if (m->nsend > p->merged_width || m->nrecv > p->merged_width)
            rc = ts_err(err, errlen, "merged rank %d: %d sends, %d recvs, merged width %d", r, m->nsend, m->nrecv,
                        p->merged_width);
        int64_t tot = 0, want = 0;
        for (int i = 0; i < m->nsend; i++) {
            if (coll_is_switch(n, m->send[i].peer)) continue;
            tot += m->send[i].bytes;
            if (m->send[i].bytes != sent[r * n + m->send[i].peer])
                rc = ts_err(err, errlen, "merged %d->%d: %lld bytes, steps sent %lld", r, m->send[i].peer,
                            (long long)m->send[i].bytes, (long long)sent[r * n + m->send[i].peer]);
        }
        for (int q = 0; q < n; q++) want += sent[r * n + q];
        if (rc == 0 && tot != want)
            rc = ts_err(err, errlen, "merged rank %d sends %lld bytes, steps %lld", r, (long long)tot,
                        (long long)want);
    }
    coll_step_free(m);
    for (int r = 0; r < n; r++) coll_step_free(st[r]);
    free(st);
    free(next);
    free(sent);
    free(s.have);
    return rc;
}

/* Topologies for group size n: t = 0 none; t = 1..4 nodes of ppn 1, 2, 3, 4
 * members (consecutive), t = 5 one NVLS node, t = 6 nodes of 2 interleaved,
 * t = 7 two nodes of 3 and n - 3 members (uneven unless n = 6). */
static coll_topo *make_topo(int n, int t)
{
    static const int ppn[] = {0, 1, 2, 3, 4};
    int *ids = ts_malloc(n * sizeof(int));
    if (t == 0 || (t <= 4 && n % ppn[t]) || (t == 6 && n % 2) || (t == 7 && n < 4)) {
        free(ids);
        return NULL;
    }
    for (int i = 0; i < n; i++) ids[i] = t <= 4 ? 100 + i / ppn[t] : t == 5 ? 7 : t == 6 ? i % (n / 2) : i < 3;
    coll_topo *tp = coll_topo_new(n, ids, 1);
    free(ids);
    return tp;
}

static void check_all(og_coll coll)
{
    int64_t sizes[] = {0, 1, 1000, 1 << 20, 12345679};
    int ran = 0;
    for (int a = 0; a < coll_nalgos(); a++) {
        const coll_algo *al = coll_algo_get(a);
        if (!(al->colls & (1u << coll))) continue;
        for (int n = 1; n <= 33; n++)
            for (int t = al->unfit ? 1 : 0; t <= 7; t++) { /* ring uses channels on nodes */
                coll_topo *tp = make_topo(n, t);
                if (t && !tp) continue;
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                    for (int root = 0; root < n; root += (n > 3 ? n / 3 : 1)) {
                        coll_plan p;
                        char err[TS_ERRLEN];
                        if (coll_plan_init_topo(&p, coll, n, root, sizes[si], NULL, a, tp, err, sizeof err) < 0) {
                            /* only the topology may rule an algorithm out, with a reason */
                            CU_ASSERT_PTR_NOT_NULL(al->unfit);
                            CU_ASSERT_PTR_NOT_NULL(strstr(err, al->name));
                            break;
                        }
                        int rc = run_symbolic(&p, err, sizeof err);
                        if (rc)
                            fprintf(stderr, "%s/%s n=%d topo=%d root=%d size=%lld: %s\n", og_coll_name(coll),
                                    al->name, n, t, root, (long long)sizes[si], err);
                        CU_ASSERT_EQUAL_FATAL(rc, 0);
                        ran++;
                        if (coll != OG_BROADCAST && coll != OG_REDUCE) break; /* root matters only there */
                    }
                coll_topo_free(tp);
            }
    }
    CU_ASSERT(ran >= 33 * 5);
}

/* with a SHARP fabric, so that CollNet runs too */
static void test_allreduce(void)
{
    coll_params q = *coll_params_get();
    q.collnet = 1;
    coll_params_set(&q);
    check_all(OG_ALLREDUCE);
    test_bare_params();
}
static void test_allgather(void) { check_all(OG_ALLGATHER); }
static void test_reducescatter(void) { check_all(OG_REDUCESCATTER); }
static void test_broadcast(void) { check_all(OG_BROADCAST); }
static void test_reduce(void) { check_all(OG_REDUCE); }
static void test_alltoall(void) { check_all(OG_ALLTOALL); }
static void test_barrier(void) { check_all(OG_BARRIER); }

/* All-to-allv: every rank sends vbytes[q] to every other q exactly once (the
 * receiver does not know the size: -1), every block src*n+dst once. */
static void test_alltoallv(void)
{
    for (int a = 0; a < coll_nalgos(); a++) {
        if (!(coll_algo_get(a)->colls & (1u << OG_ALLTOALLV))) continue;
        for (int n = 1; n <= 17; n++) {
            int64_t *vb = ts_malloc(n * sizeof *vb);
            for (int q = 0; q < n; q++) vb[q] = 1000 * q + 7;
            coll_plan p;
            char err[TS_ERRLEN];
            CU_ASSERT_EQUAL_FATAL(coll_plan_init(&p, OG_ALLTOALLV, n, 0, 0, vb, a, err, sizeof err), 0);
            int *sent = ts_calloc((size_t)n * n, sizeof(int)), *got = ts_calloc((size_t)n * n, sizeof(int));
            coll_step *st = coll_step_new(p.width);
            for (int r = 0; r < n; r++)
                for (int s = 0; s < p.nsteps; s++) {
                    coll_plan_step(&p, r, s, st);
                    for (int i = 0; i < st->nsend; i++) {
                        int q = st->send[i].peer;
                        CU_ASSERT_EQUAL(st->send[i].bytes, vb[q]);
                        CU_ASSERT_EQUAL(st->send[i].chunk, r * n + q);
                        sent[r * n + q]++;
                    }
                    for (int i = 0; i < st->nrecv; i++) {
                        CU_ASSERT_EQUAL(st->recv[i].bytes, -1);
                        CU_ASSERT_EQUAL(st->recv[i].chunk, st->recv[i].peer * n + r);
                        got[st->recv[i].peer * n + r]++;
                    }
                }
            for (int i = 0; i < n * n; i++) {
                CU_ASSERT_EQUAL(sent[i], i / n != i % n);
                CU_ASSERT_EQUAL(got[i], i / n != i % n);
            }
            coll_step_free(st);
            free(sent);
            free(got);
            free(vb);
        }
    }
}

static void test_errors(void)
{
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL(coll_algo_find("rign", OG_ALLREDUCE, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown algorithm 'rign' for all_reduce (valid: ring, tree, rhd, rabenseifner, hierarchical, nvls, nvlstree, collnet, msccl)"));
    CU_ASSERT_EQUAL(coll_algo_find("ring", OG_ALLTOALL, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "valid: pairwise, direct, bruck)"));
    coll_plan p;
    CU_ASSERT_EQUAL(coll_plan_init(&p, OG_ALLREDUCE, 0, 0, 100, NULL, -1, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "group of 0 ranks"));
    CU_ASSERT_EQUAL(coll_plan_init(&p, OG_BROADCAST, 4, 4, 100, NULL, -1, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "root 4 outside the group of 4"));
    CU_ASSERT_EQUAL(coll_plan_init(&p, OG_ALLTOALLV, 4, 0, 100, NULL, -1, err, sizeof err), -1);
    /* sizes that do not cut into whole elements */
    CU_ASSERT_EQUAL(coll_check_size(OG_ALLGATHER, 3, 1000, 4, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "all_gather of 1000 bytes on 3 ranks: not a multiple of 3 ranks x 4-byte"));
    CU_ASSERT_EQUAL(coll_check_size(OG_ALLGATHER, 3, 1200, 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(coll_check_size(OG_ALLREDUCE, 3, 1002, 4, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a multiple of the 4-byte element"));
    CU_ASSERT_EQUAL(coll_check_size(OG_ALLREDUCE, 3, 1000, 4, err, sizeof err), 0);
    /* algorithm:protocol specs */
    int a;
    coll_proto pr;
    CU_ASSERT_EQUAL(coll_algo_parse("tree:ll128", OG_ALLREDUCE, &a, &pr, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(coll_algo_get(a)->name, "tree");
    CU_ASSERT_EQUAL(pr, COLL_LL128);
    CU_ASSERT_EQUAL(coll_algo_parse("ring:fast", OG_ALLREDUCE, &a, &pr, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown protocol 'fast' in 'ring:fast' (valid: simple, ll128, ll)"));
    CU_ASSERT_EQUAL(coll_algo_parse("tree", OG_ALLGATHER, &a, &pr, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown algorithm 'tree' for all_gather (valid: ring, rhd, bruck, pat, hierarchical, hier-rd, nvls)"));
}

/* The tuner with NCCL's figures: the least estimated latency (NCCL's closed
 * forms, coll_call_latency) + bytes through the busiest rank / B, among
 * NCCL's algorithms and protocols. */
static void test_selection(void)
{
    coll_params nccl;
    coll_params_preset(&nccl, COLL_LIB_NCCL);
    coll_params_set(&nccl);
    coll_hw hw = {2e-6, 25e9, NULL, 0, 0};
    coll_proto pr;
    /* 1 KiB on 8 (every member its own node): latency-bound: the tree's
     * 2 log2(8) network hops beat the ring's 14; LL has the least per-hop
     * latency and its fourfold bytes cost little here */
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_select(OG_ALLREDUCE, 8, 1024, &hw, &pr))->name, "tree");
    CU_ASSERT_EQUAL(pr, COLL_LL);
    /* 1 GiB on 8: ring moves 1.75 S per rank, the double tree 2 S: ring, Simple */
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_select(OG_ALLREDUCE, 8, 1 << 30, &hw, &pr))->name, "ring");
    CU_ASSERT_EQUAL(pr, COLL_SIMPLE);
    /* MPI-style algorithms are never chosen automatically, only when forced */
    for (int n = 2; n <= 64; n *= 2)
        for (int64_t b = 1; b <= (1 << 30); b *= 32)
            for (int c = 0; c < OG_NCOLLS; c++) {
                int a = coll_select(c, n, b, &hw, &pr);
                CU_ASSERT(a >= 0 && coll_algo_get(a)->tuner != COLL_TUNER_NO);
            }
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_select(OG_ALLTOALLV, 8, 1 << 20, &hw, &pr))->name, "direct");
    /* PAT only with one member per node */
    CU_ASSERT_STRING_EQUAL(coll_algo_get(coll_select(OG_ALLGATHER, 8, 1 << 20, &hw, &pr))->name, "pat");
    int ids[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    coll_topo *t = coll_topo_new(8, ids, 0);
    hw.topo = t;
    CU_ASSERT_STRING_NOT_EQUAL(coll_algo_get(coll_select(OG_ALLGATHER, 8, 1 << 20, &hw, &pr))->name, "pat");
    coll_topo_free(t);
    test_bare_params();
}

static void test_busbw_factors(void)
{
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(OG_ALLREDUCE, 8), 1.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(OG_ALLGATHER, 8), 0.875, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(OG_BROADCAST, 8), 1.0, 1e-12);
}

/* Two tiers: 8 nodes of 8 GPUs, NVLink 450 GB/s inside, one 50 GB/s NIC route
 * between. An 8 GB all-reduce must take the ring, whose 8 channels send the
 * bulk over NVLink and 1/8 over each GPU's NIC, not a tree whose every byte
 * crosses the network: judged at NVLink figures alone, the tree looked as
 * fast. */
static void test_select_two_tiers(void)
{
    int ids[64];
    for (int i = 0; i < 64; i++) ids[i] = i / 8;
    coll_topo *t = coll_topo_new(64, ids, 0);
    coll_hw hw = {0.5e-6, 450e9, t, 3e-6, 50e9};
    coll_proto pr;
    int64_t B = (int64_t)8 << 30;
    int a = coll_select(OG_ALLREDUCE, 64, B, &hw, &pr);
    CU_ASSERT_STRING_EQUAL(coll_algo_get(a)->name, "ring");
    /* and the estimate splits the bytes by tier. Ring: of V = 2 (n-1)/n S, a
     * GPU sends V/8 over its NIC and 7V/8 over NVLink. Hierarchical (forced
     * only: NCCL does not run it): NIC 2 (M-1)/(L M) S = 0.21875 S, NVLink
     * 2 (L-1)/L S = 1.75 S. */
    double S = (double)B, V = 2 * 63.0 / 64 * S;
    struct {
        const char *algo;
        double nic, nvl;
    } want[] = {{"ring", V / 8, 7 * V / 8}, {"hierarchical", 0.21875 * S, 1.75 * S}};
    for (int i = 0; i < 2; i++) {
        coll_plan p;
        char err[TS_ERRLEN];
        a = coll_algo_find(want[i].algo, OG_ALLREDUCE, err, sizeof err);
        CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, OG_ALLREDUCE, 64, 0, B, NULL, a, t, err, sizeof err), 0);
        p.proto = COLL_SIMPLE;
        double bw_part = want[i].nic / 50e9 > want[i].nvl / 450e9 ? want[i].nic / 50e9 : want[i].nvl / 450e9;
        double est = coll_estimate_hw(&p, &hw);
        CU_ASSERT(est >= bw_part);
        CU_ASSERT(est < bw_part * 1.01 + p.nsteps * (3e-6 + 0.0) + 1e-9);
    }
    coll_topo_free(t);
}

/* MSCCL programs as schedules of the "msccl" row: the shared msccl-tools
 * and astra-sim all-reduces pass the same symbolic check as every built-in
 * algorithm (every rank ends with every chunk reduced over all ranks). */
static void test_msccl_programs(void)
{
    static const char *files[] = {"msccl-tools_ring_8_1.xml", "msccl-tools_ring_4_2.xml",
                                  "astrasim_custom_allreduce_8npus_1MB.xml", "msccl-tools_ap_1.xml"};
    char path[512], err[TS_ERRLEN];
    coll_plan p;
    int a = coll_algo_find("msccl", OG_ALLREDUCE, err, sizeof err);
    CU_ASSERT_FATAL(a >= 0);
    if (access("../shared/data/traces/msccl", R_OK) != 0) {
        printf("\n  (skipped: ../shared/data/traces/msccl absent)");
        return;
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "../shared/data/traces/msccl/%s", files[i]);
        CU_ASSERT_EQUAL_FATAL(coll_msccl_use(path, err, sizeof err), 0);
        int64_t sizes[] = {0, 1000, 1 << 20, 12345679};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            CU_ASSERT_EQUAL_FATAL(coll_plan_init(&p, OG_ALLREDUCE, 8, 0, sizes[k], NULL, a, err, sizeof err), 0);
            int rc = run_symbolic(&p, err, sizeof err);
            if (rc) fprintf(stderr, "\n  %s: %s\n", files[i], err);
            CU_ASSERT_EQUAL(rc, 0);
        }
        /* another group size is refused with the reason */
        CU_ASSERT_EQUAL(coll_plan_init(&p, OG_ALLREDUCE, 4, 0, 1 << 20, NULL, a, err, sizeof err), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "for 8 ranks, not 4"));
    }
    /* a program that is not an all-reduce is not run as one */
    snprintf(path, sizeof path, "../shared/data/traces/msccl/msccl-tools_alltonext_2in.xml");
    CU_ASSERT_EQUAL(coll_msccl_use(path, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "only allreduce programs"));
}

/* Add x to the entries of xs for its peer (bytes summed), or append it. */
static void merge_into(coll_xfer *xs, int *nx, const coll_xfer *x)
{
    for (int i = 0; i < *nx; i++)
        if (xs[i].peer == x->peer) {
            xs[i].bytes += x->bytes;
            return;
        }
    xs[(*nx)++] = *x;
}

/* An algorithm's own merged view (coll_algo.merged) lists the same entries
 * in the same order as merging its steps one by one, which is what the
 * engine and the analytical cost did before it had one: the pipelined flows
 * and their posting order, hence every time, stay bit-identical. Tree, PAT
 * and ring (channels on multi-node topologies) on up to 80 members (nodes of 1-4, NVLS), every size class (1 to 64
 * tree chunks), several roots. */
static void merged_as_steps(const char *name, og_coll coll, int *checked)
{
    const int64_t sizes[] = {0, 1, 1000, 1 << 20, 12345679, (int64_t)1 << 30, ((int64_t)1 << 30) + 77};
    int algo = -1;
    coll_proto proto;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(coll_algo_parse(name, coll, &algo, &proto, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll_algo_get(algo)->merged);
    for (int n = 2; n <= 80; n += n < 20 ? 1 : 7)
        for (int t = 0; t <= 7; t++) {
            coll_topo *tp = make_topo(n, t);
            if (t && !tp) continue;
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (int root = 0; root < n; root += n / 3 + 1) {
                    coll_plan p;
                    if (coll_algo_get(algo)->unfit && coll_plan_init_topo(&p, coll, n, root, sizes[si], NULL, algo, tp, err, sizeof err) < 0)
                        break; /* the topology rules it out (nvlstree: one member per node) */
                    CU_ASSERT_EQUAL_FATAL(coll_plan_init_topo(&p, coll, n, root, sizes[si], NULL, algo, tp, err, sizeof err), 0);
                    coll_step *m = coll_step_new(p.merged_width + 1), *w = coll_step_new(p.merged_width + 1);
                    coll_step *st = coll_step_new(p.width + 1);
                    for (int me = 0; me < n; me++) {
                        coll_plan_merged(&p, me, m);
                        w->nsend = w->nrecv = 0;
                        for (int s = 0; s < p.nsteps; s++) {
                            coll_plan_step(&p, me, s, st);
                            for (int i = 0; i < st->nsend; i++) merge_into(w->send, &w->nsend, &st->send[i]);
                            for (int i = 0; i < st->nrecv; i++) merge_into(w->recv, &w->nrecv, &st->recv[i]);
                        }
                        int same = m->nsend == w->nsend && m->nrecv == w->nrecv;
                        for (int i = 0; same && i < m->nsend + m->nrecv; i++) {
                            const coll_xfer *a = i < m->nsend ? &m->send[i] : &m->recv[i - m->nsend];
                            const coll_xfer *b = i < w->nsend ? &w->send[i] : &w->recv[i - w->nsend];
                            same = a->peer == b->peer && a->bytes == b->bytes && a->reduce == b->reduce;
                        }
                        if (!same)
                            fprintf(stderr, "%s %s n=%d topo=%d root=%d size=%lld rank %d: merged view differs\n", name,
                                    og_coll_name(coll), n, t, root, (long long)sizes[si], me);
                        CU_ASSERT_FATAL(same);
                        (*checked)++;
                    }
                    coll_step_free(m);
                    coll_step_free(w);
                    coll_step_free(st);
                    if (coll != OG_BROADCAST && coll != OG_REDUCE) break; /* root matters only there */
                }
            coll_topo_free(tp);
        }
}

static void test_merged_as_steps(void)
{
    int checked = 0;
    merged_as_steps("tree", OG_ALLREDUCE, &checked);
    merged_as_steps("tree", OG_BROADCAST, &checked);
    merged_as_steps("tree", OG_REDUCE, &checked);
    merged_as_steps("pat", OG_ALLGATHER, &checked);
    merged_as_steps("pat", OG_REDUCESCATTER, &checked);
    merged_as_steps("ring", OG_ALLREDUCE, &checked);
    merged_as_steps("ring", OG_ALLGATHER, &checked);
    merged_as_steps("ring", OG_REDUCESCATTER, &checked);
    int before = checked;
    merged_as_steps("nvlstree", OG_ALLREDUCE, &checked);
    CU_ASSERT(checked - before > 2000);
    CU_ASSERT(checked > 10000);
}

/* The memo of merged views (coll_plan_merged_phys) keeps one set of views
 * for a plan whatever its protocol: every algorithm with a merged view, on
 * multi-node topologies with and without NVLS, asked with each protocol in
 * turn (as the selection's probes ask), gives the views of the memo off. */
static void test_views_across_protocols(void)
{
    const char *names[] = {"ring", "tree", "pat", "nvlstree", "nvls", "collnet_direct", "collnet_chain"};
    const og_coll colls[] = {OG_ALLREDUCE, OG_ALLGATHER, OG_REDUCESCATTER, OG_BROADCAST};
    char err[TS_ERRLEN];
    int checked = 0;
    for (int t = 1; t <= 7; t++) {
        coll_topo *tp = make_topo(24, t);
        if (!tp) continue;
        for (size_t a = 0; a < sizeof names / sizeof names[0]; a++)
            for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
                int algo = -1;
                coll_proto pr;
                coll_plan p;
                if (coll_algo_parse(names[a], colls[c], &algo, &pr, err, sizeof err) < 0) continue;
                if (coll_plan_init_topo(&p, colls[c], 24, 5, 12345679, NULL, algo, tp, err, sizeof err) < 0) continue;
                /* memo on: each protocol in turn reads the views (the
                 * first fills the memo, the others read it) */
                coll_step *m[COLL_NPROTOS][24], *w = coll_step_new(p.merged_width + 1);
                coll_view_memo(1);
                for (int k = 0; k < COLL_NPROTOS; k++) {
                    p.proto = (coll_proto)k;
                    for (int me = 0; me < p.n; me++) {
                        m[k][me] = coll_step_new(p.merged_width + 1);
                        coll_plan_merged_phys(&p, me, m[k][me]);
                    }
                }
                coll_view_memo(0);
                for (int k = 0; k < COLL_NPROTOS; k++) {
                    p.proto = (coll_proto)k;
                    for (int me = 0; me < p.n; me++) {
                        const coll_step *v = m[k][me];
                        coll_plan_merged_phys(&p, me, w);
                        int same = v->nsend == w->nsend && v->nrecv == w->nrecv;
                        for (int i = 0; same && i < v->nsend + v->nrecv; i++) {
                            const coll_xfer *a = i < v->nsend ? &v->send[i] : &v->recv[i - v->nsend];
                            const coll_xfer *b = i < w->nsend ? &w->send[i] : &w->recv[i - w->nsend];
                            same = a->peer == b->peer && a->bytes == b->bytes && a->chunk == b->chunk &&
                                   a->nchunk == b->nchunk && a->reduce == b->reduce;
                        }
                        CU_ASSERT_FATAL(same);
                        coll_step_free(m[k][me]);
                        checked++;
                    }
                }
                coll_step_free(w);
            }
        coll_topo_free(tp);
    }
    coll_view_memo(1);
    CU_ASSERT(checked > 1000);
}

void suite_coll(void)
{
    test_add_suite("coll",
                   "all-reduce schedules are correct, n=1..33", test_allreduce,
                   "all-gather schedules are correct, n=1..33", test_allgather,
                   "reduce-scatter schedules are correct, n=1..33", test_reducescatter,
                   "broadcast schedules are correct, every root", test_broadcast,
                   "reduce schedules are correct, every root", test_reduce,
                   "all-to-all schedules are correct, n=1..33", test_alltoall,
                   "barrier schedules are correct, n=1..33", test_barrier,
                   "all-to-allv sends every block once with its size", test_alltoallv,
                   "bad algorithm names and plans", test_errors, "msccl programs checked symbolically", test_msccl_programs,
                   "nccl-tests busbw factors", test_busbw_factors,
                   "selection sees both tiers of the network", test_select_two_tiers,
                   "automatic selection of algorithm and protocol", test_selection,
                   "tree, pat, ring, nvlstree: merged view equals the merged steps, in order", test_merged_as_steps,
                   "merged views kept across protocols equal the uncached ones", test_views_across_protocols,
                   NULL);
}
