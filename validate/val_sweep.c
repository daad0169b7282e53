/* Simulated nccl-tests sweeps: one collective of one size on the first n
 * hosts (or ppn per node) of the loaded platform, chosen and costed as the engine would. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>
#include <simgrid/engine.h>

#include "coll.h"
#include "coll_params.h"
#include "engine.h"
#include "rails.h"
#include "util.h"
#include "val.h"

int val_sweep_open(val_sweep *s, og_coll op, int n, int root, og_dtype dtype, int fidelity, const char *forced,
                   char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->op = op, s->root = root, s->dtype = dtype, s->fidelity = fidelity;
    snprintf(s->forced, sizeof s->forced, "%s", forced ? forced : "");
    s->hosts = eng_host_names(&s->nhosts);
    s->n = n ? n : s->nhosts;
    if (s->n > s->nhosts)
        return ts_err(err, errlen, "--gpus %d but the platform has only %d hosts", s->n, s->nhosts);
    if (val_rooted(op) && root >= s->n) return ts_err(err, errlen, "--root %d outside the group of %d", root, s->n);
    int a;
    coll_proto pr;
    if (s->forced[0] && coll_algo_parse(s->forced, op, &a, &pr, err, errlen) < 0) return -1;
    /* A forced protocol the library does not run with that algorithm here
     * (proto_bw 0: NVLS is Simple only, LL128 off on Slingshot) would be
     * costed as if it ran: refuse it. */
    if (s->forced[0] && pr != COLL_PROTO_AUTO && coll_params_get()->proto_bw[coll_family_of(a)][pr] <= 0)
        return ts_err(err, errlen, "--algo %s: %s does not run %s with protocol %s on this cluster (proto_bw.%s.%s = 0)",
                      s->forced, coll_lib_name(coll_params_get()->lib), coll_algo_get(a)->name, coll_proto_name(pr),
                      coll_family_name(coll_family_of(a)), coll_proto_name(pr));
    s->topo = eng_topo((const char *const *)s->hosts, s->n, s->fidelity == VAL_FID_ANALYTICAL);
    return 0;
}

const char *val_scope_name(int scope) { return scope == VAL_INTER ? "inter" : "intra"; }

int val_sweep_place(val_sweep *s, int ppn, char *err, size_t errlen)
{
    if (ppn <= 0) return 0;
    coll_topo *all = eng_topo((const char *const *)s->hosts, s->nhosts, 0);
    if (!all) return ts_err(err, errlen, "the platform's hosts have no node structure");
    char **pick = ts_calloc(s->nhosts + 1, sizeof *pick);
    char *used = ts_calloc(s->nhosts + 1, 1);
    int k = 0;
    for (int nd = 0; nd < all->nnodes && k < s->n; nd++) {
        int have = all->first[nd + 1] - all->first[nd];
        if (have < ppn) {
            coll_topo_free(all);
            free(pick), free(used);
            return ts_err(err, errlen, "the measurement ran %d ranks per host but node %d of the cluster has %d GPU(s)",
                          ppn, nd, have);
        }
        for (int j = 0; j < ppn && k < s->n; j++) {
            int h = all->order[all->first[nd] + j];
            pick[k++] = s->hosts[h], used[h] = 1;
        }
    }
    if (k < s->n) {
        coll_topo_free(all);
        free(pick), free(used);
        return ts_err(err, errlen, "%d ranks at %d per host need %d nodes; the cluster has %d (give --nodes)", s->n,
                      ppn, (s->n + ppn - 1) / ppn, all->nnodes);
    }
    for (int h = 0; h < s->nhosts; h++)
        if (!used[h]) pick[k++] = s->hosts[h];
    memcpy(s->hosts, pick, s->nhosts * sizeof *pick);
    coll_topo_free(all);
    free(pick), free(used);
    coll_topo_free(s->topo);
    s->topo = eng_topo((const char *const *)s->hosts, s->n, s->fidelity == VAL_FID_ANALYTICAL);
    s->placed = 1;
    return 0;
}

static void host_route(void *ctx, int a, int b, double *lat, double *bw)
{
    val_sweep *s = ctx;
    if (eng_route(s->hosts[a], s->hosts[b], lat, bw) < 0) *lat = *bw = 0;
}

/* The memo: one entry per parameter set seen (its hash and a copy), each
 * with the points run at it. */
typedef struct memo_pt {
    int64_t bytes;
    val_point pt;
} memo_pt;

typedef struct memo_set {
    uint64_t hash;
    coll_params q;
    memo_pt *pts;
    int npts;
    size_t cap;
} memo_set;

typedef struct val_memo {
    memo_set *sets;
    int nsets;
    size_t cap;
    double clock;       /* the engine's clock when it began */
    unsigned gen;       /* coll_params_generation of the last look-up, */
    int cur;            /* and its set (-1: none yet) */
    int stale;          /* the clock moved: answers nothing */
} val_memo;

static int memo_off;

