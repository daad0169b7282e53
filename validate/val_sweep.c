/* Simulated nccl-tests sweeps: one collective of one size on the first n
 * hosts of the loaded platform, chosen and costed as the engine would. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "coll.h"
#include "engine.h"
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
    s->topo = eng_topo((const char *const *)s->hosts, s->n);
    return 0;
}

const char *val_scope_name(int scope) { return scope == VAL_INTER ? "inter" : "intra"; }

static void host_route(void *ctx, int a, int b, double *lat, double *bw)
{
    val_sweep *s = ctx;
    if (eng_route(s->hosts[a], s->hosts[b], lat, bw) < 0) *lat = *bw = 0;
}

int val_sweep_size(val_sweep *s, int64_t bytes, val_point *res, char *err, size_t errlen)
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
    eng_opts eo = {(eng_fidelity)s->fidelity, 0, 0};
    eng_result *er = NULL;
    int rc = eng_run(g, &eo, &er, err, errlen);
    if (rc == 0) res->time = er->makespan;
    eng_result_free(er);
    og_free(g);
    return rc;
}

void val_sweep_close(val_sweep *s)
{
    for (int i = 0; s->hosts && i < s->nhosts; i++) free(s->hosts[i]);
    free(s->hosts);
    coll_topo_free(s->topo);
    memset(s, 0, sizeof *s);
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) return -1;
        p += r, n -= (size_t)r;
    }
    return 0;
}

/* The child: status int, then the outputs or an error message. */
static void child(int fd, const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                  const char *algo, int fidelity, const int64_t *sizes, int npts)
{
    char err[TS_ERRLEN] = "";
    double *t = ts_calloc(npts + 1, sizeof *t);
    val_child_out o = {0, 0, 0};
    int rc = -1;
    eng_init(&sgc, sgv);
    val_sweep sw;
    memset(&sw, 0, sizeof sw);
    if (eng_load(cluster, nodes, calib, err, sizeof err) == 0 &&
        val_sweep_open(&sw, op, n, 0, OG_F32, fidelity, algo, err, sizeof err) == 0) {
        o.scope = sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA;
        rc = 0;
        for (int i = 0; i < npts && rc == 0; i++) {
            val_point pt;
            rc = val_sweep_size(&sw, sizes[i], &pt, err, sizeof err);
            t[i] = pt.time, o.algo = pt.algo, o.nsteps = pt.nsteps;
        }
    }
    if (write_all(fd, &rc, sizeof rc) == 0) {
        if (rc == 0) {
            if (write_all(fd, &o, sizeof o) == 0) write_all(fd, t, npts * sizeof *t);
        } else {
            write_all(fd, err, sizeof err);
        }
    }
    _exit(0);
}

int val_sweep_child(const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                    const char *algo, int fidelity, const int64_t *sizes, int npts, double *times, val_child_out *out,
                    char *err, size_t errlen)
{
    int fds[2];
    if (pipe(fds) < 0) return ts_err(err, errlen, "pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return ts_err(err, errlen, "fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], cluster, nodes, calib, sgc, sgv, op, n, algo, fidelity, sizes, npts);
    }
    close(fds[1]);
    int rc = -1, status;
    char cerr[TS_ERRLEN];
    if (read_all(fds[0], &rc, sizeof rc) < 0) rc = ts_err(err, errlen, "the simulation child died");
    else if (rc == 0 && (read_all(fds[0], out, sizeof *out) < 0 || read_all(fds[0], times, npts * sizeof *times) < 0))
        rc = ts_err(err, errlen, "the simulation child died");
    else if (rc != 0) {
        if (read_all(fds[0], cerr, sizeof cerr) == 0) rc = ts_err(err, errlen, "%s", cerr);
        else rc = ts_err(err, errlen, "the simulation child died");
    }
    close(fds[0]);
    waitpid(pid, &status, 0);
    return rc;
}

int val_fork(val_child_fn fn, void *ctx, void *out, size_t outlen, char *err, size_t errlen)
{
    int fds[2];
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
        if (write_all(fds[1], &rc, sizeof rc) == 0) write_all(fds[1], rc == 0 ? out : (void *)cerr, rc == 0 ? outlen : sizeof cerr);
        _exit(0);
    }
    close(fds[1]);
    int rc = -1, status;
    char cerr[TS_ERRLEN];
    if (read_all(fds[0], &rc, sizeof rc) < 0) rc = ts_err(err, errlen, "the simulation child died");
    else if (rc == 0 && read_all(fds[0], out, outlen) < 0) rc = ts_err(err, errlen, "the simulation child died");
    else if (rc != 0) rc = ts_err(err, errlen, "%s", read_all(fds[0], cerr, sizeof cerr) == 0 ? cerr : "the simulation child died");
    close(fds[0]);
    waitpid(pid, &status, 0);
    return rc;
}
