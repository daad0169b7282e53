/* Parsers for measurement files: nccl-tests and rccl-tests tables (any
 * collective, several runs per file) and OSU micro-benchmark outputs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "util.h"
#include "val.h"

static const struct {
    const char *name;   /* nccl-tests' spelling */
    int coll;
} coll_names[] = {
    {"all_reduce", OG_ALLREDUCE},  {"all_gather", OG_ALLGATHER}, {"reduce_scatter", OG_REDUCESCATTER},
    {"alltoall", OG_ALLTOALL},     {"broadcast", OG_BROADCAST},  {"reduce", OG_REDUCE},
    {"sendrecv", VAL_P2P},         {"bcast", OG_BROADCAST},      {"latency", VAL_P2P},
    {"bandwidth", VAL_P2P},        {"bw", VAL_P2P},              {"bibw", VAL_P2P},
};
#define NNAMES (int)(sizeof coll_names / sizeof coll_names[0])

/* Lowercase, separators ('_', '-', ' ') dropped. */
static void squash(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (*s != '_' && *s != '-' && *s != ' ') out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

const char *val_coll_name(int coll)
{
    for (int i = 0; i < NNAMES; i++)
        if (coll_names[i].coll == coll) return coll_names[i].name;
    return "unknown";
}

int val_coll_from_name(const char *s)
{
    char want[64], have[64];
    squash(s, want, sizeof want);
    size_t l = strlen(want);
    if (l > 4 && strcmp(want + l - 4, "perf") == 0) want[l - 4] = 0;
    for (int i = 0; i < NNAMES; i++) {
        squash(coll_names[i].name, have, sizeof have);
        if (strcmp(have, want) == 0) return coll_names[i].coll;
    }
    return VAL_UNKNOWN;
}

double val_busbw_factor(int coll, int n)
{
    if (coll < 0 || coll >= OG_NCOLLS) return 1;
    return coll_busbw_factor((og_coll)coll, n);
}

/* The collective a file name mentions (longest names first: "reduce" is in
 * "all_reduce" and "reduce_scatter"). */
static int coll_from_path(const char *path)
{
    static const struct { const char *pat; int coll; } pats[] = {
        {"allreduce", OG_ALLREDUCE}, {"allgather", OG_ALLGATHER}, {"reducescatter", OG_REDUCESCATTER},
        {"alltoall", OG_ALLTOALL},   {"broadcast", OG_BROADCAST}, {"bcast", OG_BROADCAST},
        {"sendrecv", VAL_P2P},       {"reduce", OG_REDUCE},
    };
    const char *base = strrchr(path, '/');
    char s[512];
    squash(base ? base + 1 : path, s, sizeof s);
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
        if (strstr(s, pats[i].pat)) return pats[i].coll;
    return VAL_UNKNOWN;
}

typedef struct pctx {
    const char *name;
    int line;
    char *err;
    size_t errlen;
} pctx;

static int bad(pctx *c, const char *fmt, const char *a, const char *b)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a, b);
    return ts_err(c->err, c->errlen, "%s:%d: %s", c->name, c->line, msg);
}

static int num(pctx *c, const char *what, const char *tok, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(v) || v < 0)
        return bad(c, "%s is not a non-negative number: '%.40s'", what, tok);
    *out = v;
    return 0;
}

static int integer(pctx *c, const char *what, const char *tok, int allow_neg, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (end == tok || *end || errno || (v < 0 && !allow_neg) || v > OG_MAX_BYTES)
        return bad(c, "%s is not an integer in range: '%.40s'", what, tok);
    *out = v;
    return 0;
}

static int wrong_field(pctx *c, const char *tok, long *out)
{
    if (strcmp(tok, "N/A") == 0) return *out = -1, 0;
    long long v;
    if (integer(c, "#wrong", tok, 0, &v) < 0) return -1;
    *out = (long)v;
    return 0;
}

