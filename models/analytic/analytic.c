/* Alpha-beta collective costs and the contention-free critical path of an op
 * graph: per-rank stream timelines, collectives joined across their groups,
 * transfers matched by (src, dst, tag) in order. No SimGrid. */
#include "analytic/analytic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_params.h"
#include "msccl.h"
#include "util.h"

/* ---- network defaults and costs ---- */

static const struct netrow {
    const char *prefix;
    an_net net;
} nets[] = {
    /* DGX A100: NVLink3 300 GB/s per direction, P2P latency 2.7-3.4 us (ABCI);
     * 8 HDR 200 Gb/s NICs, one per GPU, OSU D-D latency 3.29 us (ABCI). */
    {"A100", {8, 300e9, 3e-6, 25e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL}},
    /* DGX H100/H200: NVLink4 450 GB/s per direction; 8 NDR 400 Gb/s NICs. */
    {"H100", {8, 450e9, 3e-6, 50e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL}},
    {"H200", {8, 450e9, 3e-6, 50e9, 3.3e-6, 0, 0, 0, NULL, 0, NULL, NULL}},
    /* Frontier node: a ring over 8 GCDs crosses single Infinity Fabric links
     * (50 GB/s); 4 Slingshot NICs of 25 GB/s for 8 GCDs; GPU osu_latency 2.5 us (LUMI). */
    {"MI250X", {8, 50e9, 2.5e-6, 12.5e9, 2.5e-6, 0, 0, 0, NULL, 0, NULL, NULL}},
};

int an_net_default(const char *gpu_name, an_net *net)
{
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        if (strncmp(gpu_name, nets[i].prefix, strlen(nets[i].prefix)) == 0) {
            *net = nets[i].net;
            return 0;
        }
    return -1;
}

double an_coll_time(og_coll c, int n, double bytes, double bw, double lat)
{
    if (n <= 1) return 0;
    double f = (double)(n - 1) / n;
    switch (c) {
    case OG_ALLREDUCE: return 2 * f * bytes / bw + 2 * (n - 1) * lat;
    case OG_ALLGATHER:
    case OG_REDUCESCATTER:
    case OG_ALLTOALL:
    case OG_ALLTOALLV: return f * bytes / bw + (n - 1) * lat;
    case OG_BROADCAST:
    case OG_REDUCE: return bytes / bw + (n - 1) * lat;
    case OG_BARRIER: return 2 * (n - 1) * lat;
    default: return 0;
    }
}

/* The number in a rank's host name ("gpu-17"), or the rank itself. */
static int host_index(const og_graph *g, int rank)
{
    int id = rank;
    const char *h = g->ranks[rank].host;
    if (h) {
        const char *p = h + strlen(h);
        while (p > h && p[-1] >= '0' && p[-1] <= '9') p--;
        if (*p) id = atoi(p);
    }
    return id;
}

int an_node_of(const an_net *net, const og_graph *g, int rank)
{
    int id = host_index(g, rank);
    return net->gpus_per_node > 0 ? id / net->gpus_per_node : id;
}

int an_group_intra(const an_net *net, const og_graph *g, const og_group *gr)
{
    for (int i = 1; i < gr->n; i++)
        if (an_node_of(net, g, gr->ranks[i]) != an_node_of(net, g, gr->ranks[0])) return 0;
    return 1;
}

typedef struct route_ctx {
    const an_net *net;
    const int *node;
} route_ctx;

/* A GPU's route to another node is its whole NIC (inter_bw x nic_gpus), as
 * the platform's route bandwidth is: the selection reads it so, and the cost
 * shares the NIC through the topology's pools (nic_pools). */
static int gpus_of_nic(const an_net *net)
{
    return net->nic_gpus > 1 ? net->nic_gpus : 1;
}

static void an_route(void *ctx, int a, int b, double *lat, double *bw)
{
    const route_ctx *r = ctx;
    int intra = r->node[a] == r->node[b];
    *lat = intra ? r->net->intra_lat : r->net->inter_lat;
    *bw = intra ? r->net->intra_bw : r->net->inter_bw * gpus_of_nic(r->net);
}

/* Where GPUs share NICs, a group's flows between nodes share its members'
 * part of their node's NICs: one pool per node of members x inter_bw (share
 * members / nic_gpus of the route's whole NIC). That is exact when the group
 * spreads over the node's NICs evenly (NCCL's rings leave a node by every
 * member's own NIC) and when all of a node's GPUs are in the group (a chain
 * or a tree then gets whole NICs, as on the platform), and it keeps a
 * group of one GPU per NIC at the GPU's share (its copies on the other GPUs
 * of the NIC run at the same time). */
