/* Importer for PyTorch execution traces (host "ET" JSON, schema 1.0.x) linked
 * with the Kineto trace of the same rank, as Chakra's trace linker does:
 * durations and streams from Kineto's GPU activities, dependencies from the
 * host trace (the tensors each op reads and the earlier ops that wrote them). */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define MAXJSON ((size_t)1 << 30)
#define MAXUP 16        /* ET ancestors searched for a collective's name */
#define MAXBACK 4096    /* Kineto CPU ops searched back for a launch's enclosing op */

typedef struct kcpu {   /* a Kineto cpu_op / user_annotation */
    const char *name;
    double ts, dur, tid;
    long rf;            /* args "Record function id", -1 absent */
    int et;             /* matched ET node, -1 none */
} kcpu;

typedef struct kgpu {   /* a Kineto GPU activity */
    const json_t *ev;
    const char *name;
    double ts, dur, corr;
    long stream;
    int owner;          /* ET node that launched it, -1 unknown */
} kgpu;

typedef struct klaunch { double corr, tid, ts; } klaunch;

typedef struct enode {  /* an ET node */
    long id, parent, rf;
    const char *name;
    const json_t *in, *intypes, *out;
    int first, last;    /* its GPU ops in the rank's graph, -1 none */
    double t0, t1;      /* recorded start of its first, end of its last GPU op */
} enode;

typedef struct pair {   /* one rank: an ET and its Kineto trace */
    const char *etpath, *kpath;
    json_t *etdoc, *kdoc;
    long pid;           /* ET "pid", -1 absent */
    int rank, world;
    enode *n;
    size_t nn;
    kcpu *c;
    size_t nc, ccap;
    kgpu *g;
    size_t ng, gcap;
    klaunch *l;
    size_t nl, lcap;
} pair;

/* ------------------------------------------------------------ reading */

static json_t *load(const char *path, char *err, size_t errlen)
{
    tr_in *in = tr_open(path, err, errlen);
    if (!in) return NULL;
    size_t n = 0, cap = 1 << 16;
    char *buf = ts_malloc(cap);
    size_t k;
    while ((k = tr_read(in, buf + n, cap - n)) > 0) {
        n += k;
        if (n == cap) {
            if (cap >= MAXJSON) {
                free(buf), tr_close(in);
                return ts_err(err, errlen, "%s: larger than 1 GiB", path), NULL;
            }
            ts_grow(&buf, 1, &cap, cap * 2);
        }
    }
    const char *rerr = tr_error(in);
    tr_close(in);
    if (rerr) {
        free(buf);
        return ts_err(err, errlen, "%s: %s", path, rerr), NULL;
    }
    json_error_t je;
    json_t *doc = json_loadb(buf, n, JSON_ALLOW_NUL, &je);
    free(buf);
    if (!doc) return ts_err(err, errlen, "%s:%d: %s", path, je.line, je.text), NULL;
    if (!json_is_object(doc)) {
        json_decref(doc);
        return ts_err(err, errlen, "%s: not a JSON object", path), NULL;
    }
    return doc;
}

static double numv(const json_t *v, double dflt)
{
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* An ET attribute: a top-level field (schema 1.0.1) or an attrs entry (1.0.2+). */
static const json_t *attr(const json_t *node, const char *name)
{
    const json_t *v = json_object_get(node, name), *a = json_object_get(node, "attrs");
    if (v || !json_is_array(a)) return v;
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e) {
        const json_t *nm = json_object_get(e, "name");
        if (json_is_string(nm) && !strcmp(json_string_value(nm), name)) return json_object_get(e, "value");
    }
    return NULL;
}

