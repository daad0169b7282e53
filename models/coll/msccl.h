/* MSCCL algorithm XML (MSCCL-IR: <algo><gpu><tb><step>) read into memory and
 * executed symbolically: which chunks every rank holds at the end. */
#ifndef TS_MSCCL_H
#define TS_MSCCL_H

#include <stddef.h>
#include <stdint.h>

enum { MSCCL_BUF_IN, MSCCL_BUF_OUT, MSCCL_BUF_SCRATCH };

typedef struct msccl_step {
    char type[8];               /* s, r, rrc, rcs, rrs, rrcs, re, cpy, nop */
    int srcbuf, srcoff, dstbuf, dstoff, cnt;
    int depid, deps;            /* thread block id and step it waits for (-1: none) */
    int line;
} msccl_step;

typedef struct msccl_tb {
    int id, send, recv, chan;   /* peers -1: none */
    msccl_step *steps;
    int nsteps;
} msccl_tb;

typedef struct msccl_gpu {
    int nchunks[3];             /* i_chunks, o_chunks, s_chunks */
    msccl_tb *tbs;
    int ntbs;
} msccl_gpu;

typedef struct msccl_algo {
    char name[128], coll[32], proto[16];
    int ngpus, nchunks, nchannels, inplace;
    msccl_gpu *gpus;            /* by id 0..ngpus-1 */
    long nsteps;
} msccl_algo;

/* Read an MSCCL algorithm XML; 0, or -1 with "file:line: what" in err. */
int msccl_load(const char *path, msccl_algo *a, char *err, size_t errlen);
void msccl_free(msccl_algo *a);

/* The program as lock-step transfers: a message sent in round k is a transfer
 * of step k (a rank receives in a later round what was sent in an earlier
 * one), chunk ids as the data carries them; reduce when the receiver adds it
 * into its copy (rrc, rrs, rrcs, or into scratch for a later local reduce). */
typedef struct msccl_xfer {
    int src, dst, round, chunk, nchunk, reduce;
} msccl_xfer;
typedef struct msccl_sched {
    int nrounds, nx;
    msccl_xfer *x;              /* sorted by round */
    int *first;                 /* [nrounds + 1]: round k's transfers are x[first[k] .. first[k+1]) */
} msccl_sched;
void msccl_sched_free(msccl_sched *s);

/* Run the program on symbolic chunks (rank r's input chunk c holds {c from
 * r}), matching each thread block's sends to its peer's receives in order per
 * channel: every step must run (no deadlock), every message be received
 * whole, reductions combine the same chunk from disjoint ranks. For coll
 * "allreduce" every rank must end with every chunk reduced over all ranks.
 * *messages gets the number of point-to-point messages. 0 or -1 with err. */
int msccl_check(const msccl_algo *a, long *messages, char *err, size_t errlen);
/* The same, also giving the lock-step schedule (caller frees it). */
int msccl_schedule(const msccl_algo *a, long *messages, msccl_sched *out, char *err, size_t errlen);

/* `--algo msccl:FILE`: load and check FILE and make it the program that the
 * algorithm table's "msccl" row runs (one per process, replacing any other). */
int coll_msccl_use(const char *path, char *err, size_t errlen);
struct coll_plan;
struct coll_step;
void coll_msccl_setup(struct coll_plan *p);
void coll_msccl_step(const struct coll_plan *p, int me, int s, struct coll_step *out);
const char *coll_msccl_unfit(const struct coll_plan *p);

#endif
