/* Cluster -> SimGrid platform, all zones with Full routing: node zones (GPUs,
 * intra-node links, NICs, a gateway) nested in switch/leaf/group zones so that
 * no zone holds more than a few thousand routes. One emitter, two sinks: XML
 * (libxml2, `platform export`) and in-process S4U calls (sg_build.cpp).
 * Conventions (docs/clusters.md): every link is split-duplex; a route's latency
 * is the sum of its links' latencies; aggregated links stand for parallel ones. */
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "util.h"

/* The routes between two GPUs of a node, the same in every node: computed
 * once (igraph shortest paths) rather than once per node. */
typedef struct {
    int n, hops[TOPO_MAX_LINKS];
} node_route;

typedef struct {
    topo_sink *k;
    const topo_cluster *c;
    node_route (*routes)[TOPO_MAX_GPUS]; /* [x][y], x < y; mesh and graph fabrics */
} emitter;

static void zone(emitter *e, const char *id) { e->k->zone_begin(e->k, id); }
static void end(emitter *e) { e->k->zone_end(e->k); }

static void link_el(emitter *e, const char *id, double bw, double lat) { e->k->link(e->k, id, bw, lat); }

/* A zone whose child zones are joined pairwise over one uplink each: a star
 * where the sink has one (topo_sink), whose one route per child replaces the
 * pairs' routes. SimGrid checks each zone route's gateway by walking the
 * zone's subtree from its first child: 2,016 pair routes between the 64
 * leaves of a 16,384-GPU fat-tree made that walk 7% of the build. */
static void star_zone(emitter *e, const char *id)
{
    if (e->k->star_begin) e->k->star_begin(e->k, id);
    else zone(e, id);
}

/* A zone holding only a router: the gateway of a switch-level zone. */
static void core_zone(emitter *e, const char *prefix)
{
    char id[96];
    snprintf(id, sizeof id, "%s-core", prefix);
    zone(e, id);
    snprintf(id, sizeof id, "%s-sw", prefix);
    e->k->router(e->k, id);
    end(e);
}

/* zoneRoute between two child zones through their gateways over links. */
static void zroute(emitter *e, const char *src, const char *dst, const char *gs, const char *gd,
                   const char *const *links, const int *up, int n)
{
    e->k->route(e->k, src, dst, gs, gd, n, links, up);
}

/* s, then v in decimal, then t, then w in decimal when w >= 0, into buf
 * (cut to n - 1 characters): the names of a node's hosts, links and routes
 * without snprintf, which was 14% of a 4,096-GPU build's instructions. */
static void name2(char *buf, size_t n, const char *s, long v, const char *t, long w)
{
    char *p = buf, *end = buf + n - 1;
    long nums[2] = {v, w};
    const char *strs[2] = {s, t};
    for (int i = 0; i < 2; i++) {
        for (const char *c = strs[i]; *c && p < end; c++) *p++ = *c;
        if (i == 1 && w < 0) break;
        char d[24];
        int k = 0;
        unsigned long u = nums[i] < 0 ? 0UL - (unsigned long)nums[i] : (unsigned long)nums[i];
        do d[k++] = (char)('0' + u % 10); while ((u /= 10) > 0);
        if (nums[i] < 0 && p < end) *p++ = '-';
        while (k > 0 && p < end) *p++ = d[--k];
    }
    *p = 0;
}

/* ---------------------------------------------------------------- a node */

/* A node's GPUs, gateway router and links. SimGrid's XML wants every host,
 * router and link of a zone before its routes: emit_node_routes comes after. */