static void nic_pools(const an_net *net, coll_topo *topo, const int *node)
{
    int g = gpus_of_nic(net), n = topo->n;
    if (g < 2 || topo->nnodes < 2) return;
    double *share = ts_malloc(n * sizeof *share);
    for (int i = 0; i < n; i++) {
        int k = topo->node[i];
        share[i] = (double)(topo->first[k + 1] - topo->first[k]) / g;
    }
    coll_topo_set_nics(topo, node, share);
    free(share);
}

/* The fabric between the group's nodes: its links shared by the group's flows
 * and, where the group has fewer members on a node than it has GPUs, by the
 * copies of the group on the node's other GPUs (the other TP ranks' DP
 * groups, which cross the same links at the same time): the group gets
 * members / gpus_per_node of each, from its fullest node. */
static void fabric_pools(const an_net *net, coll_topo *topo, const int *node)
{
    if (!net->fabric || topo->nnodes < 2) return;
    int most = 0, gpn = net->gpus_per_node > 0 ? net->gpus_per_node : 1;
    for (int k = 0; k < topo->nnodes; k++)
        if (topo->first[k + 1] - topo->first[k] > most) most = topo->first[k + 1] - topo->first[k];
    coll_topo_set_fabric(topo, net->fabric, node, most < gpn ? (double)most / gpn : 1);
}

/* The routes inside a node by member (coll_links_fn): its GPUs' routes. */
typedef struct gpu_route_ctx {
    const coll_gpu_links *links;
    const int *gpu;
} gpu_route_ctx;

static int member_links(void *ctx, int a, int b, int max, const void **ids, double *bw)
{
    const gpu_route_ctx *g = ctx;
    return g->links->fn(g->links->ctx, g->gpu[a], g->gpu[b], max, ids, bw);
}

/* Where members share a node and their GPUs are known, the links of their
 * routes inside it (coll_topo_set_links), as the engine's topology has
 * them on the coll path. */
static void gpu_link_pools(const an_net *net, coll_topo *topo, const int *gpu)
{
    if (!net->gpu_links || !net->gpu_links->fn || !gpu || topo->nnodes == topo->n) return;
    gpu_route_ctx g = {net->gpu_links, gpu};
    coll_topo_set_links_by(topo, member_links, &g, gpu); /* nodes with the same GPUs: the same routes */
}

/* The collective as the engine runs it on n members placed on nodes node[]:
 * the same selection (an algorithm the op forces, else net->policy's choice
 * from the routes and the group's nodes) and the closed-form cost of its
 * schedule (coll_cost, pipelined). *choice (when not NULL): algorithm |
 * protocol << 8, -1 when no schedule was costed (all-to-allv: the alpha-beta
 * ring form). */
static double sched_nodes(const an_net *net, int n, const int *node, const int *gpu, og_coll c, int64_t bytes,
                          const char *forced, int *choice)
{
    if (choice) *choice = -1;
    if (n <= 1) return 0;
    coll_topo *topo = coll_topo_new(n, node, net->nvls);
    nic_pools(net, topo, node);
    fabric_pools(net, topo, node);
    gpu_link_pools(net, topo, gpu);
    route_ctx ctx = {net, node};
    coll_hw hw = {0, 0, topo, 0, 0};
    coll_hw_from_routes(&hw, n, topo, an_route, &ctx);
    coll_proto proto = COLL_SIMPLE;
    coll_plan p;
    char err[TS_ERRLEN];
    double t;
    int a = -1;
    if (c != OG_ALLTOALLV && (!forced || coll_algo_parse(forced, c, &a, &proto, err, sizeof err) < 0))
        a = coll_policy_select(net->policy, c, n, bytes, &hw, &proto, NULL);
    else if (proto == COLL_PROTO_AUTO)
        proto = coll_best_proto(c, n, bytes, a, &hw);
    if (a < 0 || coll_plan_init_topo(&p, c, n, 0, bytes, NULL, a, topo, err, sizeof err) < 0) {
        int intra = 1;
        for (int i = 1; i < n; i++) intra &= node[i] == node[0];
        t = an_coll_time(c, n, (double)bytes, intra ? net->intra_bw : net->inter_bw,
                         intra ? net->intra_lat : net->inter_lat);
    } else {
        p.proto = proto;
        t = coll_cost(&p, COLL_COST_PIPELINED, an_route, &ctx);
        if (choice) *choice = a | proto << 8;
    }
    coll_topo_free(topo);
    return t;
}

/* A memo of an_sched_time_nodes. The cost reads the placement only through
 * which members share a node (an_route; coll_topo_new renumbers the nodes in
 * order of first appearance), so the key is that pattern (node ids renumbered
 * the same way) with every other input sched_nodes reads: the collective, the
 * bytes, the network's figures, the policy (its serial changes with any
 * change to it) and the cost parameters' generation (coll_params_set). An
 * MSCCL choice reads the loaded program and is not kept. Searches meet one
 * group shape under many (stride, first rank) placements. */
