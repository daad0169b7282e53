/* Bruck family: all-gather and all-to-all in ceil(log2 n) steps of distance
 * 2^k (Bruck et al. 1997), any group size; and the dissemination barrier
 * (Hensgen, Finkel and Manber 1988), which has the same communication pattern. */
#include "coll_algos.h"

void coll_bruck_setup(coll_plan *p)
{
    p->nsteps = coll_log2_ceil(p->n);
    if (p->coll == OG_ALLTOALL) {
        p->nchunks = p->n * p->n;
        p->width = (p->n + 1) / 2;
        p->merged_width = p->nsteps;
    } else if (p->coll == OG_BARRIER) {
        p->nchunks = 1;
        p->width = 1;
        p->merged_width = p->nsteps;
    } else {
        p->nchunks = p->n;
        p->width = 2;
        p->merged_width = p->nsteps;
    }
}

/* All-to-all: the block from o to t travels (t - o) mod n, one power of two
 * per step; at step k it moves +2^k when bit k of its distance is set. */
static void a2a_step(const coll_plan *p, int me, int k, coll_step *out)
{
    int n = p->n, d = 1 << k;
    for (int delta = d; delta < n; delta++) {
        if (!(delta & d)) continue;
        int o = coll_mod(me - (delta & (d - 1)), n), t = coll_mod(o + delta, n);
        coll_add_send(out, coll_mod(me + d, n), coll_chunk_bytes(p->bytes, n, t), o * n + t, 1, 0);
        o = coll_mod(me - d - (delta & (d - 1)), n);
        t = coll_mod(o + delta, n);
        coll_add_recv(out, coll_mod(me - d, n), coll_chunk_bytes(p->bytes, n, t), o * n + t, 1, 0);
    }
}

void coll_bruck_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n, d = 1 << s;
    switch (p->coll) {
    case OG_ALLTOALL: a2a_step(p, me, s, out); break;
    case OG_BARRIER: /* dissemination: what I know goes 2^s ahead */
        coll_add_range(p, out, 1, coll_mod(me + d, n), 0, 1, 1);
        coll_add_range(p, out, 0, coll_mod(me - d, n), 0, 1, 1);
        break;
    default: { /* all-gather: I hold [me, me + d) and pass it 2^s back */
        int cnt = d < n - d ? d : n - d;
        coll_add_wrap(p, out, 1, coll_mod(me - d, n), me, cnt, 0);
        coll_add_wrap(p, out, 0, coll_mod(me + d, n), coll_mod(me + d, n), cnt, 0);
    }
    }
}
