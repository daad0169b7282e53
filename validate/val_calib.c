/* A calibration JSON's per-collective terms for the sweeps: its base
 * latencies per algorithm and protocol as an overlay (the cluster factors
 * are applied to the platform by platforms/ through topo_calibrate). */
#include <string.h>

#include "cluster.h"
#include "util.h"
#include "val.h"

const char *val_scope_name(int scope) { return scope == VAL_INTER ? "inter" : "intra"; }

int val_overlay_load(const char *path, val_overlay *ov, char *err, size_t errlen)
{
    val_overlay_init(ov);
    return topo_calib_base(path, &ov->base[0][0], VAL_MAX_ALGOS, err, errlen);
}
