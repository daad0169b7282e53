/* Op graph construction, destruction and the name tables of its enums. */
#include "opgraph.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *kind_names[OG_NKINDS] = {"compute", "send", "recv", "coll"};

static const char *coll_names[OG_NCOLLS] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast",
    "reduce",     "alltoall",   "alltoallv",      "barrier",
};

static const struct {
    const char *name;
    int size;
} dtypes[OG_NDTYPES] = {
    {"float", 4}, {"half", 2}, {"bfloat16", 2}, {"double", 8}, {"fp8", 1},
    {"int8", 1},  {"uint8", 1}, {"int32", 4},   {"int64", 8},
};

og_graph *og_new(int nranks)
{
    og_graph *g = ts_calloc(1, sizeof *g);
    g->nranks = nranks;
    g->ranks = ts_calloc(nranks > 0 ? nranks : 1, sizeof *g->ranks);
    return g;
}

static void op_free(og_op *op)
{
    free(op->deps);
    free(op->label);
    free(op->algo);
    free(op->vbytes);
}

void og_free(og_graph *g)
{
    if (!g) return;
    for (int r = 0; r < g->nranks; r++) {
        for (int i = 0; i < g->ranks[r].nops; i++) op_free(&g->ranks[r].ops[i]);
        free(g->ranks[r].ops);
        free(g->ranks[r].host);
    }
    for (int i = 0; i < g->ngroups; i++) free(g->groups[i].ranks);
    free(g->groups);
    free(g->ranks);
    free(g);
}

int og_add_group(og_graph *g, int n, const int *ranks)
{
    ts_grow(&g->groups, sizeof *g->groups, &g->gcap, (size_t)g->ngroups + 1);
    og_group *gr = &g->groups[g->ngroups];
    gr->id = g->ngroups;
    gr->n = n;
    gr->ranks = ts_malloc((n > 0 ? n : 1) * sizeof(int));
    if (n > 0) memcpy(gr->ranks, ranks, n * sizeof(int));
    return g->ngroups++;
}

og_op *og_add_op(og_graph *g, int rank, og_kind kind, int stream)
{
    og_rank *r = &g->ranks[rank];
    ts_grow(&r->ops, sizeof *r->ops, &r->cap, (size_t)r->nops + 1);
    og_op *op = &r->ops[r->nops];
    memset(op, 0, sizeof *op);
    op->id = r->nops++;
    op->kind = kind;
    op->stream = stream;
    op->duration = -1;
    op->peer = -1;
    op->group = -1;
    op->dtype = OG_F32;
    return op;
}

void og_set_deps(og_op *op, int ndeps, const int *deps)
{
    free(op->deps);
    op->deps = NULL;
    op->ndeps = ndeps;
    if (ndeps > 0) {
        op->deps = ts_malloc(ndeps * sizeof(int));
        memcpy(op->deps, deps, ndeps * sizeof(int));
    }
}

void og_add_dep(og_op *op, int dep)
{
    op->deps = ts_realloc(op->deps, (op->ndeps + 1) * sizeof(int));
    op->deps[op->ndeps++] = dep;
}

void og_set_label(og_op *op, const char *label)
{
    free(op->label);
    op->label = label ? ts_strdup(label) : NULL;
}

void og_set_host(og_graph *g, int rank, const char *host)
{
    free(g->ranks[rank].host);
    g->ranks[rank].host = host ? ts_strdup(host) : NULL;
}

void og_set_algo(og_op *op, const char *algo)
{
    free(op->algo);
    op->algo = algo ? ts_strdup(algo) : NULL;
}

og_op *og_compute(og_graph *g, int rank, int stream, double flops, int64_t bytes)
{
    og_op *op = og_add_op(g, rank, OG_COMPUTE, stream);
    op->flops = flops;
    op->bytes = bytes;
    return op;
}

og_op *og_compute_fixed(og_graph *g, int rank, int stream, double seconds)
{
    og_op *op = og_add_op(g, rank, OG_COMPUTE, stream);
    op->duration = seconds;
    return op;
}

static og_op *p2p(og_graph *g, og_kind k, int rank, int stream, int peer, int64_t bytes, int tag)
{
    og_op *op = og_add_op(g, rank, k, stream);
    op->peer = peer;
    op->bytes = bytes;
    op->tag = tag;
    return op;
}

og_op *og_send(og_graph *g, int rank, int stream, int peer, int64_t bytes, int tag)
{
    return p2p(g, OG_SEND, rank, stream, peer, bytes, tag);
}

og_op *og_recv(og_graph *g, int rank, int stream, int peer, int64_t bytes, int tag)
{
    return p2p(g, OG_RECV, rank, stream, peer, bytes, tag);
}

og_op *og_collective(og_graph *g, int rank, int stream, og_coll coll, int group,
                     int64_t bytes, og_dtype dtype)
{
    og_op *op = og_add_op(g, rank, OG_COLL, stream);
    op->coll = coll;
    op->group = group;
    op->bytes = bytes;
    op->dtype = dtype;
    return op;
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

const char *og_kind_name(og_kind k) { return k < OG_NKINDS ? kind_names[k] : "?"; }
int og_kind_from_name(const char *s) { return lookup(kind_names, OG_NKINDS, s); }
const char *og_coll_name(og_coll c) { return c < OG_NCOLLS ? coll_names[c] : "?"; }
int og_coll_from_name(const char *s) { return lookup(coll_names, OG_NCOLLS, s); }
const char *og_dtype_name(og_dtype t) { return t < OG_NDTYPES ? dtypes[t].name : "?"; }
int og_dtype_size(og_dtype t) { return t < OG_NDTYPES ? dtypes[t].size : 0; }

int og_dtype_from_name(const char *s)
{
    for (int i = 0; i < OG_NDTYPES; i++)
        if (strcmp(dtypes[i].name, s) == 0) return i;
    return -1;
}

int og_total_ops(const og_graph *g)
{
    int n = 0;
    for (int r = 0; r < g->nranks; r++) n += g->ranks[r].nops;
    return n;
}

void og_describe_wait(const og_op *op, char *buf, size_t n)
{
    switch (op->kind) {
    case OG_SEND: snprintf(buf, n, "send to rank %d, tag %d, %lld bytes", op->peer, op->tag, (long long)op->bytes); break;
    case OG_RECV: snprintf(buf, n, "recv from rank %d, tag %d, %lld bytes", op->peer, op->tag, (long long)op->bytes); break;
    case OG_COLL: snprintf(buf, n, "%s on group %d, waiting for its other members", og_coll_name(op->coll), op->group); break;
    default: snprintf(buf, n, "%s", og_kind_name(op->kind));
    }
}