void val_memo_disable(int off) { memo_off = off; }

static uint64_t params_hash(const coll_params *q)
{
    const unsigned char *b = (const unsigned char *)q;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof *q; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

void val_sweep_memo(val_sweep *s, int on)
{
    val_memo *m = s->memo;
    if (m) {
        for (int i = 0; i < m->nsets; i++) free(m->sets[i].pts);
        free(m->sets);
        free(m);
        s->memo = NULL;
    }
    eng_rails_memo(0);
    if (!on || memo_off) return;
    /* the sweep's group, on the child's one platform: its rail check too */
    eng_rails_memo(1);
    m = s->memo = ts_calloc(1, sizeof *m);
    m->clock = simgrid_get_clock();
    m->cur = -1;
    m->gen = coll_params_generation() - 1;
}

/* The set of the active parameters (added when new), or NULL where the
 * memo cannot answer. */
static memo_set *memo_set_of(val_memo *m)
{
    if (m->stale || simgrid_get_clock() != m->clock) {
        m->stale = 1;
        return NULL;
    }
    unsigned gen = coll_params_generation();
    if (m->cur >= 0 && gen == m->gen) return &m->sets[m->cur];
    const coll_params *q = coll_params_get();
    uint64_t h = params_hash(q);
    int k = -1;
    for (int i = m->nsets - 1; i >= 0 && k < 0; i--)
        if (m->sets[i].hash == h && memcmp(&m->sets[i].q, q, sizeof *q) == 0) k = i;
    if (k < 0) {
        ts_grow(&m->sets, sizeof *m->sets, &m->cap, m->nsets + 1);
        k = m->nsets++;
        memset(&m->sets[k], 0, sizeof m->sets[k]);
        m->sets[k].hash = h;
        memcpy(&m->sets[k].q, q, sizeof *q);
    }
    m->gen = gen, m->cur = k;
    return &m->sets[k];
}

static int sweep_size_run(val_sweep *s, int64_t bytes, val_point *res, char *err, size_t errlen);

int val_sweep_size(val_sweep *s, int64_t bytes, val_point *res, char *err, size_t errlen)
{
    memo_set *ms = s->memo ? memo_set_of(s->memo) : NULL;
    for (int i = 0; ms && i < ms->npts; i++)
        if (ms->pts[i].bytes == bytes) {
            *res = ms->pts[i].pt;
            return 0;
        }
    if (sweep_size_run(s, bytes, res, err, errlen) < 0) return -1;
    /* kept only where the run left the clock as it was */
    if (ms && simgrid_get_clock() == s->memo->clock) {
        ts_grow(&ms->pts, sizeof *ms->pts, &ms->cap, ms->npts + 1);
        ms->pts[ms->npts++] = (memo_pt){bytes, *res};
    }
    return 0;
}

static int sweep_size_run(val_sweep *s, int64_t bytes, val_point *res, char *err, size_t errlen)
{
    int n = s->n, a = -1;
    coll_proto pr = COLL_SIMPLE;
    coll_hw hw = {5e-6, 25e9, s->topo, 0, 0};
    coll_hw_from_routes(&hw, n, s->topo, host_route, s);
    if (n > 1 && (hw.bw <= 0 || (hw.inter_alpha > 0 && hw.inter_bw <= 0)))
        return ts_err(err, errlen, "no route from %s to the other members", s->hosts[0]);
    if (s->forced[0]) {
        if (coll_algo_parse(s->forced, s->op, &a, &pr, err, errlen) < 0) return -1;
        if (pr == COLL_PROTO_AUTO) pr = coll_best_proto(s->op, n, bytes, a, &hw);
    } else {
        a = coll_policy_select(s->policy, s->op, n, bytes, &hw, &pr, NULL);
    }
    coll_plan p;
    if (coll_plan_init_topo(&p, s->op, n, s->root, bytes, NULL, a, s->topo, err, errlen) < 0) return -1;
    p.proto = pr;
    res->size = bytes;
    res->algo = a;
    res->proto = pr;
    res->nsteps = p.nsteps;
    if (s->fidelity == VAL_FID_ANALYTICAL) {
        res->time = coll_cost(&p, COLL_COST_PIPELINED, host_route, s);
        return 0;
    }

    char spec[96];
    snprintf(spec, sizeof spec, "%s:%s", coll_algo_get(a)->name, coll_proto_name(pr));
    og_graph *g = coll_graph(s->op, n, bytes, s->dtype, s->root, spec);
    for (int i = 0; s->placed && i < n; i++) og_set_host(g, i, s->hosts[i]);
    /* one collective alone on the network, its members starting together */
    eng_opts eo = {(eng_fidelity)s->fidelity, 0, 0, 0, 1};
    eng_result *er = NULL;
    int rc = eng_run(g, &eo, &er, err, errlen);
    if (rc == 0) res->time = er->makespan;
    eng_result_free(er);
    og_free(g);
    return rc;
}

void val_sweep_close(val_sweep *s)
{
    val_sweep_memo(s, 0);
    for (int i = 0; s->hosts && i < s->nhosts; i++) free(s->hosts[i]);
    free(s->hosts);
    coll_topo_free(s->topo);
    memset(s, 0, sizeof *s);
}

/* One sweep in a forked child (val_fork): the outputs are a val_child_out
 * followed, at the next double boundary, by the times. */
typedef struct sweep_job {
    const char *cluster, *calib, *algo;
    int nodes, sgc, n, ppn, fidelity, npts;
    char **sgv;
    og_coll op;
    const int64_t *sizes;
} sweep_job;

#define TIMES_AT ((sizeof(val_child_out) + sizeof(double) - 1) / sizeof(double) * sizeof(double))

static int sweep_child(void *vctx, void *vout, size_t outlen, char *err, size_t errlen)
{
    const sweep_job *j = vctx;
    val_child_out *o = vout;
    double *t = (double *)((char *)vout + TIMES_AT);
    (void)outlen;
    int sgc = j->sgc;
    eng_init(&sgc, j->sgv);
    val_sweep sw;
    memset(&sw, 0, sizeof sw);
    if (eng_load(j->cluster, j->nodes, j->calib, err, errlen) < 0 ||
        val_sweep_open(&sw, j->op, j->n, 0, OG_F32, j->fidelity, j->algo, err, errlen) < 0 ||
        val_sweep_place(&sw, j->ppn, err, errlen) < 0)
        return -1;
    o->scope = sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA;
    for (int i = 0; i < j->npts; i++) {
        val_point pt;
        if (val_sweep_size(&sw, j->sizes[i], &pt, err, errlen) < 0) return -1;
        t[i] = pt.time, o->algo = pt.algo, o->nsteps = pt.nsteps;
    }
    return 0;
}

int val_sweep_child(const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                    const char *algo, int fidelity, const int64_t *sizes, int npts, double *times, val_child_out *out,
                    char *err, size_t errlen)
{
    return val_sweep_child_ppn(cluster, nodes, calib, sgc, sgv, op, n, 0, algo, fidelity, sizes, npts, times, out, err,
                               errlen);
}

int val_sweep_child_ppn(const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                        int ppn, const char *algo, int fidelity, const int64_t *sizes, int npts, double *times,
                        val_child_out *out, char *err, size_t errlen)
{
    sweep_job j = {cluster, calib, algo, nodes, sgc, n, ppn, fidelity, npts, sgv, op, sizes};
    size_t len = TIMES_AT + (size_t)npts * sizeof(double);
    char *buf = ts_calloc(1, len);
    int rc = val_fork(sweep_child, &j, buf, len, err, errlen);
    if (rc == 0) {
        memcpy(out, buf, sizeof *out);
        memcpy(times, buf + TIMES_AT, (size_t)npts * sizeof *times);
    }
    free(buf);
    return rc;
}

int val_fork_start(val_child_fn fn, void *ctx, void *out, size_t outlen, val_child *ch, char *err, size_t errlen)
{
    int fds[2];
    ch->pid = -1, ch->fd = -1;
    if (pipe(fds) < 0) return ts_err(err, errlen, "pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return ts_err(err, errlen, "fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        char cerr[TS_ERRLEN] = "";
        int rc = fn(ctx, out, outlen, cerr, sizeof cerr) < 0 ? -1 : 0;
        if (ts_write_all(fds[1], &rc, sizeof rc) == 0) ts_write_all(fds[1], rc == 0 ? out : (void *)cerr, rc == 0 ? outlen : sizeof cerr);
        _exit(0);
    }
    close(fds[1]);
    ch->pid = pid, ch->fd = fds[0];
    return 0;
}

int val_fork_finish(val_child *ch, void *out, size_t outlen, char *err, size_t errlen)
{
    int rc = -1, status;
    char cerr[TS_ERRLEN];
    if (ch->pid < 0) return ts_err(err, errlen, "no simulation child to wait for");
    if (ts_read_all(ch->fd, &rc, sizeof rc) < 0) rc = ts_err(err, errlen, "the simulation child died");
    else if (rc == 0 && ts_read_all(ch->fd, out, outlen) < 0) rc = ts_err(err, errlen, "the simulation child died");
    else if (rc != 0) rc = ts_err(err, errlen, "%s", ts_read_all(ch->fd, cerr, sizeof cerr) == 0 ? cerr : "the simulation child died");
    close(ch->fd);
    waitpid(ch->pid, &status, 0);
    ch->pid = -1, ch->fd = -1;
    return rc;
}

int val_fork(val_child_fn fn, void *ctx, void *out, size_t outlen, char *err, size_t errlen)
{
    val_child ch;
    if (val_fork_start(fn, ctx, out, outlen, &ch, err, errlen) < 0) return -1;
    return val_fork_finish(&ch, out, outlen, err, errlen);
}
