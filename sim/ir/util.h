/* Small helpers shared by every module: error reporting into caller buffers,
 * checked allocation, growable arrays and shortest round-trip number formatting. */
#ifndef TS_UTIL_H
#define TS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Errors: libraries write one lowercase line into a caller-supplied buffer and
 * return -1 (git's error() style). Only main() decides the exit status. */
#define TS_ERRLEN 512
int ts_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same with the message prefixed "a: b: " (a file name, then where in it;
 * either may be NULL or empty): the parsers' error functions call it. */
int ts_verr_at(char *err, size_t errlen, const char *a, const char *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Allocation that aborts on out-of-memory (an impossible state for our sizes,
 * not bad input). */
void *ts_malloc(size_t n);
void *ts_calloc(size_t n, size_t size);
void *ts_realloc(void *p, size_t n);
char *ts_strdup(const char *s);

/* Grow *arr (element size elsz, capacity *cap) so that it holds at least need. */
void ts_grow(void *arrp, size_t elsz, size_t *cap, size_t need);

/* Write d with the fewest significant digits that read back as exactly d. */
void ts_fmt_double(char *buf, size_t n, double d);

/* Write s as a JSON string literal (quoted; control characters as \u00XX),
 * and d as a JSON number in its shortest round-trip form. */
void ts_json_string(FILE *f, const char *s);
void ts_json_number(FILE *f, double d);

/* Natural (numeric-aware) string compare: "gpu-2" < "gpu-10". */
int ts_natcmp(const char *a, const char *b);

/* A small open-addressing map from nonzero-able 64-bit keys to double sums. */
typedef struct ts_sums {
    size_t n, cap;
    uint64_t *keys;
    double *vals;
    unsigned char *used;
} ts_sums;
void ts_sums_add(ts_sums *m, uint64_t key, double v);
/* 1 and the sum in *v when key is in the map; 0 when not */
int ts_sums_get(const ts_sums *m, uint64_t key, double *v);
void ts_sums_free(ts_sums *m);

/* The configs/ folder, the first that exists of: $TRAINSIM_CONFIGS; ./configs
 * (a checkout's working directory); BIN/../configs (a checkout's bin/ holds
 * the running binary); BIN/../share/trainsim (an installed binary); LIB/../
 * share/trainsim (an installed libtrainsim.so embedded in another program);
 * else "configs". README.md ("Install") documents the order. */
const char *ts_config_dir(void);

/* Whether a cluster or model argument is JSON text rather than a name or a
 * path: its first non-blank character is '{' (the embedding API's inputs). */
int ts_is_json_text(const char *s);

/* Wall-clock seconds (monotonic), and peak resident set size in bytes. */
/* Run fn(ctx, i, out + i * outlen, outlen, errs + i * errlen, errlen) for
 * every item i < nitems in up to `jobs` forked children at once (items i,
 * i + jobs, ... in child i % jobs; jobs <= 1: in this process), and put
 * what each wrote back in place. rcs[i]: 0, -1 (fn failed, its message in
 * errs) or -2 (its child died: a message in errs). fn must not rely on
 * anything it changes in the caller's memory: a child's changes stay there. */
typedef int (*ts_item_fn)(void *ctx, int i, void *out, size_t outlen, char *err, size_t errlen);
int ts_fork_map(int jobs, int nitems, ts_item_fn fn, void *ctx, void *out, size_t outlen, char *errs,
                size_t errlen, int *rcs);

double ts_wtime(void);
long ts_peak_rss(void);

/* Resolve a config NAME: a path (contains '/' or ends in .json) as is, else
 * DIR/NAME.json. Writes the path; returns 0, or -1 when a bare name has no file. */
int ts_config_path(const char *name, const char *dir, char *path, size_t n);

/* "Did you mean": the candidate closest to s by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours, case-blind), or NULL when
 * none is close enough to be a plausible slip (distance above a third of the
 * longer name, at least 2). Ties go to the first candidate. */
const char *ts_closest(const char *s, const char *const *cands, size_t n);

/* The stems of DIR's *.json files, sorted; *n gets the count (0 when DIR is
 * missing). Free with ts_names_free. */
char **ts_json_names(const char *dir, size_t *n);
void ts_names_free(char **names, size_t n);

/* Exactly n bytes through a pipe or file descriptor: 0, or -1 (error or early end). */
int ts_read_all(int fd, void *buf, size_t n);
int ts_write_all(int fd, const void *buf, size_t n);

#endif