static void emit_node_resources(emitter *e, int k)
{
    const topo_cluster *c = e->c;
    const topo_node *n = &c->node;
    char a[96], vals[5][32];
    const char *keys[] = {"node", "gpu", "nic", "nvls", "hbm_bw"}, *vp[5];
    name2(vals[0], sizeof vals[0], "", k, "", -1);
    name2(vals[3], sizeof vals[3], "", n->nvls, "", -1);
    snprintf(vals[4], sizeof vals[4], "%.17g", c->gpu.hbm_bw);
    for (int g = 0; g < n->gpus; g++) {
        name2(vals[1], sizeof vals[1], "", g, "", -1);
        name2(vals[2], sizeof vals[2], "", topo_nic_of(n, g), "", -1);
        for (int i = 0; i < 5; i++) vp[i] = vals[i];
        name2(a, sizeof a, "gpu-", (long)k * n->gpus + g, "", -1);
        e->k->host(e->k, a, c->gpu.flops, 5, keys, vp);
    }
    name2(a, sizeof a, "n", k, "-gw", -1);
    e->k->router(e->k, a);
    double ibw = n->bw * topo_bw_factor(c, c->coll.intra_tier);
    if (n->fabric == TOPO_NVSWITCH || n->fabric == TOPO_PCIE) {
        for (int g = 0; g < n->gpus; g++) {
            name2(a, sizeof a, "n", k, "-g", g);
            link_el(e, a, ibw, n->lat / 2 + c->intra_lat_add / 2);
        }
    } else {
        for (int l = 0; l < n->nlinks; l++) {
            snprintf(a, sizeof a, "n%d-l%d-%d", k, n->links[l].a, n->links[l].b);
            link_el(e, a, ibw * n->links[l].count, n->lat + c->intra_lat_add);
        }
    }
    for (int j = 0; j < n->nnics; j++) {
        name2(a, sizeof a, "n", k, "-nic", j);
        link_el(e, a, n->nics[j].bw * topo_bw_factor(c, COLL_TIER_NIC), n->nics[j].lat + c->inter_lat_add);
    }
}

/* A node's intra-node routes and GPU-to-gateway routes. */
static void emit_node_routes(emitter *e, int k)
{
    const topo_node *n = &e->c->node;
    char b[96], src[64], dst[64];
    char names[TOPO_MAX_LINKS][64];
    const char *ls[TOPO_MAX_LINKS];
    int up[TOPO_MAX_LINKS];
    for (int x = 0; x < n->gpus; x++)
        for (int y = x + 1; y < n->gpus; y++) {
            int nl = 0;
            name2(src, sizeof src, "gpu-", (long)k * n->gpus + x, "", -1);
            name2(dst, sizeof dst, "gpu-", (long)k * n->gpus + y, "", -1);
            if (n->fabric == TOPO_NVSWITCH || n->fabric == TOPO_PCIE) {
                name2(names[0], sizeof names[0], "n", k, "-g", x);
                name2(names[1], sizeof names[1], "n", k, "-g", y);
                up[0] = 1;
                up[1] = 0;
                nl = 2;
            } else {
                const node_route *r = &e->routes[x][y];
                int at = x;
                for (int h = 0; h < r->n; h++) {
                    const topo_link *l = &n->links[r->hops[h]];
                    snprintf(names[nl], sizeof names[nl], "n%d-l%d-%d", k, l->a, l->b);
                    up[nl++] = l->a == at; /* UP runs from the lower GPU index to the higher */
                    at = l->a == at ? l->b : l->a;
                }
            }
            for (int i = 0; i < nl; i++) ls[i] = names[i];
            e->k->route(e->k, src, dst, NULL, NULL, nl, ls, up);
        }
    name2(b, sizeof b, "n", k, "-gw", -1);
    for (int g = 0; g < n->gpus; g++) {
        name2(src, sizeof src, "gpu-", (long)k * n->gpus + g, "", -1);
        name2(names[0], sizeof names[0], "n", k, "-nic", topo_nic_of(n, g));
        ls[0] = names[0];
        up[0] = 1;
        e->k->route(e->k, src, b, NULL, NULL, 1, ls, up);
    }
}

static void emit_node(emitter *e, int k)
{
    char id[32];
    snprintf(id, sizeof id, "n%d", k);
    zone(e, id);
    emit_node_resources(e, k);
    emit_node_routes(e, k);
    end(e);
}

/* Node uplinks: one aggregated link per node for all its NICs' ports. */
static double node_port_bw(const topo_cluster *c)
{
    return c->node.nnics * c->net.bw * topo_bw_factor(c, COLL_TIER_SWITCH);
}

