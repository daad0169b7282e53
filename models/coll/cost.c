/* Analytical cost of a collective schedule (the `analytical` fidelity): the
 * alpha-beta cost of its steps from per-pair latency and bandwidth, no SimGrid
 * run; and the protocol constants (LL, LL128, Simple) both the engine and the
 * cost use. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "util.h"

/* Protocol constants: efficiencies are the wire formats (LL: 4 of 8 bytes;
 * LL128: 120 of 128); the per-step latencies are the differences between
 * NCCL 2.x's NVLink ring hardware latencies per protocol in tuning.cc
 * (LL 0.6 us, LL128 1.9 us, Simple 3.4 us) taking LL's as the link's own. */
static const struct {
    const char *name;
    double eff, lat;
} protos[COLL_NPROTOS] = {
    [COLL_SIMPLE] = {"simple", 1.0, 2.8e-6},
    [COLL_LL128] = {"ll128", 120.0 / 128.0, 1.3e-6},
    [COLL_LL] = {"ll", 0.5, 0.0},
};

const char *coll_proto_name(coll_proto pr) { return pr < COLL_NPROTOS ? protos[pr].name : "?"; }

int coll_proto_from_name(const char *s)
{
    for (int i = 0; i < COLL_NPROTOS; i++)
        if (strcasecmp(protos[i].name, s) == 0) return i;
    return -1;
}

double coll_proto_efficiency(coll_proto pr) { return protos[pr].eff; }
double coll_proto_step_latency(coll_proto pr) { return protos[pr].lat; }

int64_t coll_wire_bytes(coll_proto pr, int64_t bytes)
{
    if (pr == COLL_SIMPLE || bytes <= 0) return bytes;
    if (pr == COLL_LL) return 2 * bytes;
    return (bytes + 119) / 120 * 128;
}

/* Per-rank route cache, built from the merged view (the peers a rank ever
 * talks to), when it fits; else every lookup asks route(). */
typedef struct {
    int *peer;
    double *lat, *bw;
    int64_t *off; /* rank r's peers are [off[r], off[r+1]) sorted by peer */
} rcache;

#define CACHE_MAX ((int64_t)1 << 22)

static int rcache_build(rcache *c, const coll_plan *p, coll_route_fn route, void *ctx)
{
    memset(c, 0, sizeof *c);
    if ((int64_t)p->n * p->merged_width * 2 > CACHE_MAX) return 0;
    coll_step *m = coll_step_new(p->merged_width + 1);
    size_t cap = 0;
    int64_t k = 0;
    c->off = ts_malloc((p->n + 1) * sizeof *c->off);
    for (int r = 0; r < p->n; r++) {
        coll_plan_merged_phys(p, r, m);
        c->off[r] = k;
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            int q = i < m->nsend ? m->send[i].peer : m->recv[i - m->nsend].peer;
            int64_t j = c->off[r];
            while (j < k && c->peer[j] != q) j++;
            if (j < k) continue;
            if ((size_t)k + 1 > cap) {
                size_t nc = cap;
                ts_grow(&c->peer, sizeof *c->peer, &nc, k + 1);
                nc = cap;
                ts_grow(&c->lat, sizeof *c->lat, &nc, k + 1);
                ts_grow(&c->bw, sizeof *c->bw, &cap, k + 1);
            }
            c->peer[k] = q;
            route(ctx, r, q, &c->lat[k], &c->bw[k]);
            k++;
        }
    }
    c->off[p->n] = k;
    coll_step_free(m);
    return 1;
}

/* Route r -> q: the cache holds r's peers (both directions are looked up from r). */
static void lookup(const rcache *c, const coll_plan *p, coll_route_fn route, void *ctx, int r, int q,
                   double *lat, double *bw)
{
    (void)p;
    if (c->off)
        for (int64_t j = c->off[r]; j < c->off[r + 1]; j++)
            if (c->peer[j] == q) {
                *lat = c->lat[j];
                *bw = c->bw[j];
                return;
            }
    route(ctx, r, q, lat, bw);
}

static void rcache_free(rcache *c)
{
    free(c->peer);
    free(c->lat);
    free(c->bw);
    free(c->off);
}

/* Bytes a rank sends (or receives) per route bandwidth: transfers over
 * different kinds of links (NVLink and NIC) do not share an endpoint link. */
#define NCLASS 4
typedef struct {
    double bw[NCLASS];
    int64_t bytes[NCLASS];
    int n;
} classes;

static void cls_add(classes *c, double bw, int64_t b)
{
    for (int i = 0; i < c->n; i++)
        if (c->bw[i] == bw) {
            c->bytes[i] += b;
            return;
        }
    if (c->n < NCLASS) {
        c->bw[c->n] = bw;
        c->bytes[c->n++] = b;
    } else {
        c->bytes[NCLASS - 1] += b; /* more kinds than we track: count them together */
    }
}

