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
    const double *w;    /* IRLS weights of the round: the points', then the priors' */
    int failed;
    char *err;
    size_t errlen;
} fctx;

static void set_terms(fctx *c, const gsl_vector *u)
{
    for (int k = 0; k < c->nterms; k++) *c->terms[k].value = to_value(&c->terms[k], gsl_vector_get(u, k));
}

/* A term's distance from its prior in sd (0 without one). */
static double prior_res(const val_term *t)
{
    if (!(t->sd > 0)) return 0;
    double v = *t->value;
    return t->lo > 0 ? log(v / t->prior) / t->sd : (v - t->prior) / t->sd;
}

/* IRLS weight of a log residual under the pseudo-Huber loss
 * rho(r) = s^2 (sqrt(1 + (r / s)^2) - 1): rho'(r) / r. */
static double huber_w(double r) { return 1 / sqrt(1 + (r / VAL_LOSS_SCALE) * (r / VAL_LOSS_SCALE)); }

/* Log residuals log(model / measured): the relative error where it is small,
 * and symmetric where it is not (a model 100x too fast weighs as much as one
 * 100x too slow; relative residuals would cap the first at -1); then one
 * pseudo-residual per term with a prior. */
static int f_res(const gsl_vector *u, void *vctx, gsl_vector *f)
{
    fctx *c = vctx;
    set_terms(c, u);
    if (c->fn(c->ctx, c->pred, c->npts, c->err, c->errlen) < 0) {
        c->failed = 1;
        return GSL_EBADFUNC;
    }
    for (int i = 0; i < c->npts; i++) gsl_vector_set(f, i, sqrt(c->w[i]) * log(fmax(c->pred[i], 1e-300) / c->meas[i]));
    for (int k = 0; k < c->nterms; k++)
        gsl_vector_set(f, c->npts + k, sqrt(VAL_PRIOR_WEIGHT * c->w[c->npts + k]) * prior_res(&c->terms[k]));
    return GSL_SUCCESS;
}

/* Log residuals beyond this are a factor 10 off: not run-to-run spread (a
 * few %) nor a regime the model gets wrong by tens of %, but a stall (RCCL's
 * rows of 100-370 ms among rows of 1-20 ms on Frontier). */
#define GROSS_LR 2.302585092994046

/* May a fit leave out all but kept of its npts sizes? While most of them
 * stay (a robust fit's breakdown point: the outliers are a minority) and at
 * least two. */
static int may_reject(int kept, int npts) { return kept >= 2 && 2 * kept > npts; }

static int count_within(const double *lr, int n, double cut)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += fabs(lr[i]) <= cut;
    return k;
}

/* The cut a fit of nterms terms applies to its log residuals lr, given the
 * robust one: that cut while more sizes than terms stay within it; else
 * only the stalls (a factor 10 off) go, while they are a minority (a fold of
 * 6 sizes of an 11-size Frontier sweep, 4 terms, 2 sizes stalled): the
 * terms the rest leave undecided are held by their priors, which beats
 * fitting through stalls; a size the model misses by tens of % still tells
 * a term of a small fold something and stays. INFINITY: none go. */
static double guard_cut(const double *lr, int n, double cut, int nterms)
{
    if (!isfinite(cut) || count_within(lr, n, cut) > nterms) return cut;
    double g = fmax(cut, GROSS_LR);
    int kept = count_within(lr, n, g);
    return kept < n && may_reject(kept, n) ? g : INFINITY;
}

/* Log residuals beyond this are outliers: 4.685 x the robust spread
 * (1.4826 x MAD) of them all, at least 10%. */
static double outlier_cut(const double *lr, int n) { return fmax(0.1, 4.685 * 1.4826 * val_abs_quantile(lr, n, 0.5)); }

static int check_inputs(val_term *terms, int nterms, const double *meas, int npts, char *err, size_t errlen)
{
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
        if (t->sd > 0 && !(t->lo > 0 ? t->prior > 0 : isfinite(t->prior)))
            return ts_err(err, errlen, "fit: term %s has prior %g", t->name, t->prior);
    }
    for (int i = 0; i < npts; i++)
        if (!(meas[i] > 0) || !isfinite(meas[i]))
            return ts_err(err, errlen, "fit: measured point %d is %g, not a positive time", i, meas[i]);
    return 0;
}

/* The figures of the fit: relative residuals over every point, the points
 * far outside the residuals' robust spread, the terms at a bound. */
