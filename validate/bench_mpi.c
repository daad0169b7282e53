/* trainsim-bench's mpi backend: Open MPI's collectives on host memory. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util.h"

int bench_host_alloc(bench_ctx *c, char *err, size_t errlen)
{
    int64_t need = c->sendcount > c->recvcount ? c->sendcount : c->recvcount;
    if (need <= c->cap) return 0;
    free(c->send);
    free(c->recv);
    c->send = malloc((size_t)(need ? need : 1) * c->elsize);
    c->recv = malloc((size_t)(need ? need : 1) * c->elsize);
    if (!c->send || !c->recv)
        return ts_err(err, errlen, "cannot allocate 2 x %lld bytes of host memory", (long long)need * c->elsize);
    c->cap = need;
    return 0;
}

void bench_host_free(bench_ctx *c)
{
    free(c->send);
    free(c->recv);
    c->send = c->recv = NULL;
    c->cap = 0;
}

static MPI_Datatype dtype(const bench_ctx *c)
{
    return c->type == BENCH_DOUBLE ? MPI_DOUBLE : c->type == BENCH_INT32 ? MPI_INT32_T : MPI_FLOAT;
}

static MPI_Op op(const bench_ctx *c)
{
    switch (c->op) {
    case BENCH_PROD: return MPI_PROD;
    case BENCH_MIN: return MPI_MIN;
    case BENCH_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

static int run(bench_ctx *c, char *err, size_t errlen)
{
    MPI_Datatype t = dtype(c);
    MPI_Comm w = MPI_COMM_WORLD;
    int n = c->n, me = c->me, ip = c->inplace, rc = MPI_SUCCESS, cnt = (int)c->count;
    if (c->count > 1 << 30) return ts_err(err, errlen, "count %lld too large for MPI", (long long)c->count);
    void *s = c->send, *r = c->recv;
    switch (c->coll) {
    case BENCH_ALLREDUCE: rc = MPI_Allreduce(ip ? MPI_IN_PLACE : s, r, cnt, t, op(c), w); break;
    case BENCH_ALLGATHER:
        rc = ip ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, t, w) : MPI_Allgather(s, cnt, t, r, cnt, t, w);
        break;
    case BENCH_REDUCESCATTER: rc = MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : s, r, cnt, t, op(c), w); break;
    case BENCH_BROADCAST:
        if (!ip && me == c->root) memcpy(r, s, (size_t)cnt * c->elsize);
        rc = MPI_Bcast(r, cnt, t, c->root, w);
        break;
    case BENCH_REDUCE:
        if (ip) rc = MPI_Reduce(me == c->root ? MPI_IN_PLACE : r, me == c->root ? r : NULL, cnt, t, op(c), c->root, w);
        else rc = MPI_Reduce(s, r, cnt, t, op(c), c->root, w);
        break;
    case BENCH_ALLTOALL:
        rc = ip ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, t, w) : MPI_Alltoall(s, cnt, t, r, cnt, t, w);
        break;
    case BENCH_SENDRECV:
        if (ip) rc = MPI_Sendrecv_replace(r, cnt, t, (me + 1) % n, 0, (me - 1 + n) % n, 0, w, MPI_STATUS_IGNORE);
        else rc = MPI_Sendrecv(s, cnt, t, (me + 1) % n, 0, r, cnt, t, (me - 1 + n) % n, 0, w, MPI_STATUS_IGNORE);
        break;
    }
    return rc == MPI_SUCCESS ? 0 : ts_err(err, errlen, "MPI error %d", rc);
}

static const void *result(bench_ctx *c) { return c->recv; }

const bench_backend bench_mpi = {"mpi", NULL, bench_host_alloc, NULL, run, result, NULL, bench_host_free};
