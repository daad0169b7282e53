/* Importer for Chakra execution traces (.et: length-delimited protobuf records
 * per et_def.proto, one file per rank), with a minimal protobuf decoder, and
 * the node-list builder shared with the Chakra JSON importer. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define MAXREC (64u << 20) /* one record (node) larger than this is corrupt */

/* ------------------------------------------------------------ protobuf wire format */

typedef struct pb {
    const unsigned char *p, *end;
} pb;

static int varint(pb *b, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (b->p >= b->end) return -1;
        unsigned c = *b->p++;
        x |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Next field: number, wire type, and its value (varint/fixed as number, or
 * bytes for length-delimited). */
static int field(pb *b, int *num, int *wt, uint64_t *v, pb *sub)
{
    uint64_t key;
    if (varint(b, &key) < 0) return -1;
    *num = (int)(key >> 3);
    *wt = (int)(key & 7);
    switch (*wt) {
    case 0: return varint(b, v);
    case 1:
        if (b->end - b->p < 8) return -1;
        memcpy(v, b->p, 8);
        b->p += 8;
        return 0;
    case 5: {
        if (b->end - b->p < 4) return -1;
        uint32_t x;
        memcpy(&x, b->p, 4);
        b->p += 4;
        *v = x;
        return 0;
    }
    case 2: {
        uint64_t n;
        if (varint(b, &n) < 0 || n > (uint64_t)(b->end - b->p)) return -1;
        sub->p = b->p;
        sub->end = b->p + n;
        b->p += n;
        return 0;
    }
    default: return -1;
    }
}

static char *pbstr(const pb *s)
{
    size_t n = (size_t)(s->end - s->p);
    char *x = ts_malloc(n + 1);
    memcpy(x, s->p, n);
    x[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!x[i]) x[i] = '?';
    return x;
}

/* AttributeProto: we keep numeric scalars and strings by name. */
static int attr(pb *b, tr_cnode *n)
{
    int num, wt;
    uint64_t v = 0;
    pb sub;
    char name[32] = "";
    int have = 0, isstr = 0;
    double d = 0;
    while (b->p < b->end) {
        if (field(b, &num, &wt, &v, &sub) < 0) return -1;
        if (num == 1 && wt == 2) {
            size_t l = (size_t)(sub.end - sub.p);
            if (l >= sizeof name) l = sizeof name - 1;
            memcpy(name, sub.p, l);
            name[l] = 0;
        } else if (wt == 0 && (num == 7 || num == 9 || num == 11 || num == 13 || num == 27)) {
            d = num == 7 ? (double)(int32_t)v : num == 9 ? (double)(int64_t)v : (double)v, have = 1;
        } else if (wt == 0 && (num == 15 || num == 17)) {
            d = (double)(int64_t)((v >> 1) ^ (~(v & 1) + 1)), have = 1;
        } else if (wt == 1 && num == 3) {
            memcpy(&d, &v, sizeof d), have = 1;
        } else if (wt == 5 && num == 5) {
            uint32_t u = (uint32_t)v;
            float f;
            memcpy(&f, &u, sizeof f);
            d = f, have = 1;
        } else if (wt == 2 && num == 29) {
            isstr = 1;
        }
    }
    (void)isstr;
    if (!have) return 0;
    if (!strcmp(name, "comm_type")) n->comm_type = d >= 0 && d < 100 ? (int)d : 100;
    else if (!strcmp(name, "comm_size")) n->comm_size = d >= 0 && d <= (double)OG_MAX_BYTES ? (int64_t)d : -2;
    else if (!strcmp(name, "comm_src")) n->src = d >= 0 && d < (1 << 24) ? (int)d : -2;
    else if (!strcmp(name, "comm_dst")) n->dst = d >= 0 && d < (1 << 24) ? (int)d : -2;
    else if (!strcmp(name, "comm_tag")) n->tag = d >= 0 && d < (1 << 30) ? (int)d : 0;
    else if (!strcmp(name, "is_cpu_op")) n->is_cpu = d != 0;
    else if (!strcmp(name, "num_ops")) n->flops = d;
    else if (!strcmp(name, "tensor_size")) n->tbytes = d;
    return 0;
}

static int deps(const pb *s, int wt, uint64_t v, tr_cnode *n)
{
    if (wt == 0) {
        tr_cnode_dep(n, v);
        return 0;
    }
    if (wt != 2) return -1;
    pb b = *s;
    while (b.p < b.end) {
        uint64_t x;
        if (varint(&b, &x) < 0) return -1;
        tr_cnode_dep(n, x);
    }
    return 0;
}

static int node(pb *b, tr_cnode *n)
{
    int num, wt;
    uint64_t v = 0;
    pb sub = {0};
    while (b->p < b->end) {
        if (field(b, &num, &wt, &v, &sub) < 0) return -1;
        switch (num) {
        case 1: n->id = v; break;
        case 2:
            if (wt == 2) free(n->name), n->name = pbstr(&sub);
            break;
        case 3: n->type = v < 100 ? (int)v : 100; break;
        case 4: case 5:
            if (deps(&sub, wt, v, n) < 0) return -1;
            break;
        case 7: n->dur_us = (double)v; break;
        case 10:
            if (wt == 2 && attr(&sub, n) < 0) return -1;
            break;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ shared builder */

void tr_cnode_dep(tr_cnode *n, uint64_t d)
{
    if (n->ndeps >= 1 << 20) return;
    ts_grow(&n->deps, sizeof *n->deps, &n->dcap, (size_t)n->ndeps + 1);
    n->deps[n->ndeps++] = d;
}

void tr_cnodes_free(tr_cnode *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) free(nodes[i].name), free(nodes[i].deps);
    free(nodes);
}

int tr_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    long r = -1;
    for (const char *p = base; *p; p++)
        if (isdigit((unsigned char)*p) && (p == base || !isdigit((unsigned char)p[-1]))) {
            char *end;
            long v = strtol(p, &end, 10);
            if (*end == '.' && v < (1 << 24)) r = v;
        }
    return (int)r;
}

typedef struct idx { uint64_t id; size_t i; } idx;
static int idx_cmp(const void *a, const void *b)
{
    const idx *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int coll_of(const tr_cnode *n)
{
    static const int ct[] = {OG_ALLREDUCE, OG_REDUCE, OG_ALLGATHER, -1, -1, OG_BROADCAST, OG_ALLTOALL,
                             OG_REDUCESCATTER, OG_REDUCESCATTER, OG_BARRIER};
    if (n->comm_type >= 0) return n->comm_type < 10 ? ct[n->comm_type] : -1;
    if (!n->name) return -1;
    /* JSON form without comm_type: the collective is in the op's name */
    static const struct { const char *s; og_coll c; } names[] = {
        {"all_reduce", OG_ALLREDUCE}, {"allreduce", OG_ALLREDUCE}, {"all_gather", OG_ALLGATHER},
        {"allgather", OG_ALLGATHER}, {"reduce_scatter", OG_REDUCESCATTER}, {"all_to_all", OG_ALLTOALL},
        {"alltoall", OG_ALLTOALL}, {"broadcast", OG_BROADCAST}, {"barrier", OG_BARRIER}, {"reduce", OG_REDUCE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasestr(n->name, names[i].s)) return names[i].c;
    return -1;
}

/* Dependencies of node i on op `op`. A send is posted asynchronously (as
 * astra-sim does): whoever depends on a send waits for the send's own
 * dependencies, not for its completion; otherwise a ring whose receives follow
 * their sends would deadlock on rendezvous. */
static void add_deps(og_graph *g, int r, int op, const tr_cnode *nodes, size_t i, const size_t *opid, size_t *stamp,
                     size_t mark, size_t **stack, size_t *scap)
{
    size_t ns = 0;
    for (int k = 0; k < nodes[i].ndeps; k++)
        if (nodes[i].deps[k] != UINT64_MAX) {
            ts_grow(stack, sizeof **stack, scap, ns + 1);
            (*stack)[ns++] = (size_t)nodes[i].deps[k];
        }
    while (ns) {
        size_t d = (*stack)[--ns];
        if (stamp[d] == mark) continue;
        stamp[d] = mark;
        if (opid[d] == SIZE_MAX) continue; /* dropped to break a cycle */
        if (nodes[d].type != 5) {
            og_add_dep(&g->ranks[r].ops[op], (int)opid[d]);
            continue;
        }
        for (int k = 0; k < nodes[d].ndeps; k++)
            if (nodes[d].deps[k] != UINT64_MAX) {
                ts_grow(stack, sizeof **stack, scap, ns + 1);
                (*stack)[ns++] = (size_t)nodes[d].deps[k];
            }
    }
}

int tr_chakra_rank(og_graph *g, int r, int group, const char *path, tr_cnode *nodes, size_t n, char *err,
                   size_t errlen)
{
    /* Streams: CPU compute 0, GPU compute 1, collectives 2, sends 3, receives 4
     * (a blocking send and a receive on one stream could wait for each other).
     * Kahn's algorithm in file order: ops come out with their deps before them;
     * deps on ids absent from the file are dropped (Chakra files are often pruned). */
    idx *ix = ts_malloc((n ? n : 1) * sizeof *ix);
    for (size_t i = 0; i < n; i++) ix[i] = (idx){nodes[i].id, i};
    if (n) qsort(ix, n, sizeof *ix, idx_cmp);
    for (size_t i = 1; i < n; i++)
        if (ix[i].id == ix[i - 1].id) {
            ts_err(err, errlen, "%s: rank %d: node id %llu appears twice (records %ld and %ld)", path, r,
                   (unsigned long long)ix[i].id, nodes[ix[i - 1].i].where, nodes[ix[i].i].where);
            free(ix);
            return -1;
        }
    int *indeg = ts_calloc(n ? n : 1, sizeof *indeg);
    size_t *eoff = ts_calloc(n + 1, sizeof *eoff), *edge, *opid = ts_malloc((n ? n : 1) * sizeof *opid);
    for (size_t i = 0; i < n; i++) opid[i] = SIZE_MAX; /* not emitted yet */
    /* resolve deps to node indices (in place: deps[k] becomes index or UINT64_MAX) */
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < nodes[i].ndeps; k++) {
            idx key = {nodes[i].deps[k], 0}, *f = n ? bsearch(&key, ix, n, sizeof *ix, idx_cmp) : NULL;
            nodes[i].deps[k] = f && f->i != i ? f->i : UINT64_MAX;
            if (f && f->i != i) indeg[i]++, eoff[f->i + 1]++;
        }
    for (size_t i = 0; i < n; i++) eoff[i + 1] += eoff[i];
    edge = ts_malloc((eoff[n] ? eoff[n] : 1) * sizeof *edge);
    size_t *fill = ts_calloc(n ? n : 1, sizeof *fill);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < nodes[i].ndeps; k++)
            if (nodes[i].deps[k] != UINT64_MAX) {
                size_t d = (size_t)nodes[i].deps[k];
                edge[eoff[d] + fill[d]++] = i;
            }
    /* ready queue as a min-heap on file position keeps the order deterministic */
    size_t *heap = ts_malloc((n ? n : 1) * sizeof *heap), nh = 0, done = 0;
    size_t *stamp = ts_calloc(n ? n : 1, sizeof *stamp), *stack = NULL, scap = 0;
#define HPUSH(x) do { size_t _k = nh++; heap[_k] = (x); while (_k && heap[(_k - 1) / 2] > heap[_k]) { size_t _p = (_k - 1) / 2, _t = heap[_p]; heap[_p] = heap[_k]; heap[_k] = _t; _k = _p; } } while (0)
    for (size_t i = 0; i < n; i++)
        if (!indeg[i]) HPUSH(i);
    int rc = 0;
    size_t cursor = 0;
    while (done < n && !rc) {
        if (!nh) {
            /* A dependency cycle (converted PyTorch traces have them: a ctrl dep on
             * a parent op that data-depends on its child): break it at the
             * earliest node left in file order, dropping its unmet deps. */
            while (opid[cursor] != SIZE_MAX) cursor++;
            indeg[cursor] = 0;
            HPUSH(cursor);
        }
        size_t i = heap[0];
        heap[0] = heap[--nh];
        for (size_t k = 0;;) {
            size_t l = 2 * k + 1, m = k;
            if (l < nh && heap[l] < heap[m]) m = l;
            if (l + 1 < nh && heap[l + 1] < heap[m]) m = l + 1;
            if (m == k) break;
            size_t t = heap[m];
            heap[m] = heap[k], heap[k] = t, k = m;
        }
        tr_cnode *x = &nodes[i];
        og_op *op;
        double dur = x->dur_us > 0 ? x->dur_us * 1e-6 : 0;
        if (x->type == 7) {
            int c = coll_of(x);
            if (c < 0) {
                rc = ts_err(err, errlen, "%s: rank %d: record %ld: node %llu '%.60s': unsupported collective "
                            "(comm_type %d; valid: all_reduce, reduce, all_gather, broadcast, all_to_all, "
                            "reduce_scatter, barrier)", path, r, x->where, (unsigned long long)x->id,
                            x->name ? x->name : "", x->comm_type);
                break;
            }
            if (x->comm_size < -1) {
                rc = ts_err(err, errlen, "%s: rank %d: record %ld: node %llu: comm_size out of range", path, r,
                            x->where, (unsigned long long)x->id);
                break;
            }
            op = og_collective(g, r, 2, (og_coll)c, group, c == OG_BARRIER || x->comm_size < 0 ? 0 : x->comm_size, OG_U8);
        } else if (x->type == 5 || x->type == 6) {
            int peer = x->type == 5 ? x->dst : x->src;
            if (peer < 0 || peer >= g->nranks || peer == r || x->comm_size < 0) {
                rc = ts_err(err, errlen, "%s: rank %d: record %ld: node %llu: %s with peer %d (ranks 0-%d) and "
                            "comm_size %lld", path, r, x->where, (unsigned long long)x->id,
                            x->type == 5 ? "send" : "recv", peer, g->nranks - 1, (long long)x->comm_size);
                break;
            }
            op = x->type == 5 ? og_send(g, r, 3, peer, x->comm_size, x->tag) : og_recv(g, r, 4, peer, x->comm_size, x->tag);
        } else if (x->type == 4 && dur == 0 && x->flops > 0 && x->flops < OG_MAX_FLOPS) {
            op = og_compute(g, r, x->is_cpu ? 0 : 1, x->flops,
                            x->tbytes > 0 && x->tbytes < (double)OG_MAX_BYTES ? (int64_t)x->tbytes : 0);
        } else {
            op = og_compute_fixed(g, r, x->type == 4 && !x->is_cpu ? 1 : 0, dur < OG_MAX_DURATION ? dur : 0);
        }
        og_set_label(g, op, x->name);
        opid[i] = (size_t)op->id;
        add_deps(g, r, op->id, nodes, i, opid, stamp, i + 1, &stack, &scap);
        done++;
        for (size_t e = eoff[i]; e < eoff[i + 1]; e++)
            if (opid[edge[e]] == SIZE_MAX && indeg[edge[e]] > 0 && --indeg[edge[e]] == 0) HPUSH(edge[e]);
    }
#undef HPUSH
    free(ix), free(indeg), free(eoff), free(edge), free(fill), free(opid), free(heap), free(stamp), free(stack);
    return rc;
}

/* ------------------------------------------------------------ .et files */

static int read_et(const char *path, int rank, tr_cnode **out, size_t *nout, char *err, size_t errlen)
{
    tr_in *in = tr_open(path, err, errlen);
    if (!in) return -1;
    tr_cnode *nodes = NULL;
    size_t n = 0, cap = 0;
    unsigned char *buf = NULL;
    size_t bcap = 0;
    int rc = 0;
    for (long rec = 0;; rec++) {
        uint64_t len = 0;
        int c = tr_getc(in), s = 0;
        if (c < 0) break; /* clean end between records */
        for (;;) {
            len |= (uint64_t)(c & 0x7f) << s;
            if (!(c & 0x80)) break;
            s += 7;
            if (s > 35 || (c = tr_getc(in)) < 0) {
                rc = ts_err(err, errlen, "%s: rank %d: record %ld: truncated or bad length prefix", path, rank, rec);
                goto out;
            }
        }
        if (len > MAXREC) {
            rc = ts_err(err, errlen, "%s: rank %d: record %ld: length %llu is absurd", path, rank, rec,
                        (unsigned long long)len);
            goto out;
        }
        ts_grow(&buf, 1, &bcap, (size_t)len + 1);
        if (tr_read(in, buf, (size_t)len) != len) {
            rc = ts_err(err, errlen, "%s: rank %d: record %ld: truncated (%llu bytes announced)", path, rank, rec,
                        (unsigned long long)len);
            goto out;
        }
        if (rec == 0) continue; /* GlobalMetadata */
        ts_grow(&nodes, sizeof *nodes, &cap, n + 1);
        tr_cnode *x = &nodes[n++];
        memset(x, 0, sizeof *x);
        x->dur_us = -1, x->comm_type = -1, x->comm_size = -1, x->src = x->dst = -1, x->where = rec;
        pb b = {buf, buf + len};
        if (node(&b, x) < 0) {
            rc = ts_err(err, errlen, "%s: rank %d: record %ld: malformed protobuf Node", path, rank, rec);
            goto out;
        }
    }
    if (tr_error(in)) rc = ts_err(err, errlen, "%s: %s", path, tr_error(in));
out:
    tr_close(in);
    free(buf);
    if (rc) {
        tr_cnodes_free(nodes, n);
        return -1;
    }
    *out = nodes;
    *nout = n;
    return 0;
}


int tr_chakra_import(int nfiles, char *const *paths, int json, og_graph **out, char *err, size_t errlen)
{
    int *rank = ts_malloc((size_t)nfiles * sizeof *rank);
    int *seen = ts_calloc((size_t)nfiles, sizeof *seen), byname = 1;
    for (int i = 0; i < nfiles; i++) {
        rank[i] = tr_rank_from_name(paths[i]);
        if (rank[i] < 0 || rank[i] >= nfiles || seen[rank[i]]++) byname = 0;
    }
    for (int i = 0; i < nfiles && !byname; i++) rank[i] = i;
    og_graph *g = og_new(nfiles);
    int *all = ts_malloc((size_t)nfiles * sizeof *all);
    for (int i = 0; i < nfiles; i++) all[i] = i;
    int world = og_add_group(g, nfiles, all), rc = 0;
    for (int i = 0; i < nfiles && !rc; i++) {
        tr_cnode *nodes = NULL;
        size_t n = 0;
        rc = json ? tr_chakra_json_read(paths[i], rank[i], &nodes, &n, err, errlen)
                  : read_et(paths[i], rank[i], &nodes, &n, err, errlen);
        if (!rc) rc = tr_chakra_rank(g, rank[i], world, paths[i], nodes, n, err, errlen);
        tr_cnodes_free(nodes, n);
    }
    free(rank), free(seen), free(all);
    if (rc) {
        og_free(g);
        return -1;
    }
    *out = g;
    return 0;
}

static int et_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err, size_t errlen)
{
    (void)o;
    return tr_chakra_import(nfiles, paths, 0, out, err, errlen);
}

static int et_detect(const char *path, const char *head, size_t n)
{
    size_t l = strlen(path);
    if (l > 3 && !strcmp(path + l - 3, ".et")) return 1;
    /* a length prefix then GlobalMetadata field 1 (version string) */
    return n >= 3 && (unsigned char)head[0] < 0x80 && head[1] == 0x0a && (unsigned char)head[2] < 0x20 &&
           (size_t)(unsigned char)head[0] + 1 <= n && head[3] >= '0' && head[3] <= '9';
}

const tr_format tr_fmt_chakra_et = {"chakra-et", "Chakra execution trace, protobuf .et, one file per rank",
                                    et_detect, et_import};
