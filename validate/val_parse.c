/* Parsers for measurement files: nccl-tests and rccl-tests tables (any
 * collective, several runs per file) and OSU micro-benchmark outputs. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_params.h"
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
    FILE *explain;
} pctx;

/* One parse decision, for --explain: "name:line: what". */
static void note(const pctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(const pctx *c, int line, const char *fmt, ...)
{
    if (!c->explain) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(c->explain, "# explain %s:%d: ", c->name, line);
    vfprintf(c->explain, fmt, ap);
    fputc('\n', c->explain);
    va_end(ap);
}

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

/* #wrong, or nccl-tests' older "error" column (before 2.11: the largest
 * absolute error as a float, "2e-07"): no count, -1 as for N/A. */
static int wrong_field(pctx *c, const char *tok, long *out)
{
    if (strcmp(tok, "N/A") == 0) return *out = -1, 0;
    if (strpbrk(tok, ".eE")) {
        double e;
        if (num(c, "error", tok, &e) < 0) return -1;
        return *out = -1, 0;
    }
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
    coll_nccl_env_init(&r->env);
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

/* The parse's state beyond one line: where the next run's collective comes
 * from, and the ranks and hosts of the "# Rank" lines before a table. */
typedef struct pstate {
    pctx c;
    const val_parse_opts *o;
    val_file *out;
    val_run *r;                 /* the run being read (NULL: none) */
    int hdr_coll, hdr_line;     /* "# Collective test starting:" */
    int hdr_gpus;               /* "# nThread 1 nGpus 8 ...": GPUs per thread (0: none seen) */
    int hdr_bound;              /* a comment line named --gpu-bind=closest (the launch) */
    coll_nccl_env hdr_env;      /* the NCCL settings read so far (val_run.env) */
    int hdr_env_line;
    int cmd_coll, cmd_line;     /* a binary name on a command line */
    int in_table;               /* a column header was seen since the last closing lines */
    int bw_mode, ranks;
    char **hosts;               /* distinct host names of the "# Rank" lines */
    int *per_host, nhosts;
    size_t hcap;
} pstate;

static void hosts_reset(pstate *p)
{
    for (int i = 0; i < p->nhosts; i++) free(p->hosts[i]);
    free(p->hosts);
    free(p->per_host);
    p->hosts = NULL, p->per_host = NULL, p->nhosts = 0, p->hcap = 0, p->ranks = 0;
}

/* "#  Rank  3 Group  0 Pid  1234 on  node-a device  3 [..] NVIDIA H100" (and
 * the older form without Group): the rank count and the host of each rank. */
static void rank_line(pstate *p, const char *s)
{
    const char *k = strstr(s, "Rank");
    if (!k || strstr(s, "Ranks")) return;
    char *end;
    long a = strtol(k + 4, &end, 10), b;
    if (end == k + 4 || a < 0) return;
    b = a;
    if (end[0] == '.' && end[1] == '.') b = strtol(end + 2, &end, 10);
    if (b < a || b > 1000000) return;
    if (b + 1 > p->ranks) p->ranks = (int)b + 1;
    const char *on = strstr(end, " on ");
    char host[256];
    if (!on || sscanf(on + 4, " %255s", host) != 1) return;
    int i = 0;
    while (i < p->nhosts && strcmp(p->hosts[i], host)) i++;
    if (i == p->nhosts) {
        size_t cap = p->hcap;
        ts_grow(&p->hosts, sizeof *p->hosts, &p->hcap, p->nhosts + 1);
        ts_grow(&p->per_host, sizeof *p->per_host, &cap, p->nhosts + 1);
        p->hosts[i] = ts_strdup(host);
        p->per_host[i] = 0;
        p->nhosts++;
    }
    p->per_host[i] += (int)(b - a + 1);
}

static void finish_run(pstate *p)
{
    val_run *r = p->r;
    if (!r) return;
    pctx *c = &p->c;
    if (r->coll == VAL_UNKNOWN) {
        r->coll = coll_from_path(c->name);
        if (r->coll != VAL_UNKNOWN)
            note(c, r->first_line, "run: collective %s from the file name", val_coll_name(r->coll));
        else
            note(c, r->first_line, "run: no collective in the output, on a command line or in the file name "
                                   "(give --op)");
    }
    if (r->fmt == VAL_FMT_NCCL) {
        if (p->ranks > 0) {
            r->nranks = p->ranks;
            note(c, r->first_line, "run: %d ranks from the '# Rank' lines", r->nranks);
        } else {
            r->nranks = ranks_from_ratio(r);
            if (r->nranks)
                note(c, r->first_line, "run: %d ranks from busbw/algbw of the largest size", r->nranks);
            else
                note(c, r->first_line, "run: rank count not printed and not implied by busbw/algbw (give --gpus)");
        }
        r->nhosts = p->nhosts;
        r->ppn = 0;
        for (int i = 0; i < p->nhosts; i++) {
            if (i == 0) r->ppn = p->per_host[0];
            else if (p->per_host[i] != r->ppn) r->ppn = 0;
        }
        if (p->nhosts)
            note(c, r->first_line, "run: %s-node: %d host%s (%s%s), %s", p->nhosts > 1 ? "inter" : "intra",
                 p->nhosts, p->nhosts > 1 ? "s" : "", p->hosts[0], p->nhosts > 1 ? ", ..." : "",
                 r->ppn ? "ranks per host equal" : "uneven ranks per host");
        else
            note(c, r->first_line, "run: no host names printed: scope follows the cluster's placement of the ranks");
    } else {
        if (r->coll == VAL_P2P) r->nranks = 2;
        for (int i = 0; i < r->nrows; i++)
            r->rows[i].busbw = r->nranks ? r->rows[i].algbw * val_busbw_factor(r->coll, r->nranks) : NAN;
    }
    note(c, r->first_line, "run: %d row%s (lines %d..%d)%s", r->nrows, r->nrows == 1 ? "" : "s", r->first_line,
         r->nrows ? r->rows[r->nrows - 1].line : r->first_line,
         r->fmt == VAL_FMT_NCCL && !r->complete ? ", no closing lines (truncated?)" : "");
    p->r = NULL;
    hosts_reset(p);
}

/* A new nccl-tests run at this line: its collective from the header, else the
 * command line, else the user's --op (else, once finished, the file name). */
static val_run *start_nccl_run(pstate *p)
{
    pctx *c = &p->c;
    int coll = VAL_UNKNOWN;
    if (p->hdr_coll != VAL_UNKNOWN) {
        coll = p->hdr_coll;
        note(c, c->line, "run: collective %s from the header at line %d", val_coll_name(coll), p->hdr_line);
    } else if (p->cmd_coll != VAL_UNKNOWN) {
        coll = p->cmd_coll;
        note(c, c->line, "run: collective %s from the binary name at line %d", val_coll_name(coll), p->cmd_line);
    } else if (p->o->coll != VAL_UNKNOWN) {
        coll = p->o->coll;
        note(c, c->line, "run: collective %s from --op", val_coll_name(coll));
    }
    p->hdr_coll = VAL_UNKNOWN;
    p->r = new_run(p->out, VAL_FMT_NCCL, coll, c->line);
    p->r->gpus_per_proc = p->hdr_gpus;
    if (p->hdr_gpus) note(c, c->line, "run: %d GPUs per thread from the nGpus header", p->hdr_gpus);
    p->r->proxy_bound = p->hdr_bound;
    p->r->env = p->hdr_env;
    p->r->env_line = p->hdr_env_line;
    if (p->hdr_env_line) {
        char d[512];
        coll_nccl_env_describe(&p->hdr_env, d, sizeof d);
        note(c, c->line, "run: NCCL settings from line %d on: %s%s%s", p->hdr_env_line, d[0] ? d : "none modelled",
             p->hdr_env.ignored[0] ? "; not modelled: " : "", p->hdr_env.ignored);
    }
    if (p->hdr_bound) note(c, c->line, "run: launch bound next to the GPUs (--gpu-bind=closest in the header)");
    return p->r;
}

/* A binary of nccl-tests / rccl-tests on a command line ("mpirun -np 16
 * ./build/all_reduce_perf -b 8 -e 8G"): its collective, else VAL_UNKNOWN. */
static int binary_coll(const char *s, char *name, size_t n)
{
    char buf[4097];
    snprintf(buf, sizeof buf, "%s", s);
    char *tok[4096 / 2 + 1];
    int nt = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \t'\"=;|&", &save); t && nt < 2048;
         t = strtok_r(NULL, " \t'\"=;|&", &save))
        tok[nt++] = t;
    for (int i = 0; i < nt; i++) {
        char *b = strrchr(tok[i], '/');
        b = b ? b + 1 : tok[i];
        char *perf = strstr(b, "_perf");
        if (!perf || perf == b || (perf[5] && strcmp(perf + 5, "_mpi"))) continue;
        perf[5] = 0;
        snprintf(name, n, "%s", b);
        return val_coll_from_name(b);
    }
    return VAL_UNKNOWN - 1;
}

/* mpirun --tag-output's "[1,0]<stdout>:" and srun -l's "0: " in front of a line. */
static char *strip_prefix(char *s)
{
    if (*s == '[') {
        char *q = s + 1;
        while (isdigit((unsigned char)*q) || *q == ',') q++;
        if (strncmp(q, "]<stdout>:", 10) == 0 || strncmp(q, "]<stderr>:", 10) == 0) s = q + 10;
    } else if (isdigit((unsigned char)*s)) {
        char *q = s;
        while (isdigit((unsigned char)*q)) q++;
        if (q[0] == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == 0)) s = q + 1;
    }
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* Does a launch line bind ranks next to their GPUs? Slurm spells it
 * --gpu-bind=closest, --gpu-bind closest or --gpu-bind=verbose,closest. */
static int names_gpu_bind_closest(const char *s)
{
    for (const char *q = strstr(s, "--gpu-bind"); q; q = strstr(q + 1, "--gpu-bind")) {
        q += strlen("--gpu-bind");
        if (*q == '=') q++;
        else if (*q == ' ' || *q == '\t') while (*q == ' ' || *q == '\t') q++;
        else continue;
        size_t n = strcspn(q, " \t\r\n\"'");
        for (const char *w = q; w < q + n;) {
            size_t k = strcspn(w, ",");
            if (k > (size_t)(q + n - w)) k = (size_t)(q + n - w);
            if (k == 7 && strncmp(w, "closest", 7) == 0) return 1;
            w += k + 1;
        }
    }
    return 0;
}

/* ---- NCCL settings in a log (val_run.env) ---- */

/* One NAME=VALUE: recorded (only NCCL_ names), or -1 with "file:line: ..." */
static int env_item(pstate *p, const char *name, size_t nl, const char *value, size_t vl)
{
    pctx *c = &p->c;
    char n[128], v[1024], where[600];
    if (nl < 6 || nl >= sizeof n || strncmp(name, "NCCL_", 5) != 0) return 0;
    snprintf(n, sizeof n, "%.*s", (int)nl, name);
    snprintf(v, sizeof v, "%.*s", (int)(vl < sizeof v ? vl : sizeof v - 1), value);
    snprintf(where, sizeof where, "%s:%d", c->name, c->line);
    if (coll_nccl_env_set(&p->hdr_env, n, v, where, c->err, c->errlen) < 0) return -1;
    if (!p->hdr_env_line) p->hdr_env_line = c->line;
    note(c, c->line, "NCCL setting %s=%s", n, v);
    return 0;
}

/* A value at s: "quoted text" (either quote) or up to a blank; *len its
 * length, the return its start; *after the first character after it. */
static const char *env_value(const char *s, size_t *len, const char **after)
{
    if (*s == '"' || *s == '\'') {
        const char *e = strchr(s + 1, *s);
        if (!e) e = s + strlen(s);
        *len = (size_t)(e - s - 1);
        *after = *e ? e + 1 : e;
        return s + 1;
    }
    *len = strcspn(s, " \t");
    *after = s + *len;
    return s;
}

/* NAME=VALUE at s (NAME of A-Z, 0-9, _): 1 and the parts, else 0. */
static int env_assign(const char *s, const char **name, size_t *nl, const char **val, size_t *vl, const char **after)
{
    size_t k = 0;
    while (isupper((unsigned char)s[k]) || isdigit((unsigned char)s[k]) || s[k] == '_') k++;
    if (!k || s[k] != '=') return 0;
    *name = s, *nl = k;
    *val = env_value(s + k + 1, vl, after);
    return 1;
}

static int is_blank_before(const char *line, const char *q)
{
    return q == line || q[-1] == ' ' || q[-1] == '\t' || q[-1] == '#';
}

/* mpirun's "-x NAME=VALUE" (and Slurm's/others' "--export NAME=VALUE",
 * "--env NAME=VALUE") anywhere on the line. */
static int env_flags(pstate *p, const char *line)
{
    static const char *const flags[] = {"-x ", "--env ", "--env=", "-genv "};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        size_t fl = strlen(flags[f]);
        for (const char *q = strstr(line, flags[f]); q; q = strstr(q + 1, flags[f])) {
            if (!is_blank_before(line, q)) continue;
            const char *s = q + fl, *name, *val, *after;
            while (*s == ' ') s++;
            size_t nl, vl;
            if (!strcmp(flags[f], "-genv ")) { /* Intel MPI / MPICH: -genv NAME VALUE */
                size_t k = strcspn(s, " \t=");
                if (s[k] == ' ' || s[k] == '\t') {
                    const char *v = s + k;
                    while (*v == ' ' || *v == '\t') v++;
                    val = env_value(v, &vl, &after);
                    if (env_item(p, s, k, val, vl) < 0) return -1;
                    continue;
                }
            }
            if (env_assign(s, &name, &nl, &val, &vl, &after) && env_item(p, name, nl, val, vl) < 0) return -1;
        }
    }
    return 0;
}

