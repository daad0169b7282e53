/* Double binary tree (NCCL's Tree; Sanders, Speck and Traeff 2009): two binary
 * trees in which most leaves of one are inner nodes of the other, each carrying
 * half of the buffer cut into K pipeline chunks. All-reduce, as NCCL builds it
 * on multi-GPU nodes: the trees span the nodes, and inside each node the GPUs
 * form a chain hanging off the node's head (local 0 in tree 0, the last local
 * in tree 1, so the two trees leave through different NICs). NCCL runs a
 * tree per channel, and its channels enter and leave the node through
 * different GPUs and NICs: the all-reduce runs each node tree twice, with the
 * chain's head at either end (trees 0 and 3 head at local 0, 1 and 2 at the
 * last local; 2 and 3 have the node shapes of 0 and 1), each tree a quarter
 * of the buffer, so that a node interior in one tree and a leaf in the other
 * moves S through each head's NIC, not 3 S/2 through one. A pipelined reduce
 * up the trees, then a broadcast down. Broadcast and reduce use the
 * down or the up half over the GPUs with both trees rooted at the root. */
#include "coll_algos.h"
#include "coll_params.h"

#define TREE_CHUNK ((int64_t)1 << 20) /* bytes per pipeline chunk, at most 64 chunks */

/* NCCL's ncclGetBtree over positions 0..n-1: in-order tree, root 0. */
int coll_bt_parent(int pos, int n)
{
    if (pos == 0) return -1;
    int bit = pos & -pos, up = (pos ^ bit) | (bit << 1);
    return up >= n ? pos ^ bit : up;
}

int coll_bt_children(int pos, int n, int ch[2])
{
    int k = 0;
    if (pos == 0) {
        int b = 1;
        while (b * 2 < n) b *= 2;
        if (n > 1) ch[k++] = b;
        return k;
    }
    for (int b = (pos & -pos) >> 1; b > 0 && k < 2; b >>= 1) {
        if (coll_bt_parent(pos - b, n) == pos) ch[k++] = pos - b;
        if (pos + b < n && coll_bt_parent(pos + b, n) == pos) ch[k++] = pos + b;
    }
    return k;
}

/* Height of a node: log2(lowest set bit) (its left subtree is complete). */
int coll_bt_height(int pos, int n)
{
    int h = 0;
    if (pos == 0) {
        while ((1 << h) < n) h++;
        return h;
    }
    while (!(pos & (1 << h))) h++;
    return h;
}

int coll_bt_depth(int pos, int n)
{
    int d = 0;
    while (pos) {
        pos = coll_bt_parent(pos, n);
        d++;
    }
    return d;
}

/* Rooted collectives (broadcast, reduce): both trees over the members,
 * rooted at the root; tree 1 shifts the other ranks by one. */
static int to_pos(const coll_plan *p, int t, int r)
{
    int n = p->n, q = coll_mod(r - p->root, n);
    return t == 0 || q == 0 ? q : 1 + q % (n - 1);
}

static int to_rank(const coll_plan *p, int t, int pos)
{
    int n = p->n, q = t == 0 || pos == 0 ? pos : pos == 1 ? n - 1 : pos - 1;
    return coll_mod(q + p->root, n);
}

/* All-reduce: the geometry of NCCL's trees. L members per node (1 without a
 * topology of even nodes: every member its own node), M nodes. */
typedef struct {
    int L, M;
} geo;

static geo geometry(const coll_plan *p)
{
    const coll_topo *t = p->topo;
    int L = t && t->ppn > 0 ? t->ppn : 1;
    return (geo){L, p->n / L};
}

static int node_of(const coll_plan *p, geo g, int me) { return g.L == 1 ? me : p->topo->node[me]; }
static int local_of(const coll_plan *p, geo g, int me) { return g.L == 1 ? 0 : p->topo->local[me]; }
static int member_at(const coll_plan *p, geo g, int k, int j)
{
    return g.L == 1 ? k : p->topo->order[p->topo->first[k] + j];
}

/* Node <-> position in node tree t: tree 1 is tree 0 mirrored (M even) or
 * shifted by one (M odd), as NCCL does. */
