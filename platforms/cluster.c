/* Reading cluster descriptions (JSON) and GPU specs into topo_cluster, with
 * errors that name the file and the field. */
#include "cluster.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compute/compute.h"
#include "util.h"


typedef struct {
    const char *file;
    char *err;
    size_t errlen;
} ctx;

static int bad(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ts_verr_at(c->err, c->errlen, c->file, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* Every object is checked against the keys it may hold: typos are errors. */
static int keys_ok(ctx *c, const char *where, json_t *o, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++) ok |= strcmp(k, allowed[i]) == 0;
        if (!ok) return bad(c, "%s: unknown field '%s'", where, k);
    }
    return 0;
}

/* The index of o's "type" among kinds[n] (-1 with an error listing them);
 * then only the fields keys[index] names are allowed, so that a field of
 * another type is an error instead of being ignored. */
static const char *get_str(ctx *c, const char *where, json_t *o, const char *key);
static int get_kind(ctx *c, const char *where, json_t *o, const char *const *kinds, int n,
                    const char *const (*keys)[12])
{
    const char *type = get_str(c, where, o, "type");
    if (!type) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(type, kinds[i]) == 0) {
            char w[64];
            snprintf(w, sizeof w, "%s (%s)", where, type);
            return keys_ok(c, w, o, keys[i]) < 0 ? -1 : i;
        }
    char valid[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "", kinds[i]);
    return bad(c, "%s: unknown type '%s' (valid: %s)", where, type, valid);
}

static int get_num(ctx *c, const char *where, json_t *o, const char *key, int required, double lo,
                   double hi, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!v) return required ? bad(c, "%s: missing field '%s'", where, key) : 0;
    if (!json_is_number(v)) return bad(c, "%s: '%s' must be a number", where, key);
    double d = json_number_value(v);
    if (!isfinite(d) || d < lo || d > hi)
        return bad(c, "%s: '%s' is %g, outside [%g, %g]", where, key, d, lo, hi);
    *out = d;
    return 0;
}

static int get_int(ctx *c, const char *where, json_t *o, const char *key, int required, int lo, int hi,
                   int *out)
{
    json_t *v = json_object_get(o, key);
    if (!v) return required ? bad(c, "%s: missing field '%s'", where, key) : 0;
    if (!json_is_integer(v)) return bad(c, "%s: '%s' must be an integer", where, key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return bad(c, "%s: '%s' is %lld, outside [%d, %d]", where, key, (long long)x, lo, hi);
    *out = (int)x;
    return 0;
}

static int get_bool(ctx *c, const char *where, json_t *o, const char *key, int *out)
{
    json_t *v = json_object_get(o, key);
    if (!v) return 0;
    if (!json_is_boolean(v)) return bad(c, "%s: '%s' must be true or false", where, key);
    *out = json_is_true(v);
    return 0;
}

static const char *get_str(ctx *c, const char *where, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        bad(c, "%s: missing field '%s'", where, key);
        return NULL;
    }
    if (!json_is_string(v)) {
        bad(c, "%s: '%s' must be a string", where, key);
        return NULL;
    }
    return json_string_value(v);
}

/* path: a file, or JSON text itself (ts_is_json_text; c->file names it). */
static json_t *load_json(ctx *c, const char *path)
{
    json_error_t e;
    int text = ts_is_json_text(path);
    json_t *root = text ? json_loads(path, JSON_REJECT_DUPLICATES, &e) : json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!root) {
        if (!text && access(path, R_OK) != 0) ts_err(c->err, c->errlen, "%s: cannot open: %m", path);
        else ts_err(c->err, c->errlen, "%s:%d:%d: %s", c->file, e.line, e.column, e.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        bad(c, "top level must be an object");
        json_decref(root);
        return NULL;
    }
    return root;
}

#define BW_MAX 1e14   /* 100 TB/s per link: anything above is a unit error */
#define LAT_MAX 1e-2  /* 10 ms per hop */

/* The GPU spec comes from the compute model's reader (configs/gpus/NAME.json);
 * the platform needs its dense bf16 peak (host speed) and HBM figures. */
