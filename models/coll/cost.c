/* Analytical cost of a collective schedule (the `analytical` fidelity): the
 * alpha-beta cost of its steps from per-pair latency and bandwidth, no SimGrid
 * run, plus the call's latency (coll_call_latency) as the engine adds it. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_params.h"
#include "util.h"

static const char *const proto_names[COLL_NPROTOS] = {"simple", "ll128", "ll"};

const char *coll_proto_name(coll_proto pr) { return pr < COLL_NPROTOS ? proto_names[pr] : "?"; }

int coll_proto_from_name(const char *s)
{
    for (int i = 0; i < COLL_NPROTOS; i++)
        if (strcasecmp(proto_names[i], s) == 0) return i;
    return -1;
}

/* Per-rank route cache, built from the merged view (the peers a rank ever
 * talks to), when it fits; else every lookup asks route(). */
typedef struct {
    int *peer;
    double *lat, *bw;
    int64_t *off; /* rank r's peers are [off[r], off[r+1]) sorted by peer */
} rcache;

#define CACHE_MAX ((int64_t)1 << 22)

static int rcache_build(rcache *c, const coll_plan *p, coll_route_fn route, void *ctx)
{
    memset(c, 0, sizeof *c);
    if ((int64_t)p->n * p->merged_width * 2 > CACHE_MAX) return 0;
    coll_step *m = coll_step_new(p->merged_width + 1);
    size_t cap = 0;
    int64_t k = 0;
    c->off = ts_malloc((p->n + 1) * sizeof *c->off);
    for (int r = 0; r < p->n; r++) {
        coll_plan_merged_phys(p, r, m);
        c->off[r] = k;
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            int q = i < m->nsend ? m->send[i].peer : m->recv[i - m->nsend].peer;
            int64_t j = c->off[r];
            while (j < k && c->peer[j] != q) j++;
            if (j < k) continue;
            if ((size_t)k + 1 > cap) {
                size_t nc = cap;
                ts_grow(&c->peer, sizeof *c->peer, &nc, k + 1);
                nc = cap;
                ts_grow(&c->lat, sizeof *c->lat, &nc, k + 1);
                ts_grow(&c->bw, sizeof *c->bw, &cap, k + 1);
            }
            c->peer[k] = q;
            route(ctx, r, q, &c->lat[k], &c->bw[k]);
            k++;
        }
    }
    c->off[p->n] = k;
    coll_step_free(m);
    return 1;
}

/* Route r -> q: the cache holds r's peers (both directions are looked up from r). */
static void lookup(const rcache *c, const coll_plan *p, coll_route_fn route, void *ctx, int r, int q,
                   double *lat, double *bw)
{
    (void)p;
    if (c->off)
        for (int64_t j = c->off[r]; j < c->off[r + 1]; j++)
            if (c->peer[j] == q) {
                *lat = c->lat[j];
                *bw = c->bw[j];
                return;
            }
    route(ctx, r, q, lat, bw);
}

static void rcache_free(rcache *c)
{
    free(c->peer);
    free(c->lat);
    free(c->bw);
    free(c->off);
}

/* The endpoint fluid model. Each rank has, per direction and per kind of
 * link (route bandwidth: NVLink and NIC routes do not share), one link of
 * that bandwidth; a flow uses its sender's out-link and its receiver's
 * in-link, starts moving bytes after its route latency, and flows share links
 * max-min fairly (SimGrid's CM02 sharing) until they finish. A flow between
 * nodes also crosses its sender's NIC out and its receiver's NIC in where the
 * group's topology names them (coll_topo_set_nics): GPUs that share a NIC
 * share its bandwidth, as the platform's one NIC link per NIC makes them
 * (Polaris: 2 A100 per Slingshot NIC; Frontier: 2 GCDs).. Where the topology
 * knows the links of the routes inside a node (coll_topo_set_links), a flow
 * between two members of one node crosses those links instead of its
 * endpoints' links: a mesh's pairs each have their own (Perlmutter, Polaris:
 * 4 NVLink3 links per A100 pair), an uneven fabric's routes their own widths
 * and the hops they share (Frontier's Infinity Fabric). Where the topology
 * knows the fabric between the nodes (coll_topo_set_fabric), a flow between
 * nodes also crosses the fabric links of its route that can limit it (a
 * tapered fat-tree's leaf and pod uplinks, a dragonfly's switch uplinks and
 * global links), each shared by the flows that cross it as the platform's
 * link is; a fabric that can never limit a flow gives none, and the cost is
 * the one without it. */
#define NCLASS 4
/* at most: out-link, in-link, NIC out, NIC in, the fabric's links; or a route's links inside a node */
#define NRES (4 + COLL_FABRIC_HOPS)
_Static_assert(COLL_ROUTE_HOPS <= NRES, "a route inside a node must fit a flow's resources");

typedef struct {
    double bw[NCLASS];
    int n;
} kinds;

/* Resources of n ranks: the ranks' links, then two per NIC pool (at most n),
 * then the links inside the nodes (coll_topo's nlinks), then the fabric's
 * links (its nids). */
#define RES_COUNT(n, nl) ((size_t)(n) * 2 * NCLASS + 2 * (size_t)(n) + (size_t)(nl))

static size_t res_count(const coll_plan *p)
{
    const coll_topo *t = p->topo;
    return RES_COUNT(p->n, t ? t->nlinks : 0) + (t && t->fabric ? (size_t)t->fabric->nids : 0);
}

/* Index of bandwidth bw among a rank's link kinds (the last one when more). */
static int kind_of(kinds *k, double bw)
{
    for (int i = 0; i < k->n; i++)
        if (k->bw[i] == bw) return i;
    if (k->n < NCLASS) {
        k->bw[k->n] = bw;
        return k->n++;
    }
    return NCLASS - 1;
}

typedef struct {
    int res[NRES];      /* sender's out-link, receiver's in-link, then its NIC pools; or its route's links */
    int nres;           /* resources in res */
    int state;          /* 0 waiting, 1 active, 2 done */
    double arrive;      /* when it starts moving bytes */
    double pen, w;      /* sharing penalty: its route's latency (CM02), else 1; w = 1 / pen */
    double rem, rate, end;
    double fin;         /* fluid_run: when it finishes at its current rate */
    double top;         /* the largest rate it had (fl->track) */
} flow;

