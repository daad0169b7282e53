/* Benchmark: wall time and peak memory of one 1 GiB all-reduce on N GPUs of a
 * cluster (default dgx-h100-superpod, N/8 nodes built in-process) at one
 * fidelity (step, pipelined or analytical), chosen by the automatic policy
 * unless an algorithm is forced. One run per process (SimGrid loads one
 * platform per process): experiments/bench/run.sh loops over N and fidelities. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "engine.h"
#include "util.h"
#include "val.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_coll N BYTES step|pipelined|analytical [CLUSTER [ALGO[:PROTO]|auto [OP]]]\n"
                        "  CLUSTER: a cluster name (default dgx-h100-superpod), loaded with N/8 nodes\n"
                        "  OP: all_reduce (default), alltoall, all_gather, ... (nccl-tests' names)\n");
        return 2;
    }
    int n = atoi(argv[1]), fid = eng_fidelity_from_name(argv[3]);
    int64_t bytes = atoll(argv[2]);
    const char *cluster = argc > 4 ? argv[4] : "dgx-h100-superpod", *algo = argc > 5 && strcmp(argv[5], "auto") ? argv[5] : NULL;
    int op = argc > 6 ? coll_from_name(argv[6]) : OG_ALLREDUCE;
    if (!strcmp(argv[3], "analytical")) fid = VAL_FID_ANALYTICAL;
    if (n < 2 || bytes < 0 || fid < 0 || op < 0) {
        fprintf(stderr, "bench_coll: bad arguments\n");
        return 2;
    }
    char err[TS_ERRLEN];
    int one = 1;
    char *av[] = {argv[0], NULL};
    double t0 = ts_wtime();
    eng_init(&one, av);
    if (eng_load(cluster, (n + 7) / 8, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bench_coll: %s\n", err);
        return 1;
    }
    double load = ts_wtime() - t0;
    val_sweep s;
    val_point pt;
    if (val_sweep_open(&s, op, n, 0, OG_F32, fid, algo, err, sizeof err) < 0) {
        fprintf(stderr, "bench_coll: %s\n", err);
        return 1;
    }
    t0 = ts_wtime();
    if (val_sweep_size(&s, bytes, &pt, err, sizeof err) < 0) {
        fprintf(stderr, "bench_coll: %s\n", err);
        return 1;
    }
    double wall = ts_wtime() - t0;
    char a[64];
    snprintf(a, sizeof a, "%s:%s", coll_algo_get(pt.algo)->name, coll_proto_name(pt.proto));
    printf("%6d %11s %14s %12lld %10.4f %8.3f %8.3f %8.1f\n", n, argv[3], a, (long long)bytes, pt.time * 1e3, load,
           wall, ts_peak_rss() / 1048576.0);
    val_sweep_close(&s);
    if (eng_loaded_hosts() > ENG_QUICK_EXIT_HOSTS) { /* as trainsim's main */
        fflush(NULL);
        _exit(0);
    }
    return 0;
}