typedef struct smemo {
    int used, n;
    og_coll c;
    int64_t bytes;
    double intra_bw, intra_lat, inter_bw, inter_lat;
    int nvls, nic_gpus;
    const struct coll_policy *policy;
    unsigned long pserial, fserial, lserial;
    unsigned gen;
    int npat;           /* n, or 2n: the members' GPUs after their nodes */
    int *pat;
    double t;
} smemo;
#define SMEMO_SLOTS 4096
static smemo smemo_tab[SMEMO_SLOTS];
static int smemo_on = 1;

void an_memo(int on)
{
    smemo_on = on;
    coll_cost_fast(on);
    for (int i = 0; i < SMEMO_SLOTS; i++) {
        free(smemo_tab[i].pat);
        smemo_tab[i] = (smemo){0};
    }
}

/* node[] renumbered 0, 1, ... in order of first appearance, into pat. */
static void node_pattern(int n, const int *node, int *pat)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    int *key = ts_malloc(cap * sizeof *key), *val = ts_malloc(cap * sizeof *val), next = 0;
    char *used = ts_calloc(cap, 1);
    for (int i = 0; i < n; i++) {
        if (i > 0 && node[i] == node[i - 1]) { /* placements come node by node */
            pat[i] = pat[i - 1];
            continue;
        }
        uint64_t h = (uint64_t)(uint32_t)node[i] * 0x9E3779B97F4A7C15ull;
        size_t j = (size_t)(h >> 20) & (cap - 1);
        while (used[j] && key[j] != node[i]) j = (j + 1) & (cap - 1);
        if (!used[j]) used[j] = 1, key[j] = node[i], val[j] = next++;
        pat[i] = val[j];
    }
    free(key), free(val), free(used);
}

double an_sched_time_nodes(const an_net *net, int n, const int *node, og_coll c, int64_t bytes)
{
    return an_sched_time_gpus(net, n, node, NULL, c, bytes);
}

double an_sched_time_gpus(const an_net *net, int n, const int *node, const int *gpu, og_coll c, int64_t bytes)
{
    if (!net->gpu_links || !net->gpu_links->fn) gpu = NULL; /* not read */
    if (!smemo_on || n <= 1) return sched_nodes(net, n, node, gpu, c, bytes, NULL, NULL);
    int npat = gpu ? 2 * n : n;
    int *pat = ts_malloc(npat * sizeof *pat);
    node_pattern(n, node, pat);
    if (gpu) memcpy(pat + n, gpu, n * sizeof *pat); /* which GPUs: which links */
    unsigned long ls = gpu ? net->gpu_links->serial : 0;
    /* over a fabric, which nodes they are matters (one switch or two): the
     * key is the nodes themselves where the group spans several */
    unsigned long fs = net->fabric ? net->fabric->serial : 0;
    if (fs)
        for (int i = 1; i < n; i++)
            if (pat[i] != 0) {
                memcpy(pat, node, n * sizeof *pat);
                break;
            }
    unsigned gen = coll_params_generation();
    unsigned long ps = coll_policy_serial(net->policy);
    uint64_t h = 1469598103934665603ull;
    const int64_t key[3] = {n, c, bytes};
    for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)key[i]) * 1099511628211ull;
    for (int i = 0; i < npat; i++) h = (h ^ (uint32_t)pat[i]) * 1099511628211ull;
    h ^= h >> 31, h *= 0x94d049bb133111ebull, h ^= h >> 29;
    smemo *e = &smemo_tab[h % SMEMO_SLOTS];
    if (e->used && e->n == n && e->c == c && e->bytes == bytes && e->gen == gen && e->policy == net->policy &&
        e->pserial == ps && e->intra_bw == net->intra_bw && e->intra_lat == net->intra_lat &&
        e->inter_bw == net->inter_bw && e->inter_lat == net->inter_lat && e->nvls == net->nvls &&
        e->nic_gpus == net->nic_gpus && e->fserial == fs && e->lserial == ls && e->npat == npat &&
        memcmp(e->pat, pat, npat * sizeof *pat) == 0) {
        free(pat);
        return e->t;
    }
    int choice;
    double t = sched_nodes(net, n, node, gpu, c, bytes, NULL, &choice);
    if (choice >= 0 && coll_algo_get(choice & 0xff)->step == coll_msccl_step) { /* reads the loaded program */
        free(pat);
        return t;
    }
    free(e->pat);
    *e = (smemo){1, n, c, bytes, net->intra_bw, net->intra_lat, net->inter_bw, net->inter_lat, net->nvls,
                 net->nic_gpus, net->policy, ps, fs, ls, gen, npat, pat, t};
    return t;
}

