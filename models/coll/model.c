/* What the cost model derives from its parameters (coll_params.h) for one
 * plan: the call's software latency in NCCL's closed forms and the wire bytes
 * of a transfer. The engine, the analytical cost and the selection share them,
 * so every fidelity counts latency and protocol overheads alike. */
#include "coll_algos.h"
#include "coll_params.h"

coll_family coll_family_of(int algo)
{
    const coll_algo *a = coll_algo_get(algo);
    return a ? (coll_family)a->family : COLL_FAM_MPI;
}

static int log2_floor(int n)
{
    int k = 0;
    while ((2 << k) <= n) k++;
    return k;
}

double coll_call_latency(const coll_plan *p) { return coll_call_latency_with(p, coll_params_get()); }

double coll_call_latency_with(const coll_plan *p, const coll_params *q)
{
    if (p->n < 2 || p->nsteps == 0) return 0;
    coll_family fam = coll_family_of(p->algo);
    coll_proto pr = p->proto;
    int n = p->n, M = p->topo ? p->topo->nnodes : n, L = n / M;
    double intra = q->hop_lat[q->intra_tier][fam][pr], inter = q->hop_lat[COLL_TIER_NIC][fam][pr];
    double own = M > 1 ? inter : intra; /* a step that may cross nodes */
    int twice = p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER, steps = 0, xsteps = 0;
    double lat;
    switch (fam) {
    case COLL_FAM_RING:
        if (p->coll == OG_BROADCAST || p->coll == OG_REDUCE) { /* the chain: n - 1 hops, M - 1 of them between nodes */
            steps = n - 1;
            xsteps = M - 1;
        } else {
            steps = (twice ? 2 : 1) * (n - 1);
            xsteps = M > 1 ? (twice ? 2 : 1) * (M - 1) : 0;
        }
        lat = (steps - xsteps) * intra + xsteps * inter;
        break;
    case COLL_FAM_TREE: /* the chain inside the node, the tree across nodes: up, and down for all-reduce */
        lat = (twice ? 2 : 1) * ((L - 1) * intra + log2_floor(M) * inter);
        break;
    case COLL_FAM_NVLS: lat = intra + (M > 1 ? inter : 0); break;
    case COLL_FAM_NVLSTREE: lat = intra + 2 * log2_floor(M) * inter; break;
    case COLL_FAM_COLLNET: lat = 2 * (L - 1) * intra + inter; break;
    case COLL_FAM_PAT: lat = n * own; break; /* NCCL: a part still linear in the ranks */
    case COLL_FAM_P2P: lat = (L - 1) * intra + (n - L) * inter; break; /* one send/recv round per peer */
    default: lat = p->nsteps * own; break;   /* MPI-style: every step */
    }
    return q->base_lat[fam][pr] + lat;
}

double coll_call_tail(const coll_plan *p, double alpha, int step)
{
    if (p->n < 2 || p->nsteps == 0) return 0;
    const coll_params *q = coll_params_get();
    double base = q->base_lat[coll_family_of(p->algo)][p->proto], hops = coll_call_latency_with(p, q) - base;
    double wire = step ? p->nsteps * alpha : (p->nsteps - 1) * alpha;
    return base + (step ? (hops > wire ? hops - wire : 0) : (hops > wire ? hops : wire));
}

double coll_call_time(const coll_plan *p, double gpu)
{
    if (p->n < 2 || p->nsteps == 0) return gpu;
    double l = coll_params_get()->launch;
    return gpu > l ? gpu : l;
}

int64_t coll_plan_wire_bytes(const coll_plan *p, int64_t bytes)
{
    return coll_plan_wire_bytes_with(p, bytes, coll_params_get());
}

int64_t coll_plan_wire_bytes_with(const coll_plan *p, int64_t bytes, const coll_params *q)
{
    if (bytes <= 0) return bytes;
    coll_family fam = coll_family_of(p->algo);
    double f = q->proto_bw[fam][p->proto], scale = f > 0 ? 1 / f : 1;
    /* Channels: a call too small to give every channel its minimum runs on
     * fewer channels and gets their share of the bandwidth. */
    if (q->max_channels > 1 && q->chan_bytes[p->proto] > 0 && fam != COLL_FAM_P2P && fam != COLL_FAM_MPI) {
        /* NCCL scales the ring's LL threshold by the rank count */
        double per = q->chan_bytes[p->proto] * (fam == COLL_FAM_RING && p->proto == COLL_LL ? p->n : 1);
        double nc = (double)p->bytes / per;
        if (nc < 1) nc = 1;
        if (nc < q->max_channels) scale *= q->max_channels / nc;
    }
    return scale == 1 ? bytes : (int64_t)((double)bytes * scale + 0.5);
}
