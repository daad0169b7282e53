/* The igraph view of a cluster: intra-node routes over explicit link graphs
 * (Frontier's Infinity Fabric) and the figures `platform show` reports. */
#include <igraph.h>
#include <string.h>

#include "cluster.h"
#include "util.h"

int topo_node_route(const topo_node *n, int a, int b, int *links, int max)
{
    if (a == b) return 0;
    /* unreachable GPUs are our error to report, not igraph's warning to print */
    igraph_set_warning_handler(igraph_warning_handler_ignore);
    if (n->nlinks == 0) return -1;
    igraph_t g;
    igraph_vector_int_t edges, epath;
    igraph_vector_t w;
    int maxc = 1;
    for (int i = 0; i < n->nlinks; i++)
        if (n->links[i].count > maxc) maxc = n->links[i].count;
    igraph_vector_int_init(&edges, 2 * n->nlinks);
    igraph_vector_init(&w, n->nlinks);
    for (int i = 0; i < n->nlinks; i++) {
        VECTOR(edges)[2 * i] = n->links[i].a;
        VECTOR(edges)[2 * i + 1] = n->links[i].b;
        /* fewest hops first, then the widest links */
        VECTOR(w)[i] = 1.0 + 1e-3 * maxc / n->links[i].count;
    }
    igraph_create(&g, &edges, n->gpus, IGRAPH_UNDIRECTED);
    igraph_vector_int_init(&epath, 0);
    int hops = -1;
    if (igraph_get_shortest_path_dijkstra(&g, NULL, &epath, a, b, &w, IGRAPH_ALL) == IGRAPH_SUCCESS &&
        igraph_vector_int_size(&epath) > 0 && igraph_vector_int_size(&epath) <= max) {
        hops = (int)igraph_vector_int_size(&epath);
        for (int i = 0; i < hops; i++) links[i] = (int)VECTOR(epath)[i];
    }
    igraph_vector_int_destroy(&epath);
    igraph_vector_destroy(&w);
    igraph_vector_int_destroy(&edges);
    igraph_destroy(&g);
    return hops;
}

/* Graph under construction: edge list plus capacities. */
typedef struct {
    igraph_vector_int_t e;
    igraph_vector_t cap;
    long nv;
} builder;

static long vertex(builder *b) { return b->nv++; }

static void edge(builder *b, long x, long y, double cap)
{
    igraph_vector_int_push_back(&b->e, x);
    igraph_vector_int_push_back(&b->e, y);
    igraph_vector_push_back(&b->cap, cap);
}

/* Vertices: GPUs first (vertex id = global GPU index), then per node its NICs
 * and gateway (and NVSwitch), then the fabric's switches. */
static void build(const topo_cluster *c, builder *b, long *gw, topo_summary *s)
{
    const topo_node *n = &c->node;
    const topo_net *t = &c->net;
    int K = c->nodes, G = n->gpus;
    double port = n->nnics * t->bw;
    b->nv = (long)K * G;
    for (int k = 0; k < K; k++) {
        long base = (long)k * G, nic0 = b->nv;
        for (int j = 0; j < n->nnics; j++) vertex(b);
        gw[k] = vertex(b);
        for (int g = 0; g < G; g++) edge(b, base + g, nic0 + topo_nic_of(n, g), n->nics[topo_nic_of(n, g)].bw);
        for (int j = 0; j < n->nnics; j++) edge(b, nic0 + j, gw[k], n->nics[j].bw);
        if (n->fabric == TOPO_NVSWITCH || n->fabric == TOPO_PCIE) {
            long sw = vertex(b);
            s->switches++;
            for (int g = 0; g < G; g++) edge(b, base + g, sw, n->bw);
        } else {
            for (int l = 0; l < n->nlinks; l++)
                edge(b, base + n->links[l].a, base + n->links[l].b, n->bw * n->links[l].count);
        }
    }
    switch (t->kind) {
    case TOPO_SWITCH: {
        long sw = vertex(b);
        s->switches++;
        for (int k = 0; k < K; k++) edge(b, gw[k], sw, port);
        break;
    }
    case TOPO_FATTREE: {
        int per = t->rails ? t->radix / 2 : (t->radix / 2) / n->nnics, leaves = (K + per - 1) / per;
        int per_pod = t->levels == 3 ? t->radix / 2 : leaves, pods = (leaves + per_pod - 1) / per_pod;
        long top = leaves > 1 ? vertex(b) : -1;
        s->switches += leaves + (top >= 0) + (pods > 1 ? pods : 0);
        long *pod = ts_malloc((pods + 1) * sizeof *pod);
        for (int p = 0; p < pods; p++) pod[p] = pods > 1 ? vertex(b) : top;
        for (int l = 0; l < leaves; l++) {
            long leaf = vertex(b);
            int lo = l * per, hi = lo + per < K ? lo + per : K;
            for (int k = lo; k < hi; k++) edge(b, gw[k], leaf, port);
            if (top >= 0) edge(b, leaf, pod[l / per_pod], (hi - lo) * port / t->oversub);
        }
        if (pods > 1)
            for (int p = 0; p < pods; p++) {
                int lo = p * per_pod * per, hi = (p + 1) * per_pod * per < K ? (p + 1) * per_pod * per : K;
                edge(b, pod[p], top, (hi - lo) * port / t->oversub);
            }
        free(pod);
        break;
    }
    case TOPO_DRAGONFLY: {
        int S = t->switches, per_g = S * t->nodes_per_switch;
        long sw0 = b->nv;
        for (int i = 0; i < t->groups * S; i++) vertex(b);
        s->switches += t->groups * S;
        for (int k = 0; k < K; k++) edge(b, gw[k], sw0 + (k / per_g) * S + (k % per_g) / t->nodes_per_switch, port);
        for (int g = 0; g < t->groups; g++)
            for (int x = 0; x < S; x++)
                for (int y = x + 1; y < S; y++)
                    for (int i = 0; i < t->local_links; i++) edge(b, sw0 + g * S + x, sw0 + g * S + y, t->bw);
        for (int g = 0; g < t->groups; g++)
            for (int h = g + 1; h < t->groups; h++)
                for (int i = 0; i < t->global_links; i++)
                    edge(b, sw0 + g * S + topo_dragonfly_owner(t, g, h), sw0 + h * S + topo_dragonfly_owner(t, h, g),
                         t->global_bw);
        break;
    }
    case TOPO_TORUS:
        for (int k = 0; k < K; k++)
            for (int d = 0, stride = 1; d < 3; stride *= t->dims[d], d++) {
                int x = k / stride % t->dims[d];
                if (t->dims[d] == 1 || (t->dims[d] == 2 && x == 1)) continue;
                int nb = k + ((x + 1) % t->dims[d] - x) * stride;
                edge(b, gw[k], gw[nb], t->bw);
            }
        break;
    }
}

