/* `trainsim calibrate`: fit measured collective times (nccl-tests, rccl-tests,
 * OSU outputs) per collective and scope, and write a calibration JSON. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "coll.h"
#include "engine.h"
#include "util.h"
#include "val.h"

static const char calibrate_help[] =
    "usage: trainsim calibrate MEASUREMENTS... --cluster C -o calib.json [options]\n\n"
    "Fit measured collectives (nccl-tests / rccl-tests tables, OSU outputs; any\n"
    "number of files and runs) per collective and scope (intra-node when the\n"
    "ranks fit in one node of cluster C, else inter-node): the latency alpha and\n"
    "bus bandwidth beta of t = alpha + size x busbw_factor / beta (GSL nonlinear\n"
    "least squares on relative residuals, bisquare-reweighted against outliers),\n"
    "and a bandwidth-efficiency curve by size. The same sizes are simulated on C\n"
    "(as `trainsim coll` does) and fitted the same way; the ratios become the\n"
    "cluster-level factors that --calibration applies to every command. Prints\n"
    "the fits' residuals per size. Fields: docs/validation.md.\n\n"
    "options:\n"
    "  --cluster C        cluster the measurements came from (name or JSON)\n"
    "  --nodes N          cluster node count\n"
    "  -o, --output F     calibration JSON to write (required)\n"
    "  --algo A[:PROTO]   algorithm the measurements used (default: automatic)\n"
    "  --gpus N           rank count, when the output does not tell\n"
    "  -b, --minbytes S   fit only sizes >= S;  -e, --maxbytes S: only sizes <= S\n"
    "  --half even|odd    fit only every other size (rows 0, 2, ... or 1, 3, ...)\n"
    "  --fidelity F       pipelined (default) or analytical\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 a fit failed, 2 bad input.\n";

typedef struct copts {
    cmd_meas_opts m;
    const char *out;
} copts;

/* One collective's fit. */
typedef struct entry {
    int coll, scope, n, algo, nsteps;
    char tool[32];
    int npts;
    int64_t *isize;
    double *size, *t, *x;       /* measured size (B), time (s), bus bytes */
    double *tsim, *tcal;        /* simulated, uncalibrated and calibrated */
    val_fit meas, sim;
    val_curve curve;
} entry;

/* The rows of a run that the options select (val_run_select). */
static int select_rows(const copts *o, const val_run *r, entry *e)
{
    int64_t *sz = e->isize = ts_malloc((r->nrows + 1) * sizeof *sz);
    e->size = ts_malloc((r->nrows + 1) * sizeof(double));
    e->tcal = ts_malloc((r->nrows + 1) * sizeof(double));
    e->t = ts_malloc((r->nrows + 1) * sizeof(double));
    e->x = ts_malloc((r->nrows + 1) * sizeof(double));
    e->tsim = ts_malloc((r->nrows + 1) * sizeof(double));
    e->npts = val_run_select(r, o->m.minb, o->m.maxb, o->m.half, sz, e->t);
    for (int i = 0; i < e->npts; i++) {
        e->size[i] = (double)sz[i];
        e->x[i] = e->size[i] * val_busbw_factor(r->coll, e->n);
    }
    return e->npts;
}

typedef struct simctx {
    int sgc;
    char **sgv;
} simctx;

static int fit_entry(const copts *o, const simctx *sc, val_run *r, entry *e, char *err, size_t errlen)
{
    if (o->m.gpus) val_run_set_ranks(r, o->m.gpus);
    e->coll = r->coll;
    e->n = o->m.gpus ? o->m.gpus : r->nranks;
    snprintf(e->tool, sizeof e->tool, "%s", r->tool);
    if (r->coll < 0 || r->coll == VAL_P2P || r->coll == OG_BARRIER)
        return ts_err(err, errlen, "line %d: collective '%s' cannot be calibrated (only all_reduce, all_gather, "
                      "reduce_scatter, broadcast, reduce, alltoall)", r->first_line, val_coll_name(r->coll));
    if (e->n < 2)
        return ts_err(err, errlen, "line %d: the output does not tell the rank count: give --gpus", r->first_line);
    if (select_rows(o, r, e) < 3)
        return ts_err(err, errlen, "line %d: %s: only %d usable sizes after -b/-e/--half (3 needed)", r->first_line,
                      val_coll_name(r->coll), e->npts);
    val_child_out co;
    if (val_sweep_child(o->m.cluster, o->m.nodes, NULL, sc->sgc, sc->sgv, r->coll, e->n, o->m.algo, o->m.fidelity, e->isize,
                        e->npts, e->tsim, &co, err, errlen) < 0)
        return -1;
    e->scope = co.scope, e->algo = co.algo, e->nsteps = co.nsteps;
    if (val_fit_ab(e->x, e->t, e->npts, &e->meas, err, errlen) < 0 ||
        val_fit_ab(e->x, e->tsim, e->npts, &e->sim, err, errlen) < 0)
        return -1;
    return 0;
}

