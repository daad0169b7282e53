/* Compute model: GPU specs, roofline, default GEMM efficiency and calibration
 * from measured GEMM times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/compute.h"
#include "tests.h"
#include "util.h"

static void test_specs(void)
{
    const char *names[] = {"a100", "h100", "h200", "mi250x-gcd", "h100-96gb"};
    double bf16[] = {312e12, 989.4e12, 989.4e12, 191.5e12, 989.4e12};
    double gib[] = {80, 80, 141, 64, 96};
    char err[TS_ERRLEN];
    for (int i = 0; i < 5; i++) {
        cm_gpu g;
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find(names[i], "configs/gpus", &g, err, sizeof err), 0);
        CU_ASSERT_DOUBLE_EQUAL(g.peak[CM_BF16], bf16[i], 1);
        CU_ASSERT_DOUBLE_EQUAL(g.hbm_bytes / 1073741824.0, gib[i], 1e-9);
        CU_ASSERT(strlen(g.source) > 40);
    }
    cm_gpu g;
    CU_ASSERT_EQUAL(cm_gpu_find("b200", "configs/gpus", &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown gpu 'b200'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "a100, h100-96gb, h100, h200, mi250x-gcd"));
}

static void test_roofline(void)
{
    cm_gpu g;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &g, err, sizeof err), 0);
    /* memory-bound: 1 GB of traffic at 2.039 TB/s, 1 MFLOP is nothing */
    CU_ASSERT_DOUBLE_EQUAL(cm_op_time(&g, CM_BF16, 1e6, 1e9, 1), 1e9 / 2.039e12, 1e-12);
    /* compute-bound: 312 TFLOP at 50% of 312 TFLOP/s = 2 s */
    CU_ASSERT_DOUBLE_EQUAL(cm_op_time(&g, CM_BF16, 312e12, 1e6, 0.5), 2.0, 1e-12);
    /* efficiency grows with the GEMM and stays below the achievable rate */
    double e1 = cm_gemm_eff(&g, CM_BF16, 512, 512, 512), e2 = cm_gemm_eff(&g, CM_BF16, 8192, 8192, 8192);
    CU_ASSERT(e1 < e2 && e2 < g.gemm_max[CM_ERA_CURRENT][CM_BF16]);
    /* memory-bound kernels run at the achieved (STREAM-like) bandwidth plus a launch overhead */
    CU_ASSERT_DOUBLE_EQUAL(cm_mem_time(&g, 1e9, 1), 1e9 / g.hbm_eff + g.kernel_overhead, 1e-12);
    CU_ASSERT(g.hbm_eff < g.hbm_bw);
    /* a skinny GEMM is capped by its small side */
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_dim(1e6, 64, 8192), 512, 1e-9);
}

#define HARDWARE_MD "../shared/data/hardware.md"

/* Check the GEMM model on every point of one row of hardware.md's cuBLASLt
 * table ("| GPU (DTYPE) | 1024^3 | ... | 16384^3 | other shapes |"): each
 * within 10% of the measured TFLOP/s. Returns the points checked. */
static int check_row(const char *line, const cm_gpu *g, cm_dtype t)
{
    const char *p = strchr(line + 1, '|');
    int n = 0;
    for (int i = 0; i < 5 && p; i++) { /* the cubes 1024 .. 16384 */
        double tf, d = 1024 << i;
        if (sscanf(p + 1, " %lf", &tf) != 1) return -1;
        double pred = cm_gemm_eff(g, t, d, d, d) * g->peak[t] / 1e12;
        if (fabs(pred - tf) / tf >= 0.10) printf("\n  %s %g^3: model %.1f, measured %.1f", g->name, d, pred, tf);
        CU_ASSERT(fabs(pred - tf) / tf < 0.10);
        n++;
        p = strchr(p + 1, '|');
    }
    /* other shapes: "(m, n, k) TF" and "N^3: TF" */
    for (const char *q = p; q && *q; q++) {
        double m, nn, k, tf;
        int used = 0;
        if (*q == '(' && sscanf(q, "(%lf,%lf,%lf) %lf%n", &m, &nn, &k, &tf, &used) == 4 && used) {
        } else if (q[-1] == ' ' && sscanf(q, "%lf^3: %lf%n", &m, &tf, &used) == 2 && used) {
            nn = k = m;
        } else {
            continue;
        }
        double pred = cm_gemm_eff(g, t, m, nn, k) * g->peak[t] / 1e12;
        if (fabs(pred - tf) / tf >= 0.10) printf("\n  %s (%g,%g,%g): model %.1f, measured %.1f", g->name, m, nn, k, pred, tf);
        CU_ASSERT(fabs(pred - tf) / tf < 0.10);
        n++;
        q += used - 1;
    }
    return n;
}

