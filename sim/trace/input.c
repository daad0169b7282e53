/* Shared plumbing of the trace importers: a buffered plain-or-gzip reader with
 * line and byte counters, name mappings and group interning. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace.h"
#include "util.h"

#define BUFSZ (1 << 16)

struct tr_in {
    gzFile gz;
    unsigned char buf[BUFSZ];
    size_t pos, len;
    int eof;
    const char *errmsg;
    long line;
    uint64_t off;
    char *lbuf;
    size_t lcap;
};

tr_in *tr_open(const char *path, char *err, size_t errlen)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) return ts_err(err, errlen, "%s: cannot open", path), NULL;
    gzbuffer(gz, BUFSZ);
    tr_in *in = ts_calloc(1, sizeof *in);
    in->gz = gz;
    return in;
}

void tr_close(tr_in *in)
{
    if (!in) return;
    gzclose(in->gz);
    free(in->lbuf);
    free(in);
}

static int fill(tr_in *in)
{
    if (in->eof) return 0;
    int n = gzread(in->gz, in->buf, BUFSZ);
    if (n <= 0) {
        int zerr = 0;
        const char *m = gzerror(in->gz, &zerr);
        if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) in->errmsg = m ? m : "read error";
        in->eof = 1;
        return 0;
    }
    in->pos = 0;
    in->len = (size_t)n;
    return 1;
}

int tr_getc(tr_in *in)
{
    if (in->pos == in->len && !fill(in)) return -1;
    in->off++;
    return in->buf[in->pos++];
}

size_t tr_read(tr_in *in, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (in->pos == in->len && !fill(in)) break;
        size_t k = in->len - in->pos;
        if (k > n - got) k = n - got;
        memcpy((char *)buf + got, in->buf + in->pos, k);
        in->pos += k;
        got += k;
    }
    in->off += got;
    return got;
}

char *tr_getline(tr_in *in, size_t max, int *toolong)
{
    size_t n = 0;
    int c = 0;
    *toolong = 0;
    for (;;) {
        c = tr_getc(in);
        if (c < 0 || c == '\n') break;
        if (n >= max) {
            *toolong = 1;
            in->line++;
            return NULL;
        }
        ts_grow(&in->lbuf, 1, &in->lcap, n + 2);
        in->lbuf[n++] = (char)c;
    }
    if (c < 0 && n == 0) return NULL;
    ts_grow(&in->lbuf, 1, &in->lcap, n + 1);
    if (n && in->lbuf[n - 1] == '\r') n--;
    in->lbuf[n] = 0;
    in->line++;
    return in->lbuf;
}

long tr_lineno(const tr_in *in) { return in->line; }
uint64_t tr_offset(const tr_in *in) { return in->off; }
const char *tr_error(tr_in *in) { return in->errmsg; }

size_t tr_head(const char *path, char *buf, size_t n)
{
    tr_in *in = tr_open(path, NULL, 0);
    if (!in) return 0;
    size_t k = tr_read(in, buf, n);
    tr_close(in);
    return k;
}

/* ------------------------------------------------------------ names */

static int lower_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int tr_dtype_from_torch(const char *s)
{
    static const struct { const char *name; og_dtype t; } map[] = {
        {"float", OG_F32},    {"float32", OG_F32},  {"half", OG_F16},     {"float16", OG_F16},
        {"bfloat16", OG_BF16}, {"double", OG_F64},  {"float64", OG_F64},  {"int", OG_I32},
        {"int32", OG_I32},    {"long", OG_I64},     {"int64", OG_I64},    {"char", OG_I8},
        {"int8", OG_I8},      {"byte", OG_U8},      {"uint8", OG_U8},     {"bool", OG_U8},
        {"float8_e4m3fn", OG_F8}, {"float8_e5m2", OG_F8}, {"long int", OG_I64}, {"signed char", OG_I8},
        {"unsigned char", OG_U8}, {"short", OG_F16}, {"short int", OG_F16}, {"c10::half", OG_F16},
    };
    if (strncmp(s, "c10::", 5) == 0) s += 5;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (lower_eq(s, map[i].name)) return map[i].t;
    return -1;
}

int tr_coll_from_name(const char *s)
{
    static const struct { const char *name; og_coll c; } map[] = {
        {"allreduce", OG_ALLREDUCE},         {"all_reduce", OG_ALLREDUCE},
        {"allgather", OG_ALLGATHER},         {"all_gather", OG_ALLGATHER},
        {"_allgather_base", OG_ALLGATHER},   {"allgather_into_tensor_coalesced", OG_ALLGATHER},
        {"all_gather_into_tensor", OG_ALLGATHER},
        {"reduce_scatter", OG_REDUCESCATTER}, {"reducescatter", OG_REDUCESCATTER},
        {"_reduce_scatter_base", OG_REDUCESCATTER}, {"reduce_scatter_tensor", OG_REDUCESCATTER},
        {"reduce_scatter_tensor_coalesced", OG_REDUCESCATTER},
        {"broadcast", OG_BROADCAST},         {"reduce", OG_REDUCE},
        {"alltoall", OG_ALLTOALL},           {"all_to_all", OG_ALLTOALL},
        {"alltoall_base", OG_ALLTOALL},      {"all_to_allv", OG_ALLTOALL},
        {"alltoallv", OG_ALLTOALL},          {"barrier", OG_BARRIER},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (lower_eq(s, map[i].name)) return map[i].c;
    return -1;
}

int tr_group(og_graph *g, int n, const int *ranks)
{
    for (int i = 0; i < g->ngroups; i++) {
        const og_group *gr = &g->groups[i];
        if (gr->n == n && memcmp(gr->ranks, ranks, (size_t)n * sizeof *ranks) == 0) return i;
    }
    return og_add_group(g, n, ranks);
}
