/* The compute model per kernel class (docs/compute.md): GEMMs by shape (tile and
 * wave quantization on the GPU's SMs, an achievable matmul rate per dtype and
 * library era), attention by kernel, memory-bound kernels at achieved HBM
 * bandwidth, a per-kernel overhead; GPU specs from configs/gpus/NAME.json. */
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

/* Attention kernels with a measured rate (FlashAttention 1, 2, and the Hopper
 * class: FlashAttention-3 or cuDNN's fused attention, Transformer Engine's
 * default on sm90). */
typedef enum { CM_ATTN_FLASH, CM_ATTN_FLASH2, CM_ATTN_FLASH3, CM_NATTN } cm_attn;

/* GEMM library generations with their own achievable rate ("max_2021"). */
typedef enum { CM_ERA_CURRENT, CM_ERA_2021, CM_NERAS } cm_era;

typedef struct cm_gpu {
    char name[64];
    double peak[CM_NDTYPES];    /* FLOP/s, 0 when the spec gives none */
    double hbm_bw;              /* bytes/s, datasheet */
    double hbm_eff;             /* bytes/s achieved by streaming kernels (STREAM-like) */
    double hbm_bytes;           /* capacity */
    /* GEMM model ("gemm"): the best of a few tile shapes and split-k factors,
     * eff = max[era][dtype] x tile efficiency x tile and wave utilisation on
     * sms x k/(k + k_half); compute and memory times combine as sqrt(tc^2 + tm^2). */
    int sms;
    double gemm_max[CM_NERAS][CM_NDTYPES];  /* achievable fraction of peak; 0: none */
    double k_half;
    double kernel_overhead;     /* seconds added to every kernel (launch, prologue, tail) */
    double kernel_floor;        /* shortest time of any kernel (launch issue rate) */
    int gemm_persistent;        /* the GEMM library's kernels are persistent: one CTA per SM, each
                                 * looping over its share of the tiles ("persistent": Hopper's cuBLAS) */
    /* Attention forward (causal: half the s x s FLOPs): rate(s) = attn_rate x
     * s / (s + attn_seq_half), 0: the kernel is absent; the backward takes
     * attn_bwd x the forward's time (2.5, FlashAttention's FLOP ratio, unless measured). */
    double attn_rate[CM_NATTN], attn_bwd[CM_NATTN], attn_seq_half;
    /* Fraction of the burst rate a compute-bound kernel keeps under sustained
     * load, where the card sits at its power limit and lowers its clock
     * ("sustained", per dtype; 1 where not measured). */
    double sustained[CM_NDTYPES];
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

/* Efficiency of an m x n x k GEMM (0 < eff <= 1): calibrated points when the
 * dtype has some, else the tile/wave model (current library era). */
double cm_gemm_eff(const cm_gpu *g, cm_dtype t, double m, double n, double k);

/* Seconds of batch independent m x n x k GEMMs in one kernel (batch 1: a plain
 * GEMM) of a library era; a GEMM moves (mk + kn + mn) elements. */
double cm_gemm_time_era(const cm_gpu *g, cm_era era, cm_dtype t, double batch, double m, double n, double k);
double cm_gemm_time(const cm_gpu *g, cm_dtype t, double m, double n, double k);

/* Seconds of nk memory-bound kernels moving bytes in all (elementwise, norms,
 * softmax, optimizer): achieved HBM bandwidth plus the per-kernel overhead. */
double cm_mem_time(const cm_gpu *g, double bytes, int nk);

/* FlashAttention-class kernel k (falls back to the newest older kernel the GPU
 * has) running flops (as the kernel counts them: causal halves) at sequence s. */
double cm_attn_time(const cm_gpu *g, cm_attn k, double flops, double s, int bwd);

/* The sustained-load factor of a kernel of dtype t (fp16 falls back to bf16)
 * that uses the fraction util of the dtype's peak in its burst time: divide
 * that time by it inside a training step. The power a kernel draws, and so the
 * clock the power limit leaves it, goes with its tensor-core use: the measured
 * factor holds at the GEMMs' rate (gemm.max) and scales down linearly below
 * it. 1 when the GPU has none, and for a dtype timed by a --gemm-table (taken
 * as measured). */
double cm_sustained(const cm_gpu *g, cm_dtype t, double util);

/* Plain roofline: max(flops / (peak x eff), bytes / datasheet bandwidth). */
double cm_op_time(const cm_gpu *g, cm_dtype t, double flops, double bytes, double eff);

#endif
