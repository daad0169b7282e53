/* Validation mode: measurements of collectives (parsed from nccl-tests,
 * rccl-tests and OSU outputs, or produced by trainsim-bench) and their fits. */
#ifndef TS_VAL_H
#define TS_VAL_H

#include <stdint.h>
#include <stdio.h>

#include "opgraph.h"

/* What a run measured: one of og_coll's collectives, or VAL_P2P (osu_latency,
 * osu_bw, nccl-tests' sendrecv: two ranks, busbw = algbw). */
#define VAL_P2P OG_NCOLLS
#define VAL_UNKNOWN (-1)

typedef enum { VAL_FMT_NCCL, VAL_FMT_OSU } val_format;

/* One size. Times in microseconds, bandwidths in GB/s (1e9 bytes/s) as the
 * tools print them; NaN where the tool printed nothing. wrong: -1 = N/A. */
typedef struct val_row {
    int64_t size, count;
    double time_us, algbw, busbw;       /* out-of-place (OSU: the only figure) */
    double ip_time_us, ip_algbw, ip_busbw;
    long wrong, ip_wrong;
    int line;
} val_row;

/* One run (one table) of a file. */
typedef struct val_run {
    int coll;               /* og_coll, VAL_P2P or VAL_UNKNOWN */
    int nranks;             /* 0 when the output does not say */
    int nhosts;             /* distinct host names of the "# Rank N ... on HOST" lines; 0: not printed */
    int ppn;                /* ranks per host when every host has as many, else 0 */
    val_format fmt;
    char tool[32];          /* "nccl-tests", "osu_allreduce", ... */
    int complete;           /* the closing lines were seen */
    int first_line;
    val_row *rows;
    int nrows;
    size_t cap;
} val_run;

typedef struct val_file {
    char path[512];
    val_run *runs;
    int nruns;
    size_t cap;
    int nskipped;           /* lines that are not part of a table (prompts, launcher lines, warnings) */
} val_file;

/* How to parse: coll is the collective of tables whose output names none
 * (the user's --op; VAL_UNKNOWN: none); explain, when not NULL, receives one
 * line per parse decision (where each run's collective, rank count and scope
 * came from, each skipped line). */
typedef struct val_parse_opts {
    int coll;
    FILE *explain;
} val_parse_opts;

/* Parse a measurement file (format detected from its content). The collective
 * comes from the output ("Collective test starting: all_reduce_perf", OSU's
 * title), else from a binary name on a command line (all_reduce_perf), else
 * the options' coll, else the file name; the rank count from the "# Rank"
 * lines, else busbw/algbw of the largest rows (OSU point-to-point: 2); the
 * hosts from the "# Rank" lines. Lines that are not part of a table (shell
 * prompts, launcher lines, warnings) are skipped and counted; mpirun's
 * "[1,0]<stdout>:" and srun's "0: " prefixes are dropped. Returns 0, or -1
 * with "path:line: what is wrong" in err; never crashes on bad input. */
int val_parse_file(const char *path, val_file *out, char *err, size_t errlen);
int val_parse_stream(FILE *f, const char *name, val_file *out, char *err, size_t errlen);
int val_parse_file_opts(const char *path, const val_parse_opts *o, val_file *out, char *err, size_t errlen);
int val_parse_stream_opts(FILE *f, const char *name, const val_parse_opts *o, val_file *out, char *err,
                          size_t errlen);
void val_file_free(val_file *f);

/* Give a run its rank count (OSU outputs and broadcast/reduce logs do not
 * tell it): busbw follows, and OSU's per-rank (all-gather) and per-peer
 * (all-to-all) message sizes become nccl-tests' sizes (n times larger, same
 * time, so algbw n times larger). */
void val_run_set_ranks(val_run *r, int n);

/* The rows of r usable for fits: nonzero sizes with a time (repeated sizes:
 * the first), within [minb, maxb], and with half = 1 (2) only the even (odd)
 * ones of those in order. Writes sizes and out-of-place times (s) into
 * arrays of r->nrows entries; returns the count. */
int val_run_select(const val_run *r, int64_t minb, int64_t maxb, int half, int64_t *sizes, double *times);

/* Names: nccl-tests' ("all_reduce", ...; "sendrecv" for VAL_P2P). */
const char *val_coll_name(int coll);
/* Accepts all_reduce, allreduce, all-reduce, AllReduce, bcast, sendrecv, ... */
int val_coll_from_name(const char *s);
/* nccl-tests' busbw factor (VAL_P2P: 1). */
double val_busbw_factor(int coll, int n);


/* ---- nccl-tests' table (val_table.c): shared by `trainsim coll`, compare
 * and trainsim-bench so that simulated and measured logs diff. ---- */

/* nccl-tests' size syntax: an integer with an optional K, M or G (powers of
 * 1024); -1 when malformed or above OG_MAX_BYTES. */
int val_parse_size(const char *s, int64_t *out);

/* The time column of nccl-tests 2.17: two decimals below 10 ms, then one, then none. */
void val_fmt_time(char *buf, size_t n, double us);
/* "sum" for the reducing collectives, else "none"; -1 root unless rooted. */
const char *val_redop(int coll);
int val_rooted(int coll);
/* Counts are per rank for all-gather, reduce-scatter and all-to-all. */
int val_per_rank_count(int coll);
/* nccl-tests (2.14 on) rounds a size down to whole elements, and per-rank
 * counts down to 16 bytes' worth of elements: *count and the rounded size. */
