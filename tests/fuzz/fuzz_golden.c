/* libFuzzer harness for replay golden files: read, then compared with itself
 * (which must find nothing moved). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "replay.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static FILE *null;
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-golden-%d.json", (int)getpid());
    if (!null && !(null = fopen("/dev/null", "w"))) abort();
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    char err[TS_ERRLEN] = "";
    rp_metrics *m = NULL;
    if (rp_read_golden(path, &m, err, sizeof err) < 0) {
        if (m || !err[0]) abort();
        return 0;
    }
    int moved = rp_compare(m, m, 0.03, null, err, sizeof err);
    if (moved > 0) abort(); /* a file cannot differ from itself */
    rp_free(m);
    return 0;
}