/* Every NAME=VALUE on the line (a "# ENV:" line, or the assignments that
 * open a shell command: "NCCL_ALGO=Ring mpirun ..." and "export A=1 B=2"). */
static int env_words(pstate *p, const char *s, int leading_only)
{
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        const char *name, *val, *after;
        size_t nl, vl;
        if (env_assign(s, &name, &nl, &val, &vl, &after)) {
            if (env_item(p, name, nl, val, vl) < 0) return -1;
            s = after;
            continue;
        }
        if (leading_only && (strncmp(s, "export ", 7) == 0 || strncmp(s, "env ", 4) == 0)) {
            s += strcspn(s, " ");
            continue;
        }
        if (!leading_only && *s == '(') break; /* "# ENV:" items, then a note in parentheses */
        if (!leading_only) {
            pctx *c = &p->c;
            return ts_err(c->err, c->errlen, "%s:%d: '# ENV:' item '%.*s': want NAME=VALUE", c->name, c->line,
                          (int)strcspn(s, " \t"), s);
        }
        break;
    }
    return 0;
}

/* NCCL_DEBUG=INFO's "NCCL INFO NCCL_X set by environment to V" (NCCL_PARAM
 * integers print "V."). */
static int env_info(pstate *p, const char *s)
{
    const char *q = strstr(s, "NCCL INFO ");
    if (!q) return 0;
    q += 10;
    while (*q == ' ') q++;
    const char *by = strstr(q, " set by environment to ");
    if (!by || strncmp(q, "NCCL_", 5) != 0) return 0;
    size_t nl = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (q + nl != by) return 0;
    const char *v = by + strlen(" set by environment to ");
    size_t vl = strlen(v);
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\r')) vl--;
    if (vl > 1 && v[vl - 1] == '.' && strspn(v, "-0123456789") == vl - 1) vl--;
    return env_item(p, q, nl, v, vl);
}

