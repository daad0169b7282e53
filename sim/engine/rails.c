/* Rail symmetry of a group's routes: when an all-to-all's flows from one GPU
 * to the GPUs of another node may run as one flow to the GPU of the same
 * local index (sim/engine/engine.c, run_coll) without changing the simulated
 * time.
 *
 * Why it is exact: with routes P(a_i) + M(A, B) + Q(b_j), a node's P links
 * (and its Q links) alike and used by nothing else, permuting the local
 * indices of sources (or of destinations) maps the flows of an equal-size
 * all-to-all onto themselves and the links onto links of the same capacity
 * and latency. Max-min sharing is unique, so every flow from node A to node B
 * gets the same rate at all times. Merging the ppn flows a_i -> b_* into one
 * flow a_i -> b_i of ppn times the bytes then divides the number of flows on
 * every inter-node link by ppn and multiplies their rates by ppn: the same
 * loads, the same completion times. Intra-node flows share no link with them
 * (checked) and are left alone. */
#include "rails.h"

#include <simgrid/link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/config.h>
#include <xbt/dynar.h>

#include "fluid.h"
#include "util.h"

typedef struct lset {
    sg_link_t *l;
    size_t n, cap;
} lset;

static int has(const lset *s, sg_link_t l)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->l[i] == l) return 1;
    return 0;
}

static void add(lset *s, sg_link_t l)
{
    if (has(s, l)) return;
    ts_grow(&s->l, sizeof *s->l, &s->cap, s->n + 1);
    s->l[s->n++] = l;
}

static int disjoint(const lset *a, const lset *b)
{
    for (size_t i = 0; i < a->n; i++)
        if (has(b, a->l[i])) return 0;
    return 1;
}

static int same_link(sg_link_t a, sg_link_t b)
{
    return sg_link_get_bandwidth(a) == sg_link_get_bandwidth(b) && sg_link_get_latency(a) == sg_link_get_latency(b);
}

static sg_host_t member(const sg_host_t *hosts, const coll_topo *t, int node, int local)
{
    return hosts[t->order[t->first[node] + local]];
}

#define LINK(r, k) xbt_dynar_get_as((r), (k), sg_link_t)

/* The latency of route r: the sum of its links' latencies, in route order. */
static double links_latency(xbt_dynar_t r)
{
    double lat = 0;
    for (unsigned long k = 0; k < xbt_dynar_length(r); k++) lat += sg_link_get_latency(LINK(r, k));
    return lat;
}

/* The routes between nodes a and b (a != b): P, Q and M into the sets;
 * pat: which members share a P (and Q) link (-1 where not yet known). */
static int pair_ok(const sg_host_t *hosts, const coll_topo *t, int a, int b, lset *P, lset *Q, lset *M,
                   xbt_dynar_t *r, int *pat)
{
    int g = t->ppn;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            xbt_dynar_reset(r[i * g + j]);
            sg_host_get_route(member(hosts, t, a, i), member(hosts, t, b, j), r[i * g + j]);
        }
    unsigned long L = xbt_dynar_length(r[0]);
    double lat = links_latency(r[0]); /* the routes' latencies from the links in hand (SimGrid's
                                       * route latency builds the route again) */
    if (L < 2) return 0;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            xbt_dynar_t x = r[i * g + j];
            if (xbt_dynar_length(x) != L || links_latency(x) != lat) return 0;
            if (LINK(x, 0) != LINK(r[i * g], 0) || LINK(x, L - 1) != LINK(r[j], L - 1)) return 0;
            for (unsigned long k = 1; k + 1 < L; k++)
                if (LINK(x, k) != LINK(r[0], k)) return 0;
        }
    /* share[i]: the first member whose P (and Q) link member i's is: the
     * same pattern on every node pair (pat, from the first pair checked) */
    for (int i = 0; i < g; i++) {
        sg_link_t p = LINK(r[i * g], 0), q = LINK(r[i], L - 1);
        if (!same_link(p, LINK(r[0], 0)) || !same_link(q, LINK(r[0], L - 1))) return 0;
        int sp = i, sq = i;
        for (int k = i - 1; k >= 0; k--) {
            if (LINK(r[k * g], 0) == p) sp = k;
            if (LINK(r[k], L - 1) == q) sq = k;
        }
        if (sp != sq || (pat[i] >= 0 && pat[i] != sp)) return 0;
        pat[i] = sp;
        add(P, p);
        add(Q, q);
    }
    for (unsigned long k = 1; k + 1 < L; k++) add(M, LINK(r[0], k));
    return 1;
}