static val_run *new_run(val_file *f, val_format fmt, int coll, int line)
{
    ts_grow(&f->runs, sizeof *f->runs, &f->cap, f->nruns + 1);
    val_run *r = &f->runs[f->nruns++];
    memset(r, 0, sizeof *r);
    r->fmt = fmt;
    r->coll = coll;
    r->first_line = line;
    snprintf(r->tool, sizeof r->tool, "%s", fmt == VAL_FMT_NCCL ? "nccl-tests" : "osu");
    return r;
}

static val_row *new_row(val_run *r, int line)
{
    ts_grow(&r->rows, sizeof *r->rows, &r->cap, r->nrows + 1);
    val_row *w = &r->rows[r->nrows++];
    w->ip_time_us = w->ip_algbw = w->ip_busbw = NAN;
    w->wrong = w->ip_wrong = -1;
    w->line = line;
    return w;
}

#define MAXTOK 16

static int split(char *s, char **tok)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == MAXTOK) return MAXTOK + 1;
        tok[n++] = t;
    }
    return n;
}

/* An nccl-tests / rccl-tests row: size count type redop [root] then time algbw
 * busbw #wrong for out-of-place and (optionally) in-place. */
static int nccl_row(pctx *c, val_run *r, char *s)
{
    char *tok[MAXTOK];
    int n = split(s, tok);
    int root = n == 13 || n == 9;
    if (n != 13 && n != 12 && n != 9 && n != 8)
        return ts_err(c->err, c->errlen, "%s:%d: a table row has 8, 9, 12 or 13 columns, this one %d%s", c->name,
                      c->line, n > MAXTOK ? MAXTOK + 1 : n, n > MAXTOK ? " or more" : " (truncated?)");
    long long size, count, rt;
    val_row w;
    if (integer(c, "size", tok[0], 0, &size) < 0 || integer(c, "count", tok[1], 0, &count) < 0) return -1;
    if (og_dtype_from_name(tok[2]) < 0 && !isalpha((unsigned char)tok[2][0]))
        return bad(c, "type is not a type name: '%.40s'%s", tok[2], "");
    if (root && integer(c, "root", tok[4], 1, &rt) < 0) return -1;
    int k = 4 + root;
    if (num(c, "time", tok[k], &w.time_us) < 0 || num(c, "algbw", tok[k + 1], &w.algbw) < 0 ||
        num(c, "busbw", tok[k + 2], &w.busbw) < 0 || wrong_field(c, tok[k + 3], &w.wrong) < 0)
        return -1;
    val_row *o = new_row(r, c->line);
    o->size = size;
    o->count = count;
    o->time_us = w.time_us, o->algbw = w.algbw, o->busbw = w.busbw, o->wrong = w.wrong;
    if (n >= 12) {
        k += 4;
        if (num(c, "in-place time", tok[k], &o->ip_time_us) < 0 ||
            num(c, "in-place algbw", tok[k + 1], &o->ip_algbw) < 0 ||
            num(c, "in-place busbw", tok[k + 2], &o->ip_busbw) < 0 || wrong_field(c, tok[k + 3], &o->ip_wrong) < 0) {
            r->nrows--;
            return -1;
        }
    }
    return 0;
}

/* An OSU row: size then the figures of the header's columns (the first one,
 * latency in us or bandwidth in MB/s, is the one used). */
static int osu_row(pctx *c, val_run *r, char *s, int bw_mode)
{
    char *tok[MAXTOK];
    int n = split(s, tok);
    if (n < 2 || n > MAXTOK)
        return ts_err(c->err, c->errlen, "%s:%d: an OSU row has a size and at least one figure, this one %d field%s",
                      c->name, c->line, n, n == 1 ? " (truncated?)" : "s");
    long long size;
    double v, extra;
    if (integer(c, "size", tok[0], 0, &size) < 0 || num(c, bw_mode ? "bandwidth" : "latency", tok[1], &v) < 0)
        return -1;
    for (int i = 2; i < n; i++)
        if (num(c, "figure", tok[i], &extra) < 0) return -1;
    val_row *o = new_row(r, c->line);
    o->size = o->count = size;
    if (bw_mode) {
        o->algbw = v / 1e3;                     /* MB/s -> GB/s */
        o->time_us = v > 0 ? (double)size / v : 0; /* bytes / (MB/s) = us */
    } else {
        o->time_us = v;
        o->algbw = v > 0 ? (double)size / v / 1e3 : 0;
    }
    o->busbw = NAN; /* filled once the rank count is known */
    return 0;
}

