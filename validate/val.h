/* Validation mode: measurements of collectives (parsed from nccl-tests,
 * rccl-tests and OSU outputs, or produced by trainsim-bench) and their fits. */
#ifndef TS_VAL_H
#define TS_VAL_H

#include <stdint.h>
#include <stdio.h>

#include "coll.h"
#include "coll_params.h"
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
    int gpus_per_proc;      /* GPUs one thread drives (nccl-tests' "nGpus" header); 0: not printed */
    int proxy_bound;        /* 1: a comment line before the table names Slurm's --gpu-bind=closest (each
                             * rank's host threads next to its GPU); 0: unbound or not printed */
    /* The NCCL settings the run was made with (coll_nccl_env): read before
     * its first row from "NCCL INFO NCCL_X set by environment to V" lines
     * (NCCL_DEBUG=INFO), mpirun's "-x NCCL_X=V" and a shell's "NCCL_X=V cmd"
     * or "export NCCL_X=V" on a launch line, and "# ENV: NCCL_X=V ..."
     * header lines (docs/accuracy.md, "Header lines"); a later setting of the
     * same variable wins. env_line: the first line that gave one (0: none). */
    coll_nccl_env env;
    int env_line;
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

typedef enum { VAL_INTRA, VAL_INTER } val_scope;
const char *val_scope_name(int scope);

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
    struct val_memo *memo;  /* val_sweep_memo: the times of (parameters, size) already run, or NULL */
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
/* Remember every point val_sweep_size runs, keyed on the size and the
 * collective model's parameters (coll_params_get, compared whole), and
 * answer a repeated one from the memo: a calibration fit evaluates the same
 * parameters at the same sizes many times (each IRLS round's first
 * evaluation, the acceptance test's start and end, the cross-validation
 * folds' common start). Only for a sweep whose hosts, placement, policy and
 * GPUs per process no longer change. Exact: a point is answered from the
 * memo only while the engine's clock has not moved since the memo began (a
 * collective alone solved without SimGrid's actors leaves it where it is;
 * one that ran SimGrid could round another run's times differently, and
 * from then on every point runs again). on = 0 frees it. */
void val_sweep_memo(val_sweep *s, int on);
/* Switch val_sweep_memo off in this process (for the test that compares). */
void val_memo_disable(int off);

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

/* Run fn in a forked child (its own SimGrid, its own platform): fn fills out
 * (outlen bytes), which comes back here; its error message comes back in err. */
typedef int (*val_child_fn)(void *ctx, void *out, size_t outlen, char *err, size_t errlen);
int val_fork(val_child_fn fn, void *ctx, void *out, size_t outlen, char *err, size_t errlen);
/* The same in two halves, so that several children run at once: start
 * forks (fn runs in the child), finish waits for the child's answer. A
 * started child must be finished (it blocks writing until read). */
typedef struct val_child {
    int pid, fd;    /* -1: none */
} val_child;
int val_fork_start(val_child_fn fn, void *ctx, void *out, size_t outlen, val_child *ch, char *err, size_t errlen);
int val_fork_finish(val_child *ch, void *out, size_t outlen, char *err, size_t errlen);

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


/* Median and p-th percentile (p in 0..1, nearest rank) of |v|. */
double val_abs_quantile(const double *v, int n, double p);

/* ---- Bounded fits of named model terms (val_terms.c) ---- */

/* A term the fit may move: *value starts inside [lo, hi] and ends there.
 * With sd > 0 the fit is pulled toward prior (the value the cluster documents)
 * by a pseudo-residual (ln(v / prior) / sd when lo > 0, else (v - prior) / sd):
 * weak beside the points (docs/validation.md), it decides only a term the
 * points leave undecided (a latency hidden under the launch floor, a
 * bandwidth and a latency that two points trade against each other). */
