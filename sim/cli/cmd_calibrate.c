/* `trainsim calibrate`: fit the cost model's own terms (coll_params: achievable
 * bandwidth per link tier, base and per-step latency per algorithm family and
 * protocol) to measured collectives and write a calibration JSON. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "coll.h"
#include "coll_params.h"
#include "engine.h"
#include "util.h"
#include "val.h"

static const char calibrate_help[] =
    "usage: trainsim calibrate MEASUREMENTS... --cluster C -o calib.json [options]\n\n"
    "Fit the cost model's terms to measured collectives (nccl-tests / rccl-tests\n"
    "tables, OSU outputs; any number of files and runs, fitted jointly): per scope\n"
    "(intra-node, inter-node) the achievable bandwidth fraction of its link tier,\n"
    "shared by every algorithm, and per algorithm family and protocol the\n"
    "selection runs (or --algo forces) its base latency and per-step latency on\n"
    "that tier (NCCL's baseLat and hwLat; models/coll/coll_params.h). GSL nonlinear\n"
    "least squares on log residuals, each term kept inside its bounds by a\n"
    "transformation: a term that ends at a bound is named, never clamped. Prints\n"
    "per run the residual of every size and a cross-validation (the terms fitted\n"
    "on every other size predict the rest). The calibration applies alike in\n"
    "coll, sim, run, search and compare (--calibration). Fields and bounds:\n"
    "docs/validation.md.\n\n"
    "options:\n"
    "  --cluster C        cluster the measurements came from (name or JSON)\n"
    "  --nodes N          cluster node count\n"
    "  -o, --output F     calibration JSON to write (required)\n"
    "  --algo A[:PROTO]   algorithm the measurements used (default: the selection's)\n"
    "  --gpus N           rank count, when the output does not tell\n"
    "  -b, --minbytes S   fit only sizes >= S;  -e, --maxbytes S: only sizes <= S\n"
    "  --half even|odd    fit only every other size (rows 0, 2, ... or 1, 3, ...)\n"
    "  --fidelity F       of the predictions and the fit: pipelined (default) or analytical\n"
    CMD_MEAS_PARSE_HELP
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 a fit failed, 2 bad input.\n";

typedef struct copts {
    cmd_meas_opts m;
    const char *out;
} copts;

/* One measured run and what the fit made of it. */
typedef struct mrun {
    const char *file;
    int coll, n, scope, algo, npts;
    int ppn;                     /* ranks per host of the measurement (0: unknown: packed) */
    int gpp;                     /* GPUs per thread (--gpus-per-proc, else the log's nGpus, else 1) */
    int bound;                   /* the launch bound next to the GPUs (--gpu-bind=closest in its header) */
    coll_nccl_env env;           /* the NCCL settings it ran with (its log's under --nccl-env) */
    char algo_spec[96];          /* the algorithm forced (--algo, else a single NCCL_ALGO), or "" */
    char tool[32];
    int64_t *size;
    double *t, *unc, *fit, *cv;  /* measured, uncalibrated, fitted, cross-validated (s) */
} mrun;

/* What the child sends back besides the per-run columns. */
typedef struct cal_out {
    int nterms;
    char names[VAL_MAX_TERMS][48];
    double values[VAL_MAX_TERMS], lo[VAL_MAX_TERMS], hi[VAL_MAX_TERMS];
    val_terms_fit fit;
    char cv_note[TS_ERRLEN]; /* why a cross-validation fold could not be fitted, or "" */
    char collectives[4096];  /* the fitted terms as a "collectives" object */
} cal_out;

typedef struct cal_job {
    const copts *o;
    int sgc;
    char **sgv;
    mrun *runs;
    int nruns;
} cal_job;