/* A comment line: titles, headers, rank lines, closing lines. */
static int comment_line(pstate *p, char *s)
{
    pctx *c = &p->c;
    /* the run's NCCL settings: "# ENV: NCCL_X=V ...", "-x NCCL_X=V" on a
     * transcribed command line, an NCCL INFO line kept in a comment */
    const char *h = s + 1;
    while (*h == ' ' || *h == '\t') h++;
    if (strncmp(h, "ENV:", 4) == 0) {
        if (env_words(p, h + 4, 0) < 0) return -1;
    } else if (env_flags(p, s) < 0 || env_info(p, s) < 0)
        return -1;
    /* the launch line (srun ... --gpu-bind=closest): where the ranks' host
     * threads run, which the lock-step waits depend on (coll_set_proxy_bound) */
    if (names_gpu_bind_closest(s)) p->hdr_bound = 1;
    if (strncmp(s, "# OSU", 5) == 0) {
        finish_run(p);
        p->r = new_run(p->out, VAL_FMT_OSU, VAL_UNKNOWN, c->line);
        osu_title(s, p->r, &p->bw_mode);
        note(c, c->line, "run: OSU %s (%s) from the title", p->r->tool, val_coll_name(p->r->coll));
        p->in_table = 0;
    } else if (strstr(s, "Collective test starting:") || strstr(s, "nThread")) {
        char *q = strstr(s, "starting:");
        if (q) {
            char word[64] = "";
            sscanf(q + 9, " %63s", word);
            p->hdr_coll = val_coll_from_name(word);
            p->hdr_line = c->line;
            if (p->hdr_coll == VAL_UNKNOWN) note(c, c->line, "header names an unknown collective '%s'", word);
        }
        char *g = strstr(s, "nGpus");
        int ng = 0;
        if (g && sscanf(g + 5, " %d", &ng) == 1 && ng > 0 && ng <= 1024) p->hdr_gpus = ng;
        else if (g) note(c, c->line, "header's nGpus is not a count in 1..1024: ignored");
        if (p->r && p->r->nrows) finish_run(p);
        p->in_table = 0;
    } else if (strstr(s, "Avg bus bandwidth") || strstr(s, "Collective test concluded")) {
        if (p->r) p->r->complete = 1;
        p->in_table = 0;
    } else if (!p->r || p->r->fmt == VAL_FMT_NCCL) {
        if (strstr(s, "size") && strstr(s, "count") && strstr(s, "type")) p->in_table = 1;
        else rank_line(p, s);
    }
    return 0;
}

