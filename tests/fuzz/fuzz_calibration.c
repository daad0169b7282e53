/* libFuzzer harness for calibration JSON (--calibration): applied on a shipped
 * cluster it leaves factors in their documented ranges or says why. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cluster.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static topo_cluster base;
    char err[TS_ERRLEN] = "";
    if (!path[0]) {
        snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-calib-%d.json", (int)getpid());
        if (topo_load("test-cluster", 0, &base, err, sizeof err) < 0) {
            fprintf(stderr, "fuzz_calibration: %s (run from the repository root)\n", err);
            abort();
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    topo_cluster c = base;
    if (topo_calibrate(&c, path, err, sizeof err) == 0) {
        if (!(c.intra_bw_eff >= 0.01 && c.intra_bw_eff <= 2) || !(c.inter_bw_eff >= 0.01 && c.inter_bw_eff <= 2) ||
            !(c.intra_lat_add >= 0) || !(c.inter_lat_add >= 0) || !isfinite(c.intra_lat_add + c.inter_lat_add))
            abort();
        for (int t = 0; t < COLL_NTIERS; t++)
            if (!isfinite(topo_bw_factor(&c, t)) || topo_bw_factor(&c, t) < 0) abort();
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
