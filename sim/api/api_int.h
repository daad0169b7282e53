/* What the embedding API's files share, and what the CLI reads of its results
 * beyond trainsim.h (the op graph and engine result behind a run, the
 * candidates behind a search) to write its reports. Not installed. */
#ifndef TS_API_INT_H
#define TS_API_INT_H

#include "trainsim.h"

#include "engine.h"
#include "opgraph.h"
#include "search/search.h"

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

/* ts_search_result->priv: every enumerated candidate and the top K's runs. */
struct ts_search_priv {
    srch_cand *cand;
    size_t n;
    size_t *order;          /* estimated candidates, best first (top K reranked by simulation) */
    size_t ne;              /* how many are in order */
    size_t *sim_of;         /* candidate -> its row of top, (size_t)-1 when not simulated */
    wl_model model;
    srch_params params;
    cm_gpu gpu;
    an_net net;
    struct coll_policy *policy;
};

#endif
