/* Collective algorithms as schedules: one table row per algorithm, a selection
 * policy and a per-rank step iterator shared by the engine and the models. */
#ifndef TS_COLL_H
#define TS_COLL_H

#include <stdint.h>

#include "opgraph.h"

/* One point-to-point transfer of a step, seen from the rank executing it.
 * The collective's buffer is cut into plan->nchunks chunks; a transfer moves
 * chunks [chunk, chunk + nchunk) and the receiver adds them into its copy
 * (reduce = 1) or overwrites (reduce = 0). All-to-all uses n*n chunks where
 * chunk src*n + dst is what src sends to dst. */
typedef struct coll_xfer {
    int peer;       /* group index of the other rank */
    int64_t bytes;  /* -1 when only the sender knows (all-to-allv receives) */
    int chunk;
    int nchunk;
    int reduce;
} coll_xfer;

typedef struct coll_step {
    int nsend, nrecv;
    coll_xfer *send, *recv; /* capacity: coll_step_new(n) */
} coll_step;

/* NCCL's protocols: LL moves 4 data bytes per 8-byte flagged line (lowest
 * latency, least bandwidth), LL128 120 of 128 bytes, Simple all of them but
 * pays a flag/fence synchronisation per step. What each costs is a parameter
 * of the model (coll_params.h: base and hop latencies, bandwidth fractions). */
typedef enum { COLL_SIMPLE, COLL_LL128, COLL_LL, COLL_NPROTOS } coll_proto;
/* "the tuner picks the protocol" (an algorithm forced without one, as
 * NCCL_ALGO without NCCL_PROTO): coll_best_proto resolves it. */
#define COLL_PROTO_AUTO COLL_NPROTOS
const char *coll_proto_name(coll_proto pr);
int coll_proto_from_name(const char *s);

/* Which node each group member is on (from the hosts' "node" property; a
 * host without one is its own node) and whether the nodes have NVLS-capable
 * NVSwitches (every host's "nvls" property is "1"). Derived tables let the
 * topology-aware algorithms find their peers in O(1). */
typedef struct coll_topo {
    int n, nnodes;
    int nvls;
    int ppn;            /* members per node when every node has as many, else 0 */
    int *node;          /* node of member i, renumbered 0.. in order of first appearance */
    int *local;         /* index of member i among its node's members */
    int *first;         /* [nnodes + 1]: node k's members are order[first[k] .. first[k+1]) */
    int *order;         /* members sorted by (node, member index) */
    unsigned long serial; /* distinct for every coll_topo_new: memos key on it */
    /* The NICs the members' flows between nodes leave and enter by (NULL:
     * each member its own, as without this): member i's NIC is pool nic[i]
     * (0 .. nnics - 1; -1: its own), and pool k carries nic_share[k] x the
     * route bandwidth of its flows in each direction (coll_topo_set_nics). */
    int *nic;
    int nnics;
    double *nic_share;
    /* The links of the routes between members of one node (nlinks 0: none
     * known, each member then has one link per direction and bandwidth, as
     * an NVSwitch port): link k carries link_bw[k] per direction given
     * (a split-duplex link is two), and the route from member a to member b
     * of node x crosses links pair_link[(pair_off[x] + la * m + lb) *
     * COLL_ROUTE_HOPS + h] + link_off[x] for each h whose entry is >= 0 (la,
     * lb: their local indices, m: the node's members; -1 pads): nodes with
     * the same routes on links of their own share one table
     * (coll_topo_set_links_by), each with its links' offset. */
    int nlinks;
    double *link_bw;
    int *pair_off;
    int *link_off;
    int *pair_link;
    /* The fabric between the nodes (NULL: none known, a flow between nodes
     * then crosses only its endpoints' links and NICs): node k of the group
     * is the fabric's node fab_node[k], and the group's flows get fab_share
     * of each fabric link (coll_topo_set_fabric). */
    const struct coll_fabric *fabric;
    int *fab_node;
    double fab_share;
} coll_topo;

