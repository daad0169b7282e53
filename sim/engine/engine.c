/* The SimGrid engine: one actor per (rank, stream) executes that stream's ops
 * in order, waiting on cross-stream dependencies; transfers are SimGrid comms
 * between the two ranks' GPU hosts; collectives run their schedules. */
#include "engine.h"

#include "coll_params.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/config.h>
#include <xbt/dynar.h>
#include <xbt/log.h>
#include <malloc.h>

#include "cluster.h"
#include "coll.h"
#include "direct.h"
#include "rails.h"
#include "util.h"

/* How many collectives of one group may be in flight at once before their
 * transfers could be matched across instances (mailboxes are reused modulo). */
#define COLL_SEQ_SLOTS 16

enum { ST_READY, ST_DEPS, ST_OP, ST_DONE };

/* rank_ctx.done bits */
enum { DONE = 1, AWAITED = 2 };

struct stream_ctx;

typedef struct rank_ctx {
    int rank;
    sg_host_t host;
    double speed;       /* the host's flop rate, */
    double hbm_bw;      /* and its "hbm_bw" property (0: none), read once per run */
    char *done;         /* per op: DONE once ended; AWAITED when an op of another stream
                         * depends on it (its end must be a real instant: see owed) */
    sg_mutex_t mu;      /* only for ranks with several streams, */
    sg_cond_t cv;       /* and under eng_set_wake_all(1) */
    int nwait;          /* streams waiting for their op's dependencies, */
    struct stream_ctx *wait[OG_MAX_STREAMS]; /* in the order they began */
} rank_ctx;

typedef struct stream_ctx {
    rank_ctx *rc;
    int stream;
    int nops;           /* ops of this stream */
    int cur;            /* id of the op being run (the stream's ops are found by scanning
                         * the rank's: no per-op list, 4 bytes per op less at 44 M ops) */
    int state;
    double owed;        /* seconds of fixed-duration work the stream has done but not yet
                         * slept (see owe): its own clock is SimGrid's plus this */
    sg_sem_t sem;       /* ranks with several streams: released when its op's
                         * dependencies are done */
    sg_sem_t lsem;      /* lone flows: released when one of its collective's flows
                         * starts or ends (created at its first such collective) */
    int lsleep;         /* sleeping until its timed flows end: no release needed */
    coll_step *st;      /* run_transfers' step, kept from one collective to the next
                         * (stream_step): a stream runs one op at a time */
    int stcap;          /* its capacity */
} stream_ctx;

typedef struct gpos {
    int group, idx;     /* this rank is member idx of group */
} gpos;

#define COLL_CODE(v) ((int)((uint32_t)(v) & 0xffff))
#define COLL_SEQ(v) ((int)((uint32_t)(v) >> 16))

/* The run in progress (SimGrid actors are plain C functions). */
static struct {
    const og_graph *g;
    const eng_opts *o;
    eng_result *res;
    rank_ctx *rcs;
    sg_host_t *hosts;   /* per rank */
    int **coll_algo;    /* [rank][c]: the rank's c-th COLL op (in op order; a stream counts
                         * them as it scans for its ops): algorithm row | protocol << 8 in the
                         * low 16 bits (COLL_CODE), the k-th collective on its group modulo 65536
                         * in the high ones (COLL_SEQ; members of a group are never that many
                         * collectives apart: each waits for the others). Becomes
                         * eng_result.algo (the sequence numbers taken out): 4 bytes per
                         * collective, where a table per op took 4 bytes per op (176 MB of row
                         * 7's 44 M ops, 27% of them collectives). */
    gpos **gp;          /* [rank]: sorted (group, idx) pairs */
    int *ngp;
    double t0;
    long ops_done, ops_total;
    double last_progress;
    int deadlocked;     /* blocked actors still hold the rank's mutex/cond */
    ts_sums pair_bytes; /* (src rank, dst rank) -> bytes, when links are reported */
    ts_sums pairs;      /* eng_set_copies: every (src rank, dst rank) whose route was used */
    ts_sums lat;        /* (src rank, dst rank) -> route latency, as looked up (route_latency) */
    sg_host_t *copy;    /* eng_set_copies: [rank * copies + k], the copies' hosts */
    coll_topo **topo;   /* per group, for the topology-aware collectives */
    signed char *rails; /* per group: eng_rails_symmetric, -1 not checked (no all-to-all) */
    double **far_alpha; /* per rail-symmetric group: per node, the largest latency to other nodes (-1: unknown) */
    sg_mailbox_t **inbox; /* per group: [slot * n + member] per-receiver mailboxes, as looked up */
    struct fluid_ends **fluid; /* per group: the fluid model's last all-to-all (eng_opts.alone) */
    struct flow_ends **flows;  /* per group: the fluid model's last other one-step collective (eng_opts.alone) */
    /* lone flows (eng_set_lone) */
    int lone;                  /* on for this run */
    struct lflow *lf;          /* flows, by id; free ones chained through next_out from lffree */
    size_t lfcap;
    int nlf, lffree;
    struct lroute *lr;         /* routes by id */
    size_t lrcap;
    int nlr;
    ts_sums lrid;              /* (src rank, dst rank) -> route id */
    struct linkuse *lk;        /* links by id */
    size_t lkcap;
    int nlk;
    ts_sums lkid;              /* link -> id */
    struct linsts *li;         /* per group: its collectives in flight as lone flows */
    struct lshape *lshape;     /* per group: LSHAPES shapes checked */
    struct lchan *lch;         /* p2p channels (src, dst, tag) by id */
    size_t lchcap;
    int nlch;
    ts_sums lchid;             /* (src, dst, tag) -> channel id */
} run;

/* One merged all-to-all solved by the fluid model: each member's end and
 * alpha, computed by the first member to start it, read by the others. */
typedef struct fluid_ends {
    int seq, ok;        /* ok: the collective qualifies (rails_mergeable) */
    int64_t chunk;      /* wire bytes per member pair */
    double *end, *alpha;
} fluid_ends;

/* One collective posted as one step and solved by the fluid model flow by
 * flow (eng_flows_fluid): each member's end and latencies, computed by the
 * first member to start it. */
typedef struct flow_ends {
    int seq, ok;
    double *end, *alpha, *alpha_in;
} flow_ends;

static int poisoned; /* a deadlocked run leaves blocked actors behind */
static const coll_policy *policy; /* eng_set_policy */

void eng_set_policy(const coll_policy *pol) { policy = pol; }

static int ncopies;                   /* eng_set_copies */
static int wake_all;                  /* eng_set_wake_all */

void eng_set_wake_all(int on) { wake_all = on; }

static const char *const *copy_names;

static void shared_clear(void);

void eng_set_copies(int copies, const char *const *hosts)
{
    ncopies = copies, copy_names = hosts;
    if (copies <= 1) shared_clear();
}
static char payload_token;

/* Whether argv has a --cfg=KEY:VALUE for key (SimGrid also takes several
 * space-separated settings in one --cfg): the user's setting then wins over
 * the engine's defaults below. */
static int user_cfg(int argc, char **argv, const char *key)
{
    size_t n = strlen(key);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--cfg=", 6) != 0) continue;
        for (const char *p = argv[i] + 6; (p = strstr(p, key)); p += n)
            if ((p == argv[i] + 6 || p[-1] == ' ') && p[n] == ':') return 1;
    }
    return 0;
}

void eng_init(int *argc, char **argv)
{
    static int started; /* once per process: later calls (the embedding API's) keep the first's options */
    if (started) return;
    started = 1;
    int own_optim = !user_cfg(*argc, argv, "network/optim"), own_model = !user_cfg(*argc, argv, "network/model"),
        own_cross = !user_cfg(*argc, argv, "network/crosstraffic"),
        own_gamma = !user_cfg(*argc, argv, "network/TCP-gamma"),
        own_guard = !user_cfg(*argc, argv, "contexts/guard-size");
    simgrid_init(argc, argv); /* consumes the --cfg arguments */
    if (own_model) sg_cfg_set_string("network/model", "CM02");
    if (own_cross) sg_cfg_set_boolean("network/crosstraffic", "no");
    if (own_gamma) sg_cfg_set_double("network/TCP-gamma", 1e15);
    /* SimGrid 3.32's default lazy max-min update lets some links carry more
     * than their bandwidth when flows of unequal sizes share them (a double
     * binary tree's merged flows: 64 MiB into one 50 GB/s link in 1.0 ms);
     * the full update gives the exact max-min shares. */
    if (own_optim) sg_cfg_set_string("network/optim", "Full");
    if (own_guard) sg_cfg_set_int("contexts/guard-size", 0);
    /* Every simgrid_run frees its actors' 8 MiB stacks; glibc then raises its
     * mmap threshold above that and serves the next runs' stacks from the
     * heap, where they stay resident: on 2,048 Frontier GCDs the fifth
     * collective simulated in one process took 30 s and 16.8 GB instead of
     * 0.3 s and 99 MB. A fixed threshold keeps them mmap'ed. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* The deadlock report is ours; keep SimGrid's verbose one out. */
    xbt_log_control_set("root.thresh:error");
}

int eng_host_count(void) { return (int)sg_host_count(); }

static size_t loaded_hosts; /* of the platform this process loaded (0: none yet) */
/* The fabric between the nodes of the cluster this process built (nids 0:
 * none, or a SimGrid XML file), for the analytical cost (topo_of). */
static topo_net_links loaded_fabric;

size_t eng_loaded_hosts(void) { return loaded_hosts; }

int eng_load_platform(const char *path, char *err, size_t errlen)
{
    if (eng_platform_check(path, err, errlen) < 0) return -1;
    simgrid_load_platform(path);
    if ((loaded_hosts = sg_host_count()) == 0) return ts_err(err, errlen, "%s: platform has no hosts", path);
    return 0;
}

int eng_load(const char *spec, int nodes, const char *calib, char *err, size_t errlen)
{
    if (!topo_is_cluster_spec(spec)) {
        if (nodes > 0 || calib)
            return ts_err(err, errlen, "%s: --nodes and --calibration apply to clusters, not to SimGrid XML files",
                          spec);
        return eng_load_platform(spec, err, errlen);
    }
    topo_cluster c;
    if (topo_load(spec, nodes, &c, err, errlen) < 0 || (calib && topo_calibrate(&c, calib, err, errlen) < 0))
        return -1;
    coll_params_set(&c.coll); /* the collectives' cost parameters of this cluster, for this process */
    if (topo_sg_build(&c, err, errlen) < 0) return -1;
    loaded_hosts = (size_t)c.nodes * c.node.gpus;
    topo_net_links_init(&loaded_fabric, &c);
    return 0;
}

/* A host and its name, sorted together: each sg_host_get_name is a call into
 * SimGrid's C++ (a third of sorting 4,096 hosts when done per comparison). */
typedef struct named_host {
    const char *name;
    sg_host_t h;
    size_t plen;             /* the name is plen characters without digits, then a number (plen 0: not so) */
    unsigned long long num;
} named_host;

/* ts_natcmp's order; names of one prefix and a number (gpu-0 ... gpu-16383)
 * compare by the number parsed once (strtoull per comparison was most of
 * the sort) */
static int host_cmp(const void *a, const void *b)
{
    const named_host *x = a, *y = b;
    if (x->plen && x->plen == y->plen && x->num != y->num && memcmp(x->name, y->name, x->plen) == 0)
        return x->num < y->num ? -1 : 1;
    return ts_natcmp(x->name, y->name);
}

static void name_key(named_host *h)
{
    const char *s = h->name, *d = s;
    while (*d && (*d < '0' || *d > '9')) d++;
    h->plen = 0;
    if (d == s || !*d || d - s > 64) return;
    char *end;
    h->num = strtoull(d, &end, 10);
    if (!*end && d[0] != '0') h->plen = (size_t)(d - s); /* no leading zeros: the number says it all */
}

/* The platform's hosts in natural name order (gpu-0, gpu-1, ..., gpu-10),
 * listed once: SimGrid 3.32's sg_host_count and sg_host_list each walk every
 * host of the platform (0.1 s apiece on Frontier's 75,264; 13% of a
 * 16,384-GPU all-reduce's CPU time), and a loaded platform never changes
 * (one per process). A cluster built in-process hands its hosts over
 * (topo_sg_hosts) without the walks. NULL while none is loaded. */
static sg_host_t *sorted_hosts(size_t *n)
{
    static sg_host_t *all;
    static size_t nall;
    if (!all) {
        size_t k;
        void **built = topo_sg_hosts(&k);
        if (!built && (k = sg_host_count()) == 0) {
            *n = 0;
            return NULL;
        }
        if (built) {
            all = ts_malloc(k * sizeof *all);
            for (size_t i = 0; i < k; i++) all[i] = built[i];
            free(built);
        } else {
            all = sg_host_list();
        }
        nall = k;
        named_host *nh = ts_malloc(k * sizeof *nh);
        int sorted = 1;
        for (size_t i = 0; i < k; i++) {
            nh[i] = (named_host){sg_host_get_name(all[i]), all[i], 0, 0};
            name_key(&nh[i]);
            if (i > 0 && sorted && host_cmp(&nh[i - 1], &nh[i]) > 0) sorted = 0;
        }
        if (!sorted) qsort(nh, k, sizeof *nh, host_cmp);
        for (size_t i = 0; i < k; i++) all[i] = nh[i].h;
        free(nh);
    }
    *n = nall;
    return all;
}

/* Hosts by name. SimGrid 3.32's sg_host_by_name walks every zone (one per
 * node on in-process clusters; 16,384 lookups on 2,048 nodes took seconds),
 * and sg_host_count lists every host. An open-addressing table over the
 * platform's hosts, built at the first lookup after the platform is loaded
 * (SimGrid loads one platform per process). */