static void pairwise_uplinks(emitter *e, int lo, int hi, const char *fmt_zone, const char *fmt_gw,
                             const char *fmt_up);

/* A switch-level zone: nodes [lo, hi) under one switch `prefix`-sw. */
static void emit_switch_zone(emitter *e, const char *prefix, int lo, int hi)
{
    char id[96], gw[96], a[96], b[96], ga[96], gb[96];
    star_zone(e, prefix);
    for (int k = lo; k < hi; k++) emit_node(e, k);
    core_zone(e, prefix);
    for (int k = lo; k < hi; k++) {
        snprintf(id, sizeof id, "n%d-up", k);
        link_el(e, id, node_port_bw(e->c), e->c->net.lat);
    }
    snprintf(id, sizeof id, "%s-core", prefix);
    snprintf(gw, sizeof gw, "%s-sw", prefix);
    if (e->k->star_route) {
        pairwise_uplinks(e, lo, hi, "n%d", "n%d-gw", "n%d-up");
        e->k->star_route(e->k, id, gw, NULL);
        end(e);
        return;
    }
    for (int x = lo; x < hi; x++) {
        snprintf(a, sizeof a, "n%d", x);
        snprintf(ga, sizeof ga, "n%d-gw", x);
        char ua[96];
        snprintf(ua, sizeof ua, "n%d-up", x);
        for (int y = x + 1; y < hi; y++) {
            char ub[96];
            snprintf(b, sizeof b, "n%d", y);
            snprintf(gb, sizeof gb, "n%d-gw", y);
            snprintf(ub, sizeof ub, "n%d-up", y);
            const char *ls[] = {ua, ub};
            int up[] = {1, 0};
            zroute(e, a, b, ga, gb, ls, up, 2);
        }
        const char *ls[] = {ua};
        int up[] = {1};
        zroute(e, a, id, ga, gw, ls, up, 1);
    }
    end(e);
}

/* Children zones fmt_zone(i), i in [lo, hi), with gateways fmt_gw(i), joined
 * pairwise through one uplink each (an aggregated non-blocking core above),
 * in a zone opened by star_zone. */
static void pairwise_uplinks(emitter *e, int lo, int hi, const char *fmt_zone, const char *fmt_gw,
                             const char *fmt_up)
{
    char a[96], b[96], ga[96], gb[96], ua[96], ub[96];
    if (e->k->star_route) {
        for (int x = lo; x < hi; x++) {
            snprintf(a, sizeof a, fmt_zone, x);
            snprintf(ga, sizeof ga, fmt_gw, x);
            snprintf(ua, sizeof ua, fmt_up, x);
            e->k->star_route(e->k, a, ga, ua);
        }
        return;
    }
    for (int x = lo; x < hi; x++)
        for (int y = x + 1; y < hi; y++) {
            snprintf(a, sizeof a, fmt_zone, x);
            snprintf(b, sizeof b, fmt_zone, y);
            snprintf(ga, sizeof ga, fmt_gw, x);
            snprintf(gb, sizeof gb, fmt_gw, y);
            snprintf(ua, sizeof ua, fmt_up, x);
            snprintf(ub, sizeof ub, fmt_up, y);
            const char *ls[] = {ua, ub};
            int up[] = {1, 0};
            zroute(e, a, b, ga, gb, ls, up, 2);
        }
}

static int nodes_per_leaf(const topo_cluster *c)
{
    const topo_net *t = &c->net;
    return t->rails ? t->radix / 2 : (t->radix / 2) / c->node.nnics;
}

static int leaf_nodes(const topo_cluster *c, int l)
{
    int per = nodes_per_leaf(c), hi = (l + 1) * per < c->nodes ? (l + 1) * per : c->nodes;
    return hi - l * per;
}

/* Fat-tree: leaf zones of nodes_per_leaf nodes; the spine (and, with 3 levels,
 * the core) is one aggregated non-blocking switch reached over one uplink per
 * leaf (pod) whose bandwidth is the leaf's node ports / oversubscription. */
