/* libFuzzer body shared by the per-format harnesses (each defines FUZZ_FORMAT):
 * the input is written to a file and imported with that format's table row;
 * a graph that imports must also pass (or cleanly fail) og_check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-%s-%d" FUZZ_SUFFIX, FUZZ_FORMAT, (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    const tr_format *fmt = tr_find(FUZZ_FORMAT);
    if (!fmt) abort();
    char *paths[] = {path};
    char err[TS_ERRLEN];
    og_graph *g = NULL;
    tr_opts o = {.format = FUZZ_FORMAT, .gap = 0.001};
#ifdef FUZZ_STEPS /* Kineto: host gaps replayed, then the last step on its own */
    tr_info info = {0};
    o.host_gaps = 1, o.info = &info;
#endif
    int rc = fmt->import(1, paths, &o, &g, err, sizeof err);
    if (rc == 0) {
        if (!g) abort();
        og_check(g, path, err, sizeof err);
        og_free(g);
    } else if (g || !err[0]) {
        abort(); /* an error must leave no graph and say something */
    }
#ifdef FUZZ_STEPS
    if (rc == 0 && info.nsteps > 0) {
        o.one_step = 1, o.step = info.step[info.nsteps - 1];
        g = NULL, err[0] = 0;
        if (fmt->import(1, paths, &o, &g, err, sizeof err) == 0) {
            if (!g) abort();
            og_free(g);
        } else if (g || !err[0]) {
            abort();
        }
    }
#endif
    return 0;
}