static struct {
    sg_host_t *slot;
    size_t mask, nhosts;
} names;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static sg_host_t host_named(const char *name)
{
    if (names.nhosts == 0) {
        size_t nh;
        sg_host_t *all = sorted_hosts(&nh);
        if (nh == 0) return NULL;
        size_t cap = 16;
        while (cap < 2 * nh) cap *= 2;
        names.slot = ts_calloc(cap, sizeof *names.slot);
        names.mask = cap - 1;
        names.nhosts = nh;
        for (size_t i = 0; i < nh; i++) {
            size_t j = name_hash(sg_host_get_name(all[i])) & names.mask;
            while (names.slot[j]) j = (j + 1) & names.mask;
            names.slot[j] = all[i];
        }
    }
    for (size_t j = name_hash(name) & names.mask; names.slot[j]; j = (j + 1) & names.mask)
        if (!strcmp(sg_host_get_name(names.slot[j]), name)) return names.slot[j];
    return NULL;
}

int eng_route(const char *src, const char *dst, double *lat, double *bw)
{
    sg_host_t a = host_named(src), b = host_named(dst);
    if (!a || !b) return -1;
    *lat = sg_host_get_route_latency(a, b);
    *bw = sg_host_get_route_bandwidth(a, b);
    return 0;
}

/* The links of the platform's route between two members of one node
 * (coll_links_fn): each SimGrid link (a split-duplex link's direction is
 * one) names itself. */
typedef struct {
    const sg_host_t *hosts;
    xbt_dynar_t route; /* reused: a 75,264-GCD Frontier asks 527,000 routes */
} links_ctx;

static int route_links(void *ctx, int a, int b, int max, const void **ids, double *bw)
{
    links_ctx *c = ctx;
    xbt_dynar_reset(c->route);
    sg_host_get_route(c->hosts[a], c->hosts[b], c->route);
    int nl = (int)xbt_dynar_length(c->route);
    for (int i = 0; i < nl && i < max; i++) {
        sg_link_t l = xbt_dynar_get_as(c->route, i, sg_link_t);
        ids[i] = l;
        bw[i] = sg_link_get_bandwidth(l);
    }
    return nl <= max ? nl : -1;
}

/* links: also read the routes inside each node (coll_topo_set_links), which
 * only the analytical cost (coll_cost) uses: the engine's own groups skip it
 * (28,672 route lookups on 4,096 H100s). */
static struct coll_topo *topo_of(const sg_host_t *hosts, int n, int links)
{
    int *ids = ts_malloc(2 * (size_t)(n ? n : 1) * sizeof *ids), *nic = ids + n, nvls = n > 0, nics = 0;
    for (int i = 0; i < n; i++) {
        const char *v = sg_host_get_property_value(hosts[i], "node");
        char *end = NULL;
        long id = v ? strtol(v, &end, 10) : 0;
        /* hosts without a (valid) node are their own node: ids below any real one */
        ids[i] = v && end != v && !*end && id >= 0 && id < (1L << 30) ? (int)id : -1 - i;
        const char *nv = sg_host_get_property_value(hosts[i], "nvls");
        if (!nv || strcmp(nv, "1")) nvls = 0;
        /* the NIC (of its node) the host's traffic between nodes leaves by */
        const char *nc = sg_host_get_property_value(hosts[i], "nic");
        long k = nc ? strtol(nc, &end, 10) : -1;
        nic[i] = nc && end != nc && !*end && k >= 0 && k < (1L << 30) && ids[i] >= 0 ? (int)k : -1;
        nics += nic[i] >= 0;
    }
    coll_topo *t = coll_topo_new(n, ids, nvls);
    /* the analytical cost shares each NIC among the flows that cross it, as
     * the platform's NIC link does */
    if (nics > 0) coll_topo_set_nics(t, nic, NULL);
    /* and each link inside a node among the flows that cross it: a mesh's
     * pairs have links of their own */
    if (links) {
        links_ctx lc = {hosts, xbt_dynar_new(sizeof(sg_link_t), NULL)};
        coll_topo_set_links(t, route_links, &lc);
        xbt_dynar_free(&lc.route);
        /* and the fabric's links between the nodes (the hosts' "node" is the
         * cluster's node number): a dragonfly's switch uplinks, a tapered
         * fat-tree's leaf uplinks */
        coll_topo_set_fabric(t, &loaded_fabric.f, ids, 1);
    }
    free(ids);
    return t;
}

coll_topo *eng_topo(const char *const *hosts, int n, int links)
{
    sg_host_t *hs = ts_malloc((n ? n : 1) * sizeof *hs);
    for (int i = 0; i < n; i++) hs[i] = host_named(hosts[i]);
    for (int i = 0; i < n; i++)
        if (!hs[i]) {
            free(hs);
            return NULL;
        }
    coll_topo *t = topo_of(hs, n, links);
    free(hs);
    return t;
}

char **eng_host_names(int *n)
{
    size_t nh;
    sg_host_t *all = sorted_hosts(&nh);
    char **names = ts_malloc((nh + 1) * sizeof *names);
    for (size_t i = 0; i < nh; i++) names[i] = ts_strdup(sg_host_get_name(all[i]));
    names[nh] = NULL;
    *n = (int)nh;
    return names;
}

const char *eng_fidelity_name(eng_fidelity f)
{
    static const char *names[ENG_NFIDELITY] = {"step", "pipelined"};
    return f < ENG_NFIDELITY ? names[f] : "?";
}

int eng_fidelity_from_name(const char *s)
{
    for (int i = 0; i < ENG_NFIDELITY; i++)
        if (strcmp(eng_fidelity_name(i), s) == 0) return i;
    return -1;
}

/* --- helpers used inside actors ------------------------------------------ */

static int gpos_cmp(const void *a, const void *b)
{
    const gpos *x = a, *y = b;
    return x->group - y->group;
}

static int group_index(int rank, int group)
{
    gpos key = {group, 0};
    gpos *p = bsearch(&key, run.gp[rank], run.ngp[rank], sizeof key, gpos_cmp);
    return p ? p->idx : -1;
}

/* Per-link load: bytes are summed per (src, dst) rank pair during the run and
 * spread over each pair's route once at the end (routes are fixed). */
static void account(int src, int dst, int64_t bytes)
{
    run.res->ncomms++;
    if (run.o->links > 0) ts_sums_add(&run.pair_bytes, (uint64_t)src << 32 | (uint32_t)dst, (double)bytes);
    if (ncopies > 1) ts_sums_add(&run.pairs, (uint64_t)src << 32 | (uint32_t)dst, 0);
}

static sg_mailbox_t p2p_mailbox(int src, int dst, int tag)
{
    char name[64];
    snprintf(name, sizeof name, "p%d>%d.%d", src, dst, tag);
    return sg_mailbox_by_name(name);
}

static sg_mailbox_t coll_mailbox(int group, int seq, int src, int dst)
{
    char name[64];
    snprintf(name, sizeof name, "c%d.%d:%d>%d", group, seq % COLL_SEQ_SLOTS, src, dst);
    return sg_mailbox_by_name(name);
}

/* Sleeps a stream owes (stream_ctx.owed). Fixed-duration work (compute ops
 * of a given duration, a collective's latency tail) takes no resource of
 * SimGrid's and nothing else sees its intermediate ends unless another
 * stream waits for them: such seconds are added up and slept at once, when
 * the stream next meets SimGrid (a transfer, an execution, a wait for
 * another stream) or ends an op another stream awaits. One sleep for a run
 * of them instead of one per op: the same instants up to the rounding of
 * the sums (and SimGrid's 1e-9 s timing precision, which may end a sleep
 * at an event that close before its exact end). eng_set_defer(0): every
 * such op sleeps on its own, as before. */
static int defer = 1;

void eng_set_defer(int on) { defer = on; }

static void pay(stream_ctx *sc)
{
    double d = sc->owed;
    sc->owed = 0;
    if (d > 0) sg_actor_sleep_for(d);
}

/* d seconds of fixed-duration work: owed, or slept now (eng_set_defer(0)) */
static void owe(double *owed, double d)
{
    if (defer) *owed += d;
    else if (d >= 0) sg_actor_sleep_for(d);
}

static void run_compute(const og_op *op, stream_ctx *sc)
{
    const rank_ctx *rc = sc->rc;
    if (op->duration >= 0) {
        owe(&sc->owed, op->duration);
        return;
    }
    pay(sc); /* executions share the host: from the instant they start */
    double amount = op->flops;
    if (rc->hbm_bw > 0 && op->bytes > 0) {
        /* roofline: the op cannot finish before its bytes cross HBM */
        double mem_flops = (double)op->bytes / rc->hbm_bw * rc->speed;
        if (mem_flops > amount) amount = mem_flops;
    }
    if (amount > 0) sg_actor_execute(amount);
}

/* Mailbox of one collective's transfers into rank dst. A collective posted as
 * one step shares one per receiver: every flow of the step is posted at once
 * or in a window that only ever accepts this step's flows, so whichever
 * receive a send matches, the same (src host, dst host, bytes) flow runs.
 * Step by step, a faster sender's next step must not match this step's
 * receives: one mailbox per (src, dst) pair. Mailboxes live as long as the
 * platform, so per-receiver ones keep an all-to-all's memory O(n), not O(n^2). */
static sg_mailbox_t step_mailbox(int group, int seq, int src, int dst, int per_pair)
{
    char name[64];
    if (per_pair) return coll_mailbox(group, seq, src, dst);
    snprintf(name, sizeof name, "c%d.%d>%d", group, seq % COLL_SEQ_SLOTS, dst);
    return sg_mailbox_by_name(name);
}

/* step_mailbox of a transfer to member idx (global rank dst) of the group,
 * remembered per group: the name's formatting and SimGrid's lookup by name
 * were 14% of a merged 512-GPU all-to-all's instructions. */
static sg_mailbox_t step_inbox(int group, int seq, int src, int dst, int idx, int per_pair)
{
    if (per_pair) return coll_mailbox(group, seq, src, dst);
    int n = run.g->groups[group].n;
    if (!run.inbox[group]) run.inbox[group] = ts_calloc((size_t)COLL_SEQ_SLOTS * n, sizeof(sg_mailbox_t));
    sg_mailbox_t *m = &run.inbox[group][(seq % COLL_SEQ_SLOTS) * n + idx];
    if (!*m) *m = step_mailbox(group, seq, src, dst, 0);
    return *m;
}

static void lone_claim(int a, int b);
static void lone_unclaim(int a, int b);

/* Post the transfers of one (possibly merged) step and wait for all of them,
 * in batches of at most `window` per direction (window < 0: all at once).
 * Batch j of nb takes transfers j, j + nb, j + 2 nb, ...: every batch mixes
 * near and far peers as the whole step does (contiguous rounds would load a
 * leaf switch's links in one batch and the core in the next). A batch's flows
 * start together and on a symmetric fabric end together: SimGrid solves the
 * sharing once per batch rather than once per completion. */
static void run_step(const coll_step *st, const og_group *gr, int me, int group, int seq, const coll_plan *p,
                     int window, int per_pair, int wired, sg_comm_t *comms, void **sink)
{
    int most = st->nsend > st->nrecv ? st->nsend : st->nrecv;
    int nb = window < 0 || most <= window ? 1 : (most + window - 1) / window;
    int mine = per_pair ? -1 : group_index(me, group);
    for (int j = 0; j < nb; j++) {
        int k = 0;
        for (int i = j; i < st->nsend; i += nb) {
            int dst = gr->ranks[st->send[i].peer];
            int64_t b = wired ? st->send[i].bytes : coll_plan_wire_bytes(p, st->send[i].bytes);
            lone_claim(me, dst);
            comms[k++] = sg_mailbox_put_async(step_inbox(group, seq, me, dst, st->send[i].peer, per_pair), &payload_token,
                                              (long)b);
            account(me, dst, b);
        }
        for (int i = j; i < st->nrecv; i += nb, k++) {
            int src = gr->ranks[st->recv[i].peer];
            comms[k] = sg_mailbox_get_async(step_inbox(group, seq, src, me, mine, per_pair), &sink[k]);
        }
        sg_comm_wait_all(comms, k);
        for (int i = j; i < st->nsend; i += nb) lone_unclaim(me, gr->ranks[st->send[i].peer]);
    }
}

/* Whether st is a direct all-to-all (every other member once as a send peer
 * and once as a receive peer, one size throughout) on a rail-symmetric group
 * (sim/engine/rails.c): its inter-node flows may then be merged. */
static int rails_mergeable(const coll_step *st, const coll_plan *p, const og_op *op)
{
    if (op->coll != OG_ALLTOALL || p->nsteps != 1 || run.rails[op->group] < 1) return 0;
    if (st->nsend != p->n - 1 || st->nrecv != p->n - 1 || st->nsend == 0) return 0;
    int64_t b = st->send[0].bytes;
    for (int i = 0; i < st->nsend; i++)
        if (st->send[i].bytes != b || st->recv[i].bytes != b || st->send[i].peer >= p->n || st->recv[i].peer >= p->n)
            return 0;
    return 1;
}

/* The per-node inter-node latencies of a rail-symmetric group, allocated at
 * its first merged all-to-all. */
static double *rails_far_alpha(int group, const coll_topo *t)
{
    if (!run.far_alpha[group]) {
        run.far_alpha[group] = ts_malloc(t->nnodes * sizeof(double));
        for (int i = 0; i < t->nnodes; i++) run.far_alpha[group][i] = -1;
    }
    return run.far_alpha[group];
}