static int npos(geo g, int t, int k) { return t % 2 == 0 ? k : g.M % 2 ? coll_mod(k - 1, g.M) : g.M - 1 - k; }
static int nnode(geo g, int t, int pos) { return t % 2 == 0 ? pos : g.M % 2 ? coll_mod(pos + 1, g.M) : g.M - 1 - pos; }

/* NCCL gives each channel's tree the intra-node chain of the channel's
 * graph, which starts at the GPU next to the channel's NIC (graph/trees.cc
 * ncclTopoPreset treeUp/treeDn from the intra ring; search.cc starts every
 * channel at a NIC's GPU): with a NIC per GPU the channels' trees leave the
 * node through every NIC, not two. The all-reduce runs R rotations of the
 * chain, each as four trees (the two node shapes with the chain and with
 * it reversed): rotation v starts the chain at local o = v L / R and runs
 * o, o+1, ... (mod L), reversed o-1, o-2, ...; R = 1 is local 0 and the last.
 * R = L / (2 x GPUs per NIC): every NIC heads one tree of each shape and
 * direction; at most NCCL's channels / 4 (the trees are its channels). */
#define AR_ROT_MAX 8

static int ar_rotations(const coll_plan *p)
{
    const coll_topo *t = p->topo;
    if (p->coll != OG_ALLREDUCE || !t || t->ppn < 2 || t->nnodes != 2) return 1;
    const coll_params *q = coll_params_get();
    /* at most the channels the call runs on / 4 (coll_params_channels:
     * NCCL's cut of small calls to fewer channels, each its own tree and
     * head NIC): a small call keeps the two heads of one rotation */
    int share = q->nic_gpus > 1 ? q->nic_gpus : 1, r = t->ppn / (2 * share), cap = coll_params_channels((double)p->bytes) / 4;
    if (r > cap) r = cap;
    if (r > AR_ROT_MAX) r = AR_ROT_MAX;
    while (r > 1 && t->ppn % r) r--; /* the rotations evenly spaced */
    return r < 1 ? 1 : r;
}

/* the trees of the schedule, fixed at setup (the channels the rotations
 * follow come from the parameters of that moment) */
static int tree_count(const coll_plan *p) { return p->trees > 0 ? p->trees : p->coll == OG_ALLREDUCE ? 4 : 2; }

/* Chain index of local j in tree t (0: the node's head), and the local at
 * chain index i: trees 4v and 4v+3 run the chain of rotation v forward,
 * 4v+1 and 4v+2 reversed. */
static int chain_fwd(int t) { return t % 4 == 0 || t % 4 == 3; }
static int chain_off(geo g, int R, int t) { return t / 4 * (g.L / R); }
/* a mod L for -L <= a < 2L (the chain's indices and offsets are below L):
 * coll_mod without its division */
static inline int chain_wrap(int a, int L) { return a < 0 ? a + L : a >= L ? a - L : a; }
static inline int chain_idx(geo g, int R, int t, int j)
{
    int o = chain_off(g, R, t);
    return chain_fwd(t) ? chain_wrap(j - o, g.L) : chain_wrap(o - 1 - j, g.L);
}
static inline int chain_local(geo g, int R, int t, int i)
{
    int o = chain_off(g, R, t);
    return chain_fwd(t) ? chain_wrap(i + o, g.L) : chain_wrap(o - 1 - i, g.L);
}

static int tree_k(const coll_plan *p) { return p->nchunks / tree_count(p); }

void coll_tree_setup(coll_plan *p)
{
    int trees = p->trees = p->coll == OG_ALLREDUCE ? 4 * ar_rotations(p) : 2;
    int64_t k = p->bytes / (trees * TREE_CHUNK);
    if (k < 1) k = 1;
    if (k > 64) k = 64;
    p->nchunks = trees * (int)k;
    if (p->coll == OG_ALLREDUCE) {
        geo g = geometry(p);
        int H = g.L - 1 + coll_bt_height(0, g.M);
        p->nsteps = (int)k + 2 * H - 1;
        p->width = 4 * trees;
        p->merged_width = 16;
        return;
    }
    p->nsteps = (int)k + coll_bt_height(0, p->n) - 1;
    p->width = p->merged_width = 6;
}

