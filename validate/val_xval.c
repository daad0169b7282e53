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

/* Bounds of the terms (docs/validation.md): a route's bandwidth may be a
 * twentieth to twice the cluster's figure; a base latency up to 1 ms. */
#define BW_LO 0.05
#define BW_HI 2.0
#define BASE_HI 1e-3

typedef struct model {
    val_sweep *sw;
    const int64_t *sizes;
    const int *idx;
    int nidx;
} model;

static int predict(void *ctx, double *pred, int npts, char *err, size_t errlen)
{
    model *m = ctx;
    for (int i = 0; i < npts && i < m->nidx; i++) {
        val_point pt;
        if (val_sweep_size(m->sw, m->sizes[m->idx[i]], &pt, err, errlen) < 0) return -1;
        pred[i] = pt.time;
    }
    return 0;
}

int val_xval_terms(val_sweep *sw, val_overlay *ov, int scope, const int64_t *sizes, const double *meas,
                   const int *idx, int nidx, val_term *terms, char names[][48], int *nterms, char *err, size_t errlen)
{
    /* which algorithm and protocol the selection runs at each fitted size,
     * and the uncalibrated time of the smallest, to start the base latency */
    int used[VAL_MAX_ALGOS][COLL_NPROTOS] = {{0}};
    double gap = INFINITY;
    int k = 0;
    terms[k] = (val_term){names[k], &ov->bw_eff[scope], BW_LO, BW_HI};
    snprintf(names[k++], 48, "%s.bw_eff", val_scope_name(scope));
    for (int i = 0; i < nidx; i++) {
        val_point pt;
        if (val_sweep_size(sw, sizes[idx[i]], &pt, err, errlen) < 0) return -1;
        if (pt.algo < VAL_MAX_ALGOS) used[pt.algo][pt.proto] = 1;
        if (i == 0) gap = meas[idx[i]] - pt.time;
    }
    double start = fmin(BASE_HI / 2, fmax(1e-6, gap));
    for (int a = 0; a < VAL_MAX_ALGOS; a++)
        for (int p = 0; p < COLL_NPROTOS; p++) {
            if (!used[a][p] || k >= VAL_MAX_TERMS) continue;
            ov->base[a][p] = start;
            terms[k] = (val_term){names[k], &ov->base[a][p], 0, BASE_HI};
            snprintf(names[k++], 48, "%s.%s.base_lat", coll_algo_get(a)->name, coll_proto_name(p));
        }
    *nterms = k;
    return 0;
}

int val_xval_fit(val_sweep *sw, val_overlay *ov, int scope, const int64_t *sizes, const double *meas, const int *idx,
                 int nidx, val_terms_fit *fit, char *note, size_t notelen, char *err, size_t errlen)
{
    val_term terms[VAL_MAX_TERMS];
    char names[VAL_MAX_TERMS][48];
    int nt;
    val_overlay_init(ov);
    sw->ov = ov;
    if (val_xval_terms(sw, ov, scope, sizes, meas, idx, nidx, terms, names, &nt, err, errlen) < 0) return -1;
    double *m = ts_malloc((nidx + 1) * sizeof *m);
    for (int i = 0; i < nidx; i++) m[i] = meas[idx[i]];
    model md = {sw, sizes, idx, nidx};
    int rc = val_fit_terms(terms, nt, m, nidx, predict, &md, fit, err, errlen);
    free(m);
    if (rc < 0 || !note) return rc;
    size_t len = 0;
    for (int t = 0; t < nt; t++) {
        int w = snprintf(note + len, len < notelen ? notelen - len : 0, "%s%s %.4g%s", t ? ", " : "", names[t],
                         *terms[t].value * (strstr(names[t], "base_lat") ? 1e6 : 1),
                         strstr(names[t], "base_lat") ? " us" : "");
        if (w > 0) len += (size_t)w;
    }
    char bnote[512];
    if (val_terms_bound_note(terms, nt, fit, bnote, sizeof bnote) && len < notelen)
        snprintf(note + len, notelen - len, " (%s)", bnote);
    return 0;
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
    int rc = 0, scope = sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA;
    for (int i = 0; i < in->npts && rc == 0; i++) {
        val_point pt;
        rc = val_sweep_size(&sw, in->sizes[i], &pt, err, errlen);
        unc[i] = pt.time;
    }
    sw.fidelity = VAL_FID_ANALYTICAL;
    int *fit_idx = ts_malloc((in->npts + 1) * sizeof *fit_idx), *rest = ts_malloc((in->npts + 1) * sizeof *rest);
    val_overlay ov;
    for (int fold = 0; fold < 2 && rc == 0; fold++) {
        int nf = 0, nr = 0;
        for (int i = 0; i < in->npts; i++) {
            if (i % 2 == fold) fit_idx[nf++] = i;
            else rest[nr++] = i;
        }
        val_terms_fit f;
        if ((rc = val_xval_fit(&sw, &ov, scope, in->sizes, in->meas, fit_idx, nf, &f, NULL, 0, err, errlen)) < 0) break;
        model md = {&sw, in->sizes, rest, nr};
        double *p = ts_malloc((nr + 1) * sizeof *p);
        rc = predict(&md, p, nr, err, errlen);
        for (int i = 0; i < nr; i++) cal[rest[i]] = p[i];
        free(p);
    }
    if (rc == 0) { /* the fit on every size, for the note */
        for (int i = 0; i < in->npts; i++) fit_idx[i] = i;
        val_terms_fit f;
        rc = val_xval_fit(&sw, &ov, scope, in->sizes, in->meas, fit_idx, in->npts, &f, note, VAL_NOTE, err, errlen);
    }
    free(fit_idx);
    free(rest);
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
