/* Importer for Kineto / PyTorch-profiler Chrome traces (one JSON or .json.gz per
 * rank), streamed event by event: GPU kernels become fixed-duration COMPUTE ops
 * on their streams, NCCL/RCCL kernels with collective metadata become COLL ops;
 * optionally one ProfilerStep#N iteration, and host gaps as CPU-stream delays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsontok.h"
#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define SMAX 4096      /* longest string kept (kernel names are truncated) */
#define LABELMAX 96
#define MAXPGRANKS 65536
#define MAXDIMDEPTH 8  /* Input Dims nesting: tensor, tensor list, list of lists... */

typedef struct pg {    /* a process group as one rank's file describes it */
    char *name;
    int n;
    int *ranks;        /* global ranks */
} pg;

typedef struct rec {   /* one GPU activity */
    double ts, dur;    /* microseconds */
    long stream;
    long line;
    char *label;
    int nccl;          /* 1: NCCL kernel */
    int coll;          /* og_coll or -1 (no metadata / point-to-point) */
    int dtype;
    int64_t nelems;
    int pg;            /* index in the file's pgs, -1 none */
    int gsize;         /* "Group size", -1 absent */
    size_t seq;
    double corr;       /* args.correlation: links the kernel to its launch */
    int acoll, adtype; /* from the enclosing nccl:* CPU annotation, -1 none */
    int64_t anelems;
} rec;

typedef struct launch { double corr, tid, ts; } launch;   /* cuda_runtime launch */
typedef struct step { long num; double ts, dur; } step;  /* ProfilerStep#num, microseconds */
typedef struct annot {                                     /* nccl:* CPU annotation */
    double tid, ts, dur;
    int coll, dtype;
    int64_t nelems;
} annot;

typedef struct rfile { /* one rank's file */
    const char *path;
    int rank, world;
    rec *recs;
    size_t n, cap;
    pg *pgs;
    size_t npg, pgcap;
    launch *launches;
    size_t nl, lcap;
    annot *annots;
    size_t na, acap;
    step *steps;
    size_t nst, stcap;
    long ncpu, ngloo;  /* CPU-side events, those naming gloo (nothing-to-simulate message) */
} rfile;

typedef struct evt {   /* fields of the event being read */
    char ph[8], cat[32], name[LABELMAX + 1], cname[64], dtype[32], pgname[128];
    char *pgranks;
    char itype[32];
    double ts, dur, stream, in, out, gsize, tid, corr, idims;
    int has_ts, has_dur, has_stream, has_in, has_out, has_gsize, has_cname, has_tid, has_corr, has_idims;
} evt;

static int jerr(const rfile *f, const jt *t, char *err, size_t errlen)
{
    const char *what = t->err[0] ? t->err : "unexpected token";
    if (f->rank >= 0) return ts_err(err, errlen, "%s:%ld: rank %d: %s", f->path, t->line, f->rank, what);
    return ts_err(err, errlen, "%s:%ld: %s", f->path, t->line, what);
}

/* Bounded string copy (truncates; snprintf was a tenth of the import time). */
static void copy(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    for (; i + 1 < n && s[i]; i++) dst[i] = s[i];
    dst[i] = 0;
}

/* Parse "[0, 1, 2]" into ranks; -1 on a malformed list. */
static int parse_ranks(const char *s, int **out)
{
    int n = 0, cap = 0, *r = NULL;
    const char *p = s;
    while (*p == ' ') p++;
    if (*p++ != '[') return -1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ']') break;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= (1 << 24) || n >= MAXPGRANKS) {
            free(r);
            return -1;
        }
        if (n == cap) {
            size_t c = (size_t)cap;
            ts_grow(&r, sizeof *r, &c, (size_t)n + 1);
            cap = (int)c;
        }
        r[n++] = (int)v;
        p = end;
    }
    *out = r;
    return n;
}

/* Elements of one "Input Dims" entry whose '[' was just read: a tensor's
 * dims [4,2048,4096] (their product), or a tensor list [[4,2048,4096],[16]]
 * (the sum of its tensors' elements), nested up to MAXDIMDEPTH. */