/* A group's hosts and node layout, as a memo's key. */
typedef struct gkey {
    int valid, n, nnodes, ppn;
    sg_host_t *hosts;
    int *order, *first;
} gkey;

static void key_free(gkey *k)
{
    free(k->hosts), free(k->order), free(k->first);
    memset(k, 0, sizeof *k);
}

static int key_hit(const gkey *k, const sg_host_t *hosts, const coll_topo *t)
{
    if (!k->valid || k->n != t->n || k->nnodes != t->nnodes || k->ppn != t->ppn) return 0;
    return memcmp(k->hosts, hosts, t->n * sizeof *hosts) == 0 &&
           memcmp(k->order, t->order, t->n * sizeof *t->order) == 0 &&
           memcmp(k->first, t->first, (t->nnodes + 1) * sizeof *t->first) == 0;
}

static void key_keep(gkey *k, const sg_host_t *hosts, const coll_topo *t)
{
    key_free(k);
    k->hosts = ts_malloc((t->n + 1) * sizeof *hosts);
    k->order = ts_malloc((t->n + 1) * sizeof *t->order);
    k->first = ts_malloc((t->nnodes + 1) * sizeof *t->first);
    memcpy(k->hosts, hosts, t->n * sizeof *hosts);
    memcpy(k->order, t->order, t->n * sizeof *t->order);
    memcpy(k->first, t->first, (t->nnodes + 1) * sizeof *t->first);
    k->n = t->n, k->nnodes = t->nnodes, k->ppn = t->ppn, k->valid = 1;
}

/* The routes eng_rails_fluid reads: per ordered pair of members of one node
 * (intra, K x ppn x ppn) and per ordered node pair between the members of
 * local index 0 (inter, K x K), their links (off, len into links) and latency. */
typedef struct rroute {
    size_t off;
    int len;
    double lat;
} rroute;

typedef struct routes {
    gkey key;
    rroute *intra, *inter;
    sg_link_t *links;
    size_t nl, cap;
} routes;

static void routes_free(routes *rt)
{
    key_free(&rt->key);
    free(rt->intra), free(rt->inter), free(rt->links);
    memset(rt, 0, sizeof *rt);
}

/* The last group checked and its answer, and the last group's routes
 * (eng_rails_memo). */
static struct {
    int on, ok;
    gkey key;
    routes rt;
} memo;

void eng_rails_memo(int on)
{
    key_free(&memo.key);
    routes_free(&memo.rt);
    memset(&memo, 0, sizeof memo);
    memo.on = on;
}

static int rails_check(const sg_host_t *hosts, const coll_topo *t);

int eng_rails_symmetric(const sg_host_t *hosts, const coll_topo *t)
{
    if (memo.on && key_hit(&memo.key, hosts, t)) return memo.ok;
    int ok = rails_check(hosts, t);
    if (memo.on) key_keep(&memo.key, hosts, t), memo.ok = ok;
    return ok;
}