static double sched_time(const an_net *net, const og_graph *g, const og_group *gr, og_coll c, int64_t bytes,
                         const char *forced, int *choice)
{
    if (choice) *choice = -1;
    if (gr->n <= 1) return 0;
    int *node = ts_malloc(2 * (size_t)gr->n * sizeof *node), *gpu = node + gr->n;
    for (int i = 0; i < gr->n; i++) {
        node[i] = an_node_of(net, g, gr->ranks[i]);
        gpu[i] = net->gpus_per_node > 0 ? host_index(g, gr->ranks[i]) % net->gpus_per_node : 0;
    }
    double t = sched_nodes(net, gr->n, node, net->gpu_links ? gpu : NULL, c, bytes, forced, choice);
    free(node);
    return t;
}

double an_sched_time(const an_net *net, const og_graph *g, const og_group *gr, og_coll c, int64_t bytes)
{
    return sched_time(net, g, gr, c, bytes, NULL, NULL);
}

/* ---- critical path ---- */

typedef struct inst {       /* one instance of a collective on a group */
    int arrived;
    double tmax;
    int *ops;               /* op id per member */
} inst;

typedef struct ginfo {
    int ninst;
    size_t cap;
    inst *insts;
    int *seq;               /* per member: collectives on the group so far, in op order */
    og_coll last_coll;      /* cache of the last schedule costed on the group */
    int64_t last_bytes;
    const char *last_algo;  /* the op's forced algorithm (pointer identity; NULL: none) */
    double last_time;
    int last_choice;
} ginfo;

typedef struct p2p {        /* a pending send or receive, waiting for its match */
    int src, dst, tag, is_send, rank, op;
    double ready;
    struct p2p *next;
} p2p;

typedef struct state {
    const og_graph *g;
    const an_net *net;
    eng_result *res;
    char *done;             /* per rank, per op (flattened) */
    size_t *base;           /* offset of rank r in done */
    int **next;             /* per rank, per stream: index into the stream's op list */
    int ***slist;           /* per rank, per stream: op ids in order */
    int **slen;
    int *member;            /* COLL op (flattened): member index in its group */
    int *cseq;              /* COLL op (flattened): its sequence number on its group (op order) */
    int *cidx;              /* COLL op (flattened): its index among its rank's collectives (eng_result.algo) */
    ginfo *gi;
    p2p **hash;
    size_t hcap;
    int *work, nwork, *inwork;
    int remaining;
} state;

static size_t p2p_hash(int src, int dst, int tag, size_t cap)
{
    uint64_t k = ((uint64_t)(unsigned)src * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(unsigned)dst * 0xC2B2AE3D27D4EB4Full) ^
                 ((uint64_t)(unsigned)tag * 0x165667B19E3779F9ull);
    return (size_t)(k ^ (k >> 29)) & (cap - 1);
}

static void push(state *S, int r)
{
    if (!S->inwork[r]) S->inwork[r] = 1, S->work[S->nwork++] = r;
}

static void finish(state *S, int r, int op, double start, double end)
{
    S->res->start[r][op] = start;
    S->res->end[r][op] = end;
    S->done[S->base[r] + op] = 1;
    S->remaining--;
    push(S, r);
}

static double op_ready(state *S, int r, const og_op *op, double prev_end, int *ok)
{
    double t = prev_end;
    *ok = 1;
    for (int d = 0; d < op->ndeps; d++) {
        int j = og_deps(op)[d];
        if (!S->done[S->base[r] + j]) {
            *ok = 0;
            return 0;
        }
        if (S->res->end[r][j] > t) t = S->res->end[r][j];
    }
    return t;
}

static double pair_cost(state *S, int a, int b, double bytes)
{
    int intra = an_node_of(S->net, S->g, a) == an_node_of(S->net, S->g, b);
    return intra ? S->net->intra_lat + bytes / S->net->intra_bw : S->net->inter_lat + bytes / S->net->inter_bw;
}

/* Post a send or receive; complete both sides when the match is there. */
static void post_p2p(state *S, int r, int opi, double ready)
{
    const og_op *op = &S->g->ranks[r].ops[opi];
    int is_send = op->kind == OG_SEND, src = is_send ? r : op->peer, dst = is_send ? op->peer : r;
    size_t h = p2p_hash(src, dst, op->tag, S->hcap);
    p2p **pp = &S->hash[h];
    for (; *pp; pp = &(*pp)->next) {
        p2p *q = *pp;
        if (q->src == src && q->dst == dst && q->tag == op->tag && q->is_send != is_send) {
            double start = q->ready > ready ? q->ready : ready;
            double end = start + pair_cost(S, src, dst, (double)op->bytes);
            /* both sides start when the transfer does: waiting for the peer is idle time */
            finish(S, q->rank, q->op, start, end);
            finish(S, r, opi, start, end);
            *pp = q->next;
            free(q);
            return;
        }
    }
    /* append (FIFO per key) */
    p2p *n = ts_calloc(1, sizeof *n);
    *n = (p2p){src, dst, op->tag, is_send, r, opi, ready, NULL};
    *pp = n;
}