static int dims_elems(jt *t, int depth, double *out)
{
    double prod = 1, sum = 0;
    int lists = 0;
    if (depth > MAXDIMDEPTH) return -1;
    for (;;) {
        jt_kind x = jt_next(t);
        if (x == JT_ARR_END) break;
        if (x == JT_NUM) {
            prod *= t->num;
        } else if (x == JT_ARR) {
            double v;
            if (dims_elems(t, depth + 1, &v) < 0) return -1;
            sum += v, lists = 1;
        } else if (x == JT_ERR || x == JT_EOF || x == JT_OBJ_END || jt_skip(t, x) < 0) {
            return -1;
        }
    }
    *out = lists ? sum : prod;
    return 0;
}

static int args_obj(jt *t, evt *e)
{
    for (;;) {
        jt_kind k = jt_next(t);
        if (k == JT_OBJ_END) return 0;
        if (k != JT_STR) return -1;
        char key[64];
        copy(key, sizeof key, t->s);
        k = jt_next(t);
        if (k == JT_ERR || k == JT_EOF || k == JT_OBJ_END || k == JT_ARR_END) return -1;
        if (k == JT_NUM) {
            if (!strcmp(key, "stream")) e->stream = t->num, e->has_stream = 1;
            else if (!strcmp(key, "In msg nelems")) e->in = t->num, e->has_in = 1;
            else if (!strcmp(key, "Out msg nelems")) e->out = t->num, e->has_out = 1;
            else if (!strcmp(key, "Group size")) e->gsize = t->num, e->has_gsize = 1;
            else if (!strcmp(key, "correlation")) e->corr = t->num, e->has_corr = 1;
        } else if (k == JT_ARR && (!strcmp(key, "Input Dims") || !strcmp(key, "Input type"))) {
            /* only the first input: its dims (product) or its type */
            int dims = key[6] == 'D';
            jt_kind x = jt_next(t);
            if (dims && x == JT_ARR) {
                if (dims_elems(t, 1, &e->idims) < 0) return -1;
                e->has_idims = 1;
                x = jt_next(t);
            } else if (!dims && x == JT_STR) {
                copy(e->itype, sizeof e->itype, t->s);
                x = jt_next(t);
            }
            while (x != JT_ARR_END) {
                if (x == JT_ERR || x == JT_EOF || x == JT_OBJ_END || jt_skip(t, x) < 0) return -1;
                x = jt_next(t);
            }
        } else if (k == JT_STR) {
            if (!strcmp(key, "Collective name")) copy(e->cname, sizeof e->cname, t->s), e->has_cname = 1;
            else if (!strcmp(key, "dtype")) copy(e->dtype, sizeof e->dtype, t->s);
            else if (!strcmp(key, "Process Group Name")) copy(e->pgname, sizeof e->pgname, t->s);
            else if (!strcmp(key, "Process Group Ranks")) {
                free(e->pgranks);
                e->pgranks = ts_strdup(t->s);
            }
        } else if (jt_skip(t, k) < 0) {
            return -1;
        }
    }
}

/* Read one event object (its '{' already consumed) into e. */
static int event_obj(jt *t, evt *e)
{
    for (;;) {
        jt_kind k = jt_next(t);
        if (k == JT_OBJ_END) return 0;
        if (k != JT_STR) return -1;
        char key[16];
        copy(key, sizeof key, t->s);
        k = jt_next(t);
        if (k == JT_ERR || k == JT_EOF || k == JT_OBJ_END || k == JT_ARR_END) return -1;
        if (k == JT_STR) {
            if (!strcmp(key, "ph")) copy(e->ph, sizeof e->ph, t->s);
            else if (!strcmp(key, "cat")) copy(e->cat, sizeof e->cat, t->s);
            else if (!strcmp(key, "name")) {
                size_t l = strcspn(t->s, "(");
                if (l > LABELMAX) l = LABELMAX;
                memcpy(e->name, t->s, l);
                e->name[l] = 0;
            }
        } else if (k == JT_NUM) {
            if (!strcmp(key, "ts")) e->ts = t->num, e->has_ts = 1;
            else if (!strcmp(key, "dur")) e->dur = t->num, e->has_dur = 1;
            else if (!strcmp(key, "tid")) e->tid = t->num, e->has_tid = 1;
        } else if (k == JT_OBJ && !strcmp(key, "args")) {
            if (args_obj(t, e) < 0) return -1;
        } else if (jt_skip(t, k) < 0) {
            return -1;
        }
    }
}

static int is_gpu(const char *cat)
{
    return !strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset") ||
           !strcmp(cat, "Kernel") || !strcmp(cat, "Memcpy") || !strcmp(cat, "Memset");
}