static int rails_check(const sg_host_t *hosts, const coll_topo *t)
{
    int g = t->ppn, nn = t->nnodes;
    if (g < 2 || nn < 2) return 0;
    /* node pairs sampled: the first two nodes, the middle one and the last
     * (same leaf, other leaves, other pods on the fabrics built here) */
    int s[4] = {0, 1, nn / 2, nn - 1}, ns = 0;
    for (int i = 0; i < 4; i++) {
        int dup = 0;
        for (int k = 0; k < ns; k++) dup |= s[k] == s[i];
        if (!dup) s[ns++] = s[i];
    }
    xbt_dynar_t *r = ts_malloc((size_t)g * g * sizeof *r);
    for (int i = 0; i < g * g; i++) r[i] = xbt_dynar_new(sizeof(sg_link_t), NULL);
    lset P = {0}, Q = {0}, M = {0}, in = {0};
    int ok = 1, *pat = ts_malloc((size_t)g * sizeof *pat);
    for (int i = 0; i < g; i++) pat[i] = -1;
    for (int x = 0; x < ns && ok; x++) {
        /* intra-node routes of the sampled nodes */
        for (int i = 0; i < g && ok; i++)
            for (int j = 0; j < g; j++) {
                if (i == j) continue;
                xbt_dynar_reset(r[0]);
                sg_host_get_route(member(hosts, t, s[x], i), member(hosts, t, s[x], j), r[0]);
                if (xbt_dynar_length(r[0]) == 0) ok = 0; /* two members on one host */
                for (unsigned long k = 0; k < xbt_dynar_length(r[0]); k++) add(&in, LINK(r[0], k));
            }
        for (int y = 0; y < ns && ok; y++)
            if (x != y) ok = pair_ok(hosts, t, s[x], s[y], &P, &Q, &M, r, pat);
    }
    ok = ok && disjoint(&P, &Q) && disjoint(&P, &M) && disjoint(&Q, &M) && disjoint(&in, &P) &&
         disjoint(&in, &Q) && disjoint(&in, &M);
    /* members per NIC link: the same for every NIC (a permutation of a
     * node's members then maps any one onto any other, NICs onto NICs) */
    int share = 0;
    for (int i = 0; ok && i < g; i++) {
        int m = 0;
        for (int k = 0; k < g; k++) m += pat[k] == pat[i];
        if (share && m != share) ok = 0;
        share = m;
    }
    free(pat);
    for (int i = 0; i < g * g; i++) xbt_dynar_free(&r[i]);
    free(r);
    free(P.l);
    free(Q.l);
    free(M.l);
    free(in.l);
    return ok ? (share > 1 ? 2 : 1) : 0;
}

/* The route from a to b into r; its latency (the sum of its links'). */
static double route_of(sg_host_t a, sg_host_t b, xbt_dynar_t r)
{
    xbt_dynar_reset(r);
    sg_host_get_route(a, b, r);
    return links_latency(r);
}

/* The links of route r as an array (NULL when it has none). */
static const sg_link_t *links_of(xbt_dynar_t r)
{
    return xbt_dynar_length(r) ? xbt_dynar_get_ptr(r, 0) : NULL;
}

/* The fluid flow of one comm over the L links l, weighted and capped as
 * SimGrid 3.32's CM02 model makes it (see add_flow); its links are added by
 * the caller. */
static int route_flow(fl_sys *s, const sg_link_t *l, unsigned long L, double bytes, double lat)
{
    static double gamma = -1, wS;
    if (gamma < 0) gamma = sg_cfg_get_double("network/TCP-gamma"), wS = sg_cfg_get_double("network/weight-S");
    double pen = lat, bound = lat > 0 ? gamma / (2 * lat) : -1;
    for (unsigned long k = 0; k < L; k++) {
        double bw = sg_link_get_bandwidth(l[k]);
        if (wS > 0) pen += wS / bw;
        if (bound < 0 || bw < bound) bound = bw;
    }
    return fl_flow(s, bytes, lat, bound, lat > 0 ? pen : 1);
}

/* One flow class of the fluid model over the L links l, as SimGrid 3.32's
 * CM02 model makes a comm of it (NetworkCm02Model::communicate): the route's
 * latency first, then a share weighted by 1 / penalty, penalty = the latency
 * plus weight-S / bandwidth per link (1 for a route without latency), capped
 * at the route's smallest bandwidth and at TCP-gamma / (2 latency). coef
 * flows on each link, except, when mult > 0, mult on the middle links and
 * ends on the first and last (which stand for one member's NIC each: ends
 * merged flows cross it where that many members share a NIC). */