static void post_coll(state *S, int r, int opi, double ready)
{
    const og_op *op = &S->g->ranks[r].ops[opi];
    const og_group *gr = &S->g->groups[op->group];
    ginfo *gi = &S->gi[op->group];
    int me = S->member[S->base[r] + opi];
    int seq = S->cseq[S->base[r] + opi];
    if (seq >= gi->ninst) {
        ts_grow(&gi->insts, sizeof *gi->insts, &gi->cap, (size_t)seq + 1);
        for (int i = gi->ninst; i <= seq; i++) memset(&gi->insts[i], 0, sizeof gi->insts[i]);
        gi->ninst = seq + 1;
    }
    inst *in = &gi->insts[seq];
    if (!in->ops) in->ops = ts_malloc(gr->n * sizeof *in->ops);
    in->ops[me] = opi;
    if (ready > in->tmax) in->tmax = ready;
    S->res->start[r][opi] = ready;
    if (++in->arrived < gr->n) return;
    if (gi->last_bytes != op->bytes || gi->last_coll != op->coll || gi->last_algo != op->algo) {
        gi->last_bytes = op->bytes;
        gi->last_coll = op->coll;
        gi->last_algo = op->algo;
        gi->last_time = sched_time(S->net, S->g, gr, op->coll, op->bytes, op->algo, &gi->last_choice);
    }
    double end = in->tmax + gi->last_time;
    int choice = gi->last_choice; /* finish() may run this group's next collective */
    for (int i = 0; i < gr->n; i++) {
        int rr = gr->ranks[i];
        S->res->algo[rr][S->cidx[S->base[rr] + in->ops[i]]] = choice;
        finish(S, rr, in->ops[i], in->tmax, end); /* waiting for the last member is idle */
    }
    free(in->ops);
    in->ops = NULL;
}

/* Advance every stream of rank r as far as it goes. */
static int advance(state *S, int r, char *err, size_t errlen)
{
    const og_rank *rk = &S->g->ranks[r];
    int progress = 1;
    while (progress) {
        progress = 0;
        for (int s = 0; s < OG_MAX_STREAMS; s++) {
            while (S->next[r][s] < S->slen[r][s]) {
                int opi = S->slist[r][s][S->next[r][s]];
                const og_op *op = &rk->ops[opi];
                double prev = 0;
                if (S->next[r][s] > 0) {
                    int p = S->slist[r][s][S->next[r][s] - 1];
                    if (!S->done[S->base[r] + p]) break;   /* posted, waiting for its match */
                    prev = S->res->end[r][p];
                }
                int ok;
                double t = op_ready(S, r, op, prev, &ok);
                if (!ok) break;
                S->next[r][s]++;
                progress = 1;
                if (op->kind == OG_COMPUTE) {
                    double d = op->duration;
                    if (d < 0) {
                        if (S->net->flops <= 0 && op->flops > 0)
                            return ts_err(err, errlen, "rank %d op %d: compute by flops needs a device speed", r, opi);
                        d = op->flops > 0 ? op->flops / S->net->flops : 0;
                        if (op->bytes > 0 && S->net->hbm_bw > 0 && op->bytes / S->net->hbm_bw > d)
                            d = op->bytes / S->net->hbm_bw;
                    }
                    S->done[S->base[r] + opi] = 1;
                    S->res->start[r][opi] = t;
                    S->res->end[r][opi] = t + d;
                    S->remaining--;
                } else if (op->kind == OG_COLL) {
                    post_coll(S, r, opi, t);
                } else {
                    post_p2p(S, r, opi, t);
                }
                if (!S->done[S->base[r] + opi]) break;
            }
        }
    }
    return 0;
}