static void report(const entry *e)
{
    printf("# %s %s-node (%s), %d ranks, algorithm %s, %d sizes (%.0f .. %.0f B)\n", val_coll_name(e->coll),
           val_scope_name(e->scope), e->tool, e->n, coll_algo_get(e->algo)->name, e->npts, e->size[0],
           e->size[e->npts - 1]);
    printf("#   measured:  alpha %.3f us, busbw %.2f GB/s; residuals rms %.1f%%, median %.1f%%, max %.1f%%, "
           "%d outlier(s), %d round(s)\n",
           e->meas.alpha * 1e6, e->meas.beta / 1e9, 100 * e->meas.rms_rel, 100 * e->meas.median_abs_rel,
           100 * e->meas.max_abs_rel, e->meas.outliers, e->meas.rounds);
    printf("#   simulated: alpha %.3f us, busbw %.2f GB/s (uncalibrated cluster)\n", e->sim.alpha * 1e6,
           e->sim.beta / 1e9);
    printf("# %12s  %12s  %12s  %8s  %6s  %12s  %10s\n", "size(B)", "measured(us)", "fit(us)", "resid%", "weight",
           "calib_sim(us)", "efficiency");
    for (int i = 0; i < e->npts; i++)
        printf("  %12.0f  %12.2f  %12.2f  %8.1f  %6.3f  %12.2f  %10.4f\n", e->size[i], e->t[i] * 1e6,
               (e->meas.alpha + e->x[i] / e->meas.beta) * 1e6, 100 * e->meas.resid[i], e->meas.weight[i],
               e->tcal[i] * 1e6, e->curve.eff[i]);
}

/* Cluster-level factors of a scope from its reference entry (all_reduce
 * first, else the one with most sizes): bandwidth ratio measured/simulated,
 * latency added per step (per NIC link, twice per step, between nodes). */
static const entry *reference(const entry *es, int ne, int scope)
{
    const entry *best = NULL;
    for (int i = 0; i < ne; i++) {
        const entry *e = &es[i];
        if (e->scope != scope) continue;
        if (!best || (e->coll == OG_ALLREDUCE && best->coll != OG_ALLREDUCE) ||
            (e->coll == best->coll && e->npts > best->npts))
            best = e;
    }
    return best;
}

static void factors(const entry *e, double *bw_eff, double *lat_add)
{
    *bw_eff = fmin(1.5, fmax(0.01, e->meas.beta / e->sim.beta));
    double per = e->scope == VAL_INTER ? 2.0 * e->nsteps : e->nsteps;
    *lat_add = fmax(0, (e->meas.alpha - e->sim.alpha) / (per > 0 ? per : 1));
}

/* The efficiency curve of e: the calibrated simulator's time (the cluster
 * factors applied, simulated again) over the measured time, per size. */
static int build_curve(const copts *o, const simctx *sc, entry *e, char *err, size_t errlen)
{
    val_child_out co;
    if (val_sweep_child(o->m.cluster, o->m.nodes, o->out, sc->sgc, sc->sgv, e->coll, e->n, o->m.algo, o->m.fidelity, e->isize,
                        e->npts, e->tcal, &co, err, errlen) < 0)
        return -1;
    val_curve_build(&e->curve, e->size, e->tcal, e->t, e->npts);
    return 0;
}

static void json_fit(FILE *f, const char *key, const val_fit *v)
{
    fprintf(f, "\"%s\": {\"alpha_s\": ", key);
    ts_json_number(f, v->alpha);
    fprintf(f, ", \"busbw_Bps\": ");
    ts_json_number(f, v->beta);
    fprintf(f, ", \"rms_rel\": ");
    ts_json_number(f, v->rms_rel);
    fprintf(f, ", \"median_abs_rel\": ");
    ts_json_number(f, v->median_abs_rel);
    fprintf(f, ", \"max_abs_rel\": ");
    ts_json_number(f, v->max_abs_rel);
    fprintf(f, ", \"outliers\": %d}", v->outliers);
}

