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

/* Channels, as NCCL runs rings across multi-NIC nodes: with a topology of
 * M > 1 nodes of L > 1 members each, L rings (channels) run at once, channel
 * c carrying part c of every rank's segment. In channel c, node k's members
 * follow each other in local order starting at local (c - k) mod L, so the
 * ring leaves node k from local (c - k - 1) and enters node k + 1 at the same
 * local index: every member sends one channel over its own NIC, to its own
 * rail, and the other L - 1 over its node's links to local + 1. Without such
 * a topology: one ring in member order. Chunk m * C + c is part c of member
 * m's segment. */
static int channels(const coll_plan *p)
{
    const coll_topo *t = p->topo;
    return t && t->nnodes > 1 && t->ppn > 1 ? t->ppn : 1;
}

/* The member at ring position pos of channel c, and member me's position. */
static int ring_member(const coll_plan *p, int c, int pos)
{
    const coll_topo *t = p->topo;
    if (channels(p) == 1) return pos;
    int L = t->ppn, k = pos / L;
    return t->order[t->first[k] + coll_mod(c - k + pos % L, L)];
}

static int ring_pos(const coll_plan *p, int c, int me)
{
    const coll_topo *t = p->topo;
    if (channels(p) == 1) return me;
    int L = t->ppn, k = t->node[me];
    return k * L + coll_mod(t->local[me] - (c - k), L);
}

void coll_ring_setup(coll_plan *p)
{
    int C = channels(p);
    p->nchunks = p->n * C;
    p->nsteps = (p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER) ? 2 * (p->n - 1) : p->n - 1;
    p->width = C;
    p->merged_width = C > 1 ? 2 : 1;
}

/* One step of channel c: position pos sends the part of the member k
 * positions behind it to the next position and receives the part k + 1
 * behind from the previous one. Reduce-scatter step t: k = t + 1, adding (after
 * n-1 steps every position holds its own member's part reduced); all-gather
 * step t: k = t, overwriting (every position starts with its member's part). */
static void ring_step(const coll_plan *p, int c, int me, int k, int reduce, coll_step *out)
{
    int n = p->n, C = channels(p), pos = ring_pos(p, c, me);
    int cs = ring_member(p, c, coll_mod(pos - k, n)) * C + c;
    int cr = ring_member(p, c, coll_mod(pos - k - 1, n)) * C + c;
    coll_add_range(p, out, 1, ring_member(p, c, coll_mod(pos + 1, n)), cs, 1, reduce);
    coll_add_range(p, out, 0, ring_member(p, c, coll_mod(pos - 1, n)), cr, 1, reduce);
}

