/* GPU specs from JSON, GEMM efficiency (default curve or calibrated from
 * measured GEMM times) and the roofline time of an op. */
#include "compute.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const struct {
    const char *name;
    int size;
} dtypes[CM_NDTYPES] = {
    {"bf16", 2}, {"fp16", 2}, {"fp32", 4}, {"tf32", 4}, {"fp8", 1}, {"fp64", 8}, {"int8", 1},
};

const char *cm_dtype_name(cm_dtype t) { return t < CM_NDTYPES ? dtypes[t].name : "?"; }
int cm_dtype_size(cm_dtype t) { return t < CM_NDTYPES ? dtypes[t].size : 0; }

int cm_dtype_from_name(const char *s)
{
    for (int i = 0; i < CM_NDTYPES; i++)
        if (strcmp(s, dtypes[i].name) == 0) return i;
    return -1;
}

static int get_pos(json_t *o, const char *key, const char *path, double *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        return ts_err(err, errlen, "%s: '%s' missing or not a number", path, key);
    double d = json_number_value(v);
    if (!(d > 0) || !isfinite(d)) return ts_err(err, errlen, "%s: '%s' must be positive, not %g", path, key, d);
    *out = d;
    return 0;
}

int cm_gpu_load(const char *path, cm_gpu *g, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) return ts_err(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    memset(g, 0, sizeof *g);
    int rc = -1;
    json_t *name = json_object_get(root, "name"), *src = json_object_get(root, "source");
    json_t *peak = json_object_get(root, "peak_flops"), *eff = json_object_get(root, "gemm_efficiency");
    if (!json_is_object(root) || !json_is_string(name) || !json_is_string(src)) {
        ts_err(err, errlen, "%s: needs string fields 'name' and 'source'", path);
        goto out;
    }
    snprintf(g->name, sizeof g->name, "%s", json_string_value(name));
    snprintf(g->source, sizeof g->source, "%s", json_string_value(src));
    if (!json_is_object(peak) || !json_is_object(eff)) {
        ts_err(err, errlen, "%s: needs objects 'peak_flops' and 'gemm_efficiency'", path);
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(peak, key, v) {
        int t = cm_dtype_from_name(key);
        if (t < 0) {
            ts_err(err, errlen, "%s: peak_flops: unknown dtype '%s'", path, key);
            goto out;
        }
        if (get_pos(peak, key, path, &g->peak[t], err, errlen) < 0) goto out;
    }
    if (g->peak[CM_BF16] <= 0 && g->peak[CM_FP16] <= 0) {
        ts_err(err, errlen, "%s: peak_flops has neither bf16 nor fp16", path);
        goto out;
    }
    if (get_pos(root, "hbm_bandwidth", path, &g->hbm_bw, err, errlen) < 0 ||
        get_pos(root, "hbm_bytes", path, &g->hbm_bytes, err, errlen) < 0 ||
        get_pos(eff, "max", path, &g->eff_max, err, errlen) < 0 ||
        get_pos(eff, "d_half", path, &g->eff_d_half, err, errlen) < 0 ||
        get_pos(eff, "exponent", path, &g->eff_exp, err, errlen) < 0)
        goto out;
    if (g->eff_max > 1) {
        ts_err(err, errlen, "%s: gemm_efficiency.max %g above 1", path, g->eff_max);
        goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return ts_natcmp(*(char *const *)a, *(char *const *)b); }

int cm_gpu_find(const char *name, const char *dir, cm_gpu *g, char *err, size_t errlen)
{
    char path[1024];
    if (ts_config_path(name, dir, path, sizeof path) == 0) return cm_gpu_load(path, g, err, errlen);
    /* unknown: list what there is, sorted */
    char list[512] = "";
    DIR *d = opendir(dir);
    char *names[64];
    int k = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && k < 64) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) names[k++] = ts_strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(names, k, sizeof *names, cmp_str);
    for (int i = 0; i < k; i++) {
        names[i][strlen(names[i]) - 5] = 0;
        if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        free(names[i]);
    }
    return ts_err(err, errlen, "unknown gpu '%s' (known in %s: %s)", name, dir, list[0] ? list : "none");
}

double cm_gemm_dim(double m, double n, double k)
{
    double g = cbrt(m * n * k), lo = fmin(m, fmin(n, k));
    return fmin(g, 8 * lo);
}