int topo_summarize(const topo_cluster *c, topo_summary *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    int K = c->nodes, G = c->node.gpus;
    s->nodes = K;
    s->gpus = (long)K * G;
    s->injection_bw = 1e300;
    for (int g = 0; g < G; g++) {
        int j = topo_nic_of(&c->node, g);
        double bw = c->node.nics[j].bw / topo_gpus_of_nic(&c->node, j);
        if (bw < s->injection_bw) s->injection_bw = bw;
    }
    builder b;
    igraph_vector_int_init(&b.e, 0);
    igraph_vector_init(&b.cap, 0);
    long *gw = ts_malloc(K * sizeof *gw);
    build(c, &b, gw, s);
    s->links = igraph_vector_size(&b.cap);

    /* bisection: max flow from the first half of the nodes to the second */
    long src = vertex(&b), dst = vertex(&b);
    for (int k = 0; k < K; k++) edge(&b, k < K / 2 ? src : dst, gw[k], 1e30);
    igraph_t g;
    int rc = 0;
    if (igraph_create(&g, &b.e, b.nv, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS) {
        rc = ts_err(err, errlen, "%s: building the igraph view failed", c->name);
        goto out;
    }
    igraph_real_t flow = 0;
    if (K >= 2 && igraph_maxflow_value(&g, &flow, src, dst, &b.cap, NULL) != IGRAPH_SUCCESS) {
        rc = ts_err(err, errlen, "%s: max flow failed", c->name);
        igraph_destroy(&g);
        goto out;
    }
    s->bisection_bw = flow;

    /* diameter in hops between GPUs (the super source/sink never shorten
     * paths: distances are taken on the graph without their edges) */
    igraph_es_t es;
    igraph_es_range(&es, s->links, s->links + K);
    igraph_delete_edges(&g, es);
    igraph_es_destroy(&es);
    long from = s->gpus <= 2048 ? s->gpus : 1;
    s->diameter_exact = from == s->gpus;
    igraph_matrix_t d;
    igraph_matrix_init(&d, 0, 0);
    igraph_distances(&g, &d, igraph_vss_range(0, from), igraph_vss_range(0, s->gpus), IGRAPH_ALL);
    double mx = 0;
    for (long i = 0; i < from; i++)
        for (long j = 0; j < s->gpus; j++)
            if (MATRIX(d, i, j) > mx && MATRIX(d, i, j) < 1e300) mx = MATRIX(d, i, j);
    s->diameter = (int)mx;
    igraph_matrix_destroy(&d);
    igraph_destroy(&g);
out:
    free(gw);
    igraph_vector_int_destroy(&b.e);
    igraph_vector_destroy(&b.cap);
    return rc;
}