static int write_json(const copts *o, const entry *es, int ne, char **files, int nfiles, char *err, size_t errlen)
{
    FILE *f = fopen(o->out, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->out);
    fprintf(f, "{\n  \"format\": \"trainsim-calibration\",\n  \"version\": 1,\n  \"source\": {\"cluster\": ");
    ts_json_string(f, o->m.cluster);
    fprintf(f, ", \"files\": [");
    for (int i = 0; i < nfiles; i++) {
        fprintf(f, "%s", i ? ", " : "");
        ts_json_string(f, files[i]);
    }
    fprintf(f, "]},\n  \"cluster\": {");
    const char *sep = "";
    for (int s = VAL_INTRA; s <= VAL_INTER; s++) {
        const entry *e = reference(es, ne, s);
        if (!e) continue;
        double bw, lat;
        factors(e, &bw, &lat);
        fprintf(f, "%s\"%s_bw_eff\": ", sep, val_scope_name(s));
        ts_json_number(f, bw);
        fprintf(f, ", \"%s_lat_add\": ", val_scope_name(s));
        ts_json_number(f, lat);
        sep = ", ";
    }
    fprintf(f, "},\n  \"collectives\": [");
    for (int i = 0; i < ne && es[i].curve.n; i++) {
        const entry *e = &es[i];
        fprintf(f, "%s\n    {\"collective\": \"%s\", \"scope\": \"%s\", \"ranks\": %d, \"algorithm\": \"%s\", "
                   "\"tool\": ",
                i ? "," : "", val_coll_name(e->coll), val_scope_name(e->scope), e->n, coll_algo_get(e->algo)->name);
        ts_json_string(f, e->tool);
        fprintf(f, ", \"sizes\": %d,\n     ", e->npts);
        json_fit(f, "measured", &e->meas);
        fprintf(f, ",\n     ");
        json_fit(f, "simulated", &e->sim);
        fprintf(f, ",\n     \"efficiency\": [");
        for (int k = 0; k < e->curve.n; k++) {
            fprintf(f, "%s[", k ? ", " : "");
            ts_json_number(f, e->curve.size[k]);
            fprintf(f, ", ");
            ts_json_number(f, e->curve.eff[k]);
            fprintf(f, "]");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]\n}\n");
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
    case CMD_MEAS_ALGO: o->algo = arg; return 0;
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
    case 'b':
    case 'e':
        if (val_parse_size(arg, &sz) < 0)
            return cmd_usage_error(cmd, "-%c wants a size like 8, 64K, 1M or 8G, not '%s'", c, arg);
        *(c == 'b' ? &o->minb : &o->maxb) = sz;
        return 0;
    default: return 1;
    }
}

int cmd_calibrate(int argc, char **argv)
{
    copts o = {.m = {.fidelity = VAL_FID_PIPELINED, .maxb = OG_MAX_BYTES}};
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours, sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    int rc = parse_opts(nours, ours, &o), ne = 0;
    char err[TS_ERRLEN];
    entry *es = NULL;
    size_t cap = 0;
    if (rc != 0) {
        rc = rc < 0 ? EXIT_OK : rc;
        goto out;
    }
    rc = EXIT_USAGE;
    simctx sc = {sgc, sgv};
    printf("# trainsim calibrate: cluster %s, %d file(s)\n", o.m.cluster, nours - optind);
    for (int f = optind; f < nours; f++) {
        val_file vf;
        if (val_parse_file(ours[f], &vf, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim calibrate: %s\n", err);
            goto out;
        }
        for (int r = 0; r < vf.nruns; r++) {
            ts_grow(&es, sizeof *es, &cap, ne + 1);
            memset(&es[ne], 0, sizeof *es);
            /* what fails here is the input: a collective that cannot be
                 * fitted, too few sizes, an unknown cluster, a group larger
                 * than the cluster (exit 2, like every command's bad input) */
            if (fit_entry(&o, &sc, &vf.runs[r], &es[ne], err, sizeof err) < 0) {
                fprintf(stderr, "trainsim calibrate: %s: %s\n", ours[f], err);
                ne++;
                val_file_free(&vf);
                goto out;
            }
            if (!vf.runs[r].complete && vf.runs[r].fmt == VAL_FMT_NCCL) printf("# note: %s run at line %d has no closing lines (truncated?)\n",
                                             ours[f], vf.runs[r].first_line);
            ne++;
        }
        val_file_free(&vf);
    }
    /* the cluster factors first (the calibrated simulations read them), then
     * the curves against the calibrated simulator */
    if (write_json(&o, es, ne, ours + optind, nours - optind, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim calibrate: %s\n", err);
        goto out;
    }
    for (int i = 0; i < ne; i++) {
        if (build_curve(&o, &sc, &es[i], err, sizeof err) < 0) {
            fprintf(stderr, "trainsim calibrate: %s\n", err);
            rc = EXIT_FAIL;
            goto out;
        }
        report(&es[i]);
    }
    for (int s = VAL_INTRA; s <= VAL_INTER; s++) {
        const entry *e = reference(es, ne, s);
        if (!e) continue;
        double bw, lat;
        factors(e, &bw, &lat);
        printf("# cluster factors (%s-node, from %s): %s_bw_eff %.4f, %s_lat_add %.3f us\n", val_scope_name(s),
               val_coll_name(e->coll), val_scope_name(s), bw, val_scope_name(s), lat * 1e6);
    }
    if (write_json(&o, es, ne, ours + optind, nours - optind, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim calibrate: %s\n", err);
        goto out;
    }
    printf("# wrote %s\n", o.out);
    rc = EXIT_OK;
out:
    for (int i = 0; i < ne; i++) {
        free(es[i].isize), free(es[i].size), free(es[i].t), free(es[i].x), free(es[i].tsim), free(es[i].tcal);
        val_fit_free(&es[i].meas), val_fit_free(&es[i].sim), val_curve_free(&es[i].curve);
    }
    free(es);
    free(sgv);
    free(ours);
    return rc;
}