static int add_flow(fl_sys *s, const sg_link_t *l, unsigned long L, double bytes, double lat, int mult, int ends)
{
    int f = route_flow(s, l, L, bytes, lat);
    for (unsigned long k = 0; k < L; k++) {
        int q = fl_resource(s, l[k], sg_link_get_bandwidth(l[k]), sg_link_is_shared(l[k]));
        fl_use(s, q, mult <= 0 ? 1 : k > 0 && k + 1 < L ? mult : ends);
    }
    return f;
}

/* How many members of node 0 send over member 0's NIC link (the first link
 * of its route to node 1): 1 where each member has its own (rails.c's
 * symmetry check makes it the same for every NIC of every node). */
static int nic_share(const sg_host_t *hosts, const coll_topo *t, xbt_dynar_t r)
{
    int m = 0;
    sg_link_t p = NULL;
    for (int i = 0; i < t->ppn; i++) {
        route_of(member(hosts, t, 0, i), member(hosts, t, 1, 0), r);
        if (xbt_dynar_length(r) == 0) continue;
        if (i == 0) p = LINK(r, 0);
        m += LINK(r, 0) == p;
    }
    return m > 0 ? m : 1;
}

/* A flow class over route r whose first and last links are counted on the
 * resources of keys pk and qk (one per node: every NIC link of a node alike,
 * each carrying one flow of the class), its middle links mult times. */
static int add_class(fl_sys *s, xbt_dynar_t r, double bytes, double lat, int mult, const void *pk, const void *qk)
{
    unsigned long L = xbt_dynar_length(r);
    int f = route_flow(s, links_of(r), L, bytes, lat);
    for (unsigned long k = 0; k < L; k++) {
        sg_link_t l = LINK(r, k);
        const void *key = k == 0 ? pk : k + 1 == L ? qk : (const void *)l;
        int q = fl_resource(s, key, sg_link_get_bandwidth(l), sg_link_is_shared(l));
        fl_use(s, q, k > 0 && k + 1 < L ? mult : 1);
    }
    return f;
}

static void upto(double *x, double v)
{
    if (v > *x) *x = v;
}

/* One route into rt: its links appended, their latency. */
static rroute route_keep(routes *rt, sg_host_t a, sg_host_t b, xbt_dynar_t r)
{
    double lat = route_of(a, b, r);
    rroute x = {rt->nl, (int)xbt_dynar_length(r), lat};
    ts_grow(&rt->links, sizeof *rt->links, &rt->cap, rt->nl + x.len);
    for (int k = 0; k < x.len; k++) rt->links[rt->nl++] = LINK(r, k);
    return x;
}

/* The routes of eng_rails_fluid for the group (hosts, t) into rt: the
 * memo's, read once per group where eng_rails_memo is on (a calibration
 * solves one group at every fit step; reading its 65,280 node pairs' routes
 * from SimGrid was most of a 1,024-GPU Polaris all-to-all's solve). */
static const routes *group_routes(const sg_host_t *hosts, const coll_topo *t, routes *own)
{
    routes *rt = memo.on ? &memo.rt : own;
    if (memo.on && key_hit(&rt->key, hosts, t)) return rt;
    routes_free(rt);
    int g = t->ppn, K = t->nnodes;
    xbt_dynar_t r = xbt_dynar_new(sizeof(sg_link_t), NULL);
    rt->intra = ts_malloc(((size_t)K * g * g + 1) * sizeof *rt->intra);
    rt->inter = ts_malloc(((size_t)K * K + 1) * sizeof *rt->inter);
    for (int X = 0; X < K; X++)
        for (int i = 0; i < g; i++)
            for (int j = 0; j < g; j++)
                if (i != j)
                    rt->intra[((size_t)X * g + i) * g + j] = route_keep(rt, member(hosts, t, X, i), member(hosts, t, X, j), r);
    for (int A = 0; A < K; A++)
        for (int B = 0; B < K; B++)
            if (A != B) rt->inter[(size_t)A * K + B] = route_keep(rt, member(hosts, t, A, 0), member(hosts, t, B, 0), r);
    xbt_dynar_free(&r);
    if (memo.on) key_keep(&rt->key, hosts, t);
    return rt;
}

