/* `trainsim accuracy`: predict every measurement the project ships and report
 * the error per file, uncalibrated and calibrated, against committed thresholds.
 *
 * The report is made of parts, one table row each in `parts` below: {name,
 * description, fn}. A part's fn appends one acc_row per measured file (or
 * table) with acc_add: a name unique within the part, what it measures, the
 * point count and the median and p90 |relative error| of time, uncalibrated
 * and calibrated (NAN where a part has no calibrated figure), their mean
 * (MAPE) and, for a table that compares schemes, Spearman's rank correlation
 * of measured and predicted (NAN otherwise). It returns 0, or
 * -1 with a message in err (a missing input is not an error: say it with
 * acc_skip and go on). Thresholds (--thresholds) name rows as PART,NAME. */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "coll.h"
#include "coll_params.h"
#include "util.h"
#include "val.h"
#include "val_train.h"

static const char accuracy_help[] =
    "usage: trainsim accuracy [--part P] [--thresholds F] [--csv F] [--svg F] [options]\n\n"
    "Predict every measured file the project ships and print per file the median\n"
    "and p90 |error| (and their mean, MAPE) of time, uncalibrated (the shipped cluster as is) and\n"
    "calibrated (cross-validated: the calibration terms fitted on every other\n"
    "size predict the sizes they did not see). Part train predicts published\n"
    "training runs (TFLOP/s per GPU) row by row, per table MAPE and Spearman.\n"
    "Files listed in the manifest\n"
    "that are absent (../shared) are skipped with a message. With --thresholds,\n"
    "a figure above its threshold fails the report (exit 1) naming the file.\n"
    "docs/accuracy.md tells how to read it and how to move a threshold.\n\n"
    "options:\n"
    "  --part P           run only part P (coll, train)\n"
    "  --manifest F       the coll part's list of files (default tests/accuracy/coll.csv)\n"
    "  --training DIR     the train part's published runs (default configs/measurements/training)\n"
    "  --thresholds F     CSV part,name,metric,max_pct; metric: uncal_median, uncal_p90,\n"
    "                     cal_median, cal_p90, mape\n"
    "  --write-thresholds F  write thresholds just above this run's figures (x1.05 + 0.5\n"
    "                     points): how a threshold moves on purpose (docs/accuracy.md)\n"
    "  --calibration F    apply a calibration JSON to every cluster first\n"
    "  --csv F            the table as CSV;  --svg F: a bar chart of the median errors\n"
    "  --detail           coll: every size's measured, uncalibrated, fitted (in sample) and\n"
    "                     cross-validated time, with the selection's algorithm and protocol\n"
    "  --jobs N           coll: predict up to N files at once, each in its own process, and\n"
    "                     above 1 the train part beside them (default: the processors online,\n"
    "                     at most 8); the report is the same at any N\n"
    "  --no-memo          coll: run every model evaluation of the fits, none answered from\n"
    "                     the memo of repeated ones (the same report, slower: for checking it)\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 a threshold crossed or a prediction failed, 2 bad input.\n";

typedef struct acc_row {
    char part[16], name[96], what[320];
    int npts;
    double unc_med, unc_p90, cal_med, cal_p90; /* fractions; NAN: none */
    double mape, spearman;                     /* mean |error| (fraction); rank correlation or NAN */
} acc_row;

typedef struct acc_ctx {
    const char *manifest, *calib, *training;
    int sgc;
    char **sgv;
    acc_row *rows;
    int nrows;
    size_t cap;
    const char *part;   /* the part running */
    int detail;         /* --detail: every size of every coll file */
    int jobs;           /* --jobs: coll files predicted at once (1 or more) */
} acc_ctx;

static void acc_add(acc_ctx *c, const acc_row *r)
{
    ts_grow(&c->rows, sizeof *c->rows, &c->cap, c->nrows + 1);
    c->rows[c->nrows] = *r;
    snprintf(c->rows[c->nrows].part, sizeof r->part, "%s", c->part);
    c->nrows++;
}

static void acc_skip(const acc_ctx *c, const char *name, const char *why)
{
    printf("# %s/%s: skipped: %s\n", c->part, name, why);
}

/* ---- part coll: measured collective sweeps ---- */


/* How a file's times were taken (manifest column `timing`: lib, torch,
 * torch-cat): what each harness adds to the library's time per call is
 * val_harness_cost (validate/val.h). It belongs to the measurement, not to the
 * cluster: a library benchmark on the same machine does not pay it. The
 * manifest says which, or the file's header does (a comment line naming
 * torch.distributed, as the PCCL files' do: torch). */