static void summarise(val_term *terms, int nterms, const double *meas, const double *pred, int npts,
                      val_terms_fit *out)
{
    double ss = 0, *r = ts_malloc(npts * sizeof *r), *lr = ts_malloc(npts * sizeof *lr);
    for (int i = 0; i < npts; i++) {
        r[i] = (pred[i] - meas[i]) / meas[i];
        lr[i] = log(fmax(pred[i], 1e-300) / meas[i]);
        ss += r[i] * r[i];
    }
    out->rms_rel = sqrt(ss / npts);
    out->median_abs_rel = val_abs_quantile(r, npts, 0.5);
    out->max_abs_rel = val_abs_quantile(r, npts, 1.0);
    double cut = outlier_cut(lr, npts);
    for (int i = 0; i < npts; i++) out->outliers += fabs(lr[i]) > cut;
    free(r), free(lr);
    for (int k = 0; k < nterms; k++) {
        double s = position(&terms[k], *terms[k].value);
        out->at_bound[k] = s < 1e-3 ? -1 : s > 1 - 1e-3 ? 1 : 0;
        out->nat_bound += out->at_bound[k] != 0;
    }
}

/* The fit's own loss: pseudo-Huber of the log residuals, each capped at
 * cut (the outliers' cut of a fit that rejected them: a rejected size
 * costs what one at the cut costs, whatever its error), plus the priors'. */
static double pseudo_huber(double r)
{
    double q = r / VAL_LOSS_SCALE;
    return VAL_LOSS_SCALE * VAL_LOSS_SCALE * (sqrt(1 + q * q) - 1);
}

static double fit_loss(const fctx *c, const double *lr, double cut)
{
    double l = 0;
    for (int i = 0; i < c->npts; i++) l += pseudo_huber(fmin(fabs(lr[i]), cut));
    for (int k = 0; k < c->nterms; k++) l += VAL_PRIOR_WEIGHT * pseudo_huber(prior_res(&c->terms[k]));
    return l;
}

static void log_res(const fctx *c, double *lr)
{
    for (int i = 0; i < c->npts; i++) lr[i] = log(fmax(c->pred[i], 1e-300) / c->meas[i]);
}

/* Median |relative error| of the predictions in c->pred. */
static double median_rel(const fctx *c)
{
    double *r = ts_malloc((c->npts + 1) * sizeof *r);
    for (int i = 0; i < c->npts; i++) r[i] = (c->pred[i] - c->meas[i]) / c->meas[i];
    double m = val_abs_quantile(r, c->npts, 0.5);
    free(r);
    return m;
}

static void get_values(const fctx *c, double *v)
{
    for (int k = 0; k < c->nterms; k++) v[k] = *c->terms[k].value;
}

static int put_values(fctx *c, const double *v, char *err, size_t errlen)
{
    for (int k = 0; k < c->nterms; k++) *c->terms[k].value = v[k];
    return c->fn(c->ctx, c->pred, c->npts, err, errlen);
}

/* The cluster's figures: each term's prior, or its start without one. */
static void start_values(const fctx *c, const double *start, double *v)
{
    for (int k = 0; k < c->nterms; k++) {
        const val_term *t = &c->terms[k];
        v[k] = t->sd > 0 && t->prior >= t->lo && t->prior <= t->hi ? t->prior : start[k];
    }
}

/* Does the solver's end (c->pred, the terms' values) beat the cluster's
 * figures? The solver can stop short (a local minimum, a step that a size's
 * protocol switch made rough), and the loss it minimises is not the figure a
 * calibration is read by: with few sizes, a few of them stalled or run by
 * another algorithm can tip a per-call latency to where their pull balances
 * every other size's (a fold of Frontier's 2-node all_gather put ring
 * Simple's base latency at its 1 ms bound). So the end must score no worse
 * than the cluster's figures on both the fit's own loss (the priors' too,
 * each size's log residual capped at the end's outlier cut once the fit left
 * outliers out: a stalled size costs the same at both) and the median
 * |relative error| over every size (med0, the cluster's). Returns 1 (it
 * does), 0 (not), -1 on a model error; the terms and c->pred are the end's
 * on return, *med its median |relative error|. */
static int end_passes(fctx *c, const double *start, double *lr, int reject, double med0, double *med, char *err,
                      size_t errlen)
{
    double end[VAL_MAX_TERMS], st[VAL_MAX_TERMS], cut = INFINITY;
    log_res(c, lr);
    if (reject) {
        cut = guard_cut(lr, c->npts, outlier_cut(lr, c->npts), c->nterms);
    }
    double lend = fit_loss(c, lr, cut);
    *med = median_rel(c);
    get_values(c, end);
    start_values(c, start, st);
    if (put_values(c, st, err, errlen) < 0) return -1;
    log_res(c, lr);
    double lst = fit_loss(c, lr, cut);
    if (put_values(c, end, err, errlen) < 0) return -1;
    return lend <= lst && *med <= med0 * (1 + 1e-9) + 1e-12;
}