typedef struct {
    flow *f;
    size_t nf, cap;
    kinds *out, *in;    /* per rank */
    double *rcap;       /* per resource: bandwidth */
    double *left;       /* water-filling scratch */
    int *cnt;
    double *wsum;       /* per resource: its unfixed flows' 1 / penalty */
    double *sh;         /* per resource: its share in water_fill's round */
    int *on;            /* per resource: its active flows without a rate (0 between water_fills) */
    int *live;          /* water_fill's resources with such flows */
    int *act;           /* water_fill's flows still without a rate */
    size_t actcap;
    int lent;           /* the arrays are the scratch's */
    int n;              /* ranks: NIC pool k's resources follow theirs */
    int track;          /* fluid_run keeps each flow's largest rate (top) */
    int links, nics;    /* the topology knows the links inside its nodes, its members' NICs */
    size_t nfab;        /* flows given fabric links since the last clear */
} fluid;

/* The fluid model's per-rank arrays, kept from one costing to the next (a
 * search costs hundreds of groups): only the link kinds need clearing, as
 * rcap is written by fluid_add before water_fill reads it, left, wsum, sh
 * and live by water_fill itself, cnt by the fold, and on is 0 after every
 * water_fill (zeroed as it grows). The kinds are clear (n = 0) between uses: a use
 * clears the ranks its flows touched (kinds_reset), not all n. One set is
 * lent at a time; a nested use allocates. */
static struct {
    kinds *out, *in;
    double *rcap, *left, *wsum, *sh;
    int *cnt, *on, *live;
    size_t n, nres;     /* ranks and resources allocated */
    int lent;
} scratch;

static void fluid_init(fluid *fl, const coll_plan *p)
{
    int n = p->n;
    size_t nres = res_count(p);
    memset(fl, 0, sizeof *fl);
    fl->n = n;
    fl->links = p->topo && p->topo->nlinks > 0;
    fl->nics = p->topo && p->topo->nic;
    if (scratch.lent) { /* nested (not expected): arrays of its own */
        fl->out = ts_calloc(n, sizeof *fl->out);
        fl->in = ts_calloc(n, sizeof *fl->in);
        fl->rcap = ts_calloc(nres, sizeof *fl->rcap);
        fl->left = ts_calloc(nres, sizeof *fl->left);
        fl->cnt = ts_calloc(nres, sizeof *fl->cnt);
        fl->wsum = ts_calloc(nres, sizeof *fl->wsum);
        fl->sh = ts_calloc(nres, sizeof *fl->sh);
        fl->on = ts_calloc(nres, sizeof *fl->on);
        fl->live = ts_calloc(nres, sizeof *fl->live);
        return;
    }
    if ((size_t)n > scratch.n) {
        scratch.out = ts_realloc(scratch.out, n * sizeof *scratch.out);
        scratch.in = ts_realloc(scratch.in, n * sizeof *scratch.in);
        memset(scratch.out + scratch.n, 0, (n - scratch.n) * sizeof *scratch.out);
        memset(scratch.in + scratch.n, 0, (n - scratch.n) * sizeof *scratch.in);
        scratch.n = n;
    }
    if (nres > scratch.nres) {
        scratch.rcap = ts_realloc(scratch.rcap, nres * sizeof *scratch.rcap);
        scratch.left = ts_realloc(scratch.left, nres * sizeof *scratch.left);
        scratch.cnt = ts_realloc(scratch.cnt, nres * sizeof *scratch.cnt);
        scratch.wsum = ts_realloc(scratch.wsum, nres * sizeof *scratch.wsum);
        scratch.sh = ts_realloc(scratch.sh, nres * sizeof *scratch.sh);
        scratch.on = ts_realloc(scratch.on, nres * sizeof *scratch.on);
        memset(scratch.on + scratch.nres, 0, (nres - scratch.nres) * sizeof *scratch.on);
        scratch.live = ts_realloc(scratch.live, nres * sizeof *scratch.live);
        scratch.nres = nres;
    }
    fl->out = scratch.out, fl->in = scratch.in, fl->rcap = scratch.rcap, fl->left = scratch.left;
    fl->cnt = scratch.cnt, fl->wsum = scratch.wsum, fl->sh = scratch.sh, fl->on = scratch.on;
    fl->live = scratch.live;
    fl->lent = 1;
    scratch.lent = 1;
}

/* Clear the link kinds of the ranks fl's flows touched: a flow on its
 * endpoints' links (not a route's links inside a node) lists its sender's
 * out-link and its receiver's in-link first. */
static void kinds_reset(fluid *fl)
{
    int lim = fl->n * 2 * NCLASS;
    for (size_t i = 0; i < fl->nf; i++) {
        const flow *f = &fl->f[i];
        if (f->res[0] >= lim) continue;
        fl->out[f->res[0] / (2 * NCLASS)].n = 0;
        fl->in[f->res[1] / (2 * NCLASS)].n = 0;
    }
}

static void fluid_free(fluid *fl)
{
    kinds_reset(fl);
    free(fl->f);
    free(fl->act);
    if (fl->lent) {
        scratch.lent = 0;
        return;
    }
    free(fl->out);
    free(fl->in);
    free(fl->rcap);
    free(fl->left);
    free(fl->cnt);
    free(fl->wsum);
    free(fl->sh);
    free(fl->on);
    free(fl->live);
}

/* The NIC pools a flow r -> q of plan p crosses (-1: none): only between
 * nodes, where the topology names the members' NICs. */
static void nic_res(const fluid *fl, const coll_plan *p, int r, int q, int res[2], double share[2])
{
    const coll_topo *t = p->topo;
    res[0] = res[1] = -1;
    share[0] = share[1] = 1;
    if (!t || !t->nic || r >= t->n || q >= t->n || t->node[r] == t->node[q]) return;
    int a = t->nic[r], b = t->nic[q];
    size_t base = (size_t)fl->n * 2 * NCLASS;
    if (a >= 0) res[0] = (int)(base + 2 * (size_t)a), share[0] = t->nic_share[a];
    if (b >= 0) res[1] = (int)(base + 2 * (size_t)b + 1), share[1] = t->nic_share[b];
}