int an_run(const og_graph *g, const an_net *net, eng_result **out, char *err, size_t errlen)
{
    double t0 = ts_wtime();
    *out = NULL;
    state S;
    memset(&S, 0, sizeof S);
    S.g = g;
    S.net = net;
    int n = g->nranks, rc = -1;
    eng_result *res = ts_calloc(1, sizeof *res);
    res->nranks = n;
    res->start = ts_calloc(n, sizeof *res->start);
    res->end = ts_calloc(n, sizeof *res->end);
    res->host = ts_calloc(n, sizeof *res->host);
    res->ranks = ts_calloc(n, sizeof *res->ranks);
    res->algo = ts_calloc(n, sizeof *res->algo);
    S.res = res;
    S.base = ts_malloc((n + 1) * sizeof *S.base);
    S.base[0] = 0;
    for (int r = 0; r < n; r++) S.base[r + 1] = S.base[r] + g->ranks[r].nops;
    S.done = ts_calloc(S.base[n] + 1, 1);
    S.member = ts_malloc((S.base[n] + 1) * sizeof *S.member);
    S.cseq = ts_malloc((S.base[n] + 1) * sizeof *S.cseq);
    S.cidx = ts_malloc((S.base[n] + 1) * sizeof *S.cidx);
    S.next = ts_malloc(n * sizeof *S.next);
    S.slist = ts_malloc(n * sizeof *S.slist);
    S.slen = ts_malloc(n * sizeof *S.slen);
    S.work = ts_malloc(n * sizeof *S.work);
    S.inwork = ts_calloc(n, sizeof *S.inwork);
    S.gi = ts_calloc(g->ngroups + 1, sizeof *S.gi);
    for (int i = 0; i < g->ngroups; i++) {
        const og_group *gr = &g->groups[i];
        S.gi[i].seq = ts_calloc(gr->n + 1, sizeof(int));
        S.gi[i].last_bytes = -1;
    }
    S.hcap = 1024;
    while (S.hcap < (size_t)n * 4) S.hcap *= 2;
    S.hash = ts_calloc(S.hcap, sizeof *S.hash);
    S.remaining = (int)S.base[n];
    for (int r = 0; r < n; r++) {
        const og_rank *rk = &g->ranks[r];
        char host[32];
        snprintf(host, sizeof host, "rank-%d", r);
        res->host[r] = ts_strdup(rk->host ? rk->host : host);
        res->start[r] = ts_calloc(rk->nops + 1, sizeof(double));
        res->end[r] = ts_calloc(rk->nops + 1, sizeof(double));
        int ncoll = 0;
        for (int i = 0; i < rk->nops; i++) ncoll += rk->ops[i].kind == OG_COLL;
        res->algo[r] = ts_malloc((ncoll + 1) * sizeof(int));
        for (int i = 0; i < ncoll; i++) res->algo[r][i] = -1;
        ncoll = 0;
        S.next[r] = ts_calloc(OG_MAX_STREAMS, sizeof(int));
        S.slen[r] = ts_calloc(OG_MAX_STREAMS, sizeof(int));
        S.slist[r] = ts_calloc(OG_MAX_STREAMS, sizeof(int *));
        for (int i = 0; i < rk->nops; i++) {
            const og_op *op = &rk->ops[i];
            if (op->stream < 0 || op->stream >= OG_MAX_STREAMS) {
                ts_err(err, errlen, "rank %d op %d: stream %d out of range", r, i, op->stream);
                goto out;
            }
            S.slen[r][op->stream]++;
            if (op->kind == OG_COLL) {
                if (op->group < 0 || op->group >= g->ngroups) {
                    ts_err(err, errlen, "rank %d op %d: unknown group %d", r, i, op->group);
                    goto out;
                }
                const og_group *gr = &g->groups[op->group];
                int k;
                for (k = 0; k < gr->n && gr->ranks[k] != r; k++) {}
                if (k == gr->n) {
                    ts_err(err, errlen, "rank %d op %d: not a member of group %d", r, i, op->group);
                    goto out;
                }
                S.member[S.base[r] + i] = k;
                /* the k-th collective on a group in op order, as the engine matches them
                 * (not in posting order: streams post out of order) */
                S.cseq[S.base[r] + i] = S.gi[op->group].seq[k]++;
                S.cidx[S.base[r] + i] = ncoll++;
            }
        }
        for (int s = 0; s < OG_MAX_STREAMS; s++)
            if (S.slen[r][s]) S.slist[r][s] = ts_malloc(S.slen[r][s] * sizeof(int)), S.slen[r][s] = 0;
        for (int i = 0; i < rk->nops; i++) {
            int s = rk->ops[i].stream;
            S.slist[r][s][S.slen[r][s]++] = i;
        }
        push(&S, r);
    }
    while (S.nwork > 0) {
        int r = S.work[--S.nwork];
        S.inwork[r] = 0;
        if (advance(&S, r, err, errlen) < 0) goto out;
    }
    if (S.remaining > 0) {
        for (int r = 0; r < n; r++)
            for (int s = 0; s < OG_MAX_STREAMS; s++)
                if (S.next[r][s] < S.slen[r][s] || (S.next[r][s] > 0 &&
                                                     !S.done[S.base[r] + S.slist[r][s][S.next[r][s] - 1]])) {
                    int k = S.next[r][s] > 0 && !S.done[S.base[r] + S.slist[r][s][S.next[r][s] - 1]]
                                ? S.slist[r][s][S.next[r][s] - 1] : S.slist[r][s][S.next[r][s]];
                    const og_op *op = &g->ranks[r].ops[k];
                    ts_err(err, errlen, "deadlock: %d ops never run; rank %d stream %d blocked at op %d (%s%s%s)",
                           S.remaining, r, s, k, og_kind_name(op->kind), og_label(g, op) ? " " : "",
                           og_label(g, op) ? og_label(g, op) : "");
                    goto out;
                }
    }
    for (int r = 0; r < n; r++)
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (res->end[r][i] > res->makespan) res->makespan = res->end[r][i];
    for (int r = 0; r < n; r++) {
        double b[AN_NCATS];
        an_breakdown(g, res, r, b);
        eng_rank_stats *st = &res->ranks[r];
        st->compute = b[AN_COMP];
        st->exposed = b[AN_TP] + b[AN_CP] + b[AN_EP] + b[AN_PP] + b[AN_DP] + b[AN_OTHER];
        st->idle = b[AN_IDLE];
        for (int i = 0; i < g->ranks[r].nops; i++) {
            if (res->end[r][i] > st->finish) st->finish = res->end[r][i];
            if (g->ranks[r].ops[i].kind != OG_COMPUTE) st->comm += res->end[r][i] - res->start[r][i];
        }
    }
    res->fidelity = ENG_NFIDELITY;
    rc = 0;
out:
    res->wall = ts_wtime() - t0;
    for (size_t i = 0; i < S.hcap; i++)
        for (p2p *q = S.hash[i], *nx; q; q = nx) nx = q->next, free(q);
    free(S.hash);
    for (int i = 0; i < g->ngroups; i++) {
        for (int k = 0; k < S.gi[i].ninst; k++) free(S.gi[i].insts[k].ops);
        free(S.gi[i].insts);
        free(S.gi[i].seq);
    }
    free(S.gi);
    for (int r = 0; r < n; r++) {
        if (S.slist[r])
            for (int s = 0; s < OG_MAX_STREAMS; s++) free(S.slist[r][s]);
        free(S.slist[r]);
        free(S.next[r]);
        free(S.slen[r]);
    }
    free(S.slist);
    free(S.next);
    free(S.slen);
    free(S.work);
    free(S.inwork);
    free(S.done);
    free(S.member);
    free(S.cseq);
    free(S.cidx);
    free(S.base);
    if (rc == 0) *out = res;
    else eng_result_free(res);
    return rc;
}

