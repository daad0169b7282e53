/* Hierarchical collectives on multi-NIC nodes (one ring per rail). All-reduce,
 * as NCCL runs it: a ring reduce-scatter inside each node (L members, the
 * buffer cut into L parts), a ring all-reduce of part j across the M nodes
 * among the members of local index j, then a ring all-gather inside each node.
 * All-gather and reduce-scatter: see below. */
#include <assert.h>
#include <string.h>

#include "coll_algos.h"

const char *coll_hier_unfit(const coll_plan *p)
{
    if (!p->topo || p->topo->ppn == 0)
        return "needs the same number of members on every node (host property 'node')";
    return NULL;
}

void coll_hier_setup(coll_plan *p)
{
    int L = p->topo->ppn, M = p->topo->nnodes;
    p->nchunks = L * M;
    p->nsteps = 2 * (L - 1) + 2 * (M - 1);
    p->width = 1;
    p->merged_width = 4;
}

void coll_hier_step(const coll_plan *p, int me, int s, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, M = t->nnodes, k = t->node[me], j = t->local[me];
#define AT(node, loc) t->order[t->first[coll_mod(node, M)] + coll_mod(loc, L)]
    if (s < L - 1) { /* reduce-scatter of parts inside the node */
        coll_add_range(p, out, 1, AT(k, j + 1), coll_mod(j - s - 1, L) * M, M, 1);
        coll_add_range(p, out, 0, AT(k, j - 1), coll_mod(j - s - 2, L) * M, M, 1);
        return;
    }
    s -= L - 1;
    if (s < 2 * (M - 1)) { /* ring all-reduce of part j across nodes */
        int red = s < M - 1, u = red ? s + 1 : s - (M - 1);
        coll_add_range(p, out, 1, AT(k + 1, j), j * M + coll_mod(k - u, M), 1, red);
        coll_add_range(p, out, 0, AT(k - 1, j), j * M + coll_mod(k - u - 1, M), 1, red);
        return;
    }
    s -= 2 * (M - 1); /* all-gather of parts inside the node */
    coll_add_range(p, out, 1, AT(k, j + 1), coll_mod(j - s, L) * M, M, 0);
    coll_add_range(p, out, 0, AT(k, j - 1), coll_mod(j - s - 1, L) * M, M, 0);
#undef AT
}

/* Hierarchical all-gather and reduce-scatter on the same geometry (L members
 * per node, M nodes, chunk c = member c's block as in the flat algorithms):
 * all-gather runs a flat all-gather of the column of local index j across the
 * M nodes among the members of local index j (one per rail; a ring, or
 * recursive doubling as PCCL does), then a ring all-gather of whole columns
 * inside the node; reduce-scatter is its mirror (ring reduce-scatter of
 * columns inside the node, then a flat reduce-scatter per rail). The rail
 * phase is the flat algorithm's own schedule on a group of M, its peers and
 * chunks mapped to the rail's members and blocks. */

typedef struct {
    void (*setup)(coll_plan *p);
    void (*step)(const coll_plan *p, int me, int s, coll_step *out);
} rail_algo;

static const rail_algo rail_ring = {coll_ring_setup, coll_ring_step};
static const rail_algo rail_rd = {coll_rhd_setup, coll_rhd_step};

/* Member of local index j on node k (both modulo). */
static int member(const coll_topo *t, int k, int j)
{
    return t->order[t->first[coll_mod(k, t->nnodes)] + coll_mod(j, t->ppn)];
}

/* The flat schedule of one rail: a group of M members, M chunks. */
static coll_plan rail_plan(const coll_plan *p, const rail_algo *ra)
{
    coll_plan r;
    memset(&r, 0, sizeof r);
    r.coll = p->coll;
    r.n = p->topo->nnodes;
    r.bytes = p->bytes;
    r.nchunks = 1;
    if (r.n > 1) ra->setup(&r);
    return r;
}

/* Chunks k0 .. k0 + nk - 1 of rail j (node indices) as blocks of the whole
 * group, one transfer per run of consecutive block numbers. */
static void add_rail_chunks(const coll_plan *p, coll_step *out, int send, int peer, int j, int k0, int nk,
                            int reduce)
{
    const coll_topo *t = p->topo;
    int start = -1, len = 0;
    for (int i = 0; i < nk; i++) {
        int c = member(t, k0 + i, j);
        if (len > 0 && c == start + len) {
            len++;
            continue;
        }
        coll_add_range(p, out, send, peer, start, len, reduce);
        start = c;
        len = 1;
    }
    coll_add_range(p, out, send, peer, start, len, reduce);
}

#define RAIL_WIDTH 8 /* most transfers of one flat step per direction (ring 2, rhd 2) */