/* The most fabric links a route between two nodes crosses that the
 * analytical cost shares: a dragonfly's between groups with adaptive
 * routing, each node's uplink, a switch's out- and in-link in each group
 * and the global link (a 3-level fat-tree's: 2 node, 2 leaf and 2 pod
 * uplinks). */
#define COLL_FABRIC_HOPS 7

/* The shared links of a fabric between nodes (a fat-tree's tapered leaf and
 * pod uplinks, a dragonfly's switch uplinks and global links), as the
 * platform builds them (platforms/fabric.c): route(ctx, a, b, ids, bw)
 * writes the links of the route from node a to node b (a != b, the fabric's
 * node numbers) that can limit a flow, each an id in [0, nids) (one per link
 * and direction) with its bandwidth, and returns how many (at most
 * COLL_FABRIC_HOPS). Links that can never be the bottleneck (their
 * bandwidth is at least what all the nodes below them can send) are left
 * out: a fabric without any has nids 0. */
typedef int (*coll_fabric_fn)(const void *ctx, int a, int b, int *ids, double *bw);
typedef struct coll_fabric {
    coll_fabric_fn route;
    const void *ctx;
    int nids;
    unsigned long serial; /* distinct for every fabric built: memos key on it */
} coll_fabric;

/* The most links a route inside a node crosses that coll_topo keeps. */
#define COLL_ROUTE_HOPS 4

/* node_ids: any integers per member (NULL: every member its own node). */
coll_topo *coll_topo_new(int n, const int *node_ids, int nvls);
/* The NIC of each member: nic_ids[i] any integer naming a NIC of member i's
 * node (members of one node with the same id share it; negative: a NIC of
 * its own), share[i] (NULL: 1) the fraction of that NIC's bandwidth the
 * group's flows get (the first member of each NIC gives it). The analytical
 * cost (coll_cost) then shares a NIC's bandwidth among the flows between
 * nodes that use it, as the platform's NIC link does; nic_ids NULL: none. */
void coll_topo_set_nics(coll_topo *t, const int *nic_ids, const double *share);
/* The links of the route from member a to member b (same node): at most
 * max of them into ids (any pointer naming a link; equal pointers on one
 * node are one link) and bw (its bandwidth); returns how many, or -1 when
 * unknown or longer than max. */
typedef int (*coll_links_fn)(void *ctx, int a, int b, int max, const void **ids, double *bw);
/* Reads every route between members of one node through fn; the analytical
 * cost then shares each link among the flows that cross it, as the
 * platform does (a mesh's pairs each have their own links, an uneven
 * fabric's routes their own widths and shared hops). Any route fn cannot
 * give leaves the topology without links (0); else 1. */
int coll_topo_set_links(coll_topo *t, coll_links_fn fn, void *ctx);
/* The same, where cls[i] (NULL: none) is a class of member i such that two
 * nodes whose members have the same classes in local order have the same
 * routes on links of their own (the members' GPU indices): such a node
 * copies the previous node's routes instead of asking fn. */
int coll_topo_set_links_by(coll_topo *t, coll_links_fn fn, void *ctx, const int *cls);
/* The links inside a node by local GPU index (fn's a and b), for models
 * that know a member's GPU but not the platform (platforms' topo_gpu_links). */
typedef struct coll_gpu_links {
    coll_links_fn fn;
    void *ctx;
    unsigned long serial; /* distinct for every one built: memos key on it */
} coll_gpu_links;
/* The fabric between the members' nodes: node_ids[i] is member i's node in
 * f's numbering, share (0 < share <= 1) the part of each fabric link the
 * group's flows get (1: the group alone on the fabric; the training path's
 * groups run beside copies of themselves). The analytical cost then shares
 * each fabric link among the flows between nodes that cross it, as the
 * platform's link does. f NULL or without links: none (as before); f must
 * outlive t. */
void coll_topo_set_fabric(coll_topo *t, const coll_fabric *f, const int *node_ids, double share);
void coll_topo_free(coll_topo *t);

