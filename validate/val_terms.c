/* Bounded nonlinear least squares of named model terms (GSL): each term lives
 * in [lo, hi] through a smooth transformation, never clamped; a term that ends
 * at a bound is reported by name. */
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "val.h"

/* The free coordinate u of a term maps to its value by a logistic in log
 * space when lo > 0 (bandwidths, latencies: scale-free), else linearly:
 * v = lo + (hi - lo) / (1 + exp(-u)). Every u gives a value inside the
 * bounds, so the solver needs no clamping and a fit that wants to leave them
 * shows up as u running far out (the term "at its bound"). */
static double to_value(const val_term *t, double u)
{
    double s = 1 / (1 + exp(-u));
    if (t->lo > 0) return exp(log(t->lo) + s * (log(t->hi) - log(t->lo)));
    return t->lo + s * (t->hi - t->lo);
}

static double to_free(const val_term *t, double v)
{
    double s = t->lo > 0 ? (log(v) - log(t->lo)) / (log(t->hi) - log(t->lo)) : (v - t->lo) / (t->hi - t->lo);
    if (s < 1e-6) s = 1e-6;
    if (s > 1 - 1e-6) s = 1 - 1e-6;
    return log(s / (1 - s));
}

/* Position of v within its bounds, 0 .. 1, on the transformation's scale. */
static double position(const val_term *t, double v)
{
    return t->lo > 0 ? (log(v) - log(t->lo)) / (log(t->hi) - log(t->lo)) : (v - t->lo) / (t->hi - t->lo);
}

typedef struct fctx {
    val_term *terms;
    int nterms, npts;
    const double *meas;
    val_model_fn fn;
    void *ctx;
    double *pred;
    const double *w;    /* bisquare weights of the round */
    int failed;
    char *err;
    size_t errlen;
} fctx;

static void set_terms(fctx *c, const gsl_vector *u)
{
    for (int k = 0; k < c->nterms; k++) *c->terms[k].value = to_value(&c->terms[k], gsl_vector_get(u, k));
}

/* Log residuals log(model / measured): the relative error where it is small,
 * and symmetric where it is not (a model 100x too fast weighs as much as one
 * 100x too slow; relative residuals would cap the first at -1). */
static int f_res(const gsl_vector *u, void *vctx, gsl_vector *f)
{
    fctx *c = vctx;
    set_terms(c, u);
    if (c->fn(c->ctx, c->pred, c->npts, c->err, c->errlen) < 0) {
        c->failed = 1;
        return GSL_EBADFUNC;
    }
    for (int i = 0; i < c->npts; i++) gsl_vector_set(f, i, sqrt(c->w[i]) * log(fmax(c->pred[i], 1e-300) / c->meas[i]));
    return GSL_SUCCESS;
}