#define VAL_MAX_TERMS 24
typedef struct val_term {
    const char *name;       /* as reported ("nvlink.bw", "ring.simple.base_lat", ...) */
    double *value;
    double lo, hi;          /* lo >= 0; lo > 0: searched on a log scale */
    double prior, sd;       /* sd 0: no pull */
} val_term;

/* The loss of the term fits: pseudo-Huber on the log residuals with this
 * scale (quadratic within it, absolute beyond: a median-like fit that a few
 * rows the model cannot follow, such as RCCL stalls of hundreds of ms, pull
 * with a bounded force instead of the square of their error). nccl-tests'
 * run-to-run spread of one size is of this order. */
#define VAL_LOSS_SCALE 0.02
/* A prior weighs as much as this fraction of one point, with the same loss
 * (its distance in sd as the residual): a tie-breaker, never a rival of the
 * points (docs/validation.md). */
#define VAL_PRIOR_WEIGHT 0.05

/* Predict the npts measured times (s) with the terms at their current values. */
typedef int (*val_model_fn)(void *ctx, double *pred, int npts, char *err, size_t errlen);

typedef struct val_terms_fit {
    double rms_rel, median_abs_rel, max_abs_rel;  /* relative residuals at the fit */
    int iterations, rounds, outliers;             /* outliers: points beyond 4.685 x the
                                                     residuals' robust spread (MAD), floored at 10% */
    int at_bound[VAL_MAX_TERMS];                  /* -1 lower, 1 upper, 0 inside */
    int nat_bound;
    int kept_start;                               /* the cluster's figures kept: no fit beat them */
    int restarted;                                /* kept the fit without the sizes the cluster's figures
                                                     miss by far (lower median |error| than the first) */
    double start_median_abs_rel;                  /* median |relative error| of the cluster's figures */
} val_terms_fit;

/* GSL nonlinear least squares of the log residuals log(model / t) over the
 * terms with the pseudo-Huber loss of scale VAL_LOSS_SCALE (iteratively
 * reweighted least squares: weight 1 / sqrt(1 + (r / scale)^2)) and the
 * terms' priors; once settled, the outliers (see val_terms_fit) get weight 0
 * and it settles again, unless no more points than terms would stay; then
 * only the points a factor 10 off (stalls) go, while they are a minority
 * (the terms the rest leave undecided are held by their priors). The figures reported are relative, (model - t) / t,
 * over every point. Each term is kept inside its bounds by a logistic
 * transformation (never clamped; a term a round leaves at a bound is
 * restarted inside it, and reported if it goes back). On success the terms
 * hold the fit; on failure their start values and -1 with err. */
int val_fit_terms(val_term *terms, int nterms, const double *meas, int npts, val_model_fn fn, void *ctx,
                  val_terms_fit *out, char *err, size_t errlen);
/* "term X = v is at its lower bound lo; ..." for the terms at a bound, in
 * buf; returns how many. */
int val_terms_bound_note(const val_term *terms, int nterms, const val_terms_fit *f, char *buf, size_t n);

/* ---- Cross-validated calibration of one measured sweep (val_xval.c) ---- */
#define VAL_NOTE 1024
typedef struct val_xval_in {
    const char *cluster;    /* name or JSON */
    int nodes;              /* 0: the cluster's own count */
    const char *calib;      /* calibration JSON applied to the cluster first, or NULL */
    int sgc;
    char **sgv;             /* SimGrid's own options */
    og_coll op;
    int n;                  /* ranks */
    const char *algo;       /* "algo[:proto]" or NULL: the selection */
    const int64_t *sizes;
    const double *meas;     /* measured times (s) */
    int npts;
} val_xval_in;

/* In a child that loads the cluster: unc = the uncalibrated prediction of
 * every size (pipelined fidelity, as `trainsim coll`), cal = the calibrated
 * one, cross-validated: the terms (the run's scope's bandwidth factor and a
 * base latency per algorithm and protocol the selection runs) are fitted on
 * the even-indexed sizes to predict the odd ones and the other way round
 * (at the same fidelity). note: the terms fitted on every size, and the ones
 * that ended at a bound (VAL_NOTE bytes). */