static void emit_fattree(emitter *e)
{
    const topo_cluster *c = e->c;
    int K = c->nodes, per = nodes_per_leaf(c), leaves = (K + per - 1) / per;
    char id[96];
    if (c->net.levels == 1 || leaves == 1) {
        emit_switch_zone(e, "leaf0", 0, K);
        return;
    }
    int per_pod = c->net.levels == 3 ? c->net.radix / 2 : leaves;
    int pods = (leaves + per_pod - 1) / per_pod;
    for (int p = 0; p < pods; p++) {
        int l0 = p * per_pod, l1 = l0 + per_pod < leaves ? l0 + per_pod : leaves;
        if (pods > 1) {
            snprintf(id, sizeof id, "pod%d", p);
            star_zone(e, id);
        }
        for (int l = l0; l < l1; l++) {
            snprintf(id, sizeof id, "leaf%d", l);
            emit_switch_zone(e, id, l * per, l * per + leaf_nodes(c, l));
        }
        if (pods > 1) {
            snprintf(id, sizeof id, "pod%d", p);
            core_zone(e, id);
        }
        for (int l = l0; l < l1; l++) {
            snprintf(id, sizeof id, "leaf%d-spine", l);
            link_el(e, id, leaf_nodes(c, l) * node_port_bw(c) / c->net.oversub, c->net.lat);
        }
        pairwise_uplinks(e, l0, l1, "leaf%d", "leaf%d-sw", "leaf%d-spine");
        if (pods > 1) {
            char core[96], sw[96], a[96], ga[96], ua[96];
            snprintf(core, sizeof core, "pod%d-core", p);
            snprintf(sw, sizeof sw, "pod%d-sw", p);
            if (e->k->star_route) e->k->star_route(e->k, core, sw, NULL);
            for (int l = l0; l < l1 && !e->k->star_route; l++) {
                snprintf(a, sizeof a, "leaf%d", l);
                snprintf(ga, sizeof ga, "leaf%d-sw", l);
                snprintf(ua, sizeof ua, "leaf%d-spine", l);
                const char *ls[] = {ua};
                int up[] = {1};
                zroute(e, a, core, ga, sw, ls, up, 1);
            }
            end(e);
        }
    }
    if (pods > 1) {
        for (int p = 0; p < pods; p++) {
            long nn = 0;
            for (int l = p * per_pod; l < (p + 1) * per_pod && l < leaves; l++) nn += leaf_nodes(c, l);
            snprintf(id, sizeof id, "pod%d-up", p);
            link_el(e, id, nn * node_port_bw(c) / c->net.oversub, c->net.lat);
        }
        pairwise_uplinks(e, 0, pods, "pod%d", "pod%d-sw", "pod%d-up");
    }
}

/* Which switch of group g owns the (aggregated) global link to group h. */
int topo_dragonfly_owner(const topo_net *t, int g, int h)
{
    int idx = ((h - g - 1) % t->groups + t->groups) % t->groups; /* 0 .. groups-2 */
    return idx % t->switches;
}