/* One manifest line: name,file,cluster,nodes,gpus,algo[,timing] (algo and
 * timing may be empty). timing: torch, torch-cat, lib (the library's own benchmark), or
 * empty: what the file's header says (header_torch). */
typedef struct centry {
    char name[96], file[512], cluster[128], algo[64];
    int nodes, gpus, torch; /* VAL_TIMING_*, or -1: the file's header decides */
} centry;

/* The file's leading comment lines name torch.distributed as what was timed
 * (the PCCL reproducer files' HOW MEASURED line): 1; else 0. */
static int header_torch(FILE *fp)
{
    char buf[1024];
    while (fgets(buf, sizeof buf, fp)) {
        const char *s = buf + strspn(buf, " \t");
        if (*s != '#' && *s != '\n' && *s) break;
        if (strstr(s, "torch.distributed")) return 1;
    }
    return 0;
}

static int parse_centry(char *line, centry *e)
{
    char *f[7];
    int k = 0;
    for (char *p = line; k < 7; k++) {
        f[k] = p;
        p = strchr(p, ',');
        if (!p) {
            k++;
            break;
        }
        *p++ = 0;
    }
    if (k != 6 && k != 7) return -1;
    snprintf(e->name, sizeof e->name, "%s", f[0]);
    snprintf(e->file, sizeof e->file, "%s", f[1]);
    snprintf(e->cluster, sizeof e->cluster, "%s", f[2]);
    snprintf(e->algo, sizeof e->algo, "%s", f[5]);
    if (cmd_parse_int(f[3], 0, 1000000, &e->nodes) < 0 || cmd_parse_int(f[4], 0, 1000000, &e->gpus) < 0) return -1;
    e->torch = k < 7 ? -1 : val_timing_parse(f[6]);
    if (e->torch == -2) return -1;
    return e->name[0] && e->file[0] && e->cluster[0] ? 0 : -1;
}

static void errors(const double *pred, const double *meas, int n, double *e)
{
    for (int i = 0; i < n; i++) e[i] = (pred[i] - meas[i]) / meas[i];
}

static double mean_abs(const double *e, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += fabs(e[i]);
    return n ? s / n : NAN;
}

/* --detail: every size's measured time, the uncalibrated, fitted (in
 * sample) and cross-validated predictions with their errors, and the
 * selection's family and protocol. */
static void print_detail(const acc_ctx *c, const char *name, const int64_t *sz, const double *t, const val_xval_out *o,
                         int np)
{
    printf("# %s/%s: %12s %11s %11s %7s %11s %7s %11s %7s  %s\n", c->part, name, "size", "meas(us)", "uncal(us)",
           "err%", "fit(us)", "err%", "xval(us)", "err%", "selection");
    for (int i = 0; i < np; i++)
        printf("# %s/%s: %12lld %11.2f %11.2f %7.1f %11.2f %7.1f %11.2f %7.1f  %s:%s\n", c->part, name,
               (long long)sz[i], 1e6 * t[i], 1e6 * o->unc[i], 100 * (o->unc[i] - t[i]) / t[i], 1e6 * o->fit[i],
               100 * (o->fit[i] - t[i]) / t[i], 1e6 * o->cal[i], 100 * (o->cal[i] - t[i]) / t[i],
               coll_family_name((coll_family)o->fam[i]), coll_proto_name((coll_proto)o->proto[i]));
}

/* One manifest line of the coll part, from its reading to its printed row.
 * Each file's cross-validation runs in its own forked child (val_xval), so
 * the files are independent: up to c->jobs children run at once, started in
 * the manifest's order, and their rows and lines are printed in that order
 * once each is done, so the report reads the same at any count. */
typedef enum { CJ_ERR, CJ_SKIP, CJ_RUN } cjob_state;

typedef struct cjob {
    char line[1024];
    int lineno;
    cjob_state state;
    char err[TS_ERRLEN];    /* CJ_ERR: why */
    centry ce;
    val_file vf;
    int vf_open, n, np;
    int64_t *sz;
    double *t, *lib;
    val_xval_job xj;
    char env[600];          /* the NCCL settings of the file's header applied, or "" */
} cjob;

static void cjob_free(cjob *j)
{
    free(j->sz), free(j->t), free(j->lib);
    j->sz = NULL, j->t = j->lib = NULL;
    if (j->vf_open) val_file_free(&j->vf);
    j->vf_open = 0;
}

