/* The links between nodes that flows share, as build.c lays them out (node
 * uplinks, a fat-tree's leaf and pod uplinks, a dragonfly's switch uplinks or
 * switch links and its global links), for the analytical cost
 * (coll_topo_set_fabric): the same fabric the SimGrid platform has, without
 * SimGrid. Torus fabrics are not described (their routes are long; none is
 * shipped). */
#include <stdio.h>
#include <string.h>

#include "cluster.h"

/* What build.c's node_port_bw gives a node's uplink. */
static double port_bw(const topo_cluster *c) { return c->node.nnics * c->net.bw * topo_bw_factor(c, COLL_TIER_SWITCH); }

static int per_leaf(const topo_cluster *c)
{
    const topo_net *t = &c->net;
    return t->rails ? t->radix / 2 : (t->radix / 2) / c->node.nnics;
}

/* What a node's NIC links carry in all, as build.c makes them: with its
 * uplink, where that is narrower, the most it sends (or receives) between
 * nodes. */
static double nic_bw(const topo_cluster *c)
{
    double nic = 0;
    for (int j = 0; j < c->node.nnics; j++) nic += c->node.nics[j].bw * topo_bw_factor(c, COLL_TIER_NIC);
    return nic;
}

/* A class of links is kept when the nodes that can send over it can send
 * more than it carries: else it never limits a flow. */
static int binds(double feed, double cap) { return feed > cap * (1 + 1e-12); }

static int nodes_in(int lo, int per, int total)
{
    int hi = lo + per < total ? lo + per : total;
    return hi > lo ? hi - lo : 0;
}

static int route_links(const void *ctx, int a, int b, int *ids, double *bw);

/* How many global links of its group switch x owns (topo_dragonfly_owner:
 * the link to the group idx + 1 ahead, idx = 0 .. groups - 2, is on switch
 * idx mod switches). */
static int owned(const topo_net_links *L, int x)
{
    return x <= L->groups - 2 ? (L->groups - 2 - x) / L->switches + 1 : 0;
}

/* Whether switch x's links inside its group can fill: all that enters them
 * comes from its nodes or over the global links it owns (and all that
 * leaves them goes to those), whatever the routing. */
static int sw_binds(const topo_net_links *L, int x)
{
    return binds(L->per_sw * L->inj + owned(L, x) * L->glob_bw, L->sw_bw);
}

void topo_net_links_init(topo_net_links *L, const topo_cluster *c)
{
    static unsigned long serial;
    memset(L, 0, sizeof *L);
    const topo_net *t = &c->net;
    L->kind = t->kind;
    L->nodes = c->nodes;
    L->up_bw = port_bw(c);
    double nic = nic_bw(c), inj = nic < L->up_bw ? nic : L->up_bw;
    int K = c->nodes, next = 0;
    L->up = L->leaf = L->pod = L->sw = L->glob = -1;
    if (t->kind == TOPO_TORUS || K < 2) return;
    if (binds(nic, L->up_bw)) L->up = next, next += 2 * K;
    if (t->kind == TOPO_FATTREE && t->levels > 1) {
        L->per_leaf = per_leaf(c);
        L->leaves = (K + L->per_leaf - 1) / L->per_leaf;
        L->oversub = t->oversub;
        if (L->leaves > 1) {
            L->per_pod = t->levels == 3 ? t->radix / 2 : L->leaves;
            L->pods = (L->leaves + L->per_pod - 1) / L->per_pod;
            /* every leaf (pod) uplink carries its nodes' ports / oversubscription */
            if (binds(inj, L->up_bw / t->oversub)) {
                L->leaf = next, next += 2 * L->leaves;
                if (L->pods > 1) L->pod = next, next += 2 * L->pods;
            }
        }
    }
    if (t->kind == TOPO_DRAGONFLY) {
        L->switches = t->switches, L->per_sw = t->nodes_per_switch, L->groups = t->groups;
        L->adaptive = t->adaptive;
        double f = topo_bw_factor(c, COLL_TIER_SWITCH);
        L->sw_bw = (t->adaptive ? (t->switches - 1) * t->bw * f / 2 : t->bw * f) * t->local_links;
        L->glob_bw = t->global_links * t->global_bw * f;
        /* a switch's links carry its nodes' traffic and what enters and
         * leaves the group over the global links it owns (sw_binds) */
        L->inj = inj;
        int any = 0;
        for (int x = 0; x < t->switches && !any; x++) any = sw_binds(L, x);
        if (t->switches > 1 && any) {
            L->sw = next;
            next += t->adaptive ? 2 * t->groups * t->switches : t->groups * t->switches * t->switches;
        }
        if (t->groups > 1 && binds(inj * t->switches * L->per_sw, L->glob_bw)) L->glob = next, next += t->groups * t->groups;
    }
    L->f.nids = next;
    if (next > 0) {
        L->f.route = route_links;
        L->f.ctx = L;
        L->f.serial = ++serial;
    }
}