static int select_rows(const copts *o, val_run *r, mrun *m, const char *file, char *err, size_t errlen)
{
    if (o->m.gpus) val_run_set_ranks(r, o->m.gpus);
    m->file = file;
    m->coll = r->coll;
    m->n = o->m.gpus ? o->m.gpus : r->nranks;
    m->ppn = o->m.gpus ? 0 : r->ppn;
    m->gpp = o->m.gpus_per_proc ? o->m.gpus_per_proc : r->gpus_per_proc ? r->gpus_per_proc : 1;
    m->bound = r->proxy_bound;
    snprintf(m->tool, sizeof m->tool, "%s", r->tool);
    if (r->coll < 0 || r->coll == VAL_P2P || r->coll == OG_BARRIER)
        return ts_err(err, errlen, "line %d: collective '%s' cannot be calibrated (only all_reduce, all_gather, "
                      "reduce_scatter, broadcast, reduce, alltoall)", r->first_line, val_coll_name(r->coll));
    if (m->n < 2)
        return ts_err(err, errlen, "line %d: the output does not tell the rank count: give --gpus", r->first_line);
    /* the NCCL settings it ran with: its log's, under --nccl-env */
    char spec[96];
    const char *algo = cmd_nccl_env_resolve("calibrate", file, &r->env, &o->m.env, o->m.algo, (og_coll)r->coll,
                                            &m->env, spec, sizeof spec);
    snprintf(m->algo_spec, sizeof m->algo_spec, "%s", algo ? algo : "");
    size_t k = r->nrows + 1;
    m->size = ts_malloc(k * sizeof *m->size);
    m->t = ts_malloc(k * sizeof(double)), m->unc = ts_malloc(k * sizeof(double));
    m->fit = ts_malloc(k * sizeof(double)), m->cv = ts_malloc(k * sizeof(double));
    m->npts = val_run_select(r, o->m.minb, o->m.maxb, o->m.half, m->size, m->t);
    if (m->npts < 4)
        return ts_err(err, errlen, "line %d: %s: only %d usable sizes after -b/-e/--half (4 needed)", r->first_line,
                      val_coll_name(r->coll), m->npts);
    return 0;
}

static size_t out_size(const cal_job *j)
{
    size_t n = sizeof(cal_out);
    for (int r = 0; r < j->nruns; r++) n += (2 + 3 * (size_t)j->runs[r].npts) * sizeof(double);
    return n;
}

/* Fit with the points of fold (0: even indices, 1: odd, -1: all) and, for a
 * fold, predict the others into each run's cv column. */
static int fit_fold(val_cal_set *cs, mrun *runs, int **idx, int fold, char *err, size_t errlen)
{
    for (int r = 0; r < cs->nruns; r++) {
        int k = 0;
        for (int i = 0; i < runs[r].npts; i++)
            if (fold < 0 || i % 2 == fold) idx[r][k++] = i;
        cs->runs[r].idx = idx[r], cs->runs[r].nidx = k;
    }
    if (val_cal_fit(cs, 1, err, errlen) < 0) return -1;
    if (fold < 0) return 0;
    for (int r = 0; r < cs->nruns; r++) {
        int k = 0, *rest = ts_malloc((runs[r].npts + 1) * sizeof *rest);
        double *p = ts_malloc((runs[r].npts + 1) * sizeof *p);
        for (int i = 0; i < runs[r].npts; i++)
            if (i % 2 != fold) rest[k++] = i;
        val_cal_use(cs, &cs->runs[r]);
        int rc = val_cal_predict(&cs->runs[r], rest, k, p, err, errlen);
        for (int i = 0; i < k && rc == 0; i++) runs[r].cv[rest[i]] = p[i];
        free(rest), free(p);
        if (rc < 0) return -1;
    }
    return 0;
}

/* The child: load the plain cluster, one sweep per run, the uncalibrated
 * column, the two cross-validation folds, then the fit on every point. */