/* Everything before the file's prediction, then its child started (CJ_RUN);
 * CJ_SKIP for an absent file, CJ_ERR with the message in j->err. */
static void coll_start(acc_ctx *c, cjob *j)
{
    char *err = j->err, seen[160]; /* the line as read (its start): parse_centry splits it in place */
    size_t errlen = sizeof j->err;
    centry *ce = &j->ce;
    j->state = CJ_ERR;
    memcpy(seen, j->line, sizeof seen - 1);
    seen[sizeof seen - 1] = 0;
    if (parse_centry(j->line, ce) < 0) {
        ts_err(err, errlen, "%s:%d: want name,file,cluster,nodes,gpus,algo[,timing] (timing: torch, torch-cat, "
               "lib or empty), not '%s'", c->manifest, j->lineno, seen);
        return;
    }
    FILE *probe = fopen(ce->file, "r");
    if (!probe) {
        j->state = CJ_SKIP;
        return;
    }
    if (ce->torch < 0) ce->torch = header_torch(probe);
    fclose(probe);
    if (val_parse_file(ce->file, &j->vf, err, errlen) < 0) return;
    j->vf_open = 1;
    if (j->vf.nruns != 1) {
        ts_err(err, errlen, "%s: %d runs; the manifest wants one per file", ce->file, j->vf.nruns);
        return;
    }
    val_run *r = &j->vf.runs[0];
    if (ce->gpus) val_run_set_ranks(r, ce->gpus);
    int n = j->n = ce->gpus ? ce->gpus : r->nranks;
    if (r->coll < 0 || r->coll == VAL_P2P || r->coll == OG_BARRIER || n < 2) {
        ts_err(err, errlen, "%s: line %d: no collective and rank count to predict", ce->file, r->first_line);
        return;
    }
    size_t m = r->nrows + 1;
    j->sz = ts_malloc(m * sizeof *j->sz);
    j->t = ts_malloc(m * sizeof *j->t);
    j->lib = ts_malloc(m * sizeof *j->lib);
    int np = j->np = val_run_select(r, 0, OG_MAX_BYTES, 0, j->sz, j->t);
    /* a PyTorch-timed file: the model predicts the library's time, the
     * measurement adds the harness's per call (the fit sees the library's
     * share: measured - val_harness_cost, at least a tenth of the measured) */
    double hbm = 0;
    if (ce->torch == VAL_TIMING_TORCH_CAT && val_harness_hbm(ce->cluster, &hbm, err, errlen) < 0) return;
    for (int i = 0; i < np; i++) {
        double ov = val_harness_cost(ce->torch, n, (double)j->sz[i], hbm);
        j->lib[i] = j->t[i] - ov > j->t[i] / 10 ? j->t[i] - ov : j->t[i] / 10;
    }
    /* the NCCL settings its header states (the manifest's algo column wins
     * over NCCL_ALGO; a single NCCL_ALGO forces its algorithm) */
    coll_nccl_env env;
    char spec[96];
    const char *algo = cmd_nccl_env_resolve("accuracy", ce->file, &r->env, NULL, ce->algo[0] ? ce->algo : NULL,
                                            (og_coll)r->coll, &env, spec, sizeof spec);
    coll_nccl_env_describe(&env, j->env, sizeof j->env);
    if (algo && !ce->algo[0]) snprintf(j->env + strlen(j->env), sizeof j->env - strlen(j->env), " (forces %s)", algo);
    val_xval_in in = {ce->cluster, ce->nodes, c->calib, c->sgc, c->sgv, (og_coll)r->coll, n, algo, j->sz, j->lib, np};
    /* the measurement's launch: GPUs per thread from its header, its NCCL
     * settings (the forked sweeps inherit them) */
    coll_set_gpus_per_proc(r->gpus_per_proc);
    coll_set_proxy_bound(r->proxy_bound);
    coll_set_nccl_env(env.set ? &env : NULL);
    int rc = val_xval_start(&in, &j->xj, err, errlen);
    coll_set_gpus_per_proc(1);
    coll_set_proxy_bound(0);
    coll_set_nccl_env(NULL);
    if (rc == 0) j->state = CJ_RUN;
}