static void rail_step(const coll_plan *p, const rail_algo *ra, int me, int s, coll_step *out)
{
    const coll_topo *t = p->topo;
    coll_plan r = rail_plan(p, ra);
    coll_xfer snd[RAIL_WIDTH], rcv[RAIL_WIDTH];
    coll_step st = {0, 0, snd, rcv};
    assert(r.width <= RAIL_WIDTH);
    int k = t->node[me], j = t->local[me];
    ra->step(&r, k, s, &st);
    for (int i = 0; i < st.nsend; i++)
        add_rail_chunks(p, out, 1, member(t, snd[i].peer, j), j, snd[i].chunk, snd[i].nchunk, snd[i].reduce);
    for (int i = 0; i < st.nrecv; i++)
        add_rail_chunks(p, out, 0, member(t, rcv[i].peer, j), j, rcv[i].chunk, rcv[i].nchunk, rcv[i].reduce);
}

/* Whole column c (the blocks of local index c on every node). */
static void add_column(const coll_plan *p, coll_step *out, int send, int peer, int c, int reduce)
{
    add_rail_chunks(p, out, send, peer, coll_mod(c, p->topo->ppn), 0, p->topo->nnodes, reduce);
}

static void col_setup(coll_plan *p, const rail_algo *ra)
{
    int L = p->topo->ppn, M = p->topo->nnodes;
    coll_plan r = rail_plan(p, ra);
    p->nchunks = p->n;
    p->nsteps = r.nsteps + (L - 1);
    p->width = M;
    p->merged_width = r.merged_width + 2;
}

static void col_step(const coll_plan *p, const rail_algo *ra, int me, int s, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, k = t->node[me], j = t->local[me];
    int rail_first = p->coll == OG_ALLGATHER, nrail = p->nsteps - (L - 1);
    if (rail_first && s < nrail) {
        rail_step(p, ra, me, s, out);
        return;
    }
    if (!rail_first && s >= L - 1) {
        rail_step(p, ra, me, s - (L - 1), out);
        return;
    }
    if (rail_first) { /* ring all-gather of columns: I start with column j */
        s -= nrail;
        add_column(p, out, 1, member(t, k, j + 1), j - s, 0);
        add_column(p, out, 0, member(t, k, j - 1), j - s - 1, 0);
    } else { /* ring reduce-scatter of columns: I end with column j */
        add_column(p, out, 1, member(t, k, j + 1), j - s - 1, 1);
        add_column(p, out, 0, member(t, k, j - 1), j - s - 2, 1);
    }
}

/* Bytes of column j (rail j's blocks) and of blocks k0 .. k0 + nk - 1 of rail j. */
static int64_t rail_bytes(const coll_plan *p, int j, int k0, int nk)
{
    int64_t b = 0;
    for (int i = 0; i < nk; i++) b += coll_chunk_bytes(p->bytes, p->n, member(p->topo, k0 + i, j));
    return b;
}

static int64_t column_bytes(const coll_plan *p, int j) { return rail_bytes(p, j, 0, p->topo->nnodes); }

/* Totals per peer, O(M) per rank for the ring, O(M log M) for recursive
 * doubling: the rail phase's flat steps summed per rail peer without cutting
 * them into blocks, and the node ring in closed form (all-gather: every column
 * but the next member's out, every one but mine in; reduce-scatter: every
 * column but mine out, every one but the previous member's in). */
static void col_merged(const coll_plan *p, const rail_algo *ra, int me, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, k = t->node[me], j = t->local[me], ag = p->coll == OG_ALLGATHER;
    coll_plan r = rail_plan(p, ra);
    coll_xfer snd[RAIL_WIDTH], rcv[RAIL_WIDTH];
    for (int s = 0; s < r.nsteps; s++) {
        coll_step st = {0, 0, snd, rcv};
        ra->step(&r, k, s, &st);
        for (int i = 0; i < st.nsend + st.nrecv; i++) {
            int send = i < st.nsend;
            coll_xfer x = send ? snd[i] : rcv[i - st.nsend];
            x.bytes = rail_bytes(p, j, x.chunk, x.nchunk);
            x.peer = member(t, x.peer, j);
            coll_step_add_merged(out, send, &x);
        }
    }
    if (L > 1) {
        int64_t S = p->bytes;
        coll_add_send(out, member(t, k, j + 1), S - column_bytes(p, ag ? j + 1 : j), 0, 0, !ag);
        coll_add_recv(out, member(t, k, j - 1), S - column_bytes(p, ag ? j : j - 1), 0, 0, !ag);
    }
}

void coll_hierag_setup(coll_plan *p) { col_setup(p, &rail_ring); }
void coll_hierag_step(const coll_plan *p, int me, int s, coll_step *out) { col_step(p, &rail_ring, me, s, out); }
void coll_hierag_merged(const coll_plan *p, int me, coll_step *out) { col_merged(p, &rail_ring, me, out); }
void coll_hierrd_setup(coll_plan *p) { col_setup(p, &rail_rd); }
void coll_hierrd_step(const coll_plan *p, int me, int s, coll_step *out) { col_step(p, &rail_rd, me, s, out); }
void coll_hierrd_merged(const coll_plan *p, int me, coll_step *out) { col_merged(p, &rail_rd, me, out); }
