/* trainsim-gemm: measure GEMMs on a real GPU with cuBLASLt (bf16, fp16, fp8 as
 * Transformer Engine calls it) and write the m,n,k,dtype,seconds table that
 * `trainsim run --gemm-table` and the compute model's tests read. */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKSPACE (32u << 20)
#define L2_FLUSH (256.0 * (1 << 20)) /* rotate buffer sets until they exceed L2 */
#define MAX_SETS 16

static const char *usage =
    "usage: trainsim-gemm [--dtype bf16|fp16|fp8[,..]] [--shapes FILE | --square LO:HI] [--reps N] [--fp8-fast]\n"
    "                     [--sustain S] [-o CSV]\n"
    "  Times each m,n,k GEMM (D = A B, column-major, A k x m transposed as cuBLASLt's fp8 path wants)\n"
    "  with the algorithm cuBLASLt's heuristic ranks first, 32 MiB workspace, fp32 accumulation,\n"
    "  random inputs, operands rotated through enough copies to defeat L2; median of N timed runs\n"
    "  (CUDA events). Writes 'm,n,k,dtype,seconds' (the --gemm-table format) and a TFLOP/s column\n"
    "  on stderr. --shapes FILE: lines 'm,n,k' (# comments). Also prints the device-to-device copy\n"
    "  bandwidth (bytes read + written) as a '# hbm' comment. fp8 accumulates exactly (TE's dgrad and\n"
    "  wgrad GEMMs) unless --fp8-fast (TE's fprop GEMMs). --sustain S: run each GEMM back to back\n"
    "  for S seconds before timing it (the clock a card holds under sustained load, as in training).\n";

static void die(const char *what, const char *why)
{
    fprintf(stderr, "trainsim-gemm: %s: %s\n", what, why);
    exit(1);
}
#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) die(#x, cudaGetErrorString(e_)); } while (0)
#define LT(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { char b_[32]; \
    snprintf(b_, sizeof b_, "status %d", (int)s_); die(#x, b_); } } while (0)

typedef struct { const char *name; cudaDataType_t in, out; int size; } dtype;
static const dtype dtypes[] = {
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, 2},
    {"fp16", CUDA_R_16F, CUDA_R_16F, 2},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, 1}, /* TE: fp8 operands, bf16 output */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Random values in [-2, 2) in the operand's format. */