/* The file's answer, its row and its lines (in the manifest's order). */
static int coll_finish(acc_ctx *c, cjob *j, char *err, size_t errlen)
{
    centry *ce = &j->ce;
    if (j->state == CJ_SKIP) {
        acc_skip(c, ce->name, "file absent");
        printf("#   (%s)\n", ce->file);
        return 0;
    }
    if (j->state == CJ_ERR) {
        cjob_free(j);
        return ts_err(err, errlen, "%s", j->err);
    }
    int np = j->np, n = j->n;
    size_t m = j->vf.runs[0].nrows + 1;
    const int64_t *sz = j->sz;
    const double *t = j->t, *lib = j->lib;
    double *e = ts_malloc(m * sizeof *e);
    val_xval_out o = {ts_malloc(m * sizeof(double)), ts_malloc(m * sizeof(double)), ts_malloc(m * sizeof(double)),
                      ts_malloc(m * sizeof(int)), ts_malloc(m * sizeof(int)), ""};
    int rc = val_xval_finish(&j->xj, &o, err, errlen);
    for (int i = 0; rc == 0 && i < np; i++) {
        double d = t[i] - lib[i];
        o.unc[i] += d, o.cal[i] += d, o.fit[i] += d;
    }
    if (rc == 0) {
        const val_run *r = &j->vf.runs[0];
        acc_row row = {.npts = np};
        snprintf(row.name, sizeof row.name, "%s", ce->name);
        snprintf(row.what, sizeof row.what, "%s, %d ranks, %s%s%s%s%s", val_coll_name(r->coll), n, ce->cluster,
                 ce->algo[0] ? ", " : "", ce->algo,
                 ce->torch ? ", " : "", ce->torch ? val_timing_name(ce->torch) : "");
        errors(o.unc, t, np, e);
        row.unc_med = val_abs_quantile(e, np, 0.5), row.unc_p90 = val_abs_quantile(e, np, 0.9);
        row.mape = mean_abs(e, np), row.spearman = NAN;
        errors(o.cal, t, np, e);
        row.cal_med = val_abs_quantile(e, np, 0.5), row.cal_p90 = val_abs_quantile(e, np, 0.9);
        errors(o.fit, t, np, e);
        double fit_med = val_abs_quantile(e, np, 0.5), fit_p90 = val_abs_quantile(e, np, 0.9);
        acc_add(c, &row);
        printf("# %s/%s: %s: fit on every size: %s; in sample median %.1f%%, p90 %.1f%%\n", c->part, ce->name,
               ce->file, o.note, 100 * fit_med, 100 * fit_p90);
        if (j->env[0]) printf("# %s/%s: NCCL settings of the run (its header): %s\n", c->part, ce->name, j->env);
        if (c->detail) print_detail(c, ce->name, sz, t, &o, np);
    }
    free(e), free(o.unc), free(o.cal), free(o.fit), free(o.fam), free(o.proto);
    cjob_free(j);
    return rc;
}

static int part_coll(acc_ctx *c, char *err, size_t errlen)
{
    FILE *f = fopen(c->manifest, "r");
    if (!f) return ts_err(err, errlen, "%s: cannot open", c->manifest);
    cjob *jobs = NULL;
    size_t cap = 0;
    int njobs = 0, lineno = 0, rc = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#' || strncmp(line, "name,", 5) == 0) continue;
        ts_grow(&jobs, sizeof *jobs, &cap, njobs + 1);
        cjob *j = &jobs[njobs++];
        memset(j, 0, sizeof *j);
        snprintf(j->line, sizeof j->line, "%s", line);
        j->lineno = lineno;
    }
    fclose(f);
    /* started: jobs[0 .. next); running: those of them with a child not yet
     * read. A line that fails before its child starts stops the starting
     * (the report stops there, as it reads the lines in order). */
    int next = 0, running = 0, stop = 0;
    for (int i = 0; i < njobs && rc == 0; i++) {
        while (!stop && next < njobs && (next <= i || running < c->jobs)) {
            coll_start(c, &jobs[next]);
            running += jobs[next].state == CJ_RUN;
            stop = jobs[next].state == CJ_ERR;
            next++;
        }
        running -= jobs[i].state == CJ_RUN;
        rc = coll_finish(c, &jobs[i], err, errlen);
    }
    /* after an error: wait for the children already started */
    for (int i = 0; i < next; i++) {
        if (jobs[i].state == CJ_RUN && jobs[i].xj.buf) {
            char e2[TS_ERRLEN];
            val_fork_finish(&jobs[i].xj.ch, jobs[i].xj.buf, 0, e2, sizeof e2);
            free(jobs[i].xj.buf);
            jobs[i].xj.buf = NULL;
        }
        cjob_free(&jobs[i]);
    }
    free(jobs);
    return rc;
}


