/* The collective algorithm table, the automatic selection policy and the plan
 * and step plumbing every algorithm shares. */
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_algos.h"
#include "coll_params.h"
#include "msccl.h"
#include "util.h"

#define BIT(c) (1u << (c))

static const coll_algo algos[] = {
    {"ring", "ring: reduce-scatter then all-gather around the group (NCCL Ring)",
     BIT(OG_ALLREDUCE) | BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER) | BIT(OG_BARRIER),
     coll_ring_setup, coll_ring_step, coll_ring_merged, NULL, COLL_TUNER_YES, COLL_FAM_RING},

    {"chain", "pipelined chain from the root (broadcast) or towards it (reduce)",
     BIT(OG_BROADCAST) | BIT(OG_REDUCE), coll_chain_setup, coll_chain_step, NULL, NULL, COLL_TUNER_YES, COLL_FAM_RING},

    {"pairwise", "pairwise exchange: step s sends to rank+s and receives from rank-s",
     BIT(OG_ALLTOALL) | BIT(OG_ALLTOALLV), coll_pairwise_setup, coll_pairwise_step, NULL, NULL, COLL_TUNER_NO, COLL_FAM_P2P},

    {"direct", "direct all-to-all: every peer at once, one step",
     BIT(OG_ALLTOALL) | BIT(OG_ALLTOALLV), coll_direct_setup, coll_direct_step, coll_direct_merged, NULL, COLL_TUNER_YES, COLL_FAM_P2P},

    {"tree", "double binary tree, pipelined (NCCL Tree)",
     BIT(OG_ALLREDUCE) | BIT(OG_BROADCAST) | BIT(OG_REDUCE), coll_tree_setup, coll_tree_step, coll_tree_merged, NULL, COLL_TUNER_YES, COLL_FAM_TREE},

    {"rhd", "recursive doubling (all-reduce, all-gather) / halving (reduce-scatter)",
     BIT(OG_ALLREDUCE) | BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER), coll_rhd_setup, coll_rhd_step, NULL, NULL, COLL_TUNER_NO, COLL_FAM_MPI},

    {"rabenseifner", "recursive-halving reduce-scatter then recursive-doubling all-gather",
     BIT(OG_ALLREDUCE), coll_rab_setup, coll_rab_step, NULL, NULL, COLL_TUNER_NO, COLL_FAM_MPI},

    {"bruck", "Bruck: log2(n) steps of distance 2^k (all-gather, all-to-all)",
     BIT(OG_ALLGATHER) | BIT(OG_ALLTOALL), coll_bruck_setup, coll_bruck_step, NULL, NULL, COLL_TUNER_NO, COLL_FAM_MPI},

    {"dissemination", "dissemination barrier: log2(n) rounds of distance 2^k",
     BIT(OG_BARRIER), coll_bruck_setup, coll_bruck_step, NULL, NULL, COLL_TUNER_YES, COLL_FAM_MPI},

    {"pat", "parallel aggregated trees (NCCL PAT): log2(n) steps, one rank per node",
     BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER), coll_pat_setup, coll_pat_step, coll_pat_merged, NULL, COLL_TUNER_ONE_PER_NODE, COLL_FAM_PAT},

    {"hierarchical", "ring reduce-scatter in the node, ring all-reduce per rail across nodes, all-gather in the node",
     BIT(OG_ALLREDUCE), coll_hier_setup, coll_hier_step, NULL, coll_hier_unfit, COLL_TUNER_NO, COLL_FAM_MPI},

    /* Not for the tuner: NCCL runs no hierarchical all-gather or
     * reduce-scatter (its rings cross the nodes rail by rail instead); forced,
     * they model PCCL-like libraries (docs/collectives.md). */
    {"hierarchical", "ring per rail across nodes, then ring inside the node (all-gather; reduce-scatter mirrored)",
     BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER), coll_hierag_setup, coll_hierag_step, coll_hierag_merged,
     coll_hier_unfit, COLL_TUNER_NO, COLL_FAM_MPI},

    {"hier-rd", "recursive doubling per rail across nodes, then ring inside the node (PCCL-like all-gather; "
     "reduce-scatter mirrored, halving)",
     BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER), coll_hierrd_setup, coll_hierrd_step, coll_hierrd_merged,
     coll_hier_unfit, COLL_TUNER_NO, COLL_FAM_MPI},

    {"nvls", "NVSwitch in-switch reduction inside one node (NCCL NVLS)",
     BIT(OG_ALLREDUCE) | BIT(OG_ALLGATHER) | BIT(OG_REDUCESCATTER), coll_nvls_setup, coll_nvls_step, NULL,
     coll_nvls_unfit, COLL_TUNER_YES, COLL_FAM_NVLS},

    {"nvlstree", "NVLS inside nodes, binary tree per local rank across nodes (NCCL NVLS_TREE)",
     BIT(OG_ALLREDUCE), coll_nvlstree_setup, coll_nvlstree_step, coll_nvlstree_merged, coll_nvlstree_unfit, COLL_TUNER_YES, COLL_FAM_NVLSTREE},

    {"collnet", "in-network reduction by SHARP switches across nodes, rings inside them (NCCL CollNet)",
     BIT(OG_ALLREDUCE), coll_collnet_setup, coll_collnet_step, NULL, coll_collnet_unfit, COLL_TUNER_YES, COLL_FAM_COLLNET},

    {"msccl", "an MSCCL algorithm XML program (--algo msccl:FILE), its sends in lock-step rounds",
     BIT(OG_ALLREDUCE), coll_msccl_setup, coll_msccl_step, NULL, coll_msccl_unfit, COLL_TUNER_NO, COLL_FAM_MPI},
};
#define NALGOS ((int)(sizeof algos / sizeof algos[0]))