static int find_pg(rfile *f, const char *name, const char *ranks, char *err, size_t errlen, long line)
{
    int *r = NULL, n = parse_ranks(ranks, &r);
    if (n <= 0) {
        free(r);
        return ts_err(err, errlen, "%s:%ld: rank %d: malformed 'Process Group Ranks' '%.60s'", f->path, line,
                      f->rank, ranks);
    }
    for (size_t i = 0; i < f->npg; i++)
        if (!strcmp(f->pgs[i].name, name)) {
            if (f->pgs[i].n != n || memcmp(f->pgs[i].ranks, r, (size_t)n * sizeof *r)) {
                free(r);
                return ts_err(err, errlen, "%s:%ld: rank %d: process group '%s' changes its ranks within the file",
                              f->path, line, f->rank, name);
            }
            free(r);
            return (int)i;
        }
    ts_grow(&f->pgs, sizeof *f->pgs, &f->pgcap, f->npg + 1);
    f->pgs[f->npg] = (pg){ts_strdup(name), n, r};
    return (int)f->npg++;
}

static int add_event(rfile *f, evt *e, long line, char *err, size_t errlen)
{
    if (strcmp(e->ph, "X")) return 0;
    if (!strncmp(e->name, "ProfilerStep#", 13) && !is_gpu(e->cat)) {
        char *end;
        long num = strtol(e->name + 13, &end, 10);
        if (end != e->name + 13 && !*end && num >= 0 && e->has_ts && e->has_dur && isfinite(e->ts) && e->dur >= 0 &&
            e->dur <= OG_MAX_DURATION * 1e6) {
            ts_grow(&f->steps, sizeof *f->steps, &f->stcap, f->nst + 1);
            f->steps[f->nst++] = (step){num, e->ts, e->dur};
        }
        return 0;
    }
    if (!is_gpu(e->cat)) {
        f->ncpu++;
        f->ngloo += strstr(e->name, "gloo") != NULL;
    }
    if (!strcmp(e->cat, "cuda_runtime") || !strcmp(e->cat, "Runtime") || !strcmp(e->cat, "cuda_driver")) {
        if (e->has_corr && e->has_tid && e->has_ts) {
            ts_grow(&f->launches, sizeof *f->launches, &f->lcap, f->nl + 1);
            f->launches[f->nl++] = (launch){e->corr, e->tid, e->ts};
        }
        return 0;
    }
    if (!strncmp(e->name, "nccl:", 5) && !is_gpu(e->cat)) {
        int c = tr_coll_from_name(e->name + 5), dt = tr_dtype_from_torch(e->itype);
        if (c >= 0 && dt >= 0 && e->has_idims && e->has_tid && e->has_ts && e->has_dur && e->idims >= 0 &&
            e->idims * og_dtype_size(dt) <= (double)OG_MAX_BYTES) {
            ts_grow(&f->annots, sizeof *f->annots, &f->acap, f->na + 1);
            f->annots[f->na++] = (annot){e->tid, e->ts, e->dur, c, dt, (int64_t)e->idims};
        }
        return 0;
    }
    if (!is_gpu(e->cat)) return 0;
    if (!e->has_ts || !e->has_dur || !isfinite(e->ts) || !isfinite(e->dur) || e->dur < 0 || e->dur > OG_MAX_DURATION * 1e6)
        return ts_err(err, errlen, "%s:%ld: rank %d: GPU event '%s' without a valid ts and dur", f->path, line,
                      f->rank, e->name);
    if (!e->has_stream || e->stream < 0 || e->stream > 1e12)
        return ts_err(err, errlen, "%s:%ld: rank %d: GPU event '%s' without a valid args.stream", f->path, line,
                      f->rank, e->name);
    ts_grow(&f->recs, sizeof *f->recs, &f->cap, f->n + 1);
    rec *r = &f->recs[f->n];
    *r = (rec){e->ts, e->dur, (long)e->stream, line, NULL, 0, -1, OG_F32, 0, -1, -1, f->n,
               e->has_corr ? e->corr : -1, -1, OG_F32, 0};
    /* NCCL kernels (ncclKernel_*, ncclDevKernel_*), RCCL's on ROCm (the same
     * names, or rccl*) */
    r->nccl = !strncmp(e->name, "nccl", 4) || !strncmp(e->name, "rccl", 4);
    if (r->nccl && e->has_cname) {
        int c = tr_coll_from_name(e->cname);
        static const char *const p2p[] = {"send", "recv", "gather", "scatter", "coalesced", "sendrecv"};
        int isp2p = 0;
        for (size_t i = 0; i < sizeof p2p / sizeof p2p[0]; i++) isp2p |= !strcmp(e->cname, p2p[i]);
        if (c < 0 && !isp2p)
            return ts_err(err, errlen, "%s:%ld: rank %d: unknown collective name '%s'", f->path, line, f->rank,
                          e->cname);
        if (c >= 0) {
            int dt = tr_dtype_from_torch(e->dtype);
            if (dt < 0)
                return ts_err(err, errlen, "%s:%ld: rank %d: unknown dtype '%s' on collective '%s'", f->path, line,
                              f->rank, e->dtype, e->cname);
            double ne = fmax(e->has_in ? e->in : 0, e->has_out ? e->out : 0);
            if (!(ne >= 0) || ne * og_dtype_size(dt) > (double)OG_MAX_BYTES)
                return ts_err(err, errlen, "%s:%ld: rank %d: collective '%s' has an absurd element count %g",
                              f->path, line, f->rank, e->cname, ne);
            if (e->has_gsize && (e->gsize < 1 || e->gsize > MAXPGRANKS))
                return ts_err(err, errlen, "%s:%ld: rank %d: group size %g out of range", f->path, line, f->rank,
                              e->gsize);
            r->coll = c, r->dtype = dt, r->nelems = (int64_t)ne;
            r->gsize = e->has_gsize ? (int)e->gsize : -1;
            if (e->pgranks) {
                int p = find_pg(f, e->pgname, e->pgranks, err, errlen, line);
                if (p < 0) return -1;
                r->pg = p;
                if (r->gsize >= 0 && r->gsize != f->pgs[p].n)
                    return ts_err(err, errlen, "%s:%ld: rank %d: 'Group size' %d but process group '%s' lists %d ranks",
                                  f->path, line, f->rank, r->gsize, e->pgname, f->pgs[p].n);
            }
        }
    }
    char lab[LABELMAX + 80];
    if (r->nccl && r->coll < 0 && e->has_cname)
        snprintf(lab, sizeof lab, "%s (point-to-point, no peer)", e->name);
    else
        copy(lab, sizeof lab, e->name);
    r->label = ts_strdup(lab);
    f->n++;
    return 0;
}

