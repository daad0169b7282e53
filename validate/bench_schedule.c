/* trainsim-bench's schedule backend: trainsim's own collective schedules
 * (models/coll) executed step by step with MPI point-to-point calls, so the
 * simulated algorithms move real data and their result is checked. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "coll.h"
#include "util.h"

typedef struct sched {
    coll_plan plan;
    int algo;
    coll_step *st;
    int64_t total;          /* elements of the chunk space (per rank for all-to-all) */
    int64_t *off;           /* [nchunks + 1] element offsets of the chunks */
    char **tmp;             /* one buffer per transfer of a step */
    size_t ntmp;
    char *a2a;              /* all-to-all: the n x n chunk space (chunk src*n + dst) */
    MPI_Request *req;
} sched;

static const og_coll og_colls[] = {OG_ALLREDUCE, OG_ALLGATHER, OG_REDUCESCATTER, OG_BROADCAST, OG_REDUCE,
                                   OG_ALLTOALL};

static int init(bench_ctx *c, char *err, size_t errlen)
{
    if (c->coll == BENCH_SENDRECV) return ts_err(err, errlen, "sendrecv has no schedule: use --backend mpi");
    sched *s = ts_calloc(1, sizeof *s);
    c->priv = s;
    const char *name = c->algo                                                ? c->algo
                       : c->coll == BENCH_ALLTOALL                            ? "pairwise"
                       : c->coll == BENCH_BROADCAST || c->coll == BENCH_REDUCE ? "chain"
                                                                              : "ring";
    coll_proto pr;
    if (coll_algo_parse(name, og_colls[c->coll], &s->algo, &pr, err, errlen) < 0) return -1;
    return 0;
}

static int alloc(bench_ctx *c, char *err, size_t errlen)
{
    sched *s = c->priv;
    if (bench_host_alloc(c, err, errlen) < 0) return -1;
    int n = c->n;
    s->total = c->coll == BENCH_ALLGATHER || c->coll == BENCH_REDUCESCATTER || c->coll == BENCH_ALLTOALL
                   ? c->count * n : c->count;
    if (coll_plan_init(&s->plan, og_colls[c->coll], n, c->root, s->total, NULL, s->algo, err, errlen) < 0) return -1;
    coll_step_free(s->st);
    s->st = coll_step_new(s->plan.width + 1);
    int k = s->plan.nchunks;
    free(s->off);
    s->off = ts_malloc((k + 1) * sizeof *s->off);
    s->off[0] = 0;
    for (int j = 0; j < k; j++)
        s->off[j + 1] = s->off[j] + (c->coll == BENCH_ALLTOALL ? c->count : coll_chunk_bytes(s->total, k, j));
    for (size_t i = 0; i < s->ntmp; i++) free(s->tmp[i]);
    free(s->tmp);
    s->ntmp = 2 * (size_t)(s->plan.width + 1);
    s->tmp = ts_calloc(s->ntmp, sizeof *s->tmp);
    int64_t most = s->off[k]; /* a transfer carries at most the whole chunk space */
    for (size_t i = 0; i < s->ntmp; i++) s->tmp[i] = ts_malloc((size_t)(most ? most : 1) * c->elsize);
    free(s->req);
    s->req = ts_malloc(s->ntmp * sizeof *s->req);
    free(s->a2a);
    s->a2a = c->coll == BENCH_ALLTOALL ? ts_malloc((size_t)(s->off[k] + 1) * c->elsize) : NULL;
    return 0;
}

static MPI_Datatype dtype(const bench_ctx *c)
{
    return c->type == BENCH_DOUBLE ? MPI_DOUBLE : c->type == BENCH_INT32 ? MPI_INT32_T : MPI_FLOAT;
}

/* Elements of chunks [chunk, chunk + nchunk), wrapping around the chunk space. */
static int64_t range_elems(const sched *s, int chunk, int nchunk)
{
    int64_t e = 0;
    for (int j = 0; j < nchunk; j++) {
        int q = (chunk + j) % s->plan.nchunks;
        e += s->off[q + 1] - s->off[q];
    }
    return e;
}

