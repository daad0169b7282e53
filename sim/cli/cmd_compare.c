/* `trainsim compare`: measured collective times (nccl-tests, OSU) against the
 * simulator's for the same cluster, collective and sizes, with an SVG plot. */
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

static const char compare_help[] =
    "usage: trainsim compare MEASURED --cluster C [--calibration F] [options]\n\n"
    "Simulate every size of every run in MEASURED (nccl-tests / rccl-tests table or\n"
    "OSU output) on cluster C as `trainsim coll` does, and print per size both\n"
    "times, both busbw and the error (predicted - measured) / measured of the time,\n"
    "then the median and p90 absolute error. With --calibration F the cluster\n"
    "terms of F apply (the latencies and bandwidth of the algorithm family and\n"
    "protocol each size runs, the selection's choice without --algo), as in\n"
    "every command (docs/validation.md).\n\n"
    "options:\n"
    "  --cluster C        cluster (name or JSON);  --nodes N: its node count\n"
    "  --calibration F    calibration JSON (trainsim calibrate)\n"
    "  --algo A[:PROTO]   force the simulated algorithm (default: automatic)\n"
    "  --gpus N           rank count, when the output does not tell\n"
    "  -b, --minbytes S   only sizes >= S;  -e, --maxbytes S: only sizes <= S\n"
    "  --half even|odd    only every other size (as trainsim calibrate --half)\n"
    "  --svg FILE         plot busbw against size, measured and predicted\n"
    "  --csv FILE         the table as CSV\n"
    "  --fidelity F       pipelined (default) or analytical\n"
    CMD_MEAS_PARSE_HELP
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 simulation failed, 2 bad input.\n";

typedef struct popts {
    cmd_meas_opts m;
    const char *calib, *svg, *csv;
} popts;

typedef struct series {
    int coll, n, scope, npts;
    char env[512];              /* the NCCL settings applied (coll_nccl_env_describe), or "" */
    int64_t *size;
    double *tm, *tp;            /* measured and predicted seconds */
    double busf;
} series;

static double busbw(const series *s, int i, double t)
{
    return t > 0 ? (double)s->size[i] / t / 1e9 * s->busf : 0;
}

/* One run: simulate its sizes (a calibration is in the platform and the
 * model's parameters: eng_load). */
static int predict(const popts *o, const char *file, val_run *r, series *s, char *err, size_t errlen)
{
    if (o->m.gpus) val_run_set_ranks(r, o->m.gpus);
    s->coll = r->coll;
    s->n = o->m.gpus ? o->m.gpus : r->nranks;
    if (r->coll < 0 || r->coll == VAL_P2P || r->coll == OG_BARRIER)
        return ts_err(err, errlen, "line %d: collective '%s' cannot be simulated here", r->first_line,
                      val_coll_name(r->coll));
    if (s->n < 2)
        return ts_err(err, errlen, "line %d: the output does not tell the rank count: give --gpus", r->first_line);
    s->busf = val_busbw_factor(r->coll, s->n);
    s->size = ts_malloc((r->nrows + 1) * sizeof *s->size);
    s->tm = ts_malloc((r->nrows + 1) * sizeof *s->tm);
    s->tp = ts_malloc((r->nrows + 1) * sizeof *s->tp);
    s->npts = val_run_select(r, o->m.minb, o->m.maxb, o->m.half, s->size, s->tm);
    if (s->npts == 0) return ts_err(err, errlen, "line %d: no sizes left after -b/-e/--half", r->first_line);
    /* the measurement's launch: GPUs per thread (--gpus-per-proc, else the
     * log's nGpus header, else 1) */
    coll_set_gpus_per_proc(o->m.gpus_per_proc ? o->m.gpus_per_proc : r->gpus_per_proc);
    coll_set_proxy_bound(r->proxy_bound); /* the launch line of its header */
    /* the NCCL settings it ran with: its log's, under --nccl-env */
    coll_nccl_env env;
    char spec[96];
    const char *algo = cmd_nccl_env_resolve("compare", file, &r->env, &o->m.env, o->m.algo, (og_coll)r->coll, &env,
                                            spec, sizeof spec);
    coll_nccl_env_describe(&env, s->env, sizeof s->env);
    if (algo && !o->m.algo) snprintf(s->env + strlen(s->env), sizeof s->env - strlen(s->env), " (forces %s)", algo);
    coll_set_nccl_env(env.set ? &env : NULL);
    val_sweep sw;
    if (val_sweep_open(&sw, r->coll, s->n, 0, OG_F32, o->m.fidelity, algo, err, errlen) < 0 ||
        val_sweep_place(&sw, r->ppn, err, errlen) < 0) {
        val_sweep_close(&sw);
        coll_set_proxy_bound(0);
        coll_set_nccl_env(NULL);
        return -1;
    }
    s->scope = sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA;
    int rc = 0;
    for (int i = 0; i < s->npts && rc >= 0; i++) {
        val_point pt;
        rc = val_sweep_size(&sw, s->size[i], &pt, err, errlen);
        s->tp[i] = pt.time;
    }
    val_sweep_close(&sw);
    coll_set_proxy_bound(0);
    coll_set_nccl_env(NULL);
    return rc < 0 ? -1 : 0;
}