int coll_nalgos(void) { return NALGOS; }

const coll_algo *coll_algo_get(int id) { return id >= 0 && id < NALGOS ? &algos[id] : NULL; }

int coll_algo_find(const char *name, og_coll coll, char *err, size_t errlen)
{
    for (int i = 0; i < NALGOS; i++)
        if (strcmp(algos[i].name, name) == 0 && (algos[i].colls & BIT(coll))) return i;
    char list[256] = "";
    for (int i = 0; i < NALGOS; i++) {
        if (!(algos[i].colls & BIT(coll))) continue;
        if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, algos[i].name, sizeof list - strlen(list) - 1);
    }
    return ts_err(err, errlen, "unknown algorithm '%s' for %s (valid: %s)", name,
                  og_coll_name(coll), list);
}

int coll_algo_parse(const char *spec, og_coll coll, int *algo, coll_proto *proto, char *err, size_t errlen)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, spec, len);
    name[len] = 0;
    *proto = COLL_PROTO_AUTO;
    if (colon) {
        int pr = coll_proto_from_name(colon + 1);
        if (pr < 0)
            return ts_err(err, errlen, "unknown protocol '%s' in '%s' (valid: simple, ll128, ll)", colon + 1,
                          spec);
        *proto = pr;
    }
    *algo = coll_algo_find(name, coll, err, errlen);
    return *algo < 0 ? -1 : 0;
}

void coll_hw_from_routes(coll_hw *hw, int n, const coll_topo *topo, coll_route_fn route, void *ctx)
{
    hw->topo = topo;
    hw->inter_alpha = hw->inter_bw = 0;
    if (n < 2) return;
    int same = -1, other = -1;
    for (int j = 1; j < n && (same < 0 || other < 0); j++) {
        int on_same = topo && topo->node[j] == topo->node[0];
        if (on_same && same < 0) same = j;
        if (!on_same && other < 0) other = j;
    }
    if (same >= 0) route(ctx, 0, same, &hw->alpha, &hw->bw);
    if (other >= 0) route(ctx, 0, other, &hw->inter_alpha, &hw->inter_bw);
    if (same < 0) {
        hw->alpha = hw->inter_alpha;
        hw->bw = hw->inter_bw;
    }
}

/* The GPU's time of a plan under parameters q (the estimate without the
 * launch floor): with the tuner's parameters, what the selection compares,
 * as NCCL's tuner does. */
