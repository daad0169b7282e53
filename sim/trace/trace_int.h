/* Internal to sim/trace: the format rows, each defined in its importer's file. */
#ifndef TS_TRACE_INT_H
#define TS_TRACE_INT_H

#include <stdint.h>

#include "trace.h"

extern const tr_format tr_fmt_native, tr_fmt_kineto, tr_fmt_chakra_et, tr_fmt_chakra_json,
    tr_fmt_nccl, tr_fmt_smpi, tr_fmt_pytorch_et;

/* Chakra nodes (shared by the .et and JSON readers, built in chakra_et.c). */
typedef struct tr_cnode {
    uint64_t id;
    char *name;
    int type;                /* Chakra NodeType: 4 COMP, 5 SEND, 6 RECV, 7 COLL, others no-op */
    int ndeps;
    size_t dcap;
    uint64_t *deps;          /* control and data dependencies */
    double dur_us;           /* duration in microseconds, < 0 unknown */
    double flops, tbytes;    /* num_ops, tensor_size attributes */
    int comm_type;           /* CollectiveCommType, -1 unknown */
    int64_t comm_size;
    int src, dst, tag;       /* -1 unknown */
    int is_cpu;
    long where;              /* record number (.et) or array index (JSON) */
} tr_cnode;

void tr_cnode_dep(tr_cnode *n, uint64_t d);
/* Build rank r of g from its nodes (topologically ordered, streams by kind). */
int tr_chakra_rank(og_graph *g, int r, int group, const char *path, tr_cnode *nodes, size_t n, char *err,
                   size_t errlen);
void tr_cnodes_free(tr_cnode *nodes, size_t n);
/* Rank of a per-rank file from the number in its name ("x.3.et" -> 3), or -1. */
int tr_rank_from_name(const char *path);
/* Per-rank Chakra files: ranks from the numbers in the names when they are
 * 0..n-1, else the order given; collectives on the group of all ranks. */
int tr_chakra_import(int nfiles, char *const *paths, int json, og_graph **out, char *err, size_t errlen);
int tr_chakra_json_read(const char *path, int rank, tr_cnode **out, size_t *n, char *err, size_t errlen);

#endif
