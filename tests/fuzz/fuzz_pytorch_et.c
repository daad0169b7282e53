/* libFuzzer harness for PyTorch execution traces linked with Kineto: the input
 * is an ET, a NUL, then the Kineto trace of the same rank (fuzz_split.h). */
#include "fuzz_split.h"
#include "trace.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64];
    static const char *const names[FUZZ_MAXFILES] = {"et.json", "kineto.json", "et1.json", "kineto1.json"};
    if (!dir[0]) snprintf(dir, sizeof dir, "/dev/shm/trainsim-fuzz-et-%d", (int)getpid());
    char p[FUZZ_MAXFILES][256];
    int n = fuzz_split(data, size, dir, names, p);
    char *paths[FUZZ_MAXFILES];
    for (int i = 0; i < n; i++) paths[i] = p[i];
    const tr_format *fmt = tr_find("pytorch-et");
    if (!fmt) abort();
    og_graph *g = NULL;
    char err[TS_ERRLEN] = "";
    tr_opts o = {.format = "pytorch-et"};
    if (fmt->import(n, paths, &o, &g, err, sizeof err) == 0) {
        if (!g) abort();
        og_check(g, p[0], err, sizeof err);
        og_free(g);
    } else if (g || !err[0]) {
        abort();
    }
    return 0;
}
