/* The memory model: per-rank weights, gradients and optimizer states (by
 * ZeRO stage and dtype) and activations per Korthikanti et al. 2022. */
#ifndef TS_MEMORY_H
#define TS_MEMORY_H

#include <stddef.h>

#include "compute/compute.h"
#include "workload/workload.h"

/* CUDA context, cuBLAS/NCCL workspaces and allocator slack, per GPU. */
#define MEM_WORKSPACE_BYTES (2.0 * 1073741824.0)

typedef struct mem_breakdown {
    double weights, grads, optim;   /* bytes on the rank */
    double activations;             /* peak stored activations (in-flight micro-batches) */
    double act_layer;               /* one layer, one micro-batch (Korthikanti's per-layer term) */
    double inflight;                /* layer-micro-batches stored at the peak / layers per stage */
    double workspace;
    double total, capacity;
    int fits;
    int stage;                      /* the pipeline stage reported (the fuller of first and last) */
} mem_breakdown;

/* Bytes per parameter as Megatron-LM's distributed optimizer counts them
 * (docs/source/api-guide/dist_optimizer.md): weights, gradients (main grads),
 * Adam states (fp32 master copy, momentum, variance). */
void mem_bytes_per_param(cm_dtype t, double *weights, double *grads, double *optim);

/* Activation bytes of one transformer layer for one micro-batch on one rank. */
double mem_layer_activations(const wl_model *m, const wl_layout *l, int seq, int moe);

/* The whole estimate; capacity in bytes (the GPU's HBM). */
void mem_estimate(const wl_model *m, const wl_layout *l, int seq, cm_dtype t, double capacity, mem_breakdown *out);

#endif
