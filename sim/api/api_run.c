/* ts_run: one training iteration of a model under a parallel layout (the
 * compute core of `trainsim run`): memory fit, then the closed-form estimate,
 * the op graph's critical path, or its SimGrid simulation. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analytic/analytic.h"
#include "api_int.h"
#include "cluster.h"
#include "coll.h"
#include "coll_params.h"
#include "compute/compute.h"
#include "memory/memory.h"
#include "util.h"
#include "workload/workload.h"

_Static_assert((int)TS_NCATS == (int)AN_NCATS && (int)TS_COMPUTE == (int)AN_COMP && (int)TS_DP == (int)AN_DP && (int)TS_BUBBLE == (int)AN_IDLE,
               "trainsim.h's breakdown categories are analytic.h's");

/* net: "key=value,...": overrides of the analytical network's figures. */
static int parse_net(const char *s, an_net *net, char *err, size_t errlen)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"intra_bw", offsetof(an_net, intra_bw)}, {"intra_lat", offsetof(an_net, intra_lat)},
        {"inter_bw", offsetof(an_net, inter_bw)}, {"inter_lat", offsetof(an_net, inter_lat)},
    };
    char *copy = ts_strdup(s), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        size_t i;
        if (eq) *eq = 0;
        for (i = 0; i < sizeof keys / sizeof keys[0] && strcmp(tok, keys[i].key); i++) {}
        double v = eq ? strtod(eq + 1, &end) : 0;
        if (!eq || i == sizeof keys / sizeof keys[0] || *end || !(v >= 0) || !isfinite(v) ||
            (v == 0 && strstr(tok, "bw")))
            rc = ts_err(err, errlen, "--net: '%s' is not one of intra_bw, intra_lat, inter_bw, inter_lat "
                        "with a non-negative number (bandwidths positive, bytes/s; latencies s)", tok);
        else
            *(double *)((char *)net + keys[i].off) = v;
    }
    free(copy);
    return rc;
}

/* Rail copies (wl_info.copies): the platform's host names (natural order,
 * the engine's default placement: global rank i on names[i]) and the hosts
 * of every built rank's copies, for eng_set_copies. */
typedef struct copy_table {
    char **names;
    int nh;
    const char **host;
} copy_table;

static void copy_table_free(copy_table *t)
{
    for (int i = 0; t->names && i < t->nh; i++) free(t->names[i]);
    free(t->names);
    free(t->host);
    memset(t, 0, sizeof *t);
}

/* The built ranks go on the hosts of their global ranks, and the engine gets
 * their copies' hosts to check the copies against (eng_result.copies). */
static void rail_copies(og_graph *g, const wl_info *info, copy_table *t)
{
    int c = info->copies;
    size_t n = (size_t)g->nranks * c;
    t->names = eng_host_names(&t->nh);
    t->host = ts_malloc((n ? n : 1) * sizeof *t->host);
    for (size_t i = 0; i < n; i++) t->host[i] = info->copy_rank[i] < t->nh ? t->names[info->copy_rank[i]] : NULL;
    for (int r = 0; r < g->nranks; r++)
        if (t->host[(size_t)r * c]) og_set_host(g, r, t->host[(size_t)r * c]);
}

static void fill_memory(ts_memory *o, const mem_breakdown *mb)
{
    o->weights = mb->weights, o->gradients = mb->grads, o->optimizer = mb->optim;
    o->activations = mb->activations, o->workspace = mb->workspace, o->total = mb->total;
    o->capacity = mb->capacity, o->inflight = mb->inflight, o->stage = mb->stage, o->fits = mb->fits;
}

/* Throughput figures of an iteration of iter seconds. */
static void rates(ts_run_result *r, const wl_model *m, const wl_layout *l, int seq, const cm_gpu *gpu, cm_dtype dtype,
                  double iter)
{
    double hw = wl_iteration_flops(m, l, seq, 0), model = wl_iteration_flops(m, l, seq, 1);
    r->iteration_s = iter;
    r->tokens_per_s = (double)l->gbs * seq / iter;
    r->tflops_per_gpu = hw / iter / r->gpus / 1e12;
    r->mfu = model / iter / r->gpus / gpu->peak[dtype];
}

