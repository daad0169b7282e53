/* GPU specs from JSON and the time of a kernel by class: GEMMs by shape (tile
 * and wave quantization), attention by kernel, memory-bound kernels. */
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

/* An object "what" of dtype: fraction in (0, 1] (gemm.max, sustained) into
 * out; each dtype must have a peak. */
static int dtype_fractions(json_t *o, const char *what, const char *path, const cm_gpu *g, double *out, char *err,
                           size_t errlen)
{
    if (!json_is_object(o)) return ts_err(err, errlen, "%s: %s must be an object of dtype: fraction", path, what);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int t = cm_dtype_from_name(key);
        if (t < 0 || g->peak[t] <= 0)
            return ts_err(err, errlen, "%s: %s: dtype '%s' unknown or without a peak", path, what, key);
        if (get_pos(o, key, path, &out[t], err, errlen) < 0) return -1;
        if (out[t] > 1) return ts_err(err, errlen, "%s: %s.%s %g above 1", path, what, key, out[t]);
    }
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
    json_t *peak = json_object_get(root, "peak_flops"), *gemm = json_object_get(root, "gemm");
    json_t *attn = json_object_get(root, "attention");
    if (!json_is_object(root) || !json_is_string(name) || !json_is_string(src)) {
        ts_err(err, errlen, "%s: needs string fields 'name' and 'source'", path);
        goto out;
    }
    snprintf(g->name, sizeof g->name, "%s", json_string_value(name));
    snprintf(g->source, sizeof g->source, "%s", json_string_value(src));
    if (!json_is_object(peak) || !json_is_object(gemm) || !json_is_object(attn)) {
        ts_err(err, errlen, "%s: needs objects 'peak_flops', 'gemm' and 'attention'", path);
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
    double sms;
    if (get_pos(root, "hbm_bandwidth", path, &g->hbm_bw, err, errlen) < 0 ||
        get_pos(root, "hbm_achieved", path, &g->hbm_eff, err, errlen) < 0 ||
        get_pos(root, "hbm_bytes", path, &g->hbm_bytes, err, errlen) < 0 ||
        get_pos(gemm, "sms", path, &sms, err, errlen) < 0 || get_pos(gemm, "k_half", path, &g->k_half, err, errlen) < 0 ||
        get_pos(gemm, "kernel_overhead", path, &g->kernel_overhead, err, errlen) < 0 ||
        get_pos(gemm, "kernel_floor", path, &g->kernel_floor, err, errlen) < 0 ||
        get_pos(attn, "seq_half", path, &g->attn_seq_half, err, errlen) < 0)
        goto out;
    if (sms != floor(sms) || sms > 100000) {
        ts_err(err, errlen, "%s: gemm.sms must be a whole count, not %g", path, sms);
        goto out;
    }
    g->sms = (int)sms;
    json_t *pers = json_object_get(gemm, "persistent");
    if (pers && !json_is_boolean(pers)) {
        ts_err(err, errlen, "%s: gemm.persistent must be true or false", path);
        goto out;
    }
    g->gemm_persistent = json_is_true(pers);
    if (g->hbm_eff > g->hbm_bw) {
        ts_err(err, errlen, "%s: hbm_achieved %g above hbm_bandwidth %g", path, g->hbm_eff, g->hbm_bw);
        goto out;
    }
    static const char *const era_keys[CM_NERAS] = {"gemm.max", "gemm.max_2021"};
    for (int e = 0; e < CM_NERAS; e++) {
        json_t *mx = json_object_get(gemm, era_keys[e] + 5);
        if ((mx || e == 0) && dtype_fractions(mx, era_keys[e], path, g, g->gemm_max[e], err, errlen) < 0) goto out;
    }
    if (g->gemm_max[0][CM_BF16] <= 0 && g->gemm_max[0][CM_FP16] <= 0) {
        ts_err(err, errlen, "%s: gemm.max has neither bf16 nor fp16", path);
        goto out;
    }
    json_t *sus = json_object_get(root, "sustained");
    if (sus && dtype_fractions(sus, "sustained", path, g, g->sustained, err, errlen) < 0) goto out;
    static const char *const attn_keys[CM_NATTN] = {"flash", "flash2", "flash3"};
    json_t *bwd = json_object_get(attn, "bwd_ratio");
    if (bwd && !json_is_object(bwd)) {
        ts_err(err, errlen, "%s: attention.bwd_ratio must be an object of kernel: backward/forward time", path);
        goto out;
    }
    for (int a = 0; a < CM_NATTN; a++) {
        if (json_object_get(attn, attn_keys[a]) &&
            get_pos(attn, attn_keys[a], path, &g->attn_rate[a], err, errlen) < 0)
            goto out;
        g->attn_bwd[a] = 2.5;
        if (json_object_get(bwd, attn_keys[a]) && get_pos(bwd, attn_keys[a], path, &g->attn_bwd[a], err, errlen) < 0)
            goto out;
    }
    json_object_foreach(bwd, key, v) {
        int a = 0;
        while (a < CM_NATTN && strcmp(key, attn_keys[a])) a++;
        if (a == CM_NATTN) {
            ts_err(err, errlen, "%s: attention.bwd_ratio: unknown kernel '%s' (flash, flash2, flash3)", path, key);
            goto out;
        }
    }
    if (g->attn_rate[CM_ATTN_FLASH] <= 0) {
        ts_err(err, errlen, "%s: attention.flash (the oldest kernel, the fallback) is required", path);
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
    int lineno = 0, rows = 0, rc = -1, header = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (!header) { /* the first line that is not a comment */
            header = 1;
            if (strcmp(line, "m,n,k,dtype,seconds") == 0) continue;
            ts_err(err, errlen, "%s:%d: header must be 'm,n,k,dtype,seconds', not '%s'", csv_path, lineno, line);
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

/* Achievable fraction of peak of dtype t in era e: the era's figure, else the
 * current one; a dtype without one takes bf16's (fp16's). */
static double gemm_max(const cm_gpu *g, cm_era e, cm_dtype t)
{
    const double *mx = g->gemm_max[e];
    if (mx[t] > 0) return mx[t];
    if (e != CM_ERA_CURRENT) return gemm_max(g, CM_ERA_CURRENT, t);
    return mx[CM_BF16] > 0 ? mx[CM_BF16] : mx[CM_FP16];
}

static double peak_of(const cm_gpu *g, cm_dtype t)
{
    return g->peak[t] > 0 ? g->peak[t] : g->peak[CM_BF16] > 0 ? g->peak[CM_BF16] : g->peak[CM_FP16];
}

/* CTA tile shapes a GEMM library chooses among, with the fraction of the large
 * tile's rate each reaches (smaller tiles reuse less data per load). */
static const struct {
    double tm, tn, eff;
} tiles[] = {{256, 128, 1.0}, {128, 128, 1.0}, {128, 64, 0.75}, {64, 64, 0.5}};

/* Split-k factors tried when k/split stays at or above this many elements. */
#define CM_SPLITK_MIN_K 1024.0

/* Seconds of the fastest tile shape and split-k factor (without the
 * per-kernel overhead): compute and memory times combined. */
static double model_time(const cm_gpu *g, cm_era era, cm_dtype t, double batch, double m, double n, double k)
{
    double peak = peak_of(g, t), mx = gemm_max(g, era, t), es = cm_dtype_size(t);
    double base = batch * (m * k + k * n + m * n) * es, flops = 2 * batch * m * n * k, best = HUGE_VAL;
    for (size_t i = 0; i < sizeof tiles / sizeof *tiles; i++) {
        double tm = tiles[i].tm, tn = tiles[i].tn, ct = ceil(m / tm) * ceil(n / tn) * batch;
        double fill = m * n * batch / (ct * tm * tn);       /* tile quantization */
        for (int split = 1; split <= 4; split *= 2) {
            if (split > 1 && k / split < CM_SPLITK_MIN_K) break;
            double ctas = ct * split, waves = ceil(ctas / g->sms);
            double util = fill * ctas / (waves * g->sms);   /* wave quantization */
            double kk = k / split, eff = mx * tiles[i].eff * util * kk / (kk + g->k_half);
            double tc = flops / (peak * eff);
            if (tc >= best) continue; /* sqrt(tc^2 + tm^2) >= tc: cannot win */
            /* split-k: the fp32 partial products of the other splits are written and read */
            double tmem = (base + (split - 1) * batch * m * n * 8) / g->hbm_eff;
            double tt = sqrt(tc * tc + tmem * tmem);
            if (tt < best) best = tt;
        }
    }
    return best;
}

static double calib_eff(const cm_gpu *g, cm_dtype t, double m, double n, double k, int *have)
{
    double d = cm_gemm_dim(m, n, k);
    int lo = -1, hi = -1;
    for (int i = 0; i < g->ncalib; i++) {
        if (g->calib[i].dtype != t) continue;
        if (lo < 0) lo = i;
        hi = i;
    }
    *have = lo >= 0;
    if (lo < 0) return 0;
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

double cm_gemm_time_era(const cm_gpu *g, cm_era era, cm_dtype t, double batch, double m, double n, double k)
{
    if (!(m >= 1 && n >= 1 && k >= 1 && batch >= 1)) return 0;
    int have;
    double ce = calib_eff(g, t, m, n, k, &have);
    if (have) /* measured times include the per-kernel costs already */
        return 2 * batch * m * n * k / (peak_of(g, t) * ce);
    double d = model_time(g, era, t, batch, m, n, k) + g->kernel_overhead;
    return d > g->kernel_floor ? d : g->kernel_floor;
}

double cm_gemm_time(const cm_gpu *g, cm_dtype t, double m, double n, double k)
{
    return cm_gemm_time_era(g, CM_ERA_CURRENT, t, 1, m, n, k);
}

double cm_gemm_eff(const cm_gpu *g, cm_dtype t, double m, double n, double k)
{
    double d = cm_gemm_time(g, t, m, n, k);
    return d > 0 ? 2 * m * n * k / (d * peak_of(g, t)) : 0;
}

double cm_mem_time(const cm_gpu *g, double bytes, int nk)
{
    if (nk < 1) nk = 1;
    double d = (bytes > 0 ? bytes / g->hbm_eff : 0) + nk * g->kernel_overhead;
    return d > nk * g->kernel_floor ? d : nk * g->kernel_floor;
}

double cm_attn_time(const cm_gpu *g, cm_attn k, double flops, double s, int bwd)
{
    int a = k < CM_NATTN ? (int)k : CM_ATTN_FLASH;
    while (a > 0 && g->attn_rate[a] <= 0) a--;
    double rate = g->attn_rate[a] * s / (s + g->attn_seq_half);
    double d = (flops > 0 ? flops / rate * (bwd ? g->attn_bwd[a] : 1) : 0) + g->kernel_overhead;
    return d > g->kernel_floor ? d : g->kernel_floor;
}

double cm_sustained(const cm_gpu *g, cm_dtype t, double util)
{
    for (int i = 0; i < g->ncalib; i++)
        if (g->calib[i].dtype == t) return 1;
    double f = g->sustained[t];
    if (!(f > 0) && t == CM_FP16) f = g->sustained[CM_BF16];
    if (!(f > 0) || !(util > 0)) return 1;
    double load = util / gemm_max(g, CM_ERA_CURRENT, t);
    return 1 - (1 - f) * (load < 1 ? load : 1);
}

double cm_op_time(const cm_gpu *g, cm_dtype t, double flops, double bytes, double eff)
{
    double tc = flops > 0 ? flops / (peak_of(g, t) * eff) : 0, tm = bytes > 0 ? bytes / g->hbm_bw : 0;
    return tc > tm ? tc : tm;
}
