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

/* Labels shared by og_label_shared: strings in chunks that never move, found
 * by an open-addressing hash table of pointers to them. */
#define POOL_CHUNK 65536
typedef struct og_pool {
    const char **str;   /* label_id - 1 -> string */
    size_t nstr, strcap;
    char **chunks;
    size_t nchunks, chunkcap;
    size_t used;        /* in the last chunk */
    uint32_t *slot;     /* hash table of label ids (0: empty), a power of two in size */
    size_t nslot, count;
} og_pool;

static void pool_free(og_pool *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nchunks; i++) free(p->chunks[i]);
    free(p->chunks);
    free(p->str);
    free(p->slot);
    free(p);
}

static uint64_t str_hash(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    const char *p = s;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    *len = (size_t)(p - s);
    return h;
}

static void pool_rehash(og_pool *p)
{
    size_t n = p->nslot ? p->nslot * 2 : 1024;
    uint32_t *slot = ts_calloc(n, sizeof *slot);
    for (size_t i = 0; i < p->nslot; i++) {
        if (!p->slot[i]) continue;
        size_t len, j = str_hash(p->str[p->slot[i] - 1], &len) & (n - 1);
        while (slot[j]) j = (j + 1) & (n - 1);
        slot[j] = p->slot[i];
    }
    free(p->slot);
    p->slot = slot;
    p->nslot = n;
}

static uint32_t pool_add(og_pool *p, const char *s)
{
    if (2 * (p->count + 1) > p->nslot) pool_rehash(p);
    size_t len, j = str_hash(s, &len) & (p->nslot - 1);
    for (; p->slot[j]; j = (j + 1) & (p->nslot - 1))
        if (strcmp(p->str[p->slot[j] - 1], s) == 0) return p->slot[j];
    if (!p->nchunks || p->used + len + 1 > POOL_CHUNK) {
        ts_grow(&p->chunks, sizeof *p->chunks, &p->chunkcap, p->nchunks + 1);
        p->chunks[p->nchunks++] = ts_malloc(len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK);
        p->used = 0;
    }
    char *dst = p->chunks[p->nchunks - 1] + p->used;
    memcpy(dst, s, len + 1);
    p->used += len + 1;
    ts_grow(&p->str, sizeof *p->str, &p->strcap, p->nstr + 1);
    p->str[p->nstr++] = dst;
    p->count++;
    return p->slot[j] = (uint32_t)p->nstr;
}

static void op_free(og_op *op)
{
    if (op->ndeps > OG_INLINE_DEPS) free(op->dep_.heap);
    if (op->kind == OG_COLL) {
        free(op->algo);
        free(op->vbytes);
    }
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
    pool_free(g->pool);
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
    op->kind = (uint8_t)kind;
    op->stream = (int8_t)(stream < INT8_MIN ? INT8_MIN : stream > INT8_MAX ? INT8_MAX : stream);
    op->peer = -1; /* group, for a COLL op */
    op->dtype = OG_F32;
    if (kind != OG_COLL) op->duration = -1; /* a COLL op's algo and vbytes: NULL */
    return op;
}

void og_set_deps(og_op *op, int ndeps, const int *deps)
{
    if (op->ndeps > OG_INLINE_DEPS) free(op->dep_.heap);
    op->ndeps = ndeps > 0 ? ndeps : 0;
    if (ndeps > OG_INLINE_DEPS) op->dep_.heap = ts_malloc(ndeps * sizeof(int));
    if (ndeps > 0) memcpy((int *)og_deps(op), deps, ndeps * sizeof(int));
}

void og_add_dep(og_op *op, int dep)
{
    int n = op->ndeps;
    if (n < OG_INLINE_DEPS) {
        op->dep_.in[n] = dep;
    } else if (n == OG_INLINE_DEPS) {
        int *h = ts_malloc((n + 1) * sizeof(int));
        memcpy(h, op->dep_.in, n * sizeof(int));
        h[n] = dep;
        op->dep_.heap = h;
    } else {
        op->dep_.heap = ts_realloc(op->dep_.heap, (n + 1) * sizeof(int));
        op->dep_.heap[n] = dep;
    }
    op->ndeps = n + 1;
}

void og_set_label(og_graph *g, og_op *op, const char *label)
{
    op->label_id = 0;
    if (!label) return;
    if (!g->pool) g->pool = ts_calloc(1, sizeof *g->pool);
    op->label_id = pool_add(g->pool, label);
}

const char *og_label(const og_graph *g, const og_op *op)
{
    if (!op->label_id || !g->pool || op->label_id > g->pool->nstr) return NULL;
    return g->pool->str[op->label_id - 1];
}

void og_reserve(og_graph *g, int rank, int n)
{
    og_rank *rk = &g->ranks[rank];
    if (n <= 0 || (size_t)n <= rk->cap) return;
    rk->ops = ts_realloc(rk->ops, (size_t)n * sizeof *rk->ops);
    rk->cap = (size_t)n;
}

static void trim_rank(og_rank *rk)
{
    if (rk->cap <= (size_t)rk->nops || !rk->nops) return;
    rk->ops = ts_realloc(rk->ops, rk->nops * sizeof *rk->ops);
    rk->cap = rk->nops;
}

void og_trim(og_graph *g, int r)
{
    if (r >= 0) {
        trim_rank(&g->ranks[r]);
        return;
    }
    for (r = 0; r < g->nranks; r++) trim_rank(&g->ranks[r]);
}

void og_set_host(og_graph *g, int rank, const char *host)
{
    free(g->ranks[rank].host);
    g->ranks[rank].host = host ? ts_strdup(host) : NULL;
}

void og_set_algo(og_op *op, const char *algo)
{
    if (op->kind != OG_COLL) return; /* only a collective has one (its storage is a compute op's flops) */
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