/* Merge a direct all-to-all's inter-node transfers of member me per other
 * node: one flow to (from) the member of the same local index carrying the
 * node's ppn chunks; intra-node transfers stay. Bytes become wire bytes (b,
 * one chunk's: a protocol's rounding stays per chunk). Send i goes
 * to the peer whose receive i it is (intra-node peers local +1, +2, ..., then
 * nodes +1, +2, ...; receives -1, -2, ...), as in the direct schedule: the
 * windows of run_step then hold as many sends to a rank as it has receives. */
static void rails_merge(coll_step *st, const coll_plan *p, int me, int64_t b)
{
    const coll_topo *t = p->topo;
    int n = p->n, g = t->ppn, K = t->nnodes, node = t->node[me], local = t->local[me], k = 0;
    for (int i = 1; i < g; i++, k++) {
        int to = t->order[t->first[node] + (local + i) % g], from = t->order[t->first[node] + (local + g - i) % g];
        st->send[k] = (coll_xfer){to, b, me * n + to, 1, 0};
        st->recv[k] = (coll_xfer){from, b, from * n + me, 1, 0};
    }
    for (int m = 1; m < K; m++, k++) {
        int to = t->order[t->first[(node + m) % K] + local], from = t->order[t->first[(node + K - m) % K] + local];
        st->send[k] = (coll_xfer){to, b * g, me * n + to, g, 0};
        st->recv[k] = (coll_xfer){from, b * g, from * n + me, g, 0};
    }
    st->nsend = st->nrecv = k;
}

/* eng_opts.alone: a direct all-to-all that rails_merge may merge, solved by
 * the fluid model (sim/engine/fluid.c) instead of flow by flow: the members'
 * ends and alphas, computed once per collective by its first member (members
 * start together, so one solution holds for all). Returns 0, having done
 * nothing, where the collective does not qualify; else 1, with the
 * transfers' time in *dur and *alpha set as run_coll's own loop would. */
static int fluid_coll(const og_op *op, int rank, int me, int seq, const coll_plan *p, double *alpha, double *dur)
{
    int window = run.o->window ? run.o->window : ENG_WINDOW;
    if (window < 0 || op->coll != OG_ALLTOALL || p->nsteps != 1 || run.rails[op->group] < 1) return 0;
    fluid_ends *f = run.fluid[op->group];
    const og_group *gr = &run.g->groups[op->group];
    if (!f || f->seq != seq) {
        if (!f) {
            f = run.fluid[op->group] = ts_calloc(1, sizeof *f);
            f->end = ts_malloc(gr->n * sizeof *f->end);
            f->alpha = ts_malloc(gr->n * sizeof *f->alpha);
        }
        /* every member's step has the same shape: one member's decides */
        coll_step *st = coll_step_new(p->merged_width + 1);
        coll_plan_merged_phys(p, me, st);
        f->ok = rails_mergeable(st, p, op);
        f->chunk = f->ok ? coll_plan_wire_bytes(p, st->send[0].bytes) : 0;
        coll_step_free(st);
        f->seq = seq;
        if (f->ok) {
            sg_host_t *hs = ts_malloc(gr->n * sizeof *hs);
            for (int i = 0; i < gr->n; i++) hs[i] = run.hosts[gr->ranks[i]];
            eng_rails_fluid(hs, p->topo, (double)f->chunk, f->end, f->alpha, NULL);
            free(hs);
        }
    }
    if (!f->ok) return 0;
    coll_step *st = coll_step_new(p->topo->ppn + p->topo->nnodes);
    rails_merge(st, p, me, f->chunk);
    for (int i = 0; i < st->nsend; i++) account(rank, gr->ranks[st->send[i].peer], st->send[i].bytes);
    coll_step_free(st);
    *alpha = f->alpha[me], *dur = f->end[me];
    run.res->nfluid++;
    return 1;
}

/* Whether every member of p posts its flows at once in the one step run_step
 * makes of them (window: run_step's), and those flows into src, dst, bytes
 * (wire bytes; *nf of them). 0 when some member's flows would go in several
 * batches or a member receives other than what is sent to it. */
static int one_step_flows(const coll_plan *p, int window, int **src, int **dst, double **bytes, int *nf)
{
    int n = p->n, ok = 1, k = 0;
    size_t cap = 0;
    coll_step *st = coll_step_new(p->merged_width + 1);
    int *nrecv = ts_calloc(n, sizeof *nrecv), *into = ts_calloc(n, sizeof *into);
    *src = *dst = NULL, *bytes = NULL;
    for (int m = 0; m < n && ok; m++) {
        coll_plan_merged_phys(p, m, st);
        int most = st->nsend > st->nrecv ? st->nsend : st->nrecv;
        if (most > window) ok = 0;
        nrecv[m] = st->nrecv;
        for (int i = 0; i < st->nsend && ok; i++) {
            int q = st->send[i].peer;
            if (q < 0 || q >= n || q == m || st->send[i].bytes < 0) {
                ok = 0;
                break;
            }
            size_t c1 = cap, c2 = cap;
            ts_grow(src, sizeof **src, &c1, (size_t)k + 1);
            ts_grow(dst, sizeof **dst, &c2, (size_t)k + 1);
            ts_grow(bytes, sizeof **bytes, &cap, (size_t)k + 1);
            (*src)[k] = m, (*dst)[k] = q, (*bytes)[k] = (double)coll_plan_wire_bytes(p, st->send[i].bytes);
            into[q]++, k++;
        }
    }
    for (int m = 0; m < n && ok; m++)
        if (into[m] != nrecv[m]) ok = 0; /* SimGrid's run would not match them all */
    coll_step_free(st);
    free(nrecv), free(into);
    *nf = k;
    return ok;
}

/* eng_opts.alone: a collective whose members post every flow at once (one
 * step: pipelined fidelity or a one-step schedule; no more flows per member
 * than the window) solved by the fluid model (eng_flows_fluid) instead of
 * SimGrid's comms, by the first member to start it: members start together
 * and nothing else runs, so every flow starts at once, as the comms would.
 * Returns 0, having done nothing, where it does not apply; else 1, the
 * member's transfer time in *dur and *alpha, *alpha_in set as run_transfers
 * would. */
static int flows_coll(const og_op *op, int rank, int me, int seq, const coll_plan *p, double *alpha, double *alpha_in,
                      double *dur)
{
    int window = run.o->window ? run.o->window : ENG_WINDOW;
    if (window < 0 || (run.o->fidelity == ENG_STEP && p->nsteps > 1) || p->vbytes) return 0;
    const og_group *gr = &run.g->groups[op->group];
    flow_ends *f = run.flows[op->group];
    if (!f || f->seq != seq) {
        if (!f) {
            f = run.flows[op->group] = ts_calloc(1, sizeof *f);
            f->end = ts_malloc(gr->n * sizeof *f->end);
            f->alpha = ts_malloc(gr->n * sizeof *f->alpha);
            f->alpha_in = ts_malloc(gr->n * sizeof *f->alpha_in);
        }
        f->seq = seq;
        int *src, *dst, nf;
        double *bytes;
        f->ok = one_step_flows(p, window, &src, &dst, &bytes, &nf);
        if (f->ok) {
            sg_host_t *hs = ts_malloc(gr->n * sizeof *hs);
            for (int i = 0; i < gr->n; i++) hs[i] = run.hosts[gr->ranks[i]];
            if (run.rails[op->group] < 0) run.rails[op->group] = (signed char)eng_rails_symmetric(hs, p->topo);
            f->ok = eng_flows_fluid(hs, p->topo, run.rails[op->group] == 1, nf, src, dst, bytes, f->end, f->alpha,
                                    f->alpha_in, NULL) >= 0;
            free(hs);
        }
        free(src), free(dst), free(bytes);
    }
    if (!f->ok) return 0;
    coll_step *st = coll_step_new(p->merged_width + 1);
    coll_plan_merged_phys(p, me, st);
    for (int i = 0; i < st->nsend; i++)
        account(rank, gr->ranks[st->send[i].peer], coll_plan_wire_bytes(p, st->send[i].bytes));
    coll_step_free(st);
    *alpha = f->alpha[me], *alpha_in = f->alpha_in[me], *dur = f->end[me];
    run.res->nfluid++;
    return 1;
}

static double run_transfers(const og_op *op, int rank, int me, int seq, coll_plan *pp, double *alpha_in);

/* The plan of a COLL op, the rank's c-th, as the rank runs it; 0 when it has
 * nothing to run. */
static int op_plan(const og_op *op, int rank, int c, coll_plan *p)
{
    const og_group *gr = &run.g->groups[op->group];
    char err[TS_ERRLEN];
    /* The plan was checked for every op before the run started. */
    int code = COLL_CODE(run.coll_algo[rank][c]);
    if (coll_plan_init_topo(p, op->coll, gr->n, op->root, op->bytes, op->vbytes, code & 0xff, run.topo[op->group],
                            err, sizeof err) < 0 || p->nsteps == 0)
        return 0;
    p->proto = code >> 8;
    return 1;
}

/* eng_opts.alone: the transfers' time of a collective from the fluid model
 * (fluid_coll, flows_coll); 0 where neither applies. */
static int alone_coll(const og_op *op, int rank, int c, const coll_plan *p, double *alpha, double *alpha_in,
                      double *dur)
{
    int me = group_index(rank, op->group), seq = COLL_SEQ(run.coll_algo[rank][c]);
    return run.o->alone &&
           (fluid_coll(op, rank, me, seq, p, alpha, dur) || flows_coll(op, rank, me, seq, p, alpha, alpha_in, dur));
}

/* A collective, the rank's c-th, started with nothing owed; its latency tail
 * and the launch floor are owed (*owed) rather than slept. */
static void run_coll(const og_op *op, int rank, int c, double *owed)
{
    coll_plan p;
    if (!op_plan(op, rank, c, &p)) return;
    double t0 = simgrid_get_clock(), alpha = 0, alpha_in = 0, dur = 0;
    if (alone_coll(op, rank, c, &p, &alpha, &alpha_in, &dur)) {
        if (dur > 0) sg_actor_sleep_for(dur);
    } else {
        alpha = run_transfers(op, rank, group_index(rank, op->group), COLL_SEQ(run.coll_algo[rank][c]), &p, &alpha_in);
    }
    /* the steps' latencies and the call's base latency (coll_call_tail) */
    double tail = coll_call_tail(&p, alpha, alpha_in, run.o->fidelity == ENG_STEP, simgrid_get_clock() - t0);
    if (tail > 0) owe(owed, tail);
    /* the host's launch interval bounds the call from below (coll_call_time) */
    double el = simgrid_get_clock() + *owed - t0, rest = coll_call_time(&p, el) - el;
    if (rest > 0) owe(owed, rest);
}

/* eng_opts.alone and a graph of one collective per rank on one group of every
 * rank, without dependencies (what val_sweep runs): every member starts at
 * t0 and its transfers' time comes from the fluid model, so its end is
 * arithmetic, as run_coll's sleeps would add it up, and no actor is needed
 * (creating, switching and ending one per GPU was most of SimGrid's run at
 * 4,096 GPUs). 0, with nothing recorded, where the graph is not of that shape
 * or the model does not apply to some member (the model decides per
 * collective, so the actors then take the same path as without it). */
static int alone_direct(const og_graph *g, eng_result *res)
{
    if (!run.o->alone || g->ngroups != 1 || g->groups[0].n != g->nranks) return 0;
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        if (rk->nops != 1 || rk->ops[0].kind != OG_COLL || rk->ops[0].ndeps != 0 || rk->ops[0].group != 0) return 0;
    }
    double t0 = simgrid_get_clock();
    for (int r = 0; r < g->nranks; r++) {
        const og_op *op = &g->ranks[r].ops[0];
        coll_plan p;
        double c = t0, alpha = 0, alpha_in = 0, dur = 0;
        if (op_plan(op, r, 0, &p)) {
            if (!alone_coll(op, r, 0, &p, &alpha, &alpha_in, &dur)) { /* the actors run it all */
                res->ncomms = res->nfluid = 0;
                run.ops_done = 0;
                ts_sums_free(&run.pair_bytes);
                memset(&run.pair_bytes, 0, sizeof run.pair_bytes);
                return 0;
            }
            if (dur > 0) c += dur;
            double tail = coll_call_tail(&p, alpha, alpha_in, run.o->fidelity == ENG_STEP, c - t0);
            if (tail > 0) c += tail;
            double rest = coll_call_time(&p, c - t0) - (c - t0);
            if (rest > 0) c += rest;
        }
        res->start[r][0] = t0 - run.t0;
        res->end[r][0] = c - run.t0;
        run.ops_done++;
    }
    return 1;
}

/* --- lone flows (eng_set_lone) ---------------------------------------------
 * A collective posted as one step runs its flows without mailboxes: flow
 * s -> d starts when both members have come to the collective (as a matched
 * comm would), and runs as a SimGrid comm only if another flow may share one
 * of its links then. Otherwise it is alone on every link of its route, and
 * CM02 gives one flow alone the route's latency, then the smallest
 * bandwidth of its links (and TCP-gamma / (2 latency)): its end is known, and
 * its members sleep until it (one sleep for a member's flows instead of a
 * send, a receive and a wait, and no max-min variable). Every other flow
 * claims its route's links while it may run (from its posting to its
 * wait's end); a claim on a link that a timed flow holds turns that flow
 * into a comm for what it has left at that instant (the rest of its
 * latency, or its remaining bytes; direct.cpp gives the comm that part of
 * its latency), so from then on it shares as SimGrid makes it. A timed flow
 * is therefore alone on its links for as long as it is timed: the same
 * times as the comms, up to rounding (whole bytes when resumed, and
 * SimGrid's 1e-9 s timing precision). */

