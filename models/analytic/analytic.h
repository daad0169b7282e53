/* The analytical model: alpha-beta costs of collectives and point-to-point
 * transfers, and the contention-free critical path of an op graph (per-rank
 * stream timelines) without SimGrid. */
#ifndef TS_ANALYTIC_H
#define TS_ANALYTIC_H

#include <stddef.h>

#include "engine.h"   /* eng_result: the analytical path fills the engine's result type */
#include "opgraph.h"

/* Per-pair latency and per-GPU, per-direction bandwidth, inside a node and
 * between nodes. Rank r sits on node host_index(r) / gpus_per_node. */
typedef struct an_net {
    int gpus_per_node;
    double intra_bw, intra_lat;
    double inter_bw, inter_lat;
    double flops;       /* compute ops given as flops/bytes: device speed (FLOP/s) */
    double hbm_bw;      /* and memory bandwidth (bytes/s); 0: such ops are an error */
    int nvls;           /* nodes have NVLS-capable NVSwitches (as the engine reads from hosts) */
    const struct coll_policy *policy; /* collective selection (NULL: automatic), as eng_set_policy */
    /* GPUs per NIC (0 or 1: a NIC per GPU; Polaris and Frontier 2). inter_bw
     * is a GPU's share of its NIC when all of them send (the NIC's
     * bandwidth / nic_gpus); a collective's flows between nodes get up to
     * the whole NIC each, and its members on a node share
     * members x inter_bw: the group's part of the node's NICs, the rest
     * going to the copies of the group (the other TP ranks' DP groups) that
     * run beside it in training (an_sched_time_nodes). */
    int nic_gpus;
    /* The fabric between the nodes (NULL: none; platforms' topo_net_links of
     * the cluster): a group's flows between nodes share its links (a
     * dragonfly's switch uplinks and global links, a tapered fat-tree's
     * uplinks), the group getting members per node / gpus_per_node of each,
     * the rest going to the copies of the group beside it (as its NICs). Rank
     * r's node (host_index(r) / gpus_per_node) is the fabric's node number. */
    const struct coll_fabric *fabric;
    /* The links inside a node by local GPU index (NULL: each GPU one link
     * per direction of intra_bw; platforms' topo_gpu_links for mesh and
     * graph fabrics): where the caller gives the members' GPUs
     * (an_sched_time_gpus), a flow between two GPUs of a node crosses its
     * route's links, as on the platform (a mesh's pairs each have their
     * own; Frontier's routes their own widths and shared hops). */
    const struct coll_gpu_links *gpu_links;
} an_net;

/* Defaults by GPU family (docs/workload.md gives the sources). Returns -1
 * for an unknown name. */
int an_net_default(const char *gpu_name, an_net *net);

/* Alpha-beta time of a ring collective (nccl-tests size convention for bytes)
 * on n ranks whose slowest link is (bw, lat); send/recv: lat + bytes/bw. */
double an_coll_time(og_coll c, int n, double bytes, double bw, double lat);

/* Time of a collective on group gr from its schedule (models/coll, the
 * algorithm net->policy chooses): the steps run in lock-step, a step lasting as long as
 * its slowest transfer over all members, lat + bytes/bw of that pair (intra-
 * or inter-node). For a ring this is an_coll_time on the slowest edge. */
double an_sched_time(const an_net *net, const og_graph *g, const og_group *gr, og_coll c, int64_t bytes);
/* The same for n members on the given nodes (node[i]: node of member i). */
double an_sched_time_nodes(const an_net *net, int n, const int *node, og_coll c, int64_t bytes);
/* The same with each member's local GPU index (gpu[i]; NULL: unknown), so
 * that net->gpu_links can route its flows inside a node. */
double an_sched_time_gpus(const an_net *net, int n, const int *node, const int *gpu, og_coll c, int64_t bytes);
/* Whether an_sched_time_nodes keeps its results (default 1; either way the
 * kept ones are forgotten), and coll_cost its one-pass path (coll_cost_fast). */
void an_memo(int on);

/* Whether the ranks of a group all sit on one node. */
int an_group_intra(const an_net *net, const og_graph *g, const og_group *gr);
/* Node of a rank: the number in its host name ("gpu-17") or the rank itself,
 * divided by gpus_per_node. */
int an_node_of(const an_net *net, const og_graph *g, int rank);

/* Critical path of g: every op starts when its stream predecessor and its
 * dependencies are done; a collective when all members arrived (lasting
 * an_sched_time); a transfer when both sides are there. No contention. A graph that cannot finish is
 * an error naming a blocked rank and op. The result is an engine result
 * (free it with eng_result_free). */
int an_run(const og_graph *g, const an_net *net, eng_result **out, char *err, size_t errlen);

/* Make waiting for a peer count as idle in a result of the engine (where an
 * op starts when its rank posts it): a transfer starts when both sides have
 * posted it, a collective when its last member has. The analytical path
 * already records starts that way. */
void an_wait_as_idle(const og_graph *g, eng_result *res);

/* Time breakdown by op category (the label's first dot-separated word:
 * comp, tp, cp, ep, pp, dp, opt; compute ops without a label are comp).
 * Per rank: an instant counts as compute when a compute-category op runs,
 * else as the first running communication category in the order tp, cp, ep,
 * pp, dp (exposed communication), else as idle (bubble). */
enum { AN_COMP, AN_TP, AN_CP, AN_EP, AN_PP, AN_DP, AN_OTHER, AN_IDLE, AN_NCATS };
const char *an_cat_name(int c);
int an_op_category(const og_graph *g, const og_op *op);
/* out[c]: seconds of rank r (r < 0: the mean over ranks). */
void an_breakdown(const og_graph *g, const eng_result *res, int r, double out[AN_NCATS]);

#endif