static int64_t cls_get(const classes *c, double bw)
{
    for (int i = 0; i < c->n; i++)
        if (c->bw[i] == bw) return c->bytes[i];
    return c->n ? c->bytes[c->n - 1] : 0;
}

static double xfer_time(double lat, double bw, int64_t bytes)
{
    return lat + (bw > 0 ? (double)bytes / bw : 0);
}

static double cost_steps(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx)
{
    int n = p->n;
    double *ready = ts_calloc(n, sizeof *ready), *next = ts_malloc(n * sizeof *next);
    classes *out = ts_malloc(n * sizeof *out), *in = ts_malloc(n * sizeof *in);
    coll_step **st = ts_malloc(n * sizeof *st);
    for (int r = 0; r < n; r++) st[r] = coll_step_new(p->width + 1);
    double plat = coll_proto_step_latency(p->proto);
    for (int s = 0; s < p->nsteps; s++) {
        for (int r = 0; r < n; r++) {
            coll_plan_step_phys(p, r, s, st[r]);
            out[r].n = in[r].n = 0;
        }
        for (int r = 0; r < n; r++)
            for (int i = 0; i < st[r]->nsend; i++) {
                int64_t b = coll_wire_bytes(p->proto, st[r]->send[i].bytes);
                double lat, bw;
                lookup(c, p, route, ctx, r, st[r]->send[i].peer, &lat, &bw);
                cls_add(&out[r], bw, b);
                cls_add(&in[st[r]->send[i].peer], bw, b);
            }
        for (int r = 0; r < n; r++) next[r] = ready[r] + (st[r]->nsend + st[r]->nrecv ? plat : 0);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < st[r]->nsend; i++) {
                int q = st[r]->send[i].peer;
                double lat, bw;
                lookup(c, p, route, ctx, r, q, &lat, &bw);
                int64_t o = cls_get(&out[r], bw), x = cls_get(&in[q], bw);
                double t0 = ready[r] > ready[q] ? ready[r] : ready[q];
                double e = t0 + plat + xfer_time(lat, bw, o > x ? o : x);
                if (e > next[r]) next[r] = e;
                if (e > next[q]) next[q] = e;
            }
        memcpy(ready, next, n * sizeof *ready);
    }
    double t = 0;
    for (int r = 0; r < n; r++)
        if (ready[r] > t) t = ready[r];
    for (int r = 0; r < n; r++) coll_step_free(st[r]);
    free(st);
    free(ready);
    free(next);
    free(out);
    free(in);
    return t;
}

static double cost_pipelined(const coll_plan *p, const rcache *c, coll_route_fn route, void *ctx)
{
    int n = p->n;
    classes *out = ts_calloc(n, sizeof *out), *in = ts_calloc(n, sizeof *in);
    double *end = ts_calloc(n, sizeof *end), *alpha = ts_calloc(n, sizeof *alpha);
    coll_step *m = coll_step_new(p->merged_width + 1);
    for (int r = 0; r < n; r++) {
        coll_plan_merged_phys(p, r, m);
        for (int i = 0; i < m->nsend; i++) {
            int64_t b = coll_wire_bytes(p->proto, m->send[i].bytes);
            double lat, bw;
            lookup(c, p, route, ctx, r, m->send[i].peer, &lat, &bw);
            cls_add(&out[r], bw, b);
            cls_add(&in[m->send[i].peer], bw, b);
        }
    }
    for (int r = 0; r < n; r++) {
        coll_plan_merged_phys(p, r, m);
        for (int i = 0; i < m->nsend + m->nrecv; i++) {
            int send = i < m->nsend, q = send ? m->send[i].peer : m->recv[i - m->nsend].peer;
            double lat, bw;
            if (send) lookup(c, p, route, ctx, r, q, &lat, &bw);
            else lookup(c, p, route, ctx, q, r, &lat, &bw);
            if (lat > alpha[r]) alpha[r] = lat;
            if (!send) continue;
            int64_t o = cls_get(&out[r], bw), x = cls_get(&in[q], bw);
            double e = xfer_time(lat, bw, o > x ? o : x);
            if (e > end[r]) end[r] = e;
            if (e > end[q]) end[q] = e;
        }
    }
    double t = 0, plat = coll_proto_step_latency(p->proto);
    for (int r = 0; r < n; r++) {
        double f = end[r] + (p->nsteps - 1) * alpha[r] + p->nsteps * plat;
        if (f > t) t = f;
    }
    coll_step_free(m);
    free(out);
    free(in);
    free(end);
    free(alpha);
    return t;
}

double coll_cost(const coll_plan *p, coll_cost_kind kind, coll_route_fn route, void *ctx)
{
    if (p->nsteps == 0) return 0;
    rcache c;
    rcache_build(&c, p, route, ctx);
    double t = kind == COLL_COST_STEP ? cost_steps(p, &c, route, ctx) : cost_pipelined(p, &c, route, ctx);
    rcache_free(&c);
    return t;
}