enum { F_WAIT, F_TIMED, F_COMM, F_DONE };

typedef struct lflow {
    int src, dst;          /* members of the group */
    int route;             /* id, once started */
    int state;
    int next_out, next_in; /* the sender's and receiver's lists in the collective (p2p:
                            * next_out chains a channel's queue) */
    int gone;              /* p2p: sides that saw it end */
    double bytes, start, end; /* end: F_TIMED */
    double left, factor;   /* F_COMM before its comm starts: bytes and share of the latency left */
    void *comm[2];         /* F_COMM once started (NULL before: lone_flush starts it): the
                            * sender's and the receiver's handles; each waits for it (a
                            * member's end is its own flows' last) */
    struct stream_ctx *ssc, *rsc; /* the sender's and receiver's streams */
} lflow;

typedef struct lroute {
    sg_host_t from, to;
    int n, *link;          /* link ids */
    double lat, rate;      /* latency; a flow's rate alone (0: never timed) */
} lroute;

typedef struct linkuse {
    int busy;              /* comms that claim it */
    int timed;             /* the timed flow on it, -1 */
} linkuse;

/* One collective of a group in flight. */
typedef struct linst {
    int seq, gone;         /* gone: members that left it */
    char *here;            /* per member: came */
    int *left;             /* per member: its flows not done */
    int *out, *in;         /* per member: its sends, its receives (lists of flow ids) */
    stream_ctx **sc;       /* per member: its stream */
} linst;

/* Whether a collective shape runs as lone flows: every member's sends and
 * receives are one step of distinct peers, what is sent to a member is what
 * it receives, at most window per direction (run_step's one batch). */
#define LSHAPES 4
typedef struct lshape {
    int used, code, root, ok;
    og_coll coll;
    int64_t bytes;
} lshape;

static int lone_on = 1;

void eng_set_lone(int on) { lone_on = on; }

/* Simcalls (a comm's start, a semaphore's release) let other actors run
 * before they return: the bookkeeping below never makes one. What it decides
 * is queued (comms to start, streams to wake) and lone_flush does it
 * afterwards, in order, at the same simulated instant. */
typedef struct ldeferred {
    int f;                 /* >= 0: start flow f's comm; else release sem */
    sg_sem_t sem;
} ldeferred;
static struct {
    ldeferred *q;
    size_t cap;
    int head, n;
} deferred;

static void defer_push(int f, sg_sem_t sem)
{
    ts_grow(&deferred.q, sizeof *deferred.q, &deferred.cap, (size_t)deferred.n + 1);
    deferred.q[deferred.n++] = (ldeferred){f, sem};
}

static void lone_flush(void)
{
    while (deferred.head < deferred.n) {
        ldeferred t = deferred.q[deferred.head++];
        if (deferred.head == deferred.n) deferred.head = deferred.n = 0;
        if (t.f < 0) {
            sg_sem_release(t.sem);
            continue;
        }
        lflow *x = &run.lf[t.f];
        const lroute *r = &run.lr[x->route];
        void *c = eng_direct_start(r->from, r->to, x->left, x->factor);
        x = &run.lf[t.f]; /* the start is a simcall: other actors may have grown run.lf */
        x->comm[0] = c, x->comm[1] = eng_direct_dup(c);
        /* both members wait for it from now (unless asleep until a later
         * instant); the first release is a simcall too, so x is not read
         * after it (another actor's lone_new may move run.lf) */
        stream_ctx *ss = x->ssc, *rs = x->rsc;
        if (!ss->lsleep) sg_sem_release(ss->lsem);
        if (!rs->lsleep) sg_sem_release(rs->lsem);
    }
}

static int link_id(sg_link_t l)
{
    double v;
    if (ts_sums_get(&run.lkid, (uint64_t)(uintptr_t)l, &v)) return (int)v;
    ts_grow(&run.lk, sizeof *run.lk, &run.lkcap, (size_t)run.nlk + 1);
    run.lk[run.nlk] = (linkuse){0, -1};
    ts_sums_add(&run.lkid, (uint64_t)(uintptr_t)l, run.nlk);
    return run.nlk++;
}

/* The route from rank a to rank b, remembered (routes are fixed; bandwidths
 * as they are during this run). */
static int lone_route(int a, int b)
{
    uint64_t key = (uint64_t)a << 32 | (uint32_t)b;
    double v;
    if (ts_sums_get(&run.lrid, key, &v)) return (int)v;
    static double gamma = -1;
    if (gamma < 0) gamma = sg_cfg_get_double("network/TCP-gamma");
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(run.hosts[a], run.hosts[b], d);
    int n = (int)xbt_dynar_length(d);
    lroute r = {run.hosts[a], run.hosts[b], n, ts_malloc((n ? n : 1) * sizeof(int)), 0, -1};
    for (int k = 0; k < n; k++) {
        sg_link_t l = xbt_dynar_get_as(d, k, sg_link_t);
        double bw = sg_link_get_bandwidth(l);
        r.lat += sg_link_get_latency(l);
        if (r.rate < 0 || bw < r.rate) r.rate = bw;
        r.link[k] = link_id(l);
        for (int j = 0; j < k; j++)
            if (r.link[j] == r.link[k]) r.rate = 0; /* a link twice: SimGrid counts it twice */
    }
    xbt_dynar_free(&d);
    if (r.lat > 0 && gamma / (2 * r.lat) < r.rate) r.rate = gamma / (2 * r.lat);
    if (n == 0 || !(r.rate > 0)) r.rate = 0; /* no links (SimGrid's loopback): not timed here */
    ts_grow(&run.lr, sizeof *run.lr, &run.lrcap, (size_t)run.nlr + 1);
    run.lr[run.nlr] = r;
    ts_sums_add(&run.lrid, key, run.nlr);
    return run.nlr++;
}

/* Flow f becomes a comm (started by lone_flush) for what it has left now:
 * the rest of its latency, else its remaining bytes after a latency of 1e-9
 * of the route's (SimGrid gives a comm without latency the share of a route
 * without latency, not of its own). Its links become claimed. */
static void lone_to_comm(int f, double now)
{
    lflow *x = &run.lf[f];
    const lroute *r = &run.lr[x->route];
    x->left = x->bytes, x->factor = 1.0;
    if (x->state == F_TIMED) {
        double lat_left = x->start + r->lat - now;
        x->factor = 1e-9;
        if (lat_left > 0) x->factor = lat_left / r->lat;
        else x->left = (x->end - now) * r->rate;
        if (x->left < 0) x->left = 0;
    }
    for (int k = 0; k < r->n; k++) {
        linkuse *u = &run.lk[r->link[k]];
        if (u->timed == f) u->timed = -1;
        u->busy++;
    }
    x->state = F_COMM;
    defer_push(f, NULL);
}

/* Claim the links of route r for a comm starting now: a flow timed on one of
 * them becomes a comm. */
static void claim_route(int route, double now)
{
    const lroute *r = &run.lr[route];
    for (int k = 0; k < r->n; k++) {
        int f = run.lk[r->link[k]].timed;
        if (f >= 0) {
            if (run.lf[f].end > now) lone_to_comm(f, now);
            else run.lk[r->link[k]].timed = -1; /* over: its members have not looked yet */
        }
        run.lk[r->link[k]].busy++;
    }
}

static void unclaim_route(int route)
{
    const lroute *r = &run.lr[route];
    for (int k = 0; k < r->n; k++) run.lk[r->link[k]].busy--;
}

/* A comm from rank a to rank b is posted (lone flows on: every comm claims
 * its links while it may run), and waited for. */
static void lone_claim(int a, int b)
{
    if (!run.lone) return;
    claim_route(lone_route(a, b), simgrid_get_clock());
    lone_flush();
}

static void lone_unclaim(int a, int b)
{
    if (run.lone) unclaim_route(lone_route(a, b));
}

static int lone_new(int src, int dst, double bytes)
{
    int f = run.lffree;
    if (f >= 0) {
        run.lffree = run.lf[f].next_out;
    } else {
        ts_grow(&run.lf, sizeof *run.lf, &run.lfcap, (size_t)run.nlf + 1);
        f = run.nlf++;
    }
    run.lf[f] = (lflow){src, dst, -1, F_WAIT, -1, -1, 0, bytes, 0, 0, 0, 1, {NULL, NULL}, NULL, NULL};
    return f;
}

/* A member's stream to look at its flows again: unless it sleeps until its
 * timed flows end (it waits for nothing else then, and looks when it wakes). */
static void lone_wake(stream_ctx *sc)
{
    if (!sc->lsleep) defer_push(-1, sc->lsem);
}

/* Flow f from rank a to rank b (both sides have come: ssc and rsc set)
 * starts now: timed if its links carry nothing else, else as a comm. */
static void flow_start(int f, int a, int b, double now)
{
    int route = lone_route(a, b);
    lflow *x = &run.lf[f];
    const lroute *r = &run.lr[route];
    x->route = route;
    if (x->bytes <= 0 && r->n > 0) {
        /* no bytes: its route's latency, whatever else runs (CM02 gives a flow no
         * share while its latency runs, and it has nothing left after); it
         * holds no link (SimGrid 3.32 starts a host-to-host comm of no bytes
         * only when it is waited for) */
        x->state = F_TIMED;
        x->start = now;
        x->end = now + r->lat;
        run.res->nlone++;
        return;
    }
    int alone = r->rate > 0;
    for (int k = 0; k < r->n && alone; k++) {
        linkuse *u = &run.lk[r->link[k]];
        if (u->timed >= 0 && run.lf[u->timed].end <= now) u->timed = -1;
        alone = u->busy == 0 && u->timed < 0;
    }
    if (alone) {
        x->state = F_TIMED;
        x->start = now;
        x->end = now + r->lat + x->bytes / r->rate;
        for (int k = 0; k < r->n; k++) run.lk[r->link[k]].timed = f;
        run.res->nlone++;
    } else {
        claim_route(route, now);
        x = &run.lf[f];
        x->left = x->bytes, x->factor = 1.0;
        x->state = F_COMM;
        defer_push(f, NULL);
    }
}

/* Flow f is over: its links freed; the side that is not me (0 sender, 1
 * receiver) to be woken. */
static void flow_done(int f, int me)
{
    lflow *x = &run.lf[f];
    const lroute *r = &run.lr[x->route];
    if (x->state == F_TIMED) {
        for (int k = 0; k < r->n; k++)
            if (run.lk[r->link[k]].timed == f) run.lk[r->link[k]].timed = -1;
    } else {
        unclaim_route(x->route);
    }
    x->state = F_DONE;
    lone_wake(me ? x->ssc : x->rsc);
}

/* Both members of collective flow f have come: it starts now; the other
 * member (not me) is woken. */
static void lone_start(linst *in, int f, const og_group *gr, int me, double now)
{
    lflow *x = &run.lf[f];
    x->ssc = in->sc[x->src], x->rsc = in->sc[x->dst];
    flow_start(f, gr->ranks[x->src], gr->ranks[x->dst], now);
    x = &run.lf[f];
    lone_wake(in->sc[x->src == me ? x->dst : x->src]);
}

/* Collective flow f is over: its members' counts down. */
static void lone_done(linst *in, int f, int me)
{
    in->left[run.lf[f].src]--, in->left[run.lf[f].dst]--;
    flow_done(f, run.lf[f].dst == me);
}

/* The group's collective seq as lone flows: found among those in flight,
 * else in a free slot (its members may be several collectives apart: a
 * ring's by up to half its size). */
typedef struct linsts {
    linst **v;
    int n;
} linsts;

static linst *lone_inst(int group, int seq)
{
    int n = run.g->groups[group].n;
    linsts *ls = &run.li[group];
    linst *free_one = NULL;
    for (int i = 0; i < ls->n; i++) {
        if (ls->v[i]->seq == seq) return ls->v[i];
        if (ls->v[i]->seq < 0 && !free_one) free_one = ls->v[i];
    }
    if (!free_one) {
        ls->v = ts_realloc(ls->v, (ls->n + 1) * sizeof *ls->v);
        free_one = ls->v[ls->n++] = ts_calloc(1, sizeof(linst));
        free_one->here = ts_calloc(n, 1);
        free_one->left = ts_calloc(n, sizeof *free_one->left);
        free_one->out = ts_malloc(n * sizeof *free_one->out);
        free_one->in = ts_malloc(n * sizeof *free_one->in);
        free_one->sc = ts_calloc(n, sizeof *free_one->sc);
        for (int i = 0; i < n; i++) free_one->out[i] = free_one->in[i] = -1;
    }
    free_one->seq = seq, free_one->gone = 0;
    return free_one;
}

/* The last member left: the flows back to the free list, the slot empty. */
static void lone_recycle(linst *in, int n)
{
    for (int m = 0; m < n; m++) {
        for (int f = in->out[m], nx; f >= 0; f = nx) {
            nx = run.lf[f].next_out;
            for (int e = 0; e < 2; e++)
                if (run.lf[f].comm[e]) eng_direct_free(run.lf[f].comm[e]);
            run.lf[f].next_out = run.lffree;
            run.lffree = f;
        }
        in->out[m] = in->in[m] = -1;
        in->here[m] = 0;
        in->left[m] = 0;
        in->sc[m] = NULL;
    }
    in->seq = -1, in->gone = 0;
}

/* One look at member me's flows: those over marked done; *until the latest
 * end of its timed flows (-1: none); a comm of its own, started: returned
 * (its flow id) for the caller to wait for; -1 else, *pending set when some
 * flow waits for the other member (to come) or for its comm to start. */
