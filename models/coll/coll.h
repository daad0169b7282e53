/* Collective algorithms as schedules: one table row per algorithm, a selection
 * policy and a per-rank step iterator shared by the engine and the models. */
#ifndef TS_COLL_H
#define TS_COLL_H

#include <stdint.h>

#include "opgraph.h"

/* One point-to-point transfer of a step, seen from the rank executing it.
 * The collective's buffer is cut into plan->nchunks chunks; a transfer moves
 * chunks [chunk, chunk + nchunk) and the receiver adds them into its copy
 * (reduce = 1) or overwrites (reduce = 0). All-to-all uses n*n chunks where
 * chunk src*n + dst is what src sends to dst. */
typedef struct coll_xfer {
    int peer;       /* group index of the other rank */
    int64_t bytes;  /* -1 when only the sender knows (all-to-allv receives) */
    int chunk;
    int nchunk;
    int reduce;
} coll_xfer;

typedef struct coll_step {
    int nsend, nrecv;
    coll_xfer *send, *recv; /* capacity: coll_step_new(n) */
} coll_step;

typedef struct coll_plan {
    og_coll coll;
    int n;                  /* group size */
    int root;               /* group index of the root (broadcast, reduce) */
    int64_t bytes;          /* nccl-tests "size" of the collective */
    const int64_t *vbytes;  /* all-to-allv: bytes this rank sends to each member */
    int algo;               /* row of the algorithm table */
    int nsteps;
    int nchunks;
    int width;              /* most transfers one rank posts in one step, per direction */
    int merged_width;       /* most peers of one rank over the whole schedule */
} coll_plan;

typedef struct coll_algo {
    const char *name;
    const char *desc;
    unsigned colls;         /* bitmask of (1u << og_coll) it implements */
    void (*setup)(coll_plan *p); /* sets nsteps, nchunks, width, merged_width */
    void (*step)(const coll_plan *p, int me, int s, coll_step *out);
    /* optional: all steps' transfers merged per peer, in O(1) per peer */
    void (*merged)(const coll_plan *p, int me, coll_step *out);
} coll_algo;

/* The algorithm table. */
int coll_nalgos(void);
const coll_algo *coll_algo_get(int id);

/* Find an algorithm by name that implements coll; -1 with the list of valid
 * names for that collective in err. */
int coll_algo_find(const char *name, og_coll coll, char *err, size_t errlen);

/* The automatic choice (NCCL-tuner-like policy). */
int coll_select(og_coll coll, int n, int64_t bytes);

/* Fill a plan; algo < 0 selects automatically. Returns 0 or -1 with err. */
int coll_plan_init(coll_plan *p, og_coll coll, int n, int root, int64_t bytes,
                   const int64_t *vbytes, int algo, char *err, size_t errlen);

/* Steps of rank me (group index); a step holds up to cap transfers each way
 * (plan->width for steps, plan->merged_width for the merged view). */
coll_step *coll_step_new(int cap);
void coll_step_free(coll_step *st);
void coll_plan_step(const coll_plan *p, int me, int s, coll_step *out);

/* All transfers of rank me merged into one per peer and direction (the
 * pipelined fidelity): chunk fields are meaningless there, bytes are totals. */
void coll_plan_merged(const coll_plan *p, int me, coll_step *out);

/* Size of chunk c when `bytes` is cut into k near-equal chunks. */
int64_t coll_chunk_bytes(int64_t bytes, int k, int c);
int64_t coll_chunk_range_bytes(int64_t bytes, int k, int c, int nchunk);

/* nccl-tests' algbw/busbw factor: busbw = algbw * factor. */
double coll_busbw_factor(og_coll coll, int n);

#endif