/* ---- part train: published training runs ---- */

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One file of published runs: every row predicted (printed as it goes), one
 * acc_row per table named FILE-STEM/TABLE. */
static int train_file(acc_ctx *c, const char *dir, const char *file, char *err, size_t errlen)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    val_train_row *rows;
    int n;
    if (val_train_load(path, &rows, &n, err, errlen) < 0) return -1;
    double *pub = ts_malloc(3 * (size_t)(n + 1) * sizeof *pub), *pred = pub + n + 1, *e = pred + n + 1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0;) {
        int j = i, k = 0;
        printf("# %s/%s %s (TFLOP/s per GPU): %-18s %6s  %-52s %9s %9s %7s\n", c->part, file, rows[i].table, "model",
               "gpus", "layout", "published", "predicted", "error");
        for (; j < n && !strcmp(rows[j].table, rows[i].table); j++) {
            const val_train_row *r = &rows[j];
            val_train_pred p;
            if (val_train_predict(r, &p, err, errlen) < 0) {
                char why[TS_ERRLEN];
                snprintf(why, sizeof why, "%s", err);
                rc = ts_err(err, errlen, "%s: line %d: %s", path, r->line, why);
                break;
            }
            pub[k] = r->published, pred[k] = p.tflops, e[k] = (p.tflops - r->published) / r->published;
            printf("#   %-18s %6d  %-52.52s %9.1f %9.1f %+6.1f%%  %s%s\n", r->model, r->gpus, r->layout, r->published,
                   p.tflops, 100 * e[k], p.how, p.fits ? "" : ", does not fit");
            k++;
        }
        if (rc == 0) {
            acc_row row = {.npts = k, .cal_med = NAN, .cal_p90 = NAN};
            int stem = (int)strlen(file) - 4; /* without .csv */
            snprintf(row.name, sizeof row.name, "%.*s/%.*s", stem < 60 ? stem : 60, file, 30, rows[i].table);
            snprintf(row.what, sizeof row.what, "%s, TFLOP/s per GPU, %d runs", rows[i].table, k);
            row.unc_med = val_abs_quantile(e, k, 0.5), row.unc_p90 = val_abs_quantile(e, k, 0.9);
            row.mape = mean_abs(e, k), row.spearman = val_spearman(pub, pred, k);
            acc_add(c, &row);
        }
        i = j;
    }
    free(pub);
    free(rows);
    return rc;
}

/* Every *.csv of the training measurements (thresholds live elsewhere), by name. */
static int part_train(acc_ctx *c, char *err, size_t errlen)
{
    char dflt[4200];
    const char *dir = c->training;
    if (!dir) {
        snprintf(dflt, sizeof dflt, "%s/measurements/training", ts_config_dir());
        dir = dflt;
    }
    DIR *d = opendir(dir);
    if (!d) return ts_err(err, errlen, "%s: cannot open the directory", dir);
    char **names = NULL;
    size_t cap = 0, n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".csv")) continue;
        ts_grow(&names, sizeof *names, &cap, n + 1);
        names[n++] = ts_strdup(de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) rc = train_file(c, dir, names[i], err, errlen);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* ---- part train beside part coll ----
 * The train part (in-process, about a fifth of the report's CPU) does not
 * read what the coll part leaves (which forks every prediction): with both
 * parts and more than one job it runs in a child started before part coll,
 * its lines into a temporary file and its rows and status back through a
 * pipe; at its turn the parent prints the lines and adds the rows, so the
 * report reads as it did. */
typedef struct train_bg {
    int pid, fd;    /* -1: not started */
    FILE *out;
} train_bg;

static int part_train(acc_ctx *c, char *err, size_t errlen);

static void train_start(acc_ctx *c, train_bg *bg)
{
    int fds[2];
    bg->pid = bg->fd = -1;
    bg->out = tmpfile();
    if (!bg->out) return;
    if (pipe(fds) < 0) {
        fclose(bg->out), bg->out = NULL;
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        fclose(bg->out), bg->out = NULL;
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fileno(bg->out), STDOUT_FILENO);
        acc_ctx tc = *c;
        tc.rows = NULL, tc.nrows = 0, tc.cap = 0, tc.part = "train";
        char terr[TS_ERRLEN] = "";
        int rc = part_train(&tc, terr, sizeof terr);
        fflush(stdout);
        if (ts_write_all(fds[1], &rc, sizeof rc) == 0 && ts_write_all(fds[1], terr, sizeof terr) == 0 &&
            ts_write_all(fds[1], &tc.nrows, sizeof tc.nrows) == 0 && tc.nrows > 0)
            ts_write_all(fds[1], tc.rows, tc.nrows * sizeof *tc.rows);
        _exit(0);
    }
    close(fds[1]);
    bg->pid = pid, bg->fd = fds[0];
}