static int child(void *vctx, void *vout, size_t outlen, char *err, size_t errlen)
{
    cal_job *j = vctx;
    (void)outlen;
    int sgc = j->sgc, rc = 0;
    eng_init(&sgc, j->sgv);
    if (eng_load(j->o->m.cluster, j->o->m.nodes, NULL, err, errlen) < 0) return -1;
    val_sweep *sw = ts_calloc(j->nruns, sizeof *sw);
    val_cal_run *cr = ts_calloc(j->nruns, sizeof *cr);
    int **idx = ts_calloc(j->nruns, sizeof *idx), opened = 0;
    cal_out *co = vout;
    /* the launch floor is process-wide: runs that drove different GPU counts
     * per thread cannot share one fit */
    for (int r = 1; r < j->nruns && rc == 0; r++)
        if (j->runs[r].gpp != j->runs[0].gpp)
            rc = ts_err(err, errlen, "%s has %d GPUs per thread, %s %d: calibrate them apart (or give --gpus-per-proc)",
                        j->runs[r].file, j->runs[r].gpp, j->runs[0].file, j->runs[0].gpp);
    /* so is the launch's binding (the lock-step waits it selects) */
    for (int r = 1; r < j->nruns && rc == 0; r++)
        if (j->runs[r].bound != j->runs[0].bound)
            rc = ts_err(err, errlen, "%s was launched %s, %s %s: calibrate them apart", j->runs[r].file,
                        j->runs[r].bound ? "bound (--gpu-bind=closest)" : "unbound", j->runs[0].file,
                        j->runs[0].bound ? "bound" : "unbound");
    /* and so are its NCCL settings (coll_set_nccl_env) */
    for (int r = 1; r < j->nruns && rc == 0; r++)
        if (!coll_nccl_env_same(&j->runs[r].env, &j->runs[0].env)) {
            char a[512], b[512];
            coll_nccl_env_describe(&j->runs[r].env, a, sizeof a);
            coll_nccl_env_describe(&j->runs[0].env, b, sizeof b);
            rc = ts_err(err, errlen, "%s ran with NCCL settings '%s', %s with '%s': calibrate them apart", j->runs[r].file,
                        a[0] ? a : "none", j->runs[0].file, b[0] ? b : "none");
        }
    if (j->nruns) coll_set_gpus_per_proc(j->runs[0].gpp);
    if (j->nruns) coll_set_proxy_bound(j->runs[0].bound);
    if (j->nruns) coll_set_nccl_env(j->runs[0].env.set ? &j->runs[0].env : NULL);
    for (int r = 0; r < j->nruns && rc == 0; r++, opened++) {
        mrun *m = &j->runs[r];
        if ((rc = val_sweep_open(&sw[r], m->coll, m->n, 0, OG_F32, j->o->m.fidelity, m->algo_spec[0] ? m->algo_spec : NULL,
                                 err, errlen)) < 0 ||
            (rc = val_sweep_place(&sw[r], m->ppn, err, errlen)) < 0)
            break;
        m->scope = sw[r].topo && sw[r].topo->nnodes > 1 ? VAL_INTER : VAL_INTRA;
        idx[r] = ts_malloc((m->npts + 1) * sizeof **idx);
        for (int i = 0; i < m->npts && rc == 0; i++) {
            val_point pt;
            rc = val_sweep_size(&sw[r], m->size[i], &pt, err, errlen);
            m->unc[i] = pt.time, m->algo = pt.algo;
        }
        cr[r] = (val_cal_run){&sw[r], m->size, m->t, m->npts, NULL, 0, m->scope};
    }
    val_cal_set *cs = ts_malloc(sizeof *cs);
    if (rc == 0) val_cal_init(cs, cr, j->nruns);
    for (int r = 0; r < j->nruns; r++)
        for (int i = 0; i < j->runs[r].npts; i++) j->runs[r].cv[i] = NAN;
    /* a fold too small for the terms leaves its sizes without a
     * cross-validated figure (said in the report), not the fit without one */
    for (int fold = 0; fold < 2 && rc == 0; fold++)
        fit_fold(cs, j->runs, idx, fold, co->cv_note, sizeof co->cv_note);
    if (rc == 0) rc = fit_fold(cs, j->runs, idx, -1, err, errlen);
    for (int r = 0; r < j->nruns && rc == 0; r++) {
        for (int i = 0; i < j->runs[r].npts; i++) idx[r][i] = i;
        val_cal_use(cs, &cr[r]);
        rc = val_cal_predict(&cr[r], idx[r], j->runs[r].npts, j->runs[r].fit, err, errlen);
    }
    if (rc == 0) {
        co->nterms = cs->nterms, co->fit = cs->fit;
        for (int t = 0; t < cs->nterms; t++) {
            memcpy(co->names[t], cs->names[t], sizeof co->names[t]);
            co->values[t] = val_cal_value(cs, t);
            /* the bounds as the value's (a bandwidth factor's as fractions) */
            double k = co->values[t] / *cs->terms[t].value;
            co->lo[t] = cs->terms[t].lo * (isfinite(k) ? k : 1), co->hi[t] = cs->terms[t].hi * (isfinite(k) ? k : 1);
        }
        FILE *mf = fmemopen(co->collectives, sizeof co->collectives, "w");
        if (mf) val_cal_json(mf, cs, 2), fclose(mf);
        double *d = (double *)(co + 1);
        for (int r = 0; r < j->nruns; r++) {
            mrun *m = &j->runs[r];
            *d++ = m->scope, *d++ = m->algo;
            memcpy(d, m->unc, m->npts * sizeof *d), d += m->npts;
            memcpy(d, m->fit, m->npts * sizeof *d), d += m->npts;
            memcpy(d, m->cv, m->npts * sizeof *d), d += m->npts;
        }
    }
    for (int r = 0; r < opened; r++) val_sweep_close(&sw[r]), free(idx[r]);
    free(sw), free(cr), free(idx), free(cs);
    return rc;
}