/* A transfer's peer at or beyond the group size is node (peer - n)'s
 * NVSwitch (NVLS), or with peer n + nnodes the fabric's SHARP switches
 * (CollNet): sending to it adds into the switch's buffer (reduce) or stores
 * into it; receiving from it reads the buffer. */
static inline int coll_is_switch(int n, int peer) { return peer >= n; }

/* A field added here that changes the schedule must also be compared by
 * topo.c's mview_same (the memo of merged views; proto is not: no schedule
 * reads it). */
typedef struct coll_plan {
    og_coll coll;
    int n;                  /* group size */
    int root;               /* group index of the root (broadcast, reduce) */
    int64_t bytes;          /* nccl-tests "size" of the collective */
    const int64_t *vbytes;  /* all-to-allv: bytes this rank sends to each member */
    int algo;               /* row of the algorithm table */
    coll_proto proto;       /* COLL_SIMPLE unless selected or forced */
    int nsteps;
    int nchunks;
    int width;              /* most transfers one rank posts in one step, per direction */
    int merged_width;       /* most peers of one rank over the whole schedule */
    int trees;              /* tree: the trees the schedule runs (set by its setup) */
    const coll_topo *topo;  /* optional (NULL: every member its own node, no NVLS) */
} coll_plan;

typedef struct coll_algo {
    const char *name;
    const char *desc;
    unsigned colls;         /* bitmask of (1u << og_coll) it implements */
    void (*setup)(coll_plan *p); /* sets nsteps, nchunks, width, merged_width */
    void (*step)(const coll_plan *p, int me, int s, coll_step *out);
    /* optional: all steps' transfers merged per peer, in O(1) per peer */
    void (*merged)(const coll_plan *p, int me, coll_step *out);
    /* optional: why this algorithm cannot run on p's group and topology
     * (NULL when it can); checked by coll_plan_init */
    const char *(*unfit)(const coll_plan *p);
    /* whether the automatic selection considers it: COLL_TUNER_NO (MPI-style
     * algorithms NCCL does not run: only when forced), COLL_TUNER_YES, or
     * COLL_TUNER_ONE_PER_NODE (NCCL's PAT: only with one member per node) */
    int tuner;
    int family;             /* coll_family (coll_params.h): its row of the cost parameters */
} coll_algo;

enum { COLL_TUNER_NO, COLL_TUNER_YES, COLL_TUNER_ONE_PER_NODE };

/* The algorithm table. */
int coll_nalgos(void);
const coll_algo *coll_algo_get(int id);

/* Find an algorithm by name that implements coll; -1 with the list of valid
 * names for that collective in err. */
int coll_algo_find(const char *name, og_coll coll, char *err, size_t errlen);

/* Parse "algo" or "algo:proto" (proto: simple, ll128, ll) for coll; -1 with
 * the valid names in err. *proto is COLL_PROTO_AUTO when not given. */
int coll_algo_parse(const char *spec, og_coll coll, int *algo, coll_proto *proto, char *err, size_t errlen);

/* What the selection knows of the hardware: the latency and bandwidth
 * between two members of one node (alpha, bw) and of two nodes (inter_alpha,
 * inter_bw; 0: the same as inside), the nodes the group spans and whether
 * they all have NVLS-capable switches. NULL: 5 us, 25 GB/s, one node per
 * member. coll_hw_from_routes fills it from a route function. */
typedef struct coll_hw {
    double alpha, bw;
    const coll_topo *topo;  /* NULL: every member its own node */
    double inter_alpha, inter_bw;
} coll_hw;

typedef void (*coll_route_fn)(void *ctx, int a, int b, double *lat, double *bw);
void coll_hw_from_routes(coll_hw *hw, int n, const coll_topo *topo, coll_route_fn route, void *ctx);

/* The automatic choice (NCCL-tuner-like: the algorithm and protocol of least
 * predicted time, coll_estimate, among those that implement coll). */
