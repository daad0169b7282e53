/* Importer for SimGrid SMPI time-independent traces: "<rank> <action> <args>"
 * lines, one file for all ranks or one per rank listed in an index file. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define MAXTOK 4096
#define MAXRANKS (1 << 20)
#define NASYNC 8              /* streams 1..NASYNC carry outstanding isend/irecv */
#define COLLTAG (1 << 30)     /* tags of the sends that gather/scatter become */

typedef struct line {
    int rank;
    int file;
    long lineno;
    int ntok;
    char **tok; /* tok[0] = action */
} line;

typedef struct pend {  /* an outstanding isend/irecv */
    int src, dst, tag, op, stream;
} pend;

typedef struct rstate {
    int dts;           /* default datatype size (init) */
    int last;          /* last op on stream 0, -1 none */
    int npend;
    size_t pcap;
    pend *pend;
    int collseq;       /* gather/scatter counter, for their tags */
} rstate;

typedef struct ctx {
    char *const *files;
    int nfiles;
    line *lines;
    size_t nlines, cap;
    char *err;
    size_t errlen;
    og_graph *g;
    rstate *rs;
    int world;
} ctx;

static int bad(ctx *c, const line *l, const char *fmt, const char *a)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a);
    return ts_err(c->err, c->errlen, "%s:%ld: rank %d: %s", c->files[l->file], l->lineno, l->rank,
                  msg);
}

/* A non-negative count (doubles such as 1e6 allowed, truncated like SMPI). */
static int num(ctx *c, const line *l, int i, double max, double *out)
{
    if (i >= l->ntok) return bad(c, l, "'%s' needs more arguments", l->tok[0]);
    char *end;
    errno = 0;
    double d = strtod(l->tok[i], &end);
    if (end == l->tok[i] || *end || errno || !isfinite(d) || d < 0 || d > max) {
        char m[160];
        snprintf(m, sizeof m, "'%.40s': argument %d '%.40s' is not a number in [0, %g]", l->tok[0], i,
                 l->tok[i], max);
        return bad(c, l, "%s", m);
    }
    *out = d;
    return 0;
}

static int irank(ctx *c, const line *l, int i, int *out)
{
    double d;
    if (num(c, l, i, INT_MAX, &d) < 0) return -1;
    if ((int)d >= c->world) {
        char m[96];
        snprintf(m, sizeof m, "rank %d out of range (the trace has %d ranks)", (int)d, c->world);
        return bad(c, l, "%s", m);
    }
    *out = (int)d;
    return 0;
}

/* SMPI datatype ids (smpi_replay's decode order): 0 double, 1 int, 2 char,
 * 3 short, 4 long, 5 float, 6 byte. Absent: the rank's default (init). */
static int dtsize(ctx *c, const line *l, int i, int *out)
{
    static const int sz[] = {8, 4, 1, 2, 8, 4, 1};
    if (i >= l->ntok) {
        *out = c->rs[l->rank].dts;
        return 0;
    }
    char *end;
    long v = strtol(l->tok[i], &end, 10);
    if (end == l->tok[i] || *end || v < 0 || v > 6) return bad(c, l, "unknown datatype id '%.40s' (valid: 0-6)", l->tok[i]);
    *out = sz[v];
    return 0;
}

static og_dtype dtype_of(int size)
{
    return size == 8 ? OG_F64 : size == 4 ? OG_F32 : size == 2 ? OG_F16 : OG_U8;
}

static int64_t bytes_of(ctx *c, const line *l, double count, int dts, int64_t *out)
{
    double b = floor(count) * dts;
    if (b > (double)OG_MAX_BYTES) return bad(c, l, "message of %s bytes is absurd", "over 2^50");
    *out = (int64_t)b;
    return 0;
}

/* Ops on stream 0 follow program order; async ops hang off the program point. */
static og_op *prog_op(ctx *c, int r, og_kind k)
{
    og_op *op = og_add_op(c->g, r, k, 0);
    c->rs[r].last = op->id;
    return op;
}

