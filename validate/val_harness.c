/* What the harness that timed a measured sweep adds to the library's own time
 * per call (PyTorch's dispatch and stream waits, the PCCL reproducer's output
 * allocation and concatenation), so that a prediction of the library's time
 * can be compared with it. The figures and their sources: docs/accuracy.md. */
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "compute/compute.h"
#include "util.h"
#include "val.h"

int val_timing_parse(const char *s)
{
    if (!s || !*s) return -1;
    if (strcmp(s, "lib") == 0) return VAL_TIMING_LIB;
    if (strcmp(s, "torch") == 0) return VAL_TIMING_TORCH;
    if (strcmp(s, "torch-cat") == 0) return VAL_TIMING_TORCH_CAT;
    return -2;
}

const char *val_timing_name(int t)
{
    return t == VAL_TIMING_TORCH_CAT ? "torch-cat" : t == VAL_TIMING_TORCH ? "torch" : "lib";
}

double val_harness_cost(int timing, int nranks, double out_bytes, double hbm_eff)
{
    if (timing != VAL_TIMING_TORCH && timing != VAL_TIMING_TORCH_CAT) return 0;
    double c = VAL_TORCH_CALL_S;
    if (timing == VAL_TIMING_TORCH_CAT) {
        c += (nranks > 0 ? nranks : 0) * VAL_TORCH_RANK_S;
        if (hbm_eff > 0 && out_bytes > 0) c += 2 * out_bytes / hbm_eff; /* cat: read the inputs, write the output */
    }
    return c;
}

int val_harness_hbm(const char *cluster, double *hbm_eff, char *err, size_t errlen)
{
    topo_cluster cl;
    cm_gpu g;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/gpus", ts_config_dir());
    if (topo_load(cluster, 0, &cl, err, errlen) < 0 || cm_gpu_find(cl.gpu_key, dir, &g, err, errlen) < 0) return -1;
    *hbm_eff = g.hbm_eff;
    return 0;
}