/* A member's transfers over the whole schedule as roles: in step s a role
 * moves chunk base + s - off of its tree when 0 <= s - off < K (one chunk per
 * step, pipelined). The roles come in the order a step lists its transfers:
 * per tree, up (send to the parent, receive from each child), then down
 * (send to each child, receive from the parent). */
typedef struct {
    int send, peer, off, base, reduce;
} role;

#define TREE_ROLES (4 * AR_ROT_MAX * 8)

/* Member me's roles in the four all-reduce trees. In tree t, a member at
 * chain index i > 0 hangs off the member before it in its node's chain
 * (height L - 1 - i below it); the chain's head (i = 0) sits at its node's
 * place in the node tree, of height L - 1 + its node-tree height. Children:
 * the next in the chain, then the node-tree children's heads. Depth: the
 * node's depth in the node tree plus i. Trees 0, 2 and 1, 3 share the node
 * tree, computed once per shape. */
/* Node k's place in the two node-tree shapes: a pure function of (M, k).
 * The members of a node come one after the other, so the last node's is
 * kept. */
typedef struct {
    int pos, par, nch, ch[2], depth;
    int height, chh[2];     /* node-tree heights of its place and of its children's */
    int top;                /* the node tree's height (its root's) */
} ntplace;

static const ntplace *node_places(geo g, int k)
{
    static ntplace nt[2];
    static int lastM = -1, lastk = -1;
    if (g.M == lastM && k == lastk) return nt;
    for (int sh = 0; sh < 2; sh++) {
        nt[sh].pos = npos(g, sh, k);
        nt[sh].par = coll_bt_parent(nt[sh].pos, g.M);
        nt[sh].nch = coll_bt_children(nt[sh].pos, g.M, nt[sh].ch);
        nt[sh].depth = coll_bt_depth(nt[sh].pos, g.M);
        nt[sh].height = coll_bt_height(nt[sh].pos, g.M);
        for (int c = 0; c < nt[sh].nch; c++) nt[sh].chh[c] = coll_bt_height(nt[sh].ch[c], g.M);
        nt[sh].top = coll_bt_height(0, g.M);
    }
    lastM = g.M, lastk = k;
    return nt;
}

static int allreduce_roles(const coll_plan *p, int me, role *r)
{
    geo g = geometry(p);
    int k = node_of(p, g, me), j = local_of(p, g, me);
    const ntplace *nt = node_places(g, k);
    int K = tree_k(p), H = g.L - 1 + nt[0].top, nr = 0, R = tree_count(p) / 4;
    for (int t = 0; t < 4 * R; t++) {
        const int i = chain_idx(g, R, t, j), base = t * K;
        const int sh = t % 2, depth = nt[sh].depth + i;
        int parent = -1, height, nch = 0, ch[3], chh[3];
        if (i + 1 < g.L) {
            ch[nch] = member_at(p, g, k, chain_local(g, R, t, i + 1));
            chh[nch++] = g.L - 2 - i;
        }
        if (i > 0) {
            parent = member_at(p, g, k, chain_local(g, R, t, i - 1));
            height = g.L - 1 - i;
        } else {
            if (nt[sh].par >= 0) parent = member_at(p, g, nnode(g, t, nt[sh].par), chain_local(g, R, t, 0));
            for (int c = 0; c < nt[sh].nch; c++) {
                ch[nch] = member_at(p, g, nnode(g, t, nt[sh].ch[c]), chain_local(g, R, t, 0));
                chh[nch++] = g.L - 1 + nt[sh].chh[c];
            }
            height = g.L - 1 + nt[sh].height;
        }
        if (parent >= 0) r[nr++] = (role){1, parent, height, base, 1};
        for (int c = 0; c < nch; c++) r[nr++] = (role){0, ch[c], chh[c], base, 1};
        for (int c = 0; c < nch; c++) r[nr++] = (role){1, ch[c], H + depth, base, 0};
        if (parent >= 0) r[nr++] = (role){0, parent, H + depth - 1, base, 0};
    }
    return nr;
}

