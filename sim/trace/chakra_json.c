/* Importer for Chakra's JSON forms, one file per rank: the "workload_graph"
 * node list (Id, Name, NodeType, ctrlDeps, data_deps, runtime) and the
 * protobuf-as-JSON "nodes" list (id, name, type, ctrlDeps, dataDeps, attr). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define MAXJSON ((size_t)1 << 30)

/* First member of o among the given names. */
static json_t *get(const json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return v || !b ? v : json_object_get(o, b);
}

/* A number, or an integer in a string (protobuf JSON writes 64-bit ints as strings). */
static int num(const json_t *v, double *d)
{
    if (json_is_number(v)) return *d = json_number_value(v), 0;
    if (json_is_string(v)) {
        char *end;
        *d = strtod(json_string_value(v), &end);
        return *end || end == json_string_value(v) ? -1 : 0;
    }
    if (json_is_boolean(v)) return *d = json_is_true(v), 0;
    return -1;
}

static int node_type(const json_t *v)
{
    static const char *const names[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                        "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
    if (json_is_string(v))
        for (int i = 0; i < 8; i++)
            if (!strcmp(json_string_value(v), names[i])) return i;
    double d;
    return num(v, &d) == 0 && d >= 0 && d < 8 ? (int)d : -1;
}

static void set_attr(tr_cnode *n, const char *name, double d)
{
    if (!isfinite(d)) return;
    if (!strcmp(name, "comm_type")) n->comm_type = d >= 0 && d < 100 ? (int)d : 100;
    else if (!strcmp(name, "comm_size")) n->comm_size = d >= 0 && d <= (double)OG_MAX_BYTES ? (int64_t)d : -2;
    else if (!strcmp(name, "comm_src")) n->src = d >= 0 && d < (1 << 24) ? (int)d : -2;
    else if (!strcmp(name, "comm_dst")) n->dst = d >= 0 && d < (1 << 24) ? (int)d : -2;
    else if (!strcmp(name, "comm_tag")) n->tag = d >= 0 && d < (1 << 30) ? (int)d : 0;
    else if (!strcmp(name, "is_cpu_op")) n->is_cpu = d != 0;
    else if (!strcmp(name, "num_ops")) n->flops = d;
    else if (!strcmp(name, "tensor_size")) n->tbytes = d;
}

static int read_node(const json_t *o, tr_cnode *n, const char *path, int rank, long k, char *err, size_t errlen)
{
    double d;
    if (!json_is_object(o)) return ts_err(err, errlen, "%s: rank %d: node %ld is not an object", path, rank, k);
    if (num(get(o, "Id", "id"), &d) < 0 || d < 0 || d > 9e18)
        return ts_err(err, errlen, "%s: rank %d: node %ld: missing or bad id", path, rank, k);
    n->id = (uint64_t)d;
    json_t *t = get(o, "NodeType", "type");
    if ((n->type = node_type(t)) < 0)
        return ts_err(err, errlen, "%s: rank %d: node %ld (id %llu): missing or unknown node type", path, rank, k,
                      (unsigned long long)n->id);
    const char *name = json_string_value(get(o, "Name", "name"));
    n->name = ts_strdup(name ? name : "");
    if (num(get(o, "runtime", "durationMicros"), &d) == 0 && isfinite(d) && d >= 0) n->dur_us = d;
    if (num(get(o, "is_cpu_op", NULL), &d) == 0) n->is_cpu = d != 0;
    static const char *const scalars[] = {"comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "num_ops", "tensor_size"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        if (num(json_object_get(o, scalars[i]), &d) == 0) set_attr(n, scalars[i], d);
    json_t *attrs = json_object_get(o, "attr"), *a;
    size_t i;
    json_array_foreach(attrs, i, a) {
        const char *an = json_string_value(json_object_get(a, "name"));
        if (!an) continue;
        const char *key;
        json_t *v;
        json_object_foreach(a, key, v) if (strcmp(key, "name") && num(v, &d) == 0) set_attr(n, an, d);
    }
    static const char *const depkeys[] = {"ctrlDeps", "data_deps", "dataDeps", "ctrl_deps"};
    for (size_t j = 0; j < sizeof depkeys / sizeof depkeys[0]; j++) {
        json_t *arr = json_object_get(o, depkeys[j]), *x;
        size_t q;
        json_array_foreach(arr, q, x) {
            if (num(x, &d) < 0 || d < 0 || d > 9e18)
                return ts_err(err, errlen, "%s: rank %d: node %ld (id %llu): bad dependency in %s", path, rank, k,
                              (unsigned long long)n->id, depkeys[j]);
            tr_cnode_dep(n, (uint64_t)d);
        }
    }
    return 0;
}

int tr_chakra_json_read(const char *path, int rank, tr_cnode **out, size_t *nout, char *err, size_t errlen)
{
    tr_in *in = tr_open(path, err, errlen);
    if (!in) return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0, k;
    do {
        ts_grow(&buf, 1, &cap, len + 65536);
        k = tr_read(in, buf + len, 65536);
        len += k;
    } while (k && len < MAXJSON);
    const char *e = tr_error(in);
    tr_close(in);
    if (e) {
        free(buf);
        return ts_err(err, errlen, "%s: %s", path, e);
    }
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    free(buf);
    if (!root) return ts_err(err, errlen, "%s:%d: %s", path, je.line, je.text);
    json_t *arr = get(root, "workload_graph", "nodes");
    if (!json_is_array(arr)) {
        json_decref(root);
        return ts_err(err, errlen, "%s: rank %d: no 'workload_graph' or 'nodes' array", path, rank);
    }
    size_t n = json_array_size(arr);
    tr_cnode *nodes = ts_calloc(n ? n : 1, sizeof *nodes);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        tr_cnode *x = &nodes[i];
        x->dur_us = -1, x->comm_type = -1, x->comm_size = -1, x->src = x->dst = -1, x->where = (long)i;
        rc = read_node(json_array_get(arr, i), x, path, rank, (long)i, err, errlen);
    }
    json_decref(root);
    if (rc) {
        tr_cnodes_free(nodes, n);
        return -1;
    }
    *out = nodes;
    *nout = n;
    return 0;
}

static int cj_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err, size_t errlen)
{
    (void)o;
    return tr_chakra_import(nfiles, paths, 1, out, err, errlen);
}

static int cj_detect(const char *path, const char *head, size_t n)
{
    (void)path;
    return memmem(head, n, "\"workload_graph\"", 16) ||
           (memmem(head, n, "\"nodes\"", 7) && memmem(head, n, "_NODE\"", 6));
}

const tr_format tr_fmt_chakra_json = {"chakra-json", "Chakra JSON form (workload_graph or protobuf-JSON nodes), one file per rank",
                                      cj_detect, cj_import};