static void emit_dragonfly(emitter *e)
{
    const topo_cluster *c = e->c;
    const topo_net *t = &c->net;
    int K = c->nodes, per_sw = t->nodes_per_switch, per_g = t->switches * per_sw;
    char id[96], a[96], b[96], ga[96], gb[96], l[96];
    for (int g = 0; g < t->groups; g++) {
        snprintf(id, sizeof id, "g%d", g);
        if (t->adaptive) star_zone(e, id);
        else zone(e, id);
        for (int s = 0; s < t->switches; s++) {
            int lo = g * per_g + s * per_sw, hi = lo + per_sw;
            if (lo > K) lo = K;
            if (hi > K) hi = K;
            snprintf(id, sizeof id, "g%ds%d", g, s);
            emit_switch_zone(e, id, lo, hi);
        }
        if (t->adaptive) {
            /* Adaptive routing spreads a switch's traffic to another switch
             * of its group over the direct link and two-hop detours through
             * the others: the group's local links act as one fabric that
             * each switch reaches over its switches - 1 links (local_links
             * parallel ones to each), half of whose capacity the detours'
             * second hops take (Valiant). */
            char fz[32], fg[32], fu[32];
            for (int x = 0; x < t->switches; x++) {
                snprintf(l, sizeof l, "g%d-s%d-up", g, x);
                link_el(e, l, (t->switches - 1) * t->local_links * t->bw * topo_bw_factor(c, COLL_TIER_SWITCH) / 2,
                        t->lat / 2); /* one hop in all */
            }
            snprintf(fz, sizeof fz, "g%ds%%d", g);
            snprintf(fg, sizeof fg, "g%ds%%d-sw", g);
            snprintf(fu, sizeof fu, "g%d-s%%d-up", g);
            pairwise_uplinks(e, 0, t->switches, fz, fg, fu);
            end(e);
            continue;
        }
        for (int x = 0; x < t->switches; x++)
            for (int y = x + 1; y < t->switches; y++) {
                snprintf(l, sizeof l, "g%d-s%d-s%d", g, x, y);
                link_el(e, l, t->local_links * t->bw * topo_bw_factor(c, COLL_TIER_SWITCH), t->lat);
            }
        for (int x = 0; x < t->switches; x++)
            for (int y = x + 1; y < t->switches; y++) {
                snprintf(a, sizeof a, "g%ds%d", g, x);
                snprintf(b, sizeof b, "g%ds%d", g, y);
                snprintf(ga, sizeof ga, "g%ds%d-sw", g, x);
                snprintf(gb, sizeof gb, "g%ds%d-sw", g, y);
                snprintf(l, sizeof l, "g%d-s%d-s%d", g, x, y);
                const char *ls[] = {l};
                int up[] = {1};
                zroute(e, a, b, ga, gb, ls, up, 1);
            }
        end(e);
    }
    for (int x = 0; x < t->groups; x++)
        for (int y = x + 1; y < t->groups; y++) {
            snprintf(l, sizeof l, "g%d-g%d", x, y);
            link_el(e, l, t->global_links * t->global_bw * topo_bw_factor(c, COLL_TIER_SWITCH), t->global_lat);
        }
    for (int x = 0; x < t->groups; x++)
        for (int y = x + 1; y < t->groups; y++) {
            snprintf(a, sizeof a, "g%d", x);
            snprintf(b, sizeof b, "g%d", y);
            snprintf(ga, sizeof ga, "g%ds%d-sw", x, topo_dragonfly_owner(t, x, y));
            snprintf(gb, sizeof gb, "g%ds%d-sw", y, topo_dragonfly_owner(t, y, x));
            snprintf(l, sizeof l, "g%d-g%d", x, y);
            const char *ls[] = {l};
            int up[] = {1};
            zroute(e, a, b, ga, gb, ls, up, 1);
        }
}

static void torus_coord(const topo_net *t, int k, int *xyz)
{
    xyz[0] = k % t->dims[0];
    xyz[1] = k / t->dims[0] % t->dims[1];
    xyz[2] = k / (t->dims[0] * t->dims[1]);
}

static int torus_index(const topo_net *t, const int *xyz)
{
    return xyz[0] + t->dims[0] * (xyz[1] + t->dims[1] * xyz[2]);
}

/* Torus: node k's link "t<k>-d<d>" goes to its + neighbour in dimension d;
 * routes are dimension-ordered and take the shorter way round. */
