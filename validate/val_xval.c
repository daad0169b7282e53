/* Uncalibrated and cross-validated calibrated predictions of one measured
 * sweep: the calibration terms are fitted on every other size and predict the
 * sizes they did not see (both halves), in a child that loads the cluster. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"
#include "val.h"

/* The fitted points of every run, predicted in order. */
static int predict(void *ctx, double *pred, int npts, char *err, size_t errlen)
{
    const val_cal_set *cs = ctx;
    int k = 0;
    for (int r = 0; r < cs->nruns; r++) {
        const val_cal_run *run = &cs->runs[r];
        for (int i = 0; i < run->nidx && k < npts; i++, k++) {
            val_point pt;
            if (val_sweep_size(run->sw, run->sizes[run->idx[i]], &pt, err, errlen) < 0) return -1;
            pred[k] = pt.time;
        }
    }
    return 0;
}

int val_cal_predict(const val_cal_run *run, const int *idx, int n, double *out, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        val_point pt;
        if (val_sweep_size(run->sw, run->sizes[idx[i]], &pt, err, errlen) < 0) return -1;
        out[i] = pt.time;
    }
    return 0;
}

/* The terms: per scope present, the bandwidth factor (and with fit_lat the
 * latency per link end); then a base latency per algorithm and protocol
 * the selection runs at the fitted sizes, started at the smallest size's gap
 * between measured and predicted. */
static int make_terms(val_cal_set *cs, int fit_lat, char *err, size_t errlen)
{
    int used[VAL_MAX_ALGOS][COLL_NPROTOS] = {{0}}, scopes[2] = {0, 0}, k = 0;
    double gap = INFINITY;
    for (int r = 0; r < cs->nruns; r++) {
        val_cal_run *run = &cs->runs[r];
        scopes[run->scope] = 1;
        for (int i = 0; i < run->nidx; i++) {
            val_point pt;
            if (val_sweep_size(run->sw, run->sizes[run->idx[i]], &pt, err, errlen) < 0) return -1;
            if (pt.algo < VAL_MAX_ALGOS) used[pt.algo][pt.proto] = 1;
            if (i == 0) gap = fmin(gap, run->meas[run->idx[i]] - pt.time);
        }
    }
    val_overlay *ov = cs->ov;
    for (int sc = VAL_INTRA; sc <= VAL_INTER; sc++) {
        if (!scopes[sc]) continue;
        cs->terms[k] = (val_term){cs->names[k], &ov->bw_eff[sc], VAL_BW_LO, VAL_BW_HI};
        snprintf(cs->names[k++], sizeof cs->names[0], "%s_bw_eff", val_scope_name(sc));
        if (!fit_lat) continue;
        ov->lat_add[sc] = 0.5e-6;
        cs->terms[k] = (val_term){cs->names[k], &ov->lat_add[sc], 0, VAL_LAT_HI};
        snprintf(cs->names[k++], sizeof cs->names[0], "%s_lat_add", val_scope_name(sc));
    }
    double start = fmin(VAL_BASE_HI / 2, fmax(1e-6, gap));
    for (int a = 0; a < VAL_MAX_ALGOS; a++)
        for (int p = 0; p < COLL_NPROTOS; p++) {
            if (!used[a][p] || k >= VAL_MAX_TERMS) continue;
            ov->base[a][p] = start;
            cs->terms[k] = (val_term){cs->names[k], &ov->base[a][p], 0, VAL_BASE_HI};
            snprintf(cs->names[k++], sizeof cs->names[0], "%s.%s", coll_algo_get(a)->name, coll_proto_name(p));
        }
    cs->nterms = k;
    return 0;
}

int val_cal_fit(val_cal_set *cs, int fit_lat, char *err, size_t errlen)
{
    val_overlay_init(cs->ov);
    int np = 0;
    for (int r = 0; r < cs->nruns; r++) {
        cs->runs[r].sw->ov = cs->ov;
        np += cs->runs[r].nidx;
    }
    if (make_terms(cs, fit_lat, err, errlen) < 0) return -1;
    if (fit_lat && np < cs->nterms) { /* too few points for the latency terms: the base ones carry latency */
        val_overlay_init(cs->ov);
        if (make_terms(cs, 0, err, errlen) < 0) return -1;
    }
    double *m = ts_malloc((np + 1) * sizeof *m);
    int k = 0;
    for (int r = 0; r < cs->nruns; r++)
        for (int i = 0; i < cs->runs[r].nidx; i++) m[k++] = cs->runs[r].meas[cs->runs[r].idx[i]];
    int rc = val_fit_terms(cs->terms, cs->nterms, m, np, predict, cs, &cs->fit, err, errlen);
    free(m);
    return rc;
}