static int load_gpu(const char *name, topo_gpu *gpu, char *err, size_t errlen)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/gpus", ts_config_dir());
    cm_gpu g;
    if (cm_gpu_find(name, dir, &g, err, errlen) < 0) return -1;
    if (g.peak[CM_BF16] <= 0) return ts_err(err, errlen, "%s: no bf16 peak in its spec", g.name);
    snprintf(gpu->name, sizeof gpu->name, "%s", g.name);
    gpu->flops = g.peak[CM_BF16];
    gpu->hbm_bw = g.hbm_bw;
    gpu->hbm_bytes = g.hbm_bytes;
    return 0;
}

static int parse_fabric(ctx *c, json_t *f, topo_node *n)
{
    static const char *const kinds[] = {"nvswitch", "mesh", "graph", "pcie"};
    static const char *const keys[][12] = {
        [TOPO_NVSWITCH] = {"type", "bw", "lat", "nvls", NULL},
        [TOPO_MESH] = {"type", "link_bw", "lat", "links_per_pair", NULL},
        [TOPO_GRAPH] = {"type", "link_bw", "lat", "links", NULL},
        [TOPO_PCIE] = {"type", "bw", "lat", "nvls", NULL},
    };
    if (!json_is_object(f)) return bad(c, "node.fabric must be an object");
    int k = get_kind(c, "node.fabric", f, kinds, 4, keys);
    if (k < 0) return -1;
    n->fabric = k;
    n->lat = 0;
    if (get_num(c, "node.fabric", f, "lat", 1, 0, LAT_MAX, &n->lat) < 0) return -1;
    if (k == TOPO_NVSWITCH || k == TOPO_PCIE) {
        if (get_num(c, "node.fabric", f, "bw", 1, 1e6, BW_MAX, &n->bw) < 0) return -1;
        if (get_bool(c, "node.fabric", f, "nvls", &n->nvls) < 0) return -1;
        if (n->nvls && k != TOPO_NVSWITCH) return bad(c, "node.fabric: nvls needs an nvswitch fabric");
        return 0;
    }
    if (get_num(c, "node.fabric", f, "link_bw", 1, 1e6, BW_MAX, &n->bw) < 0) return -1;
    if (k == TOPO_MESH) {
        int per = 1;
        if (get_int(c, "node.fabric", f, "links_per_pair", 1, 1, 64, &per) < 0) return -1;
        n->nlinks = 0;
        for (int a = 0; a < n->gpus; a++)
            for (int b = a + 1; b < n->gpus; b++) {
                if (n->nlinks == TOPO_MAX_LINKS) return bad(c, "node.fabric: more than %d GPU pairs", TOPO_MAX_LINKS);
                n->links[n->nlinks++] = (topo_link){a, b, per};
            }
        return 0;
    }
    json_t *links = json_object_get(f, "links");
    if (!json_is_array(links) || json_array_size(links) == 0)
        return bad(c, "node.fabric: a graph fabric needs 'links': [[gpu_a, gpu_b, count], ...]");
    if (json_array_size(links) > TOPO_MAX_LINKS) return bad(c, "node.fabric: more than %d links", TOPO_MAX_LINKS);
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l) {
        if (!json_is_array(l) || json_array_size(l) != 3 || !json_is_integer(json_array_get(l, 0)) ||
            !json_is_integer(json_array_get(l, 1)) || !json_is_integer(json_array_get(l, 2)))
            return bad(c, "node.fabric.links[%zu]: want [gpu_a, gpu_b, count] integers", i);
        int a = json_integer_value(json_array_get(l, 0)), b = json_integer_value(json_array_get(l, 1));
        int cnt = json_integer_value(json_array_get(l, 2));
        if (a < 0 || a >= n->gpus || b < 0 || b >= n->gpus || a == b)
            return bad(c, "node.fabric.links[%zu]: GPUs %d and %d: need two different GPUs of 0..%d", i, a, b,
                       n->gpus - 1);
        if (cnt < 1 || cnt > 64) return bad(c, "node.fabric.links[%zu]: count %d outside [1, 64]", i, cnt);
        for (int j = 0; j < n->nlinks; j++)
            if ((n->links[j].a == a && n->links[j].b == b) || (n->links[j].a == b && n->links[j].b == a))
                return bad(c, "node.fabric.links[%zu]: GPUs %d and %d are already linked", i, a, b);
        n->links[n->nlinks++] = (topo_link){a < b ? a : b, a < b ? b : a, cnt};
    }
    for (int g = 1; g < n->gpus; g++) {
        int hops[TOPO_MAX_LINKS];
        if (topo_node_route(n, 0, g, hops, TOPO_MAX_LINKS) < 0)
            return bad(c, "node.fabric: GPU %d cannot reach GPU 0 over the links given", g);
    }
    return 0;
}