typedef struct val_xval_out {
    double *unc, *cal;      /* [npts]: uncalibrated, cross-validated calibrated (s) */
    double *fit;            /* [npts] or NULL: the fit on every size, in sample (s) */
    int *fam, *proto;       /* [npts] or NULL: the selection's family and protocol per size */
    char note[VAL_NOTE];    /* the terms fitted on every size, and those at a bound */
} val_xval_out;
int val_xval(const val_xval_in *in, val_xval_out *out, char *err, size_t errlen);
/* The same in two halves (val_fork_start): start forks the child and
 * returns, finish waits for its answer and fills out. */
typedef struct val_xval_job {
    val_child ch;
    char *buf;
    int npts;
} val_xval_job;
int val_xval_start(const val_xval_in *in, val_xval_job *job, char *err, size_t errlen);
int val_xval_finish(val_xval_job *job, val_xval_out *out, char *err, size_t errlen);

/* A joint calibration fit over several measured runs of one loaded cluster:
 * each run's open sweep (at the fidelity its predictions use) and the points
 * idx[0..nidx) of its sizes/meas that the fit sees. */
typedef struct val_cal_run {
    val_sweep *sw;
    const int64_t *sizes;
    const double *meas;     /* seconds */
    int npts;
    const int *idx;
    int nidx;
    int scope;              /* VAL_INTRA or VAL_INTER: whose bandwidth term it moves */
} val_cal_run;

/* Bounds of the terms (docs/validation.md): an achievable bandwidth fraction
 * 0.01 to 1.5 of nominal (as coll_params takes it), a latency per step up to
 * 100 us, a base latency per call up to 1 ms. */
#define VAL_FRAC_LO 0.01
#define VAL_FRAC_HI 1.5
#define VAL_HOP_HI 100e-6
#define VAL_BASE_HI 1e-3
/* The priors' spreads (val_term.sd): a bandwidth factor in ln units (0.5: a
 * factor 1.65 from the cluster's figure), a latency its bound's span. */
#define VAL_PRIOR_SD_BW 0.5

/* A fitted term's place in coll_params: bw_frac[tier], base_lat[fam][proto],
 * hop_lat[tier][fam][proto] or proto_bw[fam][proto]. */
typedef enum { VAL_T_BWFRAC, VAL_T_BASE, VAL_T_HOP, VAL_T_PBW } val_term_kind;
typedef struct val_term_at {
    val_term_kind kind;
    int tier, fam, proto, scope;
} val_term_at;

typedef struct val_cal_set {
    val_cal_run *runs;
    int nruns;
    double bw_eff[2];       /* per scope: the fitted factor on its tier's bandwidth fraction */
    coll_params base;       /* the cluster's parameters before the fit (val_cal_init) */
    coll_params cur;        /* the fit's: made active while it predicts */
    val_term terms[VAL_MAX_TERMS];
    val_term_at at[VAL_MAX_TERMS];
    char names[VAL_MAX_TERMS][48]; /* "bw_frac.nvlink", "base_lat.ring.simple", "hop_lat.nic.tree.ll",
                                      "proto_bw.ring.ll128" */
    int nterms;
    val_terms_fit fit;
} val_cal_set;

/* Start a set on runs whose sweeps are open on the loaded cluster (its
 * parameters active). */
void val_cal_init(val_cal_set *cs, val_cal_run *runs, int nruns);
/* Make the fit's parameters active for predictions of run (its scope's
 * bandwidth factor applied: see val_xval.c). */
void val_cal_use(const val_cal_set *cs, const val_cal_run *run);
/* The value term t stands for (a bandwidth factor as the fraction it gives). */
double val_cal_value(const val_cal_set *cs, int t);
/* The fitted terms as a calibration's "collectives" object (coll_params
 * overlay schema), indented by indent spaces. */