void coll_ring_step(const coll_plan *p, int me, int s, coll_step *out)
{
    /* all-reduce and barrier: reduce-scatter, then all-gather */
    int rs = p->coll == OG_REDUCESCATTER || (p->coll != OG_ALLGATHER && s < p->n - 1);
    int t = rs || p->coll == OG_ALLGATHER ? s : s - (p->n - 1);
    for (int c = 0; c < channels(p); c++) ring_step(p, c, me, rs ? t + 1 : t, rs, out);
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

/* coll_step_add_merged of a transfer of bytes >= 0 (every ring total is):
 * added to the peer's entry, or appended. */
static inline void ring_merge(coll_xfer *xs, int *nx, int peer, int64_t bytes, int reduce)
{
    for (int i = 0; i < *nx; i++)
        if (xs[i].peer == peer) {
            if (xs[i].bytes >= 0) xs[i].bytes += bytes;
            return;
        }
    xs[(*nx)++] = (coll_xfer){peer, bytes, 0, 0, reduce};
}

/* Ring totals per neighbour in closed form, O(channels) for any group size:
 * per channel, the reduce-scatter part sends every part but the member's own
 * and receives every part but its predecessor's; the all-gather part sends
 * every part but its successor's and receives all but its own. Chunk i of
 * the k = n x C holds bytes / k bytes, one more below bytes % k
 * (coll_chunk_bytes); channel c's total over its n chunks m x C + c is n x
 * (bytes / k) plus the m with m x C + c below bytes % k. */
/* Member x's chunks among parts c = 0 .. C-1 of its segment that take one
 * byte of the remainder (chunk x C + c < rem). */
static int64_t rem_parts(int64_t x, int C, int64_t rem)
{
    int64_t k = rem - x * C;
    return k < 0 ? 0 : k > C ? C : k;
}

void coll_ring_merged(const coll_plan *p, int me, coll_step *out)
{
    const coll_topo *t = p->topo;
    int n = p->n, C = channels(p), k = n * C;
    int64_t q = p->bytes / k, rem = p->bytes % k;
    int rs = p->coll != OG_ALLGATHER, ag = p->coll != OG_REDUCESCATTER;
    if (C == 1) {
        int next = coll_mod(me + 1, n), prev = coll_mod(me - 1, n);
        int64_t T = n * q + (rem > 0 ? rem : 0), own = q + (me < rem), snd = 0, rcv = 0;
        if (rs) snd += T - own, rcv += T - (q + (prev < rem));
        if (ag) snd += T - (q + (next < rem)), rcv += T - own;
        ring_merge(out->send, &out->nsend, next, snd, rs);
        ring_merge(out->recv, &out->nrecv, prev, rcv, rs);
        return;
    }
    /* With channels, me sits at place x = (loc + node - c) mod L of its
     * node's stretch of channel c's ring (ring_pos): where 0 < x < L - 1 its
     * neighbours are the node's locals loc + 1 and loc - 1 (mod L), the same
     * in every channel; the ring leaves the node after place L - 1 (channel
     * cn) for the next node kn's local (c - kn) mod L and enters it at place
     * 0 (channel cp) from the previous node kp's local (c - kp - 1) mod L
     * (ring_member of the positions either side). Channel c moves T_c =
     * n q + big_c bytes less each place's own part (q, and one byte more for
     * the parts below rem): a neighbour inside the node gets the sum over
     * every channel but cn (cp), in closed form (the big_c sum to rem, a
     * member's extra bytes to rem_parts), the other node's member channel
     * cn's (cp's); integers, so the same sums the channel-by-channel merge
     * makes, and the entries in the order channel 0 lists them first. */
    int L = t->ppn, node = t->node[me], loc = t->local[me];
    int x0 = coll_mod(loc + node, L), cn = x0 + 1 == L ? 0 : x0 + 1, cp = x0;
    const int *at = t->order + t->first[node];
    int in_next = at[loc + 1 == L ? 0 : loc + 1], in_prev = at[loc == 0 ? L - 1 : loc - 1];
    int kn = node + 1 == t->nnodes ? 0 : node + 1, kp = node == 0 ? t->nnodes - 1 : node - 1;
    int out_next = t->order[t->first[kn] + coll_mod(cn - kn, L)];
    int out_prev = t->order[t->first[kp] + coll_mod(cp - kp - 1, L)];
    int64_t ST = (int64_t)C * n * q + rem; /* the T_c summed */
    int64_t Tn = n * q + (rem > cn ? (rem - cn + C - 1) / C : 0), Tp = n * q + (rem > cp ? (rem - cp + C - 1) / C : 0);
    int64_t own_all = (int64_t)C * q + rem_parts(me, C, rem), own_n = q + ((int64_t)me * C + cn < rem);
    int64_t own_p = q + ((int64_t)me * C + cp < rem);
    int64_t snd_in = 0, snd_out = 0, rcv_in = 0, rcv_out = 0;
    if (rs) {
        snd_in += (ST - Tn) - (own_all - own_n);
        snd_out += Tn - own_n;
        rcv_in += (ST - Tp) - ((int64_t)C * q + rem_parts(in_prev, C, rem) - (q + ((int64_t)in_prev * C + cp < rem)));
        rcv_out += Tp - (q + ((int64_t)out_prev * C + cp < rem));
    }
    if (ag) {
        snd_in += (ST - Tn) - ((int64_t)C * q + rem_parts(in_next, C, rem) - (q + ((int64_t)in_next * C + cn < rem)));
        snd_out += Tn - (q + ((int64_t)out_next * C + cn < rem));
        rcv_in += (ST - Tp) - (own_all - own_p);
        rcv_out += Tp - own_p;
    }
    if (cn == 0) ring_merge(out->send, &out->nsend, out_next, snd_out, rs);
    ring_merge(out->send, &out->nsend, in_next, snd_in, rs);
    if (cn != 0) ring_merge(out->send, &out->nsend, out_next, snd_out, rs);
    if (cp == 0) ring_merge(out->recv, &out->nrecv, out_prev, rcv_out, rs);
    ring_merge(out->recv, &out->nrecv, in_prev, rcv_in, rs);
    if (cp != 0) ring_merge(out->recv, &out->nrecv, out_prev, rcv_out, rs);
}