/* The links of the route r -> q inside one node into f's resources (1), or
 * 0 where the topology does not know them (or r, q are on different nodes). */
static int link_res(const fluid *fl, const coll_plan *p, int r, int q, flow *f)
{
    const coll_topo *t = p->topo;
    if (!t || t->nlinks == 0 || r >= t->n || q >= t->n || t->node[r] != t->node[q]) return 0;
    int k = t->node[r], m = t->first[k + 1] - t->first[k];
    const int *pl = t->pair_link + ((size_t)t->pair_off[k] + (size_t)t->local[r] * m + t->local[q]) * COLL_ROUTE_HOPS;
    size_t base = (size_t)fl->n * 2 * NCLASS + 2 * (size_t)fl->n + (size_t)t->link_off[k];
    if (pl[0] < 0) return 0; /* no links (a member to itself): its endpoints' */
    f->nres = 0;
    for (int h = 0; h < COLL_ROUTE_HOPS && pl[h] >= 0; h++) f->res[f->nres++] = (int)(base + pl[h]);
    return 1;
}

/* The fabric links of the route r -> q (members of different nodes) after
 * f's other resources, each at the group's share of its bandwidth. */
static void fabric_res(fluid *fl, const coll_plan *p, int r, int q, flow *f)
{
    const coll_topo *t = p->topo;
    if (r >= t->n || q >= t->n || t->node[r] == t->node[q]) return;
    int ids[COLL_FABRIC_HOPS];
    double bw[COLL_FABRIC_HOPS];
    int nh = t->fabric->route(t->fabric->ctx, t->fab_node[t->node[r]], t->fab_node[t->node[q]], ids, bw);
    size_t base = RES_COUNT(fl->n, t->nlinks);
    int had = f->nres;
    for (int h = 0; h < nh && h < COLL_FABRIC_HOPS && f->nres < NRES; h++) {
        int x = (int)(base + (size_t)ids[h]);
        f->res[f->nres++] = x;
        fl->rcap[x] = bw[h] > 0 ? bw[h] * t->fab_share : 1e300;
    }
    fl->nfab += f->nres > had;
}

/* Fabric links that cannot fill in this costing leave the flows that cross
 * them: a link whose flows can carry less than it, whatever their shares,
 * never has the least share (it would then fill), so it fixes no rate and
 * the run is the one without it, bit for bit (a ring or a tree whose few
 * flows per node fit the uplinks; folding works again on them). Bound on a
 * link's load: the least of its flows' own capacities (the narrowest of
 * their other resources) summed, and of their senders' out-links and NIC
 * pools, each counted once per run of flows from one sender (flows are added
 * sender by sender; a sender met again counts again, which only loosens
 * the bound). */
typedef struct {
    double own, out, nic;
    int last_out, last_nic, touched, nonic;
} fab_acc;

static struct {
    fab_acc *a;
    size_t n;
    int *seen;        /* the links touched, to clear after */
    size_t nseen, cap;
} fscratch;

static int fabric_drop(fluid *fl, const coll_plan *p, size_t from)
{
    const coll_topo *t = p->topo;
    if (!t || !t->fabric || fl->nf <= from || fl->nfab == 0) return 0; /* no flow crosses a fabric link */
    size_t base = RES_COUNT(fl->n, t->nlinks), nids = (size_t)t->fabric->nids, nic0 = (size_t)fl->n * 2 * NCLASS;
    if (nids > fscratch.n) {
        fscratch.a = ts_realloc(fscratch.a, nids * sizeof *fscratch.a);
        for (size_t i = fscratch.n; i < nids; i++) fscratch.a[i] = (fab_acc){0, 0, 0, -1, -1, 0, 0};
        fscratch.n = nids;
    }
    fab_acc *acc = fscratch.a;
    fscratch.nseen = 0;
    for (size_t i = from; i < fl->nf; i++) {
        const flow *f = &fl->f[i];
        if (f->nres == 0 || (size_t)f->res[f->nres - 1] < base) continue; /* its fabric links come last: none */
        double own = 1e300;
        int nic = -1, k;
        for (k = 0; k < f->nres && (size_t)f->res[k] < base; k++) {
            if (fl->rcap[f->res[k]] < own) own = fl->rcap[f->res[k]];
            size_t x = (size_t)f->res[k];
            if (k >= 2 && x >= nic0 && x < nic0 + 2 * (size_t)fl->n && (x - nic0) % 2 == 0) nic = f->res[k];
        }
        for (; k < f->nres; k++) {
            fab_acc *a = &acc[f->res[k] - base];
            if (!a->touched) {
                ts_grow(&fscratch.seen, sizeof *fscratch.seen, &fscratch.cap, fscratch.nseen + 1);
                fscratch.seen[fscratch.nseen++] = f->res[k] - (int)base;
            }
            a->touched = 1;
            a->own += own;
            if (a->last_out != f->res[0]) a->out += fl->rcap[f->res[0]], a->last_out = f->res[0];
            if (nic < 0) a->nonic = 1;
            else if (a->last_nic != nic) a->nic += fl->rcap[nic], a->last_nic = nic;
        }
    }
    if (fscratch.nseen == 0) return 0;
    int kept = 0;
    for (size_t i = from; i < fl->nf; i++) {
        flow *f = &fl->f[i];
        if (f->nres == 0 || (size_t)f->res[f->nres - 1] < base) continue;
        int k = 0;
        for (int j = 0; j < f->nres; j++) {
            int x = f->res[j];
            if ((size_t)x >= base) {
                fab_acc *a = &acc[x - base];
                if (a->touched == 1) { /* decide once */
                    double load = a->own < a->out ? a->own : a->out;
                    if (!a->nonic && a->nic < load) load = a->nic;
                    a->touched = load < fl->rcap[x] * (1 - 1e-9) ? 2 : 3;
                }
                if (a->touched == 2) continue; /* cannot fill: dropped */
                kept = 1;
            }
            f->res[k++] = x;
        }
        f->nres = k;
    }
    for (size_t i = 0; i < fscratch.nseen; i++) acc[fscratch.seen[i]] = (fab_acc){0, 0, 0, -1, -1, 0, 0};
    return kept;
}