typedef struct solver {
    gsl_multifit_nlinear_fdf fdf;
    gsl_multifit_nlinear_workspace *ws;
    gsl_vector *u;
    double *w;
} solver;

/* Iteratively reweighted least squares from the terms' current values and
 * the weights w0 of the points (the priors' from their residuals): each round
 * solves the weighted problem, then reweights by the residuals (pseudo-Huber;
 * a size beyond cut0 gets weight 0, as one beyond the outliers' cut once the
 * weights settled), until they settle. *reject: the outlier phase was
 * reached. Fills out's iterations and rounds. */
static int settle(fctx *c, solver *sv, const double *w0, double cut0, double *lr, int *reject, val_terms_fit *out,
                  char *err, size_t errlen)
{
    int npts = c->npts, nterms = c->nterms, info, reseeds = 0;
    double *w = sv->w;
    *reject = 0;
    for (int i = 0; i < npts; i++) w[i] = w0[i];
    for (int k = 0; k < nterms; k++) {
        w[npts + k] = huber_w(prior_res(&c->terms[k]));
        gsl_vector_set(sv->u, k, to_free(&c->terms[k], *c->terms[k].value));
    }
    for (int round = 0; round < 25; round++, out->rounds++) {
        int st = gsl_multifit_nlinear_init(sv->u, &sv->fdf, sv->ws);
        if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver(60, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, sv->ws);
        if (c->failed) return -1; /* the model's own message is in err */
        if (st != GSL_SUCCESS && st != GSL_EMAXITER) return ts_err(err, errlen, "fit: %s", gsl_strerror(st));
        gsl_vector_memcpy(sv->u, gsl_multifit_nlinear_position(sv->ws));
        set_terms(c, sv->u);
        out->iterations += (int)gsl_multifit_nlinear_niter(sv->ws);
        if (c->fn(c->ctx, c->pred, npts, err, errlen) < 0) return -1;
        double change = 0, cut = cut0;
        log_res(c, lr);
        if (*reject) cut = outlier_cut(lr, npts);
        cut = guard_cut(lr, npts, cut, nterms);
        for (int i = 0; i < npts; i++) {
            double nw = fabs(lr[i]) > cut ? 0 : huber_w(lr[i]);
            change = fmax(change, fabs(nw - w[i]) / fmax(fmax(nw, w[i]), 1e-300));
            w[i] = nw;
        }
        for (int k = 0; k < nterms; k++) w[npts + k] = huber_w(prior_res(&c->terms[k]));
        /* A term near a bound has almost no gradient there (the
         * transformation flattens), so a term pushed there early, while
         * another took its share, would stay: restart it 2% inside (twice
         * at most). One the points do want there goes back. */
        int moved = 0;
        for (int k = 0; k < nterms && reseeds < 2; k++) {
            double ps = position(&c->terms[k], *c->terms[k].value);
            if (ps > 1e-3 && ps < 1 - 1e-3) continue;
            double at = ps <= 1e-3 ? 0.02 : 0.98;
            val_term *t = &c->terms[k];
            *t->value = t->lo > 0 ? exp(log(t->lo) + at * (log(t->hi) - log(t->lo))) : t->lo + at * (t->hi - t->lo);
            gsl_vector_set(sv->u, k, to_free(t, *t->value));
            moved = 1;
        }
        reseeds += moved;
        if (change < 0.02 && !moved) {
            if (*reject) break;
            /* settled: now leave out the sizes far outside the others'
             * spread (weight 0, a redescending loss), and settle again */
            *reject = 1, reseeds = 0;
            double ct = guard_cut(lr, npts, outlier_cut(lr, npts), nterms);
            if (count_within(lr, npts, ct) == npts) break;
            for (int i = 0; i < npts; i++)
                if (fabs(lr[i]) > ct) w[i] = 0;
        }
    }
    return c->fn(c->ctx, c->pred, npts, err, errlen);
}

