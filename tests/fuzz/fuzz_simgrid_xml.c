/* libFuzzer harness for the checks before SimGrid reads an XML platform
 * (eng_platform_check): any input is accepted or refused with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-sgxml-%d.xml", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    char err[TS_ERRLEN] = "";
    if (eng_platform_check(path, err, sizeof err) < 0 && !err[0]) abort();
    return 0;
}