static void fluid_add(fluid *fl, const coll_plan *p, int r, int q, double start, double lat, double bw, int64_t bytes)
{
    if (fl->nf + 1 > fl->cap) ts_grow(&fl->f, sizeof *fl->f, &fl->cap, fl->nf + 1);
    flow *f = &fl->f[fl->nf++];
    f->arrive = start + lat;
    f->pen = lat > 0 ? lat : 1;
    f->w = 1 / f->pen;
    f->rem = (double)bytes;
    f->rate = 0;
    f->end = f->arrive;
    f->top = 0;
    f->state = 0;
    if (fl->links && link_res(fl, p, r, q, f)) {
        size_t base = (size_t)fl->n * 2 * NCLASS + 2 * (size_t)fl->n;
        for (int k = 0; k < f->nres; k++) {
            double lb = p->topo->link_bw[f->res[k] - base];
            fl->rcap[f->res[k]] = lb > 0 ? lb : 1e300;
        }
        return;
    }
    f->res[0] = (r * 2 + 0) * NCLASS + kind_of(&fl->out[r], bw);
    f->res[1] = (q * 2 + 1) * NCLASS + kind_of(&fl->in[q], bw);
    fl->rcap[f->res[0]] = fl->rcap[f->res[1]] = bw > 0 ? bw : 1e300;
    f->nres = 2; /* the pools it crosses follow its links: loops stop at nres */
    if (fl->nics) {
        double share[2];
        int nic[2];
        nic_res(fl, p, r, q, nic, share);
        for (int k = 0; k < 2; k++)
            if (nic[k] >= 0) {
                f->res[f->nres++] = nic[k];
                fl->rcap[nic[k]] = bw > 0 ? bw * share[k] : 1e300;
            }
    }
    if (p->topo && p->topo->fabric) fabric_res(fl, p, r, q, f);
}

/* Max-min fair rates of the active flows by progressive filling: the links
 * with the smallest fair share fix their flows' rates, repeatedly. Shares
 * are weighted as SimGrid's CM02 model weighs them (the pipelined level's
 * reference): a flow's share of a link is in proportion to 1 / its sharing
 * penalty, its route's latency (NetworkCm02Model::communicate; the engine's
 * fluid model, sim/engine/rails.c route_flow, does the same): where routes
 * of 1 and 2 hops share a link (Frontier's Infinity Fabric), the 1-hop flow
 * gets twice the other's share. Flows of equal latency share equally.
 *
 * Each round takes each link's share once (a link is crossed by many
 * flows: a PAT member's eight flows share its links, and the fabric's links
 * the flows of many nodes), over the links that still carry a flow without
 * a rate (on[x] counts those flows): the least share is the least of the
 * same values, and a flow is fixed where one of its links' shares, taken
 * before any flow of the round is fixed, is within the round's tolerance of
 * it, as before. The active flows are listed once (fl->act, in index order)
 * and each round fixes its flows in that order, subtracting their rates and
 * weights from each link in the same order: every figure is the same. on[]
 * is back to 0 at the end (every active flow is fixed, each listing of a
 * link counted once up and once down). */
static void water_fill(fluid *fl)
{
    size_t nact = 0, nlive = 0;
    if (fl->nf > fl->actcap) ts_grow(&fl->act, sizeof *fl->act, &fl->actcap, fl->nf);
    int *act = fl->act, *on = fl->on, *live = fl->live;
    double *left = fl->left, *wsum = fl->wsum, *sh = fl->sh;
    for (size_t i = 0; i < fl->nf; i++) {
        flow *f = &fl->f[i];
        if (f->state != 1) continue;
        for (int k = 0; k < f->nres; k++) {
            int x = f->res[k];
            if (on[x]++ == 0) left[x] = fl->rcap[x], wsum[x] = 0, live[nlive++] = x;
            wsum[x] += f->w;
        }
        f->rate = -1;
        act[nact++] = (int)i;
    }
    while (nact > 0) {
        double m = 1e300;
        size_t keep = 0;
        for (size_t j = 0; j < nlive; j++) {
            int x = live[j];
            if (on[x] == 0) continue; /* its flows all have rates */
            live[keep++] = x;
            sh[x] = left[x] / wsum[x];
            if (sh[x] < m) m = sh[x];
        }
        nlive = keep;
        double lim = m * (1 + 1e-12);
        keep = 0;
        for (size_t j = 0; j < nact; j++) {
            flow *f = &fl->f[act[j]];
            int tight = 0;
            for (int k = 0; k < f->nres; k++) tight |= sh[f->res[k]] <= lim;
            if (!tight) {
                act[keep++] = act[j];
                continue;
            }
            f->rate = m * f->w;
            for (int k = 0; k < f->nres; k++) {
                int x = f->res[k];
                left[x] -= f->rate;
                wsum[x] -= f->w;
                on[x]--;
            }
        }
        nact = keep;
    }
}

/* Run the flows to completion; each flow's end time is set. Two passes per
 * event: the rates' next event (each active flow's finish, kept in fin), then
 * every flow moved to it and its arrival or end at that time noted, which
 * the next event's water_fill reads (the same steps, per flow, as a pass
 * that moves the flows and one that notes what happened at the new time). */
static void fluid_run(fluid *fl)
{
    double t = 0;
    size_t left = fl->nf;
    int changed = 0;
    for (size_t i = 0; i < fl->nf; i++) {
        flow *f = &fl->f[i];
        if (f->state == 0 && f->arrive <= t) f->state = 1, changed = 1;
        if (f->state == 1 && f->rem <= 0) f->state = 2, f->end = t > f->arrive ? t : f->arrive, left--, changed = 1;
    }
    while (left > 0) {
        if (changed) water_fill(fl);
        double tn = 1e300;
        for (size_t i = 0; i < fl->nf; i++) {
            flow *f = &fl->f[i];
            if (fl->track && f->state == 1 && f->rate > f->top) f->top = f->rate;
            if (f->state == 0 && f->arrive < tn) tn = f->arrive;
            if (f->state == 1 && f->rate > 0) {
                f->fin = t + f->rem / f->rate;
                if (f->fin < tn) tn = f->fin;
            }
        }
        if (tn >= 1e300) break; /* impossible: an active flow without a rate */
        changed = 0;
        for (size_t i = 0; i < fl->nf; i++) {
            flow *f = &fl->f[i];
            if (f->state == 1 && f->rate > 0) {
                /* flows due at tn finish exactly there (no rounding leftovers) */
                if (f->fin <= tn * (1 + 1e-12)) f->rem = 0;
                else f->rem -= f->rate * (tn - t);
            }
            if (f->state == 0 && f->arrive <= tn) f->state = 1, changed = 1;
            if (f->state == 1 && f->rem <= 0) f->state = 2, f->end = tn > f->arrive ? tn : f->arrive, left--, changed = 1;
        }
        t = tn;
    }
    for (size_t i = 0; i < fl->nf; i++) fl->f[i].state = 0;
}

