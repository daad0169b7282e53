/* Hierarchical all-reduce, as NCCL runs it on multi-NIC nodes: a ring
 * reduce-scatter inside each node (L members, the buffer cut into L parts),
 * a ring all-reduce of part j across the M nodes among the members of local
 * index j (one ring per rail), then a ring all-gather inside each node. */
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
