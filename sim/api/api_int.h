/* What the embedding API's files share, and what the CLI reads of its results
 * beyond trainsim.h (the op graph and engine result behind a run, the
 * candidates behind a search) to write its reports. Not installed. */
#ifndef TS_API_INT_H
#define TS_API_INT_H

#include "trainsim.h"

#include "engine.h"
#include "opgraph.h"
#include "analytic/analytic.h"
#include "cluster.h"
#include "search/search.h"
#include "workload/workload.h"

struct coll_policy;

/* Start SimGrid (once) and load c's cluster with node count nodes (0: the
 * cluster's); a later call naming another platform is an error. */
int api_engine(const ts_common *c, int nodes, char *msg, size_t msglen);
/* The selection policy of c->coll and c->tuning (NULL when neither). */
int api_policy(const ts_common *c, struct coll_policy **out, char *msg, size_t msglen);
/* A string field's value, or def when s is NULL. */
const char *api_or(const char *s, const char *def);
/* Copy s into a fixed field (truncating). */
void api_copy(char *dst, size_t n, const char *s);

/* ts_run_result->priv: the op graph and engine result (NULL for estimate). */
struct ts_run_priv {
    og_graph *g;
    eng_result *res;
    struct coll_policy *policy;
};

/* A search's inputs, resolved: model, GPU, network, parameters. */
typedef struct api_search_ctx {
    const wl_model *m;      /* -> the priv's model */
    srch_params p;
    char cluster[1024], calib[1024];
    int gpn, fid;           /* fid: -2 estimate, -1 analytical, else eng_fidelity */
    int loaded;             /* the platform is loaded (at the first simulation) */
    const char *const *simgrid_args;
    int tty;                /* draw the progress bar */
} api_search_ctx;

/* One simulated (or critical-path) result of a top-K layout. */
enum { API_SIM_ITER, API_SIM_CAT0, API_SIM_NFIELDS = API_SIM_CAT0 + AN_NCATS };

/* ts_search_result->priv: every enumerated candidate and the top K's runs. */
struct ts_search_priv {
    api_search_ctx x;
    wl_model model;
    cm_gpu gpu;
    an_net net;
    topo_net_links fabric;  /* the cluster's fabric between nodes, for net */
    topo_gpu_links gpu_links; /* and its links inside a node */
    struct coll_policy *policy;
    srch_cand *cand;
    size_t n;
    size_t *order;          /* estimated candidates, best first (top K reranked by simulation) */
    size_t ne;              /* how many are in order */
    double *sim;            /* ntop rows of API_SIM_NFIELDS, in order's order */
    size_t *sim_of;         /* candidate -> its row of sim, (size_t)-1 when not simulated */
    srch_counts k;
};

/* ts_search's first half: resolve o's cluster, model, GPU and options into
 * r (header fields) and r->priv->x; the CLI's --explain stops there. */
ts_status api_search_prepare(const ts_search_opts *o, ts_search_result *r, char *msg, size_t msglen);
/* Simulate (fidelity of x) one layout: out[API_SIM_NFIELDS]. */
int api_search_simulate(api_search_ctx *x, const wl_layout *l, double *out, char *err, size_t errlen);
/* A candidate's status (SRCH_*) by name: pending, rule, memory, estimated, failed. */
const char *api_search_status(int s);
/* TFLOP/s per GPU of layout l at iter seconds. */
double api_search_tflops(const api_search_ctx *x, const wl_layout *l, double iter);

#endif