static int add(int *ids, double *bw, int n, int id, double b)
{
    ids[n] = id, bw[n] = b;
    return n + 1;
}

/* A dragonfly's route from switch x to switch y of group g (x != y). */
static int sw_hop(const topo_net_links *L, int g, int x, int y, int *ids, double *bw, int n)
{
    if (L->sw < 0 || x == y) return n;
    if (!L->adaptive) /* the link x -> y carries what enters x's links */
        return sw_binds(L, x) ? add(ids, bw, n, L->sw + (g * L->switches + x) * L->switches + y, L->sw_bw) : n;
    if (sw_binds(L, x)) n = add(ids, bw, n, L->sw + 2 * (g * L->switches + x), L->sw_bw);
    if (sw_binds(L, y)) n = add(ids, bw, n, L->sw + 2 * (g * L->switches + y) + 1, L->sw_bw);
    return n;
}

static int dragonfly_route(const topo_net_links *L, int a, int b, int *ids, double *bw, int n)
{
    int per_g = L->switches * L->per_sw, ga = a / per_g, gb = b / per_g;
    if (L->sw < 0) { /* no switch link kept: at most the global link (sw_hop adds none) */
        if (ga != gb && L->glob >= 0) n = add(ids, bw, n, L->glob + ga * L->groups + gb, L->glob_bw);
        return n;
    }
    int sa = a % per_g / L->per_sw, sb = b % per_g / L->per_sw;
    if (ga == gb) return sw_hop(L, ga, sa, sb, ids, bw, n);
    topo_net t = {0};
    t.groups = L->groups, t.switches = L->switches;
    int oa = topo_dragonfly_owner(&t, ga, gb), ob = topo_dragonfly_owner(&t, gb, ga);
    n = sw_hop(L, ga, sa, oa, ids, bw, n);
    if (L->glob >= 0) n = add(ids, bw, n, L->glob + ga * L->groups + gb, L->glob_bw);
    return sw_hop(L, gb, ob, sb, ids, bw, n);
}

/* coll_fabric_fn: the kept links of the route from node a to node b. */
static int route_links(const void *ctx, int a, int b, int *ids, double *bw)
{
    const topo_net_links *L = ctx;
    int n = 0;
    if (a == b || a < 0 || b < 0 || a >= L->nodes || b >= L->nodes) return 0;
    if (L->up >= 0) n = add(ids, bw, n, L->up + 2 * a, L->up_bw);
    if (L->kind == TOPO_FATTREE && L->leaf >= 0) {
        int la = a / L->per_leaf, lb = b / L->per_leaf;
        if (la != lb) {
            double ca = nodes_in(la * L->per_leaf, L->per_leaf, L->nodes) * L->up_bw / L->oversub;
            double cb = nodes_in(lb * L->per_leaf, L->per_leaf, L->nodes) * L->up_bw / L->oversub;
            n = add(ids, bw, n, L->leaf + 2 * la, ca);
            int pa = la / L->per_pod, pb = lb / L->per_pod;
            if (pa != pb && L->pod >= 0) {
                double qa = 0, qb = 0;
                for (int l = pa * L->per_pod; l < (pa + 1) * L->per_pod && l < L->leaves; l++)
                    qa += nodes_in(l * L->per_leaf, L->per_leaf, L->nodes);
                for (int l = pb * L->per_pod; l < (pb + 1) * L->per_pod && l < L->leaves; l++)
                    qb += nodes_in(l * L->per_leaf, L->per_leaf, L->nodes);
                n = add(ids, bw, n, L->pod + 2 * pa, qa * L->up_bw / L->oversub);
                n = add(ids, bw, n, L->pod + 2 * pb + 1, qb * L->up_bw / L->oversub);
            }
            n = add(ids, bw, n, L->leaf + 2 * lb + 1, cb);
        }
    }
    if (L->kind == TOPO_DRAGONFLY) n = dragonfly_route(L, a, b, ids, bw, n);
    if (L->up >= 0) n = add(ids, bw, n, L->up + 2 * b + 1, L->up_bw);
    return n;
}