static og_op *async_op(ctx *c, int r, og_kind k, int src, int dst, int tag)
{
    rstate *s = &c->rs[r];
    int used[NASYNC + 1] = {0};
    for (int i = 0; i < s->npend; i++) used[s->pend[i].stream] = 1;
    int st = 1;
    while (st < NASYNC && used[st]) st++;
    og_op *op = og_add_op(c->g, r, k, st);
    if (s->last >= 0) og_add_dep(op, s->last);
    ts_grow(&s->pend, sizeof *s->pend, &s->pcap, (size_t)s->npend + 1);
    s->pend[s->npend++] = (pend){src, dst, tag, op->id, st};
    return op;
}

/* A zero-length op on stream 0 that waits for the matching requests (all when all). */
static int wait_op(ctx *c, const line *l, int all, int src, int dst, int tag)
{
    rstate *s = &c->rs[l->rank];
    og_op *w = og_compute_fixed(c->g, l->rank, 0, 0);
    og_set_label(c->g, w, all ? "waitall" : "wait");
    s->last = w->id;
    int k = 0, found = 0;
    for (int i = 0; i < s->npend; i++) {
        pend *p = &s->pend[i];
        if (all || (!found && p->src == src && p->dst == dst && p->tag == tag)) {
            og_add_dep(w, p->op);
            found = 1;
        } else {
            s->pend[k++] = *p;
        }
    }
    s->npend = k;
    (void)found; /* a wait for an unknown request waits for nothing, as in SMPI */
    return 0;
}

static int world_coll(ctx *c, const line *l, og_coll t, int64_t bytes, int dts, int root)
{
    og_op *op = og_collective(c->g, l->rank, 0, t, 0, bytes, dtype_of(dts));
    op->root = root;
    og_set_label(c->g, op, l->tok[0]);
    c->rs[l->rank].last = op->id;
    return 0;
}

/* gather/scatter as point-to-point messages to/from the root. */
static int rooted_p2p(ctx *c, const line *l, int to_root, int root, const double *counts, int dts)
{
    int r = l->rank, seq = c->rs[r].collseq++;
    for (int p = 0; p < c->world; p++) {
        if (p == root) continue;
        int64_t b = 0;
        if (bytes_of(c, l, counts[p], dts, &b) < 0) return -1;
        if (r == root) {
            og_op *op = to_root ? og_recv(c->g, r, 0, p, b, COLLTAG + seq) : og_send(c->g, r, 0, p, b, COLLTAG + seq);
            og_set_label(c->g, op, l->tok[0]);
            c->rs[r].last = op->id;
        } else if (r == p) {
            og_op *op = to_root ? og_send(c->g, r, 0, root, b, COLLTAG + seq) : og_recv(c->g, r, 0, root, b, COLLTAG + seq);
            og_set_label(c->g, op, l->tok[0]);
            c->rs[r].last = op->id;
        }
    }
    return 0;
}

