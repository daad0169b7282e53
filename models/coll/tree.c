/* Double binary tree (NCCL's Tree; Sanders, Speck and Traeff 2009): two binary
 * trees in which most leaves of one are inner nodes of the other, each carrying
 * half of the buffer cut into K pipeline chunks. All-reduce is a pipelined
 * reduce up both trees then a broadcast down; broadcast and reduce use the
 * down or the up half with both trees rooted at the root. */
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

/* Rank <-> position in tree t. All-reduce: tree 1 is tree 0 mirrored (n even)
 * or shifted by one (n odd), as NCCL does. Rooted collectives: both trees are
 * rooted at the root; tree 1 shifts the other ranks by one. */
static int to_pos(const coll_plan *p, int t, int r)
{
    int n = p->n;
    if (p->coll == OG_ALLREDUCE) return t == 0 ? r : n % 2 ? coll_mod(r - 1, n) : n - 1 - r;
    int q = coll_mod(r - p->root, n);
    return t == 0 || q == 0 ? q : 1 + q % (n - 1);
}

static int to_rank(const coll_plan *p, int t, int pos)
{
    int n = p->n;
    if (p->coll == OG_ALLREDUCE) return t == 0 ? pos : n % 2 ? coll_mod(pos + 1, n) : n - 1 - pos;
    int q = t == 0 || pos == 0 ? pos : pos == 1 ? n - 1 : pos - 1;
    return coll_mod(q + p->root, n);
}

static int tree_k(const coll_plan *p) { return p->nchunks / 2; }

void coll_tree_setup(coll_plan *p)
{
    int64_t k = p->bytes / (2 * TREE_CHUNK);
    if (k < 1) k = 1;
    if (k > 64) k = 64;
    p->nchunks = 2 * (int)k;
    int H = coll_bt_height(0, p->n);
    p->nsteps = (int)k + (p->coll == OG_ALLREDUCE ? 2 * H : H) - 1;
    p->width = p->merged_width = 6;
}

void coll_tree_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int n = p->n, K = tree_k(p), H = coll_bt_height(0, n);
    int up = p->coll != OG_BROADCAST, down = p->coll != OG_REDUCE;
    int off = p->coll == OG_ALLREDUCE ? H : 0; /* the down phase follows the reduction */
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
            c = s - off - d;
            for (int i = 0; i < nch; i++)
                if (c >= 0 && c < K) coll_add_range(p, out, 1, to_rank(p, t, ch[i]), base + c, 1, 0);
            c = s - off - d + 1;
            if (par >= 0 && c >= 0 && c < K) coll_add_range(p, out, 0, to_rank(p, t, par), base + c, 1, 0);
        }
    }
}
