/* trainsim.h: libtrainsim's embedding API (docs/api.md). The `coll`, `run` and
 * `search` commands on in-memory inputs, results as plain structures; the
 * library never prints or exits: errors are a status and a message. */
#ifndef TRAINSIM_H
#define TRAINSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_API_VERSION 1

/* Every call returns one of these (the CLI's exit statuses). */
typedef enum ts_status {
    TS_OK = 0,
    TS_FAILED = 1,      /* the input is valid but the answer is "no": the layout does not fit, no layout
                         * fits, a simulation deadlocked or failed */
    TS_BAD_INPUT = 2,   /* an option, name, file or JSON text is wrong: the message names it */
} ts_status;

/* A message buffer this size holds any message. */
#define TS_MSG_MAX 16384

/* Inputs shared by the three calls. Strings may be NULL (the default).
 * A cluster is a shipped name ("dgx-h100-superpod"), NAME:NODES, a cluster
 * JSON file (*.json), or cluster JSON text (starts with '{'); coll and run
 * also take a SimGrid XML platform file (*.xml). A model is a shipped name
 * ("gpt3-175b"), a HuggingFace config.json / trainsim model file, or model
 * JSON text (starts with '{'). Shipped names come from the configs folder
 * (ts_configs_dir). SimGrid holds one platform per process: the first
 * simulated call loads its cluster, a later one naming another returns
 * TS_BAD_INPUT (the analytical and estimate fidelities need no platform). */
typedef struct ts_common {
    const char *cluster;        /* see above (the CLI's --platform / --cluster) */
    int nodes;                  /* > 0: the cluster's node count */
    const char *calibration;    /* calibration JSON file (trainsim calibrate) */
    const char *coll;           /* forced algorithms: "allreduce=tree,allgather=ring" */
    const char *tuning;         /* tuning table CSV file */
    const char *const *simgrid_args; /* NULL-terminated "--cfg=K:V" / "--log=X", used by the first
                                      * simulated call of the process */
} ts_common;

/* ---- coll: a simulated nccl-tests sweep of one collective ---- */

typedef struct ts_coll_opts {
    ts_common c;
    const char *op;             /* all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall */
    int gpus;                   /* group size; 0: every host of the platform */
    long long min_bytes;        /* first size, as given (0: the empty collective, then one element) */
    long long max_bytes;        /* default 128 MiB */
    double step_factor;         /* default 2 (when step_bytes is 0) */
    long long step_bytes;       /* > 0: add this each step instead */
    const char *algo;           /* "ring", "tree:ll128", ...; NULL: automatic */
    const char *fidelity;       /* "pipelined" (default), "step", "analytical" */
    const char *dtype;          /* nccl-tests' names; default "float" */
    int root;                   /* broadcast and reduce */
} ts_coll_opts;

typedef struct ts_coll_point {
    long long size, count;      /* bytes and elements, rounded as nccl-tests does */
    double time_s;
    double algbw_gbs, busbw_gbs; /* nccl-tests' definitions, GB/s (1e9) */
    char algorithm[32], protocol[16];
} ts_coll_point;

typedef struct ts_coll_result {
    char op[32], fidelity[16], dtype[16], redop[8];
    int gpus, root;             /* root: -1 for unrooted collectives */
    double busbw_factor;        /* busbw / algbw */
    size_t npoints;
    ts_coll_point *points;
    double avg_busbw_gbs;       /* mean over the points (nccl-tests' "Avg bus bandwidth") */
} ts_coll_result;

ts_status ts_coll(const ts_coll_opts *o, ts_coll_result **out, char *msg, size_t msglen);
void ts_coll_result_free(ts_coll_result *r);

/* ---- run: one training iteration of a model under a parallel layout ---- */

typedef struct ts_run_opts {
    ts_common c;                /* c.cluster may be NULL with fidelity estimate or analytical */
    const char *model;          /* required */
    const char *layout;         /* required: "tp=8,pp=2,gbs=16" (Megatron-LM) or "gx=,gy=,gz=" (AxoNN) */
    int gpus;                   /* derives dp when the layout leaves it out */
    const char *gpu;            /* GPU spec name or file; default: the cluster's, else h100 */
    const char *gemm_table;     /* measured GEMM times CSV */
    int gpus_per_node;          /* node size of the analytical network */
    const char *net;            /* "intra_bw=...,inter_lat=..." overrides */
    int seq;                    /* 0: the model's, at most 8192 */
    const char *dtype;          /* bf16 (default), fp16, fp8, fp32 */
    const char *fidelity;       /* estimate, analytical, pipelined (default), step */
    const char *detail;         /* reduced (default), replicas, full */
    const char *stack;          /* software stack: megatron-core (default), megatron-2021, megatron-2022, deepspeed-2021, deepspeed, megatron-deepspeed,
                                 * fsdp2, fsdp1, torchtitan, torchtitan-compile, nemo-24.07 */
    int links;                  /* > 0: keep the N busiest links (pipelined, step) */
    int progress;               /* progress lines on stderr: the one exception to "never prints" */
    int every_rank;             /* replicas detail: build and simulate every rank, even where one TP
                                 * rank would stand exactly for its TP group (rail copies) */
} ts_run_opts;

/* Time categories of the breakdown (seconds per rank, mean over ranks). */
enum { TS_COMPUTE, TS_TP, TS_CP, TS_EP, TS_PP, TS_DP, TS_OTHER, TS_BUBBLE, TS_NCATS };

