/* Published training runs (model, layout, GPUs, software, measured TFLOP/s per
 * GPU, source) and their prediction by trainsim run's model. */
#ifndef TS_VAL_TRAIN_H
#define TS_VAL_TRAIN_H

#include <stddef.h>

typedef struct val_train_row {
    char table[64], model[64], layout[256], gpu[32], cluster[64], stack[32], dtype[8], source[256];
    int gpus, seq, line;
    double published;       /* TFLOP/s per GPU as the source reports it */
    int model_flops;        /* WL_FLOPS_MODEL: published counts model FLOPs (no recomputation; a
                             * `# flops: model` line above the row); WL_FLOPS_MODEL_CAUSAL (`# flops:
                             * model-causal`): the same with causal attention scores (half of s x s);
                             * 0: the FLOPs executed, recomputation included */
} val_train_row;

typedef struct val_train_pred {
    double iter, tflops, mem;
    int fits;
    const char *how;        /* "analytical" (reduced detail, critical path) or "estimate" */
} val_train_pred;

/* Read a CSV of the columns table,model,layout,gpus,gpu,cluster,stack,dtype,
 * seq,tflops,source ('#' comment lines; a layout with commas in quotes). A
 * comment line `# flops: model` makes the rows after it count model FLOPs
 * (MFU-style, no recomputation), `# flops: model-causal` the same with the
 * attention core counted causally (Megatron-Bridge); `# flops: executed` (the
 * default) counts the recomputed forward too, as Megatron-LM's papers do. */
int val_train_load(const char *path, val_train_row **rows, int *n, char *err, size_t errlen);

/* Predict a row: the cluster's network figures, reduced detail on the
 * analytical critical path (the closed-form estimate for very large graphs). */
int val_train_predict(const val_train_row *r, val_train_pred *p, char *err, size_t errlen);

/* Spearman's rank correlation of a and b (ties averaged); NaN when undefined. */
double val_spearman(const double *a, const double *b, int n);

#endif