/* A line that is not part of a table: skipped (a command line names the
 * collective of the runs that follow it). */
static int other_line(pstate *p, const char *s)
{
    pctx *c = &p->c;
    char bin[64];
    /* the run's NCCL settings on a launch line or an NCCL INFO line */
    if (env_info(p, s) < 0 || env_flags(p, s) < 0 || env_words(p, s, 1) < 0) return -1;
    int coll = binary_coll(s, bin, sizeof bin);
    if (coll >= VAL_UNKNOWN) {
        if (p->r && p->r->nrows) finish_run(p);
        p->cmd_coll = coll, p->cmd_line = c->line;
        note(c, c->line, "command line: binary %s_perf -> %s", bin, coll == VAL_UNKNOWN ? "unknown collective"
                                                                                         : val_coll_name(coll));
        p->in_table = 0;
    }
    p->out->nskipped++;
    note(c, c->line, "skipped, not part of a table: '%.60s'", s);
    return 0;
}

/* A line starting with a digit: a row of the open table, or of a new table
 * right after a command line; anything else is skipped. */
static int digit_line(pstate *p, char *s)
{
    pctx *c = &p->c;
    val_run *r = p->r;
    int open = r && !(r->fmt == VAL_FMT_NCCL && r->complete);
    if (r && r->fmt == VAL_FMT_OSU) return osu_row(c, r, s, p->bw_mode);
    if (open || p->in_table) {
        if (!open) {
            finish_run(p);
            r = start_nccl_run(p);
        }
        return nccl_row(c, r, s);
    }
    /* no table open: a row starts one, anything else is skipped */
    char copy[4097], *err = c->err;
    snprintf(copy, sizeof copy, "%s", s);
    val_run probe = {.coll = VAL_UNKNOWN};
    char scratch[8];
    c->err = scratch;
    size_t el = c->errlen;
    c->errlen = sizeof scratch;
    int rc = nccl_row(c, &probe, copy);
    c->err = err, c->errlen = el;
    free(probe.rows);
    if (rc < 0) {
        p->out->nskipped++;
        note(c, c->line, "skipped, not a table row and no table open: '%.60s'", s);
        return 0;
    }
    finish_run(p);
    r = start_nccl_run(p);
    return nccl_row(c, r, s);
}