/* ---- waiting as idle ---- */

void an_wait_as_idle(const og_graph *g, eng_result *res)
{
    /* transfers: the k-th send from a to b with tag t matches the k-th receive */
    size_t cap = 1024;
    while (cap < (size_t)g->nranks * 4) cap *= 2;
    p2p **hash = ts_calloc(cap, sizeof *hash);
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind != OG_SEND && op->kind != OG_RECV) continue;
            int is_send = op->kind == OG_SEND, src = is_send ? r : op->peer, dst = is_send ? op->peer : r;
            if (src < 0 || src >= g->nranks || dst < 0 || dst >= g->nranks) continue;
            p2p **pp = &hash[p2p_hash(src, dst, op->tag, cap)];
            for (; *pp; pp = &(*pp)->next) {
                p2p *q = *pp;
                if (q->src == src && q->dst == dst && q->tag == op->tag && q->is_send != is_send) {
                    double t = res->start[q->rank][q->op] > res->start[r][i] ? res->start[q->rank][q->op]
                                                                             : res->start[r][i];
                    res->start[q->rank][q->op] = res->start[r][i] = t;
                    *pp = q->next;
                    free(q);
                    goto next;
                }
            }
            *pp = ts_calloc(1, sizeof **pp);
            **pp = (p2p){src, dst, op->tag, is_send, r, i, 0, NULL};
        next:;
        }
    for (size_t i = 0; i < cap; i++)
        for (p2p *q = hash[i], *nx; q; q = nx) nx = q->next, free(q);
    free(hash);
    /* collectives: the k-th op of a member on a group is instance k */
    for (int gi = 0; gi < g->ngroups; gi++) {
        const og_group *gr = &g->groups[gi];
        int **ids = ts_calloc(gr->n, sizeof *ids), *cnt = ts_calloc(gr->n, sizeof *cnt), ninst = -1;
        for (int k = 0; k < gr->n; k++) {
            int r = gr->ranks[k];
            if (r < 0 || r >= g->nranks) continue;
            ids[k] = ts_malloc((g->ranks[r].nops + 1) * sizeof(int));
            for (int i = 0; i < g->ranks[r].nops; i++)
                if (g->ranks[r].ops[i].kind == OG_COLL && g->ranks[r].ops[i].group == gi) ids[k][cnt[k]++] = i;
            if (ninst < 0 || cnt[k] < ninst) ninst = cnt[k];
        }
        for (int j = 0; j < ninst; j++) {
            double t = 0;
            for (int k = 0; k < gr->n; k++)
                if (ids[k] && res->start[gr->ranks[k]][ids[k][j]] > t) t = res->start[gr->ranks[k]][ids[k][j]];
            for (int k = 0; k < gr->n; k++)
                if (ids[k]) res->start[gr->ranks[k]][ids[k][j]] = t;
        }
        for (int k = 0; k < gr->n; k++) free(ids[k]);
        free(ids);
        free(cnt);
    }
}