static int launch_cmp(const void *a, const void *b)
{
    double x = ((const launch *)a)->corr, y = ((const launch *)b)->corr;
    return (x > y) - (x < y);
}

static int annot_cmp(const void *a, const void *b)
{
    double x = ((const annot *)a)->ts, y = ((const annot *)b)->ts;
    return (x > y) - (x < y);
}

/* Older traces carry no size on NCCL kernels: the kernel's launch (same
 * correlation id) happened inside a nccl:<collective> CPU annotation whose first
 * input's dims and type give the size. */
static void link_annotations(rfile *f)
{
    if (f->nl) qsort(f->launches, f->nl, sizeof *f->launches, launch_cmp);
    if (!f->nl || !f->na) return;
    qsort(f->annots, f->na, sizeof *f->annots, annot_cmp);
    for (size_t i = 0; i < f->n; i++) {
        rec *r = &f->recs[i];
        if (!r->nccl || r->coll >= 0 || r->corr < 0) continue;
        launch key = {r->corr, 0, 0}, *l = bsearch(&key, f->launches, f->nl, sizeof *f->launches, launch_cmp);
        if (!l) continue;
        /* last annotation starting at or before the launch, then back over a few */
        size_t lo = 0, hi = f->na;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (f->annots[mid].ts <= l->ts) lo = mid + 1;
            else hi = mid;
        }
        for (size_t k = lo, n = 0; k-- > 0 && n < 64; n++) {
            const annot *a = &f->annots[k];
            if (a->tid == l->tid && a->ts + a->dur >= l->ts) {
                r->acoll = a->coll, r->adtype = a->dtype, r->anelems = a->nelems;
                break;
            }
        }
    }
}

