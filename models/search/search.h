/* Layout search: enumerate the parallel layouts of a model on N GPUs, prune
 * those that break a divisibility rule or do not fit in memory, and rank the
 * rest with the direct analytical estimate. Independent of SimGrid. */
#ifndef TS_SEARCH_H
#define TS_SEARCH_H

#include <stddef.h>

#include "analytic/analytic.h"
#include "compute/compute.h"
#include "workload/workload.h"

typedef enum { SRCH_3D = 1, SRCH_4D = 2, SRCH_ALL = 3 } srch_space;   /* bit 1: Megatron, bit 2: AxoNN */
typedef enum { SRCH_TIME, SRCH_MFU, SRCH_COST, SRCH_NOBJECTIVES } srch_objective;

const char *srch_objective_name(srch_objective o);
int srch_objective_from_name(const char *s);   /* -1 when unknown */
const char *srch_space_name(srch_space s);
int srch_space_from_name(const char *s);       /* -1 when unknown */

#define SRCH_MAX_CONSTRAINTS 32
typedef struct srch_constraint {
    int key;        /* index into the constraint key table */
    int op;         /* SRCH_LT, ... */
    int value;
} srch_constraint;
enum { SRCH_LT, SRCH_LE, SRCH_GT, SRCH_GE, SRCH_EQ, SRCH_NE };

typedef struct srch_params {
    int ngpus, seq, gbs;
    srch_space space;
    srch_objective objective;   /* cost also tries N/2, N/4, ... GPUs (GPU-seconds per token) */
    int nconstr;
    srch_constraint constr[SRCH_MAX_CONSTRAINTS];
    cm_dtype dtype;
    const cm_gpu *gpu;
    const an_net *net;
    const wl_stack *stack;      /* --stack; NULL: wl_stack_default() */
} srch_params;

/* "tp<=8,pp>=2,zero!=3": keys tp, pp, dp, cp, ep, vpp, mbs, zero, sp (0/1),
 * recompute (0 none, 1 selective, 2 full), gx, gy, gz, gpus; operators
 * <, <=, >, >=, =, ==, !=. Appends to p->constr. */
int srch_parse_constraints(const char *s, srch_params *p, char *err, size_t errlen);
/* Whether a layout (dp known) satisfies every constraint. */
int srch_satisfies(const srch_params *p, const wl_layout *l);

enum { SRCH_PENDING, SRCH_RULE, SRCH_MEMORY, SRCH_ESTIMATED, SRCH_FAILED };

typedef struct srch_cand {
    wl_layout l;
    int status;         /* SRCH_PENDING until srch_evaluate */
    double mem;         /* bytes per GPU, the fuller pipeline stage (0: pruned by rule) */
    double iter;        /* estimated seconds per iteration */
    double score;       /* the objective, lower is better */
    double bubble, dp_exposed;
} srch_cand;

/* Every layout of the space for p (and the GPU counts the objective tries),
 * in a fixed order, constraints applied; *out is malloc'ed. Returns the count. */
size_t srch_enumerate(const wl_model *m, const srch_params *p, srch_cand **out);

/* Rule check, memory model, then the estimate (wl_estimate, Megatron and AxoNN). Sets c->status;
 * why (may be NULL) says why it was pruned or failed. */
void srch_evaluate(const wl_model *m, const srch_params *p, srch_cand *c, char *why, size_t whylen);

/* The objective of an estimated or simulated iteration time. */
double srch_score(const wl_model *m, const srch_params *p, const wl_layout *l, double iter);
/* MFU: model FLOPs (no recompute) / (iter x gpus x peak). */
double srch_mfu(const wl_model *m, const srch_params *p, const wl_layout *l, double iter);

typedef struct srch_counts {
    size_t enumerated, rule, memory, estimated, failed, simulated;
} srch_counts;
void srch_count(const srch_cand *c, size_t n, srch_counts *out);

/* Indices of the estimated candidates, best first (ties: less memory, then enumeration order).
 * *order is malloc'ed; returns how many. */
size_t srch_rank(const srch_cand *c, size_t n, size_t **order);

#endif