static int parse_nics(ctx *c, json_t *o, topo_node *n)
{
    static const char *const keys[] = {"count", "bw", "lat", "gpus", NULL};
    if (!json_is_object(o)) return bad(c, "node.nics must be an object");
    if (keys_ok(c, "node.nics", o, keys) < 0) return -1;
    double bw, lat;
    if (get_int(c, "node.nics", o, "count", 1, 1, TOPO_MAX_NICS, &n->nnics) < 0 ||
        get_num(c, "node.nics", o, "bw", 1, 1e6, BW_MAX, &bw) < 0 ||
        get_num(c, "node.nics", o, "lat", 1, 0, LAT_MAX, &lat) < 0)
        return -1;
    json_t *map = json_object_get(o, "gpus");
    if (map && (!json_is_array(map) || json_array_size(map) != (size_t)n->nnics))
        return bad(c, "node.nics: 'gpus' must list the GPUs of each of the %d NICs", n->nnics);
    unsigned seen = 0;
    for (int k = 0; k < n->nnics; k++) {
        n->nics[k] = (topo_nic){bw, lat, 0};
        if (!map) {
            /* default: GPUs split evenly, NIC k serves the k-th block */
            for (int g = 0; g < n->gpus; g++)
                if (g * n->nnics / n->gpus == k) n->nics[k].gpus |= 1u << g;
        } else {
            json_t *gl = json_array_get(map, k), *x;
            size_t i;
            if (!json_is_array(gl)) return bad(c, "node.nics.gpus[%d] must be an array of GPU indices", k);
            json_array_foreach(gl, i, x) {
                int g = json_is_integer(x) ? (int)json_integer_value(x) : -1;
                if (g < 0 || g >= n->gpus) return bad(c, "node.nics.gpus[%d][%zu]: not a GPU of 0..%d", k, i, n->gpus - 1);
                n->nics[k].gpus |= 1u << g;
            }
        }
        if (seen & n->nics[k].gpus) return bad(c, "node.nics: a GPU is served by two NICs (NIC %d)", k);
        seen |= n->nics[k].gpus;
    }
    for (int g = 0; g < n->gpus; g++)
        if (!(seen >> g & 1)) return bad(c, "node.nics: GPU %d has no NIC", g);
    return 0;
}

