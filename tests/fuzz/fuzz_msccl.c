/* libFuzzer harness for MSCCL algorithm XML: a program loads and runs
 * symbolically to an answer or a message, never a crash or a hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "msccl.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-msccl-%d.xml", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    msccl_algo a;
    char err[TS_ERRLEN] = "";
    long m;
    if (msccl_load(path, &a, err, sizeof err) == 0) {
        err[0] = 0;
        msccl_sched sc = {0};
        if (msccl_schedule(&a, &m, &sc, err, sizeof err) < 0) {
            if (!err[0] || sc.x) abort();
        } else {
            for (int i = 0; i < sc.nx; i++) /* rounds ascend; every transfer is inside its round */
                if (sc.x[i].round < 0 || sc.x[i].round >= sc.nrounds || (i && sc.x[i].round < sc.x[i - 1].round))
                    abort();
            msccl_sched_free(&sc);
        }
        msccl_free(&a);
    } else if (!err[0] || a.gpus) {
        abort();
    }
    return 0;
}