/* The child's lines onto stdout, its rows into c; its status. */
static int train_finish(acc_ctx *c, train_bg *bg, char *err, size_t errlen)
{
    int rc = -1, n = 0, status;
    char terr[TS_ERRLEN];
    if (ts_read_all(bg->fd, &rc, sizeof rc) < 0 || ts_read_all(bg->fd, terr, sizeof terr) < 0 ||
        ts_read_all(bg->fd, &n, sizeof n) < 0)
        rc = ts_err(err, errlen, "the train part's child died");
    else if (rc < 0)
        ts_err(err, errlen, "%.*s", (int)sizeof terr - 1, terr);
    for (int i = 0; rc == 0 && i < n; i++) {
        acc_row row;
        if (ts_read_all(bg->fd, &row, sizeof row) < 0) {
            rc = ts_err(err, errlen, "the train part's child died");
            break;
        }
        acc_add(c, &row);
    }
    close(bg->fd);
    waitpid(bg->pid, &status, 0);
    fflush(stdout);
    rewind(bg->out);
    char buf[8192];
    for (size_t k; (k = fread(buf, 1, sizeof buf, bg->out)) > 0;) fwrite(buf, 1, k, stdout);
    fclose(bg->out);
    bg->pid = bg->fd = -1, bg->out = NULL;
    return rc;
}

/* ---- the parts ---- */
static const struct part {
    const char *name;
    const char *desc;
    int (*fn)(acc_ctx *c, char *err, size_t errlen);
} parts[] = {
    {"coll", "measured collective sweeps (nccl-tests, rccl-tests, OSU) on shipped clusters", part_coll},
    {"train", "published training runs (TFLOP/s per GPU) against trainsim run's model", part_train},
};
#define NPARTS (sizeof parts / sizeof parts[0])

/* ---- output ---- */
static const char *const metric_names[] = {"uncal_median", "uncal_p90", "cal_median", "cal_p90", "mape"};
#define NMETRICS 5

static double metric(const acc_row *r, int m)
{
    double v[] = {r->unc_med, r->unc_p90, r->cal_med, r->cal_p90, r->mape};
    return v[m];
}

static void print_table(const acc_ctx *c)
{
    printf("# %-5s %-34s %5s %13s %11s %11s %9s %7s %8s  %s\n", "part", "name", "sizes", "uncal_median%",
           "uncal_p90%", "cal_median%", "cal_p90%", "mape%", "spearman", "what");
    for (int i = 0; i < c->nrows; i++) {
        const acc_row *r = &c->rows[i];
        printf("  %-5s %-34s %5d %13.1f %11.1f %11.1f %9.1f %7.1f %8.2f  %s\n", r->part, r->name, r->npts,
               100 * r->unc_med, 100 * r->unc_p90, 100 * r->cal_med, 100 * r->cal_p90, 100 * r->mape, r->spearman,
               r->what);
    }
}

static int write_csv(const acc_ctx *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write", path);
    fprintf(f, "part,name,sizes,uncal_median_pct,uncal_p90_pct,cal_median_pct,cal_p90_pct,mape_pct,spearman,what\n");
    for (int i = 0; i < c->nrows; i++) {
        const acc_row *r = &c->rows[i];
        fprintf(f, "%s,%s,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,\"%s\"\n", r->part, r->name, r->npts, 100 * r->unc_med,
                100 * r->unc_p90, 100 * r->cal_med, 100 * r->cal_p90, 100 * r->mape, r->spearman, r->what);
    }
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", path);
}

