/* trainsim-bench's nccl backend: one rank per GPU (local rank modulo the
 * visible GPUs), ncclUniqueId broadcast over MPI, device buffers, one stream. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util.h"

typedef struct gpu {
    ncclComm_t comm;
    cudaStream_t stream;
    char *dsend, *drecv;
    int64_t dcap;
} gpu;

#define CUDA_OK(x, what)                                                                                     \
    do {                                                                                                     \
        cudaError_t e_ = (x);                                                                                \
        if (e_ != cudaSuccess) return ts_err(err, errlen, "%s: %s", what, cudaGetErrorString(e_));           \
    } while (0)
#define NCCL_OK(x, what)                                                                                     \
    do {                                                                                                     \
        ncclResult_t r_ = (x);                                                                               \
        if (r_ != ncclSuccess) return ts_err(err, errlen, "%s: %s", what, ncclGetErrorString(r_));           \
    } while (0)

static int init(bench_ctx *c, char *err, size_t errlen)
{
    gpu *g = ts_calloc(1, sizeof *g);
    c->priv = g;
    MPI_Comm local;
    int lrank, ndev = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->me, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_free(&local);
    CUDA_OK(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    if (ndev < 1) return ts_err(err, errlen, "no CUDA device visible");
    c->device = lrank % ndev;
    CUDA_OK(cudaSetDevice(c->device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, c->device), "cudaGetDeviceProperties");
    snprintf(c->device_name, sizeof c->device_name, "%.63s", prop.name);
    ncclUniqueId id;
    if (c->me == 0) NCCL_OK(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    NCCL_OK(ncclCommInitRank(&g->comm, c->n, id, c->me), "ncclCommInitRank");
    CUDA_OK(cudaStreamCreate(&g->stream), "cudaStreamCreate");
    return 0;
}

static int alloc(bench_ctx *c, char *err, size_t errlen)
{
    gpu *g = c->priv;
    if (bench_host_alloc(c, err, errlen) < 0) return -1;
    if (c->cap <= g->dcap && g->dsend) return 0;
    cudaFree(g->dsend);
    cudaFree(g->drecv);
    CUDA_OK(cudaMalloc((void **)&g->dsend, (size_t)(c->cap ? c->cap : 1) * c->elsize), "cudaMalloc");
    CUDA_OK(cudaMalloc((void **)&g->drecv, (size_t)(c->cap ? c->cap : 1) * c->elsize), "cudaMalloc");
    g->dcap = c->cap;
    return 0;
}

static void upload(bench_ctx *c)
{
    gpu *g = c->priv;
    int64_t all = c->sendcount > c->recvcount ? c->sendcount : c->recvcount;
    cudaMemcpy(g->dsend, c->send, (size_t)c->sendcount * c->elsize, cudaMemcpyHostToDevice);
    cudaMemcpy(g->drecv, c->recv, (size_t)all * c->elsize, cudaMemcpyHostToDevice);
}

static ncclDataType_t dtype(const bench_ctx *c)
{
    return c->type == BENCH_DOUBLE ? ncclDouble : c->type == BENCH_INT32 ? ncclInt32 : ncclFloat;
}

static ncclRedOp_t op(const bench_ctx *c)
{
    static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMin, ncclMax};
    return ops[c->op];
}

static int run(bench_ctx *c, char *err, size_t errlen)
{
    gpu *g = c->priv;
    size_t cnt = (size_t)c->count, el = c->elsize;
    int n = c->n, me = c->me, ip = c->inplace;
    char *s = ip ? g->drecv : g->dsend, *r = g->drecv;
    ncclDataType_t t = dtype(c);
    switch (c->coll) {
    case BENCH_ALLREDUCE: NCCL_OK(ncclAllReduce(s, r, cnt, t, op(c), g->comm, g->stream), "ncclAllReduce"); break;
    case BENCH_ALLGATHER:
        NCCL_OK(ncclAllGather(ip ? r + me * cnt * el : s, r, cnt, t, g->comm, g->stream), "ncclAllGather");
        break;
    case BENCH_REDUCESCATTER:
        NCCL_OK(ncclReduceScatter(s, ip ? r + me * cnt * el : r, cnt, t, op(c), g->comm, g->stream),
                "ncclReduceScatter");
        break;
    case BENCH_BROADCAST: NCCL_OK(ncclBroadcast(s, r, cnt, t, c->root, g->comm, g->stream), "ncclBroadcast"); break;
    case BENCH_REDUCE: NCCL_OK(ncclReduce(s, r, cnt, t, op(c), c->root, g->comm, g->stream), "ncclReduce"); break;
    case BENCH_ALLTOALL:
    case BENCH_SENDRECV:
        if (ip) { /* NCCL's point-to-point calls need distinct buffers */
            size_t all = c->coll == BENCH_ALLTOALL ? cnt * n : cnt;
            CUDA_OK(cudaMemcpyAsync(g->dsend, r, all * el, cudaMemcpyDeviceToDevice, g->stream), "cudaMemcpyAsync");
        }
        NCCL_OK(ncclGroupStart(), "ncclGroupStart");
        if (c->coll == BENCH_ALLTOALL)
            for (int p = 0; p < n; p++) {
                NCCL_OK(ncclSend(g->dsend + p * cnt * el, cnt, t, p, g->comm, g->stream), "ncclSend");
                NCCL_OK(ncclRecv(r + p * cnt * el, cnt, t, p, g->comm, g->stream), "ncclRecv");
            }
        else {
            NCCL_OK(ncclSend(g->dsend, cnt, t, (me + 1) % n, g->comm, g->stream), "ncclSend");
            NCCL_OK(ncclRecv(r, cnt, t, (me - 1 + n) % n, g->comm, g->stream), "ncclRecv");
        }
        NCCL_OK(ncclGroupEnd(), "ncclGroupEnd");
        break;
    }
    return 0;
}

static void sync_stream(bench_ctx *c) { cudaStreamSynchronize(((gpu *)c->priv)->stream); }

static const void *result(bench_ctx *c)
{
    gpu *g = c->priv;
    size_t at = c->inplace && c->coll == BENCH_REDUCESCATTER ? (size_t)c->me * c->count * c->elsize : 0;
    cudaStreamSynchronize(g->stream);
    cudaMemcpy(c->recv, g->drecv + at, (size_t)c->recvcount * c->elsize, cudaMemcpyDeviceToHost);
    return c->recv;
}

static void finish(bench_ctx *c)
{
    gpu *g = c->priv;
    if (g) {
        cudaFree(g->dsend);
        cudaFree(g->drecv);
        if (g->comm) ncclCommDestroy(g->comm);
        if (g->stream) cudaStreamDestroy(g->stream);
        free(g);
    }
    c->priv = NULL;
    bench_host_free(c);
}

const bench_backend bench_nccl = {"nccl", init, alloc, upload, run, result, sync_stream, finish};
