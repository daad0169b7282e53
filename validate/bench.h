/* trainsim-bench's backends: one table row each (name and functions), all
 * working on the same context of one collective of one size. */
#ifndef TS_BENCH_H
#define TS_BENCH_H

#include <stddef.h>
#include <stdint.h>

enum { BENCH_ALLREDUCE, BENCH_ALLGATHER, BENCH_REDUCESCATTER, BENCH_BROADCAST, BENCH_REDUCE, BENCH_ALLTOALL,
       BENCH_SENDRECV };
enum { BENCH_SUM, BENCH_PROD, BENCH_MIN, BENCH_MAX };
enum { BENCH_FLOAT, BENCH_DOUBLE, BENCH_INT32 };

/* Buffers, nccl-tests' way: send holds sendcount elements, recv
 * max(sendcount, recvcount). In-place runs work in recv alone: the input sits
 * at element me x count for all-gather, at 0 otherwise, and the result is
 * recv[0 .. recvcount) (reduce-scatter's block included). */
typedef struct bench_ctx {
    int coll, op, type, elsize, root, me, n, inplace;
    int device;
    char device_name[64];
    const char *algo;
    int64_t count, sendcount, recvcount;
    void *send, *recv;          /* host buffers (the nccl backend mirrors them on the device) */
    int64_t cap;                /* elements allocated in each */
    void *priv;
} bench_ctx;

typedef struct bench_backend {
    const char *name;
    int (*init)(bench_ctx *c, char *err, size_t errlen);
    int (*alloc)(bench_ctx *c, char *err, size_t errlen);   /* buffers for the current counts */
    void (*upload)(bench_ctx *c);                            /* after the host input is written (or NULL) */
    int (*run)(bench_ctx *c, char *err, size_t errlen);     /* one collective */
    const void *(*result)(bench_ctx *c);                     /* host view of recv after run */
    void (*sync)(bench_ctx *c);                              /* wait for queued work (or NULL) */
    void (*finish)(bench_ctx *c);
} bench_backend;

extern const bench_backend bench_mpi, bench_schedule;
#ifdef TS_HAVE_NCCL
extern const bench_backend bench_nccl;
#endif

/* a op b for a BENCH_SUM.. reduction. */
double bench_combine(int op, double a, double b);
double bench_get(int type, const void *buf, int64_t i);
void bench_set(int type, void *buf, int64_t i, double v);
/* Host buffers of at least the current counts (shared by the backends). */
int bench_host_alloc(bench_ctx *c, char *err, size_t errlen);
void bench_host_free(bench_ctx *c);

#endif