static int lone_look(linst *in, int me, double now, double *until, int *pending)
{
    *until = -1, *pending = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int f = pass ? in->in[me] : in->out[me]; f >= 0; f = pass ? run.lf[f].next_in : run.lf[f].next_out) {
            lflow *x = &run.lf[f];
            if (x->state == F_WAIT) *pending = 1;
            else if (x->state == F_TIMED && x->end <= now) lone_done(in, f, me);
            else if (x->state == F_TIMED && x->end > *until) *until = x->end;
            else if (x->comm[pass] && x->state == F_DONE) { /* the other member saw its end, before now */
                eng_direct_free(x->comm[pass]);
                x->comm[pass] = NULL;
            } else if (x->comm[pass]) return f; /* my handle to wait with */
            else if (x->state == F_COMM) *pending = 1;
        }
    return -1;
}

/* Member me's flows until all are over: comms waited for (each member
 * waits for its own: its end is their last), timed flows slept until their
 * end, otherwise woken by the other member. */
static void lone_wait(linst *in, int me)
{
    sg_sem_t sem = in->sc[me]->lsem;
    for (;;) {
        double now = simgrid_get_clock(), until;
        int pending, f = lone_look(in, me, now, &until, &pending);
        lone_flush();
        if (f >= 0) {
            int e = run.lf[f].dst == me;
            void *c = run.lf[f].comm[e];
            run.lf[f].comm[e] = NULL;
            eng_direct_wait(c);
            if (run.lf[f].state == F_COMM) lone_done(in, f, me);
            lone_flush();
            continue;
        }
        if (in->left[me] == 0) break;
        if (until < 0) {
            sg_sem_acquire(sem);
            continue;
        }
        if (pending) {
            if (sg_sem_acquire_timeout(sem, until - now) == 0) continue;
        } else {
            in->sc[me]->lsleep = 1;
            sg_actor_sleep_for(until - now);
            in->sc[me]->lsleep = 0;
        }
        /* slept to until: the flows timed to end by then are over (the clock
         * may stand an ulp short of an end it was set to) */
        for (int pass = 0; pass < 2; pass++)
            for (int g = pass ? in->in[me] : in->out[me]; g >= 0; g = pass ? run.lf[g].next_in : run.lf[g].next_out)
                if (run.lf[g].state == F_TIMED && run.lf[g].end <= until) lone_done(in, g, me);
        lone_flush();
    }
}

/* Member me (rank) of the group posts the one step st of collective seq as
 * lone flows and waits for them. */
static void lone_step(const coll_step *st, const og_group *gr, int rank, int group, int seq, const coll_plan *p)
{
    int me = group_index(rank, group);
    stream_ctx *sc = sg_actor_self_get_data();
    if (!sc->lsem) sc->lsem = sg_sem_init(0);
    linst *in = lone_inst(group, seq);
    in->sc[me] = sc;
    in->here[me] = 1;
    in->left[me] += st->nsend + st->nrecv;
    double now = simgrid_get_clock();
    for (int i = 0; i < st->nsend; i++) {
        int q = st->send[i].peer;
        int64_t b = coll_plan_wire_bytes(p, st->send[i].bytes);
        account(rank, gr->ranks[q], b);
        int f = lone_new(me, q, (double)b);
        run.lf[f].next_out = in->out[me], in->out[me] = f;
        run.lf[f].next_in = in->in[q], in->in[q] = f;
        if (in->here[q]) lone_start(in, f, gr, me, now);
    }
    for (int f = in->in[me]; f >= 0; f = run.lf[f].next_in)
        if (run.lf[f].state == F_WAIT && in->here[run.lf[f].src]) lone_start(in, f, gr, me, now);
    lone_flush();
    lone_wait(in, me);
    if (++in->gone == gr->n) lone_recycle(in, gr->n);
}

/* A point-to-point send or receive as a lone flow: the sends and receives of
 * one (src, dst, tag) match in order, as on their mailbox; the flow starts
 * when both sides have come, and each side waits for it to end. */
typedef struct lchan {
    int head, tail;        /* flows one side posted, not yet matched (chained by next_out) */
    int side;              /* which side posted them: 0 sends, 1 receives */
} lchan;

/* The channel of (src, dst, tag); -1 when the key does not fit (the mailbox
 * path then, on both sides alike). */
static int p2p_chan(int src, int dst, int tag)
{
    if (tag < 0 || tag >= (1 << 23) || run.g->nranks >= (1 << 20)) return -1;
    uint64_t key = (((uint64_t)src * (uint64_t)run.g->nranks + (uint64_t)dst) << 23 | (uint64_t)tag) + 1;
    double v;
    if (ts_sums_get(&run.lchid, key, &v)) return (int)v;
    ts_grow(&run.lch, sizeof *run.lch, &run.lchcap, (size_t)run.nlch + 1);
    run.lch[run.nlch] = (lchan){-1, -1, 0};
    ts_sums_add(&run.lchid, key, run.nlch);
    return run.nlch++;
}

static void p2p_wait(int f, int side)
{
    sg_sem_t sem = (side ? run.lf[f].rsc : run.lf[f].ssc)->lsem;
    for (;;) {
        lflow *x = &run.lf[f];
        double now = simgrid_get_clock();
        if (x->comm[side] && x->state == F_DONE) {
            eng_direct_free(x->comm[side]);
            x->comm[side] = NULL;
        }
        if (x->state == F_DONE) break;
        if (x->state == F_TIMED && x->end <= now) {
            flow_done(f, side);
        } else if (x->state == F_TIMED) {
            stream_ctx *me = side ? x->rsc : x->ssc;
            double until = x->end;
            me->lsleep = 1;
            sg_actor_sleep_for(until - now);
            me->lsleep = 0;
            if (run.lf[f].state == F_TIMED && run.lf[f].end <= until) flow_done(f, side);
        } else if (x->comm[side]) {
            void *c = x->comm[side];
            x->comm[side] = NULL;
            eng_direct_wait(c);
            if (run.lf[f].state == F_COMM) flow_done(f, side);
        } else {
            sg_sem_acquire(sem); /* the other side to come, or the comm to start */
            continue;
        }
        lone_flush();
    }
    lone_flush();
    if (++run.lf[f].gone == 2) {
        run.lf[f].next_out = run.lffree;
        run.lffree = f;
    }
}

/* Side (0 send, 1 receive) of a p2p transfer of bytes from rank src to rank
 * dst on channel ch, run to its end. */
static void p2p_lone(int ch, int side, int src, int dst, int64_t bytes)
{
    stream_ctx *sc = sg_actor_self_get_data();
    if (!sc->lsem) sc->lsem = sg_sem_init(0);
    lchan *c = &run.lch[ch];
    int f;
    if (c->head >= 0 && c->side != side) { /* the other side's oldest: ours */
        f = c->head;
        c->head = run.lf[f].next_out;
        if (c->head < 0) c->tail = -1;
        if (side) run.lf[f].rsc = sc;
        else run.lf[f].ssc = sc, run.lf[f].bytes = (double)bytes;
        flow_start(f, src, dst, simgrid_get_clock());
        lone_wake(side ? run.lf[f].ssc : run.lf[f].rsc);
        lone_flush();
    } else {
        f = lone_new(src, dst, (double)bytes);
        if (side) run.lf[f].rsc = sc;
        else run.lf[f].ssc = sc;
        run.lf[f].next_out = -1;
        if (c->tail >= 0) run.lf[c->tail].next_out = f;
        else c->head = f;
        c->tail = f;
        c->side = side;
    }
    p2p_wait(f, side);
}

/* Whether collective op (plan p) runs as lone flows: one step (pipelined
 * fidelity or a one-step schedule), not a merged all-to-all, and a shape
 * lone_step can match (lshape); remembered per group. */
static int lone_fits(const og_op *op, const coll_plan *p, int window)
{
    if (!run.lone || (run.o->fidelity == ENG_STEP && p->nsteps > 1) || p->vbytes || window < 0) return 0;
    if (op->coll == OG_ALLTOALL && run.rails[op->group] >= 1) return 0;
    int code = COLL_CODE(p->algo | p->proto << 8);
    lshape *c = &run.lshape[(size_t)op->group * LSHAPES];
    for (int i = 0; i < LSHAPES; i++)
        if (c[i].used && c[i].coll == op->coll && c[i].bytes == op->bytes && c[i].code == code && c[i].root == op->root)
            return c[i].ok;
    int n = p->n, ok = 1;
    coll_step *st = coll_step_new(p->merged_width + 1);
    int *into = ts_calloc(n, sizeof *into), *nrecv = ts_calloc(n, sizeof *nrecv), *mark = ts_malloc(n * sizeof *mark);
    for (int i = 0; i < n; i++) mark[i] = -1;
    for (int m = 0; m < n && ok; m++) {
        coll_plan_merged_phys(p, m, st);
        if (st->nsend > window || st->nrecv > window) ok = 0;
        nrecv[m] = st->nrecv;
        for (int i = 0; i < st->nsend && ok; i++) { /* distinct peers, not itself */
            int q = st->send[i].peer;
            if (q < 0 || q >= n || q == m || st->send[i].bytes < 0 || mark[q] == 2 * m) ok = 0;
            else mark[q] = 2 * m, into[q]++;
        }
        for (int i = 0; i < st->nrecv && ok; i++) {
            int q = st->recv[i].peer;
            if (q < 0 || q >= n || q == m || mark[q] == 2 * m + 1) ok = 0;
            else mark[q] = 2 * m + 1;
        }
    }
    for (int m = 0; m < n && ok; m++)
        if (into[m] != nrecv[m]) ok = 0;
    free(into), free(nrecv), free(mark);
    coll_step_free(st);
    memmove(&c[1], &c[0], (LSHAPES - 1) * sizeof *c);
    c[0] = (lshape){1, code, op->root, ok, op->coll, op->bytes};
    return ok;
}

static void lone_free(const og_graph *g)
{
    for (int gi = 0; run.li && gi < g->ngroups; gi++) {
        for (int s = 0; s < run.li[gi].n; s++) {
            linst *in = run.li[gi].v[s];
            free(in->here), free(in->left), free(in->out), free(in->in), free(in->sc), free(in);
        }
        free(run.li[gi].v);
    }
    free(run.li);
    free(run.lshape);
    for (int i = 0; i < run.nlr; i++) free(run.lr[i].link);
    free(run.lr);
    free(run.lk);
    free(run.lf);
    free(deferred.q);
    memset(&deferred, 0, sizeof deferred);
    ts_sums_free(&run.lrid);
    free(run.lch);
    ts_sums_free(&run.lchid);
    ts_sums_free(&run.lkid);
}

/* The route latency from rank a to rank b, remembered: SimGrid builds the
 * route for each sg_host_get_route_latency (7% of a full-detail run's
 * instructions, two lookups per collective call), and routes are fixed. */
static double route_latency(int a, int b)
{
    uint64_t key = (uint64_t)a << 32 | (uint32_t)b;
    double l;
    if (ts_sums_get(&run.lat, key, &l)) return l;
    l = sg_host_get_route_latency(run.hosts[a], run.hosts[b]);
    ts_sums_add(&run.lat, key, l);
    return l;
}

/* The stream's step of capacity cap, as coll_step_new(cap) returns it (zeroed
 * entries, no transfers), reused from its last collective: a collective's
 * member allocated and freed three blocks per call (glibc's allocator was
 * 13% of a 1,024-GPU full-detail run). */
static coll_step *stream_step(stream_ctx *sc, int cap)
{
    if (sc->stcap < cap) {
        coll_step_free(sc->st);
        sc->st = coll_step_new(cap);
        sc->stcap = cap;
        return sc->st;
    }
    memset(sc->st->send, 0, (size_t)cap * sizeof *sc->st->send);
    memset(sc->st->recv, 0, (size_t)cap * sizeof *sc->st->recv);
    sc->st->nsend = sc->st->nrecv = 0;
    return sc->st;
}

/* Post the collective's transfers flow by flow; returns alpha, the largest
 * route latency to or from the member's peers (*alpha_in: the least). */