/* Horizontal bars per row: uncalibrated and calibrated median |error|. */
static int write_svg(const acc_ctx *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write", path);
    const double L = 300, W = 760, bar = 10, row = 30, T = 40;
    double xmax = 0.1, H = T + row * c->nrows + 40;
    for (int i = 0; i < c->nrows; i++) xmax = fmax(xmax, fmax(c->rows[i].unc_med, c->rows[i].cal_med));
    xmax *= 1.1;
    double pw = W - L - 20;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H);
    fprintf(f, "<text x=\"%.0f\" y=\"18\">median |error| of time per file: uncalibrated (grey), calibrated, "
               "cross-validated (blue)</text>\n", L);
    for (int t = 0; t <= 4; t++) {
        double x = L + pw * t / 4;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#ddd\"/>\n", x, x, T - 6, H - 30);
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.0f%%</text>\n", x, H - 16, 100 * xmax * t / 4);
    }
    for (int i = 0; i < c->nrows; i++) {
        const acc_row *r = &c->rows[i];
        double y = T + row * i;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s/%s</text>\n", L - 6, y + bar + 3, r->part,
                r->name);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"#999\"/>\n", L, y,
                pw * r->unc_med / xmax, bar);
        if (!isnan(r->cal_med))
            fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"#1f77b4\"/>\n", L, y + bar,
                    pw * r->cal_med / xmax, bar);
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", path);
}

/* Thresholds just above the rows' figures: 5% of the figure plus half a
 * point, rounded up to a tenth, so that noise-free determinism passes and a
 * real change of a cost term fails. */
static int write_thresholds(const acc_ctx *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write", path);
    fprintf(f, "# Accuracy thresholds of make check (trainsim accuracy --thresholds): the largest\n"
               "# |error| in percent each file may show. Written by trainsim accuracy\n"
               "# --write-thresholds from the figures at the time; docs/accuracy.md.\n"
               "part,name,metric,max_pct\n");
    for (int i = 0; i < c->nrows; i++)
        for (int m = 0; m < NMETRICS; m++) {
            double v = 100 * metric(&c->rows[i], m);
            if (isnan(v)) continue;
            fprintf(f, "%s,%s,%s,%.1f\n", c->rows[i].part, c->rows[i].name, metric_names[m],
                    ceil((v * 1.05 + 0.5) * 10) / 10);
        }
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", path);
}

/* Every threshold line part,name,metric,max_pct against the rows: returns
 * the number crossed (each printed), or -1 on a bad file. */
static int check_thresholds(const acc_ctx *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return ts_err(err, errlen, "%s: cannot open", path);
    char line[512];
    int lineno = 0, crossed = 0, checked = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#' || strncmp(line, "part,", 5) == 0) continue;
        char part[16], name[96], met[32], *end;
        const char *p = line;
        char *fld[] = {part, name, met};
        size_t cap[] = {sizeof part, sizeof name, sizeof met};
        int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            const char *q = strchr(p, ',');
            if (!q || (size_t)(q - p) >= cap[k]) ok = 0;
            else memcpy(fld[k], p, q - p), fld[k][q - p] = 0, p = q + 1;
        }
        double max = ok ? strtod(p, &end) : 0;
        int m = -1;
        for (int k = 0; ok && k < NMETRICS; k++)
            if (strcmp(met, metric_names[k]) == 0) m = k;
        if (!ok || m < 0 || end == p || *end || !(max >= 0)) {
            fclose(f);
            return ts_err(err, errlen, "%s:%d: want part,name,metric,max_pct (metric: uncal_median, uncal_p90, "
                          "cal_median, cal_p90, mape)", path, lineno);
        }
        for (int i = 0; i < c->nrows; i++) {
            const acc_row *r = &c->rows[i];
            if (strcmp(r->part, part) || strcmp(r->name, name)) continue;
            checked++;
            double v = 100 * metric(r, m);
            if (!(v <= max)) {
                printf("accuracy: FAILED: %s/%s: %s %.2f%% is above its threshold %.2f%% (%s:%d)\n", part, name, met,
                       v, max, path, lineno);
                crossed++;
            }
        }
    }
    fclose(f);
    printf("# thresholds: %d checked, %d crossed (%s)\n", checked, crossed, path);
    return crossed;
}

