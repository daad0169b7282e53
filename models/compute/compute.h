/* The compute model: GPU specs (configs/gpus/NAME.json) and a roofline per op,
 * time = max(flops / (peak x efficiency(shape)), bytes / HBM bandwidth). */
#ifndef TS_COMPUTE_H
#define TS_COMPUTE_H

#include <stddef.h>

/* Arithmetic types a GPU spec gives a peak for (names as in --dtype). */
typedef enum { CM_BF16, CM_FP16, CM_FP32, CM_TF32, CM_FP8, CM_FP64, CM_INT8, CM_NDTYPES } cm_dtype;

const char *cm_dtype_name(cm_dtype t);
int cm_dtype_from_name(const char *s);      /* -1 when unknown */
int cm_dtype_size(cm_dtype t);              /* bytes per element */

#define CM_MAX_CALIB 256

/* A measured GEMM (m, n, k, dtype, seconds) turned into an efficiency point. */
typedef struct cm_calib {
    cm_dtype dtype;
    double d;           /* effective dimension of the shape (cm_gemm_dim) */
    double eff;         /* achieved / peak */
} cm_calib;

typedef struct cm_gpu {
    char name[64];
    double peak[CM_NDTYPES];    /* FLOP/s, 0 when the spec gives none */
    double hbm_bw;              /* bytes/s */
    double hbm_bytes;           /* capacity */
    /* Default GEMM efficiency: eff(d) = max / (1 + (d_half / d)^exponent),
     * d = cm_gemm_dim(m, n, k). Non-GEMM compute runs at max. */
    double eff_max, eff_d_half, eff_exp;
    int ncalib;                 /* measured points, per dtype sorted by d */
    cm_calib calib[CM_MAX_CALIB];
    char source[1024];
} cm_gpu;

/* Read a spec file; every field is checked (positive, finite, present). */
int cm_gpu_load(const char *path, cm_gpu *g, char *err, size_t errlen);

/* Resolve NAME (a path to a .json, or a file name under dir such as "h100"
 * for dir/h100.json); on failure err lists the files of dir. */
int cm_gpu_find(const char *name, const char *dir, cm_gpu *g, char *err, size_t errlen);

/* Calibrate from a CSV of measured GEMMs: header "m,n,k,dtype,seconds", one
 * GEMM per line. Afterwards the efficiency of a dtype with measured points is
 * interpolated linearly in log(d) between them (clamped at the ends) instead
 * of the default curve. Returns the number of rows read, or -1 with err. */
int cm_gpu_calibrate(cm_gpu *g, const char *csv_path, char *err, size_t errlen);

/* Effective dimension of a GEMM shape: the geometric mean of m, n, k, capped
 * by 8x the smallest (a skinny GEMM cannot fill the tensor cores however
 * large its other sides). */
double cm_gemm_dim(double m, double n, double k);

/* Efficiency of an m x n x k GEMM (0 < eff <= 1). */
double cm_gemm_eff(const cm_gpu *g, cm_dtype t, double m, double n, double k);

/* Roofline times in seconds. A GEMM moves (mk + kn + mn) elements. */
double cm_gemm_time(const cm_gpu *g, cm_dtype t, double m, double n, double k);
double cm_op_time(const cm_gpu *g, cm_dtype t, double flops, double bytes, double eff);

#endif
