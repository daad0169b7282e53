/* CollNet (NCCL's CollNet over SHARP): the fabric's switches reduce. All-
 * reduce: a ring reduce-scatter inside each node (member j ends with part j
 * of its node's sum), member j adds part j into the fabric's switch and reads
 * the sum over every node back, then a ring all-gather inside the node. The
 * fabric's switch is peer n + nnodes; the engine and the cost run its traffic
 * as flows between the members of local index j on neighbouring nodes
 * (coll_plan_step_phys): each NIC carries its part up once and the result
 * down once, whatever the node count. */
#include "coll_algos.h"
#include "coll_params.h"

const char *coll_collnet_unfit(const coll_plan *p)
{
    if (!coll_params_get()->collnet) return "needs a SHARP-capable fabric (cluster network.sharp: true)";
    if (!p->topo || p->topo->ppn == 0) return "needs the same number of members on every node";
    if (p->topo->nnodes < 2) return "runs across nodes (one node: nvls or ring)";
    return NULL;
}

void coll_collnet_setup(coll_plan *p)
{
    int L = p->topo->ppn;
    p->nchunks = L;
    p->nsteps = 2 * (L - 1) + 2;
    p->width = 1;
    p->merged_width = 3;
}

void coll_collnet_step(const coll_plan *p, int me, int s, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, k = t->node[me], j = t->local[me], sw = p->n + t->nnodes;
#define AT(loc) t->order[t->first[k] + coll_mod(loc, L)]
    if (s < L - 1) { /* reduce-scatter of parts inside the node */
        coll_add_range(p, out, 1, AT(j + 1), coll_mod(j - s - 1, L), 1, 1);
        coll_add_range(p, out, 0, AT(j - 1), coll_mod(j - s - 2, L), 1, 1);
    } else if (s == L - 1) { /* part j up into the switches' sum */
        coll_add_range(p, out, 1, sw, j, 1, 1);
    } else if (s == L) { /* and the sum back */
        coll_add_range(p, out, 0, sw, j, 1, 0);
    } else { /* all-gather of parts inside the node */
        int u = s - L - 1;
        coll_add_range(p, out, 1, AT(j + 1), coll_mod(j - u, L), 1, 0);
        coll_add_range(p, out, 0, AT(j - 1), coll_mod(j - u - 1, L), 1, 0);
    }
#undef AT
}