static int read_rank_file(rfile *f, char *err, size_t errlen)
{
    tr_in *in = tr_open(f->path, err, errlen);
    if (!in) return -1;
    jt t;
    jt_init(&t, in, SMAX);
    evt e = {0};
    int rc = -1;
    jt_kind k = jt_next(&t);
    if (k != JT_OBJ) {
        jerr(f, &t, err, errlen);
        goto out;
    }
    for (;;) {
        k = jt_next(&t);
        if (k == JT_OBJ_END) break;
        if (k != JT_STR) {
            jerr(f, &t, err, errlen);
            goto out;
        }
        if (!strcmp(t.s, "traceEvents")) {
            if (jt_next(&t) != JT_ARR) {
                jerr(f, &t, err, errlen);
                goto out;
            }
            for (;;) {
                k = jt_next(&t);
                if (k == JT_ARR_END) break;
                if (k != JT_OBJ) {
                    if (jt_skip(&t, k) < 0 || k == JT_EOF || k == JT_OBJ_END) {
                        jerr(f, &t, err, errlen);
                        goto out;
                    }
                    continue;
                }
                free(e.pgranks);
                memset(&e, 0, sizeof e);
                long line = t.line;
                if (event_obj(&t, &e) < 0) {
                    jerr(f, &t, err, errlen);
                    goto out;
                }
                if (add_event(f, &e, line, err, errlen) < 0) goto out;
            }
        } else if (!strcmp(t.s, "distributedInfo")) {
            if (jt_next(&t) != JT_OBJ) {
                jerr(f, &t, err, errlen);
                goto out;
            }
            for (;;) {
                k = jt_next(&t);
                if (k == JT_OBJ_END) break;
                if (k != JT_STR) {
                    jerr(f, &t, err, errlen);
                    goto out;
                }
                int isrank = !strcmp(t.s, "rank"), isws = !strcmp(t.s, "world_size");
                k = jt_next(&t);
                if ((isrank || isws) && k == JT_NUM) {
                    if (!(t.num >= 0 && t.num < (1 << 24))) {
                        ts_err(err, errlen, "%s:%ld: distributedInfo %s %g out of range", f->path, t.line,
                               isrank ? "rank" : "world_size", t.num);
                        goto out;
                    }
                    if (isrank) f->rank = (int)t.num;
                    else f->world = (int)t.num;
                } else if (k == JT_OBJ_END || k == JT_ARR_END || k == JT_EOF || jt_skip(&t, k) < 0) {
                    jerr(f, &t, err, errlen);
                    goto out;
                }
            }
        } else {
            k = jt_next(&t);
            if (k == JT_OBJ_END || k == JT_ARR_END || k == JT_EOF || jt_skip(&t, k) < 0) {
                jerr(f, &t, err, errlen);
                goto out;
            }
        }
    }
    link_annotations(f);
    rc = 0;
out:
    free(e.pgranks);
    jt_free(&t);
    tr_close(in);
    return rc;
}

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Host time at which r was launched (its cuda_runtime/driver call, matched by
 * correlation id), or -1 when the trace does not say. */
static double launch_ts(const rfile *f, const rec *r)
{
    if (r->corr < 0 || !f->nl) return -1;
    launch key = {r->corr, 0, 0};
    const launch *l = bsearch(&key, f->launches, f->nl, sizeof *f->launches, launch_cmp);
    return l ? l->ts : -1;
}

/* Keep only the records of iteration ProfilerStep#num (those launched within
 * its span; kernels without a known launch: those starting within it), and
 * set the span [*t0, *t1] of what is kept (microseconds). */
static int select_step(rfile *f, const tr_opts *o, double *t0, double *t1, char *err, size_t errlen)
{
    *t0 = INFINITY, *t1 = -INFINITY;
    const step *st = NULL;
    if (o->one_step) {
        for (size_t i = 0; i < f->nst; i++)
            if (f->steps[i].num == o->step) st = &f->steps[i];
        if (!st) {
            char list[256] = "";
            size_t k = 0;
            for (size_t i = 0; i < f->nst && k + 24 < sizeof list; i++)
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%ld", i ? ", " : "", f->steps[i].num);
            return ts_err(err, errlen, "%s: rank %d: no ProfilerStep#%ld in the trace (%s%s)", f->path, f->rank,
                          o->step, f->nst ? "steps: " : "it has no ProfilerStep annotations",
                          list);
        }
        *t0 = st->ts, *t1 = st->ts + st->dur;
    }
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        rec *r = &f->recs[i];
        double l = launch_ts(f, r), at = l >= 0 ? l : r->ts;
        if (st && !(at >= st->ts && at <= st->ts + st->dur)) {
            free(r->label);
            continue;
        }
        if (!st) {
            *t0 = fmin(*t0, at);
            *t1 = fmax(*t1, r->ts + r->dur);
        }
        f->recs[k++] = *r;
    }
    f->n = k;
    for (size_t i = 0; !st && i < f->nst; i++) /* the whole trace: its steps too */
        *t0 = fmin(*t0, f->steps[i].ts), *t1 = fmax(*t1, f->steps[i].ts + f->steps[i].dur);
    if (!(*t1 >= *t0)) *t0 = *t1 = 0;
    return 0;
}