/* The rank count an nccl-tests run implies: from "# Rank" lines when printed,
 * else from busbw/algbw of the row with the largest algbw. */
static int ranks_from_ratio(const val_run *r)
{
    const val_row *best = NULL;
    for (int i = 0; i < r->nrows; i++)
        if (!best || r->rows[i].algbw > best->algbw) best = &r->rows[i];
    if (!best || best->algbw < 0.1) return 0;
    double q = best->busbw / best->algbw, n;
    switch (r->coll) {
    case OG_ALLREDUCE: n = q < 2 ? 2 / (2 - q) : 0; break;
    case OG_ALLGATHER:
    case OG_REDUCESCATTER:
    case OG_ALLTOALL: n = q < 1 ? 1 / (1 - q) : 0; break;
    default: return 0;
    }
    long k = lround(n);
    return k >= 1 && k < 1000000 && fabs(n - k) < 0.05 * k ? (int)k : 0;
}

static void finish_run(val_run *r, const char *path, int rank_lines)
{
    if (r->coll == VAL_UNKNOWN) r->coll = coll_from_path(path);
    if (r->fmt == VAL_FMT_NCCL) {
        r->nranks = rank_lines > 0 ? rank_lines : ranks_from_ratio(r);
    } else {
        if (r->coll == VAL_P2P) r->nranks = 2;
        for (int i = 0; i < r->nrows; i++)
            r->rows[i].busbw = r->nranks ? r->rows[i].algbw * val_busbw_factor(r->coll, r->nranks) : NAN;
    }
}

/* "# OSU MPI Allreduce Latency Test v7.1" -> coll, bandwidth mode. */
static void osu_title(const char *line, val_run *r, int *bw_mode)
{
    char s[256];
    squash(line, s, sizeof s);
    *bw_mode = strstr(s, "bandwidth") != NULL;
    static const struct { const char *pat, *tool; int coll; } t[] = {
        {"allreduce", "osu_allreduce", OG_ALLREDUCE},     {"allgather", "osu_allgather", OG_ALLGATHER},
        {"reducescatter", "osu_reduce_scatter", OG_REDUCESCATTER}, {"alltoall", "osu_alltoall", OG_ALLTOALL},
        {"broadcast", "osu_bcast", OG_BROADCAST},          {"bcast", "osu_bcast", OG_BROADCAST},
        {"reduce", "osu_reduce", OG_REDUCE},               {"bidirectional", "osu_bibw", VAL_P2P},
        {"bandwidth", "osu_bw", VAL_P2P},                  {"latency", "osu_latency", VAL_P2P},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strstr(s, t[i].pat)) {
            r->coll = t[i].coll;
            snprintf(r->tool, sizeof r->tool, "%s", t[i].tool);
            return;
        }
}

/* "#  Rank  0..7 Group ..." or "#  Rank  3 Group ...": highest rank + 1. */
static int rank_line(const char *s, int cur)
{
    const char *p = strstr(s, "Rank");
    if (!p || strstr(s, "Ranks")) return cur;
    char *end;
    long a = strtol(p + 4, &end, 10);
    if (end == p + 4) return cur;
    long b = a;
    if (end[0] == '.' && end[1] == '.') b = strtol(end + 2, &end, 10);
    if (b < a || b > 1000000) return cur;
    return b + 1 > cur ? (int)b + 1 : cur;
}

