/* A max-min fluid network model over flow classes: what SimGrid's CM02 model
 * computes for flows started together (each waits its route's latency, then
 * shares its links' bandwidth max-min fairly, re-solved whenever a flow
 * starts or ends), with one class standing for several flows that have the
 * same rate at all times (a symmetry of the traffic: sim/engine/rails.c).
 *
 * Max-min fairness by progressive filling: every unfrozen flow's rate rises
 * together; a resource whose remaining capacity over its unfrozen flows'
 * count is smallest saturates and freezes its flows at that share. A class
 * of coef flows on one resource counts coef times there, as its coef flows
 * would; the filling sees the same shares, so the class's rate is each of
 * its flows' rate. */
#include "fluid.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct fl_sys {
    /* resources */
    double *cap;
    char *shared;
    const void **key;
    int nres;
    size_t rcap;
    int *slot; /* open addressing over key: index + 1, 0 empty */
    size_t mask;
    /* flows and their uses (CSR: flow f uses ures[ustart[f] .. ustart[f + 1])) */
    double *bytes, *lat, *bound, *pen, *fin;
    int *ustart;
    int nfl;
    size_t fcap;
    int *ures;
    double *ucoef;
    size_t nuse, ucap;
    long events;
};

fl_sys *fl_new(void)
{
    fl_sys *s = ts_calloc(1, sizeof *s);
    s->mask = 1023;
    s->slot = ts_calloc(s->mask + 1, sizeof *s->slot);
    s->ustart = ts_calloc(1, sizeof *s->ustart);
    return s;
}

void fl_free(fl_sys *s)
{
    if (!s) return;
    free(s->cap), free(s->shared), free(s->key), free(s->slot);
    free(s->bytes), free(s->lat), free(s->bound), free(s->pen), free(s->fin), free(s->ustart);
    free(s->ures), free(s->ucoef);
    free(s);
}

static size_t key_hash(const void *k)
{
    uint64_t h = (uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17);
}

static void rehash(fl_sys *s)
{
    free(s->slot);
    s->mask = s->mask * 2 + 1;
    s->slot = ts_calloc(s->mask + 1, sizeof *s->slot);
    for (int i = 0; i < s->nres; i++) {
        size_t j = key_hash(s->key[i]) & s->mask;
        while (s->slot[j]) j = (j + 1) & s->mask;
        s->slot[j] = i + 1;
    }
}

int fl_resource(fl_sys *s, const void *key, double cap, int shared)
{
    size_t j = key_hash(key) & s->mask;
    for (; s->slot[j]; j = (j + 1) & s->mask)
        if (s->key[s->slot[j] - 1] == key) return s->slot[j] - 1;
    if ((size_t)s->nres == s->rcap) {
        s->rcap = s->rcap ? 2 * s->rcap : 64;
        s->cap = ts_realloc(s->cap, s->rcap * sizeof *s->cap);
        s->shared = ts_realloc(s->shared, s->rcap);
        s->key = ts_realloc(s->key, s->rcap * sizeof *s->key);
    }
    s->cap[s->nres] = cap, s->shared[s->nres] = (char)(shared != 0), s->key[s->nres] = key;
    s->slot[j] = ++s->nres;
    if ((size_t)s->nres * 2 > s->mask) rehash(s);
    return s->nres - 1;
}

int fl_flow(fl_sys *s, double bytes, double lat, double bound, double penalty)
{
    if ((size_t)s->nfl == s->fcap) {
        s->fcap = s->fcap ? 2 * s->fcap : 64;
        s->bytes = ts_realloc(s->bytes, s->fcap * sizeof(double));
        s->lat = ts_realloc(s->lat, s->fcap * sizeof(double));
        s->bound = ts_realloc(s->bound, s->fcap * sizeof(double));
        s->pen = ts_realloc(s->pen, s->fcap * sizeof(double));
        s->fin = ts_realloc(s->fin, s->fcap * sizeof(double));
        s->ustart = ts_realloc(s->ustart, (s->fcap + 1) * sizeof(int));
    }
    int f = s->nfl++;
    s->bytes[f] = bytes, s->lat[f] = lat, s->bound[f] = bound, s->pen[f] = penalty > 0 ? penalty : 1, s->fin[f] = -1;
    s->ustart[f + 1] = (int)s->nuse;
    return f;
}