static void errors(const series *s, double *e)
{
    for (int i = 0; i < s->npts; i++) e[i] = (s->tp[i] - s->tm[i]) / s->tm[i];
}

static void print_series(const popts *o, const series *s, FILE *csv)
{
    printf("# %s %s-node, %d ranks, %d sizes, calibration: %s\n", val_coll_name(s->coll), val_scope_name(s->scope),
           s->n, s->npts, o->calib ? o->calib : "none");
    if (s->env[0]) printf("# NCCL settings of the run (log, --nccl-env): %s\n", s->env);
    printf("# %12s  %12s  %12s  %10s  %10s  %8s\n", "size(B)", "measured(us)", "predicted(us)", "meas_busbw",
           "pred_busbw", "error%");
    double *e = ts_malloc(s->npts * sizeof *e);
    errors(s, e);
    for (int i = 0; i < s->npts; i++) {
        printf("  %12lld  %12.2f  %12.2f  %10.2f  %10.2f  %8.1f\n", (long long)s->size[i], s->tm[i] * 1e6,
               s->tp[i] * 1e6, busbw(s, i, s->tm[i]), busbw(s, i, s->tp[i]), 100 * e[i]);
        if (csv)
            fprintf(csv, "%s,%s,%d,%lld,%.6g,%.6g,%.6g,%.6g,%.6g\n", val_coll_name(s->coll), val_scope_name(s->scope),
                    s->n, (long long)s->size[i], s->tm[i] * 1e6, s->tp[i] * 1e6, busbw(s, i, s->tm[i]),
                    busbw(s, i, s->tp[i]), 100 * e[i]);
    }
    printf("# summary %s: median |error| %.1f%%, p90 |error| %.1f%%, max |error| %.1f%% over %d sizes\n",
           val_coll_name(s->coll), 100 * val_abs_quantile(e, s->npts, 0.5), 100 * val_abs_quantile(e, s->npts, 0.9),
           100 * val_abs_quantile(e, s->npts, 1.0), s->npts);
    free(e);
}

/* A log2(size) x busbw plot: measured (filled circles) and predicted
 * (open squares) per series, an axis box with tick labels. */
static int write_svg(const char *path, const series *ss, int ns, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", path);
    const double W = 760, H = 460, L = 70, R = 180, T = 30, B = 50;
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < ss[k].npts; i++) {
            double x = log2((double)ss[k].size[i]);
            xmin = fmin(xmin, x), xmax = fmax(xmax, x);
            ymax = fmax(ymax, fmax(busbw(&ss[k], i, ss[k].tm[i]), busbw(&ss[k], i, ss[k].tp[i])));
        }
    if (!(xmax > xmin)) xmax = xmin + 1;
    if (!(ymax > 0)) ymax = 1;
    ymax *= 1.05;
    double pw = W - L - R, ph = H - T - B;