/* Seconds within [t0, t1] when no kept GPU activity runs (recs sorted by ts). */
static double gpu_idle(const rfile *f, double t0, double t1)
{
    double busy = 0, cur0 = 0, cur1 = -INFINITY;
    for (size_t i = 0; i < f->n; i++) {
        double a = fmax(f->recs[i].ts, t0), b = fmin(f->recs[i].ts + f->recs[i].dur, t1);
        if (b <= a) continue;
        if (a > cur1) {
            if (cur1 > cur0) busy += cur1 - cur0;
            cur0 = a, cur1 = b;
        } else if (b > cur1) {
            cur1 = b;
        }
    }
    if (cur1 > cur0) busy += cur1 - cur0;
    return fmax(0, (t1 - t0) - busy) * 1e-6;
}

/* Host gaps replayed: one CPU stream of fixed delays, from t0 through every
 * distinct launch time to t1; a kernel depends on the delay ending at its
 * launch, so it starts no earlier than recorded. Returns the launch times
 * (sorted; *nl of them): CPU op k ends at lt[k] and has op id k. */
static double *cpu_stream(og_graph *g, int ri, const rfile *f, int stream, double t0, double t1, size_t *nl)
{
    double *lt = ts_malloc((f->n ? f->n : 1) * sizeof *lt);
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        double l = launch_ts(f, &f->recs[i]);
        if (l >= 0) lt[n++] = fmax(l, t0);
    }
    if (n) qsort(lt, n, sizeof *lt, double_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || lt[k - 1] != lt[i]) lt[k++] = lt[i];
    double prev = t0;
    for (size_t i = 0; i < k; i++) {
        og_op *op = og_compute_fixed(g, ri, stream, (lt[i] - prev) * 1e-6);
        og_set_label(g, op, "host gap");
        prev = lt[i];
    }
    if (t1 > prev) og_set_label(g, og_compute_fixed(g, ri, stream, (t1 - prev) * 1e-6), "host gap (to step end)");
    *nl = k;
    return lt;
}

/* Emit rank ri's ops: streams numbered by id order; an op depends on the last
 * op of every other stream that had ended when it started (the recorded order). */
static int emit(og_graph *g, int ri, rfile *f, const int *grp_of_pg, int use_annot, const tr_opts *o, char *err,
                size_t errlen)
{
    double t0, t1;
    if (f->n) qsort(f->recs, f->n, sizeof *f->recs, rec_cmp);
    if (select_step(f, o, &t0, &t1, err, errlen) < 0) return -1;
    if (o->info) {
        tr_info *in = o->info;
        in->recorded = fmax(in->recorded, (t1 - t0) * 1e-6);
        in->host_gap = fmax(in->host_gap, gpu_idle(f, t0, t1));
        in->gaps_replayed = o->host_gaps;
    }
    long *ids = ts_malloc((f->n ? f->n : 1) * sizeof *ids);
    size_t ns = 0;
    for (size_t i = 0; i < f->n; i++) ids[i] = f->recs[i].stream;
    if (f->n) qsort(ids, f->n, sizeof *ids, long_cmp);
    for (size_t i = 0; i < f->n; i++)
        if (!ns || ids[ns - 1] != ids[i]) ids[ns++] = ids[i];
    if (ns + (o->host_gaps != 0) > OG_MAX_STREAMS) {
        free(ids);
        return ts_err(err, errlen, "%s: rank %d: %zu GPU streams%s (at most %d)", f->path, f->rank, ns,
                      o->host_gaps ? " and the host's" : "", OG_MAX_STREAMS);
    }
    size_t nlt = 0;
    double *lt = o->host_gaps ? cpu_stream(g, ri, f, (int)ns, t0, t1, &nlt) : NULL;
    int last[OG_MAX_STREAMS], prev[OG_MAX_STREAMS];
    double lend[OG_MAX_STREAMS], pend[OG_MAX_STREAMS];
    static int dep[OG_MAX_STREAMS][OG_MAX_STREAMS];
    for (size_t s = 0; s < ns; s++) {
        last[s] = prev[s] = -1;
        for (size_t k = 0; k < ns; k++) dep[s][k] = -1;
    }
    for (size_t i = 0; i < f->n; i++) {
        rec *r = &f->recs[i];
        int s = (int)((long *)bsearch(&r->stream, ids, ns, sizeof *ids, long_cmp) - ids);
        og_op *op;
        if (r->coll >= 0) {
            int gid = grp_of_pg[r->pg < 0 ? (int)f->npg : r->pg];
            op = og_collective(g, ri, s, (og_coll)r->coll, gid, r->nelems * og_dtype_size(r->dtype), r->dtype);
        } else if (use_annot && r->acoll >= 0) {
            op = og_collective(g, ri, s, (og_coll)r->acoll, grp_of_pg[f->npg], r->anelems * og_dtype_size(r->adtype),
                               r->adtype);
        } else {
            op = og_compute_fixed(g, ri, s, r->dur * 1e-6);
        }
        if (op->kind == OG_COMPUTE && r->nccl && !strstr(r->label, "(point")) {
            char lab[LABELMAX + 80];
            snprintf(lab, sizeof lab, "%s (no size metadata)", r->label);
            og_set_label(g, op, lab);
        } else {
            og_set_label(g, op, r->label);
        }
        for (size_t q = 0; q < ns; q++) {
            if ((int)q == s) continue;
            int d = last[q] >= 0 && lend[q] <= r->ts ? last[q] : prev[q] >= 0 && pend[q] <= r->ts ? prev[q] : -1;
            if (d > dep[s][q]) {
                og_add_dep(op, d);
                dep[s][q] = d;
            }
        }
        double l = lt ? launch_ts(f, r) : -1;
        if (l >= 0) {
            l = fmax(l, t0);
            double *at = bsearch(&l, lt, nlt, sizeof *lt, double_cmp);
            if (at) og_add_dep(op, (int)(at - lt));
        }
        prev[s] = last[s], pend[s] = lend[s];
        last[s] = op->id, lend[s] = r->ts + r->dur;
    }
    free(ids);
    free(lt);
    return 0;
}

