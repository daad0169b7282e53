/* Benchmark: wall time and peak memory of one 1 GiB ring all-reduce on N GPUs
 * of a generated SimGrid FAT_TREE cluster, at one fidelity (step, pipelined
 * or analytical). One run per process (SimGrid loads one platform per
 * process): experiments/bench/run.sh loops over N and fidelities. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "engine.h"
#include "opgraph.h"
#include "util.h"

/* Two-level fat-tree, full bisection: d leaves of d hosts... sized to n. */
static int write_fattree(const char *path, int n)
{
    int leaf = 8;
    while (leaf * leaf < n) leaf *= 2;
    int leaves = n / leaf < 1 ? 1 : n / leaf;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">\n"
               "<cluster id=\"ft\" prefix=\"gpu-\" suffix=\"\" radical=\"0-%d\" speed=\"100Tf\" bw=\"50GBps\" "
               "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\" topology=\"FAT_TREE\" topo_parameters=\"2;%d,%d;1,%d;1,1\"/>\n"
               "</zone></platform>\n", n - 1, n < leaf ? n : leaf, leaves, leaves > 1 ? (n < leaf ? n : leaf) : 1);
    return fclose(f);
}

typedef struct {
    char **hosts;
} rctx;

static void route(void *ctx, int a, int b, double *lat, double *bw)
{
    rctx *c = ctx;
    if (eng_route(c->hosts[a], c->hosts[b], lat, bw) < 0) *lat = *bw = 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_coll N BYTES step|pipelined|analytical\n");
        return 2;
    }
    int n = atoi(argv[1]), analytical = strcmp(argv[3], "analytical") == 0;
    int64_t bytes = atoll(argv[2]);
    int fid = analytical ? ENG_PIPELINED : eng_fidelity_from_name(argv[3]);
    if (n < 2 || bytes < 0 || fid < 0) {
        fprintf(stderr, "bench_coll: bad arguments\n");
        return 2;
    }
    char path[128], err[TS_ERRLEN];
    snprintf(path, sizeof path, "/tmp/bench-coll-ft-%d.xml", n);
    if (write_fattree(path, n) < 0) return 1;
    int one = 1;
    char *av[] = {argv[0], NULL};
    double t0 = ts_wtime();
    eng_init(&one, av);
    if (eng_load_platform(path, err, sizeof err) < 0) {
        fprintf(stderr, "bench_coll: %s\n", err);
        return 1;
    }
    double load = ts_wtime() - t0, sim, wall;
    long flows;
    if (analytical) {
        int nh;
        rctx c = {eng_host_names(&nh)};
        coll_plan p;
        t0 = ts_wtime();
        if (coll_plan_init(&p, OG_ALLREDUCE, n, 0, bytes, NULL, coll_algo_find("ring", OG_ALLREDUCE, err, sizeof err),
                           err, sizeof err) < 0) {
            fprintf(stderr, "bench_coll: %s\n", err);
            return 1;
        }
        sim = coll_cost(&p, COLL_COST_PIPELINED, route, &c);
        wall = ts_wtime() - t0;
        flows = 0;
        for (int i = 0; i < nh; i++) free(c.hosts[i]);
        free(c.hosts);
    } else {
        og_graph *g = coll_graph(OG_ALLREDUCE, n, bytes, OG_BF16, 0, "ring");
        eng_opts o = {fid, 0, 0};
        eng_result *res;
        if (eng_run(g, &o, &res, err, sizeof err) < 0) {
            fprintf(stderr, "bench_coll: %s\n", err);
            return 1;
        }
        sim = res->makespan;
        wall = res->wall;
        flows = res->ncomms;
        eng_result_free(res);
        og_free(g);
    }
    printf("%6d %11s %12lld %10.4f %10ld %8.3f %8.3f %8.1f\n", n, argv[3], (long long)bytes, sim * 1e3, flows, load,
           wall, ts_peak_rss() / 1048576.0);
    return 0;
}