int64_t val_nccl_size(int coll, int n, int64_t size, int elsize, int64_t *count);
/* The column header lines ("#  size count type ...", units). */
void val_table_header(FILE *f);
/* One row: out-of-place then in-place time (us), algbw, busbw, #wrong (-1: N/A). */
void val_table_row(FILE *f, int64_t size, int64_t count, const char *type, int coll, int root, double t_oop_us,
                   double t_ip_us, double busfactor, long wrong_oop, long wrong_ip);

/* ---- Simulated sweeps (val_sweep.c): one collective per size through the
 * engine, as `trainsim coll` runs it. The platform must be loaded. ---- */
typedef enum { VAL_FID_STEP, VAL_FID_PIPELINED, VAL_FID_ANALYTICAL } val_fidelity;

typedef struct val_sweep {
    og_coll op;
    int n, root, fidelity;
    og_dtype dtype;
    char forced[96];        /* "algo[:proto]" or "" (automatic) */
    char **hosts;           /* the platform's hosts (the first n are used) */
    int nhosts;
    int placed;             /* val_sweep_place reordered hosts: name them in the graph */
    struct coll_topo *topo;
    const struct coll_policy *policy; /* without forced: the selection (NULL: automatic); set after open */
} val_sweep;

typedef struct val_point {
    int64_t size;
    double time;            /* seconds */
    int algo;
    int proto;
    int nsteps;
} val_point;

/* n = 0: every host. Fails on a bad algorithm, group or root. */
int val_sweep_open(val_sweep *s, og_coll op, int n, int root, og_dtype dtype, int fidelity, const char *forced,
                   char *err, size_t errlen);
/* Place the n ranks ppn per node, as the measurement ran them (ppn 0: the
 * first n hosts); fails when a node has fewer GPUs or there are too few nodes. */
int val_sweep_place(val_sweep *s, int ppn, char *err, size_t errlen);
int val_sweep_size(val_sweep *s, int64_t bytes, val_point *out, char *err, size_t errlen);
void val_sweep_close(val_sweep *s);

/* The same sweep in a forked child that initialises SimGrid and loads the
 * cluster (with calibration calib, or NULL) itself, so that one process can
 * simulate several calibrations (SimGrid loads one platform per process).
 * sgv/sgc: SimGrid's own options. Fills times (s) for the npts sizes, the
 * scope (VAL_INTRA/VAL_INTER: whether the n ranks span several nodes), the
 * algorithm and step count of the last size. The caller must not have loaded
 * a platform before (the child inherits it). */
typedef struct val_child_out {
    int scope, algo, nsteps;
} val_child_out;
int val_sweep_child(const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                    const char *algo, int fidelity, const int64_t *sizes, int npts, double *times, val_child_out *out,
                    char *err, size_t errlen);
/* The same with the ranks placed ppn per node (val_sweep_place). */
int val_sweep_child_ppn(const char *cluster, int nodes, const char *calib, int sgc, char **sgv, og_coll op, int n,
                        int ppn, const char *algo, int fidelity, const int64_t *sizes, int npts, double *times,
                        val_child_out *out, char *err, size_t errlen);

/* ---- Fits (val_fit.c) ---- */

/* A robust alpha-beta fit t(x) = alpha + x / beta of times t (s) against bus
 * bytes x (size x nccl-tests' busbw factor, so beta is the asymptotic busbw in
 * bytes/s): GSL nonlinear least squares on relative residuals, parameters in
 * log space (both stay positive), iteratively reweighted with Tukey's
 * bisquare (c = 4.685 x the residuals' MAD scale) so outliers get weight 0. */
typedef struct val_fit {
    double alpha, beta;
    int n, outliers, rounds;
    double rms_rel, median_abs_rel, max_abs_rel; /* relative residuals (model - t) / t, weighted points */
    double *resid, *weight;                      /* per point (caller frees with val_fit_free) */
} val_fit;
int val_fit_ab(const double *x, const double *t, int n, val_fit *out, char *err, size_t errlen);
void val_fit_free(val_fit *f);

/* A bandwidth-efficiency curve: at each size, the alpha-beta model's time over
 * the measured one (1 = the model is exact, < 1 = slower than the model),
 * median-smoothed over 3 neighbours; between sizes interpolated linearly in
 * log2(size), clamped to the end values outside. */
typedef struct val_curve {
    int n;
    double *size, *eff;
} val_curve;
void val_curve_build(val_curve *c, const double *size, const double *model_t, const double *meas_t, int n);
double val_curve_at(const val_curve *c, double size);
void val_curve_free(val_curve *c);

/* Median and p-th percentile (p in 0..1, nearest rank) of |v|. */
double val_abs_quantile(const double *v, int n, double p);

/* ---- Calibration JSON (val_calib.c; fields in docs/validation.md) ---- */
typedef enum { VAL_INTRA, VAL_INTER } val_scope;
const char *val_scope_name(int scope);

/* Find the entry of "collectives" for coll and scope in a calibration file:
 * 1 and its curve (caller frees), 0 when absent, -1 on a bad file. */
int val_calib_curve(const char *path, int coll, int scope, val_curve *out, char *err, size_t errlen);

#endif
