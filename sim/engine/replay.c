/* CI regression mode: metrics of a run, golden files and the diff table. */
#include "replay.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define GOLDEN_FORMAT "trainsim-replay-golden"
#define ABS_FLOOR 1e-9

static void add(rp_metrics *m, double v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(rp_metrics *m, double v, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ts_grow(&m->m, sizeof *m->m, &m->cap, (size_t)m->n + 1);
    m->m[m->n++] = (rp_metric){ts_strdup(buf), v};
}

rp_metrics *rp_collect(const og_graph *g, const eng_result *r)
{
    rp_metrics *m = ts_calloc(1, sizeof *m);
    add(m, r->makespan, "iteration");
    for (int i = 0; i < g->nranks; i++) {
        add(m, r->ranks[i].compute, "rank %d compute", i);
        add(m, r->ranks[i].comm, "rank %d comm", i);
        add(m, r->ranks[i].exposed, "rank %d exposed", i);
        add(m, r->ranks[i].finish, "rank %d finish", i);
    }
    /* k-th collective of each group: walk every member's ops in order. */
    for (int G = 0; G < g->ngroups; G++) {
        const og_group *gr = &g->groups[G];
        int *pos = ts_calloc((size_t)gr->n, sizeof *pos);
        for (int k = 0;; k++) {
            double last_start = -INFINITY, last_end = -INFINITY;
            const og_op *ref = NULL;
            int found = 0;
            for (int j = 0; j < gr->n; j++) {
                const og_rank *rk = &g->ranks[gr->ranks[j]];
                while (pos[j] < rk->nops && !(rk->ops[pos[j]].kind == OG_COLL && rk->ops[pos[j]].group == G)) pos[j]++;
                if (pos[j] == rk->nops) continue;
                const og_op *op = &rk->ops[pos[j]];
                found++;
                if (!ref) ref = op;
                last_start = fmax(last_start, r->start[gr->ranks[j]][op->id]);
                last_end = fmax(last_end, r->end[gr->ranks[j]][op->id]);
                pos[j]++;
            }
            if (!found) break;
            const char *lab = og_label(g, ref);
            add(m, last_end - last_start, "coll g%d %s #%d%s%.80s%s", G, og_coll_name(ref->coll), k,
                lab ? " (" : "", lab ? lab : "", lab ? ")" : "");
        }
        free(pos);
    }
    return m;
}

void rp_free(rp_metrics *m)
{
    if (!m) return;
    for (int i = 0; i < m->n; i++) free(m->m[i].name);
    free(m->m);
    free(m);
}

int rp_write_golden(const char *path, const rp_metrics *m, const char *trace, const char *platform,
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write", path);
    fprintf(f, "{\n  \"format\": \"%s\", \"version\": 1,\n  \"trace\": ", GOLDEN_FORMAT);
    ts_json_string(f, trace);
    fprintf(f, ",\n  \"platform\": ");
    ts_json_string(f, platform);
    fprintf(f, ",\n  \"metrics\": [\n");
    for (int i = 0; i < m->n; i++) {
        fprintf(f, "    {\"name\": ");
        ts_json_string(f, m->m[i].name);
        fprintf(f, ", \"seconds\": ");
        ts_json_number(f, m->m[i].seconds);
        fprintf(f, "}%s\n", i + 1 < m->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0) return ts_err(err, errlen, "%s: write failed", path);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const rp_metric *)a)->name, ((const rp_metric *)b)->name);
}