/* inputs/outputs: {"values", "types"} (1.0.2+) or flat lists with input_types (1.0.1). */
static void io(const json_t *node, const char *dir, const json_t **vals, const json_t **types)
{
    const json_t *v = json_object_get(node, dir);
    if (json_is_object(v)) {
        *vals = json_object_get(v, "values");
        *types = json_object_get(v, "types");
    } else {
        char k[16];
        snprintf(k, sizeof k, "%.6s_types", dir[0] == 'i' ? "input" : "output");
        *vals = v;
        *types = json_object_get(node, k);
    }
    if (!json_is_array(*vals)) *vals = NULL;
    if (!json_is_array(*types)) *types = NULL;
}

static int read_et(pair *p, char *err, size_t errlen)
{
    const json_t *nodes = json_object_get(p->etdoc, "nodes");
    if (!json_is_array(nodes))
        return ts_err(err, errlen, "%s: no \"nodes\" array (not a PyTorch execution trace)", p->etpath);
    p->pid = (long)numv(json_object_get(p->etdoc, "pid"), -1);
    p->nn = json_array_size(nodes);
    p->n = ts_calloc(p->nn ? p->nn : 1, sizeof *p->n);
    for (size_t i = 0; i < p->nn; i++) {
        const json_t *o = json_array_get(nodes, i);
        enode *e = &p->n[i];
        const json_t *id = json_object_get(o, "id"), *nm = json_object_get(o, "name");
        if (!json_is_object(o) || !json_is_integer(id) || !json_is_string(nm))
            return ts_err(err, errlen, "%s: node %zu: needs an integer \"id\" and a \"name\"", p->etpath, i);
        e->id = (long)json_integer_value(id);
        e->name = json_string_value(nm);
        const json_t *par = json_object_get(o, "parent");
        e->parent = (long)numv(par ? par : json_object_get(o, "ctrl_deps"), -1);
        e->rf = (long)numv(attr(o, "rf_id"), -1);
        const json_t *t;
        io(o, "inputs", &e->in, &e->intypes);
        io(o, "outputs", &e->out, &t);
        e->first = e->last = -1;
    }
    return 0;
}

static int is_gpu(const char *cat)
{
    return !strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset");
}

static int read_kineto(pair *p, char *err, size_t errlen)
{
    const json_t *evs = json_object_get(p->kdoc, "traceEvents");
    if (!json_is_array(evs)) return ts_err(err, errlen, "%s: no \"traceEvents\" array", p->kpath);
    const json_t *di = json_object_get(p->kdoc, "distributedInfo");
    p->rank = (int)numv(json_object_get(di, "rank"), -1);
    p->world = (int)numv(json_object_get(di, "world_size"), 0);
    if (p->rank >= (1 << 24) || p->world >= (1 << 24)) return ts_err(err, errlen, "%s: distributedInfo out of range", p->kpath);
    size_t i;
    const json_t *e;
    json_array_foreach(evs, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph")), *cat = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const json_t *args = json_object_get(e, "args");
        double ts = numv(json_object_get(e, "ts"), NAN), dur = numv(json_object_get(e, "dur"), NAN);
        if (!ph || strcmp(ph, "X") || !cat || !name || !isfinite(ts) || !(dur >= 0 && dur <= OG_MAX_DURATION * 1e6))
            continue;
        double tid = numv(json_object_get(e, "tid"), -1), corr = numv(json_object_get(args, "correlation"), -1);
        if (!strcmp(cat, "cpu_op") || !strcmp(cat, "user_annotation")) {
            ts_grow(&p->c, sizeof *p->c, &p->ccap, p->nc + 1);
            p->c[p->nc++] = (kcpu){name, ts, dur, tid, (long)numv(json_object_get(args, "Record function id"), -1), -1};
        } else if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
            if (corr >= 0) {
                ts_grow(&p->l, sizeof *p->l, &p->lcap, p->nl + 1);
                p->l[p->nl++] = (klaunch){corr, tid, ts};
            }
        } else if (is_gpu(cat)) {
            double st = numv(json_object_get(args, "stream"), -1);
            if (!(st >= 0 && st <= 1e12))
                return ts_err(err, errlen, "%s: rank %d: GPU event '%.60s' without a valid args.stream", p->kpath,
                              p->rank, name);
            ts_grow(&p->g, sizeof *p->g, &p->gcap, p->ng + 1);
            p->g[p->ng++] = (kgpu){e, name, ts, dur, corr, (long)st, -1};
        }
    }
    return 0;
}