/* Wire bytes rank me sends and receives, [inside its node, to other nodes]. */
/* ws: coll_plan_wire_scale_with(p, q), computed once per plan */
static void rank_bytes(const coll_plan *p, double ws, coll_step *m, int me, int tiers, int64_t out[2], int64_t in[2])
{
    coll_plan_merged_phys(p, me, m);
    for (int j = 0; j < m->nsend; j++) {
        int peer = m->send[j].peer, far = tiers && peer < p->n && p->topo->node[peer] != p->topo->node[me];
        out[far] += coll_plan_wire_apply(m->send[j].bytes, ws);
    }
    for (int j = 0; j < m->nrecv; j++) {
        int peer = m->recv[j].peer, far = tiers && peer < p->n && p->topo->node[peer] != p->topo->node[me];
        in[far] += coll_plan_wire_apply(m->recv[j].bytes, ws);
    }
}

/* gpu_estimate's view of a member, kept from one call to the next (the
 * selection estimates every algorithm and protocol of thousands of groups
 * in a search): grown, never shrunk. */
static struct {
    coll_step m;
    int cap;
} est;

static coll_step *est_view(int cap)
{
    if (cap > est.cap) {
        est.m.send = ts_realloc(est.m.send, cap * sizeof *est.m.send);
        est.m.recv = ts_realloc(est.m.recv, cap * sizeof *est.m.recv);
        est.cap = cap;
    }
    est.m.nsend = est.m.nrecv = 0;
    return &est.m;
}

static double gpu_estimate(const coll_plan *p, const coll_hw *hw, const coll_params *q, double bw_scale, double lat_scale,
                           double cap)
{
    if (p->nsteps == 0) return 0;
    int tiers = p->topo && hw->inter_bw > 0;
    int probe[4] = {0, p->n / 2, p->n - 1, p->root};
    double worst = 0;
    int crosses = 0;
    /* NCCL's tuner prices a tree on up to 2 nodes at its graph's bwIntra
     * (tuning.cc ncclTopoTuneModel: bw = nNodes <= 2 ? bwIntra : bwInter),
     * whatever NICs the trees leave by: there its NICs do not bound the
     * tuner's tree, the per-channel ceilings (cap) do. */
    int intra_only = cap > 0 && tiers && coll_family_of(p->algo) == COLL_FAM_TREE && p->topo->nnodes == 2;
    coll_step *m = est_view(p->merged_width + 1);
    double ws = coll_plan_wire_scale_with(p, q);
    for (int i = 0; i < 4; i++) {
        int me = probe[i];
        int64_t out[2] = {0, 0}, in[2] = {0, 0}; /* [inside the node, to other nodes] */
        rank_bytes(p, ws, m, me, tiers, out, in);
        if (tiers && q->nic_gpus > 1 && p->topo->nnodes > 2) {
            /* GPUs sharing a NIC: the node's traffic across nodes over its
             * NICs, when that is more than the rank's own */
            int k = p->topo->node[me], L = p->topo->first[k + 1] - p->topo->first[k];
            int nics = (L + q->nic_gpus - 1) / q->nic_gpus;
            int64_t so = 0, si = 0;
            for (int x = p->topo->first[k]; x < p->topo->first[k + 1]; x++) {
                int64_t o[2] = {0, 0}, r[2] = {0, 0};
                rank_bytes(p, ws, m, p->topo->order[x], tiers, o, r);
                so += o[1], si += r[1];
            }
            if (so / nics > out[1]) out[1] = so / nics;
            if (si / nics > in[1]) in[1] = si / nics;
        }
        for (int t = 0; t < 2; t++) {
            double b = t ? hw->inter_bw : hw->bw;
            int64_t most = out[t] > in[t] ? out[t] : in[t];
            if (most > 0 && !(t && intra_only) && (double)most / b > worst) worst = (double)most / b;
            if (t && most > 0) crosses = 1;
        }
    }
    /* NCCL's per-channel ceilings (coll_nccl_bw_cap): the bus bytes at the
     * capped bus bandwidth, where that is slower than the links */
    if (cap > 0 && coll_nccl_bus_bytes(p) / cap > worst) worst = coll_nccl_bus_bytes(p) / cap;
    double alpha = crosses ? hw->inter_alpha : hw->alpha;
    /* the pipelined tail (coll_call_tail) under q */
    double base = q->base_lat[algos[p->algo].family][p->proto], hops = coll_call_latency_with(p, q) - base;
    double wire = coll_plan_wire_lat(p, alpha, hw->alpha, 0);
    double xfer = worst / bw_scale, node = coll_ring_node_excess(p, q);
    return lat_scale * (base + (hops > wire ? hops : wire)) + alpha + xfer + (node > xfer ? node - xfer : 0);
}

