/* Benchmark: trace import throughput (MB/s of file read) and peak memory, for
 * any format; used on a large synthetic Kineto trace by kineto_import.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "opgraph.h"
#include "trace.h"
#include "util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_import FILE... (one trace; several files for per-rank formats)\n");
        return 2;
    }
    double bytes = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "bench_import: cannot stat %s\n", argv[i]);
            return 2;
        }
        bytes += (double)st.st_size;
    }
    /* uncompressed size (a separate untimed pass: .gz files are read through zlib) */
    double raw = 0;
    static char blk[1 << 16];
    for (int i = 1; i < argc; i++) {
        tr_in *in = tr_open(argv[i], NULL, 0);
        size_t k;
        while (in && (k = tr_read(in, blk, sizeof blk))) raw += (double)k;
        tr_close(in);
    }
    long rss0 = ts_peak_rss();
    double t0 = ts_wtime();
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    if (tr_import(argc - 1, argv + 1, NULL, &g, err, sizeof err) < 0) {
        fprintf(stderr, "bench_import: %s\n", err);
        return 2;
    }
    double t = ts_wtime() - t0;
    printf("%10.1f %10.1f %8d %10d %9.3f %9.1f %9.1f %10.1f %10.1f\n", bytes / 1e6, raw / 1e6, g->nranks,
           og_total_ops(g), t, bytes / 1e6 / t, raw / 1e6 / t, rss0 / 1048576.0, ts_peak_rss() / 1048576.0);
    og_free(g);
    return 0;
}