#define PX(x) (L + ((x) - xmin) / (xmax - xmin) * pw)
#define PY(y) (T + ph - (y) / ymax * ph)
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L, T,
            pw, ph);
    for (int t = 0; t <= 5; t++) {
        double y = ymax * t / 5;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 4, PY(y) + 4, y);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, L + pw, PY(y),
                PY(y));
    }
    static const char *units[] = {"B", "K", "M", "G", "T"};
    int step = (int)ceil((xmax - xmin) / 10);
    for (int x = (int)ceil(xmin); x <= (int)xmax; x += step > 0 ? step : 1)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d%s</text>\n", PX(x), T + ph + 16,
                1 << (x % 10), units[x / 10 < 4 ? x / 10 : 4]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">message size (nccl-tests size, log scale)</text>\n",
            L + pw / 2, H - 10);
    fprintf(f, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\">busbw (GB/s)</text>\n",
            T + ph / 2);
    static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    for (int k = 0; k < ns; k++) {
        const series *s = &ss[k];
        const char *c = colors[k % 6];
        for (int m = 0; m < 2; m++) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", c,
                    m ? " stroke-dasharray=\"5,3\"" : "");
            for (int i = 0; i < s->npts; i++)
                fprintf(f, "%.1f,%.1f ", PX(log2((double)s->size[i])), PY(busbw(s, i, m ? s->tp[i] : s->tm[i])));
            fprintf(f, "\"/>\n");
            for (int i = 0; i < s->npts; i++) {
                double x = PX(log2((double)s->size[i])), y = PY(busbw(s, i, m ? s->tp[i] : s->tm[i]));
                if (m) fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"white\" stroke=\"%s\"/>\n",
                               x - 3, y - 3, c);
                else fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y, c);
            }
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s %s</text>\n", L + pw + 10, T + 14 + 16 * (2 * k + m),
                    c, val_coll_name(s->coll), m ? "predicted" : "measured");
        }
    }
    fprintf(f, "</svg>\n");
#undef PX
#undef PY
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", path);
}

static int parse_opts(int argc, char **argv, popts *o)
{
    enum { O_CALIB = 256, O_SVG, O_CSV };
    static const struct option longopts[] = {
        CMD_MEAS_LONGOPTS,
        {"calibration", required_argument, 0, O_CALIB},
        {"svg", required_argument, 0, O_SVG},
        {"csv", required_argument, 0, O_CSV},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c, rc;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hb:e:", longopts, NULL)) != -1) {
        if ((rc = cmd_meas_option("compare", c, optarg, &o->m)) != 1) {
            if (rc) return rc;
            continue;
        }
        switch (c) {
        case O_CALIB: o->calib = optarg; break;
        case O_SVG: o->svg = optarg; break;
        case O_CSV: o->csv = optarg; break;
        case 'h': fputs(compare_help, stdout); return -1;
        case ':': return cmd_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_unknown_option("compare", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return cmd_usage_error("compare", "no measurement file given");
    if (optind + 1 < argc) return cmd_usage_error("compare", "one measurement file only, not also '%s'", argv[optind + 1]);
    if (!o->m.cluster) return cmd_usage_error("compare", "--cluster is required");
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    popts o = {.m = {.fidelity = VAL_FID_PIPELINED, .maxb = OG_MAX_BYTES}};
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours, sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    coll_nccl_env_init(&o.m.env);
    int rc = parse_opts(nours, ours, &o), ns = 0;
    char err[TS_ERRLEN];
    val_file vf = {0};
    series *ss = NULL;
    FILE *csv = NULL;
    if (rc != 0) {
        rc = rc < 0 ? EXIT_OK : rc;
        goto out;
    }
    rc = EXIT_USAGE;
    if (cmd_meas_parse(&o.m, ours[optind], &vf, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim compare: %s\n", err);
        goto out;
    }
    eng_init(&sgc, sgv);
    if (eng_load(o.m.cluster, o.m.nodes, o.calib, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim compare: %s\n", err);
        goto out;
    }
    if (o.csv && !(csv = fopen(o.csv, "w"))) {
        fprintf(stderr, "trainsim compare: %s: cannot write\n", o.csv);
        goto out;
    }
    if (csv) fprintf(csv, "collective,scope,ranks,size,measured_us,predicted_us,measured_busbw,predicted_busbw,error_pct\n");
    ss = ts_calloc(vf.nruns, sizeof *ss);
    printf("# trainsim compare: %s on cluster %s\n", ours[optind], o.m.cluster);
    for (int r = 0; r < vf.nruns; r++) {
        if (predict(&o, ours[optind], &vf.runs[r], &ss[ns++], err, sizeof err) < 0) {
            fprintf(stderr, "trainsim compare: %s: %s\n", ours[optind], err);
            goto out;
        }
        print_series(&o, &ss[ns - 1], csv);
    }
    if (o.svg && write_svg(o.svg, ss, ns, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim compare: %s\n", err);
        goto out;
    }
    rc = EXIT_OK;
out:
    if (csv && fclose(csv) != 0 && rc == EXIT_OK) rc = EXIT_USAGE;
    for (int i = 0; i < ns; i++) free(ss[i].size), free(ss[i].tm), free(ss[i].tp);
    free(ss);
    val_file_free(&vf);
    free(sgv);
    free(ours);
    return rc;
}