typedef struct ts_memory {
    double weights, gradients, optimizer, activations, workspace, total, capacity; /* bytes per GPU */
    double inflight;            /* micro-batches in flight at the peak */
    int stage;                  /* the pipeline stage reported */
    int fits;
} ts_memory;

typedef struct ts_link {
    char name[128];
    double bytes, bandwidth, busy; /* bytes carried, bytes/s, bytes / (bandwidth x iteration) */
} ts_link;

typedef struct ts_run_result {
    char model[128], layout[256], gpu[64], dtype[8], fidelity[16], detail[16];
    char stack[32], stack_description[160]; /* the software stack the prediction models */
    double params;              /* parameters */
    int layers, hidden, seq, gpus, micro_batches;
    ts_memory memory;
    int simulated;              /* 0: not fitting (or failed): the figures below are 0 */
    double iteration_s, tokens_per_s, tflops_per_gpu, mfu;
    double breakdown[TS_NCATS];
    /* fidelity estimate: the closed form's parts */
    double est_forward, est_backward, est_wgrad, est_bubble, est_dp_exposed, est_optimizer;
    double est_compute, est_tp_exposed; /* AxoNN */
    int axonn, axonn_overlap;
    /* op graph fidelities */
    int ranks_built, ranks_total;
    int copies;                 /* each rank simulated stood for this many (rail copies, checked exact;
                                 * docs/performance.md), else 1 */
    char copies_why[200];       /* rail copies tried and refused by the check: why (every rank was run) */
    long ops;
    double graph_wall_s, sim_wall_s;
    size_t nlinks;
    ts_link *links;             /* busiest first (links > 0) */
    struct ts_run_priv *priv;   /* the op graph and timings, for the CLI's reports */
} ts_run_result;

/* *out is set whenever the model and layout were valid, also on TS_FAILED
 * (a layout that does not fit: memory says why; a failed simulation). */
ts_status ts_run(const ts_run_opts *o, ts_run_result **out, char *msg, size_t msglen);
void ts_run_result_free(ts_run_result *r);

/* ---- search: which parallel layout to launch ---- */

typedef struct ts_search_opts {
    ts_common c;                /* c.cluster required (a cluster, not an XML platform) */
    const char *model;          /* required */
    int gpus;                   /* required */
    int gbs;                    /* global batch in sequences; 0: gpus */
    int seq;                    /* 0: the model's, at most 8192 */
    const char *dtype;          /* bf16 (default), fp16, fp8, fp32 */
    int top;                    /* layouts simulated and returned; < 0: 5 */
    const char *objective;      /* time (default), mfu, cost */
    const char *space;          /* 3d (default), 4d, all */
    const char *constraint;     /* "tp<=8,pp>=2,zero!=3" */
    const char *fidelity;       /* estimate, analytical, pipelined (default), step */
    const char *stack;          /* software stack (as in ts_run_opts); NULL: megatron-core */
    /* Splitting across processes (e.g. MPI ranks): this process evaluates
     * every nranks-th candidate from rank; sum adds a buffer over processes
     * (every process gets the totals). nranks 0 or 1: alone. */
    int rank, nranks;
    void (*sum)(double *buf, size_t n);
    int progress;               /* a progress bar on stderr */
    int jobs;                   /* processes simulating this process's share of the top K at once
                                 * (forked, each loads the platform): 0 one per CPU (divided among
                                 * nranks), 1 in this process; the results are the same */
} ts_search_opts;

typedef struct ts_search_layout {
    char layout[256];
    int gpus;
    double memory_bytes, estimate_s;
    double iteration_s;         /* simulated (estimate when fidelity is estimate); <= 0: its simulation failed */
    double tflops_per_gpu, mfu;
    double breakdown[TS_NCATS]; /* simulated fidelities only */
    char dominant[8];           /* the largest exposed communication category ("" none) */
    double dominant_s;
    size_t index;               /* in the enumeration */
} ts_search_layout;

/* Every enumerated layout, in enumeration order (the CLI's --csv rows). */
typedef struct ts_search_candidate {
    char layout[256];
    int gpus;
    char status[12];            /* rule, memory (pruned), estimated, failed */
    double memory_bytes;        /* 0 when pruned by rule */
    double estimate_s;          /* estimated only */
} ts_search_candidate;

typedef struct ts_search_result {
    char model[128], gpu[64], cluster[64], dtype[8], objective[8], space[8], fidelity[16];
    int gpus, gbs, seq, constraints;
    size_t enumerated, pruned_rule, pruned_memory, estimated, failed, simulated;
    size_t ntop;
    ts_search_layout *top;      /* ranked, best first */
    size_t ncandidates;
    ts_search_candidate *candidates;
    double wall_estimate_s, wall_total_s;
    size_t my_estimates;        /* estimates this process made, in wall_my_estimates_s */
    double wall_my_estimates_s;
    struct ts_search_priv *priv; /* every candidate, for the CLI's CSV/JSON/SVG */
} ts_search_result;

/* *out is set on TS_OK and on TS_FAILED (no layout fits, a simulation failed). */
ts_status ts_search(const ts_search_opts *o, ts_search_result **out, char *msg, size_t msglen);
void ts_search_result_free(ts_search_result *r);

/* The configs folder that shipped names are looked up in (docs/api.md). */
const char *ts_configs_dir(void);

#ifdef __cplusplus
}
#endif
#endif
