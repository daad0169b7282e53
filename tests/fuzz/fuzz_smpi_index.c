/* libFuzzer harness for SMPI index files: the input is an index, then (after
 * NULs) up to three per-rank traces r0.txt, r1.txt, r2.txt it may list. */
#include "fuzz_split.h"
#include "trace.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64];
    static const char *const names[FUZZ_MAXFILES] = {"index", "r0.txt", "r1.txt", "r2.txt"};
    if (!dir[0]) snprintf(dir, sizeof dir, "/dev/shm/trainsim-fuzz-idx-%d", (int)getpid());
    char p[FUZZ_MAXFILES][256];
    int n = fuzz_split(data, size, dir, names, p);
    for (int i = n; i < FUZZ_MAXFILES; i++) { /* parts not given: no stale file */
        char q[256];
        snprintf(q, sizeof q, "%s/%s", dir, names[i]);
        unlink(q);
    }
    char *paths[1] = {p[0]};
    const tr_format *fmt = tr_find("smpi-ti");
    if (!fmt) abort();
    og_graph *g = NULL;
    char err[TS_ERRLEN] = "";
    tr_opts o = {.format = "smpi-ti"};
    fmt->detect(p[0], (const char *)data, size);
    if (fmt->import(1, paths, &o, &g, err, sizeof err) == 0) {
        if (!g) abort();
        og_check(g, p[0], err, sizeof err);
        og_free(g);
    } else if (g || !err[0]) {
        abort();
    }
    return 0;
}