/* RCCL's tuner: its tuning model's ringCorrectionFactor on the bandwidth
 * (coll_ring_correction; 1 without rccl_tuning). NCCL's tuner's corrections to its own model (src/graph/tuning.cc,
 * ncclTopoGetAlgoTime, 2.19-2.26): the tree all-reduce's bandwidth times
 * treeCorrectionFactor (coll_tree_correction), and the latency of a Simple
 * ring all-reduce across nodes times 1.4 on compute capability 8.0 and later
 * ("plateau effect of ring"; 1.9 before). Only the selection sees them. The
 * NVLS-tree's pipeline efficiency is in the wire bytes, which the run and
 * the selection share, but NCCL's tuner does not know it: taken back out. */
static void nccl_corrections(const coll_plan *p, const coll_params *q, double *bw_scale, double *lat_scale)
{
    *bw_scale = *lat_scale = 1;
    if (q->lib == COLL_LIB_RCCL && !q->tuner_own) {
        *bw_scale = coll_ring_correction(p, q);
        return;
    }
    /* a tuner of one's own (tuner_own: studies, test fixtures) is not NCCL's */
    if (q->lib != COLL_LIB_NCCL || q->tuner_own || p->coll != OG_ALLREDUCE) return;
    *bw_scale = coll_tree_correction(p, q) / coll_nvlstree_efficiency(p, q);
    if (algos[p->algo].family == COLL_FAM_RING && p->proto == COLL_SIMPLE && p->topo && p->topo->nnodes > 1)
        *lat_scale = 1.4;
}

double coll_estimate_hw(const coll_plan *p, const coll_hw *hw)
{
    return coll_call_time(p, gpu_estimate(p, hw, coll_params_get(), 1, 1, 0));
}

double coll_estimate(const coll_plan *p, double alpha, double bw)
{
    coll_hw hw = {alpha, bw, NULL, 0, 0};
    return coll_estimate_hw(p, &hw);
}

static const coll_hw dflt_hw = {5e-6, 25e9, NULL, 0, 0};

/* The links as RCCL's tuner sees them. It prices a protocol at the topology
 * graph's speeds (ROCm/rccl src/graph/tuning.cc ncclTopoTuneModel: busBw =
 * graph nChannels x bwInter, or bwIntra on up to 2 nodes, times the tuning
 * model's bwRatio and nothing else), the search's nominal xGMI and NIC
 * speeds, not what the links achieve; the run's links carry the cluster's
 * achieved fraction (bw_frac, platforms/cluster.c), so its tuner's links are
 * those divided by it. On 64 Frontier nodes that is where LL and Simple
 * cross: RCCL's own closed form (tuning_model_3) takes LL for a 16 MiB
 * reduce_scatter while nChannels x bwInter > 97 GB/s, which the node's 4 x 25
 * GB/s is and its achieved 4 x 20 is not (docs/accuracy.md, "h-frontscale").
 * NCCL's tuner, whose per-channel ceilings the selection applies
 * (coll_nccl_bw_cap), and a tuner of one's own see the run's links. */
static coll_hw tuner_links(const coll_hw *hw, const coll_params *q)
{
    coll_hw h = *hw;
    const coll_params *c = coll_params_get();
    if (q->lib != COLL_LIB_RCCL || q->tuner_own) return h;
    double fi = c->bw_frac[c->intra_tier], fn = c->bw_frac[COLL_TIER_NIC];
    if (fi > 0) h.bw /= fi;
    if (fn > 0) h.inter_bw /= fn;
    return h;
}

/* Estimated time of algorithm a with protocol pr (< 0: cannot run, or the
 * library does not run a with pr). */
static double estimate(og_coll coll, int n, int64_t bytes, int a, int pr, const coll_hw *hw)
{
    const coll_params *q = coll_params_tuner();
    if (q->proto_bw[algos[a].family][pr] <= 0) return -1;
    coll_plan p;
    if (coll_plan_init_topo(&p, coll, n, 0, bytes, NULL, a, hw->topo, NULL, 0) < 0) return -1;
    p.proto = pr;
    double bs, ls;
    nccl_corrections(&p, q, &bs, &ls);
    coll_hw h = tuner_links(hw, q);
    return gpu_estimate(&p, &h, q, bs, ls, coll_nccl_bw_cap(&p, q));
}