int val_fit_terms(val_term *terms, int nterms, const double *meas, int npts, val_model_fn fn, void *ctx,
                  val_terms_fit *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_inputs(terms, nterms, meas, npts, err, errlen) < 0) return -1;
    gsl_set_error_handler_off();
    fctx c = {terms, nterms, npts, meas, fn, ctx, ts_malloc(npts * sizeof(double)), NULL, 0, err, errlen};
    double start[VAL_MAX_TERMS], st[VAL_MAX_TERMS];
    size_t nres = (size_t)npts + (size_t)nterms;
    solver sv = {{f_res, NULL, NULL, nres, (size_t)nterms, &c, 0, 0, 0}, NULL, gsl_vector_alloc(nterms),
                 ts_malloc(nres * sizeof(double))};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    /* finite differences well above the simulator's own precision (SimGrid
     * resolves times to about 1e-5 relative): 1e-6 steps gave noise */
    par.h_df = 1e-3;
    sv.ws = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, nres, (size_t)nterms);
    c.w = sv.w;
    double *w0 = ts_malloc((npts + 1) * sizeof *w0), *lr = ts_malloc((npts + 1) * sizeof *lr), med0 = 0, cut0 = 0;
    int rc = 0, reject = 0, pass = 0, nout0 = 0;
    get_values(&c, start);
    start_values(&c, start, st);
    /* the cluster's figures: their median |relative error|, the robust cut
     * of their log residuals and the sizes beyond it */
    if (put_values(&c, st, err, errlen) < 0) rc = -1;
    if (rc == 0) {
        med0 = median_rel(&c);
        log_res(&c, lr);
        cut0 = guard_cut(lr, npts, outlier_cut(lr, npts), nterms);
        nout0 = npts - count_within(lr, npts, cut0);
    }
    /* the first fit: from the start, the first weights from the cluster's
     * figures (rows they miss by far count little from the first round on) */
    if (rc == 0 && put_values(&c, start, err, errlen) < 0) rc = -1;
    for (int i = 0; i < npts && rc == 0; i++) w0[i] = huber_w(log(fmax(c.pred[i], 1e-300) / meas[i]));
    if (rc == 0) rc = settle(&c, &sv, w0, INFINITY, lr, &reject, out, err, errlen);
    double best[VAL_MAX_TERMS], mbest = INFINITY, med;
    if (rc == 0 && (pass = end_passes(&c, start, lr, reject, med0, &med, err, errlen)) < 0) rc = -1;
    if (pass > 0) get_values(&c, best), mbest = med;
    /* the second, where the cluster's figures miss some sizes far beyond the
     * others' spread (a stall, a size the library ran another algorithm on,
     * or in a small sweep one size off the others' line): those sizes are
     * out from the first round (a redescending loss with its scale from the
     * start, as an MM-estimator takes it from a high-breakdown one), so that
     * they cannot tip the terms while the others settle. Of the two ends
     * that beat the cluster's figures, the one with the lower median
     * |relative error| is kept (the figure the report and a user read; the
     * first on a tie): a few sizes' pull does not decide the terms of many */
    if (rc == 0 && nout0 > 0) {
        if (put_values(&c, start, err, errlen) < 0) rc = -1;
        log_res(&c, lr);
        for (int i = 0; i < npts && rc == 0; i++) w0[i] = fabs(lr[i]) > cut0 ? 0 : huber_w(lr[i]);
        if (rc == 0) rc = settle(&c, &sv, w0, cut0, lr, &reject, out, err, errlen);
        int p2 = rc == 0 ? end_passes(&c, start, lr, reject, med0, &med, err, errlen) : -1;
        if (p2 < 0) rc = -1;
        else if (p2 && med < mbest) get_values(&c, best), mbest = med, out->restarted = 1;
        pass |= p2 > 0;
    }
    if (rc == 0 && !pass) out->kept_start = 1, memcpy(best, st, sizeof st);
    if (rc == 0 && put_values(&c, best, err, errlen) < 0) rc = -1;
    free(lr), free(w0);
    if (rc < 0) {
        for (int k = 0; k < nterms; k++) *terms[k].value = start[k];
    } else {
        summarise(terms, nterms, meas, c.pred, npts, out);
        out->start_median_abs_rel = med0;
    }
    gsl_multifit_nlinear_free(sv.ws);
    gsl_vector_free(sv.u);
    free(sv.w);
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
        double b = f->at_bound[k] < 0 ? t->lo : t->hi, v = fabs(*t->value - b) < 1e-12 * fmax(1, fabs(b)) ? b : *t->value;
        int w = snprintf(buf + len, len < n ? n - len : 0, "%sterm %s = %g is at its %s bound %g", len ? "; " : "",
                         t->name, v, f->at_bound[k] < 0 ? "lower" : "upper", b);
        if (w > 0) len += (size_t)w;
    }
    return f->nat_bound;
}
