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

/* Chain index of local j in tree t (0: the node's head) and back: trees 0
 * and 3 head at local 0, 1 and 2 at the last local. */
static int chain_idx(geo g, int t, int j) { return t == 0 || t == 3 ? j : g.L - 1 - j; }

#define AR_TREES 4 /* the all-reduce's trees: two node shapes x two chain heads */

/* Member me's place in all-reduce tree t: parent (-1 at the root), children,
 * height (steps from the farthest leaf below) and depth (from the root). */
typedef struct {
    int parent, nch, ch[3], height, depth;
} tnode;

static tnode tree_node(const coll_plan *p, geo g, int t, int me)
{
    tnode x = {-1, 0, {0, 0, 0}, 0, 0};
    int k = node_of(p, g, me), i = chain_idx(g, t, local_of(p, g, me)), pos = npos(g, t, k);
    if (i + 1 < g.L) x.ch[x.nch++] = member_at(p, g, k, chain_idx(g, t, i + 1));
    if (i > 0) {
        x.parent = member_at(p, g, k, chain_idx(g, t, i - 1));
        x.height = g.L - 1 - i;
    } else {
        int par = coll_bt_parent(pos, g.M), ch[2], nc = coll_bt_children(pos, g.M, ch);
        if (par >= 0) x.parent = member_at(p, g, nnode(g, t, par), chain_idx(g, t, 0));
        for (int c = 0; c < nc; c++) x.ch[x.nch++] = member_at(p, g, nnode(g, t, ch[c]), chain_idx(g, t, 0));
        x.height = g.L - 1 + coll_bt_height(pos, g.M);
    }
    x.depth = coll_bt_depth(pos, g.M) + i;
    return x;
}

static int tree_k(const coll_plan *p) { return p->nchunks / (p->coll == OG_ALLREDUCE ? AR_TREES : 2); }

void coll_tree_setup(coll_plan *p)
{
    int trees = p->coll == OG_ALLREDUCE ? AR_TREES : 2;
    int64_t k = p->bytes / (trees * TREE_CHUNK);
    if (k < 1) k = 1;
    if (k > 64) k = 64;
    p->nchunks = trees * (int)k;
    if (p->coll == OG_ALLREDUCE) {
        geo g = geometry(p);
        int H = g.L - 1 + coll_bt_height(0, g.M);
        p->nsteps = (int)k + 2 * H - 1;
        p->width = p->merged_width = 16;
        return;
    }
    p->nsteps = (int)k + coll_bt_height(0, p->n) - 1;
    p->width = p->merged_width = 6;
}

static void allreduce_step(const coll_plan *p, int me, int s, coll_step *out)
{
    geo g = geometry(p);
    int K = tree_k(p), H = g.L - 1 + coll_bt_height(0, g.M);
    for (int t = 0; t < AR_TREES; t++) {
        tnode x = tree_node(p, g, t, me);
        int base = t * K, c = s - x.height;
        if (x.parent >= 0 && c >= 0 && c < K) coll_add_range(p, out, 1, x.parent, base + c, 1, 1);
        for (int i = 0; i < x.nch; i++) {
            tnode y = tree_node(p, g, t, x.ch[i]);
            c = s - y.height;
            if (c >= 0 && c < K) coll_add_range(p, out, 0, x.ch[i], base + c, 1, 1);
        }
        c = s - H - x.depth; /* down: the reduced chunk, one hop per step from the root */
        for (int i = 0; i < x.nch; i++)
            if (c >= 0 && c < K) coll_add_range(p, out, 1, x.ch[i], base + c, 1, 0);
        c = s - H - x.depth + 1;
        if (x.parent >= 0 && c >= 0 && c < K) coll_add_range(p, out, 0, x.parent, base + c, 1, 0);
    }
}

void coll_tree_step(const coll_plan *p, int me, int s, coll_step *out)
{
    if (p->coll == OG_ALLREDUCE) {
        allreduce_step(p, me, s, out);
        return;
    }
    int n = p->n, K = tree_k(p);
    int up = p->coll != OG_BROADCAST, down = p->coll != OG_REDUCE;
    for (int t = 0; t < 2; t++) {
        int pos = to_pos(p, t, me), par = coll_bt_parent(pos, n), ch[2], nch = coll_bt_children(pos, n, ch);
        int base = t * K, c;
        if (up) {
            c = s - coll_bt_height(pos, n);
            if (par >= 0 && c >= 0 && c < K) coll_add_range(p, out, 1, to_rank(p, t, par), base + c, 1, 1);
            for (int i = 0; i < nch; i++) {
                c = s - coll_bt_height(ch[i], n);
                if (c >= 0 && c < K) coll_add_range(p, out, 0, to_rank(p, t, ch[i]), base + c, 1, 1);
            }
        }
        if (down) {
            int d = coll_bt_depth(pos, n);
            c = s - d;
            for (int i = 0; i < nch; i++)
                if (c >= 0 && c < K) coll_add_range(p, out, 1, to_rank(p, t, ch[i]), base + c, 1, 0);
            c = s - d + 1;
            if (par >= 0 && c >= 0 && c < K) coll_add_range(p, out, 0, to_rank(p, t, par), base + c, 1, 0);
        }
    }
}