int val_fit_terms(val_term *terms, int nterms, const double *meas, int npts, val_model_fn fn, void *ctx,
                  val_terms_fit *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (nterms < 1 || nterms > VAL_MAX_TERMS)
        return ts_err(err, errlen, "fit: %d terms (1 to %d)", nterms, VAL_MAX_TERMS);
    if (npts < nterms)
        return ts_err(err, errlen, "fit: %d points cannot determine %d terms", npts, nterms);
    for (int k = 0; k < nterms; k++) {
        val_term *t = &terms[k];
        double v = *t->value;
        if (!(t->lo < t->hi) || t->lo < 0 || !isfinite(t->hi))
            return ts_err(err, errlen, "fit: term %s has bounds [%g, %g]", t->name, t->lo, t->hi);
        if (!(v >= t->lo && v <= t->hi))
            return ts_err(err, errlen, "fit: term %s starts at %g, outside its bounds [%g, %g]", t->name, v, t->lo,
                          t->hi);
    }
    for (int i = 0; i < npts; i++)
        if (!(meas[i] > 0) || !isfinite(meas[i]))
            return ts_err(err, errlen, "fit: measured point %d is %g, not a positive time", i, meas[i]);
    gsl_set_error_handler_off();
    fctx c = {terms, nterms, npts, meas, fn, ctx, ts_malloc(npts * sizeof(double)), NULL, 0, err, errlen};
    double start[VAL_MAX_TERMS];
    gsl_vector *u = gsl_vector_alloc(nterms);
    for (int k = 0; k < nterms; k++) {
        start[k] = *terms[k].value;
        gsl_vector_set(u, k, to_free(&terms[k], start[k]));
    }
    gsl_multifit_nlinear_fdf fdf = {f_res, NULL, NULL, (size_t)npts, (size_t)nterms, &c, 0, 0, 0};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    par.h_df = 1e-6;
    gsl_multifit_nlinear_workspace *ws =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, (size_t)npts, (size_t)nterms);
    double *w = ts_malloc(npts * sizeof *w), *lr = ts_malloc(npts * sizeof *lr);
    for (int i = 0; i < npts; i++) w[i] = 1;
    c.w = w;
    int info, rc = 0, round;
    /* Iteratively reweighted (as val_fit_ab): points the model cannot follow
     * (a library switching protocol mid-sweep, a noisy size) get bisquare
     * weight 0 instead of pulling every term. */
    for (round = 0; round < 6 && rc == 0; round++) {
        int st = gsl_multifit_nlinear_init(u, &fdf, ws);
        if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver(60, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, ws);
        if (c.failed) {
            rc = -1; /* the model's own message is in err */
            break;
        }
        if (st != GSL_SUCCESS && st != GSL_EMAXITER) {
            rc = ts_err(err, errlen, "fit: %s", gsl_strerror(st));
            break;
        }
        gsl_vector_memcpy(u, gsl_multifit_nlinear_position(ws));
        set_terms(&c, u);
        out->iterations += (int)gsl_multifit_nlinear_niter(ws);
        if (fn(ctx, c.pred, npts, err, errlen) < 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < npts; i++) lr[i] = log(fmax(c.pred[i], 1e-300) / meas[i]);
        double sc = fmax(0.01, 1.4826 * val_abs_quantile(lr, npts, 0.5)), change = 0;
        for (int i = 0; i < npts && npts >= 3 * nterms; i++) {
            double x = lr[i] / (4.685 * sc), nw = fabs(x) < 1 ? (1 - x * x) * (1 - x * x) : 0;
            change = fmax(change, fabs(nw - w[i]));
            w[i] = nw;
        }
        /* reweighting needs redundancy: with few points per term an
         * "outlier" is only a point the terms cannot all follow */
        if (change < 1e-4 || npts < 3 * nterms) break;
    }
    for (int i = 0; i < npts; i++) out->outliers += w[i] == 0;
    free(w), free(lr);
    if (rc < 0) {
        for (int k = 0; k < nterms; k++) *terms[k].value = start[k];
    } else {
        double ss = 0, *r = ts_malloc(npts * sizeof *r);
        for (int i = 0; i < npts; i++) {
            r[i] = (c.pred[i] - meas[i]) / meas[i];
            ss += r[i] * r[i];
        }
        out->rms_rel = sqrt(ss / npts);
        out->median_abs_rel = val_abs_quantile(r, npts, 0.5);
        out->max_abs_rel = val_abs_quantile(r, npts, 1.0);
        free(r);
        for (int k = 0; k < nterms; k++) {
            double s = position(&terms[k], *terms[k].value);
            out->at_bound[k] = s < 1e-3 ? -1 : s > 1 - 1e-3 ? 1 : 0;
            out->nat_bound += out->at_bound[k] != 0;
        }
    }
    gsl_multifit_nlinear_free(ws);
    gsl_vector_free(u);
    free(c.pred);
    return rc;
}

int val_terms_bound_note(const val_term *terms, int nterms, const val_terms_fit *f, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < nterms; k++) {
        if (!f->at_bound[k]) continue;
        const val_term *t = &terms[k];
        int w = snprintf(buf + len, len < n ? n - len : 0, "%sterm %s = %g is at its %s bound %g", len ? "; " : "",
                         t->name, *t->value, f->at_bound[k] < 0 ? "lower" : "upper",
                         f->at_bound[k] < 0 ? t->lo : t->hi);
        if (w > 0) len += (size_t)w;
    }
    return f->nat_bound;
}