void val_cal_json(FILE *f, const val_cal_set *cs, int indent);

/* Fit the terms to every run's fitted points: per scope present, the
 * achievable bandwidth fraction of its tier (shared by every algorithm); per
 * algorithm family and protocol the selection runs at the fitted sizes, its
 * base latency and, with fit_lat (unless there are fewer points than terms),
 * its latency per step on the scope's tier; where the points run several
 * families or protocols, the useful bytes per wire byte (proto_bw) of each
 * but the reference one (the Simple protocol with the most points), whose
 * bandwidth the tier's fraction carries. The parameters stay active. */
int val_cal_fit(val_cal_set *cs, int fit_lat, char *err, size_t errlen);
/* Predict run's points idx[0..n) with the parameters active (val_cal_use). */
int val_cal_predict(const val_cal_run *run, const int *idx, int n, double *out, char *err, size_t errlen);
/* "name value, ..." and the terms at a bound, by name. */
void val_cal_note(const val_cal_set *cs, char *note, size_t notelen);



/* ---- What a measurement's harness adds per call (val_harness.c) ---- */

/* How a measured sweep was timed (the accuracy manifest's `timing`):
 * - VAL_TIMING_LIB: the library's own benchmark (nccl-tests, rccl-tests,
 *   OSU): the library's time.
 * - VAL_TIMING_TORCH: torch.distributed calls timed with CUDA/HIP events
 *   around each call (the PCCL reproducer's reduce_scatter harness): PyTorch's
 *   per-call cost on the GPU stream, VAL_TORCH_CALL_S. ProcessGroupNCCL runs the
 *   collective on its own stream after waiting on an event of the caller's,
 *   and the caller's stream then waits on its end: two cross-stream waits in
 *   series. Fitted on the one such file with no network in it
 *   (frontier_1n_reduce_scatter: measured - predicted 59-66 us at every size
 *   from 1 to 32 MiB).
 * - VAL_TIMING_TORCH_CAT: as torch, by the PCCL reproducer's all_gather
 *   harness (benchmark_all_gather.py @5a6353f, whose output format the
 *   Frontier all_gather files have), which builds the output inside the timed
 *   region, `torch.cat([torch.empty_like(msg) for _ in range(world_size)])`,
 *   before all_gather_into_tensor: one caching-allocator call per rank and the
 *   cat's per-input host work while the stream waits (the start event is
 *   already recorded on an idle stream: VAL_TORCH_RANK_S per rank), and the
 *   cat kernel, which reads every input and writes the output (2 x the output
 *   bytes at the GPU's streaming HBM rate, its spec's hbm_achieved).
 *   VAL_TORCH_RANK_S: the all_gather - reduce_scatter gap of the same Frontier
 *   runs where neither stalls (385 us on 64 ranks at 1 MiB, 387 and 578 us on
 *   128 at 2 and 4 MiB: 3-6 us per rank; one node: ~45 us on 8 ranks). */
enum { VAL_TIMING_LIB = 0, VAL_TIMING_TORCH = 1, VAL_TIMING_TORCH_CAT = 2 };
#define VAL_TORCH_CALL_S 60e-6
#define VAL_TORCH_RANK_S 5e-6

/* "lib", "torch", "torch-cat" -> VAL_TIMING_*; -1 empty or NULL; -2 unknown. */
int val_timing_parse(const char *s);
const char *val_timing_name(int timing);

/* Seconds the harness adds to one call of a collective on nranks ranks whose
 * output is out_bytes (an all_gather's full buffer), the GPU streaming its HBM
 * at hbm_eff bytes/s; 0 for VAL_TIMING_LIB. */
double val_harness_cost(int timing, int nranks, double out_bytes, double hbm_eff);

/* The streaming HBM rate (hbm_achieved) of cluster's GPU spec. */
int val_harness_hbm(const char *cluster, double *hbm_eff, char *err, size_t errlen);

#endif