coll_proto coll_best_proto(og_coll coll, int n, int64_t bytes, int algo, const coll_hw *hw)
{
    if (!hw) hw = &dflt_hw;
    coll_proto best = COLL_SIMPLE;
    double tbest = -1;
    if (algo < 0 || algo >= NALGOS || n < 2 || coll == OG_ALLTOALLV) return best;
    for (int pr = 0; pr < COLL_NPROTOS; pr++) {
        double t = estimate(coll, n, bytes, algo, pr, hw);
        if (t >= 0 && (tbest < 0 || t < tbest * (1 - 1e-9))) tbest = t, best = pr;
    }
    return best;
}

int coll_select(og_coll coll, int n, int64_t bytes, const coll_hw *hw, coll_proto *proto)
{
    if (!hw) hw = &dflt_hw;
    int best = -1;
    double tbest = 0;
    *proto = COLL_SIMPLE;
    for (int a = 0; a < NALGOS; a++) {
        if (!(algos[a].colls & BIT(coll))) continue;
        if (algos[a].tuner == COLL_TUNER_NO) continue;
        if (algos[a].tuner == COLL_TUNER_ONE_PER_NODE && hw->topo && hw->topo->nnodes != n) continue;
        if (n == 1 || coll == OG_ALLTOALLV) return a; /* nothing to choose from sizes */
        for (int pr = 0; pr < COLL_NPROTOS; pr++) {
            double t = estimate(coll, n, bytes, a, pr, hw);
            if (t < 0) continue;
            if (best < 0 || t < tbest * (1 - 1e-9)) {
                best = a;
                tbest = t;
                *proto = pr;
            }
        }
    }
    return best;
}

int coll_plan_init(coll_plan *p, og_coll coll, int n, int root, int64_t bytes,
                   const int64_t *vbytes, int algo, char *err, size_t errlen)
{
    return coll_plan_init_topo(p, coll, n, root, bytes, vbytes, algo, NULL, err, errlen);
}

int coll_plan_init_topo(coll_plan *p, og_coll coll, int n, int root, int64_t bytes, const int64_t *vbytes,
                        int algo, const coll_topo *topo, char *err, size_t errlen)
{
    if (n < 1) return ts_err(err, errlen, "%s on a group of %d ranks", og_coll_name(coll), n);
    if (bytes < 0) return ts_err(err, errlen, "%s of negative size %lld", og_coll_name(coll),
                                 (long long)bytes);
    if (root < 0 || root >= n)
        return ts_err(err, errlen, "%s root %d outside the group of %d", og_coll_name(coll),
                      root, n);
    if (coll == OG_ALLTOALLV && !vbytes)
        return ts_err(err, errlen, "alltoallv without per-rank send sizes");
    if (topo && topo->n != n)
        return ts_err(err, errlen, "%s: topology of %d members for a group of %d", og_coll_name(coll), topo->n, n);
    coll_proto proto = COLL_SIMPLE;
    coll_hw hw = {5e-6, 25e9, topo, 0, 0};
    if (algo < 0) algo = coll_select(coll, n, bytes, &hw, &proto);
    if (algo < 0 || algo >= NALGOS || !(algos[algo].colls & BIT(coll)))
        return ts_err(err, errlen, "no algorithm implements %s", og_coll_name(coll));
    memset(p, 0, sizeof *p);
    p->coll = coll;
    p->n = n;
    p->root = root;
    p->bytes = bytes;
    p->vbytes = vbytes;
    p->algo = algo;
    p->proto = proto;
    p->nchunks = 1;
    p->topo = topo;
    const char *why = algos[algo].unfit ? algos[algo].unfit(p) : NULL;
    if (why) return ts_err(err, errlen, "%s: algorithm '%s' %s", og_coll_name(coll), algos[algo].name, why);
    if (n > 1) algos[algo].setup(p);
    return 0;
}

coll_step *coll_step_new(int cap)
{
    coll_step *st = ts_calloc(1, sizeof *st);
    st->send = ts_calloc(cap, sizeof *st->send);
    st->recv = ts_calloc(cap, sizeof *st->recv);
    return st;
}

