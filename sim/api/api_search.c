/* ts_search: which parallel layout to launch (the compute core of `trainsim
 * search`). Enumerates, prunes by rule and memory, ranks by the analytical
 * estimate, simulates the best K; the work can be split across processes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_int.h"
#include "cluster.h"
#include "coll.h"
#include "coll_params.h"
#include "compute/compute.h"
#include "memory/memory.h"
#include "util.h"

enum { SIM_ITER = API_SIM_ITER, SIM_CAT0 = API_SIM_CAT0, SIM_NFIELDS = API_SIM_NFIELDS };
/* One evaluated candidate as exchanged between processes. */
enum { EV_STATUS, EV_MEM, EV_ITER, EV_SCORE, EV_BUBBLE, EV_DP, EV_NFIELDS };

static void progress(const api_search_ctx *x, const char *what, size_t done, size_t total)
{
    static double last;
    if (!x->tty || total == 0) return;
    double now = ts_wtime();
    if (done != total && now - last < 0.1) return; /* redraw at most 10 times a second */
    last = now;
    int w = 40, f = (int)((double)done / total * w);
    fprintf(stderr, "\r%-10s [", what);
    for (int i = 0; i < w; i++) fputc(i < f ? '#' : ' ', stderr);
    fprintf(stderr, "] %zu/%zu", done, total);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

static int simulate1(api_search_ctx *x, const wl_layout *l, double *out, char *err, size_t errlen)
{
    wl_opts wo = {x->p.seq, x->p.dtype, x->p.gpu, x->p.net, 1, 1, x->p.stack};
    og_graph *g = NULL;
    eng_result *res = NULL;
    wl_info info;
    int rc = -1;
    if (wl_build(x->m, l, &wo, &g, &info, err, errlen) < 0) goto out;
    if (x->fid == -1) {
        if (an_run(g, x->p.net, &res, err, errlen) < 0) goto out;
    } else {
        if (!x->loaded) {
            int nodes = (wl_layout_ngpus(l) + x->gpn - 1) / x->gpn;
            int need = (x->p.ngpus + x->gpn - 1) / x->gpn;
            ts_common c = {.cluster = x->cluster, .calibration = x->calib[0] ? x->calib : NULL,
                           .simgrid_args = x->simgrid_args};
            if (api_engine(&c, need > nodes ? need : nodes, err, errlen) < 0) goto out;
            x->loaded = 1;
        }
        eng_opts eo = {(eng_fidelity)x->fid, 0, 0, 0, 0};
        if (eng_run(g, &eo, &res, err, errlen) < 0) goto out;
        an_wait_as_idle(g, res);
    }
    out[SIM_ITER] = res->makespan;
    an_breakdown(g, res, -1, out + SIM_CAT0);
    double tp_fused = info.fused_tp_s / info.ranks_built;  /* fused intra-node TP: back to tp */
    out[SIM_CAT0 + AN_COMP] -= tp_fused;
    out[SIM_CAT0 + AN_TP] += tp_fused;
    rc = 0;
out:
    eng_result_free(res);
    og_free(g);
    return rc;
}

/* Simulate (or cost the critical path of) one layout; out[SIM_NFIELDS]. An
 * AxoNN layout has no pipeline: every micro-batch repeats the same ops, so
 * its critical path and breakdown for m micro-batches are those of 1 plus
 * m - 1 times the difference between 2 and 1 (tested against the whole graph). */
int api_search_simulate(api_search_ctx *x, const wl_layout *l, double *out, char *err, size_t errlen)
{
    int mc = wl_layout_micro(l);
    if (x->fid != -1 || !l->axonn || mc < 3) return simulate1(x, l, out, err, errlen);
    double o[2][SIM_NFIELDS];
    for (int k = 0; k < 2; k++) {
        wl_layout lk = *l;
        lk.gbs = (k + 1) * l->mbs * l->dp;
        if (simulate1(x, &lk, o[k], err, errlen) < 0) return -1;
    }
    for (int i = 0; i < SIM_NFIELDS; i++) out[i] = o[0][i] + (mc - 1) * (o[1][i] - o[0][i]);
    return 0;
}

/* The largest exposed communication category of a breakdown (-1: none). */
static int dominant(const double *cat)
{
    int best = -1;
    for (int c = AN_TP; c <= AN_DP; c++)
        if (cat[c] > 0 && (best < 0 || cat[c] > cat[best])) best = c;
    return best;
}

const char *api_search_status(int s)
{
    static const char *n[] = {"pending", "rule", "memory", "estimated", "failed"};
    return s >= 0 && s <= SRCH_FAILED ? n[s] : "?";
}

double api_search_tflops(const api_search_ctx *x, const wl_layout *l, double iter)
{
    return wl_iteration_flops(x->m, l, x->p.seq, 0) / iter / wl_layout_ngpus(l) / 1e12;
}

/* Order the simulated top K by their simulated objective (failed ones last,
 * ties in estimate order): insertion sort of order[0..ntop) and sim rows. */
static void rerank(const api_search_ctx *x, const srch_cand *c, size_t *order, double *sim, size_t ntop)
{
    double *key = ts_malloc((ntop ? ntop : 1) * sizeof *key), row[SIM_NFIELDS];
    for (size_t j = 0; j < ntop; j++) {
        double it = sim[j * SIM_NFIELDS + SIM_ITER];
        key[j] = it > 0 ? srch_score(x->m, &x->p, &c[order[j]].l, it) : INFINITY;
    }
    for (size_t i = 1; i < ntop; i++)
        for (size_t j = i; j > 0 && key[j - 1] > key[j]; j--) {
            double t = key[j];
            key[j] = key[j - 1], key[j - 1] = t;
            size_t o = order[j];
            order[j] = order[j - 1], order[j - 1] = o;
            memcpy(row, sim + j * SIM_NFIELDS, sizeof row);
            memcpy(sim + j * SIM_NFIELDS, sim + (j - 1) * SIM_NFIELDS, sizeof row);
            memcpy(sim + (j - 1) * SIM_NFIELDS, row, sizeof row);
        }
    free(key);
}

ts_status api_search_prepare(const ts_search_opts *o, ts_search_result *r, char *msg, size_t msglen)
{
    struct ts_search_priv *pv = r->priv = ts_calloc(1, sizeof *pv);
    api_search_ctx *x = &pv->x;
    x->p.space = SRCH_3D;
    x->p.dtype = CM_BF16;
    x->fid = ENG_PIPELINED;
    x->m = &pv->model;
    x->simgrid_args = o->c.simgrid_args;
    if (!o->c.cluster || !o->model || o->gpus < 1)
        return ts_err(msg, msglen, "--cluster, --gpus and --model are required"), TS_BAD_INPUT;
    if (!topo_is_cluster_spec(o->c.cluster))
        return ts_err(msg, msglen, "--cluster wants a cluster (name or JSON), not the SimGrid file '%s'",
                      o->c.cluster), TS_BAD_INPUT;
    api_copy(x->cluster, sizeof x->cluster, o->c.cluster);
    api_copy(x->calib, sizeof x->calib, o->c.calibration);
    x->p.ngpus = o->gpus, x->p.gbs = o->gbs, x->p.seq = o->seq;
    if (o->objective && (int)(x->p.objective = srch_objective_from_name(o->objective)) < 0)
        return ts_err(msg, msglen, "unknown objective '%s' (valid: time, mfu, cost)", o->objective), TS_BAD_INPUT;
    if (o->space && (int)(x->p.space = srch_space_from_name(o->space)) < 0)
        return ts_err(msg, msglen, "unknown space '%s' (valid: 3d, 4d, all)", o->space), TS_BAD_INPUT;
    if (o->constraint && srch_parse_constraints(o->constraint, &x->p, msg, msglen) < 0) return TS_BAD_INPUT;
    const char *fid = o->fidelity;
    if (fid && strcmp(fid, "estimate") == 0) x->fid = -2;
    else if (fid && strcmp(fid, "analytical") == 0) x->fid = -1;
    else if (fid && (x->fid = eng_fidelity_from_name(fid)) < 0)
        return ts_err(msg, msglen, "unknown fidelity '%s' (valid: estimate, analytical, pipelined, step)", fid),
               TS_BAD_INPUT;
    int t = cm_dtype_from_name(api_or(o->dtype, "bf16"));
    if (t != CM_BF16 && t != CM_FP16 && t != CM_FP8 && t != CM_FP32)
        return ts_err(msg, msglen, "unknown dtype '%s' (valid: bf16, fp16, fp8, fp32)", o->dtype), TS_BAD_INPUT;
    x->p.dtype = t;
    if (o->stack && !(x->p.stack = wl_stack_find(o->stack, msg, msglen))) return TS_BAD_INPUT;
    if (api_policy(&o->c, &pv->policy, msg, msglen) < 0) return TS_BAD_INPUT;
    char models_dir[4200], gpus_dir[4200];
    snprintf(models_dir, sizeof models_dir, "%s/models", ts_config_dir());
    snprintf(gpus_dir, sizeof gpus_dir, "%s/gpus", ts_config_dir());
    topo_cluster cl;
    if (topo_load(x->cluster, 0, &cl, msg, msglen) < 0 ||
        (o->c.calibration && topo_calibrate(&cl, o->c.calibration, msg, msglen) < 0) ||
        wl_model_find(o->model, models_dir, &pv->model, msg, msglen) < 0 ||
        cm_gpu_find(cl.gpu_key, gpus_dir, &pv->gpu, msg, msglen) < 0)
        return TS_BAD_INPUT;
    coll_params_set(&cl.coll); /* the collectives' cost parameters of this cluster */
    if ((long long)x->p.ngpus > (long long)cl.nodes * cl.node.gpus)
        return ts_err(msg, msglen, "--gpus %d is more than cluster '%s' has (%d nodes x %d GPUs = %lld)", x->p.ngpus,
                      x->cluster, cl.nodes, cl.node.gpus, (long long)cl.nodes * cl.node.gpus), TS_BAD_INPUT;
    if (pv->gpu.peak[x->p.dtype] <= 0)
        return ts_err(msg, msglen, "%s has no %s peak in its spec", pv->gpu.name, cm_dtype_name(x->p.dtype)),
               TS_BAD_INPUT;
    an_net *net = &pv->net;
    if (an_net_default(pv->gpu.name, net) < 0) an_net_default("H100", net);
    topo_an_figures(&cl, &net->gpus_per_node, &net->intra_bw, &net->intra_lat, &net->inter_bw, &net->inter_lat);
    net->nvls = cl.node.nvls;
    net->nic_gpus = cl.coll.nic_gpus;
    topo_net_links_init(&pv->fabric, &cl);
    net->fabric = &pv->fabric.f;
    topo_gpu_links_init(&pv->gpu_links, &cl);
    net->gpu_links = &pv->gpu_links.links;
    net->policy = pv->policy;
    x->gpn = net->gpus_per_node;
    x->p.gpu = &pv->gpu;
    x->p.net = net;
    if (!x->p.seq) x->p.seq = pv->model.max_seq < 8192 ? pv->model.max_seq : 8192;
    wl_model_fit_seq(&pv->model, x->p.seq);
    if (!x->p.gbs) x->p.gbs = x->p.ngpus;
    api_copy(r->model, sizeof r->model, pv->model.name);
    api_copy(r->gpu, sizeof r->gpu, pv->gpu.name);
    api_copy(r->cluster, sizeof r->cluster, cl.name);
    api_copy(r->dtype, sizeof r->dtype, cm_dtype_name(x->p.dtype));
    api_copy(r->objective, sizeof r->objective, srch_objective_name(x->p.objective));
    api_copy(r->space, sizeof r->space, srch_space_name(x->p.space));
    api_copy(r->fidelity, sizeof r->fidelity,
             x->fid == -2 ? "estimate" : x->fid == -1 ? "analytical" : eng_fidelity_name(x->fid));
    r->gpus = x->p.ngpus, r->gbs = x->p.gbs, r->seq = x->p.seq, r->constraints = x->p.nconstr;
    return TS_OK;
}

/* The candidates are dealt in blocks of EV_BLOCK consecutive ones (a grid's
 * or a (tp, pp, cp, ep) family's options, which share their collectives:
 * each process memoises collective costs, so a block kept together is costed
 * once, where dealing single candidates made every process cost nearly every
 * collective of the space). Part w of this rank's share: blocks rank + size w,
 * then every size x parts-th. */
#define EV_BLOCK 48
#define FOR_PART(i, n, rank, size, parts, w)                                                                        \
    for (size_t b_ = (size_t)(rank) + (size_t)(size) * (w); b_ * EV_BLOCK < (n); b_ += (size_t)(size) * (parts))  \
        for (size_t i = b_ * EV_BLOCK; i < (n) && i < (b_ + 1) * EV_BLOCK; i++)

static size_t part_count(size_t n, int rank, int size, int parts, int w)
{
    size_t k = 0;
    for (size_t b = (size_t)rank + (size_t)size * w; b * EV_BLOCK < n; b += (size_t)size * parts)
        k += n - b * EV_BLOCK < EV_BLOCK ? n - b * EV_BLOCK : EV_BLOCK;
    return k;
}

/* out holds part w's candidates' EV_NFIELDS each, in that order, then the
 * seconds spent in those that ended estimated and their count. */
typedef struct {
    api_search_ctx *x;
    srch_cand *cand;
    size_t n;
    int rank, size, parts;
} est_job;

static int evaluate_part(void *ctx, int w, void *out, size_t outlen, char *err, size_t errlen)
{
    const est_job *j = ctx;
    api_search_ctx *x = j->x;
    double *e = out, t = 0, count = 0;
    size_t per = (outlen / sizeof(double) - 2) / EV_NFIELDS;
    (void)err, (void)errlen;
    FOR_PART(i, j->n, j->rank, j->size, j->parts, w) {
        srch_cand *c = &j->cand[i];
        double te = ts_wtime();
        srch_evaluate(x->m, &x->p, c, NULL, 0);
        if (c->status == SRCH_ESTIMATED) t += ts_wtime() - te, count++;
        e[EV_STATUS] = c->status, e[EV_MEM] = c->mem, e[EV_ITER] = c->iter;
        e[EV_SCORE] = c->score, e[EV_BUBBLE] = c->bubble, e[EV_DP] = c->dp_exposed;
        e += EV_NFIELDS;
        if (j->parts == 1) progress(x, "estimate", i + 1 > j->n - j->size ? j->n : i + 1, j->n);
    }
    ((double *)out)[per * EV_NFIELDS] = t;
    ((double *)out)[per * EV_NFIELDS + 1] = count;
    return 0;
}

/* The top K's simulations of this rank: item k is the (rank + k size)-th. */
typedef struct {
    api_search_ctx *x;
    const srch_cand *cand;
    const size_t *order;
    int rank, size;
} top_job;

static int simulate_top1(void *ctx, int k, void *out, size_t outlen, char *err, size_t errlen)
{
    const top_job *t = ctx;
    (void)outlen;
    return api_search_simulate(t->x, &t->cand[t->order[t->rank + (size_t)k * t->size]].l, out, err, errlen);
}

static void no_sum(double *buf, size_t n) { (void)buf, (void)n; }

ts_status ts_search(const ts_search_opts *o, ts_search_result **out, char *msg, size_t msglen)
{
    ts_search_result *r = ts_calloc(1, sizeof *r);
    *out = NULL;
    if (msglen) msg[0] = 0;
    ts_status st = api_search_prepare(o, r, msg, msglen);
    if (st != TS_OK) {
        ts_search_result_free(r);
        return st;
    }
    struct ts_search_priv *pv = r->priv;
    api_search_ctx *x = &pv->x;
    eng_set_policy(pv->policy);
    int rank = o->nranks > 1 ? o->rank : 0, size = o->nranks > 1 ? o->nranks : 1;
    void (*sum)(double *, size_t) = o->sum && size > 1 ? o->sum : no_sum;
    int top = o->top < 0 ? 5 : o->top;
    x->tty = o->progress && rank == 0 && isatty(2);
    double t0 = ts_wtime();
    size_t n = pv->n = srch_enumerate(x->m, &x->p, &pv->cand);
    srch_cand *cand = pv->cand;
    /* each rank evaluates every size-th block of candidates, its share split
     * across forked processes; the sums combine them (one non-zero term each) */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = o->jobs > 0 ? o->jobs : ncpu / size > 1 ? (int)(ncpu / size) : 1;
    double *ev = ts_calloc(n ? n * EV_NFIELDS : 1, sizeof *ev);
    double t_estimates = 0; /* seconds in evaluations that ended estimated (checks included) */
    size_t my_estimates = 0;
    size_t share = part_count(n, rank, size, 1, 0); /* this rank's candidates */
    int parts = share >= 64 ? jobs : 1; /* a process per part; tiny searches stay here */
    est_job ej = {x, cand, n, rank, size, parts};
    size_t per = part_count(n, rank, size, parts, 0); /* part 0 has the most */
    size_t outlen = (per * EV_NFIELDS + 2) * sizeof(double);
    double *parts_ev = ts_malloc(parts * outlen);
    char *errs = ts_calloc(parts, TS_ERRLEN);
    int *rcs = ts_malloc(parts * sizeof *rcs);
    ts_fork_map(parts, parts, evaluate_part, &ej, parts_ev, outlen, errs, TS_ERRLEN, rcs);
    for (int w = 0; w < parts; w++) {
        double *pe = (double *)((char *)parts_ev + w * outlen);
        if (rcs[w] != 0) evaluate_part(&ej, w, pe, outlen, errs, TS_ERRLEN); /* its child died: here */
        size_t k = 0;
        FOR_PART(i, n, rank, size, parts, w) memcpy(ev + i * EV_NFIELDS, pe + k++ * EV_NFIELDS, EV_NFIELDS * sizeof *ev);
        t_estimates += pe[per * EV_NFIELDS], my_estimates += (size_t)pe[per * EV_NFIELDS + 1];
    }
    free(parts_ev);
    free(errs);
    free(rcs);
    progress(x, "estimate", n, n);
    sum(ev, n * EV_NFIELDS);
    for (size_t i = 0; i < n; i++) {
        const double *e = ev + i * EV_NFIELDS;
        cand[i].status = (int)e[EV_STATUS], cand[i].mem = e[EV_MEM], cand[i].iter = e[EV_ITER];
        cand[i].score = e[EV_SCORE], cand[i].bubble = e[EV_BUBBLE], cand[i].dp_exposed = e[EV_DP];
    }
    free(ev);
    r->wall_estimate_s = ts_wtime() - t0;
    r->my_estimates = my_estimates, r->wall_my_estimates_s = t_estimates;
    size_t ne = pv->ne = srch_rank(cand, n, &pv->order);
    size_t *order = pv->order;
    size_t ntop = ne < (size_t)top ? ne : (size_t)top;
    srch_count(cand, n, &pv->k);

    /* simulate the top K, split across ranks the same way, and within a rank
     * across forked processes (each loads the platform once) */
    int simulate_top = x->fid != -2, failed = 0;
    double *sim = pv->sim = ts_calloc(ntop ? ntop * SIM_NFIELDS : 1, sizeof *sim);
    size_t used = 0; /* of msg: one line per failed simulation */
    int mine = simulate_top && (size_t)rank < ntop ? (int)((ntop - rank + size - 1) / size) : 0;
    for (int k = 0; k < mine && !failed; k++) {
        mem_breakdown mb;
        mem_estimate(x->m, &cand[order[rank + (size_t)k * size]].l, x->p.seq, x->p.dtype, pv->gpu.hbm_bytes, &mb);
        if (!mb.fits) { /* impossible: only estimated (fitting) layouts are ranked */
            ts_err(msg, msglen, "internal error: a layout that does not fit reached simulation");
            failed = 1;
        }
    }
    if (!failed && mine > 0) {
        top_job tj = {x, cand, order, rank, size};
        double *rows = ts_malloc((size_t)mine * SIM_NFIELDS * sizeof *rows);
        char *errs = ts_calloc((size_t)mine, TS_ERRLEN);
        int *rcs = ts_malloc((size_t)mine * sizeof *rcs);
        progress(x, "simulate", 0, ntop);
        ts_fork_map(jobs, mine, simulate_top1, &tj, rows, SIM_NFIELDS * sizeof *rows, errs, TS_ERRLEN, rcs);
        for (int k = 0; k < mine; k++) {
            size_t j = rank + (size_t)k * size;
            memcpy(sim + j * SIM_NFIELDS, rows + (size_t)k * SIM_NFIELDS, SIM_NFIELDS * sizeof *sim);
            if (rcs[k] == 0) continue;
            char lay[256];
            wl_layout_format(&cand[order[j]].l, lay, sizeof lay);
            if (used < msglen)
                used += snprintf(msg + used, msglen - used, "%s%s: %s", used ? "\n" : "", lay, errs + (size_t)k * TS_ERRLEN);
            sim[j * SIM_NFIELDS + SIM_ITER] = -1;
        }
        progress(x, "simulate", ntop, ntop);
        free(rows);
        free(errs);
        free(rcs);
    }
    sum(sim, ntop * SIM_NFIELDS);
    /* A simulation's last bits depend on the SimGrid clock it started from (the
     * runs before it in the process), which differs between serial and MPI runs:
     * keep 9 significant digits so that both print and rank the same. */
    for (size_t j = 0; j < ntop * SIM_NFIELDS; j++) {
        char b[32];
        snprintf(b, sizeof b, "%.9g", sim[j]);
        sim[j] = strtod(b, NULL);
    }
    if (simulate_top) pv->k.simulated = ntop;
    r->wall_total_s = ts_wtime() - t0;
    for (size_t j = 0; simulate_top && j < ntop; j++)
        if (sim[j * SIM_NFIELDS + SIM_ITER] <= 0) failed = 1;
    if (simulate_top) rerank(x, cand, order, sim, ntop);
    eng_set_policy(NULL); /* the policy dies with the result */

    r->enumerated = pv->k.enumerated, r->pruned_rule = pv->k.rule, r->pruned_memory = pv->k.memory;
    r->estimated = pv->k.estimated, r->failed = pv->k.failed, r->simulated = pv->k.simulated;
    r->ntop = ntop;
    r->top = ts_calloc(ntop ? ntop : 1, sizeof *r->top);
    pv->sim_of = ts_malloc((n ? n : 1) * sizeof *pv->sim_of);
    for (size_t i = 0; i < n; i++) pv->sim_of[i] = (size_t)-1;
    for (size_t j = 0; j < ntop; j++) {
        const srch_cand *cc = &cand[order[j]];
        const double *s = sim + j * SIM_NFIELDS;
        ts_search_layout *t = &r->top[j];
        if (simulate_top) pv->sim_of[order[j]] = j;
        wl_layout_format(&cc->l, t->layout, sizeof t->layout);
        t->index = order[j];
        t->gpus = wl_layout_ngpus(&cc->l);
        t->memory_bytes = cc->mem, t->estimate_s = cc->iter;
        t->iteration_s = simulate_top ? s[SIM_ITER] : cc->iter;
        if (t->iteration_s > 0) {
            t->tflops_per_gpu = api_search_tflops(x, &cc->l, t->iteration_s);
            t->mfu = srch_mfu(x->m, &x->p, &cc->l, t->iteration_s);
        }
        int d = simulate_top ? dominant(s + SIM_CAT0) : -1;
        if (simulate_top) memcpy(t->breakdown, s + SIM_CAT0, sizeof t->breakdown);
        if (d >= 0) api_copy(t->dominant, sizeof t->dominant, an_cat_name(d)), t->dominant_s = s[SIM_CAT0 + d];
        else if (!simulate_top && cc->dp_exposed > 0) api_copy(t->dominant, sizeof t->dominant, "dp"),
                                                      t->dominant_s = cc->dp_exposed;
    }
    r->ncandidates = n;
    r->candidates = ts_calloc(n ? n : 1, sizeof *r->candidates);
    for (size_t i = 0; i < n; i++) {
        ts_search_candidate *c = &r->candidates[i];
        wl_layout_format(&cand[i].l, c->layout, sizeof c->layout);
        c->gpus = wl_layout_ngpus(&cand[i].l);
        api_copy(c->status, sizeof c->status, api_search_status(cand[i].status));
        if (cand[i].status >= SRCH_MEMORY) c->memory_bytes = cand[i].mem;
        if (cand[i].status == SRCH_ESTIMATED) c->estimate_s = cand[i].iter;
    }
    *out = r;
    if (!ne && !used) ts_err(msg, msglen, "no layout fits: relax the constraints, add GPUs or a smaller global batch");
    return ne && !failed ? TS_OK : TS_FAILED;
}

void ts_search_result_free(ts_search_result *r)
{
    if (!r) return;
    if (r->priv) {
        coll_policy_free(r->priv->policy);
        free(r->priv->cand);
        free(r->priv->order);
        free(r->priv->sim);
        free(r->priv->sim_of);
        free(r->priv);
    }
    free(r->top);
    free(r->candidates);
    free(r);
}
