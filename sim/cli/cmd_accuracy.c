/* trainsim accuracy: predict every published measurement the project ships and
 * print the error per file and table; --check holds the committed thresholds. */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "util.h"
#include "val_train.h"

static const char acc_help[] =
    "usage: trainsim accuracy [PART] [--csv] [--check] [--dir DIR]\n"
    "\n"
    "Predict every published measurement of a part with trainsim's models and print,\n"
    "per row, the published and predicted figures and the error, then per table the\n"
    "MAPE (and Spearman's rank correlation where a table compares schemes).\n"
    "Parts (all when none is given):\n"
    "%s"
    "Options:\n"
    "  --csv          rows as CSV (file,table,model,layout,gpus,published,predicted,error_pct,how)\n"
    "  --check        exit 1 when a table's MAPE exceeds its committed threshold\n"
    "                 (DIR/thresholds.csv: file,table,max_mape)\n"
    "  --dir DIR      the measurements (train: configs/measurements/training)\n";

typedef struct acc_opts {
    int csv, check;
    const char *dir;
} acc_opts;

/* The committed threshold of (file, table); -1 when none. */
static double threshold(const char *dir, const char *file, const char *table)
{
    char path[4400], line[512];
    snprintf(path, sizeof path, "%s/thresholds.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    double t = -1;
    while (fgets(line, sizeof line, f)) {
        char fl[256], tb[128];
        double x;
        if (line[0] == '#' || sscanf(line, "%255[^,],%127[^,],%lf", fl, tb, &x) != 3) continue;
        if (!strcmp(fl, file) && !strcmp(tb, table)) t = x;
    }
    fclose(f);
    return t;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Tables of one file: per row published vs predicted, per table MAPE and
 * Spearman. Returns EXIT_OK, EXIT_FAIL (a threshold exceeded, or a row that
 * cannot be predicted) or EXIT_USAGE. */
static int train_file(const acc_opts *o, const char *file, int *header)
{
    char path[4300], err[TS_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", o->dir, file);
    val_train_row *rows;
    int n, rc = EXIT_OK;
    if (val_train_load(path, &rows, &n, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim accuracy: %s\n", err);
        return EXIT_USAGE;
    }
    double *pub = ts_malloc(2 * (size_t)(n + 1) * sizeof *pub), *pred = pub + n + 1;
    if (o->csv && !*header) printf("file,table,model,layout,gpus,published,predicted,error_pct,how\n");
    *header = 1;
    for (int i = 0; i < n;) {
        int j = i, k = 0;
        double ape = 0;
        if (!o->csv) printf("\n%s %s (TFLOP/s per GPU)\n%-20s %6s  %-58s %9s %9s %7s\n", file, rows[i].table, "model",
                            "gpus", "layout", "published", "predicted", "error");
        for (; j < n && !strcmp(rows[j].table, rows[i].table); j++) {
            val_train_pred p;
            const val_train_row *r = &rows[j];
            if (val_train_predict(r, &p, err, sizeof err) < 0) {
                fprintf(stderr, "trainsim accuracy: %s: line %d: %s\n", path, r->line, err);
                rc = EXIT_FAIL;
                continue;
            }
            double e = 100 * (p.tflops - r->published) / r->published;
            pub[k] = r->published, pred[k++] = p.tflops;
            ape += fabs(e);
            if (o->csv)
                printf("%s,%s,%s,\"%s\",%d,%.1f,%.1f,%.1f,%s\n", file, r->table, r->model, r->layout, r->gpus,
                       r->published, p.tflops, e, p.how);
            else
                printf("%-20s %6d  %-58.58s %9.1f %9.1f %+6.1f%%%s\n", r->model, r->gpus, r->layout, r->published,
                       p.tflops, e, p.fits ? "" : "  (does not fit)");
        }
        double mape = k ? ape / k : NAN, rho = val_spearman(pub, pred, k), lim = threshold(o->dir, file, rows[i].table);
        if (!o->csv) {
            printf("%s %s: MAPE %.1f%% over %d rows, Spearman %.2f", file, rows[i].table, mape, k, rho);
            if (lim >= 0) printf(" (threshold %.1f%%)", lim);
            printf("\n");
        }
        if (o->check && lim >= 0 && !(mape <= lim)) {
            fprintf(stderr, "trainsim accuracy: %s %s: MAPE %.2f%% above its threshold %.2f%%\n", file,
                    rows[i].table, mape, lim);
            rc = EXIT_FAIL;
        }
        i = j;
    }
    free(pub);
    free(rows);
    return rc;
}

/* Every *.csv of the training measurements but thresholds.csv, by name. */
static int part_train(const acc_opts *o)
{
    acc_opts t = *o;
    char dir[4200];
    if (!t.dir) {
        snprintf(dir, sizeof dir, "%s/measurements/training", ts_config_dir());
        t.dir = dir;
    }
    DIR *d = opendir(t.dir);
    if (!d) {
        fprintf(stderr, "trainsim accuracy: %s: cannot open the directory\n", t.dir);
        return EXIT_USAGE;
    }
    char **names = NULL;
    size_t cap = 0;
    int n = 0, rc = EXIT_OK, header = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") || !strcmp(e->d_name, "thresholds.csv")) continue;
        ts_grow(&names, sizeof *names, &cap, (size_t)n + 1);
        names[n++] = ts_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        int r = train_file(&t, names[i], &header);
        if (r > rc) rc = r;
        free(names[i]);
    }
    free(names);
    return rc;
}

static const struct acc_part {
    const char *name, *description;
    int (*fn)(const acc_opts *o);
} parts[] = {
    {"train", "published training runs (TFLOP/s per GPU) against trainsim run's model", part_train},
};
#define NPARTS (sizeof parts / sizeof parts[0])

int cmd_accuracy(int argc, char **argv)
{
    acc_opts o = {0, 0, NULL};
    enum { O_CSV = 256, O_CHECK, O_DIR };
    static const struct option lo[] = {{"csv", no_argument, 0, O_CSV},
                                       {"check", no_argument, 0, O_CHECK},
                                       {"dir", required_argument, 0, O_DIR},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    char list[1024] = "";
    for (size_t i = 0; i < NPARTS; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "  %-12s %s\n", parts[i].name, parts[i].description);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case O_CSV: o.csv = 1; break;
        case O_CHECK: o.check = 1; break;
        case O_DIR: o.dir = optarg; break;
        case 'h': printf(acc_help, list); return EXIT_OK;
        case ':': fprintf(stderr, "trainsim accuracy: option '%s' needs a value\n", argv[optind - 1]); return EXIT_USAGE;
        default: fprintf(stderr, "trainsim accuracy: unknown option '%s'\n", argv[optind - 1]); return EXIT_USAGE;
        }
    }
    const char *want = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) {
        fprintf(stderr, "trainsim accuracy: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK, found = 0;
    for (size_t i = 0; i < NPARTS; i++) {
        if (want && strcmp(want, parts[i].name)) continue;
        found = 1;
        int r = parts[i].fn(&o);
        if (r > rc) rc = r;
    }
    if (!found) {
        fprintf(stderr, "trainsim accuracy: unknown part '%s' (valid:", want);
        for (size_t i = 0; i < NPARTS; i++) fprintf(stderr, " %s", parts[i].name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    return rc;
}