static double run_transfers(const og_op *op, int rank, int me, int seq, coll_plan *pp, double *alpha_in)
{
    const og_group *gr = &run.g->groups[op->group];
    coll_plan p = *pp;
    int cap = (run.o->fidelity == ENG_STEP ? p.width : p.merged_width) + 1;
    if (cap < p.merged_width + 1) cap = p.merged_width + 1;
    coll_step *st = stream_step(sg_actor_self_get_data(), cap);
    int window = run.o->window ? run.o->window : ENG_WINDOW;
    int slots = 2 * (window > 0 && window < cap ? window : cap);
    /* old posting (window < 0): one mailbox per pair, as every step had */
    int per_pair = window < 0 || (run.o->fidelity == ENG_STEP && p.nsteps > 1);
    sg_comm_t *comms = NULL; /* run_step's handles: lone flows need none */
    void **sink = NULL;
    coll_plan_merged_phys(&p, me, st);
    /* the old posting (window < 0) never merges: the tests' reference */
    int merge = window >= 0 && rails_mergeable(st, &p, op);
    /* alpha: the largest route latency to the rank's peers (merged: the
     * routes to a node's members have one latency; rails.c checks it), a
     * route lookup each (SimGrid builds the route: 74% of a 512-GPU
     * all-to-all's instructions when it was done for all n - 1 peers) */
    int64_t chunk = merge ? coll_plan_wire_bytes(&p, st->send[0].bytes) : 0;
    if (merge) rails_merge(st, &p, me, chunk);
    double alpha = 0;
    /* merged, the inter-node part is the same for every member of a node
     * (P and Q latencies alike): once per node */
    double *far = merge ? rails_far_alpha(op->group, p.topo) : NULL;
    int node = merge ? p.topo->node[me] : -1;
    int nsend = far && far[node] >= 0 ? p.topo->ppn - 1 : st->nsend, nrecv = far && far[node] >= 0 ? nsend : st->nrecv;
    for (int i = 0; i < nsend; i++) {
        double l = route_latency(rank, gr->ranks[st->send[i].peer]);
        if (l > alpha) alpha = l;
        if (*alpha_in <= 0 || l < *alpha_in) *alpha_in = l;
    }
    for (int i = 0; i < nrecv; i++) {
        double l = route_latency(gr->ranks[st->recv[i].peer], rank);
        if (l > alpha) alpha = l;
        if (*alpha_in <= 0 || l < *alpha_in) *alpha_in = l;
    }
    if (far && far[node] < 0) { /* the first member of its node here: remember the inter-node part */
        far[node] = 0;
        for (int i = p.topo->ppn - 1; i < st->nsend; i++) {
            double l = route_latency(rank, gr->ranks[st->send[i].peer]);
            double m = route_latency(gr->ranks[st->recv[i].peer], rank);
            if (l > far[node]) far[node] = l;
            if (m > far[node]) far[node] = m;
        }
    } else if (far && far[node] > alpha) {
        alpha = far[node];
    }
    if (!merge && lone_fits(op, &p, window)) {
        lone_step(st, gr, rank, op->group, seq, &p); /* one step: st is its merged view */
        return alpha;
    }
    comms = ts_malloc(slots * sizeof *comms);
    sink = ts_malloc(slots * sizeof *sink);
    if (run.o->fidelity == ENG_STEP) {
        for (int s = 0; s < p.nsteps; s++) {
            coll_plan_step_phys(&p, me, s, st);
            if (st->nsend + st->nrecv == 0) continue;
            coll_step_merge_peers(st);
            if (merge) rails_merge(st, &p, me, chunk);
            run_step(st, gr, rank, op->group, seq, &p, window, per_pair, merge, comms, sink);
        }
    } else {
        /* One flow per peer carrying all steps' bytes (st holds them). */
        run_step(st, gr, rank, op->group, seq, &p, window, per_pair, merge, comms, sink);
    }
    free(sink);
    free(comms);
    return alpha;
}

static int deps_done(const rank_ctx *rc, const og_op *op)
{
    for (int i = 0; i < op->ndeps; i++)
        if (!(rc->done[og_deps(op)[i]] & DONE)) return 0;
    return 1;
}

static void progress(void)
{
    run.ops_done++;
    if (!run.o->progress || (run.ops_done & 4095)) return;
    double now = ts_wtime();
    if (now - run.last_progress < 2.0) return;
    run.last_progress = now;
    fprintf(stderr, "trainsim: simulated %.6f s, %ld/%ld ops done, %ld flows\n",
            simgrid_get_clock() - run.t0, run.ops_done, run.ops_total, run.res->ncomms);
}

/* A stream whose op waits for dependencies sleeps on a semaphore of its own
 * (one simcall to wait and one to wake, where a mutex and condition took
 * three each); an op's end wakes only the streams it completes the
 * dependencies of, in the order they began waiting: the streams that went on
 * when every waiting one was woken, in the same order, without the others'
 * context switches (a rank's pipeline and DP streams wait through most of its
 * compute ops). eng_set_wake_all(1) runs the path before: one condition per
 * rank, every waiting stream woken at each op's end. */
static void wait_deps(stream_ctx *sc, const og_op *op)
{
    rank_ctx *rc = sc->rc;
    sc->state = ST_DEPS;
    if (wake_all) {
        sg_mutex_lock(rc->mu);
        while (!deps_done(rc, op)) sg_cond_wait(rc->cv, rc->mu);
        sg_mutex_unlock(rc->mu);
        return;
    }
    while (!deps_done(rc, op)) {
        rc->wait[rc->nwait++] = sc;
        sg_sem_acquire(sc->sem); /* one release per time on the list */
    }
}

static void wake_ready(rank_ctx *rc)
{
    if (wake_all) {
        if (rc->cv) sg_cond_notify_all(rc->cv);
        return;
    }
    /* The list is updated before any release: a release is a simcall, where
     * other streams of the rank may run and append to the list. A release
     * that the kernel handles before the waiter's acquire is kept by the
     * semaphore, so no wake-up is lost. */
    const og_rank *rk = &run.g->ranks[rc->rank];
    stream_ctx *ready[OG_MAX_STREAMS];
    int k = 0, nready = 0;
    for (int i = 0; i < rc->nwait; i++) {
        stream_ctx *w = rc->wait[i];
        if (deps_done(rc, &rk->ops[w->cur])) ready[nready++] = w;
        else rc->wait[k++] = w;
    }
    rc->nwait = k;
    for (int i = 0; i < nready; i++) sg_sem_release(ready[i]->sem);
}

static void stream_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    stream_ctx *sc = sg_actor_self_get_data();
    rank_ctx *rc = sc->rc;
    const og_rank *rk = &run.g->ranks[rc->rank];
    /* SimGrid's clock as this actor last read it; still: no simcall since (the
     * clock moves only while the actor is suspended), so a run of deferred
     * compute ops reads it once (Engine::get_instance and get_clock were 4%
     * of a 1,024-GPU run's samples) */
    double now = 0;
    int still = 0;
    /* nc: the COLL ops before op i (the index of the rank's collectives' table) */
    for (int k = 0, i = 0, nc = 0; k < sc->nops; k++, i++) {
        while (rk->ops[i].stream != sc->stream) nc += rk->ops[i++].kind == OG_COLL;
        sc->cur = i;
        const og_op *op = &rk->ops[i];
        int c = nc;
        nc += op->kind == OG_COLL;
        int ch;
        if (!deps_done(rc, op)) {
            still = 0;
            pay(sc); /* the dependency may end before the stream's own clock */
            if (!deps_done(rc, op)) wait_deps(sc, op);
        }
        sc->state = ST_OP;
        if (!still) now = simgrid_get_clock(), still = 1;
        run.res->start[rc->rank][op->id] = now + sc->owed - run.t0;
        /* owed, not slept: the only op kind that makes no simcall */
        still = op->kind == OG_COMPUTE && op->duration >= 0 && defer;
        switch (op->kind) {
        case OG_COMPUTE: run_compute(op, sc); break;
        case OG_SEND:
            pay(sc);
            account(rc->rank, op->peer, op->bytes);
            if ((ch = run.lone ? p2p_chan(rc->rank, op->peer, op->tag) : -1) >= 0) {
                p2p_lone(ch, 0, rc->rank, op->peer, op->bytes);
                break;
            }
            lone_claim(rc->rank, op->peer);
            sg_mailbox_put(p2p_mailbox(rc->rank, op->peer, op->tag), &payload_token, (long)op->bytes);
            lone_unclaim(rc->rank, op->peer);
            break;
        case OG_RECV:
            pay(sc);
            if ((ch = run.lone ? p2p_chan(op->peer, rc->rank, op->tag) : -1) >= 0) {
                p2p_lone(ch, 1, op->peer, rc->rank, 0);
                break;
            }
            sg_mailbox_get(p2p_mailbox(op->peer, rc->rank, op->tag));
            break;
        case OG_COLL:
            pay(sc);
            run_coll(op, rc->rank, c, &sc->owed);
            break;
        default: break;
        }
        if (rc->done[op->id] & AWAITED) pay(sc), still = 0; /* other streams see its end: a real instant */
        if (!still) now = simgrid_get_clock(), still = 1;
        run.res->end[rc->rank][op->id] = now + sc->owed - run.t0;
        rc->done[op->id] |= DONE;
        /* only an op another stream awaits can complete a waiting stream's dependencies */
        if (rc->cv || (rc->nwait && (rc->done[op->id] & AWAITED))) wake_ready(rc), still = 0;
        progress();
    }
    pay(sc);
    sc->state = ST_DONE;
}

/* --- set-up ---------------------------------------------------------------- */

/* Each rank's host speed and HBM bandwidth, read once per run rather than
 * per compute op (a property lookup by string). */
static void host_rates(const og_graph *g)
{
    for (int r = 0; r < g->nranks; r++) {
        rank_ctx *rc = &run.rcs[r];
        const char *bw = sg_host_get_property_value(rc->host, "hbm_bw");
        rc->speed = sg_host_get_speed(rc->host);
        rc->hbm_bw = bw ? atof(bw) : 0;
    }
}

static int place_ranks(const og_graph *g, char *err, size_t errlen)
{
    size_t nh;
    sg_host_t *all = sorted_hosts(&nh);
    int named = 0;
    for (int r = 0; r < g->nranks; r++) named += g->ranks[r].host != NULL;
    if (!named && (size_t)g->nranks > nh) {
        return ts_err(err, errlen, "%d ranks but the platform has only %zu hosts", g->nranks, nh);
    }
    for (int r = 0; r < g->nranks; r++) {
        if (g->ranks[r].host) {
            run.hosts[r] = host_named(g->ranks[r].host);
            if (!run.hosts[r]) {
                return ts_err(err, errlen, "rank %d: host '%s' is not in the platform", r,
                              g->ranks[r].host);
            }
        } else if ((size_t)r < nh) {
            run.hosts[r] = all[r];
        } else {
            return ts_err(err, errlen, "rank %d has no host and the platform has only %zu", r, nh);
        }
    }
    return 0;
}

/* eng_set_copies: the copies' hosts; copy 0 must be the rank's own. */
static int copy_hosts(const og_graph *g, char *err, size_t errlen)
{
    int c = ncopies;
    if (c <= 1) return 0;
    if (!copy_names) return ts_err(err, errlen, "eng_run: %d copies but no copy_hosts", c);
    run.copy = ts_malloc((size_t)g->nranks * c * sizeof *run.copy);
    for (size_t i = 0; i < (size_t)g->nranks * c; i++) {
        const char *h = copy_names[i];
        if (!(run.copy[i] = h ? host_named(h) : NULL))
            return ts_err(err, errlen, "rank %zu copy %zu: host '%s' is not in the platform", i / c, i % c,
                          h ? h : "(none)");
        if (i % c == 0 && run.copy[i] != run.hosts[i / c])
            return ts_err(err, errlen, "rank %zu: copy 0's host '%s' is not the rank's", i / c, h);
    }
    return 0;
}

static void group_route(void *ctx, int a, int b, double *lat, double *bw)
{
    const og_group *gr = ctx;
    sg_host_t x = run.hosts[gr->ranks[a]], y = run.hosts[gr->ranks[b]];
    if (ncopies > 1) ts_sums_add(&run.pairs, (uint64_t)gr->ranks[a] << 32 | (uint32_t)gr->ranks[b], 0);
    *lat = sg_host_get_route_latency(x, y);
    *bw = sg_host_get_route_bandwidth(x, y);
}

/* What the selection policy sees of a group: the routes from its first member
 * to one on the same node and to one on another node. */
static coll_hw group_hw(const og_group *gr)
{
    coll_hw hw = {5e-6, 25e9, run.topo[gr->id], 0, 0};
    coll_hw_from_routes(&hw, gr->n, run.topo[gr->id], group_route, (void *)gr);
    return hw;
}

/* Every member of a group makes the same choice for the same collective:
 * remember the last few choices per group (selection costs thousands of
 * operations; 16,384 members would repeat it 16,384 times). */
#define SEL_CACHE 16
typedef struct sel_entry {
    og_coll coll;
    int64_t bytes;
    int algo, proto, used;
} sel_entry;
static sel_entry (*sel_cache)[SEL_CACHE];

static int select_cached(const og_group *gr, const og_op *op, coll_proto *pr)
{
    sel_entry *c = sel_cache[gr->id];
    for (int i = 0; i < SEL_CACHE; i++)
        if (c[i].used && c[i].coll == op->coll && c[i].bytes == op->bytes) {
            *pr = c[i].proto;
            return c[i].algo;
        }
    coll_hw hw = group_hw(gr);
    int a = coll_policy_select(policy, op->coll, gr->n, op->bytes, &hw, pr, NULL);
    memmove(&c[1], &c[0], (SEL_CACHE - 1) * sizeof *c);
    c[0] = (sel_entry){op->coll, op->bytes, a, *pr, 1};
    return a;
}