static int action(ctx *c, const line *l)
{
    const char *a = l->tok[0];
    int r = l->rank, P = c->world;
    double x, y;
    int dts, peer, root = 0;
    int64_t b;
    if (!strcmp(a, "init")) {
        c->rs[r].dts = l->ntok > 1 ? 8 : 1;
        return 0;
    }
    if (!strcmp(a, "finalize") || !strcmp(a, "comm_size") || !strcmp(a, "comm_split") ||
        !strcmp(a, "comm_dup") || !strcmp(a, "location") || !strcmp(a, "test"))
        return 0;
    if (!strcmp(a, "compute")) {
        if (num(c, l, 1, OG_MAX_FLOPS, &x) < 0) return -1;
        og_op *op = og_compute(c->g, r, 0, x, 0);
        og_set_label(c->g, op, "compute");
        c->rs[r].last = op->id;
        return 0;
    }
    if (!strcmp(a, "sleep")) {
        if (num(c, l, 1, OG_MAX_DURATION, &x) < 0) return -1;
        og_op *op = og_compute_fixed(c->g, r, 0, x);
        og_set_label(c->g, op, "sleep");
        c->rs[r].last = op->id;
        return 0;
    }
    int isend = !strcmp(a, "isend"), irecv = !strcmp(a, "irecv");
    if (!strcmp(a, "send") || !strcmp(a, "recv") || isend || irecv) {
        int send = a[0] == 's' || isend;
        /* SimGrid before 3.20 wrote no tag: '<peer> <size>' (tag 0) */
        int old = l->ntok == 3;
        y = 0;
        if (irank(c, l, 1, &peer) < 0 || (!old && num(c, l, 2, INT_MAX, &y) < 0) || num(c, l, old ? 2 : 3, 1e300, &x) < 0 ||
            dtsize(c, l, old ? 3 : 4, &dts) < 0 || bytes_of(c, l, x, dts, &b) < 0)
            return -1;
        if (peer == r) return bad(c, l, "'%s' to itself", a);
        og_op *op;
        if (isend || irecv)
            op = async_op(c, r, send ? OG_SEND : OG_RECV, send ? r : peer, send ? peer : r, (int)y);
        else
            op = prog_op(c, r, send ? OG_SEND : OG_RECV);
        op->peer = peer;
        op->bytes = b;
        op->tag = (int)y;
        op->duration = -1;
        return 0;
    }
    if (!strcmp(a, "wait")) {
        int src, dst;
        if (l->ntok == 1) { /* older SimGrid: the most recent request */
            const rstate *s = &c->rs[r];
            if (!s->npend) return wait_op(c, l, 0, -1, -1, -1);
            const pend *p = &s->pend[s->npend - 1];
            return wait_op(c, l, 0, p->src, p->dst, p->tag);
        }
        if (irank(c, l, 1, &src) < 0 || irank(c, l, 2, &dst) < 0 || num(c, l, 3, INT_MAX, &y) < 0) return -1;
        return wait_op(c, l, 0, src, dst, (int)y);
    }
    if (!strcmp(a, "waitall")) return wait_op(c, l, 1, 0, 0, 0);
    if (!strcmp(a, "sendrecv")) {
        int src, dt2;
        if (num(c, l, 1, 1e300, &x) < 0 || irank(c, l, 2, &peer) < 0 || num(c, l, 3, 1e300, &y) < 0 ||
            irank(c, l, 4, &src) < 0 || dtsize(c, l, 5, &dts) < 0 || dtsize(c, l, 6, &dt2) < 0)
            return -1;
        if (peer == r || src == r) return bad(c, l, "'%s' to itself", a);
        int64_t b2;
        if (bytes_of(c, l, x, dts, &b) < 0 || bytes_of(c, l, y, dt2, &b2) < 0) return -1;
        og_op *s = async_op(c, r, OG_SEND, r, peer, 0);
        s->peer = peer, s->bytes = b, s->tag = 0, s->duration = -1;
        og_op *rv = prog_op(c, r, OG_RECV);
        rv->peer = src, rv->bytes = b2, rv->tag = 0, rv->duration = -1;
        return wait_op(c, l, 0, r, peer, 0);
    }
    if (!strcmp(a, "barrier")) return world_coll(c, l, OG_BARRIER, 0, 1, 0);
    if (!strcmp(a, "bcast")) {
        if (num(c, l, 1, 1e300, &x) < 0) return -1;
        if (l->ntok > 2 && irank(c, l, 2, &root) < 0) return -1;
        if (dtsize(c, l, 3, &dts) < 0 || bytes_of(c, l, x, dts, &b) < 0) return -1;
        return world_coll(c, l, OG_BROADCAST, b, dts, root);
    }
    if (!strcmp(a, "reduce") || !strcmp(a, "allreduce") || !strcmp(a, "scan") || !strcmp(a, "exscan")) {
        int red = !strcmp(a, "reduce");
        if (num(c, l, 1, 1e300, &x) < 0 || num(c, l, 2, OG_MAX_FLOPS, &y) < 0) return -1;
        if (red && l->ntok > 3 && irank(c, l, 3, &root) < 0) return -1;
        if (dtsize(c, l, red ? 4 : 3, &dts) < 0 || bytes_of(c, l, x, dts, &b) < 0) return -1;
        return world_coll(c, l, red ? OG_REDUCE : OG_ALLREDUCE, b, dts, root);
    }
    if (!strcmp(a, "alltoall") || !strcmp(a, "allgather")) {
        if (num(c, l, 1, 1e300, &x) < 0 || num(c, l, 2, 1e300, &y) < 0 || dtsize(c, l, 3, &dts) < 0 ||
            bytes_of(c, l, x * P, dts, &b) < 0)
            return -1;
        return world_coll(c, l, a[3] == 't' ? OG_ALLTOALL : OG_ALLGATHER, b, dts, 0);
    }
    if (!strcmp(a, "alltoallv")) {
        /* send_buf_size sendcounts x P recv_buf_size recvcounts x P [st] [rt] */
        if (l->ntok < 2 * P + 3) return bad(c, l, "'%s' needs 2 x P + 2 arguments", a);
        if (dtsize(c, l, 2 * P + 3, &dts) < 0) return -1;
        og_op *op = og_collective(c->g, r, 0, OG_ALLTOALLV, 0, 0, dtype_of(dts));
        op->vbytes = ts_calloc((size_t)P, sizeof *op->vbytes);
        for (int p = 0; p < P; p++) {
            if (num(c, l, 2 + p, 1e300, &x) < 0 || bytes_of(c, l, x, dts, &op->vbytes[p]) < 0) return -1;
            op->bytes += op->vbytes[p];
        }
        if (op->bytes > OG_MAX_BYTES) return bad(c, l, "'%s' total is absurd", a);
        og_set_label(c->g, op, a);
        c->rs[r].last = op->id;
        return 0;
    }
    if (!strcmp(a, "allgatherv") || !strcmp(a, "reducescatter")) {
        /* allgatherv send_size recvcounts x P; reducescatter recvcounts x P comp */
        int first = a[0] == 'a' ? 2 : 1;
        if (l->ntok < first + P) return bad(c, l, "'%s' needs P counts", a);
        double sum = 0;
        for (int p = 0; p < P; p++) {
            if (num(c, l, first + p, 1e300, &x) < 0) return -1;
            sum += floor(x);
        }
        int dpos = a[0] == 'a' ? first + P : first + P + 1;
        if (dtsize(c, l, dpos, &dts) < 0 || bytes_of(c, l, sum, dts, &b) < 0) return -1;
        return world_coll(c, l, a[0] == 'a' ? OG_ALLGATHER : OG_REDUCESCATTER, b, dts, 0);
    }
    if (!strcmp(a, "gather") || !strcmp(a, "scatter")) {
        if (num(c, l, 1, 1e300, &x) < 0 || num(c, l, 2, 1e300, &y) < 0) return -1;
        if (l->ntok > 3 && irank(c, l, 3, &root) < 0) return -1;
        if (dtsize(c, l, 4, &dts) < 0) return -1;
        double *cnt = ts_malloc((size_t)P * sizeof *cnt);
        for (int p = 0; p < P; p++) cnt[p] = a[0] == 'g' ? x : y;
        int rc = rooted_p2p(c, l, a[0] == 'g', root, cnt, dts);
        free(cnt);
        return rc;
    }
    if (!strcmp(a, "gatherv") || !strcmp(a, "scatterv")) {
        int g = a[0] == 'g', first = g ? 2 : 1;
        if (l->ntok < first + P) return bad(c, l, "'%s' needs P counts", a);
        double *cnt = ts_malloc((size_t)P * sizeof *cnt);
        int rc = 0;
        for (int p = 0; p < P && !rc; p++) rc = num(c, l, first + p, 1e300, &cnt[p]);
        int rpos = g ? first + P : first + P + 1;
        if (!rc && l->ntok > rpos) rc = irank(c, l, rpos, &root);
        if (!rc) rc = dtsize(c, l, rpos + 1, &dts);
        if (!rc) rc = rooted_p2p(c, l, g, root, cnt, dts);
        free(cnt);
        return rc;
    }
    return bad(c, l, "unknown action '%.40s' (valid: init, finalize, compute, sleep, send, recv, "
                     "isend, irecv, test, wait, waitall, sendrecv, barrier, bcast, reduce, allreduce, "
                     "scan, exscan, alltoall, alltoallv, allgather, allgatherv, gather, gatherv, "
                     "scatter, scatterv, reducescatter, comm_size, comm_split, comm_dup, location; any case)",
               a);
}