static int parse_net(ctx *c, json_t *o, topo_cluster *cl)
{
    static const char *const kinds[] = {"switch", "fat-tree", "dragonfly", "torus"};
    static const char *const keys[][12] = {
        [TOPO_SWITCH] = {"type", "bw", "lat", "sharp", NULL},
        [TOPO_FATTREE] = {"type", "bw", "lat", "levels", "radix", "oversubscription", "rails", "sharp", NULL},
        [TOPO_DRAGONFLY] = {"type", "bw", "lat", "switches_per_group", "nodes_per_switch", "global_links",
                            "local_links", "global_bw", "global_lat", "routing", NULL},
        [TOPO_TORUS] = {"type", "bw", "lat", "dims", NULL},
    };
    topo_net *t = &cl->net;
    if (!json_is_object(o)) return bad(c, "network must be an object");
    int k = get_kind(c, "network", o, kinds, 4, keys);
    if (k < 0) return -1;
    t->kind = k;
    if (get_num(c, "network", o, "bw", 1, 1e6, BW_MAX, &t->bw) < 0 ||
        get_num(c, "network", o, "lat", 1, 0, LAT_MAX, &t->lat) < 0)
        return -1;
    /* SHARP-capable switches (InfiniBand Quantum and later): CollNet */
    if (get_bool(c, "network", o, "sharp", &t->sharp) < 0) return -1;
    switch (t->kind) {
    case TOPO_SWITCH: break;
    case TOPO_FATTREE:
        t->levels = 2;
        t->oversub = 1;
        t->rails = 0;
        if (get_int(c, "network", o, "levels", 0, 1, 3, &t->levels) < 0 ||
            get_int(c, "network", o, "radix", 1, 4, 4096, &t->radix) < 0 ||
            get_num(c, "network", o, "oversubscription", 0, 1, 64, &t->oversub) < 0 ||
            get_bool(c, "network", o, "rails", &t->rails) < 0)
            return -1;
        if (t->radix % 2) return bad(c, "network: radix %d must be even (half down, half up)", t->radix);
        break;
    case TOPO_DRAGONFLY:
        t->global_links = 1;
        t->local_links = 1;
        t->global_bw = t->bw;
        t->global_lat = t->lat;
        if (get_int(c, "network", o, "switches_per_group", 1, 1, 1024, &t->switches) < 0 ||
            get_int(c, "network", o, "nodes_per_switch", 1, 1, 256, &t->nodes_per_switch) < 0 ||
            get_int(c, "network", o, "global_links", 0, 1, 1024, &t->global_links) < 0 ||
            get_int(c, "network", o, "local_links", 0, 1, 64, &t->local_links) < 0 ||
            get_num(c, "network", o, "global_bw", 0, 1e6, BW_MAX, &t->global_bw) < 0 ||
            get_num(c, "network", o, "global_lat", 0, 0, LAT_MAX, &t->global_lat) < 0)
            return -1;
        t->adaptive = 1;
        if (json_object_get(o, "routing")) {
            const char *r = get_str(c, "network", o, "routing");
            if (!r) return -1;
            if (strcmp(r, "adaptive") && strcmp(r, "minimal"))
                return bad(c, "network: unknown routing '%s' (valid: adaptive, minimal)", r);
            t->adaptive = strcmp(r, "adaptive") == 0;
        }
        break;
    case TOPO_TORUS: {
        json_t *d = json_object_get(o, "dims");
        if (!json_is_array(d) || json_array_size(d) < 1 || json_array_size(d) > 3)
            return bad(c, "network: a torus needs 'dims': [x] to [x, y, z]");
        for (int i = 0; i < 3; i++) {
            json_t *x = json_array_get(d, i);
            t->dims[i] = x ? (json_is_integer(x) ? (int)json_integer_value(x) : -1) : 1;
            if (t->dims[i] < 1 || t->dims[i] > 1024) return bad(c, "network.dims[%d] must be an integer in [1, 1024]", i);
        }
        break;
    }
    }
    return 0;
}

#define MAX_GPUS (1L << 20)      /* a platform past this would not fit in memory */
#define MAX_FABRIC_LINKS 5000000L

/* Node count checks that depend on the fabric. */
static int check_size(ctx *c, topo_cluster *cl)
{
    topo_net *t = &cl->net;
    long n = cl->nodes;
    if (n * cl->node.gpus > MAX_GPUS)
        return bad(c, "%ld nodes x %d GPUs is more than the %ld GPUs a platform can hold here", n, cl->node.gpus,
                   MAX_GPUS);
    switch (t->kind) {
    case TOPO_SWITCH:
        if (n > 512) return bad(c, "a single switch serves at most 512 nodes here, not %ld (use a fat-tree)", n);
        break;
    case TOPO_TORUS:
        if ((long)t->dims[0] * t->dims[1] * t->dims[2] != n)
            return bad(c, "torus dims %dx%dx%d hold %d nodes, not %ld", t->dims[0], t->dims[1], t->dims[2],
                       t->dims[0] * t->dims[1] * t->dims[2], n);
        if (n > 1024) return bad(c, "torus of %ld nodes: at most 1024 here", n);
        break;
    case TOPO_FATTREE: {
        long per_leaf = t->rails ? t->radix / 2 : (t->radix / 2) / cl->node.nnics;
        if (per_leaf < 1) return bad(c, "fat-tree radix %d cannot hold one node's %d NICs on a leaf", t->radix, cl->node.nnics);
        long cap = per_leaf;
        for (int l = 1; l < t->levels; l++) cap *= t->radix / 2;
        if (t->levels > 1) cap *= 2; /* the top level uses all its ports downwards */
        if (n > cap)
            return bad(c, "a %d-level fat-tree of radix %d holds at most %ld nodes, not %ld", t->levels, t->radix, cap, n);
        break;
    }
    case TOPO_DRAGONFLY: {
        long per_group = (long)t->switches * t->nodes_per_switch;
        t->groups = (int)((n + per_group - 1) / per_group);
        if (t->groups > 1024) return bad(c, "dragonfly of %d groups: at most 1024", t->groups);
        long links = (long)t->groups * t->switches * (t->switches - 1) / 2 + (long)t->groups * (t->groups - 1) / 2;
        if (links > MAX_FABRIC_LINKS)
            return bad(c, "dragonfly of %d groups of %d switches needs %ld switch links, more than %ld", t->groups,
                       t->switches, links, MAX_FABRIC_LINKS);
        break;
    }
    }
    return 0;
}