/* Group positions, collective sequence numbers and forced algorithms. */
static int index_collectives(const og_graph *g, char *err, size_t errlen)
{
    for (int gi = 0; gi < g->ngroups; gi++)
        for (int i = 0; i < g->groups[gi].n; i++) {
            int r = g->groups[gi].ranks[i];
            run.gp[r] = ts_realloc(run.gp[r], (run.ngp[r] + 1) * sizeof(gpos));
            run.gp[r][run.ngp[r]++] = (gpos){gi, i};
        }
    int *seq = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof(int));
    run.topo = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.topo);
    sel_cache = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *sel_cache);
    run.rails = ts_malloc(g->ngroups ? g->ngroups : 1);
    run.far_alpha = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.far_alpha);
    run.inbox = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.inbox);
    run.fluid = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.fluid);
    run.flows = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.flows);
    run.li = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *run.li);
    run.lshape = ts_calloc((size_t)(g->ngroups ? g->ngroups : 1) * LSHAPES, sizeof *run.lshape);
    run.lffree = -1;
    run.lone = lone_on && !run.o->alone && ncopies <= 1 && eng_direct_ready();
    memset(run.rails, -1, g->ngroups ? g->ngroups : 1);
    for (int gi = 0; gi < g->ngroups; gi++) {
        const og_group *gr = &g->groups[gi];
        sg_host_t *hs = ts_malloc((gr->n ? gr->n : 1) * sizeof *hs);
        for (int i = 0; i < gr->n; i++) hs[i] = run.hosts[gr->ranks[i]];
        run.topo[gi] = topo_of(hs, gr->n, 0);
        free(hs);
    }
    for (int r = 0; r < g->nranks; r++) {
        if (run.ngp[r]) qsort(run.gp[r], run.ngp[r], sizeof(gpos), gpos_cmp);
        const og_rank *rk = &g->ranks[r];
        int ncoll = 0;
        for (int i = 0; i < rk->nops; i++) ncoll += rk->ops[i].kind == OG_COLL;
        run.coll_algo[r] = ts_malloc((ncoll + 1) * sizeof(int));
        for (int i = 0; i < g->ngroups; i++) seq[i] = 0;
        for (int i = 0, c = 0; i < rk->nops; i++) {
            const og_op *op = &rk->ops[i];
            if (op->kind != OG_COLL) continue;
            int k = seq[op->group]++;
            const og_group *gr = &g->groups[op->group];
            int a = -1;
            coll_proto pr = COLL_SIMPLE;
            char msg[TS_ERRLEN];
            if (coll_check_size(op->coll, gr->n, op->bytes, og_dtype_size(op->dtype), msg, sizeof msg) < 0 ||
                (op->algo && coll_algo_parse(op->algo, op->coll, &a, &pr, msg, sizeof msg) < 0)) {
                free(seq);
                return ts_err(err, errlen, "rank %d op %d: %s", r, i, msg);
            }
            if (a < 0) a = select_cached(gr, op, &pr);
            else if (pr == COLL_PROTO_AUTO) {
                coll_hw hw = group_hw(gr);
                pr = coll_best_proto(op->coll, gr->n, op->bytes, a, &hw);
            }
            coll_plan p;
            if (coll_plan_init_topo(&p, op->coll, gr->n, op->root, op->bytes, op->vbytes, a, run.topo[op->group],
                                    msg, sizeof msg) < 0) {
                free(seq);
                return ts_err(err, errlen, "rank %d op %d: %s", r, i, msg);
            }
            run.coll_algo[r][c++] = (int)((uint32_t)(k & 0xffff) << 16 | (uint32_t)((p.algo | pr << 8) & 0xffff));
            if (op->coll == OG_ALLTOALL && run.rails[op->group] < 0) {
                sg_host_t *hs = ts_malloc((gr->n ? gr->n : 1) * sizeof *hs);
                for (int m = 0; m < gr->n; m++) hs[m] = run.hosts[gr->ranks[m]];
                run.rails[op->group] = (signed char)eng_rails_symmetric(hs, run.topo[op->group]);
                free(hs);
            }
        }
    }
    free(seq);
    return 0;
}

static double union_length(double (*iv)[2], int n)
{
    /* intervals sorted by start */
    double total = 0, cs = 0, ce = -1;
    int open = 0;
    for (int i = 0; i < n; i++) {
        if (!open || iv[i][0] > ce) {
            if (open) total += ce - cs;
            cs = iv[i][0];
            ce = iv[i][1];
            open = 1;
        } else if (iv[i][1] > ce) {
            ce = iv[i][1];
        }
    }
    if (open) total += ce - cs;
    return total;
}

/* Intervals sorted by start (ties in any order: union_length does not see
 * it), merging the ascending runs they come in: listed stream by stream,
 * each stream's ops run one after the other, so a rank's intervals are a few
 * sorted runs (qsort's n log n comparisons through a callback were 5% of a
 * full-detail run's instructions). */
static void iv_sort(double (*a)[2], int n)
{
    if (n < 2) return;
    int *st = ts_malloc((n + 1) * sizeof *st), nr = 0;
    st[nr++] = 0;
    for (int i = 1; i < n; i++)
        if (a[i][0] < a[i - 1][0]) st[nr++] = i;
    st[nr] = n;
    double(*src)[2] = a, (*dst)[2] = nr > 1 ? ts_malloc(n * sizeof *dst) : NULL, (*buf)[2] = dst;
    while (nr > 1) {
        int k = 0;
        for (int r = 0; r < nr; r += 2) {
            int lo = st[r], mid = st[r + 1], hi = r + 2 <= nr ? st[r + 2] : mid, i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (src[j][0] < src[i][0]) dst[o][0] = src[j][0], dst[o++][1] = src[j++][1];
                else dst[o][0] = src[i][0], dst[o++][1] = src[i++][1];
            }
            for (; i < mid; i++, o++) dst[o][0] = src[i][0], dst[o][1] = src[i][1];
            for (; j < hi; j++, o++) dst[o][0] = src[j][0], dst[o][1] = src[j][1];
            st[k++] = lo;
        }
        st[k] = n, nr = k;
        double(*t)[2] = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(buf);
    free(st);
}

static void rank_stats(const og_graph *g, eng_result *res)
{
    int *order = NULL;
    size_t ocap = 0;
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        double(*comp)[2] = ts_malloc((rk->nops + 1) * sizeof *comp);
        double(*comm)[2] = ts_malloc((rk->nops + 1) * sizeof *comm);
        double(*both)[2] = ts_malloc((rk->nops + 1) * sizeof *both);
        int nc = 0, nm = 0, nb = 0;
        eng_rank_stats *s = &res->ranks[r];
        /* ops stream by stream, in order within each */
        int first[OG_MAX_STREAMS + 1] = {0};
        ts_grow(&order, sizeof *order, &ocap, (size_t)rk->nops + 1);
        for (int i = 0; i < rk->nops; i++) first[rk->ops[i].stream + 1]++;
        for (int k = 0; k < OG_MAX_STREAMS; k++) first[k + 1] += first[k];
        for (int i = 0; i < rk->nops; i++) order[first[rk->ops[i].stream]++] = i;
        for (int k = 0; k < rk->nops; k++) {
            int i = order[k];
            double a = res->start[r][i], b = res->end[r][i];
            if (b > s->finish) s->finish = b;
            if (b <= a) continue;
            if (rk->ops[i].kind == OG_COMPUTE) {
                comp[nc][0] = a;
                comp[nc++][1] = b;
            } else {
                comm[nm][0] = a;
                comm[nm++][1] = b;
            }
            both[nb][0] = a;
            both[nb++][1] = b;
        }
        iv_sort(comp, nc);
        iv_sort(comm, nm);
        iv_sort(both, nb);
        s->compute = union_length(comp, nc);
        s->comm = union_length(comm, nm);
        double busy = union_length(both, nb);
        s->exposed = busy - s->compute;
        s->idle = res->makespan - busy;
        free(comp);
        free(comm);
        free(both);
    }
    free(order);
}

static int link_cmp(const void *a, const void *b)
{
    const eng_link *x = a, *y = b;
    if (x->busy != y->busy) return x->busy < y->busy ? 1 : -1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void collect_links(eng_result *res, int keep)
{
    ts_sums per_link = {0};
    xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (size_t i = 0; i < run.pair_bytes.cap; i++) {
        if (!run.pair_bytes.used[i]) continue;
        uint64_t key = run.pair_bytes.keys[i];
        int nc = res->copies > 1 ? res->copies : 1; /* checked copies carry the same bytes */
        for (int k = 0; k < nc; k++) {
            xbt_dynar_reset(route);
            if (nc > 1) sg_host_get_route(run.copy[(key >> 32) * nc + k], run.copy[(uint32_t)key * nc + k], route);
            else sg_host_get_route(run.hosts[key >> 32], run.hosts[(uint32_t)key], route);
            for (unsigned long j = 0; j < xbt_dynar_length(route); j++)
                ts_sums_add(&per_link, (uint64_t)(uintptr_t)xbt_dynar_get_as(route, j, sg_link_t),
                            run.pair_bytes.vals[i]);
        }
    }
    xbt_dynar_free(&route);
    eng_link *all = ts_calloc(per_link.n, sizeof *all);
    int k = 0;
    for (size_t i = 0; i < per_link.cap; i++) {
        if (!per_link.used[i] || per_link.vals[i] <= 0) continue;
        sg_link_t l = (sg_link_t)(uintptr_t)per_link.keys[i];
        all[k].name = (char *)sg_link_get_name(l);
        all[k].bytes = per_link.vals[i];
        all[k].bandwidth = sg_link_get_bandwidth(l);
        all[k].busy = res->makespan > 0 ? all[k].bytes / (all[k].bandwidth * res->makespan) : 0;
        k++;
    }
    qsort(all, k, sizeof *all, link_cmp);
    if (k > keep) k = keep;
    for (int i = 0; i < k; i++) all[i].name = ts_strdup(all[i].name);
    res->links = all;
    res->nlinks = k;
    ts_sums_free(&per_link);
}

/* --- rail copies (eng_set_copies) ------------------------------------------ */

/* A map of 64-bit keys (not 0) to 64-bit values, open addressing. */
typedef struct u64map {
    uint64_t *key, *val;
    size_t mask, n;
} u64map;

/* Insert key -> val, or compare with the value already there: 1 when the map
 * holds key -> val afterwards, 0 when key held another value. */
static int u64_claim(u64map *m, uint64_t key, uint64_t val)
{
    if (2 * (m->n + 1) > m->mask + 1 || !m->key) {
        u64map old = *m;
        size_t cap = old.key ? 2 * (old.mask + 1) : 1024;
        m->key = ts_calloc(cap, sizeof *m->key), m->val = ts_malloc(cap * sizeof *m->val);
        m->mask = cap - 1, m->n = 0;
        for (size_t i = 0; old.key && i <= old.mask; i++)
            if (old.key[i]) u64_claim(m, old.key[i], old.val[i]);
        free(old.key), free(old.val);
    }
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & m->mask;
    for (; m->key[i]; i = (i + 1) & m->mask)
        if (m->key[i] == key) return m->val[i] == val;
    m->key[i] = key, m->val[i] = val, m->n++;
    return 1;
}

static int same_link(sg_link_t a, sg_link_t b)
{
    return sg_link_get_bandwidth(a) == sg_link_get_bandwidth(b) && sg_link_get_latency(a) == sg_link_get_latency(b) &&
           sg_link_is_shared(a) == sg_link_is_shared(b);
}

/* The value of key (0 when absent). */
static uint64_t u64_get(const u64map *m, uint64_t key)
{
    if (!m->key) return 0;
    for (size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & m->mask; m->key[i]; i = (i + 1) & m->mask)
        if (m->key[i] == key) return m->val[i];
    return 0;
}

/* Links every copy's flows cross at the same place (a node's uplink shared
 * by its GPUs): a run with copies gives each a copies-th of its bandwidth
 * (the other copies' flows take the rest), found by one run's check and
 * applied to the next run with copies (copies_check). */
static struct {
    sg_link_t *link;
    double *bw;         /* the link's own bandwidth */
    int n, copies;
} shared;

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (sg_link_t const *)a, y = (uintptr_t) * (sg_link_t const *)b;
    return (x > y) - (x < y);
}

static void shared_apply(int on)
{
    for (int i = 0; i < shared.n; i++)
        sg_link_set_bandwidth(shared.link[i], on ? shared.bw[i] / shared.copies : shared.bw[i]);
}

static void shared_clear(void)
{
    free(shared.link), free(shared.bw);
    memset(&shared, 0, sizeof shared);
}

/* Whether the graph's ranks stand exactly for their copies (eng_set_copies,
 * hosts in run.copy): returns copies; 0 with why when they do not; -1 when
 * they do once the links every copy shares get a copies-th of their
 * bandwidth (the shared table, for the next run; applied_shared: this run
 * had them so, for the same links). They do when
 * (1) every copy's host computes as its rank's (speed, HBM bandwidth);
 * (2) every group's copy has the group's node structure and NVLS (the
 *     collectives' topology, hence the same algorithms and schedules);
 * (3) for every pair of ranks whose route the run used (flows, alpha, the
 *     selection policy's routes), copy k's route has as many links as the
 *     rank pair's, position by position of the same bandwidth, latency and
 *     sharing, and each position's link is either copy k's own (copy 0's
 *     links paired one to one with copy k's, the copies' own links
 *     disjoint) or, for every copy alike, the rank pair's link itself.
 * The max-min sharing of every copy's flows is then symmetric (unique, and
 * invariant under exchanging copies), so the copies' flows have their
 * rank's flows' rates at all times: apart, on isomorphic links of their own;
 * together on a shared link, copies times the rank's flows, which is the
 * rank's flows alone on a copies-th of its capacity (a FATPIPE link caps
 * each flow alone: unchanged). With the same ops from the same start, the
 * copies run exactly as their ranks did. */
