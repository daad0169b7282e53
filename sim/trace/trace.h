/* Trace importers: recorded traces in the formats users already have (Kineto,
 * Chakra, NCCL logs, SMPI time-independent, native) turned into the op graph. */
#ifndef TS_TRACE_H
#define TS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "opgraph.h"

#define TR_MAXSTEPS 256

/* What an import learnt beyond the graph (filled when tr_opts.info is set). */
typedef struct tr_info {
    int nsteps;                   /* ProfilerStep#N iterations found (Kineto) */
    long step[TR_MAXSTEPS];       /* their numbers N, ascending */
    double step_span[TR_MAXSTEPS];/* recorded span of each, seconds (longest over ranks) */
    double recorded;              /* recorded span of what was imported, seconds (0: unknown) */
    double host_gap;              /* GPU-idle seconds within it (largest over ranks) */
    int gaps_replayed;            /* host gaps became delays on a CPU stream */
} tr_info;

typedef struct tr_opts {
    const char *format; /* NULL: detect from the first file's contents */
    double gap;         /* NCCL logs without timestamps: seconds of compute between collectives */
    int one_step;       /* Kineto: import only iteration ProfilerStep#step (else the whole trace) */
    long step;
    int host_gaps;      /* Kineto: replay host-side gaps as delays on a CPU stream */
    tr_info *info;      /* NULL, or filled by the importer */
} tr_opts;

/* One row per format. detect() looks at the file name and its first bytes
 * (decompressed when gzip) and returns nonzero when it recognises the format.
 * import() reads all files (one per rank, or one for all ranks) into a graph. */
typedef struct tr_format {
    const char *name;
    const char *description;
    int (*detect)(const char *path, const char *head, size_t n);
    int (*import)(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
                  size_t errlen);
} tr_format;

extern const tr_format *const tr_formats[];
extern const int tr_nformats;

/* Lookup by name (NULL when unknown); the list of names as "a, b, c". */
const tr_format *tr_find(const char *name);
const char *tr_format_names(void);

/* Detect the format of path (error when no row recognises it). */
int tr_detect(const char *path, const tr_format **f, char *err, size_t errlen);

/* Import (with o->format or detection), then og_check the result. */
int tr_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
              size_t errlen);

/* ---- shared by the importers (sim/trace/input.c) ---- */

/* A buffered reader over a plain or gzip file (zlib reads both). */
typedef struct tr_in tr_in;
tr_in *tr_open(const char *path, char *err, size_t errlen);
void tr_close(tr_in *in);
/* Next byte, or -1 at end of file (or on a read error: see tr_error). */
int tr_getc(tr_in *in);
/* Read up to n bytes; returns the count (0 at end). */
size_t tr_read(tr_in *in, void *buf, size_t n);
/* Next line without its newline (NUL-terminated, valid until the next call);
 * NULL at end of file. Lines longer than max are an error (*toolong set). */
char *tr_getline(tr_in *in, size_t max, int *toolong);
long tr_lineno(const tr_in *in);     /* line number of the last line read */
uint64_t tr_offset(const tr_in *in); /* bytes consumed (uncompressed) */
const char *tr_error(tr_in *in);     /* NULL, or a decompression/read error */
/* First up to n bytes of a file (decompressed), for detection. */
size_t tr_head(const char *path, char *buf, size_t n);

/* Shared name mappings: NCCL/PyTorch dtype and collective names. */
int tr_dtype_from_torch(const char *s);     /* "Float", "BFloat16", "c10::Half" ... or -1 */
int tr_coll_from_name(const char *s);       /* "allreduce", "all_gather", "_allgather_base" ... or -1 */
/* Group id for an ordered member list, adding it to g when new. */
int tr_group(og_graph *g, int n, const int *ranks);

#endif