static void emit_torus(emitter *e)
{
    const topo_cluster *c = e->c;
    const topo_net *t = &c->net;
    int K = c->nodes;
    char l[96], a[96], b[96], ga[96], gb[96];
    for (int k = 0; k < K; k++) emit_node(e, k);
    for (int k = 0; k < K; k++)
        for (int d = 0; d < 3; d++) {
            int xyz[3];
            torus_coord(t, k, xyz);
            if (t->dims[d] == 1 || (t->dims[d] == 2 && xyz[d] == 1)) continue;
            snprintf(l, sizeof l, "t%d-d%d", k, d);
            link_el(e, l, t->bw * topo_bw_factor(c, COLL_TIER_SWITCH), t->lat);
        }
    char(*names)[96] = ts_malloc(3 * 1024 * sizeof *names);
    const char **ls = ts_malloc(3 * 1024 * sizeof *ls);
    int *up = ts_malloc(3 * 1024 * sizeof *up);
    for (int x = 0; x < K; x++)
        for (int y = x + 1; y < K; y++) {
            int cur[3], dst[3], n = 0;
            torus_coord(t, x, cur);
            torus_coord(t, y, dst);
            for (int d = 0; d < 3; d++) {
                int D = t->dims[d], fwd = ((dst[d] - cur[d]) % D + D) % D;
                int dir = fwd <= D - fwd ? 1 : -1, steps = dir > 0 ? fwd : D - fwd;
                for (int s = 0; s < steps; s++) {
                    int from[3] = {cur[0], cur[1], cur[2]};
                    if (dir < 0) from[d] = (cur[d] - 1 + D) % D; /* the link belongs to the lower end */
                    int goes_up = dir > 0;
                    if (D == 2) { /* one link between the two; UP runs from coordinate 0 */
                        goes_up = cur[d] == 0;
                        from[d] = 0;
                    }
                    snprintf(names[n], sizeof names[n], "t%d-d%d", torus_index(t, from), d);
                    ls[n] = names[n];
                    up[n++] = goes_up;
                    cur[d] = (cur[d] + dir + D) % D;
                }
            }
            snprintf(a, sizeof a, "n%d", x);
            snprintf(b, sizeof b, "n%d", y);
            snprintf(ga, sizeof ga, "n%d-gw", x);
            snprintf(gb, sizeof gb, "n%d-gw", y);
            zroute(e, a, b, ga, gb, ls, up, n);
        }
    free(names);
    free(ls);
    free(up);
}

static void emit_switch(emitter *e)
{
    const topo_cluster *c = e->c;
    char id[96];
    for (int k = 0; k < c->nodes; k++) emit_node(e, k);
    for (int k = 0; k < c->nodes; k++) {
        snprintf(id, sizeof id, "n%d-up", k);
        link_el(e, id, node_port_bw(c), c->net.lat);
    }
    pairwise_uplinks(e, 0, c->nodes, "n%d", "n%d-gw", "n%d-up");
}

/* Whether the cluster's zone holds only children joined pairwise through
 * their uplinks: the nodes of a single switch, the leaves (or pods) of a
 * fat-tree of two levels or more. */
static int top_is_star(const topo_cluster *c)
{
    if (c->net.kind == TOPO_SWITCH) return 1;
    if (c->net.kind != TOPO_FATTREE || c->net.levels == 1) return 0;
    int per = nodes_per_leaf(c);
    return (c->nodes + per - 1) / per > 1;
}

void topo_emit(const topo_cluster *c, topo_sink *k)
{
    emitter e = {k, c, ts_calloc(TOPO_MAX_GPUS, sizeof *e.routes)};
    const topo_node *n = &c->node;
    if (n->fabric != TOPO_NVSWITCH && n->fabric != TOPO_PCIE)
        for (int x = 0; x < n->gpus; x++)
            for (int y = x + 1; y < n->gpus; y++)
                e.routes[x][y].n = topo_node_route(n, x, y, e.routes[x][y].hops, TOPO_MAX_LINKS);
    if (top_is_star(c)) star_zone(&e, c->name);
    else zone(&e, c->name);
    switch (c->net.kind) {
    case TOPO_SWITCH: emit_switch(&e); break;
    case TOPO_FATTREE: emit_fattree(&e); break;
    case TOPO_DRAGONFLY: emit_dragonfly(&e); break;
    case TOPO_TORUS: emit_torus(&e); break;
    }
    end(&e);
    free(e.routes);
}

/* ---------------------------------------------------------- the XML sink */

typedef struct {
    topo_sink k;
    xmlTextWriterPtr w;
} xml_sink;