static int copies_check(const og_graph *g, int copies, int applied_shared, char *why, size_t n)
{
    if (copies > 255) return snprintf(why, n, "%d copies (at most 255)", copies), 0;
    for (int r = 0; r < g->nranks; r++)
        for (int k = 1; k < copies; k++) {
            sg_host_t a = run.copy[(size_t)r * copies], b = run.copy[(size_t)r * copies + k];
            const char *x = sg_host_get_property_value(a, "hbm_bw"), *y = sg_host_get_property_value(b, "hbm_bw");
            if (sg_host_get_speed(a) != sg_host_get_speed(b) || (x || y) != (x && y) || (x && strcmp(x, y)))
                return snprintf(why, n, "host %s does not compute as %s", sg_host_get_name(b), sg_host_get_name(a)), 0;
        }
    for (int gi = 0; gi < g->ngroups; gi++) {
        const og_group *gr = &g->groups[gi];
        const coll_topo *t0 = run.topo[gi];
        sg_host_t *hs = ts_malloc((gr->n ? gr->n : 1) * sizeof *hs);
        int ok = 1;
        for (int k = 1; k < copies && ok; k++) {
            for (int i = 0; i < gr->n; i++) hs[i] = run.copy[(size_t)gr->ranks[i] * copies + k];
            coll_topo *t = topo_of(hs, gr->n, 0);
            ok = t->nvls == t0->nvls && t->nnodes == t0->nnodes && !memcmp(t->node, t0->node, gr->n * sizeof *t->node);
            coll_topo_free(t);
        }
        free(hs);
        if (!ok) return snprintf(why, n, "group %d's copies are placed on nodes unlike it", gi), 0;
    }
    /* own: a link -> (copy 0's link it stands for, its copy; 0 when every copy
     * shares it); img: (copy 0's link, copy) -> that copy's link */
    u64map own = {0}, img = {0}, seen = {0};
    sg_link_t *sh = NULL;
    size_t nsh = 0, shcap = 0;
    xbt_dynar_t r0 = xbt_dynar_new(sizeof(sg_link_t), NULL), rk = xbt_dynar_new(sizeof(sg_link_t), NULL);
    int ok = 1;
    for (size_t i = 0; i < run.pairs.cap && ok; i++) {
        if (!run.pairs.used[i]) continue;
        size_t src = run.pairs.keys[i] >> 32, dst = (uint32_t)run.pairs.keys[i];
        for (int k = 0; k < copies && ok; k++) {
            xbt_dynar_t r = k ? rk : r0;
            xbt_dynar_reset(r);
            sg_host_get_route(run.copy[src * copies + k], run.copy[dst * copies + k], r);
            ok = xbt_dynar_length(r) == xbt_dynar_length(r0);
            for (unsigned long j = 0; ok && j < xbt_dynar_length(r); j++) {
                sg_link_t a = xbt_dynar_get_as(r0, j, sg_link_t), b = xbt_dynar_get_as(r, j, sg_link_t);
                uint64_t pa = (uint64_t)(uintptr_t)a, pb = (uint64_t)(uintptr_t)b;
                ok = same_link(a, b) && pa < (1ULL << 56) && u64_claim(&own, pb, pa << 8 | (a == b ? 0 : k)) &&
                     u64_claim(&img, pa << 8 | k, pb);
                if (ok && k == 1 && a == b && !u64_get(&seen, pa)) { /* a shared link, first seen */
                    u64_claim(&seen, pa, 1);
                    ts_grow(&sh, sizeof *sh, &shcap, nsh + 1);
                    sh[nsh++] = a;
                }
            }
            if (!ok)
                snprintf(why, n, "the route %s -> %s is no copy of %s -> %s on links of its own or shared",
                         sg_host_get_name(run.copy[src * copies + k]), sg_host_get_name(run.copy[dst * copies + k]),
                         sg_host_get_name(run.copy[src * copies]), sg_host_get_name(run.copy[dst * copies]));
        }
    }
    /* a shared link is every copy's: no copy maps it elsewhere */
    for (size_t i = 0; i < nsh && ok; i++)
        for (int k = 1; k < copies && ok; k++)
            if (u64_get(&img, (uint64_t)(uintptr_t)sh[i] << 8 | k) != (uint64_t)(uintptr_t)sh[i])
                ok = 0, snprintf(why, n, "link %s is shared by some copies only", sg_link_get_name(sh[i]));
    xbt_dynar_free(&r0);
    xbt_dynar_free(&rk);
    free(own.key), free(own.val), free(img.key), free(img.val), free(seen.key), free(seen.val);
    /* FATPIPE links cap each flow alone: shared or not, nothing to scale */
    size_t m = 0;
    for (size_t i = 0; i < nsh; i++)
        if (sg_link_is_shared(sh[i])) sh[m++] = sh[i];
    nsh = m;
    if (ok && nsh && sg_cfg_get_double("network/weight-S") > 0)
        ok = 0, snprintf(why, n, "network/weight-S > 0 makes a flow's share depend on its links' bandwidths");
    if (!ok || !nsh) {
        free(sh);
        return ok ? copies : 0;
    }
    qsort(sh, nsh, sizeof *sh, ptr_cmp);
    if (applied_shared && shared.copies == copies && (size_t)shared.n == nsh &&
        !memcmp(shared.link, sh, nsh * sizeof *sh)) {
        free(sh);
        return copies;
    }
    shared_clear();
    shared.link = sh, shared.n = (int)nsh, shared.copies = copies;
    shared.bw = ts_malloc(nsh * sizeof *shared.bw);
    for (size_t i = 0; i < nsh; i++) shared.bw[i] = sg_link_get_bandwidth(sh[i]);
    return -1;
}

/* After a run that did not finish: one clause per blocked stream. */
static int deadlock_report(stream_ctx *scs, int nsc, char *err, size_t errlen)
{
    int nblocked = 0, used;
    used = snprintf(err, errlen, "deadlock: ");
    for (int i = 0; i < nsc; i++) {
        stream_ctx *sc = &scs[i];
        if (sc->state == ST_DONE) continue;
        const og_op *op = &run.g->ranks[sc->rc->rank].ops[sc->cur];
        char what[160];
        if (sc->state == ST_DEPS) {
            int d = -1;
            for (int j = 0; j < op->ndeps && d < 0; j++)
                if (!(sc->rc->done[og_deps(op)[j]] & DONE)) d = og_deps(op)[j];
            snprintf(what, sizeof what, "waits for op %d", d);
        } else {
            og_describe_wait(op, what, sizeof what);
        }
        if ((size_t)used < errlen)
            used += snprintf(err + used, errlen - used, "%srank %d stream %d op %d (%s)",
                             nblocked ? "; " : "", sc->rc->rank, sc->stream, op->id, what);
        nblocked++;
    }
    if ((size_t)used < errlen)
        snprintf(err + used, errlen - used, " [%d stream%s blocked]", nblocked, nblocked == 1 ? "" : "s");
    return -1;
}

/* The collectives' algorithms into the result (eng_result.algo): the run's
 * own table, handed over rather than copied. */
static void record_algos(const og_graph *g, eng_result *res)
{
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0, c = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_COLL) run.coll_algo[r][c] = COLL_CODE(run.coll_algo[r][c]), c++;
    res->algo = run.coll_algo;
    run.coll_algo = NULL;
}

static void run_free(const og_graph *g)
{
    for (int r = 0; r < g->nranks; r++) {
        if (run.coll_algo) free(run.coll_algo[r]);
        if (run.gp) free(run.gp[r]);
        if (run.rcs) free(run.rcs[r].done);
        if (run.rcs && run.rcs[r].cv && !run.deadlocked) {
            sg_cond_destroy(run.rcs[r].cv);
            sg_mutex_destroy(run.rcs[r].mu);
        }
    }
    for (int gi = 0; run.topo && gi < g->ngroups; gi++) coll_topo_free(run.topo[gi]);
    free(run.topo);
    free(run.rails);
    for (int gi = 0; run.far_alpha && gi < g->ngroups; gi++) free(run.far_alpha[gi]);
    free(run.far_alpha);
    for (int gi = 0; run.inbox && gi < g->ngroups; gi++) free(run.inbox[gi]);
    free(run.inbox);
    for (int gi = 0; run.fluid && gi < g->ngroups; gi++)
        if (run.fluid[gi]) free(run.fluid[gi]->end), free(run.fluid[gi]->alpha), free(run.fluid[gi]);
    free(run.fluid);
    for (int gi = 0; run.flows && gi < g->ngroups; gi++)
        if (run.flows[gi]) free(run.flows[gi]->end), free(run.flows[gi]->alpha), free(run.flows[gi]->alpha_in), free(run.flows[gi]);
    free(run.flows);
    lone_free(g);
    free(sel_cache);
    sel_cache = NULL;
    free(run.coll_algo);
    free(run.gp);
    free(run.ngp);
    free(run.hosts);
    free(run.rcs);
    free(run.copy);
    ts_sums_free(&run.pairs);
    ts_sums_free(&run.pair_bytes);
    ts_sums_free(&run.lat);
    memset(&run, 0, sizeof run);
}

int eng_run(const og_graph *g, const eng_opts *o, eng_result **out, char *err, size_t errlen)
{
    double wall0 = ts_wtime();
    *out = NULL;
    if (poisoned)
        return ts_err(err, errlen, "a previous run in this process deadlocked; start a new process");
    memset(&run, 0, sizeof run);
    run.g = g;
    run.o = o;
    run.hosts = ts_calloc(g->nranks, sizeof *run.hosts);
    run.coll_algo = ts_calloc(g->nranks, sizeof *run.coll_algo);
    run.gp = ts_calloc(g->nranks, sizeof *run.gp);
    run.ngp = ts_calloc(g->nranks, sizeof *run.ngp);
    if (place_ranks(g, err, errlen) < 0 || copy_hosts(g, err, errlen) < 0 || index_collectives(g, err, errlen) < 0) {
        run_free(g);
        return -1;
    }

    eng_result *res = ts_calloc(1, sizeof *res);
    res->nranks = g->nranks;
    res->fidelity = o->fidelity;
    res->start = ts_calloc(g->nranks, sizeof *res->start);
    res->end = ts_calloc(g->nranks, sizeof *res->end);
    res->host = ts_calloc(g->nranks, sizeof *res->host);
    res->ranks = ts_calloc(g->nranks, sizeof *res->ranks);
    run.res = res;
    run.rcs = ts_calloc(g->nranks, sizeof *run.rcs);

    /* Streams: one actor per (rank, stream) that has ops. */
    int nsc = 0;
    stream_ctx *scs = NULL;
    size_t sccap = 0;
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        rank_ctx *rc = &run.rcs[r];
        rc->rank = r;
        rc->host = run.hosts[r];
        rc->done = ts_calloc(rk->nops, 1);
        for (int i = 0; i < rk->nops; i++) /* what other streams wait for */
            for (int j = 0; j < rk->ops[i].ndeps; j++) {
                int d = og_deps(&rk->ops[i])[j];
                if (d >= 0 && d < rk->nops && rk->ops[d].stream != rk->ops[i].stream) rc->done[d] |= AWAITED;
            }
        res->start[r] = ts_calloc(rk->nops, sizeof(double));
        res->end[r] = ts_calloc(rk->nops, sizeof(double));
        res->host[r] = ts_strdup(sg_host_get_name(run.hosts[r]));
        int count[OG_MAX_STREAMS] = {0}, nstreams = 0;
        for (int i = 0; i < rk->nops; i++)
            if (count[rk->ops[i].stream]++ == 0) nstreams++;
        if (nstreams > 1 && wake_all) {
            rc->mu = sg_mutex_init();
            rc->cv = sg_cond_init();
        }
        for (int s = 0; s < OG_MAX_STREAMS; s++) {
            if (!count[s]) continue;
            ts_grow(&scs, sizeof *scs, &sccap, (size_t)nsc + 1);
            stream_ctx *sc = &scs[nsc++];
            memset(sc, 0, sizeof *sc);
            sc->rc = rc;
            sc->stream = s;
            if (nstreams > 1 && !wake_all) {
                sc->sem = sg_sem_init(0);
            }
            sc->nops = count[s];
        }
        run.ops_total += rk->nops;
    }

    host_rates(g);
    run.t0 = simgrid_get_clock();
    run.last_progress = ts_wtime();
    int direct = ncopies <= 1 && alone_direct(g, res); /* rail copies are training graphs: never one collective alone */
    for (int i = 0; i < nsc; i++)
        if (direct) scs[i].state = ST_DONE;
    for (int i = 0; i < nsc && !direct; i++) {
        char name[48];
        snprintf(name, sizeof name, "r%d.s%d", scs[i].rc->rank, scs[i].stream);
        sg_actor_t a = sg_actor_init(name, scs[i].rc->host);
        sg_actor_set_data(a, &scs[i]);
        sg_actor_start(a, stream_actor, 0, NULL);
    }
    /* after index_collectives: the selection policy saw the links as they are */
    int scaled = ncopies > 1 && shared.n && shared.copies == ncopies;
    if (!direct) {
        if (scaled) shared_apply(1);
        simgrid_run();
        if (scaled) shared_apply(0);
    }

    int rc = 0;
    for (int i = 0; i < nsc; i++)
        if (scs[i].state != ST_DONE) {
            rc = deadlock_report(scs, nsc, err, errlen);
            run.deadlocked = poisoned = 1;
            break;
        }
    if (rc == 0) {
        for (int r = 0; r < g->nranks; r++)
            for (int i = 0; i < g->ranks[r].nops; i++)
                if (res->end[r][i] > res->makespan) res->makespan = res->end[r][i];
        res->copies = ncopies > 1 ? copies_check(g, ncopies, scaled, res->copies_why, sizeof res->copies_why) : 1;
        rank_stats(g, res);
        if (o->links > 0) collect_links(res, o->links);
        record_algos(g, res);
        res->wall = ts_wtime() - wall0;
        *out = res;
    } else {
        eng_result_free(res);
    }
    for (int i = 0; i < nsc; i++) {
        if (scs[i].sem && !run.deadlocked) sg_sem_destroy(scs[i].sem);
        if (scs[i].lsem && !run.deadlocked) sg_sem_destroy(scs[i].lsem);
        if (!run.deadlocked) coll_step_free(scs[i].st); /* a stuck actor may hold it */
    }
    free(scs);
    run_free(g);
    return rc;
}

void eng_result_free(eng_result *r)
{
    if (!r) return;
    for (int i = 0; i < r->nranks; i++) {
        free(r->start[i]);
        free(r->end[i]);
        free(r->host[i]);
        if (r->algo) free(r->algo[i]);
    }
    free(r->algo);
    for (int i = 0; i < r->nlinks; i++) free(r->links[i].name);
    free(r->links);
    free(r->start);
    free(r->end);
    free(r->host);
    free(r->ranks);
    free(r);
}