static int rooted_roles(const coll_plan *p, int me, role *r)
{
    int n = p->n, K = tree_k(p), nr = 0;
    int up = p->coll != OG_BROADCAST, down = p->coll != OG_REDUCE;
    for (int t = 0; t < 2; t++) {
        int pos = to_pos(p, t, me), par = coll_bt_parent(pos, n), ch[2], nch = coll_bt_children(pos, n, ch);
        int base = t * K;
        if (up) {
            if (par >= 0) r[nr++] = (role){1, to_rank(p, t, par), coll_bt_height(pos, n), base, 1};
            for (int i = 0; i < nch; i++) r[nr++] = (role){0, to_rank(p, t, ch[i]), coll_bt_height(ch[i], n), base, 1};
        }
        if (down) {
            int d = coll_bt_depth(pos, n);
            for (int i = 0; i < nch; i++) r[nr++] = (role){1, to_rank(p, t, ch[i]), d, base, 0};
            if (par >= 0) r[nr++] = (role){0, to_rank(p, t, par), d - 1, base, 0};
        }
    }
    return nr;
}

static int tree_roles(const coll_plan *p, int me, role *r)
{
    return p->coll == OG_ALLREDUCE ? allreduce_roles(p, me, r) : rooted_roles(p, me, r);
}

void coll_tree_step(const coll_plan *p, int me, int s, coll_step *out)
{
    role r[TREE_ROLES];
    int nr = tree_roles(p, me, r), K = tree_k(p);
    for (int i = 0; i < nr; i++) {
        int c = s - r[i].off;
        if (c >= 0 && c < K) coll_add_range(p, out, r[i].send, r[i].peer, r[i].base + c, 1, r[i].reduce);
    }
}

/* Bytes of chunks [a, b) of the plan's nchunks (coll_chunk_bytes summed),
 * q and rem the quotient and remainder of its bytes by nchunks. */
static int64_t chunks_bytes(int64_t q, int64_t rem, int a, int b)
{
    int64_t lo = a < rem ? a : rem, hi = b < rem ? b : rem;
    return (b - a) * q + (hi > lo ? hi - lo : 0);
}

/* The merge of every step's transfers (coll_plan_merged), from the roles:
 * each role's chunks are those whose step falls in 0..nsteps-1; a peer's
 * entry sits where its earliest transfer first appears (step, then the
 * step's order) and sums its bytes, keeping that transfer's reduce flag.
 * Roles are summed per (direction, peer) as they come, each entry keeping
 * its earliest (first step, role index); then each direction's few entries
 * are put in that order. */
typedef struct {
    int peer, first, role, reduce;
    int64_t bytes;
} tentry;

static void tree_emit(tentry *e, int ne, coll_xfer *xs, int *nx)
{
    for (int a = 1; a < ne; a++) { /* insertion by (first, role): keys are distinct */
        tentry x = e[a];
        int j = a;
        while (j > 0 && (e[j - 1].first > x.first || (e[j - 1].first == x.first && e[j - 1].role > x.role)))
            e[j] = e[j - 1], j--;
        e[j] = x;
    }
    for (int a = 0; a < ne; a++) xs[a] = (coll_xfer){e[a].peer, e[a].bytes, 0, 0, e[a].reduce};
    *nx = ne;
}

void coll_tree_merged(const coll_plan *p, int me, coll_step *out)
{
    role r[TREE_ROLES];
    tentry e[2][TREE_ROLES];
    int nr = tree_roles(p, me, r), K = tree_k(p), ne[2] = {0, 0};
    int64_t q = p->bytes / p->nchunks, rem = p->bytes % p->nchunks; /* once, not per role */
    for (int i = 0; i < nr; i++) {
        int a = r[i].off < 0 ? -r[i].off : 0, b = p->nsteps - r[i].off < K ? p->nsteps - r[i].off : K;
        if (b <= a) continue;
        int first = a + r[i].off, d = r[i].send, j = 0;
        int64_t bytes = chunks_bytes(q, rem, r[i].base + a, r[i].base + b);
        while (j < ne[d] && e[d][j].peer != r[i].peer) j++;
        if (j == ne[d]) {
            e[d][ne[d]++] = (tentry){r[i].peer, first, i, r[i].reduce, bytes};
            continue;
        }
        e[d][j].bytes += bytes;
        if (first < e[d][j].first) e[d][j].first = first, e[d][j].role = i, e[d][j].reduce = r[i].reduce;
    }
    tree_emit(e[1], ne[1], out->send, &out->nsend);
    tree_emit(e[0], ne[0], out->recv, &out->nrecv);
}