static void fluid_clear(fluid *fl)
{
    kinds_reset(fl);
    fl->nf = 0;
    fl->nfab = 0;
}

/* Entry i of rank r's merged step m (sends first): its peer in *q and the
 * route's latency and bandwidth in the transfer's direction; 1 for a send. */
static int merged_peer(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx, const coll_step *m, int r,
                       int i, int *q, double *lat, double *bw)
{
    int send = i < m->nsend;
    *q = send ? m->send[i].peer : m->recv[i - m->nsend].peer;
    if (send) lookup(c, p, route, ctx, r, *q, lat, bw);
    else lookup(c, p, route, ctx, *q, r, lat, bw);
    return send;
}

/* Per rank, the largest route latency to the peers it ever talks to (the
 * engine's alpha). */
/* The largest route latency to each rank's peers, [n .. 2n): the least. */
static double *rank_alpha(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx)
{
    double *alpha = ts_calloc(2 * (size_t)p->n, sizeof *alpha);
    coll_step *m = coll_step_new(p->merged_width + 1);
    for (int r = 0; r < p->n; r++) {
        coll_plan_merged_phys(p, r, m);
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            double lat, bw;
            int q;
            merged_peer(p, c, route, ctx, m, r, i, &q, &lat, &bw);
            if (lat > alpha[r]) alpha[r] = lat;
            if (i == 0 || lat < alpha[p->n + r]) alpha[p->n + r] = lat;
        }
    }
    coll_step_free(m);
    return alpha;
}

static double cost_steps(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx)
{
    int n = p->n;
    double *ready = ts_calloc(n, sizeof *ready), *next = ts_malloc(n * sizeof *next);
    coll_step *st = coll_step_new(p->width + 1);
    fluid fl;
    fluid_init(&fl, p);
    for (int s = 0; s < p->nsteps; s++) {
        fluid_clear(&fl);
        memcpy(next, ready, n * sizeof *ready);
        for (int r = 0; r < n; r++) {
            coll_plan_step_phys(p, r, s, st);
            for (int i = 0; i < st->nsend; i++) {
                int q = st->send[i].peer;
                double lat, bw, t0 = ready[r] > ready[q] ? ready[r] : ready[q];
                lookup(c, p, route, ctx, r, q, &lat, &bw);
                fluid_add(&fl, p, r, q, t0, lat, bw, coll_plan_wire_bytes(p, st->send[i].bytes));
            }
        }
        fabric_drop(&fl, p, 0);
        fluid_run(&fl);
        /* flows were added sender by sender: find each one's endpoints again */
        size_t k = 0;
        for (int r = 0; r < n; r++) {
            coll_plan_step_phys(p, r, s, st);
            for (int i = 0; i < st->nsend; i++, k++) {
                int q = st->send[i].peer;
                double e = fl.f[k].end;
                if (e > next[r]) next[r] = e;
                if (e > next[q]) next[q] = e;
            }
        }
        memcpy(ready, next, n * sizeof *ready);
    }
    double t = 0, *alpha = rank_alpha(p, c, route, ctx);
    for (int r = 0; r < n; r++)
        if (ready[r] + coll_call_tail(p, alpha[r], alpha[n + r], 1, ready[r]) > t) t = ready[r] + coll_call_tail(p, alpha[r], alpha[n + r], 1, ready[r]);
    t = coll_call_time(p, t);
    free(alpha);
    fluid_free(&fl);
    coll_step_free(st);
    free(ready);
    free(next);
    return t;
}

/* fluid_run with twin components folded. Flows that share a resource,
 * directly or through others, form a component; no flow outside it changes
 * its shares. Two components whose flows, in index order, have the same
 * start, bytes, penalty and resource capacities, and use their resources in
 * the same pattern (a ring's lone flows on a uniform placement; every node's
 * flows inside a node of the same fabric and chains), go through the very
 * same operations in the model: their shares, finishing times and whether
 * they are active are equal at every step, so one of them changes neither
 * the least share, the next event nor when the run ends. One of each set
 * runs, the others take its ends: every flow's end is the one fluid_run
 * gives it. */
static int uf_root(int *up, int i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

/* The most doubles of one flow's key: start, bytes, penalty, its resource
 * count, then per resource its capacity and its place in the component. */
#define KEY_PER_FLOW (4 + 2 * NRES)

/* Component c's key (its flows fi[0 .. nc) in index order) into key, its
 * length returned; loc: per resource scratch, -1 on entry and again on
 * return. Each flow's part says how many resources follow, so two keys are
 * equal only where every flow has the same start, bytes, penalty and
 * resources of the same capacities used in the same pattern. */
static size_t comp_key(const fluid *fl, const int *fi, int nc, int *loc, double *key)
{
    int nl = 0;
    double *k = key;
    for (int j = 0; j < nc; j++) {
        const flow *f = &fl->f[fi[j]];
        k[0] = f->arrive, k[1] = f->rem, k[2] = f->pen, k[3] = f->nres;
        k += 4;
        for (int r = 0; r < f->nres; r++, k += 2) {
            int x = f->res[r];
            if (loc[x] < 0) loc[x] = nl++;
            k[0] = fl->rcap[x];
            k[1] = loc[x];
        }
    }
    for (int j = 0; j < nc; j++)
        for (int r = 0; r < fl->f[fi[j]].nres; r++) loc[fl->f[fi[j]].res[r]] = -1;
    return (size_t)(k - key);
}

/* A flow alone on every resource it crosses (no other flow uses them, and
 * it lists none twice) is a component of its own: its key is comp_key's for
 * it (its resources in order, places 0, 1, ...), without the scratch. */
static size_t lone_key(const fluid *fl, const flow *f, double *k)
{
    k[0] = f->arrive, k[1] = f->rem, k[2] = f->pen, k[3] = f->nres;
    for (int r = 0; r < f->nres; r++) {
        k[4 + 2 * r] = fl->rcap[f->res[r]];
        k[5 + 2 * r] = r;
    }
    return 4 + 2 * (size_t)f->nres;
}

static int same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* lone_key(f) equals lone_key(g), read off the flows. */
static int lone_same(const fluid *fl, const flow *f, const flow *g)
{
    if (f->nres != g->nres || !same_bits(f->arrive, g->arrive) || !same_bits(f->rem, g->rem) ||
        !same_bits(f->pen, g->pen))
        return 0;
    for (int r = 0; r < f->nres; r++)
        if (!same_bits(fl->rcap[f->res[r]], fl->rcap[g->res[r]])) return 0;
    return 1;
}

/* Two keys of n doubles equal bit for bit (as memcmp). */
static int key_eq(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x, y;
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b + i, sizeof y);
        if (x != y) return 0;
    }
    return 1;
}