int eng_rails_fluid(const sg_host_t *hosts, const coll_topo *t, double chunk, double *end, double *alpha,
                    long *events)
{
    int g = t->ppn, K = t->nnodes;
    routes own = {0};
    const routes *rt = group_routes(hosts, t, &own);
    /* no bytes: every flow ends when its route's latency has passed (the
     * fluid model's and CM02's 0-byte comm), so each member's end is its
     * largest latency, without a flow */
    int empty = chunk <= 0;
    fl_sys *s = empty ? NULL : fl_new();
    int *intra = ts_malloc(((size_t)K * g * g + 1) * sizeof *intra), *inter = ts_malloc(((size_t)K * K + 1) * sizeof *inter);
    for (size_t k = 0; !empty && k < (size_t)K * g * g; k++) {
        const rroute *x = &rt->intra[k];
        if (k / g % g != k % g) intra[k] = add_flow(s, rt->links + x->off, x->len, chunk, x->lat, 0, 1);
    }
    /* node A to node B: the g flows a_i -> b_i (one per local index, each
     * carrying g chunks) as one class over the route of a_0 -> b_0; where
     * members share NICs, share of the class's flows cross each NIC link */
    xbt_dynar_t r = xbt_dynar_new(sizeof(sg_link_t), NULL);
    int share = K > 1 && !empty ? nic_share(hosts, t, r) : 1;
    xbt_dynar_free(&r);
    for (size_t k = 0; !empty && k < (size_t)K * K; k++) {
        const rroute *x = &rt->inter[k];
        if (k / K != k % K) inter[k] = add_flow(s, rt->links + x->off, x->len, chunk * g, x->lat, g, share);
    }
    if (!empty) fl_run(s);
#define FINISH(cls, lat) (empty ? (lat) : fl_finish(s, (cls)))
    for (int X = 0; X < K; X++) {
        double e = 0, a = 0; /* the node's inter-node part */
        for (int B = 0; B < K; B++) {
            if (B == X) continue;
            size_t out = (size_t)X * K + B, in = (size_t)B * K + X;
            upto(&e, FINISH(inter[out], rt->inter[out].lat));
            upto(&e, FINISH(inter[in], rt->inter[in].lat));
            upto(&a, rt->inter[out].lat);
            upto(&a, rt->inter[in].lat);
        }
        for (int i = 0; i < g; i++) {
            int m = t->order[t->first[X] + i];
            end[m] = e, alpha[m] = a;
            for (int j = 0; j < g; j++) {
                if (i == j) continue;
                size_t out = ((size_t)X * g + i) * g + j, in = ((size_t)X * g + j) * g + i;
                upto(&end[m], FINISH(intra[out], rt->intra[out].lat));
                upto(&end[m], FINISH(intra[in], rt->intra[in].lat));
                upto(&alpha[m], rt->intra[out].lat);
                upto(&alpha[m], rt->intra[in].lat);
            }
        }
    }
#undef FINISH
    if (events) *events = empty ? 0 : fl_events(s);
    free(intra), free(inter);
    routes_free(&own);
    if (s) fl_free(s);
    return 0;
}

/* Flow (src, dst) -> its index + 1 in an open-addressing table (0: empty). */
typedef struct ftab {
    int *slot;
    size_t mask;
    const int *src, *dst;
} ftab;