int coll_select(og_coll coll, int n, int64_t bytes, const coll_hw *hw, coll_proto *proto);
/* The protocol the tuner picks for algorithm algo (least estimated time among
 * those the library runs with it); COLL_SIMPLE when none applies. */
coll_proto coll_best_proto(og_coll coll, int n, int64_t bytes, int algo, const coll_hw *hw);

/* The tuner's closed-form estimate of a plan: the call's latency
 * (coll_call_latency) + one route latency (alpha) + the most wire bytes a rank
 * sends or receives over bw; with a topology and inter-node figures, a rank's
 * bytes to its own node and to other nodes go over their own links at their
 * own bandwidth (in parallel), and alpha is the inter-node one when the plan
 * crosses nodes. */
double coll_estimate(const coll_plan *p, double alpha, double bw);
double coll_estimate_hw(const coll_plan *p, const coll_hw *hw);

/* Fill a plan; algo < 0 selects automatically. Returns 0 or -1 with err.
 * coll_plan_init_topo also gives the group's topology (it must outlive p). */
int coll_plan_init(coll_plan *p, og_coll coll, int n, int root, int64_t bytes,
                   const int64_t *vbytes, int algo, char *err, size_t errlen);
int coll_plan_init_topo(coll_plan *p, og_coll coll, int n, int root, int64_t bytes, const int64_t *vbytes,
                        int algo, const coll_topo *topo, char *err, size_t errlen);

/* Steps of rank me (group index); a step holds up to cap transfers each way
 * (plan->width for steps, plan->merged_width for the merged view). */
coll_step *coll_step_new(int cap);
void coll_step_free(coll_step *st);
void coll_plan_step(const coll_plan *p, int me, int s, coll_step *out);

/* Merge a step's transfers to the same peer into one (bytes summed, chunk
 * fields meaningless): what the engine posts, one flow per peer and step. */
void coll_step_merge_peers(coll_step *st);

/* All transfers of rank me merged into one per peer and direction (the
 * pipelined fidelity): chunk fields are meaningless there, bytes are totals. */
void coll_plan_merged(const coll_plan *p, int me, coll_step *out);

/* The same, lowered to member-to-member flows that the engine and the cost
 * run: transfers to and from a node's NVSwitch become one flow from each
 * member to the next member of its node carrying max(what the member sends
 * to the switch, what the next member receives from it): a member's NVLink
 * carries its data up to the switch once and the result down once, both
 * directions at once. out needs room for width + 1 (merged_width + 1). */
void coll_plan_step_phys(const coll_plan *p, int me, int s, coll_step *out);
void coll_plan_merged_phys(const coll_plan *p, int me, coll_step *out);
/* The same view without keeping it (a caller reading each member once). */
void coll_plan_merged_phys_once(const coll_plan *p, int me, coll_step *out);
/* Where p's physical merged view is its algorithm's closed form as it is
 * (no NVSwitch or SHARP entries to lower, nsteps > 0), that function, which
 * a caller reading every member may call directly (out cleared first);
 * else NULL. */
typedef void (*coll_merged_fn)(const coll_plan *p, int me, coll_step *out);
coll_merged_fn coll_plan_merged_direct(const coll_plan *p);
/* Whether coll_plan_merged_phys keeps the last plan's views (default 1). */
void coll_view_memo(int on);

/* Size of chunk c when `bytes` is cut into k near-equal chunks. */
int64_t coll_chunk_bytes(int64_t bytes, int k, int c);
int64_t coll_chunk_range_bytes(int64_t bytes, int k, int c, int nchunk);

/* Closed-form (analytical) cost of a plan, no simulation. route(ctx, a, b,
 * &lat, &bw) gives the latency (s) and bandwidth (bytes/s) from member a to
 * member b. Transfers that share an endpoint in one step share its bandwidth:
 * a transfer r->q takes lat + max(bytes r sends, bytes q receives)/bw from
 * when both r and q are ready. COLL_COST_STEP chains the steps per rank (the
 * `step` fidelity's model); COLL_COST_PIPELINED merges each pair's steps into
 * one flow and adds (nsteps - 1) x the rank's largest peer latency (the
 * `pipelined` fidelity's model). Both add the call's latency once
 * (coll_call_latency: launch, base and per-step latencies). */
