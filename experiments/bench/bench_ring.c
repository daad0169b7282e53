/* Benchmark: simulated flows per second of a ring all-reduce on an N-host
 * contention-free crossbar, at step and pipelined fidelity. One run per
 * process (SimGrid loads one platform per process): the script loops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "engine.h"
#include "opgraph.h"
#include "util.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_ring N BYTES step|pipelined\n");
        return 2;
    }
    int n = atoi(argv[1]);
    int64_t bytes = atoll(argv[2]);
    int fid = eng_fidelity_from_name(argv[3]);
    if (n < 2 || bytes < 0 || fid < 0) {
        fprintf(stderr, "bench_ring: bad arguments\n");
        return 2;
    }
    const double bw = 50e9, lat = 1e-6;
    char path[128];
    snprintf(path, sizeof path, "/tmp/bench-ring-%d.xml", n);
    FILE *f = fopen(path, "w");
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">\n"
               "<cluster id=\"x\" prefix=\"gpu-\" suffix=\"\" radical=\"0-%d\" speed=\"100Tf\" bw=\"50GBps\" "
               "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n</zone></platform>\n", n - 1);
    fclose(f);
    og_graph *g = og_new(n);
    int *ranks = ts_malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) ranks[i] = i;
    og_add_group(g, n, ranks);
    for (int r = 0; r < n; r++) og_set_algo(og_collective(g, r, 0, OG_ALLREDUCE, 0, bytes, OG_BF16), "ring");
    int one = 1;
    char *av[] = {argv[0], NULL};
    double t0 = ts_wtime();
    eng_init(&one, av);
    char err[TS_ERRLEN];
    if (eng_load_platform(path, err, sizeof err) < 0) {
        fprintf(stderr, "bench_ring: %s\n", err);
        return 1;
    }
    double load = ts_wtime() - t0;
    eng_opts o = {fid, 0, 0, 0, 0};
    eng_result *res;
    if (eng_run(g, &o, &res, err, sizeof err) < 0) {
        fprintf(stderr, "bench_ring: %s\n", err);
        return 1;
    }
    double want = 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * (2 * lat + 0.0);
    printf("%6d %10s %12lld %12.6f %10.2e %10ld %8.3f %8.3f %12.0f %8.1f\n", n, argv[3], (long long)bytes,
           res->makespan * 1e3, fabs(res->makespan - want) / want, res->ncomms, load, res->wall,
           res->ncomms / res->wall, ts_peak_rss() / 1048576.0);
    eng_result_free(res);
    og_free(g);
    free(ranks);
    return 0;
}