#define W(k) (((xml_sink *)(k))->w)
#define CHECK(k, call) ((k)->bad |= (call) < 0)

static void xattr(topo_sink *k, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void xattr(topo_sink *k, const char *name, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    CHECK(k, xmlTextWriterWriteAttribute(W(k), BAD_CAST name, BAD_CAST buf));
}

static void xstart(topo_sink *k, const char *el) { CHECK(k, xmlTextWriterStartElement(W(k), BAD_CAST el)); }
static void xend(topo_sink *k) { CHECK(k, xmlTextWriterEndElement(W(k))); }

static void x_zone_begin(topo_sink *k, const char *id)
{
    xstart(k, "zone");
    xattr(k, "id", "%s", id);
    xattr(k, "routing", "Full");
}

static void x_host(topo_sink *k, const char *id, double speed, int n, const char *const *keys,
                   const char *const *vals)
{
    xstart(k, "host");
    xattr(k, "id", "%s", id);
    xattr(k, "speed", "%.17gf", speed);
    for (int i = 0; i < n; i++) {
        xstart(k, "prop");
        xattr(k, "id", "%s", keys[i]);
        xattr(k, "value", "%s", vals[i]);
        xend(k);
    }
    xend(k);
}

static void x_router(topo_sink *k, const char *id)
{
    xstart(k, "router");
    xattr(k, "id", "%s", id);
    xend(k);
}

static void x_link(topo_sink *k, const char *id, double bw, double lat)
{
    xstart(k, "link");
    xattr(k, "id", "%s", id);
    xattr(k, "bandwidth", "%.17gBps", bw);
    xattr(k, "latency", "%.17gs", lat);
    xattr(k, "sharing_policy", "SPLITDUPLEX");
    xend(k);
}

static void x_route(topo_sink *k, const char *src, const char *dst, const char *gs, const char *gd, int n,
                    const char *const *links, const int *up)
{
    xstart(k, gs ? "zoneRoute" : "route");
    xattr(k, "src", "%s", src);
    xattr(k, "dst", "%s", dst);
    if (gs) {
        xattr(k, "gw_src", "%s", gs);
        xattr(k, "gw_dst", "%s", gd);
    }
    for (int i = 0; i < n; i++) {
        xstart(k, "link_ctn");
        xattr(k, "id", "%s", links[i]);
        xattr(k, "direction", up[i] ? "UP" : "DOWN");
        xend(k);
    }
    xend(k);
}

int topo_write_platform(const topo_cluster *c, const char *path, char *err, size_t errlen)
{
    xml_sink s = {{x_zone_begin, xend, x_host, x_router, x_link, x_route, NULL, NULL, 0, NULL}, xmlNewTextWriterFilename(path, 0)};
    topo_sink *k = &s.k;
    if (!s.w) return ts_err(err, errlen, "%s: cannot write platform", path);
    xmlTextWriterSetIndent(s.w, 1);
    xmlTextWriterSetIndentString(s.w, BAD_CAST " ");
    CHECK(k, xmlTextWriterStartDocument(s.w, NULL, "UTF-8", NULL));
    CHECK(k, xmlTextWriterWriteDTD(s.w, BAD_CAST "platform", NULL, BAD_CAST "https://simgrid.org/simgrid.dtd", NULL));
    char comment[1200];
    snprintf(comment, sizeof comment, " trainsim cluster %s: %d nodes x %d %s GPUs. %s ", c->name, c->nodes,
             c->node.gpus, c->gpu.name, c->comment);
    for (char *p = comment; (p = strstr(p, "--")); p++) p[1] = ' '; /* no "--" inside XML comments */
    CHECK(k, xmlTextWriterWriteComment(s.w, BAD_CAST comment));
    xstart(k, "platform");
    xattr(k, "version", "4.1");
    topo_emit(c, k);
    xend(k);
    CHECK(k, xmlTextWriterEndDocument(s.w));
    xmlFreeTextWriter(s.w);
    return k->bad ? ts_err(err, errlen, "%s: writing the platform failed (disk full?)", path) : 0;
}