/* A representative component: its key at keys[off .. off + len), its first
 * flow c (lone: the flow) and its nc flows. */
typedef struct {
    size_t off, len;
    int c, nc, lone;
} repr;

/* The fold's arrays, kept from one costing to the next (grown, never
 * shrunk): a search folds hundreds of costings, each of up to thousands of
 * flows. fluid_run_folded does not nest (fluid_run does not fold). */
static struct {
    int *up, *start, *fi, *fill, *slot, *idx;
    repr *rep;
    flow *kept;
    double *keys;
    size_t nf, ncap; /* flows and hash slots allocated for */
} fold;

static void fold_reserve(size_t nf, size_t cap)
{
    if (nf > fold.nf) {
        fold.up = ts_realloc(fold.up, nf * sizeof *fold.up);
        fold.start = ts_realloc(fold.start, (nf + 1) * sizeof *fold.start);
        fold.fi = ts_realloc(fold.fi, nf * sizeof *fold.fi);
        fold.fill = ts_realloc(fold.fill, nf * sizeof *fold.fill);
        fold.idx = ts_realloc(fold.idx, nf * sizeof *fold.idx);
        fold.rep = ts_realloc(fold.rep, nf * sizeof *fold.rep);
        fold.kept = ts_realloc(fold.kept, nf * sizeof *fold.kept);
        fold.keys = ts_realloc(fold.keys, nf * KEY_PER_FLOW * sizeof *fold.keys);
        fold.nf = nf;
    }
    if (cap > fold.ncap) {
        fold.slot = ts_realloc(fold.slot, cap * sizeof *fold.slot);
        fold.ncap = cap;
    }
}

static void fluid_run_folded(fluid *fl)
{
    size_t nf = fl->nf, cap = 16;
    if (nf == 0) return;
    /* per resource: how many flows use it; a flow alone on all of its
     * resources is a component by itself (a ring's flows, mostly) and
     * skips the union-find (up[i] = -1) */
    while (cap < 2 * nf) cap *= 2;
    fold_reserve(nf, cap);
    int *use = fl->cnt, *up = fold.up;
    for (size_t i = 0; i < nf; i++)
        for (int k = 0; k < fl->f[i].nres; k++) use[fl->f[i].res[k]] = 0;
    for (size_t i = 0; i < nf; i++)
        for (int k = 0; k < fl->f[i].nres; k++) use[fl->f[i].res[k]]++;
    size_t nshared = 0;
    for (size_t i = 0; i < nf; i++) {
        int lone = 1;
        for (int k = 0; k < fl->f[i].nres; k++) lone &= use[fl->f[i].res[k]] == 1;
        up[i] = lone ? -1 : (int)i;
        nshared += !lone;
    }
    /* the other flows' components: union-find over the resources they share */
    int *first = use; /* per resource of a shared flow: a flow on it, -1: none yet */
    int *start = NULL, *fi = NULL;
    if (nshared > 0) {
        for (size_t i = 0; i < nf; i++)
            if (up[i] >= 0)
                for (int k = 0; k < fl->f[i].nres; k++) first[fl->f[i].res[k]] = -1;
        for (size_t i = 0; i < nf; i++) {
            if (up[i] < 0) continue;
            for (int k = 0; k < fl->f[i].nres; k++) {
                int x = fl->f[i].res[k];
                if (first[x] < 0) first[x] = (int)i;
                else {
                    int a = uf_root(up, (int)i), b = uf_root(up, first[x]);
                    if (a != b) up[a < b ? b : a] = a < b ? a : b; /* the root: the component's first flow */
                }
            }
        }
        /* their flows in index order: counting sort by root */
        start = fold.start, fi = fold.fi;
        memset(start, 0, (nf + 1) * sizeof *start);
        int *fill = fold.fill;
        for (size_t i = 0; i < nf; i++)
            if (up[i] >= 0) start[uf_root(up, (int)i) + 1]++;
        for (size_t i = 0; i < nf; i++) start[i + 1] += start[i];
        memcpy(fill, start, nf * sizeof *fill);
        for (size_t i = 0; i < nf; i++)
            if (up[i] >= 0) fi[fill[uf_root(up, (int)i)]++] = (int)i;
        int *loc = first; /* reused: -1 on every resource of a shared flow */
        for (size_t i = 0; i < nf; i++)
            if (up[i] >= 0)
                for (int k = 0; k < fl->f[i].nres; k++) loc[fl->f[i].res[k]] = -1;
    }
    /* slot: -1 or a representative (index into rep); each representative's
     * key stays in keys, computed once */
    int *slot = fold.slot, *idx = fold.idx;
    memset(slot, -1, cap * sizeof *slot);
    repr *rep = fold.rep;
    flow *kept = fold.kept;
    double *keys = fold.keys;
    size_t nk = 0, nrep = 0, used = 0;
    /* the last few lone representatives, tried before the table: a ring's
     * members list the same few kinds of lone flow over and over (a key
     * equal to a representative's is found at it either way: keys of
     * representatives are distinct) */
    enum { RECENT = 4 };
    int recent[RECENT], nrecent = 0, rnext = 0;
    /* the components in the order of their first flows */
    for (size_t c = 0; c < nf; c++) {
        int lone = up[c] < 0, nc, one = (int)c;
        const int *cf;
        double *key = keys + used;
        size_t klen;
        if (lone) {
            nc = 1, cf = &one;
            int hit = -1;
            for (int k = 0; k < nrecent && hit < 0; k++)
                if (lone_same(fl, &fl->f[c], &fl->f[rep[recent[k]].c])) hit = recent[k];
            if (hit >= 0) {
                idx[c] = idx[rep[hit].c];
                continue;
            }
            klen = lone_key(fl, &fl->f[c], key);
        } else {
            nc = start[c + 1] - start[c];
            if (nc == 0) continue;
            cf = fi + start[c];
            klen = comp_key(fl, cf, nc, first, key);
        }
        uint64_t h = 1469598103934665603ull, w;
        for (size_t k = 0; k < klen; k++) {
            memcpy(&w, &key[k], sizeof w);
            h = (h ^ w) * 1099511628211ull;
        }
        h ^= h >> 29;
        size_t j = (size_t)h & (cap - 1);
        for (; slot[j] >= 0; j = (j + 1) & (cap - 1)) {
            const repr *e = &rep[slot[j]];
            if (e->nc == nc && e->len == klen && key_eq(keys + e->off, key, klen)) break;
        }
        if (slot[j] >= 0) { /* a twin: its flows take the representative's, in order */
            const repr *e = &rep[slot[j]];
            if (lone) {
                recent[rnext] = slot[j];
                rnext = (rnext + 1) % RECENT;
                if (nrecent < RECENT) nrecent++;
            }
            const int *rf = e->lone ? &e->c : fi + start[e->c];
            for (int q = 0; q < nc; q++) idx[cf[q]] = idx[rf[q]];
            continue;
        }
        if (lone) { /* a new representative */
            recent[rnext] = (int)nrep;
            rnext = (rnext + 1) % RECENT;
            if (nrecent < RECENT) nrecent++;
        }
        rep[nrep] = (repr){used, klen, (int)c, nc, lone};
        slot[j] = (int)nrep++;
        used += klen;
        for (int q = 0; q < nc; q++) {
            idx[cf[q]] = (int)nk;
            kept[nk++] = fl->f[cf[q]];
        }
    }
    if (nk == nf) {
        fluid_run(fl);
        return;
    }
    flow *all = fl->f;
    fl->f = kept, fl->nf = nk;
    fluid_run(fl);
    for (size_t i = 0; i < nf; i++) all[i].end = kept[idx[i]].end, all[i].top = kept[idx[i]].top;
    fl->f = all, fl->nf = nf;
}