static int rfile_cmp(const void *a, const void *b)
{
    const rfile *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The iterations of all files (numbers ascending, longest recorded span). */
static void steps_info(const rfile *fs, int nfiles, tr_info *in)
{
    for (int i = 0; i < nfiles; i++)
        for (size_t k = 0; k < fs[i].nst; k++) {
            const step *st = &fs[i].steps[k];
            int j = 0;
            while (j < in->nsteps && in->step[j] < st->num) j++;
            if (j < in->nsteps && in->step[j] == st->num) {
                in->step_span[j] = fmax(in->step_span[j], st->dur * 1e-6);
                continue;
            }
            if (in->nsteps == TR_MAXSTEPS) continue;
            memmove(&in->step[j + 1], &in->step[j], (size_t)(in->nsteps - j) * sizeof in->step[0]);
            memmove(&in->step_span[j + 1], &in->step_span[j], (size_t)(in->nsteps - j) * sizeof in->step_span[0]);
            in->step[j] = st->num, in->step_span[j] = st->dur * 1e-6;
            in->nsteps++;
        }
}

/* A trace without GPU activity (CPU-only, gloo) simulates to nothing: an
 * error naming what the files hold instead. */
static int nothing_to_simulate(const rfile *fs, int nfiles, const tr_opts *o, char *err, size_t errlen)
{
    long cpu = 0, gloo = 0;
    for (int i = 0; i < nfiles; i++) {
        if (fs[i].n) return 0;
        cpu += fs[i].ncpu, gloo += fs[i].ngloo;
    }
    char stepmsg[64] = "";
    if (o->one_step) snprintf(stepmsg, sizeof stepmsg, " in ProfilerStep#%ld", o->step);
    return ts_err(err, errlen, "%s%s: nothing to simulate: no GPU kernel, memcpy or memset%s (%ld CPU events%s); "
                  "a CPU-only or gloo trace has no GPU timeline to replay",
                  fs[0].path, nfiles > 1 ? " and the other files" : "", stepmsg, cpu,
                  gloo ? ", some naming gloo" : "");
}

static int kineto_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
                         size_t errlen)
{
    /* Kineto traces given with the PyTorch execution traces of the same ranks */
    for (int i = 0; i < nfiles; i++) {
        char head[4096];
        size_t n = tr_head(paths[i], head, sizeof head);
        if (tr_fmt_pytorch_et.detect(paths[i], head, n)) return tr_fmt_pytorch_et.import(nfiles, paths, o, out, err, errlen);
    }
    rfile *fs = ts_calloc((size_t)nfiles, sizeof *fs);
    og_graph *g = NULL;
    int rc = -1;
    for (int i = 0; i < nfiles; i++) {
        fs[i].path = paths[i];
        fs[i].rank = -1;
        if (read_rank_file(&fs[i], err, errlen) < 0) goto out;
        if (fs[i].rank < 0) fs[i].rank = i;
    }
    qsort(fs, (size_t)nfiles, sizeof *fs, rfile_cmp);
    for (int i = 1; i < nfiles; i++)
        if (fs[i].rank == fs[i - 1].rank) {
            ts_err(err, errlen, "%s and %s: both are rank %d", fs[i - 1].path, fs[i].path, fs[i].rank);
            goto out;
        }
    if (o->info) steps_info(fs, nfiles, o->info);
    /* Annotation sizes name no process group: used (on the group of all ranks)
     * only when every rank of the run has its file. */
    int use_annot = 1;
    for (int i = 0; i < nfiles; i++) use_annot &= fs[i].world == nfiles;
    g = og_new(nfiles);
    /* Process groups: the same name must list the same ranks in every file;
     * ranks without a file are left out of the group. */
    int *members = ts_malloc(((size_t)nfiles + 1) * sizeof *members);
    for (int i = 0; i < nfiles; i++) {
        rfile *f = &fs[i];
        int *map = ts_malloc((f->npg + 1) * sizeof *map);
        for (size_t p = 0; p <= f->npg; p++) {
            int n = 0;
            if (p == f->npg) { /* no ranks list: every rank given */
                for (int k = 0; k < nfiles; k++) members[n++] = k;
            } else {
                for (int j = 0; j < i; j++)
                    for (size_t q = 0; q < fs[j].npg; q++)
                        if (!strcmp(fs[j].pgs[q].name, f->pgs[p].name) &&
                            (fs[j].pgs[q].n != f->pgs[p].n ||
                             memcmp(fs[j].pgs[q].ranks, f->pgs[p].ranks, (size_t)f->pgs[p].n * sizeof(int)))) {
                            ts_err(err, errlen, "%s: rank %d: process group '%s' has %d ranks here but %d in %s (rank %d)",
                                   f->path, f->rank, f->pgs[p].name, f->pgs[p].n, fs[j].pgs[q].n, fs[j].path, fs[j].rank);
                            free(map), free(members);
                            goto out;
                        }
                int self = 0;
                for (int m = 0; m < f->pgs[p].n; m++) {
                    int gr = f->pgs[p].ranks[m];
                    self |= gr == f->rank;
                    for (int k = 0; k < nfiles; k++)
                        if (fs[k].rank == gr) {
                            int dup = 0;
                            for (int x = 0; x < n; x++) dup |= members[x] == k;
                            if (!dup) members[n++] = k;
                        }
                }
                if (!self) {
                    ts_err(err, errlen, "%s: rank %d: process group '%s' does not contain the rank itself", f->path,
                           f->rank, f->pgs[p].name);
                    free(map), free(members);
                    goto out;
                }
            }
            map[p] = tr_group(g, n, members);
        }
        if (emit(g, i, f, map, use_annot, o, err, errlen) < 0) {
            free(map), free(members);
            goto out;
        }
        free(map);
    }
    free(members);
    if (nothing_to_simulate(fs, nfiles, o, err, errlen) < 0) goto out;
    *out = g;
    g = NULL;
    rc = 0;
out:
    og_free(g);
    for (int i = 0; i < nfiles; i++) {
        for (size_t k = 0; k < fs[i].n; k++) free(fs[i].recs[k].label);
        free(fs[i].recs);
        for (size_t k = 0; k < fs[i].npg; k++) free(fs[i].pgs[k].name), free(fs[i].pgs[k].ranks);
        free(fs[i].pgs);
        free(fs[i].launches);
        free(fs[i].annots);
        free(fs[i].steps);
    }
    free(fs);
    return rc;
}

static int kineto_detect(const char *path, const char *head, size_t n)
{
    (void)path;
    return memmem(head, n, "\"traceEvents\"", 13) || memmem(head, n, "\"schemaVersion\"", 15) ||
           memmem(head, n, "\"deviceProperties\"", 18);
}

const tr_format tr_fmt_kineto = {"kineto", "PyTorch profiler / Kineto Chrome trace, one file per rank (.json or .json.gz)",
                                 kineto_detect, kineto_import};