static void unpack(cal_job *j, const cal_out *co)
{
    const double *d = (const double *)(co + 1);
    for (int r = 0; r < j->nruns; r++) {
        mrun *m = &j->runs[r];
        m->scope = (int)*d++, m->algo = (int)*d++;
        memcpy(m->unc, d, m->npts * sizeof *d), d += m->npts;
        memcpy(m->fit, d, m->npts * sizeof *d), d += m->npts;
        memcpy(m->cv, d, m->npts * sizeof *d), d += m->npts;
    }
}

static void rel(const double *p, const double *t, int n, double *e)
{
    for (int i = 0; i < n; i++) e[i] = (p[i] - t[i]) / t[i];
}

/* The cross-validated errors of m (sizes whose fold could not be fitted have
 * none): their count. */
static int cv_errors(const mrun *m, double *e)
{
    int k = 0;
    for (int i = 0; i < m->npts; i++)
        if (!isnan(m->cv[i])) e[k++] = (m->cv[i] - m->t[i]) / m->t[i];
    return k;
}

static void report(const mrun *m)
{
    printf("# %s %s-node (%s), %d ranks, algorithm %s, %d sizes (%lld .. %lld B), from %s\n", val_coll_name(m->coll),
           val_scope_name(m->scope), m->tool, m->n, coll_algo_get(m->algo)->name, m->npts, (long long)m->size[0],
           (long long)m->size[m->npts - 1], m->file);
    printf("# %12s  %12s  %14s  %12s  %8s  %15s  %8s\n", "size(B)", "measured(us)", "uncalibrated", "fitted(us)",
           "resid%", "cross-valid(us)", "cv_err%");
    for (int i = 0; i < m->npts; i++)
        printf("  %12lld  %12.2f  %14.2f  %12.2f  %8.2f  %15.2f  %8.2f\n", (long long)m->size[i], m->t[i] * 1e6,
               m->unc[i] * 1e6, m->fit[i] * 1e6, 100 * (m->fit[i] - m->t[i]) / m->t[i], m->cv[i] * 1e6,
               100 * (m->cv[i] - m->t[i]) / m->t[i]);
    double *e = ts_malloc(m->npts * sizeof *e), *x = ts_malloc(m->npts * sizeof *x);
    for (int i = 0; i < m->npts; i++) x[i] = (double)m->size[i] * val_busbw_factor(m->coll, m->n);
    val_fit ab;
    char err[TS_ERRLEN];
    if (val_fit_ab(x, m->t, m->npts, &ab, err, sizeof err) == 0) {
        printf("# measured alpha-beta fit %s: alpha %.3f us, busbw %.2f GB/s, %d outlier(s)\n", val_coll_name(m->coll),
               ab.alpha * 1e6, ab.beta / 1e9, ab.outliers);
        val_fit_free(&ab);
    }
    free(x);
    rel(m->unc, m->t, m->npts, e);
    double u = val_abs_quantile(e, m->npts, 0.5);
    rel(m->fit, m->t, m->npts, e);
    double fm = val_abs_quantile(e, m->npts, 0.5), fx = val_abs_quantile(e, m->npts, 1);
    int k = cv_errors(m, e);
    printf("# residuals %s: uncalibrated median %.2f%%; fitted median %.2f%%, max %.2f%%; cross-validated median "
           "%.2f%%, p90 %.2f%% (%d sizes)\n", val_coll_name(m->coll), 100 * u, 100 * fm, 100 * fx,
           100 * val_abs_quantile(e, k, 0.5), 100 * val_abs_quantile(e, k, 0.9), k);
    free(e);
}