ts_status ts_run(const ts_run_opts *o, ts_run_result **out, char *msg, size_t msglen)
{
    *out = NULL;
    if (!o->model || !o->layout) return ts_err(msg, msglen, "a model and a layout are required"), TS_BAD_INPUT;
    const char *fid_name = o->fidelity;
    int estimate = fid_name && strcmp(fid_name, "estimate") == 0;
    int analytical = estimate || (fid_name && strcmp(fid_name, "analytical") == 0);
    int dtype = cm_dtype_from_name(api_or(o->dtype, "bf16"));
    if (dtype != CM_BF16 && dtype != CM_FP16 && dtype != CM_FP8 && dtype != CM_FP32)
        return ts_err(msg, msglen, "unknown dtype '%s' (valid: bf16, fp16, fp8, fp32)", o->dtype), TS_BAD_INPUT;
    const char *detail = api_or(o->detail, "reduced");
    int full = strcmp(detail, "full") == 0 ? 1 : strcmp(detail, "replicas") == 0 ? 2 : 0;
    if (!full && strcmp(detail, "reduced"))
        return ts_err(msg, msglen, "unknown detail '%s' (valid: reduced, replicas, full)", detail), TS_BAD_INPUT;
    if (o->links && analytical)
        return ts_err(msg, msglen, "--links needs a SimGrid fidelity (pipelined or step), not '%s'", fid_name),
               TS_BAD_INPUT;
    eng_opts eo = {ENG_PIPELINED, o->links, o->progress, 0, 0};
    if (fid_name && !analytical) {
        int f = eng_fidelity_from_name(fid_name);
        if (f < 0)
            return ts_err(msg, msglen, "unknown fidelity '%s' (valid: estimate, analytical, pipelined, step)",
                          fid_name), TS_BAD_INPUT;
        eo.fidelity = f;
    }
    const char *platform = o->c.cluster;
    if (!analytical && !platform)
        return ts_err(msg, msglen, "--platform is required unless --fidelity analytical"), TS_BAD_INPUT;

    const wl_stack *stack = wl_stack_default();
    if (o->stack && !(stack = wl_stack_find(o->stack, msg, msglen))) return TS_BAD_INPUT;
    ts_status st = TS_BAD_INPUT;
    ts_run_result *r = ts_calloc(1, sizeof *r);
    struct ts_run_priv *pv = r->priv = ts_calloc(1, sizeof *pv);
    if (api_policy(&o->c, &pv->policy, msg, msglen) < 0) goto out;
    eng_set_policy(pv->policy);

    /* A cluster gives the GPU and the analytical model's network figures. */
    topo_cluster cl;
    int have_cluster = 0, ngpus = o->gpus, seq = o->seq;
    const char *gpu_name = o->gpu;
    if (platform && topo_is_cluster_spec(platform)) {
        if (topo_load(platform, o->c.nodes, &cl, msg, msglen) < 0 ||
            (o->c.calibration && topo_calibrate(&cl, o->c.calibration, msg, msglen) < 0))
            goto out;
        have_cluster = 1;
        coll_params_set(&cl.coll); /* the collectives' cost parameters of this cluster */
        if (!gpu_name) gpu_name = cl.gpu_key;
    } else if (analytical) {
        /* no cluster: NCCL's own figures, whatever an earlier call in this
         * process set (a library user's ts_coll on another cluster, a test's
         * bare figures), so the answer is the CLI's */
        coll_params q;
        coll_params_preset(&q, COLL_LIB_NCCL);
        coll_params_set(&q);
    }
    if (!gpu_name) gpu_name = "h100";

    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    char models_dir[4200], gpus_dir[4200];
    snprintf(models_dir, sizeof models_dir, "%s/models", ts_config_dir());
    snprintf(gpus_dir, sizeof gpus_dir, "%s/gpus", ts_config_dir());
    if (wl_model_find(o->model, models_dir, &m, msg, msglen) < 0 || cm_gpu_find(gpu_name, gpus_dir, &gpu, msg, msglen) < 0 ||
        (o->gemm_table && cm_gpu_calibrate(&gpu, o->gemm_table, msg, msglen) < 0) ||
        wl_layout_parse(o->layout, &l, msg, msglen) < 0)
        goto out;
    if (!seq) seq = m.max_seq < 8192 ? m.max_seq : 8192;
    wl_model_fit_seq(&m, seq);
    if (!analytical) {
        /* the platform's GPU count derives dp; a layout needing more GPUs is rejected */
        if (api_engine(&o->c, o->c.nodes, msg, msglen) < 0) goto out;
        if (!ngpus && !l.dp) ngpus = eng_host_count();
        if (wl_layout_parse(o->layout, &l, msg, msglen) == 0 && l.dp && wl_layout_ngpus(&l) > eng_host_count()) {
            ts_err(msg, msglen, "layout needs %d gpus, the platform has %d hosts", wl_layout_ngpus(&l), eng_host_count());
            goto out;
        }
    }
    if (wl_layout_check(&l, &m, seq, ngpus, msg, msglen) < 0) goto out;
    wl_layout_apply_stack(&l, stack);
    if (gpu.peak[dtype] <= 0) {
        ts_err(msg, msglen, "%s has no %s peak in its spec", gpu.name, cm_dtype_name(dtype));
        goto out;
    }
    r->gpus = ngpus = wl_layout_ngpus(&l);
    wl_layout_format(&l, r->layout, sizeof r->layout);
    api_copy(r->model, sizeof r->model, m.name);
    api_copy(r->gpu, sizeof r->gpu, gpu.name);
    api_copy(r->dtype, sizeof r->dtype, cm_dtype_name(dtype));
    api_copy(r->stack, sizeof r->stack, stack->name);
    api_copy(r->stack_description, sizeof r->stack_description, stack->description);
    api_copy(r->fidelity, sizeof r->fidelity, estimate ? "estimate" : analytical ? "analytical"
                                                                                 : eng_fidelity_name(eo.fidelity));
    api_copy(r->detail, sizeof r->detail, estimate ? "none" : full == 1 ? "full" : full == 2 ? "replicas" : "reduced");
    r->params = wl_model_params(&m, wl_padded_vocab(&m, &l));
    r->layers = m.layers, r->hidden = m.hidden, r->seq = seq, r->micro_batches = wl_layout_micro(&l);
    r->axonn = l.axonn, r->axonn_overlap = !l.ax_serial;
    mem_breakdown mb;
    mem_estimate(&m, &l, seq, dtype, gpu.hbm_bytes, &mb);
    fill_memory(&r->memory, &mb);
    *out = r; /* from here on the caller gets what was computed, also on failure */
    if (!mb.fits) {
        ts_err(msg, msglen, "the layout does not fit in GPU memory");
        st = TS_FAILED;
        goto out;
    }

    an_net net;
    if (an_net_default(gpu.name, &net) < 0) an_net_default("H100", &net);
    if (have_cluster) topo_an_figures(&cl, &net.gpus_per_node, &net.intra_bw, &net.intra_lat, &net.inter_bw,
                                      &net.inter_lat);
    if (have_cluster) net.nvls = cl.node.nvls, net.nic_gpus = cl.coll.nic_gpus;
    topo_net_links fabric; /* the cluster's fabric between nodes (net's), while net is used */
    topo_gpu_links gpu_links; /* and its links inside a node */
    if (have_cluster) topo_net_links_init(&fabric, &cl), net.fabric = &fabric.f;
    if (have_cluster) topo_gpu_links_init(&gpu_links, &cl), net.gpu_links = &gpu_links.links;
    net.policy = pv->policy;
    if (o->gpus_per_node) net.gpus_per_node = o->gpus_per_node;
    if (o->net && parse_net(o->net, &net, msg, msglen) < 0) goto out;
    wl_opts wo = {seq, dtype, &gpu, &net, full != 1, full == 0, stack};
    if (estimate) {
        wl_est e;
        double t0 = ts_wtime();
        if (wl_estimate(&m, &l, &wo, &e, msg, msglen) < 0) goto out;
        r->sim_wall_s = ts_wtime() - t0;
        rates(r, &m, &l, seq, &gpu, dtype, e.iter);
        r->breakdown[TS_COMPUTE] = (l.axonn ? e.compute : e.pipeline - e.bubble) + e.optimizer;
        r->breakdown[TS_TP] = e.tp_exposed;  /* AxoNN: the grid's collectives not hidden by compute */
        r->breakdown[TS_DP] = e.dp_exposed;
        r->breakdown[TS_BUBBLE] = e.bubble;
        r->est_forward = e.tf, r->est_backward = e.tb, r->est_wgrad = e.tw, r->est_bubble = e.bubble;
        r->est_dp_exposed = e.dp_exposed, r->est_optimizer = e.optimizer, r->est_compute = e.compute;
        r->est_tp_exposed = e.tp_exposed;
        r->simulated = 1;
        st = TS_OK;
        goto out;
    }
    wl_info info;
    double t0 = ts_wtime();
    wl_rail_copies(full == 2 && !analytical && !o->every_rank);
    int built = wl_build(&m, &l, &wo, &pv->g, &info, msg, msglen);
    wl_rail_copies(0);
    if (built < 0) goto out;
    r->graph_wall_s = ts_wtime() - t0;
    copy_table ct = {0};
    int copies = info.copies > 1 ? info.copies : 0;
    if (copies) rail_copies(pv->g, &info, &ct);
    free(info.copy_rank);
    r->ranks_built = info.ranks_built, r->ranks_total = info.ranks_total, r->ops = og_total_ops(pv->g);
    if (analytical) {
        if (an_run(pv->g, &net, &pv->res, msg, msglen) < 0) {
            st = TS_FAILED;
            goto out;
        }
    } else {
        eng_set_copies(copies, ct.host);
        int rc = eng_run(pv->g, &eo, &pv->res, msg, msglen);
        if (rc == 0 && copies && pv->res->copies == -1) { /* links every copy shares: divided, run again */
            eng_result_free(pv->res);
            pv->res = NULL;
            rc = eng_run(pv->g, &eo, &pv->res, msg, msglen);
        }
        eng_set_copies(0, NULL);
        copy_table_free(&ct);
        if (rc == 0 && copies && pv->res->copies != copies) {
            /* the copies would not have run as their ranks: simulate every rank */
            api_copy(r->copies_why, sizeof r->copies_why, pv->res->copies_why);
            eng_result_free(pv->res);
            pv->res = NULL;
            og_free(pv->g);
            pv->g = NULL;
            copies = 0;
            double t1 = ts_wtime();
            if (wl_build(&m, &l, &wo, &pv->g, &info, msg, msglen) < 0) goto out;
            r->graph_wall_s += ts_wtime() - t1;
            r->ranks_built = info.ranks_built, r->ops = og_total_ops(pv->g);
            rc = eng_run(pv->g, &eo, &pv->res, msg, msglen);
        }
        if (rc < 0) {
            st = strncmp(msg, "deadlock", 8) == 0 ? TS_FAILED : TS_BAD_INPUT;
            goto out;
        }
        r->copies = copies ? copies : 1;
    }
    if (!analytical) an_wait_as_idle(pv->g, pv->res); /* consistent breakdown: waiting is bubble */
    r->sim_wall_s = pv->res->wall;
    rates(r, &m, &l, seq, &gpu, dtype, pv->res->makespan);
    an_breakdown(pv->g, pv->res, -1, r->breakdown);
    /* fused intra-node TP collectives sit inside compute ops: move them back */
    double tp_fused = info.fused_tp_s / info.ranks_built;
    r->breakdown[TS_COMPUTE] -= tp_fused;
    r->breakdown[TS_TP] += tp_fused;
    r->nlinks = pv->res->nlinks;
    r->links = ts_calloc(r->nlinks ? r->nlinks : 1, sizeof *r->links);
    for (size_t i = 0; i < r->nlinks; i++) {
        const eng_link *k = &pv->res->links[i];
        api_copy(r->links[i].name, sizeof r->links[i].name, k->name);
        r->links[i].bytes = k->bytes, r->links[i].bandwidth = k->bandwidth, r->links[i].busy = k->busy;
    }
    r->simulated = 1;
    st = TS_OK;
out:
    eng_set_policy(NULL); /* the policy dies with the result */
    if (!*out) ts_run_result_free(r);
    return st;
}

void ts_run_result_free(ts_run_result *r)
{
    if (!r) return;
    if (r->priv) {
        eng_result_free(r->priv->res);
        og_free(r->priv->g);
        coll_policy_free(r->priv->policy);
        free(r->priv);
    }
    free(r->links);
    free(r);
}