/* ------------------------------------------------------------ linking */

static int cpu_ts_cmp(const void *a, const void *b)
{
    const kcpu *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->dur < y->dur) - (x->dur > y->dur); /* parents (longer) first */
}

static int launch_cmp(const void *a, const void *b)
{
    double x = ((const klaunch *)a)->corr, y = ((const klaunch *)b)->corr;
    return (x > y) - (x < y);
}

static int gpu_ts_cmp(const void *a, const void *b)
{
    const kgpu *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* Index arrays sorted by (name, order key) for the name-order match (qsort_r
 * comparators; arg is the pair). */
static int cpu_name_cmp(const void *a, const void *b, void *arg)
{
    const pair *p = arg;
    const kcpu *x = &p->c[*(const int *)a], *y = &p->c[*(const int *)b];
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->ts != y->ts ? (x->ts < y->ts ? -1 : 1) : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}
static int et_name_cmp(const void *a, const void *b, void *arg)
{
    const pair *p = arg;
    const enode *x = &p->n[*(const int *)a], *y = &p->n[*(const int *)b];
    int c = strcmp(x->name, y->name);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* ET node <-> Kineto CPU op. With "Record function id" in the Kineto trace
 * (PyTorch >= 2.1) the ET's rf_id names its op exactly; older traces are
 * matched the way Chakra's linker falls back: the k-th op of a name in the
 * ET (by id) is the k-th op of that name in Kineto (by start time). A match
 * needs equal names either way. Returns the number of matches. */
static int rf_cmp(const void *a, const void *b, void *arg)
{
    const pair *p = arg;
    long x = p->c[*(const int *)a].rf, y = p->c[*(const int *)b].rf;
    return (x > y) - (x < y);
}

static size_t match(pair *p)
{
    size_t m = 0, withrf = 0;
    int *ci = ts_malloc((p->nc ? p->nc : 1) * sizeof *ci), *ei = ts_malloc((p->nn ? p->nn : 1) * sizeof *ei);
    for (size_t i = 0; i < p->nc; i++) ci[i] = (int)i, withrf += p->c[i].rf >= 0;
    for (size_t i = 0; i < p->nn; i++) ei[i] = (int)i;
    if (withrf) {
        qsort_r(ci, p->nc, sizeof *ci, rf_cmp, p);
        for (size_t i = 0; i < p->nn; i++) {
            enode *e = &p->n[i];
            size_t lo = 0, hi = p->nc;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (p->c[ci[mid]].rf < e->rf) lo = mid + 1;
                else hi = mid;
            }
            if (e->rf >= 0 && lo < p->nc && p->c[ci[lo]].rf == e->rf && p->c[ci[lo]].et < 0 &&
                !strcmp(p->c[ci[lo]].name, e->name))
                p->c[ci[lo]].et = (int)i, m++;
        }
    } else {
        if (p->nc) qsort_r(ci, p->nc, sizeof *ci, cpu_name_cmp, p);
        if (p->nn) qsort_r(ei, p->nn, sizeof *ei, et_name_cmp, p);
        for (size_t a = 0, b = 0; a < p->nc && b < p->nn;) {
            int c = strcmp(p->c[ci[a]].name, p->n[ei[b]].name);
            if (c < 0) a++;
            else if (c > 0) b++;
            else p->c[ci[a++]].et = ei[b++], m++;
        }
    }
    free(ci), free(ei);
    return m;
}

/* The ET node that launched each GPU activity: its launch call (correlation
 * id) happened on some thread at some time; the innermost matched CPU op of
 * that thread enclosing that time owns it. */
static void owners(pair *p)
{
    if (p->nc) qsort(p->c, p->nc, sizeof *p->c, cpu_ts_cmp);
    if (p->nl) qsort(p->l, p->nl, sizeof *p->l, launch_cmp);
    for (size_t i = 0; i < p->ng; i++) {
        kgpu *g = &p->g[i];
        klaunch key = {g->corr, 0, 0}, *l = g->corr >= 0 && p->nl ? bsearch(&key, p->l, p->nl, sizeof *p->l, launch_cmp) : NULL;
        if (!l) continue;
        size_t lo = 0, hi = p->nc; /* first op after (tid, ts) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const kcpu *c = &p->c[mid];
            if (c->tid < l->tid || (c->tid == l->tid && c->ts <= l->ts)) lo = mid + 1;
            else hi = mid;
        }
        for (size_t k = lo, n = 0; k-- > 0 && n < MAXBACK; n++) {
            const kcpu *c = &p->c[k];
            if (c->tid != l->tid) break;
            if (c->et >= 0 && c->ts + c->dur >= l->ts) {
                g->owner = c->et;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------ the graph */

/* Call fn on every tensor of an ET value list: [id, storage, offset, numel,
 * itemsize, device] tuples, also inside tensor lists. */
static void tensors(const json_t *v, int depth, void (*fn)(const json_t *t, void *arg), void *arg)
{
    if (!json_is_array(v) || depth > 4) return;
    size_t n = json_array_size(v);
    if (n >= 5 && json_is_integer(json_array_get(v, 0)) && json_is_integer(json_array_get(v, 1)) &&
        json_is_integer(json_array_get(v, 3)) && json_is_integer(json_array_get(v, 4))) {
        fn(v, arg);
        return;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) tensors(e, depth + 1, fn, arg);
}

typedef struct sizeacc { double bytes; } sizeacc;
static void add_bytes(const json_t *t, void *arg)
{
    double numel = (double)json_integer_value(json_array_get(t, 3)), isz = (double)json_integer_value(json_array_get(t, 4));
    if (numel >= 0 && isz > 0 && isz <= 16) ((sizeacc *)arg)->bytes += numel * isz;
}

/* Index of the ET node with this id (nodes sorted by id), -1 when none. */
static int et_find(const pair *p, long id)
{
    size_t lo = 0, hi = p->nn;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->n[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < p->nn && p->n[lo].id == id ? (int)lo : -1;
}

/* A collective's type, bytes and dtype from the ET: the nearest ancestor
 * (or the node itself) named nccl:<coll> or c10d::<coll>_, sized by its
 * first input (a tensor or a tensor list). */
static int et_coll(const pair *p, int node, og_coll *c, int64_t *bytes, og_dtype *dt)
{
    for (int up = 0; node >= 0 && up < MAXUP; up++) {
        const enode *e = &p->n[node];
        const char *nm = e->name, *base = !strncmp(nm, "nccl:", 5) ? nm + 5 : !strncmp(nm, "c10d::", 6) ? nm + 6 : NULL;
        if (base && e->in && json_array_size(e->in)) {
            char b[64];
            snprintf(b, sizeof b, "%s", base);
            size_t k = strlen(b);
            if (k && b[k - 1] == '_') b[--k] = 0;
            int ct = tr_coll_from_name(b);
            sizeacc acc = {0};
            tensors(json_array_get(e->in, 0), 0, add_bytes, &acc);
            const char *ty = e->intypes ? json_string_value(json_array_get(e->intypes, 0)) : NULL;
            char tn[48] = "";
            if (ty) { /* Tensor(float), GenericList[Tensor(c10::BFloat16)] */
                const char *s = strstr(ty, "Tensor(");
                if (s) snprintf(tn, sizeof tn, "%.*s", (int)strcspn(s + 7, ")"), s + 7);
            }
            int d = tr_dtype_from_torch(tn);
            if (ct >= 0 && acc.bytes > 0 && acc.bytes <= (double)OG_MAX_BYTES) {
                *c = (og_coll)ct, *bytes = (int64_t)acc.bytes, *dt = d >= 0 ? (og_dtype)d : OG_U8;
                return 0;
            }
        }
        node = e->parent != e->id ? et_find(p, e->parent) : -1;
    }
    return -1;
}

/* The collective of a Kineto NCCL kernel that carries PyTorch's metadata. */
static int kineto_coll(const kgpu *g, og_coll *c, int64_t *bytes, og_dtype *dt)
{
    const json_t *a = json_object_get(g->ev, "args");
    const char *cn = json_string_value(json_object_get(a, "Collective name"));
    const char *dn = json_string_value(json_object_get(a, "dtype"));
    int ct = cn ? tr_coll_from_name(cn) : -1, d = dn ? tr_dtype_from_torch(dn) : -1;
    double ne = fmax(numv(json_object_get(a, "In msg nelems"), 0), numv(json_object_get(a, "Out msg nelems"), 0));
    if (ct < 0 || d < 0 || !(ne * og_dtype_size((og_dtype)d) <= (double)OG_MAX_BYTES)) return -1;
    *c = (og_coll)ct, *dt = (og_dtype)d, *bytes = (int64_t)ne * og_dtype_size((og_dtype)d);
    return 0;
}

typedef struct prod {   /* storage id -> the last ET node (with GPU ops) writing it */
    long *sid;
    int *node;          /* -1: empty slot */
    size_t mask;
} prod;

/* The slot of storage id sid (open addressing; the table never fills: it is
 * sized for every tensor of the trace). */
static size_t slot(const prod *pr, long sid)
{
    size_t h = ((uint64_t)sid * 0x9E3779B97F4A7C15ULL) >> 17 & pr->mask;
    while (pr->node[h] >= 0 && pr->sid[h] != sid) h = (h + 1) & pr->mask;
    return h;
}

static void count_tensor(const json_t *t, void *arg)
{
    (void)t;
    (*(size_t *)arg)++;
}

typedef struct depctx { pair *p; og_graph *gr; int rank, node; prod *pr; } depctx;

static void add_output(const json_t *t, void *arg)
{
    depctx *d = arg;
    long sid = (long)json_integer_value(json_array_get(t, 1));
    size_t h = slot(d->pr, sid);
    d->pr->sid[h] = sid, d->pr->node[h] = d->node;
}

/* An input tensor written by an earlier node: this node's first GPU op waits
 * for that node's last one (when the recording agrees: it had ended). */
static void add_input_dep(const json_t *t, void *arg)
{
    depctx *d = arg;
    long sid = (long)json_integer_value(json_array_get(t, 1));
    const enode *me = &d->p->n[d->node];
    size_t h = slot(d->pr, sid);
    if (d->pr->node[h] < 0) return;
    const enode *w = &d->p->n[d->pr->node[h]];
    if (w == me || w->last < 0 || me->first < 0 || w->t1 > me->t0) return;
    og_op *op = &d->gr->ranks[d->rank].ops[me->first];
    for (int i = 0; i < op->ndeps; i++)
        if (og_deps(op)[i] == w->last) return;
    og_add_dep(op, w->last);
}

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int et_id_cmp(const void *a, const void *b)
{
    const enode *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int emit(og_graph *gr, int r, pair *p, int group, char *err, size_t errlen)
{
    if (p->ng) qsort(p->g, p->ng, sizeof *p->g, gpu_ts_cmp);
    long *ids = ts_malloc((p->ng ? p->ng : 1) * sizeof *ids);
    size_t ns = 0;
    for (size_t i = 0; i < p->ng; i++) ids[i] = p->g[i].stream;
    if (p->ng) qsort(ids, p->ng, sizeof *ids, long_cmp);
    for (size_t i = 0; i < p->ng; i++)
        if (!ns || ids[ns - 1] != ids[i]) ids[ns++] = ids[i];
    if (ns > OG_MAX_STREAMS) {
        free(ids);
        return ts_err(err, errlen, "%s: rank %d: %zu GPU streams (at most %d)", p->kpath, r, ns, OG_MAX_STREAMS);
    }
    for (size_t i = 0; i < p->ng; i++) {
        kgpu *g = &p->g[i];
        int s = (int)((long *)bsearch(&g->stream, ids, ns, sizeof *ids, long_cmp) - ids);
        og_coll c;
        int64_t bytes;
        og_dtype dt;
        og_op *op;
        int nccl = !strncmp(g->name, "nccl", 4) || !strncmp(g->name, "rccl", 4);
        if (nccl && (kineto_coll(g, &c, &bytes, &dt) == 0 || et_coll(p, g->owner, &c, &bytes, &dt) == 0))
            op = og_collective(gr, r, s, c, group, bytes, dt);
        else
            op = og_compute_fixed(gr, r, s, g->dur * 1e-6);
        char lab[128];
        snprintf(lab, sizeof lab, "%.*s%s", (int)strcspn(g->name, "("), g->name,
                 nccl && op->kind == OG_COMPUTE ? " (no size metadata)" : "");
        og_set_label(gr, op, lab);
        if (g->owner >= 0) {
            enode *e = &p->n[g->owner];
            if (e->first < 0) e->first = op->id, e->t0 = g->ts;
            e->last = op->id, e->t1 = fmax(e->t1, g->ts + g->dur);
        }
    }
    free(ids);
    /* dependencies from the host trace, in ET order (ids follow execution) */
    size_t nt = 0, cap = 16;
    for (size_t i = 0; i < p->nn; i++)
        if (p->n[i].first >= 0 && p->n[i].out) tensors(p->n[i].out, 0, count_tensor, &nt);
    while (cap < 2 * nt + 2) cap *= 2;
    prod pr = {ts_malloc(cap * sizeof *pr.sid), ts_malloc(cap * sizeof *pr.node), cap - 1};
    for (size_t i = 0; i < cap; i++) pr.node[i] = -1;
    for (size_t i = 0; i < p->nn; i++) {
        enode *e = &p->n[i];
        if (e->first < 0) continue;
        depctx d = {p, gr, r, (int)i, &pr};
        if (e->in) tensors(e->in, 0, add_input_dep, &d);
        if (e->out) tensors(e->out, 0, add_output, &d);
    }
    free(pr.sid), free(pr.node);
    return 0;
}

static void pair_free(pair *p)
{
    json_decref(p->etdoc), json_decref(p->kdoc);
    free(p->n), free(p->c), free(p->g), free(p->l);
}

/* The files, each an ET or a Kineto trace, paired by process id (ET "pid",
 * Kineto events' pid), else in the order given. */
static int pair_files(int nfiles, char *const *paths, pair **out, int *npairs, char *err, size_t errlen)
{
    json_t **docs = ts_calloc((size_t)nfiles, sizeof *docs);
    int net = 0, nk = 0, rc = -1;
    for (int i = 0; i < nfiles; i++) {
        if (!(docs[i] = load(paths[i], err, errlen))) goto out;
        if (json_object_get(docs[i], "nodes")) net++;
        else if (json_object_get(docs[i], "traceEvents")) nk++;
        else {
            ts_err(err, errlen, "%s: neither a PyTorch execution trace (\"nodes\") nor a Kineto trace (\"traceEvents\")",
                   paths[i]);
            goto out;
        }
    }
    if (net != nk || !net) {
        ts_err(err, errlen, "%s: a PyTorch execution trace is read with the Kineto trace of the same rank (durations "
               "come from it): give one of each per rank (%d execution traces, %d Kineto traces given)",
               paths[0], net, nk);
        goto out;
    }
    pair *ps = ts_calloc((size_t)net, sizeof *ps);
    int k = 0;
    for (int i = 0; i < nfiles; i++)
        if (json_object_get(docs[i], "nodes")) {
            ps[k].etpath = paths[i], ps[k].etdoc = docs[i], docs[i] = NULL;
            ps[k].pid = (long)numv(json_object_get(ps[k].etdoc, "pid"), -1);
            k++;
        }
    /* Kineto files: by pid of their first event carrying one, else in order */
    for (int i = 0; i < nfiles; i++) {
        if (!docs[i]) continue;
        long pid = -1;
        const json_t *evs = json_object_get(docs[i], "traceEvents");
        for (size_t e = 0; e < json_array_size(evs) && pid < 0; e++) {
            const json_t *ev = json_array_get(evs, e);
            const char *cat = json_string_value(json_object_get(ev, "cat"));
            if (cat && !strcmp(cat, "cpu_op")) pid = (long)numv(json_object_get(ev, "pid"), -1);
        }
        int at = -1;
        for (int j = 0; j < net && at < 0; j++)
            if (!ps[j].kdoc && ps[j].pid >= 0 && ps[j].pid == pid) at = j;
        for (int j = 0; j < net && at < 0; j++)
            if (!ps[j].kdoc) at = j;
        ps[at].kpath = paths[i], ps[at].kdoc = docs[i], docs[i] = NULL;
    }
    *out = ps, *npairs = net;
    rc = 0;
out:
    for (int i = 0; i < nfiles; i++) json_decref(docs[i]);
    free(docs);
    return rc;
}

static int pair_rank_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int et_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err, size_t errlen)
{
    (void)o;
    pair *ps = NULL;
    int np = 0, rc = -1;
    og_graph *g = NULL;
    if (pair_files(nfiles, paths, &ps, &np, err, errlen) < 0) return -1;
    for (int i = 0; i < np; i++) {
        if (read_et(&ps[i], err, errlen) < 0 || read_kineto(&ps[i], err, errlen) < 0) goto out;
        if (ps[i].rank < 0) ps[i].rank = i;
        qsort(ps[i].n, ps[i].nn, sizeof *ps[i].n, et_id_cmp);
    }
    qsort(ps, (size_t)np, sizeof *ps, pair_rank_cmp);
    for (int i = 0; i < np; i++) {
        if (i && ps[i].rank == ps[i - 1].rank) {
            ts_err(err, errlen, "%s and %s: both are rank %d", ps[i - 1].kpath, ps[i].kpath, ps[i].rank);
            goto out;
        }
        if (!ps[i].ng) {
            ts_err(err, errlen, "%s: rank %d: nothing to simulate: no GPU kernel, memcpy or memset in the Kineto trace",
                   ps[i].kpath, ps[i].rank);
            goto out;
        }
        if (match(&ps[i]) == 0) {
            ts_err(err, errlen, "%s and %s: no operator of the execution trace matches one of the Kineto trace "
                   "(not recorded in the same run and step?)", ps[i].etpath, ps[i].kpath);
            goto out;
        }
        owners(&ps[i]);
    }
    g = og_new(np);
    int *all = ts_malloc((size_t)np * sizeof *all);
    for (int i = 0; i < np; i++) all[i] = i;
    int group = og_add_group(g, np, all);
    free(all);
    for (int i = 0; i < np; i++)
        if (emit(g, i, &ps[i], group, err, errlen) < 0) goto out;
    *out = g;
    g = NULL;
    rc = 0;
out:
    og_free(g);
    for (int i = 0; i < np; i++) pair_free(&ps[i]);
    free(ps);
    return rc;
}

static int et_detect(const char *path, const char *head, size_t n)
{
    (void)path;
    return memmem(head, n, "\"nodes\"", 7) && memmem(head, n, "\"schema\"", 8) && !memmem(head, n, "\"traceEvents\"", 13);
}

const tr_format tr_fmt_pytorch_et = {
    "pytorch-et",
    "PyTorch execution trace (host ET JSON, schema 1.0.x) with the Kineto trace of each rank, linked as Chakra does",
    et_detect, et_import};