/* "unknown cluster" with the shipped names and, for a slip, the closest one. */
static int unknown_cluster(const char *name, char *err, size_t errlen)
{
    char dir[4096], list[512] = "";
    snprintf(dir, sizeof dir, "%s/clusters", ts_config_dir());
    size_t n;
    char **names = ts_json_names(dir, &n);
    for (size_t i = 0; i < n; i++) {
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    const char *near = ts_closest(name, (const char *const *)names, n);
    if (near)
        ts_err(err, errlen, "unknown cluster '%s'; did you mean '%s'? (shipped: %s)", name, near, list);
    else if (n)
        ts_err(err, errlen, "unknown cluster '%s' (shipped: %s)", name, list);
    else
        ts_err(err, errlen, "unknown cluster '%s' (no shipped clusters found in %s)", name, dir);
    ts_names_free(names, n);
    return -1;
}

int topo_is_cluster_spec(const char *spec)
{
    size_t n = strlen(spec);
    if (n > 4 && strcmp(spec + n - 4, ".xml") == 0) return 0;
    return 1;
}

/* The GPU generation NCCL's tuner reads (its compute capability: 7.0 V100,
 * 8.0 A100, 9.0 H100 / H200 / H800 / GH200), by the GPU key's prefix: its
 * per-channel bandwidth ceilings (coll_nccl_bw_cap). Others: none. */
static coll_arch gpu_arch(const char *key)
{
    static const struct { const char *prefix; coll_arch arch; } rows[] = {
        {"v100", COLL_ARCH_VOLTA}, {"a100", COLL_ARCH_AMPERE}, {"h100", COLL_ARCH_HOPPER},
        {"h200", COLL_ARCH_HOPPER}, {"h800", COLL_ARCH_HOPPER}, {"gh200", COLL_ARCH_HOPPER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strncasecmp(key, rows[i].prefix, strlen(rows[i].prefix)) == 0) return rows[i].arch;
    return COLL_ARCH_NONE;
}

/* The collective model's parameters: the NCCL preset (RCCL when the file's
 * "collectives" names it), the node fabric's tier, SHARP from the network,
 * then the file's "collectives" object. */
static int coll_defaults(topo_cluster *cl, json_t *o, const char *path, char *err, size_t errlen)
{
    json_t *lib = o ? json_object_get(o, "library") : NULL;
    int l = lib && json_is_string(lib) ? coll_lib_from_name(json_string_value(lib)) : COLL_LIB_NCCL;
    coll_params_preset(&cl->coll, l < 0 ? COLL_LIB_NCCL : l);
    static const coll_tier tiers[] = {[TOPO_NVSWITCH] = COLL_TIER_NVLINK, [TOPO_MESH] = COLL_TIER_NVLINK,
                                      [TOPO_GRAPH] = COLL_TIER_NVLINK, [TOPO_PCIE] = COLL_TIER_PCIE};
    cl->coll.intra_tier = tiers[cl->node.fabric];
    if (cl->node.fabric == TOPO_GRAPH && cl->coll.lib == COLL_LIB_RCCL) cl->coll.intra_tier = COLL_TIER_XGMI;
    cl->coll.collnet = cl->net.sharp;
    if (cl->coll.lib == COLL_LIB_NCCL) cl->coll.arch = gpu_arch(cl->gpu_key);
    /* NCCL's channels across nodes: its ring search finds one ring per NIC
     * of the node, and ncclTopoPostset doubles the search's channels
     * (src/graph/connect.cc, "Duplication should be complete now":
     * nChannels = min(MAXCHANNELS, 2 x nChannels)): 4 on a node of two NICs
     * (Polaris), 8 of four (Perlmutter), 16 of eight (DGX). */
    if (cl->node.nnics > 0 && cl->node.gpus > cl->node.nnics) cl->coll.nic_gpus = cl->node.gpus / cl->node.nnics;
    if (cl->coll.lib == COLL_LIB_NCCL && cl->node.nnics > 0)
        cl->coll.max_channels = 2 * cl->node.nnics > 32 ? 32 : 2 * cl->node.nnics;
    return o ? coll_params_overlay(&cl->coll, o, path, err, errlen) : 0;
}

int topo_load(const char *spec, int nodes, topo_cluster *cl, char *err, size_t errlen)
{
    char path[512], name[256];
    snprintf(name, sizeof name, "%s", spec);
    int text = ts_is_json_text(spec); /* cluster JSON text, no name or NODES suffix */
    char *colon = text ? NULL : strrchr(name, ':');
    if (colon && !strchr(colon, '/')) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (*end || v < 1 || v > 1000000)
            return ts_err(err, errlen, "%s: node count after ':' must be a positive integer", spec);
        if (nodes <= 0) nodes = (int)v;
        *colon = 0;
    }
    size_t len = strlen(name);
    int is_file = len > 5 && strcmp(name + len - 5, ".json") == 0;
    if (is_file || text) snprintf(path, sizeof path, "%s", text ? "cluster JSON" : name);
    else snprintf(path, sizeof path, "%s/clusters/%s.json", ts_config_dir(), name);
    if (!is_file && !text && access(path, R_OK) != 0) return unknown_cluster(name, err, errlen);

    memset(cl, 0, sizeof *cl);
    cl->intra_bw_eff = cl->inter_bw_eff = 1;
    ctx c = {path, err, errlen};
    json_t *root = load_json(&c, text ? spec : path);
    if (!root) return -1;
    static const char *const keys[] = {"name", "comment", "nodes", "gpu", "node", "network", "calibration",
                                       "collectives", NULL};
    static const char *const nkeys[] = {"gpus", "fabric", "nics", NULL};
    int rc = -1;
    json_t *node = json_object_get(root, "node");
    const char *nm, *gpu;
    if (keys_ok(&c, "cluster", root, keys) < 0 || !(nm = get_str(&c, "cluster", root, "name")) ||
        !(gpu = get_str(&c, "cluster", root, "gpu")))
        goto out;
    snprintf(cl->name, sizeof cl->name, "%s", nm);
    json_t *cm = json_object_get(root, "comment");
    if (cm && !json_is_string(cm)) {
        bad(&c, "cluster: 'comment' must be a string");
        goto out;
    }
    if (cm) snprintf(cl->comment, sizeof cl->comment, "%s", json_string_value(cm));
    if (get_int(&c, "cluster", root, "nodes", 1, 1, 1000000, &cl->nodes) < 0) goto out;
    if (nodes > 0) cl->nodes = nodes;
    if (!json_is_object(node)) {
        bad(&c, "cluster: missing object 'node'");
        goto out;
    }
    if (keys_ok(&c, "node", node, nkeys) < 0 ||
        get_int(&c, "node", node, "gpus", 1, 1, TOPO_MAX_GPUS, &cl->node.gpus) < 0 ||
        parse_fabric(&c, json_object_get(node, "fabric"), &cl->node) < 0 ||
        parse_nics(&c, json_object_get(node, "nics"), &cl->node) < 0 ||
        parse_net(&c, json_object_get(root, "network"), cl) < 0 || check_size(&c, cl) < 0)
        goto out;
    char gerr[TS_ERRLEN];
    snprintf(cl->gpu_key, sizeof cl->gpu_key, "%s", gpu);
    if (load_gpu(gpu, &cl->gpu, gerr, sizeof gerr) < 0) {
        bad(&c, "gpu '%s': %s", gpu, gerr);
        goto out;
    }
    if (coll_defaults(cl, json_object_get(root, "collectives"), path, err, errlen) < 0) goto out;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

int topo_calibrate(topo_cluster *cl, const char *path, char *err, size_t errlen)
{
    ctx c = {path, err, errlen};
    json_t *root = load_json(&c, path);
    if (!root) return -1;
    json_t *o = json_object_get(root, "cluster");
    int rc = -1;
    static const char *const keys[] = {"intra_bw_eff", "inter_bw_eff", "intra_lat_add", "inter_lat_add", NULL};
    if (topo_calib_check(root, path, err, errlen) < 0) goto out;
    json_t *co = json_object_get(root, "collectives");
    if (co && !json_is_array(co) && coll_params_overlay(&cl->coll, co, path, err, errlen) < 0) goto out;
    if (!o) {
        rc = 0; /* a calibration without cluster-level factors changes nothing here */
        goto out;
    }
    if (!json_is_object(o)) {
        bad(&c, "'cluster' must be an object");
        goto out;
    }
    if (keys_ok(&c, "cluster", o, keys) < 0 ||
        get_num(&c, "cluster", o, "intra_bw_eff", 0, 0.01, 2, &cl->intra_bw_eff) < 0 ||
        get_num(&c, "cluster", o, "inter_bw_eff", 0, 0.01, 2, &cl->inter_bw_eff) < 0 ||
        get_num(&c, "cluster", o, "intra_lat_add", 0, 0, LAT_MAX, &cl->intra_lat_add) < 0 ||
        get_num(&c, "cluster", o, "inter_lat_add", 0, 0, LAT_MAX, &cl->inter_lat_add) < 0)
        goto out;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

double topo_bw_factor(const topo_cluster *c, coll_tier t)
{
    return c->coll.bw_frac[t] * (t == COLL_TIER_NIC || t == COLL_TIER_SWITCH ? c->inter_bw_eff : c->intra_bw_eff);
}

int topo_nic_of(const topo_node *n, int gpu)
{
    for (int k = 0; k < n->nnics; k++)
        if (n->nics[k].gpus >> gpu & 1) return k;
    return -1;
}

int topo_gpus_of_nic(const topo_node *n, int nic)
{
    return __builtin_popcount(n->nics[nic].gpus);
}

const char *topo_fabric_name(topo_fabric_kind k)
{
    static const char *n[] = {"nvswitch", "mesh", "graph", "pcie"};
    return k <= TOPO_PCIE ? n[k] : "?";
}

const char *topo_net_name(topo_net_kind k)
{
    static const char *n[] = {"switch", "fat-tree", "dragonfly", "torus"};
    return k <= TOPO_TORUS ? n[k] : "?";
}

void topo_an_figures(const topo_cluster *c, int *gpn, double *intra_bw, double *intra_lat, double *inter_bw,
                     double *inter_lat)
{
    const topo_node *n = &c->node;
    *gpn = n->gpus;
    if (n->fabric == TOPO_NVSWITCH || n->fabric == TOPO_PCIE) {
        *intra_bw = n->bw * topo_bw_factor(c, c->coll.intra_tier);
        *intra_lat = n->lat + c->intra_lat_add;
    } else {
        /* A mesh or link graph: what a ring through the GPUs in local order
         * (as the collectives run inside a node) gets per hop when every hop
         * sends at once: hops without a direct link share the links of their
         * route; the most loaded link, per direction, sets the pace. On
         * Frontier's Infinity Fabric that is 50 GB/s (a 1-link hop shared by
         * no one else), not the 200 GB/s of the 4-link GCD pair. */
        double load[TOPO_MAX_LINKS][2] = {{0}};
        int hops[TOPO_MAX_LINKS], maxhops = 1;
        for (int g = 0; g < n->gpus && n->gpus > 1; g++) {
            int k = topo_node_route(n, g, (g + 1) % n->gpus, hops, TOPO_MAX_LINKS), cur = g;
            if (k > maxhops) maxhops = k;
            for (int i = 0; i < k; i++) {
                const topo_link *l = &n->links[hops[i]];
                int dir = cur == l->a ? 0 : 1;
                load[hops[i]][dir] += 1;
                cur = dir ? l->a : l->b;
            }
        }
        double bw = 0;
        for (int l = 0; l < n->nlinks; l++)
            for (int d = 0; d < 2; d++)
                if (load[l][d] > 0 && (bw == 0 || n->bw * n->links[l].count / load[l][d] < bw))
                    bw = n->bw * n->links[l].count / load[l][d];
        *intra_bw = (bw > 0 ? bw : n->bw) * topo_bw_factor(c, c->coll.intra_tier);
        *intra_lat = maxhops * n->lat + c->intra_lat_add;
    }
    *inter_bw = n->nics[0].bw * topo_bw_factor(c, COLL_TIER_NIC) / topo_gpus_of_nic(n, 0);
    double sw = c->net.bw * topo_bw_factor(c, COLL_TIER_SWITCH);
    if (sw < *inter_bw) *inter_bw = sw;
    *inter_lat = 2 * (n->nics[0].lat + c->inter_lat_add) + 2 * c->net.lat;
}
