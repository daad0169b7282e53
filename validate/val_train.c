/* Training accuracy: published training runs (configs/measurements/training/
 * *.csv) read as rows, each predicted with `trainsim run`'s model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic/analytic.h"
#include "cluster.h"
#include "compute/compute.h"
#include "memory/memory.h"
#include "util.h"
#include "val_train.h"
#include "workload/workload.h"

/* Split one CSV line in place into at most max fields ("..." quotes a field
 * holding commas). Returns the field count. */
static int csv_split(char *s, char **f, int max)
{
    int n = 0;
    while (n < max) {
        if (*s == '"') {
            f[n++] = ++s;
            char *q = strchr(s, '"');
            if (!q) return n;
            *q = 0;
            s = q + 1;
            if (*s != ',') return n;
            s++;
        } else {
            f[n++] = s;
            char *c = strchr(s, ',');
            if (!c || n == max) return n;  /* the last field keeps its commas */
            *c = 0;
            s = c + 1;
        }
    }
    return n;
}

enum { F_TABLE, F_MODEL, F_LAYOUT, F_GPUS, F_GPU, F_CLUSTER, F_STACK, F_DTYPE, F_SEQ, F_TFLOPS, F_SOURCE, F_N };
static const char *fields[F_N] = {"table", "model", "layout", "gpus", "gpu", "cluster",
                                  "stack", "dtype", "seq", "tflops", "source"};

static void copy(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s); }

int val_train_load(const char *path, val_train_row **rows, int *nrows, char *err, size_t errlen)
{
    *rows = NULL;
    *nrows = 0;
    FILE *f = fopen(path, "r");
    if (!f) return ts_err(err, errlen, "%s: cannot open", path);
    char line[2048];
    int lineno = 0, header = 0, n = 0, model_flops = 0;
    size_t cap = 0;
    val_train_row *r = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#') {
            const char *d = line + 1 + strspn(line + 1, " ");
            if (!strncmp(d, "flops:", 6)) {
                d += 6 + strspn(d + 6, " ");
                if (!strcmp(d, "model")) model_flops = WL_FLOPS_MODEL;
                else if (!strcmp(d, "model-causal")) model_flops = WL_FLOPS_MODEL_CAUSAL;
                else if (!strcmp(d, "executed")) model_flops = WL_FLOPS_EXECUTED;
                else {
                    fclose(f);
                    free(r);
                    return ts_err(err, errlen, "%s: line %d: 'flops: %s': want model, model-causal or executed", path,
                                  lineno, d);
                }
            }
            continue;
        }
        if (!line[0]) continue;
        char *fl[F_N];
        int k = csv_split(line, fl, F_N);
        if (!header) {
            for (int i = 0; i < F_N; i++)
                if (k != F_N || strcmp(fl[i], fields[i])) {
                    fclose(f);
                    free(r);
                    return ts_err(err, errlen, "%s: line %d: header must be %s,%s,...,%s", path, lineno, fields[0],
                                  fields[1], fields[F_N - 1]);
                }
            header = 1;
            continue;
        }
        if (k != F_N) {
            fclose(f);
            free(r);
            return ts_err(err, errlen, "%s: line %d: %d fields, want %d", path, lineno, k, F_N);
        }
        ts_grow(&r, sizeof *r, &cap, (size_t)n + 1);
        val_train_row *w = &r[n];
        memset(w, 0, sizeof *w);
        copy(w->table, sizeof w->table, fl[F_TABLE]);
        copy(w->model, sizeof w->model, fl[F_MODEL]);
        copy(w->layout, sizeof w->layout, fl[F_LAYOUT]);
        copy(w->gpu, sizeof w->gpu, fl[F_GPU]);
        copy(w->cluster, sizeof w->cluster, fl[F_CLUSTER]);
        copy(w->stack, sizeof w->stack, fl[F_STACK]);
        copy(w->dtype, sizeof w->dtype, fl[F_DTYPE]);
        copy(w->source, sizeof w->source, fl[F_SOURCE]);
        char *e1, *e2, *e3;
        w->gpus = (int)strtol(fl[F_GPUS], &e1, 10);
        w->seq = (int)strtol(fl[F_SEQ], &e2, 10);
        w->published = strtod(fl[F_TFLOPS], &e3);
        w->line = lineno;
        w->model_flops = model_flops;
        if (*e1 || *e2 || *e3 || w->gpus < 1 || w->seq < 1 || !(w->published > 0)) {
            fclose(f);
            free(r);
            return ts_err(err, errlen, "%s: line %d: gpus '%s', seq '%s' and tflops '%s' must be positive numbers",
                          path, lineno, fl[F_GPUS], fl[F_SEQ], fl[F_TFLOPS]);
        }
        n++;
    }
    fclose(f);
    if (!header) {
        free(r);
        return ts_err(err, errlen, "%s: no header line", path);
    }
    *rows = r;
    *nrows = n;
    return 0;
}

