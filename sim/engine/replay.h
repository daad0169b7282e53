/* CI regression mode: the metrics of a simulated trace (iteration time, per-rank
 * totals, per-collective times), golden files holding them, and their diff. */
#ifndef TS_REPLAY_H
#define TS_REPLAY_H

#include <stdio.h>

#include "engine.h"
#include "opgraph.h"

typedef struct rp_metric {
    char *name;      /* "iteration", "rank 3 compute", "coll g0 all_reduce #12" */
    double seconds;
} rp_metric;

typedef struct rp_metrics {
    int n;
    size_t cap;
    rp_metric *m;
} rp_metrics;

/* Metrics of a run. A collective's time runs from the last member starting it
 * to the last member finishing it (waiting for stragglers excluded). */
rp_metrics *rp_collect(const og_graph *g, const eng_result *r);
void rp_free(rp_metrics *m);

int rp_write_golden(const char *path, const rp_metrics *m, const char *trace, const char *platform,
                    char *err, size_t errlen);
int rp_read_golden(const char *path, rp_metrics **out, char *err, size_t errlen);

/* Compare now with golden: a metric moved when |now - golden| > tol x golden
 * (and by more than 1 ns). Prints a diff table of the moved metrics (largest
 * change first) to f. Returns the number moved, or -1 when the two do not
 * describe the same trace (err says which metric is missing). */
int rp_compare(const rp_metrics *golden, const rp_metrics *now, double tol, FILE *f, char *err,
               size_t errlen);

#endif