/* The GEMM model (tile and wave quantization, achievable rate) against the
 * cuBLASLt measurements of ../shared/data/hardware.md, A100 fp16 and H100 fp8. */
static void test_gemm_measured(void)
{
    FILE *f = fopen(HARDWARE_MD, "r");
    if (!f) {
        printf("\n  skipped: %s not found (../shared/data absent)\n", HARDWARE_MD);
        return;
    }
    static const struct {
        const char *row, *gpu;
        cm_dtype t;
    } rows[] = {{"| A100-SXM4-80GB (FP16)", "a100", CM_FP16}, {"| H100 SXM 80GB (FP8)", "h100", CM_FP8}};
    char line[2048], err[TS_ERRLEN];
    int points = 0, found = 0;
    while (fgets(line, sizeof line, f))
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
            if (strncmp(line, rows[i].row, strlen(rows[i].row))) continue;
            cm_gpu g;
            CU_ASSERT_EQUAL_FATAL(cm_gpu_find(rows[i].gpu, "configs/gpus", &g, err, sizeof err), 0);
            int n = check_row(line, &g, rows[i].t);
            CU_ASSERT(n >= 5);
            points += n, found++;
        }
    fclose(f);
    CU_ASSERT_EQUAL(found, 2);
    CU_ASSERT(points >= 13);
}

/* The GEMM model against this project's own cuBLASLt measurements on a GH100
 * (configs/measurements/gpu/h200_cublaslt_gemm.csv: squares and transformer
 * shapes, bf16 and fp8) with the H200 spec: every point that runs 50 us or
 * more (shorter ones carry the host's launch in their event timing) within
 * 15%, and within 6% on average. The largest misses are the longest GEMMs
 * (16384^3, the 28672-wide MLP), which the card runs at a lower clock. */
static void test_gemm_own(void)
{
    const char *path = "configs/measurements/gpu/h200_cublaslt_gemm.csv";
    char err[TS_ERRLEN], line[256];
    cm_gpu g;
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("h200", "configs/gpus", &g, err, sizeof err), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int n = 0, worst_line = 0;
    double sum = 0, worst = 0;
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        double m, nn, k, s;
        char dt[16];
        if (sscanf(line, "%lf,%lf,%lf,%15[^,],%lf", &m, &nn, &k, dt, &s) != 5 || s < 50e-6) continue;
        int t = cm_dtype_from_name(dt);
        CU_ASSERT_FATAL(t >= 0);
        double e = fabs(cm_gemm_time(&g, (cm_dtype)t, m, nn, k) / s - 1);
        if (e > worst) worst = e, worst_line = ln;
        sum += e, n++;
    }
    fclose(f);
    printf("\n  %d points: mean |error| %.1f%%, worst %.1f%% (%s:%d)", n, 100 * sum / n, 100 * worst, path, worst_line);
    CU_ASSERT(n >= 40);
    CU_ASSERT(worst < 0.15);
    CU_ASSERT(sum / n < 0.06);
}

/* The sustained-load factor against this project's measurement of the same
 * transformer GEMMs cold and after 4 s back to back (h200_gemm_sustained.csv,
 * the card at its 700 W cap), on the H200 and on an H100: the model's GEMM time
 * at the sustained factor within 10% of every sustained time; the A100's inferred factor (not
 * measured) applies whole at the GEMMs' plateau; a dtype timed by a --gemm-table keeps its burst
 * time; a kernel at half the GEMMs' tensor use loses half as much. */
static int sustained_file(const char *path, const char *gpu_name)
{
    char err[TS_ERRLEN], line[256];
    cm_gpu g;
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find(gpu_name, "configs/gpus", &g, err, sizeof err), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        double m, nn, k, cold, hot;
        char dt[16];
        if (sscanf(line, "%lf,%lf,%lf,%15[^,],%lf,%lf", &m, &nn, &k, dt, &cold, &hot) != 6) continue;
        cm_dtype t = (cm_dtype)cm_dtype_from_name(dt);
        double d = cm_gemm_time(&g, t, m, nn, k), want = d / cm_sustained(&g, t, 2 * m * nn * k / d / g.peak[t]);
        if (fabs(want / hot - 1) >= 0.10)
            printf("\n  %s %g,%g,%g %s: model %.4g s, sustained %.4g s", gpu_name, m, nn, k, dt, want, hot);
        CU_ASSERT(fabs(want / hot - 1) < 0.10);
        n++;
    }
    fclose(f);
    return n;
}