void fl_use(fl_sys *s, int res, double coef)
{
    if (s->nuse == s->ucap) {
        s->ucap = s->ucap ? 2 * s->ucap : 256;
        s->ures = ts_realloc(s->ures, s->ucap * sizeof *s->ures);
        s->ucoef = ts_realloc(s->ucoef, s->ucap * sizeof *s->ucoef);
    }
    s->ures[s->nuse] = res, s->ucoef[s->nuse] = coef;
    s->nuse++;
    s->ustart[s->nfl] = (int)s->nuse;
}

double fl_finish(const fl_sys *s, int f) { return s->fin[f]; }
long fl_events(const fl_sys *s) { return s->events; }

enum { WAITING, ACTIVE, DONE };

/* The run's scratch: per resource its flows (CSR), per flow its state. */
typedef struct run_ctx {
    int *rstart, *rflow;
    double *rc, *w;      /* per resource: capacity left, sum of coef / penalty of its unfrozen flows */
    int *nw;             /* per resource: its unfrozen flows */
    double *rem, *rate, *eb;
    char *state, *frozen;
    int *live, nlive;    /* active flows */
} run_ctx;

static void freeze(const fl_sys *s, run_ctx *x, int f, double r)
{
    x->rate[f] = r;
    x->frozen[f] = 1;
    for (int u = s->ustart[f]; u < s->ustart[f + 1]; u++) {
        int q = s->ures[u];
        if (!s->shared[q]) continue;
        x->rc[q] -= s->ucoef[u] * r;
        if (x->rc[q] < 0) x->rc[q] = 0;
        x->w[q] -= s->ucoef[u] / s->pen[f];
        if (--x->nw[q] == 0) x->w[q] = 0;
    }
}

/* Max-min rates of the active flows, weighted as SimGrid's lmm solver does:
 * at fill level L a flow of penalty p runs at L / p; a resource saturates at
 * L = capacity left / sum(coef / p); a capped flow stops at its cap. */
static void solve(const fl_sys *s, run_ctx *x)
{
    for (int q = 0; q < s->nres; q++) x->rc[q] = s->cap[q], x->w[q] = 0, x->nw[q] = 0;
    for (int i = 0; i < x->nlive; i++) {
        int f = x->live[i];
        x->frozen[f] = 0;
        for (int u = s->ustart[f]; u < s->ustart[f + 1]; u++)
            if (s->shared[s->ures[u]]) x->w[s->ures[u]] += s->ucoef[u] / s->pen[f], x->nw[s->ures[u]]++;
    }
    int nfree = x->nlive;
    while (nfree > 0) {
        double level = INFINITY, bmin = INFINITY;
        for (int q = 0; q < s->nres; q++)
            if (x->nw[q] > 0 && x->rc[q] / x->w[q] < level) level = x->rc[q] / x->w[q];
        for (int i = 0; i < x->nlive; i++) {
            int f = x->live[i];
            if (!x->frozen[f] && x->eb[f] * s->pen[f] < bmin) bmin = x->eb[f] * s->pen[f];
        }
        if (bmin <= level) { /* caps first: those flows take no more */
            if (isinf(bmin)) { /* nothing limits them: cannot happen with finite links */
                for (int i = 0; i < x->nlive; i++)
                    if (!x->frozen[x->live[i]]) freeze(s, x, x->live[i], INFINITY), nfree--;
                break;
            }
            for (int i = 0; i < x->nlive; i++) {
                int f = x->live[i];
                if (!x->frozen[f] && x->eb[f] * s->pen[f] <= bmin * (1 + 1e-12)) freeze(s, x, f, x->eb[f]), nfree--;
            }
            continue;
        }
        double thr = level * (1 + 1e-12);
        for (int q = 0; q < s->nres; q++) {
            if (!(x->nw[q] > 0 && x->rc[q] / x->w[q] <= thr)) continue;
            for (int k = x->rstart[q]; k < x->rstart[q + 1]; k++) {
                int f = x->rflow[k];
                if (x->state[f] == ACTIVE && !x->frozen[f]) freeze(s, x, f, level / s->pen[f]), nfree--;
            }
        }
    }
}