void coll_step_free(coll_step *st)
{
    if (!st) return;
    free(st->send);
    free(st->recv);
    free(st);
}

void coll_plan_step(const coll_plan *p, int me, int s, coll_step *out)
{
    out->nsend = out->nrecv = 0;
    algos[p->algo].step(p, me, s, out);
}

/* Add x's bytes to the entry of xs (nx entries) for the same peer, or append it. */
static void merge_xfer(coll_xfer *xs, int *nx, const coll_xfer *x)
{
    for (int i = 0; i < *nx; i++)
        if (xs[i].peer == x->peer) {
            if (xs[i].bytes >= 0) xs[i].bytes = x->bytes < 0 ? -1 : xs[i].bytes + x->bytes;
            return;
        }
    xs[(*nx)++] = (coll_xfer){x->peer, x->bytes, 0, 0, x->reduce};
}

void coll_step_add_merged(coll_step *st, int send, const coll_xfer *x)
{
    if (send) merge_xfer(st->send, &st->nsend, x);
    else merge_xfer(st->recv, &st->nrecv, x);
}

void coll_step_merge_peers(coll_step *st)
{
    int ns = st->nsend, nr = st->nrecv;
    st->nsend = st->nrecv = 0;
    for (int i = 0; i < ns; i++) merge_xfer(st->send, &st->nsend, &st->send[i]);
    for (int i = 0; i < nr; i++) merge_xfer(st->recv, &st->nrecv, &st->recv[i]);
}

void coll_plan_merged(const coll_plan *p, int me, coll_step *out)
{
    out->nsend = out->nrecv = 0;
    if (p->nsteps == 0) return;
    if (algos[p->algo].merged) {
        algos[p->algo].merged(p, me, out);
        return;
    }
    coll_step *st = coll_step_new(p->width);
    for (int s = 0; s < p->nsteps; s++) {
        coll_plan_step(p, me, s, st);
        for (int i = 0; i < st->nsend; i++) merge_xfer(out->send, &out->nsend, &st->send[i]);
        for (int i = 0; i < st->nrecv; i++) merge_xfer(out->recv, &out->nrecv, &st->recv[i]);
    }
    coll_step_free(st);
}

int64_t coll_chunk_bytes(int64_t bytes, int k, int c)
{
    return bytes / k + (c < bytes % k ? 1 : 0);
}

int64_t coll_chunk_range_bytes(int64_t bytes, int k, int c, int nchunk)
{
    int64_t b = 0;
    for (int i = 0; i < nchunk; i++) b += coll_chunk_bytes(bytes, k, (c + i) % k);
    return b;
}

int coll_check_size(og_coll coll, int n, int64_t bytes, int elsize, char *err, size_t errlen)
{
    int per_rank = coll == OG_ALLGATHER || coll == OG_REDUCESCATTER || coll == OG_ALLTOALL;
    int64_t unit = (int64_t)elsize * (per_rank ? n : 1);
    if (coll == OG_BARRIER || coll == OG_ALLTOALLV || unit <= 0 || bytes % unit == 0) return 0;
    if (per_rank)
        return ts_err(err, errlen, "%s of %lld bytes on %d ranks: not a multiple of %d ranks x %d-byte elements",
                      og_coll_name(coll), (long long)bytes, n, n, elsize);
    return ts_err(err, errlen, "%s of %lld bytes: not a multiple of the %d-byte element", og_coll_name(coll),
                  (long long)bytes, elsize);
}

og_graph *coll_graph(og_coll coll, int n, int64_t bytes, og_dtype dtype, int root, const char *algo)
{
    og_graph *g = og_new(n);
    int *ranks = ts_malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) ranks[i] = i;
    int gid = og_add_group(g, n, ranks);
    for (int r = 0; r < n; r++) {
        og_op *op = og_collective(g, r, 0, coll, gid, bytes, dtype);
        op->root = root;
        if (algo) og_set_algo(op, algo);
    }
    free(ranks);
    return g;
}

double coll_busbw_factor(og_coll coll, int n)
{
    switch (coll) {
    case OG_ALLREDUCE: return 2.0 * (n - 1) / n;
    case OG_ALLGATHER:
    case OG_REDUCESCATTER:
    case OG_ALLTOALL:
    case OG_ALLTOALLV: return (double)(n - 1) / n;
    default: return 1.0;
    }
}
