/* Compute model: GPU specs, roofline, default GEMM efficiency and calibration
 * from measured GEMM times. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compute/compute.h"
#include "tests.h"
#include "util.h"

static void test_specs(void)
{
    const char *names[] = {"a100", "h100", "h200", "mi250x-gcd"};
    double bf16[] = {312e12, 989.4e12, 989.4e12, 191.5e12};
    double gib[] = {80, 80, 141, 64};
    char err[TS_ERRLEN];
    for (int i = 0; i < 4; i++) {
        cm_gpu g;
        CU_ASSERT_EQUAL_FATAL(cm_gpu_find(names[i], "configs/gpus", &g, err, sizeof err), 0);
        CU_ASSERT_DOUBLE_EQUAL(g.peak[CM_BF16], bf16[i], 1);
        CU_ASSERT_DOUBLE_EQUAL(g.hbm_bytes / 1073741824.0, gib[i], 1e-9);
        CU_ASSERT(strlen(g.source) > 40);
    }
    cm_gpu g;
    CU_ASSERT_EQUAL(cm_gpu_find("b200", "configs/gpus", &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown gpu 'b200'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "a100, h100, h200, mi250x-gcd"));
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
    /* efficiency grows with the GEMM and stays below max */
    double e1 = cm_gemm_eff(&g, CM_BF16, 512, 512, 512), e2 = cm_gemm_eff(&g, CM_BF16, 8192, 8192, 8192);
    CU_ASSERT(e1 < e2 && e2 < g.eff_max);
    /* a skinny GEMM is capped by its small side */
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_dim(1e6, 64, 8192), 512, 1e-9);
}

/* The default curve of a100.json against the Azure measurements it was fitted to. */
static void test_default_curve(void)
{
    cm_gpu g;
    char err[TS_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(cm_gpu_find("a100", "configs/gpus", &g, err, sizeof err), 0);
    double n[] = {1024, 2048, 4096, 8192, 16384}, tf[] = {119.4, 221.8, 228.0, 253.7, 256.5};
    for (int i = 0; i < 5; i++) {
        double e = cm_gemm_eff(&g, CM_FP16, n[i], n[i], n[i]), m = tf[i] / 312;
        CU_ASSERT(fabs(e - m) / m < 0.15);
    }
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
    CU_ASSERT_DOUBLE_EQUAL(cm_gemm_eff(&g, CM_BF16, 4096, 4096, 4096),
                           g.eff_max / (1 + pow(g.eff_d_half / 4096, g.eff_exp)), 1e-12);

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
    test_add_suite("compute", "gpu specs", test_specs, "roofline", test_roofline, "default gemm curve",
                   test_default_curve, "calibration from gemm table", test_calibration, NULL);
}