/* ---- breakdown ---- */

static const char *cat_names[AN_NCATS] = {"compute", "tp", "cp", "ep", "pp", "dp", "other", "idle"};
const char *an_cat_name(int c) { return c >= 0 && c < AN_NCATS ? cat_names[c] : "?"; }

int an_op_category(const og_graph *g, const og_op *op)
{
    const char *l = og_label(g, op);
    static const struct { const char *p; int c; } pre[] = {
        {"tp.", AN_TP}, {"cp.", AN_CP}, {"ep.", AN_EP}, {"pp.", AN_PP}, {"dp.", AN_DP},
    };
    if (l)
        for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
            if (strncmp(l, pre[i].p, 3) == 0) return pre[i].c;
    return op->kind == OG_COMPUTE ? AN_COMP : AN_OTHER;
}

typedef struct ev {
    double t;
    int cat, delta;
} ev;

static int ev_cmp(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->delta - y->delta; /* ends before starts at the same instant */
}

static int ev_before(const ev *x, const ev *y) { return ev_cmp(x, y) < 0; }

/* Events in ev_cmp's order (equal ones in any: the walk below attributes
 * nothing between events of one instant), merging the ascending runs they
 * come in: listed stream by stream, a stream's ops run one after the other,
 * so its starts and ends alternate in time order (qsort through a callback
 * was 4% of a full-detail run's instructions). */
static void ev_sort(ev *a, int n)
{
    if (n < 2) return;
    int *st = ts_malloc((n + 1) * sizeof *st), nr = 0;
    st[nr++] = 0;
    for (int i = 1; i < n; i++)
        if (ev_before(&a[i], &a[i - 1])) st[nr++] = i;
    st[nr] = n;
    ev *src = a, *dst = nr > 1 ? ts_malloc(n * sizeof *dst) : NULL, *buf = dst;
    while (nr > 1) {
        int k = 0;
        for (int r = 0; r < nr; r += 2) {
            int lo = st[r], mid = st[r + 1], hi = r + 2 <= nr ? st[r + 2] : mid, i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = ev_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
            st[k++] = lo;
        }
        st[k] = n, nr = k;
        ev *t = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(buf);
    free(st);
}

static void rank_breakdown(const og_graph *g, const eng_result *res, int r, double out[AN_NCATS])
{
    const og_rank *rk = &g->ranks[r];
    ev *e = ts_malloc((2 * (size_t)rk->nops + 1) * sizeof *e);
    int ne = 0;
    int first[OG_MAX_STREAMS + 1] = {0}, *by = ts_malloc(((size_t)rk->nops + 1) * sizeof *by);
    for (int i = 0; i < rk->nops; i++) first[rk->ops[i].stream + 1]++;
    for (int k = 0; k < OG_MAX_STREAMS; k++) first[k + 1] += first[k];
    for (int i = 0; i < rk->nops; i++) by[first[rk->ops[i].stream]++] = i; /* stream by stream */
    for (int k = 0; k < rk->nops; k++) {
        int i = by[k];
        double a = res->start[r][i], b = res->end[r][i];
        if (!(b > a)) continue;
        int c = an_op_category(g, &rk->ops[i]);
        e[ne++] = (ev){a, c, +1};
        e[ne++] = (ev){b, c, -1};
    }
    free(by);
    ev_sort(e, ne);
    int active[AN_NCATS] = {0};
    double t = 0;
    static const int order[] = {AN_COMP, AN_TP, AN_CP, AN_EP, AN_PP, AN_DP, AN_OTHER};
    for (int i = 0; i <= ne; i++) {
        double now = i < ne ? e[i].t : res->makespan;
        if (now > t) {
            int c = AN_IDLE;
            for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
                if (active[order[k]] > 0) {
                    c = order[k];
                    break;
                }
            out[c] += now - t;
            t = now;
        }
        if (i < ne) active[e[i].cat] += e[i].delta;
    }
    free(e);
}

void an_breakdown(const og_graph *g, const eng_result *res, int r, double out[AN_NCATS])
{
    memset(out, 0, AN_NCATS * sizeof *out);
    if (r >= 0) {
        rank_breakdown(g, res, r, out);
        return;
    }
    double one[AN_NCATS];
    for (int i = 0; i < g->nranks; i++) {
        memset(one, 0, sizeof one);
        rank_breakdown(g, res, i, one);
        for (int c = 0; c < AN_NCATS; c++) out[c] += one[c] / g->nranks;
    }
}