typedef enum { COLL_COST_STEP, COLL_COST_PIPELINED } coll_cost_kind;
double coll_cost(const coll_plan *p, coll_cost_kind kind, coll_route_fn route, void *ctx);
/* coll_cost_fast(0): the pipelined cost by its reference path (three passes
 * over the members, a route cache, no memo of wire sizes and call tails);
 * the same figures bit for bit, for the tests. On by default. */
void coll_cost_fast(int on);
/* The one-pass cost's runs of at least min_flows flows (default 4,096)
 * whose fabric links may fill first run without them, and keep that run
 * where none filled (the same figures; cheaper where the run then folds). */
void coll_cost_fabric_try(size_t min_flows);

/* A size that the collective cannot cut into whole elements: -1 with err.
 * all-gather, reduce-scatter and all-to-all need bytes divisible by
 * n x elsize; the others by elsize. */
int coll_check_size(og_coll coll, int n, int64_t bytes, int elsize, char *err, size_t errlen);

/* A graph of n ranks, one group of all of them, and one collective on it
 * (forced to algo, "name[:proto]", unless NULL): what `trainsim coll` and the
 * benchmarks simulate. */
og_graph *coll_graph(og_coll coll, int n, int64_t bytes, og_dtype dtype, int root, const char *algo);

/* nccl-tests' algbw/busbw factor: busbw = algbw * factor. */
double coll_busbw_factor(og_coll coll, int n);

/* ---- The selection policy (policy.c): what the user overrides of the
 * automatic choice. In order: an algorithm forced for the collective
 * (--coll), the first row of a tuning table (--tuning) whose collective,
 * group-size range and byte range hold the call, and coll_select. A forced
 * algorithm or a matching row that cannot run on the group's topology
 * (NVLS across nodes, hierarchical on uneven nodes) falls back to
 * coll_select. docs/collectives.md gives the CSV format. ---- */
typedef struct coll_policy coll_policy;
typedef enum { COLL_BY_AUTO, COLL_BY_FORCE, COLL_BY_TABLE } coll_source;

coll_policy *coll_policy_new(void);
void coll_policy_free(coll_policy *pol);

/* A collective by name: og_coll_name's ("all_reduce") or without the
 * underscores ("allreduce"); -1 when unknown. */
int coll_from_name(const char *s);

/* "COLL=ALGO[:PROTO],...": force those collectives' algorithms (a later item
 * for the same collective wins). -1 with err naming the bad item. */
int coll_policy_force(coll_policy *pol, const char *spec, char *err, size_t errlen);
/* The algorithm forced for coll: 1 (and *algo, *proto) or 0. */
int coll_policy_forced(const coll_policy *pol, og_coll coll, int *algo, coll_proto *proto);

/* Append the rows of a tuning-table CSV (header
 * coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm; ranges inclusive, a
 * maximum may be "inf"; '#' lines and blank lines skipped). All rows or none:
 * -1 with "FILE:LINE: what: 'value'" in err. */
int coll_policy_load(coll_policy *pol, const char *path, char *err, size_t errlen);
size_t coll_policy_rules(const coll_policy *pol);
/* Distinct for every policy and after every change to one (0 for NULL):
 * memos of costs that depend on the policy's choices key on it. */
unsigned long coll_policy_serial(const coll_policy *pol);

/* The policy's choice for one call (pol NULL: coll_select), and which rule
 * made it (src may be NULL). */
int coll_policy_select(const coll_policy *pol, og_coll coll, int n, int64_t bytes, const coll_hw *hw,
                       coll_proto *proto, coll_source *src);
const char *coll_source_name(coll_source s);

#endif