/* Copy chunks between the work buffer and a packed transfer buffer. */
static void pack(const bench_ctx *c, const sched *s, char *work, char *buf, const coll_xfer *x, int out, int reduce)
{
    int64_t at = 0;
    for (int j = 0; j < x->nchunk; j++) {
        int q = (x->chunk + j) % s->plan.nchunks;
        int64_t len = s->off[q + 1] - s->off[q];
        char *w = work + s->off[q] * c->elsize, *b = buf + at * c->elsize;
        if (out) memcpy(b, w, (size_t)len * c->elsize);
        else if (!reduce) memcpy(w, b, (size_t)len * c->elsize);
        else
            for (int64_t i = 0; i < len; i++)
                bench_set(c->type, w, i, bench_combine(c->op, bench_get(c->type, w, i), bench_get(c->type, b, i)));
        at += len;
    }
}

static int run(bench_ctx *c, char *err, size_t errlen)
{
    sched *s = c->priv;
    int n = c->n, me = c->me, k = s->plan.nchunks;
    size_t el = c->elsize;
    char *work = c->recv;
    /* the work buffer starts as the input (out of place: copied from send);
     * all-to-all works in its chunk space, block d of the input being chunk me*n + d */
    if (c->coll == BENCH_ALLTOALL) {
        work = s->a2a;
        for (int d = 0; d < n; d++)
            memcpy(work + s->off[me * n + d] * el, (c->inplace ? c->recv : c->send) + d * c->count * el,
                   (size_t)c->count * el);
    } else if (!c->inplace) {
        if (c->coll == BENCH_ALLGATHER) memcpy(work + me * c->count * el, c->send, (size_t)c->count * el);
        else if (c->coll != BENCH_BROADCAST || me == c->root) memcpy(work, c->send, (size_t)c->sendcount * el);
    }
    MPI_Datatype t = dtype(c);
    for (int step = 0; step < s->plan.nsteps; step++) {
        coll_plan_step(&s->plan, me, step, s->st);
        int nr = 0, nt = 0;
        coll_step *st = s->st;
        for (int i = 0; i < st->nrecv; i++) {
            coll_xfer *x = &st->recv[i];
            if (coll_is_switch(n, x->peer))
                return ts_err(err, errlen, "algorithm %s reads an NVSwitch buffer: not runnable over MPI",
                              coll_algo_get(s->algo)->name);
            MPI_Irecv(s->tmp[nt++], (int)range_elems(s, x->chunk, x->nchunk), t, x->peer, step, MPI_COMM_WORLD,
                      &s->req[nr++]);
        }
        for (int i = 0; i < st->nsend; i++) {
            coll_xfer *x = &st->send[i];
            if (coll_is_switch(n, x->peer))
                return ts_err(err, errlen, "algorithm %s writes an NVSwitch buffer: not runnable over MPI",
                              coll_algo_get(s->algo)->name);
            char *b = s->tmp[nt++];
            pack(c, s, work, b, x, 1, 0);
            MPI_Isend(b, (int)range_elems(s, x->chunk, x->nchunk), t, x->peer, step, MPI_COMM_WORLD, &s->req[nr++]);
        }
        MPI_Waitall(nr, s->req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < st->nrecv; i++) pack(c, s, work, s->tmp[i], &st->recv[i], 0, st->recv[i].reduce);
    }
    if (c->coll == BENCH_ALLTOALL) /* block src of the result is chunk src*n + me */
        for (int src = 0; src < n; src++)
            memcpy(c->recv + src * c->count * el, work + s->off[src * n + me] * el, (size_t)c->count * el);
    if (c->coll == BENCH_REDUCESCATTER && k == n && me > 0) /* my block to the front, as MPI and NCCL leave it */
        memmove(work, work + s->off[me] * el, (size_t)c->count * el);
    return 0;
}

static const void *result(bench_ctx *c) { return c->recv; }

static void finish(bench_ctx *c)
{
    sched *s = c->priv;
    if (s) {
        coll_step_free(s->st);
        free(s->off);
        for (size_t i = 0; i < s->ntmp; i++) free(s->tmp[i]);
        free(s->tmp);
        free(s->req);
        free(s->a2a);
        free(s);
    }
    c->priv = NULL;
    bench_host_free(c);
}

const bench_backend bench_schedule = {"schedule", init, alloc, NULL, run, result, NULL, finish};