/* The platform's name of link id (as SimGrid names a split-duplex link's
 * directions): for tests and messages. */
int topo_net_link_name(const topo_net_links *L, int id, char *buf, size_t len)
{
    const char *dir[2] = {"UP", "DOWN"};
    if (L->up >= 0 && id >= L->up && id < L->up + 2 * L->nodes)
        return snprintf(buf, len, "n%d-up_%s", (id - L->up) / 2, dir[(id - L->up) % 2]);
    if (L->leaf >= 0 && id >= L->leaf && id < L->leaf + 2 * L->leaves)
        return snprintf(buf, len, "leaf%d-spine_%s", (id - L->leaf) / 2, dir[(id - L->leaf) % 2]);
    if (L->pod >= 0 && id >= L->pod && id < L->pod + 2 * L->pods)
        return snprintf(buf, len, "pod%d-up_%s", (id - L->pod) / 2, dir[(id - L->pod) % 2]);
    int S = L->switches, G = L->groups;
    if (L->sw >= 0 && L->adaptive && id >= L->sw && id < L->sw + 2 * G * S) {
        int k = (id - L->sw) / 2;
        return snprintf(buf, len, "g%d-s%d-up_%s", k / S, k % S, dir[(id - L->sw) % 2]);
    }
    if (L->sw >= 0 && !L->adaptive && id >= L->sw && id < L->sw + G * S * S) {
        int k = id - L->sw, g = k / (S * S), x = k / S % S, y = k % S;
        return snprintf(buf, len, "g%d-s%d-s%d_%s", g, x < y ? x : y, x < y ? y : x, dir[x > y]);
    }
    if (L->glob >= 0 && id >= L->glob && id < L->glob + G * G) {
        int x = (id - L->glob) / G, y = (id - L->glob) % G;
        return snprintf(buf, len, "g%d-g%d_%s", x < y ? x : y, x < y ? y : x, dir[x > y]);
    }
    return snprintf(buf, len, "?");
}

/* ---- the links inside a node, for models without the platform's routes ---- */

/* coll_links_fn over local GPU indices: the links of the route a -> b as
 * build.c makes it (the route of the lower index to the higher, its
 * directions flipped the other way), each direction an id of its own. */
static int gpu_route(void *ctx, int a, int b, int max, const void **ids, double *bw)
{
    const topo_gpu_links *G = ctx;
    if (a < 0 || b < 0 || a >= G->gpus || b >= G->gpus) return -1;
    int n = G->nhops[a][b];
    if (n < 0 || n > max) return -1;
    for (int h = 0; h < n; h++) {
        int id = G->hop[a][b][h];
        ids[h] = (const char *)G + 1 + id; /* any pointer naming the link: inside G, one per id */
        bw[h] = G->bw[id / 2];
    }
    return n;
}

void topo_gpu_links_init(topo_gpu_links *G, const topo_cluster *c)
{
    static unsigned long serial;
    memset(G, 0, sizeof *G);
    const topo_node *n = &c->node;
    if ((n->fabric != TOPO_MESH && n->fabric != TOPO_GRAPH) || n->gpus < 2 || n->gpus > TOPO_MAX_GPUS) return;
    double ibw = n->bw * topo_bw_factor(c, c->coll.intra_tier);
    for (int l = 0; l < n->nlinks; l++) G->bw[l] = ibw * n->links[l].count;
    G->gpus = n->gpus;
    for (int x = 0; x < n->gpus; x++)
        for (int y = x + 1; y < n->gpus; y++) {
            int hops[TOPO_MAX_LINKS], nh = topo_node_route(n, x, y, hops, TOPO_MAX_LINKS);
            G->nhops[x][y] = G->nhops[y][x] = nh <= COLL_ROUTE_HOPS ? nh : -1;
            if (nh < 0 || nh > COLL_ROUTE_HOPS) continue;
            int at = x;
            for (int h = 0; h < nh; h++) {
                const topo_link *l = &n->links[hops[h]];
                int up = l->a == at; /* UP runs from the lower GPU index to the higher, as build.c */
                G->hop[x][y][h] = 2 * hops[h] + !up;
                G->hop[y][x][nh - 1 - h] = 2 * hops[h] + up;
                at = up ? l->b : l->a;
            }
        }
    G->links.fn = gpu_route;
    G->links.ctx = G;
    G->links.serial = ++serial;
}
