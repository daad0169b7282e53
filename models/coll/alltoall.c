/* All-to-all family: pairwise exchange (step s: send to rank+s, receive from rank-s). */
#include "coll_algos.h"

void coll_pairwise_setup(coll_plan *p)
{
    p->nchunks = p->n * p->n;
    p->nsteps = p->n - 1;
    p->width = 1;
    p->merged_width = p->n - 1;
}

void coll_pairwise_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n, dst = (me + s + 1) % n, src = ((me - s - 1) % n + n) % n;
    int64_t sb, rb;
    if (p->coll == OG_ALLTOALLV) {
        sb = p->vbytes[dst];
        rb = -1;
    } else {
        sb = coll_chunk_bytes(p->bytes, n, dst);
        rb = coll_chunk_bytes(p->bytes, n, me);
    }
    coll_add_send(out, dst, sb, me * n + dst, 1, 0);
    coll_add_recv(out, src, rb, src * n + me, 1, 0);
}

/* Direct all-to-all: every transfer posted at once, one step (NCCL's and most
 * MPIs' default for large messages on full-bisection networks). */
void coll_direct_setup(coll_plan *p)
{
    p->nchunks = p->n * p->n;
    p->nsteps = 1;
    p->width = p->merged_width = p->n - 1;
}

void coll_direct_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n;
    (void)s;
    for (int i = 1; i < n; i++) {
        int dst = (me + i) % n, src = ((me - i) % n + n) % n;
        int64_t sb = p->coll == OG_ALLTOALLV ? p->vbytes[dst] : coll_chunk_bytes(p->bytes, n, dst);
        int64_t rb = p->coll == OG_ALLTOALLV ? -1 : coll_chunk_bytes(p->bytes, n, me);
        coll_add_send(out, dst, sb, me * n + dst, 1, 0);
        coll_add_recv(out, src, rb, src * n + me, 1, 0);
    }
}

/* One step, one transfer per peer: the merged view is the step itself. */
void coll_direct_merged(const coll_plan *p, int me, coll_step *out) { coll_direct_step(p, me, 0, out); }
