/* Layout estimates per second: the direct estimate (wl_estimate) plus the
 * layout check and the memory model, over a sweep of GPT-3 175B layouts. */
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"
#include "util.h"
#include "workload/workload.h"

int main(int argc, char **argv)
{
    int ngpus = argc > 1 ? atoi(argv[1]) : 1024, seq = 2048;
    char err[TS_ERRLEN];
    wl_model m;
    cm_gpu gpu;
    an_net net;
    if (wl_model_find("gpt3-175b", "configs/models", &m, err, sizeof err) < 0 ||
        cm_gpu_find("h100", "configs/gpus", &gpu, err, sizeof err) < 0 || an_net_default("H100", &net) < 0) {
        fprintf(stderr, "bench_estimate: %s\n", err);
        return 2;
    }
    wl_opts o = {seq, CM_BF16, &gpu, &net, 1, 1, NULL};
    static const int tps[] = {1, 2, 4, 8}, pps[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 96}, mbss[] = {1, 2, 4};
    static const char *rcs[] = {"none", "selective", "full"};
    long tried = 0, valid = 0, fit = 0;
    double best = 1e30, t0 = ts_wtime();
    char bestl[256] = "";
    for (int rep = 0; rep < 20; rep++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 10; b++)
                for (size_t c = 0; c < 3; c++)
                    for (int zero = 0; zero < 3; zero++)
                        for (int sp = 0; sp < 2; sp++)
                            for (size_t r = 0; r < 3; r++)
                                for (int v = 1; v <= 2; v++) {
                                    char s[256];
                                    snprintf(s, sizeof s, "tp=%d,pp=%d,mbs=%d,gbs=1536,zero=%d,sp=%s,recompute=%s,vpp=%d",
                                             tps[a], pps[b], mbss[c], zero, sp ? "on" : "off", rcs[r], v);
                                    wl_layout l;
                                    tried++;
                                    if (wl_layout_parse(s, &l, err, sizeof err) < 0 ||
                                        wl_layout_check(&l, &m, seq, ngpus, err, sizeof err) < 0)
                                        continue;
                                    valid++;
                                    mem_breakdown mb;
                                    mem_estimate(&m, &l, seq, CM_BF16, gpu.hbm_bytes, &mb);
                                    if (!mb.fits) continue;
                                    fit++;
                                    wl_est e;
                                    if (wl_estimate(&m, &l, &o, &e, err, sizeof err) < 0) continue;
                                    if (e.iter < best) best = e.iter, wl_layout_format(&l, bestl, sizeof bestl);
                                }
    double wall = ts_wtime() - t0;
    printf("%d gpus: %ld layouts tried, %ld valid, %ld fit and estimated in %.3f s: %.0f layouts/s "
           "(%.0f estimates/s; target > 10,000/s per core); best %.4f s: %s\n",
           ngpus, tried, valid, fit, wall, tried / wall, fit / wall, best, bestl);
    return 0;
}