int val_train_predict(const val_train_row *r, val_train_pred *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char dir[4200], cpath[4300];
    wl_model m;
    wl_layout l;
    cm_gpu gpu;
    topo_cluster cl;
    snprintf(dir, sizeof dir, "%s/models", ts_config_dir());
    if (wl_model_find(r->model, dir, &m, err, errlen) < 0) return -1;
    snprintf(dir, sizeof dir, "%s/gpus", ts_config_dir());
    if (cm_gpu_find(r->gpu, dir, &gpu, err, errlen) < 0) return -1;
    snprintf(cpath, sizeof cpath, "%s/clusters/%s.json", ts_config_dir(), r->cluster);
    int dtype = cm_dtype_from_name(r->dtype);
    if (dtype < 0 || gpu.peak[dtype] <= 0) return ts_err(err, errlen, "dtype '%s' unknown or without a peak", r->dtype);
    if (wl_layout_parse(r->layout, &l, err, errlen) < 0) return -1;
    wl_model_fit_seq(&m, r->seq);
    if (wl_layout_check(&l, &m, r->seq, r->gpus, err, errlen) < 0) return -1;
    const wl_stack *st = wl_stack_find(r->stack, err, errlen);
    if (!st) return -1;
    wl_layout_apply_stack(&l, st);
    if (topo_load(cpath, 0, &cl, err, errlen) < 0) return -1;
    an_net net;
    if (an_net_default(gpu.name, &net) < 0) an_net_default("H100", &net);
    topo_an_figures(&cl, &net.gpus_per_node, &net.intra_bw, &net.intra_lat, &net.inter_bw, &net.inter_lat);
    net.nvls = cl.node.nvls;
    net.nic_gpus = cl.coll.nic_gpus;
    topo_net_links fabric;
    topo_net_links_init(&fabric, &cl);
    net.fabric = &fabric.f;
    topo_gpu_links gpu_links;
    topo_gpu_links_init(&gpu_links, &cl);
    net.gpu_links = &gpu_links.links;
    mem_breakdown mb;
    mem_estimate(&m, &l, r->seq, dtype, gpu.hbm_bytes, &mb);
    p->fits = mb.fits;
    p->mem = mb.total;
    wl_opts o = {r->seq, dtype, &gpu, &net, 1, 1, st};
    og_graph *g = NULL;
    wl_info info;
    eng_result *res = NULL;
    /* reduced detail on the analytical critical path; the closed-form estimate
     * where the graph would be too large to stay fast */
    double nops = (double)l.tp * l.pp * l.cp * l.ep * wl_layout_micro(&l) * (2.0 * m.layers / l.pp + 4);
    if (nops < 4e6 && wl_build(&m, &l, &o, &g, &info, err, errlen) == 0) {
        if (an_run(g, &net, &res, err, errlen) < 0) {
            og_free(g);
            return -1;
        }
        p->iter = res->makespan;
        p->how = "analytical";
        eng_result_free(res);
        og_free(g);
    } else {
        wl_est e;
        if (wl_estimate(&m, &l, &o, &e, err, errlen) < 0) return -1;
        p->iter = e.iter;
        p->how = "estimate";
    }
    p->tflops = wl_iteration_flops(&m, &l, r->seq, r->model_flops) / p->iter / r->gpus / 1e12;
    return 0;
}

/* Ranks (1-based, ties averaged) of x. */
static void ranks(const double *x, int n, double *rk)
{
    for (int i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (int j = 0; j < n; j++) less += x[j] < x[i], eq += x[j] == x[i];
        rk[i] = less + (eq + 1) / 2.0;
    }
}

double val_spearman(const double *a, const double *b, int n)
{
    if (n < 2) return NAN;
    double *ra = ts_malloc(2 * (size_t)n * sizeof *ra), *rb = ra + n;
    ranks(a, n, ra);
    ranks(b, n, rb);
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) ma += ra[i] / n, mb += rb[i] / n;
    for (int i = 0; i < n; i++)
        sab += (ra[i] - ma) * (rb[i] - mb), saa += (ra[i] - ma) * (ra[i] - ma), sbb += (rb[i] - mb) * (rb[i] - mb);
    free(ra);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}
