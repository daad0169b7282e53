/* Independent items of work run in forked children, `jobs` at a time (SimGrid
 * runs one platform per process): results come back through shared memory,
 * in item order, so the caller sees what a serial loop would have given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* One item's slot in the shared area: its status, then out (at HDR bytes, so
 * that doubles in it are aligned), then err; slots are 16-byte multiples. */
#define HDR 16
static size_t slot_size(size_t outlen, size_t errlen)
{
    return (HDR + outlen + errlen + 15) / 16 * 16;
}

int ts_fork_map(int jobs, int nitems, ts_item_fn fn, void *ctx, void *out, size_t outlen, char *errs,
                size_t errlen, int *rcs)
{
    size_t sz = slot_size(outlen, errlen);
    char *area = MAP_FAILED;
    if (jobs > nitems) jobs = nitems;
    if (jobs > 1) area = mmap(NULL, sz * nitems, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) { /* alone: in this process */
        for (int i = 0; i < nitems; i++)
            rcs[i] = fn(ctx, i, (char *)out + i * outlen, outlen, errs + i * errlen, errlen) < 0 ? -1 : 0;
        return 0;
    }
    for (int i = 0; i < nitems; i++) *(int *)(area + i * sz) = -2; /* not done */
    pid_t *pids = ts_calloc(jobs, sizeof *pids);
    fflush(NULL);
    for (int w = 0; w < jobs; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            for (int i = w; i < nitems; i += jobs) {
                char *s = area + i * sz;
                char *e = s + HDR + outlen;
                e[0] = 0;
                int rc = fn(ctx, i, s + HDR, outlen, e, errlen) < 0 ? -1 : 0;
                __atomic_store_n((int *)s, rc, __ATOMIC_RELEASE);
            }
            fflush(NULL);
            _exit(0);
        }
    }
    for (int w = 0; w < jobs; w++)
        if (pids[w] > 0) waitpid(pids[w], NULL, 0);
    for (int w = 0; w < jobs; w++) /* fork failed: this worker's items here */
        for (int i = w; pids[w] < 0 && i < nitems; i += jobs) {
            char *s = area + i * sz;
            *(int *)s = fn(ctx, i, s + HDR, outlen, s + HDR + outlen, errlen) < 0 ? -1 : 0;
        }
    for (int i = 0; i < nitems; i++) {
        const char *s = area + i * sz;
        rcs[i] = *(const int *)s;
        memcpy((char *)out + i * outlen, s + HDR, outlen);
        if (rcs[i] == -1) memcpy(errs + i * errlen, s + HDR + outlen, errlen);
        if (rcs[i] == -2) snprintf(errs + i * errlen, errlen, "the simulating child process died");
    }
    free(pids);
    munmap(area, sz * nitems);
    return 0;
}