/* Split s in place into whitespace-separated tokens. */
static int split(char *s, char **tok, int max)
{
    int n = 0;
    for (char *p = strtok(s, " \t"); p; p = strtok(NULL, " \t")) {
        if (n == max) return -1;
        tok[n++] = p;
    }
    return n;
}

static char *resolve(const char *index, const char *entry);

/* An index entry without surrounding blanks (NULL: a blank line, or a
 * '#' comment). */
static char *entry_of(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t k = strlen(s);
    while (k && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r')) s[--k] = 0;
    return *s && *s != '#' ? s : NULL;
}

/* The first index entry of head (NUL-terminated), copied into out; 0 when none. */
static int first_entry(const char *head, char *out, size_t n)
{
    for (const char *p = head; *p;) {
        size_t k = strcspn(p, "\n");
        if (k < n) {
            memcpy(out, p, k);
            out[k] = 0;
            char *e = entry_of(out);
            if (e) {
                if (strchr(e, ' ') || strchr(e, '\t')) return 0;
                memmove(out, e, strlen(e) + 1);
                return 1;
            }
        }
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

/* An index file (split_traces, smpi_replay.txt) lists one per-rank trace
 * file a line, relative to the index's folder (or its parent). */
static int is_index(const char *path)
{
    char head[1024], first[1024];
    size_t n = tr_head(path, head, sizeof head - 1);
    head[n] = 0;
    if (!n || !first_entry(head, first, sizeof first)) return 0;
    char *p = resolve(path, first);
    int ok = access(p, R_OK) == 0;
    free(p);
    return ok;
}

/* Resolve an index entry: relative to the index's folder, then its parent, then as given. */
static char *resolve(const char *index, const char *entry)
{
    if (entry[0] == '/') return ts_strdup(entry);
    size_t n = strlen(index) + strlen(entry) + 8;
    char *p = ts_malloc(n);
    const char *slash = strrchr(index, '/');
    int dl = slash ? (int)(slash - index) : 0;
    for (int up = 0; up < 2; up++) {
        int l = dl;
        if (up) {
            while (l > 0 && index[l - 1] != '/') l--;
            if (l > 0) l--;
            else break;
        }
        snprintf(p, n, "%.*s%s%s", l, index, l ? "/" : "", entry);
        if (access(p, R_OK) == 0) return p;
    }
    snprintf(p, n, "%s", entry);
    return p;
}

static int read_file(ctx *c, int fi)
{
    tr_in *in = tr_open(c->files[fi], c->err, c->errlen);
    if (!in) return -1;
    char *s, *tok[MAXTOK];
    int toolong, rc = 0;
    const char *fn = c->files[fi];
    while (!rc && ((s = tr_getline(in, 1 << 20, &toolong)) || toolong)) {
        long ln = tr_lineno(in);
        if (toolong) {
            rc = ts_err(c->err, c->errlen, "%s:%ld: line longer than 1 MiB", fn, ln);
            break;
        }
        int n = split(s, tok, MAXTOK);
        if (n == 0) continue;
        if (n < 0 || n == 1) {
            rc = ts_err(c->err, c->errlen, "%s:%ld: %s", fn, ln,
                        n < 0 ? "more than 4096 fields" : "expected '<rank> <action> [args]'");
            break;
        }
        char *end;
        long r = strtol(tok[0], &end, 10);
        if (*end || end == tok[0] || r < 0 || r >= MAXRANKS) {
            rc = ts_err(c->err, c->errlen, "%s:%ld: rank '%.40s' is not an integer in [0, %d)", fn, ln, tok[0],
                        MAXRANKS);
            break;
        }
        ts_grow(&c->lines, sizeof *c->lines, &c->cap, c->nlines + 1);
        line *l = &c->lines[c->nlines++];
        l->rank = (int)r;
        l->file = fi;
        l->lineno = ln;
        l->ntok = n - 1;
        l->tok = ts_malloc((size_t)(n - 1) * sizeof *l->tok);
        for (int i = 1; i < n; i++) l->tok[i - 1] = ts_strdup(tok[i]);
        /* SimGrid's replayers spelled actions allReduce, Isend, waitAll, ... in
         * older versions and allreduce, isend, waitall now: any case matches */
        for (char *p = l->tok[0]; *p; p++) *p = (char)tolower((unsigned char)*p);
        if (r + 1 > c->world) c->world = (int)r + 1;
    }
    if (!rc && tr_error(in)) rc = ts_err(c->err, c->errlen, "%s: %s", fn, tr_error(in));
    tr_close(in);
    return rc;
}

static int smpi_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
                       size_t errlen)
{
    (void)o;
    /* Expand index files into their per-rank files. */
    char **files = NULL;
    size_t fcap = 0;
    int nf = 0, rc = -1;
    for (int i = 0; i < nfiles; i++) {
        if (!is_index(paths[i])) {
            ts_grow(&files, sizeof *files, &fcap, (size_t)nf + 1);
            files[nf++] = ts_strdup(paths[i]);
            continue;
        }
        tr_in *in = tr_open(paths[i], err, errlen);
        if (!in) goto fail0;
        char *s;
        int toolong;
        while ((s = tr_getline(in, 4096, &toolong)) || toolong) {
            if (toolong) {
                ts_err(err, errlen, "%s:%ld: index entry longer than 4096 bytes", paths[i], tr_lineno(in));
                tr_close(in);
                goto fail0;
            }
            if (!(s = entry_of(s))) continue;
            ts_grow(&files, sizeof *files, &fcap, (size_t)nf + 1);
            files[nf++] = resolve(paths[i], s);
        }
        tr_close(in);
    }
    ctx c = {.files = files, .nfiles = nf, .err = err, .errlen = errlen};
    for (int i = 0; i < nf; i++)
        if (read_file(&c, i) < 0) goto fail;
    if (c.world == 0) {
        ts_err(err, errlen, "%s: no actions", nf ? files[0] : paths[0]);
        goto fail;
    }
    {   /* every rank up to the largest must have actions (bounds the size by the input's) */
        char *has = ts_calloc((size_t)c.world, 1);
        for (size_t i = 0; i < c.nlines; i++) has[c.lines[i].rank] = 1;
        int miss = 0;
        while (miss < c.world && has[miss]) miss++;
        free(has);
        if (miss < c.world) {
            ts_err(err, errlen, "%s: rank %d has no actions but rank %d does (ranks must be 0..P-1)",
                   nf ? files[0] : paths[0], miss, c.world - 1);
            goto fail;
        }
    }
    c.g = og_new(c.world);
    int *all = ts_malloc((size_t)c.world * sizeof *all);
    for (int i = 0; i < c.world; i++) all[i] = i;
    og_add_group(c.g, c.world, all);
    free(all);
    c.rs = ts_calloc((size_t)c.world, sizeof *c.rs);
    for (int i = 0; i < c.world; i++) c.rs[i].dts = 1, c.rs[i].last = -1;
    rc = 0;
    for (size_t i = 0; i < c.nlines && !rc; i++) rc = action(&c, &c.lines[i]);
    for (int i = 0; i < c.world; i++) free(c.rs[i].pend);
    free(c.rs);
    if (rc) og_free(c.g);
    else *out = c.g;
fail:
    for (size_t i = 0; i < c.nlines; i++) {
        for (int k = 0; k < c.lines[i].ntok; k++) free(c.lines[i].tok[k]);
        free(c.lines[i].tok);
    }
    free(c.lines);
fail0:
    for (int i = 0; i < nf; i++) free(files[i]);
    free(files);
    return rc;
}

/* The first line of a TI trace: "<rank> <action>" with a known action. */
static int ti_line(const char *head, size_t n)
{
    static const char *const first[] = {"init", "compute", "send", "recv", "isend", "irecv", "comm_size", "sleep",
                                        "barrier", "bcast", "allreduce"};
    int r;
    char act[32], buf[256];
    size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
    memcpy(buf, head, k);
    buf[k] = 0;
    if (sscanf(buf, " %d %31s", &r, act) != 2) return 0;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (!strcasecmp(act, first[i])) return 1;
    return 0;
}

static int smpi_detect(const char *path, const char *head, size_t n)
{
    char first[1024], h2[256];
    if (!is_index(path)) return ti_line(head, n);
    char hb[1024];
    size_t k = n < sizeof hb - 1 ? n : sizeof hb - 1;
    memcpy(hb, head, k);
    hb[k] = 0;
    if (!first_entry(hb, first, sizeof first)) return 0;
    char *p = resolve(path, first);
    size_t m = tr_head(p, h2, sizeof h2 - 1);
    free(p);
    return ti_line(h2, m);
}

const tr_format tr_fmt_smpi = {"smpi-ti", "SimGrid SMPI time-independent trace (one file, or an index of per-rank files)",
                               smpi_detect, smpi_import};