static size_t pair_hash(int a, int b) { return (size_t)(((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9E3779B97F4A7C15ULL >> 20); }

static int ftab_find(const ftab *h, int a, int b)
{
    for (size_t j = pair_hash(a, b) & h->mask; h->slot[j]; j = (j + 1) & h->mask)
        if (h->src[h->slot[j] - 1] == a && h->dst[h->slot[j] - 1] == b) return h->slot[j] - 1;
    return -1;
}

/* The rotation orbits of the inter-node flows: flow (A, i) -> (B, j) and the
 * flows (A, i + r) -> (B, j + r) (local indices mod ppn) of the same bytes.
 * orbit[f]: the representative of f's orbit (the flow from local index 0).
 * 0 when some orbit is incomplete or a pair has two flows. */
static int rail_orbits(const coll_topo *t, int nf, const int *src, const int *dst, const double *bytes, int *orbit)
{
    int g = t->ppn, ok = 1;
    ftab h = {NULL, 0, src, dst};
    size_t cap = 16;
    while (cap < 2 * (size_t)nf) cap *= 2;
    h.slot = ts_calloc(cap, sizeof *h.slot), h.mask = cap - 1;
    for (int f = 0; f < nf && ok; f++) {
        if (ftab_find(&h, src[f], dst[f]) >= 0) ok = 0;
        size_t j = pair_hash(src[f], dst[f]) & h.mask;
        while (h.slot[j]) j = (j + 1) & h.mask;
        h.slot[j] = f + 1;
        orbit[f] = -1;
    }
    for (int f = 0; f < nf && ok; f++) {
        int A = t->node[src[f]], B = t->node[dst[f]];
        if (A == B || t->local[src[f]] != 0) continue;
        int d = t->local[dst[f]];
        for (int r = 0; r < g && ok; r++) {
            int a = t->order[t->first[A] + r], b = t->order[t->first[B] + (d + r) % g], k = ftab_find(&h, a, b);
            if (k < 0 || bytes[k] != bytes[f] || orbit[k] >= 0) ok = 0;
            else orbit[k] = f;
        }
    }
    for (int f = 0; f < nf && ok; f++)
        if (t->node[src[f]] != t->node[dst[f]] && orbit[f] < 0) ok = 0;
    free(h.slot);
    return ok;
}

int eng_flows_fluid(const sg_host_t *hosts, const coll_topo *t, int symmetric, int nf, const int *src, const int *dst,
                    const double *bytes, double *end, double *alpha, double *alpha_in, long *events)
{
    int n = t->n, *orbit = ts_malloc(((size_t)nf + 1) * sizeof *orbit), *cls = ts_malloc(((size_t)nf + 1) * sizeof *cls);
    int orbits = symmetric && t->ppn >= 2 && t->nnodes >= 2 && rail_orbits(t, nf, src, dst, bytes, orbit);
    double *lat = ts_malloc(((size_t)nf + 1) * sizeof *lat);
    char *pkey = ts_malloc(2 * (size_t)t->nnodes + 1); /* per node: its NIC links' resources (addresses as keys) */
    fl_sys *s = fl_new();
    xbt_dynar_t r = xbt_dynar_new(sizeof(sg_link_t), NULL);
    int rc = 0;
    for (int f = 0; f < nf && rc == 0; f++) {
        if (orbits && orbit[f] >= 0 && orbit[f] != f) continue; /* its orbit's representative stands for it */
        lat[f] = route_of(hosts[src[f]], hosts[dst[f]], r);
        int inter = t->node[src[f]] != t->node[dst[f]];
        if (xbt_dynar_length(r) == 0 || lat[f] <= 0 || (orbits && inter && xbt_dynar_length(r) < 2)) {
            rc = -1; /* loopback or latency-free routes: SimGrid's own run decides */
            break;
        }
        if (orbits && inter)
            cls[f] = add_class(s, r, bytes[f], lat[f], t->ppn, pkey + 2 * t->node[src[f]], pkey + 2 * t->node[dst[f]] + 1);
        else
            cls[f] = add_flow(s, links_of(r), xbt_dynar_length(r), bytes[f], lat[f], 0, 1);
    }
    xbt_dynar_free(&r);
    if (rc == 0) {
        fl_run(s);
        for (int m = 0; m < n; m++) end[m] = 0, alpha[m] = 0, alpha_in[m] = 0;
        for (int f = 0; f < nf; f++) {
            int k = orbits && orbit[f] >= 0 ? orbit[f] : f;
            double e = fl_finish(s, cls[k]), l = lat[k];
            int ends[2] = {src[f], dst[f]};
            for (int x = 0; x < 2; x++) {
                int m = ends[x];
                upto(&end[m], e);
                upto(&alpha[m], l);
                if (alpha_in[m] <= 0 || l < alpha_in[m]) alpha_in[m] = l;
            }
        }
        if (events) *events = fl_events(s);
    }
    fl_free(s);
    free(orbit), free(cls), free(lat), free(pkey);
    return rc < 0 ? rc : orbits;
}
