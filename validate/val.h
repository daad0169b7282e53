/* Validation mode: measurements of collectives (parsed from nccl-tests,
 * rccl-tests and OSU outputs, or produced by trainsim-bench) and their fits. */
#ifndef TS_VAL_H
#define TS_VAL_H

#include <stdint.h>
#include <stdio.h>

#include "opgraph.h"

/* What a run measured: one of og_coll's collectives, or VAL_P2P (osu_latency,
 * osu_bw, nccl-tests' sendrecv: two ranks, busbw = algbw). */
#define VAL_P2P OG_NCOLLS
#define VAL_UNKNOWN (-1)

typedef enum { VAL_FMT_NCCL, VAL_FMT_OSU } val_format;

/* One size. Times in microseconds, bandwidths in GB/s (1e9 bytes/s) as the
 * tools print them; NaN where the tool printed nothing. wrong: -1 = N/A. */
typedef struct val_row {
    int64_t size, count;
    double time_us, algbw, busbw;       /* out-of-place (OSU: the only figure) */
    double ip_time_us, ip_algbw, ip_busbw;
    long wrong, ip_wrong;
    int line;
} val_row;

/* One run (one table) of a file. */
typedef struct val_run {
    int coll;               /* og_coll, VAL_P2P or VAL_UNKNOWN */
    int nranks;             /* 0 when the output does not say */
    val_format fmt;
    char tool[32];          /* "nccl-tests", "osu_allreduce", ... */
    int complete;           /* the closing lines were seen */
    int first_line;
    val_row *rows;
    int nrows;
    size_t cap;
} val_run;

typedef struct val_file {
    char path[512];
    val_run *runs;
    int nruns;
    size_t cap;
} val_file;

/* Parse a measurement file (format detected from its content). The collective
 * comes from the output ("Collective test starting: all_reduce_perf", OSU's
 * title), else from the file name; the rank count from the output (nccl-tests:
 * busbw/algbw of the largest rows; OSU point-to-point: 2). Returns 0, or -1
 * with "path:line: what is wrong" in err; never crashes on bad input. */
int val_parse_file(const char *path, val_file *out, char *err, size_t errlen);
int val_parse_stream(FILE *f, const char *name, val_file *out, char *err, size_t errlen);
void val_file_free(val_file *f);

/* Names: nccl-tests' ("all_reduce", ...; "sendrecv" for VAL_P2P). */
const char *val_coll_name(int coll);
/* Accepts all_reduce, allreduce, all-reduce, AllReduce, bcast, sendrecv, ... */
int val_coll_from_name(const char *s);
/* nccl-tests' busbw factor (VAL_P2P: 1). */
double val_busbw_factor(int coll, int n);

#endif
