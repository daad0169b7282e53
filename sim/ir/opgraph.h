/* The op graph: trainsim's one intermediate representation. Importers and the
 * workload generator build it, the engine and the analytical model consume it. */
#ifndef TS_OPGRAPH_H
#define TS_OPGRAPH_H

#include <stdint.h>
#include <stdio.h>

#define OG_FORMAT_NAME "trainsim-trace"
#define OG_FORMAT_VERSION 1

/* Limits beyond which a size is "absurd" (almost certainly a unit error). */
#define OG_MAX_BYTES ((int64_t)1 << 50)   /* 1 PiB in one message or kernel */
#define OG_MAX_FLOPS 1e21                 /* ~20 min of a 1 EFLOP/s machine */
#define OG_MAX_DURATION 1e6               /* seconds (11.6 days) */
#define OG_MAX_STREAMS 64

typedef enum { OG_COMPUTE, OG_SEND, OG_RECV, OG_COLL, OG_NKINDS } og_kind;

typedef enum {
    OG_ALLREDUCE,
    OG_ALLGATHER,
    OG_REDUCESCATTER,
    OG_BROADCAST,
    OG_REDUCE,
    OG_ALLTOALL,
    OG_ALLTOALLV,
    OG_BARRIER,
    OG_NCOLLS
} og_coll;

typedef enum { OG_F32, OG_F16, OG_BF16, OG_F64, OG_F8, OG_I8, OG_U8, OG_I32, OG_I64, OG_NDTYPES } og_dtype;

/* One op: 56 bytes (a 44 M-op graph fits in memory; docs/performance.md). The
 * fields of different kinds share storage (the unions below): read a field
 * only for the kinds it is documented for. A compute op reads peer and group
 * -1, tag and root 0; a SEND/RECV op reads duration -1 and flops 0. */
typedef struct og_op {
    int id;         /* index in its rank's op array */
    uint8_t kind;   /* og_kind */
    uint8_t coll;   /* og_coll: COLL */
    uint8_t dtype;  /* og_dtype: COLL */
    int8_t stream;  /* ops of one stream run in order; streams run concurrently */
    int ndeps;      /* op ids on the same rank that must finish first: og_deps(op) */
    uint32_t label_id; /* 0: none; else the graph's label og_label(g, op), stored once per graph */
    union {         /* the dependencies: up to OG_INLINE_DEPS inline, else on the heap */
        int in[2];
        int *heap;
    } dep_;

    /* bytes: memory traffic (COMPUTE), message size (SEND/RECV), or the
     * collective's size in nccl-tests' convention (COLL, see og_coll_bytes doc). */
    int64_t bytes;

    union {
        struct {
            int peer;   /* SEND/RECV: the other global rank */
            int tag;    /* SEND/RECV: matching tag */
        };
        struct {
            int group;  /* COLL: group id */
            int root;   /* COLL broadcast/reduce: index of the root in the group */
        };
    };
    union {
        /* OG_COMPUTE: flops and memory bytes (costed by the engine), or a fixed
         * duration in seconds when duration >= 0. */
        struct {
            double flops;
            double duration;
        };
        struct {
            char *algo;      /* COLL: forced algorithm name, NULL for automatic choice */
            int64_t *vbytes; /* COLL all-to-allv: bytes sent to each group member (group size entries) */
        };
    };
} og_op;

#define OG_INLINE_DEPS 2

/* The dependency ids of op (op->ndeps of them). */
static inline const int *og_deps(const og_op *op)
{
    return op->ndeps <= OG_INLINE_DEPS ? op->dep_.in : op->dep_.heap;
}

typedef struct og_group {
    int id;
    int n;
    int *ranks;     /* global ranks, in communicator order */
} og_group;

typedef struct og_rank {
    char *host;     /* platform host name, NULL: engine default placement */
    int nops;
    size_t cap;
    og_op *ops;
} og_rank;

struct og_pool;

typedef struct og_graph {
    int nranks;
    og_rank *ranks;
    int ngroups;
    size_t gcap;
    og_group *groups;
    struct og_pool *pool; /* the labels, each stored once */
} og_graph;

/* Construction. Pointers returned by og_add_op stay valid until the next
 * og_add_op on the same rank. */
og_graph *og_new(int nranks);
void og_free(og_graph *g);
int og_add_group(og_graph *g, int n, const int *ranks);
og_op *og_add_op(og_graph *g, int rank, og_kind kind, int stream);
void og_set_deps(og_op *op, int ndeps, const int *deps);
void og_add_dep(og_op *op, int dep);
/* Labels are stored once per graph however many ops carry them (a generated
 * graph's labels repeat across the ranks of a stage): the op keeps a number,
 * og_label gives the string back (valid until og_free(g); NULL: none). */
void og_set_label(og_graph *g, og_op *op, const char *label);
const char *og_label(const og_graph *g, const og_op *op);
/* Room for n ops on rank without growing (a builder that knows the count:
 * doubling leaves up to half of every array spare); og_trim gives back the
 * spare capacity of every rank's op array (r < 0), or of rank r. */
void og_reserve(og_graph *g, int rank, int n);
void og_trim(og_graph *g, int r);
void og_set_host(og_graph *g, int rank, const char *host);
void og_set_algo(og_op *op, const char *algo);

/* Convenience builders (return the new op). */
og_op *og_compute(og_graph *g, int rank, int stream, double flops, int64_t bytes);
og_op *og_compute_fixed(og_graph *g, int rank, int stream, double seconds);
og_op *og_send(og_graph *g, int rank, int stream, int peer, int64_t bytes, int tag);
og_op *og_recv(og_graph *g, int rank, int stream, int peer, int64_t bytes, int tag);
og_op *og_collective(og_graph *g, int rank, int stream, og_coll coll, int group,
                     int64_t bytes, og_dtype dtype);

/* Names (as in the native format) and lookups; lookups return -1 when unknown. */
const char *og_kind_name(og_kind k);
int og_kind_from_name(const char *s);
const char *og_coll_name(og_coll c);
int og_coll_from_name(const char *s);
const char *og_dtype_name(og_dtype t);
int og_dtype_from_name(const char *s);
int og_dtype_size(og_dtype t);
int og_total_ops(const og_graph *g);

/* Native JSON format (docs/trace-format.md). Errors name the file and line
 * (syntax) or rank and op (content). write(read(x)) == x for canonical x. */
int og_read_file(const char *path, og_graph **out, char *err, size_t errlen);
int og_read_string(const char *text, const char *name, og_graph **out, char *err, size_t errlen);
int og_write(const og_graph *g, FILE *f);
int og_write_file(const og_graph *g, const char *path, char *err, size_t errlen);

/* Validation before simulation: unknown ranks/groups/peers, dependency cycles,
 * unmatched send/recv, collectives disagreeing across a group, absurd sizes.
 * Returns 0, or -1 with "NAME: rank R op N: what is wrong" in err. */
int og_check(const og_graph *g, const char *name, char *err, size_t errlen);

/* A deadlock found without simulating, on a graph og_check accepted: the
 * streams run with the engine's semantics (rendezvous send/recv, collectives
 * waiting for every member) but no time. Returns 0 when every op can finish,
 * or -1 with "NAME: deadlock (...): rank R stream S op N (what it waits for);
 * ..." naming every blocked stream. */
int og_find_deadlock(const og_graph *g, const char *name, char *err, size_t errlen);

/* What op waits for, as the deadlock reports say it: "recv from rank 1, tag 0,
 * 8 bytes", "all_reduce on group 2, waiting for its other members". */
void og_describe_wait(const og_op *op, char *buf, size_t n);

#endif