int val_parse_stream(FILE *f, const char *name, val_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    pctx c = {name, 0, err, errlen};
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t got;
    val_run *r = NULL;
    int pending = VAL_UNKNOWN, bw_mode = 0, ranks = 0, rc = 0;
    while ((got = getline(&buf, &bufcap, f)) > 0) {
        c.line++;
        size_t l = (size_t)got;
        if (l > 4096) {
            rc = ts_err(err, errlen, "%s:%d: line longer than 4096 characters", name, c.line);
            break;
        }
        if (strlen(buf) != l) {
            rc = ts_err(err, errlen, "%s:%d: binary data (a NUL byte)", name, c.line);
            break;
        }
        while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r')) buf[--l] = 0;
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) continue;
        if (*s == '#') {
            if (strncmp(s, "# OSU", 5) == 0) {
                if (r) finish_run(r, name, ranks);
                r = new_run(out, VAL_FMT_OSU, VAL_UNKNOWN, c.line);
                osu_title(s, r, &bw_mode);
                ranks = 0;
            } else if (strstr(s, "Collective test starting:") || strstr(s, "nThread")) {
                char *p = strstr(s, "starting:");
                if (p) {
                    char word[64] = "";
                    sscanf(p + 9, " %63s", word);
                    pending = val_coll_from_name(word);
                }
                if (r && r->nrows) {
                    finish_run(r, name, ranks);
                    r = NULL;
                    ranks = 0;
                }
            } else if (strstr(s, "Avg bus bandwidth") || strstr(s, "Collective test concluded")) {
                if (r) r->complete = 1;
            } else if (!r || r->fmt == VAL_FMT_NCCL) {
                ranks = rank_line(s, ranks);
            }
            continue;
        }
        if (!isdigit((unsigned char)*s)) {
            rc = bad(&c, "not a table row or a comment: '%.40s'%s", s, "");
            break;
        }
        if (!r) {
            r = new_run(out, VAL_FMT_NCCL, pending, c.line);
            pending = VAL_UNKNOWN;
        }
        if (r->fmt == VAL_FMT_NCCL) {
            if (r->complete) {
                rc = bad(&c, "table row after the run's closing lines%s%s", "", "");
                break;
            }
            rc = nccl_row(&c, r, s);
        } else {
            rc = osu_row(&c, r, s, bw_mode);
        }
        if (rc < 0) break;
    }
    free(buf);
    if (rc == 0 && ferror(f)) rc = ts_err(err, errlen, "%s: read error", name);
    if (r) finish_run(r, name, ranks);
    for (int i = 0; rc == 0 && i < out->nruns; i++)
        if (out->runs[i].nrows == 0)
            rc = ts_err(err, errlen, "%s:%d: run without any table row (truncated?)", name, out->runs[i].first_line);
    if (rc == 0 && out->nruns == 0) rc = ts_err(err, errlen, "%s: no measurements (no table rows)", name);
    if (rc < 0) val_file_free(out);
    return rc;
}

int val_parse_file(const char *path, val_file *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        memset(out, 0, sizeof *out);
        return ts_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    }
    int rc = val_parse_stream(f, path, out, err, errlen);
    fclose(f);
    return rc;
}

void val_file_free(val_file *f)
{
    for (int i = 0; i < f->nruns; i++) free(f->runs[i].rows);
    free(f->runs);
    f->runs = NULL;
    f->nruns = 0;
    f->cap = 0;
}

int val_run_select(const val_run *r, int64_t minb, int64_t maxb, int half, int64_t *sizes, double *times)
{
    int k = 0, j = 0;
    for (int i = 0; i < r->nrows; i++) {
        const val_row *w = &r->rows[i];
        if (w->size <= 0 || !(w->time_us > 0) || w->size < minb || w->size > maxb) continue;
        if (j > 0 && w->size <= r->rows[i - 1].size) continue;
        if (half && (j++ & 1) != (half == 2)) continue;
        if (!half) j++;
        sizes[k] = w->size;
        times[k++] = w->time_us * 1e-6;
    }
    return k;
}

void val_run_set_ranks(val_run *r, int n)
{
    int scale = r->fmt == VAL_FMT_OSU && (r->coll == OG_ALLGATHER || r->coll == OG_ALLTOALL) && r->nranks != n;
    for (int i = 0; i < r->nrows; i++) {
        val_row *w = &r->rows[i];
        if (scale) {
            w->size *= n;
            w->count *= n;
            w->algbw = w->time_us > 0 ? (double)w->size / w->time_us / 1e3 : 0;
        }
        w->busbw = w->algbw * val_busbw_factor(r->coll, n);
    }
    r->nranks = n;
}