/* Median and p90 of the cross-validated errors over every run's points. */
static void cv_summary(const cal_job *j, double *med, double *p90)
{
    int n = 0;
    for (int r = 0; r < j->nruns; r++) n += j->runs[r].npts;
    double *e = ts_malloc((n + 1) * sizeof *e);
    n = 0;
    for (int r = 0; r < j->nruns; r++) n += cv_errors(&j->runs[r], e + n);
    *med = val_abs_quantile(e, n, 0.5), *p90 = val_abs_quantile(e, n, 0.9);
    free(e);
}

static int at_bound(const cal_out *co, int t) { return co->fit.at_bound[t]; }

/* A JSON number, or null where there is none (NaN). */
static void json_num(FILE *f, double d)
{
    if (isnan(d)) fputs("null", f);
    else ts_json_number(f, d);
}

static int write_json(const copts *o, const cal_job *j, const cal_out *co, char *err, size_t errlen)
{
    FILE *f = fopen(o->out, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->out);
    fprintf(f, "{\n  \"format\": \"trainsim-calibration\",\n  \"version\": 2,\n  \"source\": {\"cluster\": ");
    ts_json_string(f, o->m.cluster);
    fprintf(f, ", \"algorithm\": ");
    ts_json_string(f, o->m.algo ? o->m.algo : j->nruns && j->runs[0].algo_spec[0] ? j->runs[0].algo_spec : "selection");
    fprintf(f, "},\n  \"collectives\": %s", co->collectives);
    double med, p90;
    cv_summary(j, &med, &p90);
    fprintf(f, ",\n  \"fit\": {\"residual_rms\": ");
    json_num(f, co->fit.rms_rel);
    fprintf(f, ", \"residual_median\": ");
    json_num(f, co->fit.median_abs_rel);
    fprintf(f, ", \"cross_validation\": {\"median_abs_rel\": ");
    json_num(f, med);
    fprintf(f, ", \"p90_abs_rel\": ");
    json_num(f, p90);
    fprintf(f, "},\n    \"at_bound\": [");
    const char *sep = "";
    for (int t = 0; t < co->nterms; t++)
        if (at_bound(co, t)) fprintf(f, "%s\"%s\"", sep, co->names[t]), sep = ", ";
    fprintf(f, "],\n    \"runs\": [");
    for (int r = 0; r < j->nruns; r++) {
        const mrun *m = &j->runs[r];
        double *e = ts_malloc(m->npts * sizeof *e);
        fprintf(f, "%s\n      {\"file\": ", r ? "," : "");
        ts_json_string(f, m->file);
        fprintf(f, ", \"collective\": \"%s\", \"ranks\": %d, \"scope\": \"%s\", \"algorithm\": \"%s\", \"sizes\": %d, "
                   "\"residual_median\": ", val_coll_name(m->coll), m->n, val_scope_name(m->scope),
                coll_algo_get(m->algo)->name, m->npts);
        rel(m->fit, m->t, m->npts, e);
        json_num(f, val_abs_quantile(e, m->npts, 0.5));
        fprintf(f, ", \"cv_median\": ");
        json_num(f, val_abs_quantile(e, cv_errors(m, e), 0.5));
        fprintf(f, "}");
        free(e);
    }
    fprintf(f, "\n    ]}\n}\n");
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", o->out);
}