static const double *lat_key;
static int by_lat(const void *a, const void *b)
{
    double x = lat_key[*(const int *)a], y = lat_key[*(const int *)b];
    return x < y ? -1 : x > y;
}

void fl_run(fl_sys *s)
{
    int n = s->nfl, R = s->nres;
    run_ctx x = {0};
    x.rstart = ts_calloc((size_t)R + 1, sizeof *x.rstart);
    for (size_t u = 0; u < s->nuse; u++) x.rstart[s->ures[u] + 1]++;
    for (int q = 0; q < R; q++) x.rstart[q + 1] += x.rstart[q];
    x.rflow = ts_malloc((s->nuse ? s->nuse : 1) * sizeof *x.rflow);
    int *pos = ts_malloc(((size_t)R + 1) * sizeof *pos);
    memcpy(pos, x.rstart, ((size_t)R + 1) * sizeof *pos);
    for (int f = 0; f < n; f++)
        for (int u = s->ustart[f]; u < s->ustart[f + 1]; u++) {
            int k = pos[s->ures[u]]++;
            x.rflow[k] = f;
        }
    free(pos);
    x.rc = ts_malloc(((size_t)R + 1) * sizeof(double));
    x.w = ts_malloc(((size_t)R + 1) * sizeof(double));
    x.nw = ts_malloc(((size_t)R + 1) * sizeof(int));
    x.rem = ts_malloc(((size_t)n + 1) * sizeof(double));
    x.rate = ts_calloc((size_t)n + 1, sizeof(double));
    x.eb = ts_malloc(((size_t)n + 1) * sizeof(double));
    x.state = ts_calloc((size_t)n + 1, 1);
    x.frozen = ts_calloc((size_t)n + 1, 1);
    x.live = ts_malloc(((size_t)n + 1) * sizeof(int));
    int *ord = ts_malloc(((size_t)n + 1) * sizeof *ord);
    for (int f = 0; f < n; f++) {
        ord[f] = f;
        x.rem[f] = s->bytes[f];
        double b = s->bound[f] < 0 ? INFINITY : s->bound[f];
        for (int u = s->ustart[f]; u < s->ustart[f + 1]; u++)
            if (!s->shared[s->ures[u]] && s->cap[s->ures[u]] < b) b = s->cap[s->ures[u]];
        x.eb[f] = b;
    }
    lat_key = s->lat;
    qsort(ord, n, sizeof *ord, by_lat);
    double t = 0;
    int next = 0, done = 0;
    while (done < n) {
        /* flows whose latency has passed take their share from now on */
        while (next < n && s->lat[ord[next]] <= t) {
            int f = ord[next++];
            if (x.rem[f] <= 0) {
                x.state[f] = DONE, s->fin[f] = t, done++;
            } else {
                x.state[f] = ACTIVE;
                x.live[x.nlive++] = f;
            }
        }
        if (done == n) break;
        if (x.nlive > 0) solve(s, &x);
        s->events++;
        double dt = next < n ? s->lat[ord[next]] - t : INFINITY;
        for (int i = 0; i < x.nlive; i++) {
            int f = x.live[i];
            if (x.rate[f] > 0 && x.rem[f] / x.rate[f] < dt) dt = x.rem[f] / x.rate[f];
        }
        if (isinf(dt)) { /* flows that never end: no capacity at all */
            for (int i = 0; i < x.nlive; i++) s->fin[x.live[i]] = INFINITY;
            break;
        }
        t += dt;
        int k = 0;
        for (int i = 0; i < x.nlive; i++) {
            int f = x.live[i];
            double d = x.rate[f] > 0 ? x.rem[f] / x.rate[f] : INFINITY;
            if (d <= dt * (1 + 1e-12)) { /* ends now (flows of one class end together) */
                x.rem[f] = 0, x.state[f] = DONE, s->fin[f] = t, done++;
            } else {
                x.rem[f] -= x.rate[f] * dt;
                x.live[k++] = f;
            }
        }
        x.nlive = k;
    }
    free(ord);
    free(x.rstart), free(x.rflow), free(x.rc), free(x.w), free(x.nw);
    free(x.rem), free(x.rate), free(x.eb), free(x.state), free(x.frozen), free(x.live);
}