static void test_sustained(void)
{
    char err[TS_ERRLEN];
    cm_gpu g, a;
    CU_ASSERT_EQUAL(sustained_file("configs/measurements/gpu/h200_gemm_sustained.csv", "h200"), 14);
    CU_ASSERT_EQUAL(sustained_file("configs/measurements/gpu/h100_gemm_sustained.csv", "h100"), 14);
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("h200", "configs/gpus", &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &a, err, sizeof err), 0);
    /* A100: the inferred training factor (docs/compute.md), fp16 as bf16, whole at the GEMM plateau */
    CU_ASSERT(a.sustained[CM_FP16] > 0.85 && a.sustained[CM_FP16] < 0.97);
    CU_ASSERT_DOUBLE_EQUAL(a.sustained[CM_BF16], a.sustained[CM_FP16], 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cm_sustained(&a, CM_FP16, a.gemm_max[CM_ERA_CURRENT][CM_FP16]), a.sustained[CM_FP16], 1e-12);
    double full = cm_sustained(&g, CM_BF16, 0.83), half = cm_sustained(&g, CM_BF16, 0.415);
    CU_ASSERT_DOUBLE_EQUAL(full, 0.82, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(1 - half, (1 - full) / 2, 1e-9);
    g.calib[0] = (cm_calib){CM_BF16, 4096, 0.8};
    g.ncalib = 1;
    CU_ASSERT_DOUBLE_EQUAL(cm_sustained(&g, CM_BF16, 0.83), 1, 1e-12);
}

/* MI250X GCD: the training rate of its GEMMs ("sustained", inferred from
 * published training runs, docs/compute.md) slows a large transformer GEMM by
 * the full factor, a GEMM at half the tensor use by half as much, fp16 as bf16,
 * and leaves the burst model (the MAMF point of mi250x_gemm_published.csv) as is. */
static void test_sustained_mi250x(void)
{
    char err[TS_ERRLEN];
    cm_gpu g;
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("mi250x-gcd", "configs/gpus", &g, err, sizeof err), 0);
    double f = g.sustained[CM_BF16];
    CU_ASSERT(f > 0 && f < 1);
    CU_ASSERT_DOUBLE_EQUAL(g.sustained[CM_FP16], f, 1e-12);
    /* 13B's fc1 at micro-batch 2, tp=1: 4096 x 20480 x 5120 */
    double m = 4096, n = 20480, k = 5120, d = cm_gemm_time(&g, CM_FP16, m, n, k);
    double util = 2 * m * n * k / d / g.peak[CM_FP16];
    CU_ASSERT(util > 0.7 * 0.77);
    double full = cm_sustained(&g, CM_FP16, g.gemm_max[CM_ERA_CURRENT][CM_FP16]);
    CU_ASSERT_DOUBLE_EQUAL(full, f, 1e-9);
    double half = cm_sustained(&g, CM_FP16, g.gemm_max[CM_ERA_CURRENT][CM_FP16] / 2);
    CU_ASSERT_DOUBLE_EQUAL(1 - half, (1 - f) / 2, 1e-9);
    /* burst: the published MAMF point within 10% */
    double mamf = cm_gemm_time(&g, CM_BF16, 1024, 14080, 19968);
    CU_ASSERT(fabs(0.003917 / mamf - 1) < 0.10);
}

/* A spec whose sustained factors or attention backward ratios are wrong is
 * refused naming the field. */
