/* Benchmark: time and peak memory to build one cluster's SimGrid platform in
 * this process (one platform per process: the script loops). */
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdio.h>

#include "engine.h"
#include "util.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_platform CLUSTER[:NODES]\n");
        return 2;
    }
    int one = 1;
    char *av[] = {argv[0], NULL}, err[TS_ERRLEN];
    eng_init(&one, av);
    double t0 = ts_wtime();
    if (eng_load(argv[1], 0, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bench_platform: %s\n", err);
        return 1;
    }
    printf("%-26s %8zu %9zu %9.2f %9.0f\n", argv[1], sg_host_count(), sg_link_count(), ts_wtime() - t0,
           ts_peak_rss() / 1048576.0);
    return 0;
}
