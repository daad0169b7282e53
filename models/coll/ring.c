/* Ring family: ring all-reduce / all-gather / reduce-scatter (NCCL's Ring) and
 * the pipelined chain used for broadcast and reduce. */
#include "coll_algos.h"

void coll_add_send(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce)
{
    st->send[st->nsend++] = (coll_xfer){peer, bytes, chunk, nchunk, reduce};
}

void coll_add_recv(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce)
{
    st->recv[st->nrecv++] = (coll_xfer){peer, bytes, chunk, nchunk, reduce};
}

void coll_add_range(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce)
{
    if (nchunk <= 0) return;
    int64_t b = coll_chunk_range_bytes(p->bytes, p->nchunks, chunk, nchunk);
    if (send) coll_add_send(st, peer, b, chunk, nchunk, reduce);
    else coll_add_recv(st, peer, b, chunk, nchunk, reduce);
}

void coll_add_wrap(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce)
{
    int k = p->nchunks, first = k - chunk < nchunk ? k - chunk : nchunk;
    coll_add_range(p, st, send, peer, chunk, first, reduce);
    coll_add_range(p, st, send, peer, 0, nchunk - first, reduce);
}

void coll_ring_setup(coll_plan *p)
{
    p->nchunks = p->n;
    p->nsteps = (p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER) ? 2 * (p->n - 1) : p->n - 1;
    p->width = p->merged_width = 1;
}

/* Reduce-scatter step t: after n-1 steps rank me holds chunk me reduced. */
static void rs_step(const coll_plan *p, int me, int t, coll_step *out)
{
    int n = p->n, cs = coll_mod(me - t - 1, n), cr = coll_mod(me - t - 2, n);
    coll_add_send(out, coll_mod(me + 1, n), coll_chunk_bytes(p->bytes, n, cs), cs, 1, 1);
    coll_add_recv(out, coll_mod(me - 1, n), coll_chunk_bytes(p->bytes, n, cr), cr, 1, 1);
}

/* All-gather step t: rank me starts with chunk me. */
static void ag_step(const coll_plan *p, int me, int t, coll_step *out)
{
    int n = p->n, cs = coll_mod(me - t, n), cr = coll_mod(me - t - 1, n);
    coll_add_send(out, coll_mod(me + 1, n), coll_chunk_bytes(p->bytes, n, cs), cs, 1, 0);
    coll_add_recv(out, coll_mod(me - 1, n), coll_chunk_bytes(p->bytes, n, cr), cr, 1, 0);
}

void coll_ring_step(const coll_plan *p, int me, int s, coll_step *out)
{
    switch (p->coll) {
    case OG_ALLGATHER: ag_step(p, me, s, out); break;
    case OG_REDUCESCATTER: rs_step(p, me, s, out); break;
    default: /* all-reduce and barrier: reduce-scatter then all-gather */
        if (s < p->n - 1) rs_step(p, me, s, out);
        else ag_step(p, me, s - (p->n - 1), out);
    }
}

/* Chain: position 0 .. n-1 along the ring; broadcast starts at the root,
 * reduce ends at it. The buffer is cut into n chunks that follow each other
 * down the chain, one hop per step. */
void coll_chain_setup(coll_plan *p)
{
    p->nchunks = p->n;
    p->nsteps = (p->n - 1) + (p->nchunks - 1);
    p->width = p->merged_width = 1;
}

void coll_chain_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n, k = p->nchunks, red = p->coll == OG_REDUCE;
    int pos = red ? coll_mod(me - p->root - 1, n) : coll_mod(me - p->root, n);
    int c = s - pos;
    if (pos < n - 1 && c >= 0 && c < k)
        coll_add_send(out, coll_mod(me + 1, n), coll_chunk_bytes(p->bytes, k, c), c, 1, red);
    c = s - (pos - 1);
    if (pos > 0 && c >= 0 && c < k)
        coll_add_recv(out, coll_mod(me - 1, n), coll_chunk_bytes(p->bytes, k, c), c, 1, red);
}

/* Ring totals per neighbour in closed form, O(1) for any group size: the
 * reduce-scatter part sends every chunk but me and receives every chunk but
 * me-1; the all-gather part sends every chunk but me+1 and receives all but me. */
void coll_ring_merged(const coll_plan *p, int me, coll_step *out)
{
    int n = p->n, next = coll_mod(me + 1, n), prev = coll_mod(me - 1, n);
    int64_t S = p->bytes, snd = 0, rcv = 0;
    if (p->coll != OG_ALLGATHER) {
        snd += S - coll_chunk_bytes(S, n, me);
        rcv += S - coll_chunk_bytes(S, n, coll_mod(me - 1, n));
    }
    if (p->coll != OG_REDUCESCATTER) {
        snd += S - coll_chunk_bytes(S, n, coll_mod(me + 1, n));
        rcv += S - coll_chunk_bytes(S, n, me);
    }
    coll_add_send(out, next, snd, 0, 0, p->coll != OG_ALLGATHER);
    coll_add_recv(out, prev, rcv, 0, 0, p->coll != OG_ALLGATHER);
}