static void fill(void *h, size_t n, const dtype *t)
{
    if (t->size == 1) { /* e4m3: sign, exponent 5..8 (0.03..3.75), any mantissa: never NaN */
        uint8_t *p = h;
        for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((rnd() & 0x87) | ((5 + rnd() % 4) << 3));
        return;
    }
    uint16_t *p = h;
    for (size_t i = 0; i < n; i++) {
        float f = (float)(rnd() % 65536) / 16384.0f - 2.0f;
        uint32_t u;
        memcpy(&u, &f, 4);
        if (t->in == CUDA_R_16BF) p[i] = (uint16_t)(u >> 16);
        else { /* fp16 from a float in [-2, 2): exponent rebias */
            uint32_t s = (u >> 16) & 0x8000, e = (u >> 23) & 0xff, m = (u >> 13) & 0x3ff;
            p[i] = (uint16_t)(e < 103 ? s : s | ((e - 112) << 10) | m);
        }
    }
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int fp8_fast;
static double sustain; /* seconds of back-to-back runs before timing */

static double val(const dtype *t, const void *p, size_t i)
{
    if (t->size == 1) { /* e4m3, normal numbers only (fill makes no others) */
        uint8_t b = ((const uint8_t *)p)[i];
        double v = ldexp(1 + (b & 7) / 8.0, ((b >> 3) & 15) - 7);
        return b & 0x80 ? -v : v;
    }
    uint16_t h = ((const uint16_t *)p)[i];
    if (t->in == CUDA_R_16BF) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 31;
    double v = e ? ldexp(1 + (h & 1023) / 1024.0, e - 15) : ldexp((h & 1023) / 1024.0, -14);
    return h & 0x8000 ? -v : v;
}

/* 64 sampled outputs against a float64 reference: relative norm error under
 * 1e-2 (16-bit output rounding is 4e-3), none NaN or left unwritten. */
static void check(const dtype *t, const void *ha, const void *hb, const void *dd, long m, long n, long k)
{
    static const dtype out16[] = {{"bf16", CUDA_R_16BF, CUDA_R_16BF, 2}, {"fp16", CUDA_R_16F, CUDA_R_16F, 2}};
    const dtype *to = t->out == CUDA_R_16BF ? &out16[0] : &out16[1];
    double num = 0, den = 0;
    for (int s = 0; s < 64; s++) {
        long i = (long)(rnd() % (uint32_t)m), j = (long)(rnd() % (uint32_t)n);
        uint16_t got;
        CU(cudaMemcpy(&got, (const uint16_t *)dd + i + j * m, 2, cudaMemcpyDeviceToHost));
        double ref = 0, g = val(to, &got, 0);
        for (long kk = 0; kk < k; kk++) ref += val(t, ha, kk + i * k) * val(t, hb, kk + j * k);
        if (!isfinite(g)) die("check", "an output is NaN or unwritten");
        num += (g - ref) * (g - ref), den += ref * ref;
    }
    if (den > 0 && sqrt(num / den) > 1e-2) {
        char b[64];
        snprintf(b, sizeof b, "relative error %.3g against float64", sqrt(num / den));
        die("check", b);
    }
}

static double time_gemm(cublasLtHandle_t lt, const dtype *t, long m, long n, long k, int reps, void *work)
{
    size_t ea = (size_t)k * m, eb = (size_t)k * n, ed = (size_t)m * n;
    size_t bytes = (ea + eb) * t->size + ed * 2;
    int sets = (int)ceil(L2_FLUSH / (double)bytes);
    if (sets < 1) sets = 1;
    if (sets > MAX_SETS) sets = MAX_SETS;
    void *A[MAX_SETS], *B[MAX_SETS], *D[MAX_SETS];
    void *ha = malloc(ea * t->size), *hb = malloc(eb * t->size); /* set 0's operands, for the check */
    if (!ha || !hb) die("malloc", "out of memory");
    for (int s = 0; s < sets; s++) {
        CU(cudaMalloc(&A[s], ea * t->size));
        CU(cudaMalloc(&B[s], eb * t->size));
        CU(cudaMalloc(&D[s], ed * 2));
        fill(ha, ea, t);
        CU(cudaMemcpy(A[s], ha, ea * t->size, cudaMemcpyHostToDevice));
        fill(hb, eb, t);
        CU(cudaMemcpy(B[s], hb, eb * t->size, cudaMemcpyHostToDevice));
        CU(cudaMemset(D[s], 0xff, ed * 2)); /* poison: NaN in bf16 and fp16 */
    }

    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (t->size == 1) { /* TE: fast accumulation in fprop, split (exact) accumulation in dgrad/wgrad */
        int8_t fast = (int8_t)fp8_fast;
        LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    LT(cublasLtMatrixLayoutCreate(&la, t->in, k, m, k));
    LT(cublasLtMatrixLayoutCreate(&lb, t->in, k, n, k));
    LT(cublasLtMatrixLayoutCreate(&ld, t->out, m, n, m));
    cublasLtMatmulPreference_t pref;
    size_t ws = WORKSPACE;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t hr;
    int found = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &hr, &found));
    if (found < 1) die("cublasLtMatmulAlgoGetHeuristic", "no algorithm for this shape");

    float alpha = 1, beta = 0;
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    for (int w = 0; w < 3 * sets; w++) /* warm-up: module load, heuristics, clocks */
        LT(cublasLtMatmul(lt, op, &alpha, A[w % sets], la, B[w % sets], lb, &beta, D[w % sets], ld, D[w % sets],
                          ld, &hr.algo, work, WORKSPACE, 0));
    CU(cudaDeviceSynchronize());
    /* --sustain: hold the card under this GEMM until its clock settles (power
     * and thermal limits), as a training step does, then time */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (double el = 0; el < sustain;) {
        for (int w = 0; w < 20; w++)
            LT(cublasLtMatmul(lt, op, &alpha, A[w % sets], la, B[w % sets], lb, &beta, D[w % sets], ld, D[w % sets],
                              ld, &hr.algo, work, WORKSPACE, 0));
        CU(cudaDeviceSynchronize());
        clock_gettime(CLOCK_MONOTONIC, &t1);
        el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    float *ms = malloc(reps * sizeof *ms);
    if (!ms) die("malloc", "out of memory");
    for (int r = 0; r < reps; r++) {
        int s = r % sets;
        CU(cudaEventRecord(e0, 0));
        LT(cublasLtMatmul(lt, op, &alpha, A[s], la, B[s], lb, &beta, D[s], ld, D[s], ld, &hr.algo, work,
                          WORKSPACE, 0));
        CU(cudaEventRecord(e1, 0));
        CU(cudaEventSynchronize(e1));
        CU(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    CU(cudaGetLastError());
    check(t, ha, hb, D[sets - 1], m, n, k); /* ha, hb hold the last set */
    free(ha);
    free(hb);
    qsort(ms, reps, sizeof *ms, cmp_f);
    double med = ms[reps / 2] * 1e-3;
    free(ms);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
    for (int s = 0; s < sets; s++) cudaFree(A[s]), cudaFree(B[s]), cudaFree(D[s]);
    return med;
}

/* Device-to-device copy of 2 GiB, bytes read + written per second. */
static double hbm_bw(void)
{
    size_t n = (size_t)2 << 30;
    void *a, *b;
    CU(cudaMalloc(&a, n));
    CU(cudaMalloc(&b, n));
    CU(cudaMemset(a, 1, n));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    CU(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
    float best = 1e30f;
    for (int r = 0; r < 10; r++) {
        float ms;
        CU(cudaEventRecord(e0, 0));
        CU(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0));
        CU(cudaEventRecord(e1, 0));
        CU(cudaEventSynchronize(e1));
        CU(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    cudaFree(a), cudaFree(b);
    return 2.0 * n / (best * 1e-3);
}

int main(int argc, char **argv)
{
    const char *dts = "bf16,fp8", *shapes = NULL, *out = NULL;
    long lo = 1024, hi = 16384;
    int reps = 50;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage, stdout); return 0; }
        if (!strcmp(a, "--fp8-fast")) { fp8_fast = 1; continue; }
        if (!strcmp(a, "--sustain") && v) {
            sustain = atof(v);
            if (!(sustain >= 0 && sustain < 600)) {
                fprintf(stderr, "trainsim-gemm: --sustain wants seconds in [0, 600), not '%s'\n", v);
                return 2;
            }
            i++;
            continue;
        }
        if (!v) { fprintf(stderr, "trainsim-gemm: %s wants a value\n%s", a, usage); return 2; }
        if (!strcmp(a, "--dtype")) dts = v;
        else if (!strcmp(a, "--shapes")) shapes = v;
        else if (!strcmp(a, "--square")) {
            if (sscanf(v, "%ld:%ld", &lo, &hi) != 2 || lo < 1 || hi < lo) {
                fprintf(stderr, "trainsim-gemm: --square wants LO:HI, not '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--reps")) {
            reps = atoi(v);
            if (reps < 1) { fprintf(stderr, "trainsim-gemm: --reps wants a positive count, not '%s'\n", v); return 2; }
        } else if (!strcmp(a, "-o")) out = v;
        else { fprintf(stderr, "trainsim-gemm: unknown option '%s'\n%s", a, usage); return 2; }
        i++;
    }
    char check[64]; /* the dtype list, checked before any GPU call */
    if (snprintf(check, sizeof check, "%s", dts) >= (int)sizeof check) {
        fprintf(stderr, "trainsim-gemm: --dtype '%s' too long (bf16, fp16, fp8, comma-separated)\n", dts);
        return 2;
    }
    for (char *d = strtok(check, ","); d; d = strtok(NULL, ",")) {
        size_t i = 0;
        while (i < sizeof dtypes / sizeof *dtypes && strcmp(d, dtypes[i].name)) i++;
        if (i == sizeof dtypes / sizeof *dtypes) {
            fprintf(stderr, "trainsim-gemm: unknown dtype '%s' (bf16, fp16, fp8)\n", d);
            return 2;
        }
    }
    long (*sh)[3] = malloc(4096 * sizeof *sh);
    int ns = 0;
    if (!sh) die("malloc", "out of memory");
    if (shapes) {
        FILE *f = fopen(shapes, "r");
        if (!f) { fprintf(stderr, "trainsim-gemm: %s: cannot open\n", shapes); return 2; }
        char line[256];
        for (int ln = 1; fgets(line, sizeof line, f); ln++) {
            if (line[0] == '#' || line[0] == '\n') continue;
            if (ns == 4096 || sscanf(line, "%ld,%ld,%ld", &sh[ns][0], &sh[ns][1], &sh[ns][2]) != 3 ||
                sh[ns][0] < 1 || sh[ns][1] < 1 || sh[ns][2] < 1) {
                fprintf(stderr, "trainsim-gemm: %s:%d: want m,n,k (positive), got '%.*s'\n", shapes, ln,
                        (int)strcspn(line, "\n"), line);
                return 2;
            }
            ns++;
        }
        fclose(f);
    } else
        for (long s = lo; s <= hi && ns < 4096; s *= 2) sh[ns][0] = sh[ns][1] = sh[ns][2] = s, ns++;

    FILE *o = out ? fopen(out, "w") : stdout;
    if (!o) { fprintf(stderr, "trainsim-gemm: %s: cannot write\n", out); return 2; }
    struct cudaDeviceProp p;
    CU(cudaGetDeviceProperties(&p, 0));
    int rt, drv, ltv = (int)cublasLtGetVersion();
    CU(cudaRuntimeGetVersion(&rt));
    CU(cudaDriverGetVersion(&drv));
    fprintf(o, "# trainsim-gemm on %s, %d SMs, CUDA runtime %d, driver %d, cuBLASLt %d\n", p.name,
            p.multiProcessorCount, rt, drv, ltv);
    fprintf(o, "# hbm copy %.1f GB/s (read + write)\n", hbm_bw() / 1e9);
    fprintf(o, "m,n,k,dtype,seconds\n");
    cublasLtHandle_t lt;
    LT(cublasLtCreate(&lt));
    void *work;
    CU(cudaMalloc(&work, WORKSPACE));
    char list[64];
    snprintf(list, sizeof list, "%s", dts);
    for (char *d = strtok(list, ","); d; d = strtok(NULL, ",")) {
        const dtype *t = NULL;
        for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
            if (!strcmp(d, dtypes[i].name)) t = &dtypes[i];
        if (!t) { fprintf(stderr, "trainsim-gemm: unknown dtype '%s' (bf16, fp16, fp8)\n", d); return 2; }
        for (int i = 0; i < ns; i++) {
            double s = time_gemm(lt, t, sh[i][0], sh[i][1], sh[i][2], reps, work);
            fprintf(o, "%ld,%ld,%ld,%s,%.9g\n", sh[i][0], sh[i][1], sh[i][2], t->name, s);
            fprintf(stderr, "%6ld %6ld %6ld %-4s %10.3f us %8.1f TFLOP/s\n", sh[i][0], sh[i][1], sh[i][2], t->name,
                    s * 1e6, 2.0 * sh[i][0] * sh[i][1] * sh[i][2] / s / 1e12);
            fflush(o);
        }
    }
    cudaFree(work);
    cublasLtDestroy(lt);
    if (o != stdout) fclose(o);
    free(sh);
    return 0;
}