static void test_bad_spec(void)
{
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"bf16\": 0.84, \"fp8\": 0.83}", "\"bf16\": 1.5}", "sustained.bf16 1.5 above 1"},
        {"\"bf16\": 0.84, \"fp8\": 0.83}", "\"bf17\": 0.9}", "sustained: dtype 'bf17' unknown"},
        {"{\"bf16\": 0.84, \"fp8\": 0.83}", "0.84", "sustained must be an object"},
        {"{\"flash2\": 2.98,", "{\"flash9\": 2.98,", "unknown kernel 'flash9'"},
        {"\"flash3\": 3.27}", "\"flash3\": -1}", "'flash3' must be positive"},
        {"\"persistent\": true", "\"persistent\": 1", "gemm.persistent must be true or false"},
    };
    static char text[8192];
    FILE *in = fopen("configs/gpus/h100.json", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    text[fread(text, 1, sizeof text - 1, in)] = 0;
    fclose(in);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *at = strstr(text, cases[i].from), err[TS_ERRLEN];
        const char *path = test_tmp("bad_gpu.json");
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "%.*s%s%s", (int)(at - text), text, cases[i].to, at + strlen(cases[i].from));
        fclose(f);
        cm_gpu g;
        CU_ASSERT_EQUAL(cm_gpu_load(path, &g, err, sizeof err), -1);
        if (!strstr(err, cases[i].want)) printf("\n  got '%s', want '%s'", err, cases[i].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
        remove(path);
    }
}

/* Tile and wave quantization: one more tile row past a full wave costs a wave. */
static void test_gemm_quantization(void)
{
    cm_gpu g;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &g, err, sizeof err), 0);
    /* 108 SMs: 12 x 9 tiles of 128x256 is one full wave; m one element past it needs a 13th tile row */
    double full = cm_gemm_eff(&g, CM_BF16, 12 * 256, 9 * 128, 8192);
    double past = cm_gemm_eff(&g, CM_BF16, 12 * 256 + 1, 9 * 128, 8192);
    CU_ASSERT(past < 0.95 * full);
    /* larger GEMMs approach the achievable rate and never pass it */
    double big = cm_gemm_eff(&g, CM_BF16, 16384, 16384, 16384);
    CU_ASSERT(big > 0.95 * g.gemm_max[CM_ERA_CURRENT][CM_BF16] && big <= g.gemm_max[CM_ERA_CURRENT][CM_BF16]);
    /* a batched GEMM fills the waves a single small one leaves empty */
    CU_ASSERT(cm_gemm_time_era(&g, CM_ERA_CURRENT, CM_BF16, 32, 512, 512, 1024) <
              32 * cm_gemm_time(&g, CM_BF16, 512, 512, 1024) / 2);
}

static void test_calibration(void)
{
    cm_gpu g;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(cm_gpu_calibrate(&g, test_data("gemm_a100_fp16.csv"), err, sizeof err), 5);
    /* a measured shape gives back its measured time (compute-bound there) */
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_time(&g, CM_FP16, 8192, 8192, 8192), 0.004333904721, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_eff(&g, CM_FP16, 4096, 4096, 4096), 228.0 / 312, 1e-9);
    /* halfway in log(d) between 4096 and 8192: the mean efficiency */
    double d = sqrt(4096.0 * 8192.0);
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_eff(&g, CM_FP16, d, d, d), (228.0 + 253.7) / 2 / 312, 1e-9);
    /* clamped beyond the ends; other dtypes keep the default curve */
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_eff(&g, CM_FP16, 65536, 65536, 65536), 256.5 / 312, 1e-9);
    cm_gpu plain;
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &plain, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_eff(&g, CM_BF16, 4096, 4096, 4096), cm_gemm_eff(&plain, CM_BF16, 4096, 4096, 4096),
                           1e-12);

    /* bad rows name the line */
    const char *bad = test_tmp("badgemm.csv");
    FILE *f = fopen(bad, "w");
    fprintf(f, "m,n,k,dtype,seconds\n1024,1024,1024,fp16,1e-5\n1024,1024,x,fp16,1e-5\n");
    fclose(f);
    CU_ASSERT_EQUAL(cm_gpu_calibrate(&g, bad, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: want m,n,k,dtype,seconds"));
    f = fopen(bad, "w");
    fprintf(f, "m,n,k,dtype,seconds\n8192,8192,8192,fp16,1e-6\n");
    fclose(f);
    CU_ASSERT_EQUAL(cm_gpu_calibrate(&g, bad, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "x the peak"));
    remove(bad);
}

void suite_compute(void)
{
    test_add_suite("compute", "gpu specs", test_specs, "roofline", test_roofline, "gemm model vs hardware.md",
                   test_gemm_measured, "gemm model vs own H200 measurements", test_gemm_own,
                   "sustained-load clock vs own H100/H200 measurements", test_sustained, "MI250X training GEMM rate", test_sustained_mi250x, "bad gpu specs", test_bad_spec, "gemm tile and wave quantization", test_gemm_quantization, "calibration from gemm table", test_calibration, NULL);
}