static int cmp_calib(const void *a, const void *b)
{
    const cm_calib *x = a, *y = b;
    if (x->dtype != y->dtype) return (int)x->dtype - (int)y->dtype;
    return (x->d > y->d) - (x->d < y->d);
}

int cm_gpu_calibrate(cm_gpu *g, const char *csv_path, char *err, size_t errlen)
{
    FILE *f = fopen(csv_path, "r");
    if (!f) return ts_err(err, errlen, "%s: cannot open", csv_path);
    char line[512];
    int lineno = 0, rows = 0, rc = -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (lineno == 1 && strncmp(line, "m,n,k,dtype,seconds", 19) == 0) continue;
        if (lineno == 1) {
            ts_err(err, errlen, "%s:1: header must be 'm,n,k,dtype,seconds', not '%s'", csv_path, line);
            goto out;
        }
        double m, n, k, s;
        char dt[32];
        int used = 0;
        if (sscanf(line, "%lf,%lf,%lf,%31[^,],%lf%n", &m, &n, &k, dt, &s, &used) != 5 || line[used]) {
            ts_err(err, errlen, "%s:%d: want m,n,k,dtype,seconds, got '%s'", csv_path, lineno, line);
            goto out;
        }
        int t = cm_dtype_from_name(dt);
        if (t < 0 || g->peak[t] <= 0) {
            ts_err(err, errlen, "%s:%d: dtype '%s' unknown or without a peak for %s", csv_path, lineno, dt, g->name);
            goto out;
        }
        if (!(m >= 1 && n >= 1 && k >= 1 && s > 0) || !isfinite(m * n * k * s)) {
            ts_err(err, errlen, "%s:%d: sizes must be >= 1 and seconds > 0", csv_path, lineno);
            goto out;
        }
        if (g->ncalib >= CM_MAX_CALIB) {
            ts_err(err, errlen, "%s:%d: more than %d rows", csv_path, lineno, CM_MAX_CALIB);
            goto out;
        }
        double eff = 2 * m * n * k / s / g->peak[t];
        if (eff > 1) {
            ts_err(err, errlen, "%s:%d: %.4g s means %.3g x the peak of %s", csv_path, lineno, s, eff, g->name);
            goto out;
        }
        g->calib[g->ncalib++] = (cm_calib){(cm_dtype)t, cm_gemm_dim(m, n, k), eff};
        rows++;
    }
    qsort(g->calib, g->ncalib, sizeof *g->calib, cmp_calib);
    rc = rows;
out:
    fclose(f);
    return rc;
}

double cm_gemm_eff(const cm_gpu *g, cm_dtype t, double m, double n, double k)
{
    double d = cm_gemm_dim(m, n, k);
    int lo = -1, hi = -1;
    for (int i = 0; i < g->ncalib; i++) {
        if (g->calib[i].dtype != t) continue;
        if (lo < 0) lo = i;
        hi = i;
    }
    if (lo < 0) return g->eff_max / (1 + pow(g->eff_d_half / d, g->eff_exp));
    if (d <= g->calib[lo].d) return g->calib[lo].eff;
    if (d >= g->calib[hi].d) return g->calib[hi].eff;
    for (int i = lo; i < hi; i++) {
        const cm_calib *a = &g->calib[i], *b = &g->calib[i + 1];
        if (d <= b->d) {
            if (b->d == a->d) return b->eff;
            double x = (log(d) - log(a->d)) / (log(b->d) - log(a->d));
            return a->eff + x * (b->eff - a->eff);
        }
    }
    return g->calib[hi].eff;
}

double cm_op_time(const cm_gpu *g, cm_dtype t, double flops, double bytes, double eff)
{
    double peak = g->peak[t] > 0 ? g->peak[t] : g->peak[CM_BF16] > 0 ? g->peak[CM_BF16] : g->peak[CM_FP16];
    double tc = flops > 0 ? flops / (peak * eff) : 0, tm = bytes > 0 ? bytes / g->hbm_bw : 0;
    return tc > tm ? tc : tm;
}

double cm_gemm_time(const cm_gpu *g, cm_dtype t, double m, double n, double k)
{
    double bytes = (m * k + k * n + m * n) * cm_dtype_size(t);
    return cm_op_time(g, t, 2 * m * n * k, bytes, cm_gemm_eff(g, t, m, n, k));
}