int rp_read_golden(const char *path, rp_metrics **out, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return ts_err(err, errlen, "%s:%d: %s", path, je.line, je.text);
    const char *fmt = json_string_value(json_object_get(root, "format"));
    json_t *arr = json_object_get(root, "metrics");
    if (!fmt || strcmp(fmt, GOLDEN_FORMAT) || !json_is_array(arr)) {
        json_decref(root);
        return ts_err(err, errlen, "%s: not a replay golden file (want \"format\": \"%s\" and a \"metrics\" array)",
                      path, GOLDEN_FORMAT);
    }
    rp_metrics *m = ts_calloc(1, sizeof *m);
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) {
        const char *name = json_string_value(json_object_get(x, "name"));
        json_t *v = json_object_get(x, "seconds");
        if (!name || !json_is_number(v) || !(json_number_value(v) >= 0)) {
            rp_free(m);
            json_decref(root);
            return ts_err(err, errlen, "%s: metric %zu: want a \"name\" string and \"seconds\" >= 0", path, i);
        }
        add(m, json_number_value(v), "%s", name);
    }
    json_decref(root);
    if (m->n == 0) {
        rp_free(m);
        return ts_err(err, errlen, "%s: no metrics", path);
    }
    /* one value per name, or a comparison would pick either (found by fuzzing) */
    rp_metric *sorted = ts_malloc(((size_t)m->n + 1) * sizeof *sorted);
    memcpy(sorted, m->m, (size_t)m->n * sizeof *sorted);
    qsort(sorted, (size_t)m->n, sizeof *sorted, name_cmp);
    for (int k = 1; k < m->n; k++)
        if (!strcmp(sorted[k - 1].name, sorted[k].name)) {
            ts_err(err, errlen, "%s: metric '%s' appears twice", path, sorted[k].name);
            free(sorted);
            rp_free(m);
            return -1;
        }
    free(sorted);
    *out = m;
    return 0;
}

typedef struct moved {
    const char *name;
    double old, now, rel;
} moved;

static int moved_cmp(const void *a, const void *b)
{
    const moved *x = a, *y = b;
    double ax = fabs(x->rel), ay = fabs(y->rel);
    if (ax != ay) return ax > ay ? -1 : 1;
    return strcmp(x->name, y->name);
}

int rp_compare(const rp_metrics *golden, const rp_metrics *now, double tol, FILE *f, char *err, size_t errlen)
{
    rp_metric *sorted = ts_malloc(((size_t)golden->n + 1) * sizeof *sorted);
    if (golden->n) memcpy(sorted, golden->m, (size_t)golden->n * sizeof *sorted);
    qsort(sorted, (size_t)golden->n, sizeof *sorted, name_cmp);
    moved *mv = ts_malloc(((size_t)now->n + 1) * sizeof *mv);
    int nm = 0, rc = 0;
    for (int i = 0; i < now->n; i++) {
        rp_metric *g = bsearch(&now->m[i], sorted, (size_t)golden->n, sizeof *sorted, name_cmp);
        if (!g) {
            rc = ts_err(err, errlen, "metric '%s' is not in the golden file (the trace changed: "
                        "rewrite it with --write-golden)", now->m[i].name);
            break;
        }
        double d = now->m[i].seconds - g->seconds;
        if (fabs(d) > tol * g->seconds && fabs(d) > ABS_FLOOR)
            mv[nm++] = (moved){now->m[i].name, g->seconds, now->m[i].seconds, g->seconds > 0 ? d / g->seconds : INFINITY};
    }
    if (!rc && now->n != golden->n)
        rc = ts_err(err, errlen, "the golden file has %d metrics, this run %d (the trace changed: rewrite it "
                    "with --write-golden)", golden->n, now->n);
    if (!rc && nm) {
        qsort(mv, (size_t)nm, sizeof *mv, moved_cmp);
        fprintf(f, "replay: %d of %d metrics moved beyond %.4g%%:\n", nm, now->n, tol * 100);
        fprintf(f, "  %-52s %14s %14s %9s\n", "metric", "golden_ms", "now_ms", "change");
        for (int i = 0; i < nm; i++)
            fprintf(f, "  %-52s %14.6f %14.6f %+8.2f%%\n", mv[i].name, mv[i].old * 1e3, mv[i].now * 1e3, mv[i].rel * 100);
    }
    free(sorted);
    free(mv);
    return rc ? -1 : nm;
}
