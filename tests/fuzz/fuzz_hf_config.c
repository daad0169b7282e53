/* libFuzzer harness for HF config.json model specs: a model that loads has
 * consistent sizes and finite parameter and FLOP counts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"
#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-hf-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    wl_model m;
    char err[TS_ERRLEN] = "";
    if (wl_model_load(path, &m, err, sizeof err) == 0) {
        if (m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.layers < 1 || m.hidden % m.heads || m.heads % m.kv_heads)
            abort();
        double p = wl_model_params(&m, m.vocab);
        if (!isfinite(p) || p <= 0) abort();
        wl_layout l;
        if (wl_layout_parse("tp=1,pp=1,dp=1,mbs=1,gbs=1", &l, err, sizeof err) < 0) abort();
        if (!isfinite(wl_iteration_flops(&m, &l, 128, 0))) abort();
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