int val_parse_stream_opts(FILE *f, const char *name, const val_parse_opts *o, val_file *out, char *err,
                          size_t errlen)
{
    static const val_parse_opts defaults = {VAL_UNKNOWN, NULL};
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    pstate p = {.c = {name, 0, err, errlen, o ? o->explain : NULL}, .o = o ? o : &defaults, .out = out,
                .hdr_coll = VAL_UNKNOWN, .cmd_coll = VAL_UNKNOWN};
    coll_nccl_env_init(&p.hdr_env);
    pctx *c = &p.c;
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&buf, &bufcap, f)) > 0) {
        c->line++;
        size_t l = (size_t)got;
        if (l > 4096) {
            rc = ts_err(err, errlen, "%s:%d: line longer than 4096 characters", name, c->line);
            break;
        }
        if (strlen(buf) != l) {
            rc = ts_err(err, errlen, "%s:%d: binary data (a NUL byte)", name, c->line);
            break;
        }
        while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r')) buf[--l] = 0;
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        s = strip_prefix(s);
        if (!*s) continue;
        if (*s == '#') rc = comment_line(&p, s);
        else if (isdigit((unsigned char)*s)) rc = digit_line(&p, s);
        else rc = other_line(&p, s);
        if (rc < 0) break;
    }
    free(buf);
    if (rc == 0 && ferror(f)) rc = ts_err(err, errlen, "%s: read error", name);
    finish_run(&p);
    hosts_reset(&p);
    for (int i = 0; rc == 0 && i < out->nruns; i++)
        if (out->runs[i].nrows == 0)
            rc = ts_err(err, errlen, "%s:%d: run without any table row (truncated?)", name, out->runs[i].first_line);
    if (rc == 0 && out->nruns == 0)
        rc = ts_err(err, errlen, "%s: no measurements (no table rows%s)", name,
                    out->nskipped ? "; every line was skipped: --explain lists them" : "");
    if (rc == 0 && out->nskipped) note(c, c->line, "%d line(s) skipped in all", out->nskipped);
    if (rc < 0) val_file_free(out);
    return rc;
}

int val_parse_stream(FILE *f, const char *name, val_file *out, char *err, size_t errlen)
{
    return val_parse_stream_opts(f, name, NULL, out, err, errlen);
}

int val_parse_file_opts(const char *path, const val_parse_opts *o, val_file *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        memset(out, 0, sizeof *out);
        return ts_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    }
    int rc = val_parse_stream_opts(f, path, o, out, err, errlen);
    fclose(f);
    return rc;
}

int val_parse_file(const char *path, val_file *out, char *err, size_t errlen)
{
    return val_parse_file_opts(path, NULL, out, err, errlen);
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