void val_cal_note(const val_cal_set *cs, char *note, size_t notelen)
{
    size_t len = 0;
    note[0] = 0;
    for (int t = 0; t < cs->nterms; t++) {
        int bw = strstr(cs->names[t], "bw_eff") != NULL;
        int w = snprintf(note + len, len < notelen ? notelen - len : 0, "%s%s %.4g%s", t ? ", " : "", cs->names[t],
                         *cs->terms[t].value * (bw ? 1 : 1e6), bw ? "" : " us");
        if (w > 0) len += (size_t)w;
    }
    char bnote[512];
    if (val_terms_bound_note(cs->terms, cs->nterms, &cs->fit, bnote, sizeof bnote) && len < notelen)
        snprintf(note + len, notelen - len, " (%s)", bnote);
}

typedef struct child_ctx {
    const val_xval_in *in;
} child_ctx;

/* out: unc[npts], cal[npts], note[VAL_NOTE] */
static int run_child(void *vctx, void *out, size_t outlen, char *err, size_t errlen)
{
    const val_xval_in *in = ((child_ctx *)vctx)->in;
    (void)outlen;
    double *unc = out, *cal = unc + in->npts;
    char *note = (char *)(cal + in->npts);
    int sgc = in->sgc;
    eng_init(&sgc, in->sgv);
    if (eng_load(in->cluster, in->nodes, in->calib, err, errlen) < 0) return -1;
    val_sweep sw;
    if (val_sweep_open(&sw, in->op, in->n, 0, OG_F32, VAL_FID_PIPELINED, in->algo, err, errlen) < 0) return -1;
    int rc = 0, *all = ts_malloc((in->npts + 1) * sizeof *all), *fit_idx = ts_malloc((in->npts + 1) * sizeof *all),
        *rest = ts_malloc((in->npts + 1) * sizeof *all);
    for (int i = 0; i < in->npts; i++) all[i] = i;
    val_cal_run run = {&sw, in->sizes, in->meas, in->npts, all, in->npts,
                       sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA};
    rc = val_cal_predict(&run, all, in->npts, unc, err, errlen);
    sw.fidelity = VAL_FID_ANALYTICAL;
    val_overlay ov;
    val_cal_set cs = {.runs = &run, .nruns = 1, .ov = &ov};
    for (int fold = 0; fold < 2 && rc == 0; fold++) {
        int nf = 0, nr = 0;
        for (int i = 0; i < in->npts; i++) {
            if (i % 2 == fold) fit_idx[nf++] = i;
            else rest[nr++] = i;
        }
        run.idx = fit_idx, run.nidx = nf;
        double *p = ts_malloc((nr + 1) * sizeof *p);
        if ((rc = val_cal_fit(&cs, 0, err, errlen)) == 0) rc = val_cal_predict(&run, rest, nr, p, err, errlen);
        for (int i = 0; i < nr && rc == 0; i++) cal[rest[i]] = p[i];
        free(p);
    }
    run.idx = all, run.nidx = in->npts;
    if (rc == 0 && (rc = val_cal_fit(&cs, 0, err, errlen)) == 0) val_cal_note(&cs, note, VAL_NOTE);
    free(all), free(fit_idx), free(rest);
    sw.ov = NULL;
    val_sweep_close(&sw);
    return rc;
}

int val_xval(const val_xval_in *in, double *unc, double *cal, char *note, char *err, size_t errlen)
{
    if (in->npts < 6) return ts_err(err, errlen, "cross-validation needs at least 6 sizes, got %d", in->npts);
    size_t len = 2 * in->npts * sizeof(double) + VAL_NOTE;
    char *buf = ts_calloc(1, len);
    child_ctx c = {in};
    int rc = val_fork(run_child, &c, buf, len, err, errlen);
    if (rc == 0) {
        memcpy(unc, buf, in->npts * sizeof *unc);
        memcpy(cal, buf + in->npts * sizeof(double), in->npts * sizeof *cal);
        memcpy(note, buf + 2 * in->npts * sizeof(double), VAL_NOTE);
        note[VAL_NOTE - 1] = 0;
    }
    free(buf);
    return rc;
}
