/* PAT, NCCL's parallel aggregated trees (2.23) for all-gather and
 * reduce-scatter at scale (one rank per node): every rank roots a binomial
 * tree of its chunk; the n trees are aggregated so that each step is one
 * message per rank. All-gather walks distances from the largest power of two
 * below n down to 1 (messages grow as the data spreads); reduce-scatter is its
 * time reversal (distances 1 up, partial sums flowing towards each chunk's
 * owner). ceil(log2 n) steps, (n-1)/n of the data per rank. */
#include "coll_algos.h"

void coll_pat_setup(coll_plan *p)
{
    p->nchunks = p->n;
    p->nsteps = coll_log2_ceil(p->n);
    p->width = p->n / 2 + 1;
    p->merged_width = 2 * p->nsteps;
}

/* Chunks that position q passes on at distance d: those whose tree offset
 * (q - c) mod n is a multiple of 2d with o + d < n. */
static void tree_chunks(const coll_plan *p, coll_step *out, int send, int q, int peer, int d, int reduce)
{
    for (int o = 0; o + d < p->n; o += 2 * d) coll_add_range(p, out, send, peer, coll_mod(q - o, p->n), 1, reduce);
}

void coll_pat_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n, L = p->nsteps;
    if (p->coll == OG_ALLGATHER) {
        int d = 1 << (L - 1 - s);
        tree_chunks(p, out, 1, me, coll_mod(me + d, n), d, 0);
        tree_chunks(p, out, 0, coll_mod(me - d, n), coll_mod(me - d, n), d, 0);
    } else { /* reduce-scatter: the all-gather's transfers reversed in time and direction */
        int d = 1 << s;
        tree_chunks(p, out, 1, coll_mod(me - d, n), coll_mod(me - d, n), d, 1);
        tree_chunks(p, out, 0, me, coll_mod(me + d, n), d, 1);
    }
}

/* Bytes of the chunks position q passes on at distance d (tree_chunks):
 * m = ceil((n - d) / 2d) chunks of bytes / n each, plus one byte for each
 * below bytes % n (coll_chunk_bytes; none when n divides the size). */
static int64_t tree_bytes(const coll_plan *p, int q, int d)
{
    int n = p->n, m = (n - d + 2 * d - 1) / (2 * d);
    int64_t base = p->bytes / p->nchunks, rem = p->bytes % p->nchunks, b = m * base;
    if (rem == 0) return b;
    for (int o = 0; o + d < n; o += 2 * d) b += coll_mod(q - o, n) < rem;
    return b;
}

/* The steps merged per peer (coll_plan_merged), in step order: the distances
 * differ and are below n, so every step has a peer of its own each way. */
void coll_pat_merged(const coll_plan *p, int me, coll_step *out)
{
    int n = p->n, L = p->nsteps, ag = p->coll == OG_ALLGATHER;
    for (int s = 0; s < L; s++) {
        int d = ag ? 1 << (L - 1 - s) : 1 << s, up = coll_mod(me + d, n), down = coll_mod(me - d, n);
        coll_xfer x = {ag ? up : down, tree_bytes(p, ag ? me : down, d), 0, 0, !ag};
        coll_step_add_merged(out, 1, &x);
        x = (coll_xfer){ag ? down : up, tree_bytes(p, ag ? down : me, d), 0, 0, !ag};
        coll_step_add_merged(out, 0, &x);
    }
}