static int parse_opts(int argc, char **argv, copts *o)
{
    static const struct option longopts[] = {
        CMD_MEAS_LONGOPTS, {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    int c, rc;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:b:e:", longopts, NULL)) != -1) {
        if ((rc = cmd_meas_option("calibrate", c, optarg, &o->m)) != 1) {
            if (rc) return rc;
            continue;
        }
        switch (c) {
        case 'o': o->out = optarg; break;
        case 'h': fputs(calibrate_help, stdout); return -1;
        case ':': return cmd_usage_error("calibrate", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_unknown_option("calibrate", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return cmd_usage_error("calibrate", "no measurement files given");
    if (!o->m.cluster || !o->out) return cmd_usage_error("calibrate", "--cluster and -o are required");
    return 0;
}

int cmd_meas_option(const char *cmd, int c, const char *arg, cmd_meas_opts *o)
{
    char *end;
    long v;
    int64_t sz;
    switch (c) {
    case CMD_MEAS_CLUSTER: o->cluster = arg; return 0;
    case CMD_MEAS_ALGO: return cmd_algo_arg(cmd, arg, &o->algo);
    case CMD_MEAS_NODES:
    case CMD_MEAS_GPUS:
        v = strtol(arg, &end, 10);
        if (*end || v < 1 || v > 1000000)
            return cmd_usage_error(cmd, "--%s wants a count from 1 to 1000000, not '%s'",
                                   c == CMD_MEAS_NODES ? "nodes" : "gpus", arg);
        *(c == CMD_MEAS_NODES ? &o->nodes : &o->gpus) = (int)v;
        return 0;
    case CMD_MEAS_HALF:
        if (strcmp(arg, "even") && strcmp(arg, "odd"))
            return cmd_usage_error(cmd, "--half wants even or odd, not '%s'", arg);
        o->half = arg[0] == 'e' ? 1 : 2;
        return 0;
    case CMD_MEAS_FID:
        if (strcmp(arg, "pipelined") && strcmp(arg, "analytical"))
            return cmd_usage_error(cmd, "--fidelity wants pipelined or analytical, not '%s'", arg);
        o->fidelity = arg[0] == 'p' ? VAL_FID_PIPELINED : VAL_FID_ANALYTICAL;
        return 0;
    case CMD_MEAS_OP:
        if ((v = val_coll_from_name(arg)) < 0 || v >= OG_NCOLLS)
            return cmd_usage_error(cmd, "--op wants a collective (all_reduce, all_gather, reduce_scatter, "
                                   "alltoall, broadcast, reduce), not '%s'", arg);
        o->op = (int)v + 1;
        return 0;
    case CMD_MEAS_EXPLAIN: o->explain = 1; return 0;
    case CMD_MEAS_NCCL_ENV: return cmd_nccl_env_arg(cmd, arg, &o->env);
    case CMD_MEAS_GPP:
        v = strtol(arg, &end, 10);
        if (*end || v < 1 || v > 1024)
            return cmd_usage_error(cmd, "--gpus-per-proc wants a count from 1 to 1024, not '%s'", arg);
        o->gpus_per_proc = (int)v;
        return 0;
    case 'b':
    case 'e':
        if (val_parse_size(arg, &sz) < 0)
            return cmd_usage_error(cmd, "-%c wants a size like 8, 64K, 1M or 8G, not '%s'", c, arg);
        *(c == 'b' ? &o->minb : &o->maxb) = sz;
        return 0;
    default: return 1;
    }
}

int cmd_nccl_env_arg(const char *cmd, const char *arg, coll_nccl_env *e)
{
    char err[TS_ERRLEN];
    if (coll_nccl_env_parse(e, arg, "--nccl-env", err, sizeof err) < 0) return cmd_usage_error(cmd, "%s", err);
    return 0;
}

const char *cmd_nccl_env_resolve(const char *cmd, const char *what, const coll_nccl_env *log,
                                 const coll_nccl_env *opt, const char *algo, og_coll coll, coll_nccl_env *out,
                                 char *spec, size_t n)
{
    char who[64];
    coll_nccl_env_init(out);
    if (log) coll_nccl_env_merge(out, log);
    if (opt) coll_nccl_env_merge(out, opt);
    snprintf(who, sizeof who, "trainsim %s", cmd);
    coll_nccl_env_warn(out, who, what);
    if (algo && algo[0]) {
        int a;
        coll_proto pr;
        char e[TS_ERRLEN];
        if (out->fam_on && coll >= 0 && coll < OG_NCOLLS && coll_algo_parse(algo, coll, &a, &pr, e, sizeof e) == 0 &&
            !(out->fam_on & (1u << coll_family_of(a)))) {
            char d[512];
            coll_nccl_env_describe(out, d, sizeof d);
            fprintf(stderr, "%s: %s%salgorithm %s wins over the run's %s\n", who, what ? what : "", what ? ": " : "",
                    algo, d);
        }
        out->fam_on = 0; /* the explicit algorithm's family stays on */
        return algo;
    }
    return coll_nccl_env_forced(out, coll, spec, n) ? spec : NULL;
}

int cmd_meas_parse(const cmd_meas_opts *o, const char *path, val_file *out, char *err, size_t errlen)
{
    val_parse_opts po = {o->op ? o->op - 1 : VAL_UNKNOWN, o->explain ? stdout : NULL};
    int rc = val_parse_file_opts(path, &po, out, err, errlen);
    if (rc == 0 && out->nskipped && !o->explain)
        printf("# note: %s: %d line(s) not part of a table skipped (--explain lists them)\n", path, out->nskipped);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    copts o = {.m = {.fidelity = VAL_FID_PIPELINED, .maxb = OG_MAX_BYTES}};
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours, sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    coll_nccl_env_init(&o.m.env);
    int rc = parse_opts(nours, ours, &o);
    char err[TS_ERRLEN];
    cal_job j = {&o, sgc, sgv, NULL, 0};
    size_t cap = 0;
    cal_out *co = NULL;
    if (rc != 0) {
        rc = rc < 0 ? EXIT_OK : rc;
        goto out;
    }
    rc = EXIT_USAGE;
    printf("# trainsim calibrate: cluster %s, %d file(s)\n", o.m.cluster, nours - optind);
    for (int f = optind; f < nours; f++) {
        val_file vf;
        if (cmd_meas_parse(&o.m, ours[f], &vf, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim calibrate: %s\n", err);
            goto out;
        }
        for (int r = 0; r < vf.nruns; r++) {
            ts_grow(&j.runs, sizeof *j.runs, &cap, j.nruns + 1);
            memset(&j.runs[j.nruns], 0, sizeof *j.runs);
            int bad = select_rows(&o, &vf.runs[r], &j.runs[j.nruns++], ours[f], err, sizeof err);
            if (bad < 0) {
                fprintf(stderr, "trainsim calibrate: %s: %s\n", ours[f], err);
                val_file_free(&vf);
                goto out;
            }
            if (!vf.runs[r].complete && vf.runs[r].fmt == VAL_FMT_NCCL)
                printf("# note: %s run at line %d has no closing lines (truncated?)\n", ours[f], vf.runs[r].first_line);
        }
        val_file_free(&vf);
    }
    size_t len = out_size(&j);
    co = ts_calloc(1, len);
    if (val_fork(child, &j, co, len, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim calibrate: %s\n", err);
        rc = EXIT_FAIL;
        goto out;
    }
    unpack(&j, co);
    for (int r = 0; r < j.nruns; r++) report(&j.runs[r]);
    printf("# terms (fitted jointly on %d run(s)):", j.nruns);
    for (int t = 0; t < co->nterms; t++) {
        int lat = strncmp(co->names[t], "bw_frac", 7) != 0 && strncmp(co->names[t], "proto_bw", 8) != 0;
        printf("%s %s %.4g%s", t ? "," : "", co->names[t], co->values[t] * (lat ? 1e6 : 1), lat ? " us" : "");
    }
    printf("\n");
    for (int t = 0; t < co->nterms; t++)
        if (at_bound(co, t))
            printf("# note: term %s = %g is at its %s bound %g: the model lacks what the data asks for there\n",
                   co->names[t], co->values[t], at_bound(co, t) < 0 ? "lower" : "upper",
                   at_bound(co, t) < 0 ? co->lo[t] : co->hi[t]);
    double med, p90;
    cv_summary(&j, &med, &p90);
    printf("# fit: residual median %.2f%%, rms %.2f%%; cross-validation (fit on every other size, predict the "
           "rest): median |error| %.2f%%, p90 %.2f%%\n", 100 * co->fit.median_abs_rel, 100 * co->fit.rms_rel,
           100 * med, 100 * p90);
    if (co->cv_note[0]) printf("# note: cross-validation incomplete: %s\n", co->cv_note);
    if (co->fit.kept_start)
        printf("# note: no fit beat the cluster's figures on both the loss and the median |error| (%.2f%%): they "
               "are kept\n", 100 * co->fit.start_median_abs_rel);
    else if (co->fit.restarted)
        printf("# note: fitted without the sizes the cluster's figures miss by far (median |error| %.2f%% -> %.2f%%)\n",
               100 * co->fit.start_median_abs_rel, 100 * co->fit.median_abs_rel);
    if (write_json(&o, &j, co, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim calibrate: %s\n", err);
        goto out;
    }
    printf("# wrote %s\n", o.out);
    rc = EXIT_OK;
out:
    for (int r = 0; r < j.nruns; r++) {
        mrun *m = &j.runs[r];
        free(m->size), free(m->t), free(m->unc), free(m->fit), free(m->cv);
    }
    free(j.runs);
    free(co);
    free(sgv);
    free(ours);
    return rc;
}