int cmd_accuracy(int argc, char **argv)
{
    enum { O_PART = 256, O_MANIFEST, O_THRESH, O_CALIB, O_CSV, O_SVG, O_WRITE, O_TRAINING, O_DETAIL, O_JOBS, O_NOMEMO };
    static const struct option longopts[] = {
        {"part", required_argument, 0, O_PART},         {"manifest", required_argument, 0, O_MANIFEST},
        {"thresholds", required_argument, 0, O_THRESH}, {"calibration", required_argument, 0, O_CALIB},
        {"csv", required_argument, 0, O_CSV},           {"svg", required_argument, 0, O_SVG},
        {"write-thresholds", required_argument, 0, O_WRITE}, {"training", required_argument, 0, O_TRAINING},
        {"detail", no_argument, 0, O_DETAIL},           {"jobs", required_argument, 0, O_JOBS},
        {"no-memo", no_argument, 0, O_NOMEMO},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours, sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours), ch, rc = EXIT_USAGE;
    acc_ctx c = {.manifest = "tests/accuracy/coll.csv", .sgc = sgc, .sgv = sgv};
    const char *only = NULL, *thresh = NULL, *csv = NULL, *svg = NULL, *wthresh = NULL;
    char err[TS_ERRLEN];
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(nours, ours, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_PART: only = optarg; break;
        case O_MANIFEST: c.manifest = optarg; break;
        case O_TRAINING: c.training = optarg; break;
        case O_THRESH: thresh = optarg; break;
        case O_CALIB: c.calib = optarg; break;
        case O_CSV: csv = optarg; break;
        case O_SVG: svg = optarg; break;
        case O_WRITE: wthresh = optarg; break;
        case O_DETAIL: c.detail = 1; break;
        case O_NOMEMO: val_memo_disable(1); break;
        case O_JOBS:
            if (cmd_parse_int(optarg, 1, 64, &c.jobs) < 0) {
                rc = cmd_usage_error("accuracy", "--jobs wants a count from 1 to 64, not '%s'", optarg);
                goto out;
            }
            break;
        case 'h': fputs(accuracy_help, stdout); rc = EXIT_OK; goto out;
        case ':': rc = cmd_usage_error("accuracy", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_unknown_option("accuracy", ours[optind - 1], longopts); goto out;
        }
    }
    if (!c.jobs) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        c.jobs = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
    }
    if (optind < nours) {
        rc = cmd_usage_error("accuracy", "unexpected argument '%s'", ours[optind]);
        goto out;
    }
    int found = !only;
    for (size_t i = 0; i < NPARTS; i++) found |= only && strcmp(only, parts[i].name) == 0;
    if (!found) {
        rc = cmd_usage_error("accuracy", "unknown part '%s' (parts: coll, train)", only);
        goto out;
    }
    /* an option of the part not run would be ignored without a word */
    int manifest_set = strcmp(c.manifest, "tests/accuracy/coll.csv") != 0;
    if (only && ((!strcmp(only, "train") && manifest_set) || (!strcmp(only, "coll") && c.training))) {
        rc = cmd_usage_error("accuracy", "%s is the %s part's, and only part %s runs (the train part reads "
                             "--training DIR, the coll part --manifest F)",
                             manifest_set ? "--manifest" : "--training", manifest_set ? "coll" : "train", only);
        goto out;
    }
    printf("# trainsim accuracy%s%s\n", c.calib ? ": calibration " : "", c.calib ? c.calib : "");
    train_bg bg = {-1, -1, NULL};
    if (!only && c.jobs > 1) train_start(&c, &bg);
    for (size_t i = 0; i < NPARTS; i++) {
        if (only && strcmp(only, parts[i].name)) continue;
        c.part = parts[i].name;
        printf("# part %s: %s\n", parts[i].name, parts[i].desc);
        int prc = bg.pid >= 0 && parts[i].fn == part_train ? train_finish(&c, &bg, err, sizeof err)
                                                             : parts[i].fn(&c, err, sizeof err);
        if (prc < 0) {
            fprintf(stderr, "trainsim accuracy: %s: %s\n", parts[i].name, err);
            rc = EXIT_FAIL;
            if (bg.pid >= 0) { /* the report stops here: the train child's lines are dropped */
                int st;
                kill(bg.pid, SIGTERM);
                close(bg.fd);
                waitpid(bg.pid, &st, 0);
                fclose(bg.out);
            }
            goto out;
        }
    }
    print_table(&c);
    if ((csv && write_csv(&c, csv, err, sizeof err) < 0) || (svg && write_svg(&c, svg, err, sizeof err) < 0) ||
        (wthresh && write_thresholds(&c, wthresh, err, sizeof err) < 0)) {
        fprintf(stderr, "trainsim accuracy: %s\n", err);
        goto out;
    }
    int crossed = thresh ? check_thresholds(&c, thresh, err, sizeof err) : 0;
    if (crossed < 0) {
        fprintf(stderr, "trainsim accuracy: %s\n", err);
        goto out;
    }
    rc = crossed ? EXIT_FAIL : EXIT_OK;
out:
    free(c.rows);
    free(sgv);
    free(ours);
    return rc;
}
