/* Robust alpha-beta fits of collective times (GSL nonlinear least squares,
 * bisquare reweighting): the measured latency and bus bandwidth of a sweep. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "val.h"

typedef struct data {
    const double *x, *t;
    int n;
} data;

static int f_res(const gsl_vector *p, void *ctx, gsl_vector *f)
{
    const data *d = ctx;
    double a = exp(gsl_vector_get(p, 0)), b = exp(gsl_vector_get(p, 1));
    for (int i = 0; i < d->n; i++) gsl_vector_set(f, i, (a + d->x[i] / b - d->t[i]) / d->t[i]);
    return GSL_SUCCESS;
}

static int f_jac(const gsl_vector *p, void *ctx, gsl_matrix *J)
{
    const data *d = ctx;
    double a = exp(gsl_vector_get(p, 0)), b = exp(gsl_vector_get(p, 1));
    for (int i = 0; i < d->n; i++) {
        gsl_matrix_set(J, i, 0, a / d->t[i]);
        gsl_matrix_set(J, i, 1, -d->x[i] / b / d->t[i]);
    }
    return GSL_SUCCESS;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double val_abs_quantile(const double *v, int n, double p)
{
    if (n <= 0) return NAN;
    double *s = ts_malloc(n * sizeof *s);
    for (int i = 0; i < n; i++) s[i] = fabs(v[i]);
    qsort(s, n, sizeof *s, cmp_dbl);
    int k = (int)ceil(p * n) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    double q = s[k];
    free(s);
    return q;
}

/* One weighted solve from p (updated in place). */
static int solve(data *d, const double *w, gsl_vector *p, char *err, size_t errlen)
{
    gsl_multifit_nlinear_fdf fdf = {f_res, f_jac, NULL, (size_t)d->n, 2, d, 0, 0, 0};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *ws =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, (size_t)d->n, 2);
    gsl_vector_const_view wv = gsl_vector_const_view_array(w, d->n);
    gsl_multifit_nlinear_winit(p, &wv.vector, &fdf, ws);
    int info, st = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, ws);
    if (st == GSL_SUCCESS || st == GSL_EMAXITER) gsl_vector_memcpy(p, gsl_multifit_nlinear_position(ws));
    gsl_multifit_nlinear_free(ws);
    if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        return ts_err(err, errlen, "alpha-beta fit failed: %s", gsl_strerror(st));
    return 0;
}

int val_fit_ab(const double *x, const double *t, int n, val_fit *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n < 3) return ts_err(err, errlen, "alpha-beta fit needs at least 3 sizes, got %d", n);
    double tmin = INFINITY, bmax = 0;
    for (int i = 0; i < n; i++) {
        if (!(t[i] > 0) || !(x[i] >= 0) || !isfinite(t[i]))
            return ts_err(err, errlen, "alpha-beta fit: point %d has time %g s and %g bytes", i, t[i], x[i]);
        if (t[i] < tmin) tmin = t[i];
        if (x[i] / t[i] > bmax) bmax = x[i] / t[i];
    }
    if (!(bmax > 0)) return ts_err(err, errlen, "alpha-beta fit: every size is 0 bytes");
    gsl_set_error_handler_off();
    data d = {x, t, n};
    double *w = ts_malloc(n * sizeof *w), *r = ts_malloc(n * sizeof *r);
    for (int i = 0; i < n; i++) w[i] = 1;
    gsl_vector *p = gsl_vector_alloc(2);
    gsl_vector_set(p, 0, log(tmin));
    gsl_vector_set(p, 1, log(bmax));
    int rc = 0, round;
    for (round = 0; round < 20; round++) {
        if ((rc = solve(&d, w, p, err, errlen)) < 0) break;
        double a = exp(gsl_vector_get(p, 0)), b = exp(gsl_vector_get(p, 1));
        for (int i = 0; i < n; i++) r[i] = (a + x[i] / b - t[i]) / t[i];
        /* bisquare weights; the scale is the residuals' MAD (floored at 1%
         * so that an exact fit does not turn every tiny deviation into an outlier) */
        double s = 1.4826 * val_abs_quantile(r, n, 0.5);
        if (s < 0.01) s = 0.01;
        double change = 0;
        for (int i = 0; i < n; i++) {
            double u = r[i] / (4.685 * s), nw = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0;
            change = fmax(change, fabs(nw - w[i]));
            w[i] = nw;
        }
        if (change < 1e-4) break;
    }
    if (rc == 0) {
        out->alpha = exp(gsl_vector_get(p, 0));
        out->beta = exp(gsl_vector_get(p, 1));
        out->n = n;
        out->rounds = round + 1;
        out->resid = r;
        out->weight = w;
        double ss = 0, sw = 0;
        double *used = ts_malloc(n * sizeof *used);
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (w[i] == 0) {
                out->outliers++;
                continue;
            }
            ss += r[i] * r[i];
            sw += 1;
            used[k++] = r[i];
            out->max_abs_rel = fmax(out->max_abs_rel, fabs(r[i]));
        }
        out->rms_rel = sw > 0 ? sqrt(ss / sw) : NAN;
        out->median_abs_rel = val_abs_quantile(used, k, 0.5);
        free(used);
    } else {
        free(w);
        free(r);
    }
    gsl_vector_free(p);
    return rc;
}

void val_fit_free(val_fit *f)
{
    free(f->resid);
    free(f->weight);
    f->resid = f->weight = NULL;
}