/* fluid_run_folded of flows some of which cross fabric links that may fill
 * (fabric_drop kept them). Those links join the flows of many nodes into
 * one component that cannot fold, so first the run without them (folded,
 * each flow's largest rate kept): where on every such link the largest
 * rates of its flows sum to less than it carries, it never filled, and
 * that run is the one with it (a link that never fills never has the least
 * share, as in fabric_drop), bit for bit. Else the run with them. */
/* row 9's costings (76B, 1,024 Perlmutter GPUs) have up to 2,048 flows; row 10's 75,264-GCD tree 10^5 */
static size_t fabric_try_flows = 4096;

void coll_cost_fabric_try(size_t min_flows) { fabric_try_flows = min_flows; }

static void fluid_run_fabric(fluid *fl, const coll_plan *p)
{
    size_t base = RES_COUNT(fl->n, p->topo->nlinks), nf = fl->nf;
    flow *saved = ts_malloc(nf * sizeof *saved);
    memcpy(saved, fl->f, nf * sizeof *saved);
    for (size_t i = 0; i < nf; i++) {
        flow *f = &fl->f[i];
        while (f->nres > 0 && (size_t)f->res[f->nres - 1] >= base) f->nres--; /* fabric links come last */
    }
    fl->track = 1;
    fluid_run_folded(fl);
    fl->track = 0;
    double *load = fl->left; /* free after a run */
    for (size_t i = 0; i < nf; i++)
        for (int k = 0; k < saved[i].nres; k++)
            if ((size_t)saved[i].res[k] >= base) load[saved[i].res[k]] = 0;
    for (size_t i = 0; i < nf; i++)
        for (int k = 0; k < saved[i].nres; k++)
            if ((size_t)saved[i].res[k] >= base) load[saved[i].res[k]] += fl->f[i].top;
    int fills = 0;
    for (size_t i = 0; i < nf && !fills; i++)
        for (int k = 0; k < saved[i].nres; k++) {
            int x = saved[i].res[k];
            if ((size_t)x >= base && !(load[x] < fl->rcap[x] * (1 - 1e-9))) fills = 1;
        }
    if (fills) { /* the run with the fabric's links */
        memcpy(fl->f, saved, nf * sizeof *saved);
        fluid_run_folded(fl);
    } else {
        for (size_t i = 0; i < nf; i++) fl->f[i].nres = saved[i].nres; /* the flows as they were, their ends run */
        for (size_t i = 0; i < nf; i++) memcpy(fl->f[i].res, saved[i].res, sizeof saved[i].res);
    }
    free(saved);
}

/* Within one costing, the wire factor and the last few call tails: the factor
 * (coll_plan_wire_scale_with) is a pure function of the plan and the
 * parameters, computed at the first positive size and applied to every
 * size as coll_plan_wire_bytes does; a group's members mostly have the same
 * alphas and ends, or one of a few (a tree's leaves, inner members and
 * roots alternate), and the tail is a pure function of the plan and those
 * inputs (compared bit for bit). */
#define CM_TAILS 4 /* call tails kept: a tree's members end at a few distinct times */

typedef struct {
    int has_scale, ntail, next;
    double scale;
    double in[CM_TAILS][3], tail[CM_TAILS];
} cmemo;

static int64_t wire_bytes(const coll_plan *p, cmemo *mo, int64_t bytes)
{
    if (bytes <= 0) return bytes;
    if (!mo->has_scale) {
        mo->scale = coll_plan_wire_scale_with(p, coll_params_get());
        mo->has_scale = 1;
    }
    return coll_plan_wire_apply(bytes, mo->scale);
}

/* The pipelined call tail, memoised on its inputs (members with the same
 * alphas and busy time share it); the step fidelity does not come here. */
static double call_tail(const coll_plan *p, cmemo *mo, double alpha, double alpha_in, double busy)
{
    const double in[3] = {alpha, alpha_in, busy};
    for (int i = 0; i < mo->ntail; i++)
        if (memcmp(mo->in[i], in, sizeof in) == 0) return mo->tail[i];
    int i = mo->next;
    mo->next = (mo->next + 1) % CM_TAILS;
    if (mo->ntail < CM_TAILS) mo->ntail++;
    memcpy(mo->in[i], in, sizeof in);
    mo->tail[i] = coll_call_tail(p, alpha, alpha_in, 0, busy);
    return mo->tail[i];
}

/* Each member's end: the last of the flows it sends or receives. */
static void flow_ends(const fluid *fl, const int *src, const int *dst, double *end)
{
    for (size_t i = 0; i < fl->nf; i++) {
        if (fl->f[i].end > end[src[i]]) end[src[i]] = fl->f[i].end;
        if (fl->f[i].end > end[dst[i]]) end[dst[i]] = fl->f[i].end;
    }
}

/* The same cost as three passes over the members (routes, flows, alphas)
 * without the memos below: the reference coll_cost_fast(0) runs, which the
 * tests compare with the one-pass path. */
static double cost_pipelined_ref(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx)
{
    int n = p->n;
    double *end = ts_calloc(n, sizeof *end);
    coll_step *m = coll_step_new(p->merged_width + 1);
    fluid fl;
    fluid_init(&fl, p);
    int *src = NULL, *dst = NULL;
    size_t cap = 0;
    for (int r = 0; r < n; r++) {
        coll_plan_merged_phys(p, r, m);
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            double lat, bw;
            int q, send = merged_peer(p, c, route, ctx, m, r, i, &q, &lat, &bw);
            if (!send) continue;
            size_t c2 = cap;
            ts_grow(&src, sizeof *src, &c2, fl.nf + 1);
            ts_grow(&dst, sizeof *dst, &cap, fl.nf + 1);
            src[fl.nf] = r;
            dst[fl.nf] = q;
            fluid_add(&fl, p, r, q, 0, lat, bw, coll_plan_wire_bytes(p, m->send[i].bytes));
        }
    }
    fabric_drop(&fl, p, 0);
    fluid_run(&fl);
    flow_ends(&fl, src, dst, end);
    double t = 0, *alpha = rank_alpha(p, c, route, ctx);
    for (int r = 0; r < n; r++) {
        double e = end[r] + coll_call_tail(p, alpha[r], alpha[n + r], 0, end[r]);
        if (e > t) t = e;
    }
    t = coll_call_time(p, t);
    free(alpha);
    fluid_free(&fl);
    free(src);
    free(dst);
    coll_step_free(m);
    free(end);
    return t;
}

/* Every member's merged view read once: its flows (the sends, in view
 * order) and its alphas (the largest and least route latency over all its
 * entries, as rank_alpha), each route asked of route() directly. */
static double cost_pipelined(const coll_plan *p, coll_route_fn route, void *ctx)
{
    int n = p->n;
    double *end = ts_calloc(n, sizeof *end), *alpha = ts_calloc(2 * (size_t)n, sizeof *alpha);
    coll_step *m = coll_step_new(p->merged_width + 1);
    cmemo mo = {0};
    fluid fl;
    fluid_init(&fl, p);
    int *src = NULL, *dst = NULL;
    size_t cap = 0, c2 = 0, guess = (size_t)n * (p->merged_width < 4 ? p->merged_width : 4);
    ts_grow(&src, sizeof *src, &c2, guess); /* most members send to few peers */
    ts_grow(&dst, sizeof *dst, &cap, guess);
    ts_grow(&fl.f, sizeof *fl.f, &fl.cap, guess);
    coll_merged_fn direct = coll_plan_merged_direct(p); /* the view without lower()'s checks per member */
    for (int r = 0; r < n; r++) {
        if (direct) {
            m->nsend = m->nrecv = 0;
            direct(p, r, m);
        } else {
            coll_plan_merged_phys_once(p, r, m);
        }
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            double lat, bw;
            int send = i < m->nsend, q = send ? m->send[i].peer : m->recv[i - m->nsend].peer;
            if (send) route(ctx, r, q, &lat, &bw);
            else route(ctx, q, r, &lat, &bw);
            if (lat > alpha[r]) alpha[r] = lat;
            if (i == 0 || lat < alpha[n + r]) alpha[n + r] = lat;
            if (!send) continue;
            if (fl.nf + 1 > cap) {
                c2 = cap;
                ts_grow(&src, sizeof *src, &c2, fl.nf + 1);
                ts_grow(&dst, sizeof *dst, &cap, fl.nf + 1);
            }
            src[fl.nf] = r;
            dst[fl.nf] = q;
            fluid_add(&fl, p, r, q, 0, lat, bw, wire_bytes(p, &mo, m->send[i].bytes));
        }
    }
    /* a fabric link that may fill: large runs first try without them (most
     * such links never fill there, and the run folds); small ones, where
     * the try costs about what it saves, run with them */
    if (fabric_drop(&fl, p, 0) && fl.nf >= fabric_try_flows) fluid_run_fabric(&fl, p);
    else fluid_run_folded(&fl);
    flow_ends(&fl, src, dst, end);
    double t = 0;
    for (int r = 0; r < n; r++) {
        double e = end[r] + call_tail(p, &mo, alpha[r], alpha[n + r], end[r]);
        if (e > t) t = e;
    }
    t = coll_call_time(p, t);
    free(alpha);
    fluid_free(&fl);
    free(src);
    free(dst);
    coll_step_free(m);
    free(end);
    return t;
}

static int fast_on = 1;

void coll_cost_fast(int on) { fast_on = on; }

double coll_cost(const coll_plan *p, coll_cost_kind kind, coll_route_fn route, void *ctx)
{
    if (p->nsteps == 0) return 0;
    if (kind != COLL_COST_STEP && fast_on) return cost_pipelined(p, route, ctx);
    rcache c;
    rcache_build(&c, p, route, ctx);
    double t = kind == COLL_COST_STEP ? cost_steps(p, &c, route, ctx) : cost_pipelined_ref(p, &c, route, ctx);
    rcache_free(&c);
    return t;
}
