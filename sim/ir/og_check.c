/* Op graph validation before simulation: sizes and references, groups, dependency
 * cycles, send/recv matching and collective agreement, all in O(n log n). */
#include "opgraph.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct {
    const og_graph *g;
    const char *name;
    char *err;
    size_t errlen;
    /* Group membership: for group G, memb[moff[G] .. moff[G+1]) are its
     * (rank, position) pairs sorted by rank. */
    size_t *moff;
    struct member { int rank, pos; } *memb;
} checker;

static int bad(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(checker *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ts_verr_at(c->err, c->errlen, c->name, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* "s" unless n is 1, for plurals in messages. */
static const char *pl(long long n) { return n == 1 ? "" : "s"; }

#define bad_op(c, r, i, fmt, ...) bad(c, "rank %d op %d: " fmt, r, i, __VA_ARGS__)

/* Ordinal for messages: 1st, 2nd, 3rd, 4th, 11th, 21st. */
static const char *nth(long k, char *buf, size_t n)
{
    const char *suf = "th";
    if (k % 100 < 11 || k % 100 > 13) {
        if (k % 10 == 1) suf = "st";
        else if (k % 10 == 2) suf = "nd";
        else if (k % 10 == 3) suf = "rd";
    }
    snprintf(buf, n, "%ld%s", k, suf);
    return buf;
}

/* ------------------------------------------------------------ top and groups */

static int check_top(checker *c)
{
    const og_graph *g = c->g;
    if (g->nranks < 1 || !g->ranks) return bad(c, "nranks %d must be >= 1", g->nranks);
    int with = -1, without = -1;
    for (int r = 0; r < g->nranks; r++) {
        if (g->ranks[r].host && with < 0) with = r;
        if (!g->ranks[r].host && without < 0) without = r;
    }
    if (with >= 0 && without >= 0)
        return bad(c, "rank %d: no host, but rank %d has host '%s' (give a host for every "
                      "rank or for none)", without, with, g->ranks[with].host);
    return 0;
}

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int check_groups(checker *c)
{
    const og_graph *g = c->g;
    size_t total = 0;
    for (int i = 0; i < g->ngroups; i++) {
        const og_group *gr = &g->groups[i];
        if (gr->id != i) return bad(c, "group %d: id %d does not match its position", i, gr->id);
        if (gr->n < 1) return bad(c, "group %d: empty (a group needs at least one rank)", i);
        for (int j = 0; j < gr->n; j++)
            if (gr->ranks[j] < 0 || gr->ranks[j] >= g->nranks)
                return bad(c, "group %d: member %d is rank %d, out of range (nranks %d)", i, j,
                           gr->ranks[j], g->nranks);
        total += (size_t)gr->n;
    }
    c->moff = ts_malloc(((size_t)g->ngroups + 1) * sizeof *c->moff);
    c->memb = ts_malloc((total ? total : 1) * sizeof *c->memb);
    size_t k = 0;
    for (int i = 0; i < g->ngroups; i++) {
        const og_group *gr = &g->groups[i];
        c->moff[i] = k;
        for (int j = 0; j < gr->n; j++) c->memb[k + j] = (struct member){gr->ranks[j], j};
        qsort(c->memb + k, gr->n, sizeof *c->memb, cmp_member);
        for (int j = 1; j < gr->n; j++) {
            const struct member *a = &c->memb[k + j - 1], *b = &c->memb[k + j];
            if (a->rank == b->rank) {
                int p = a->pos < b->pos ? a->pos : b->pos, q = a->pos ^ b->pos ^ p;
                return bad(c, "group %d: rank %d listed twice (members %d and %d)", i, a->rank,
                           p, q);
            }
        }
        k += (size_t)gr->n;
    }
    c->moff[g->ngroups] = k;
    return 0;
}

/* Position of rank r in group gid, or -1 when it is not a member. */
static int member_pos(const checker *c, int gid, int r)
{
    size_t lo = c->moff[gid], hi = c->moff[gid + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->memb[mid].rank < r) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->moff[gid + 1] && c->memb[lo].rank == r ? c->memb[lo].pos : -1;
}

/* ------------------------------------------------------------ one op at a time */

static int check_bytes(checker *c, int r, int i, const char *what, int64_t b)
{
    if (b < 0) return bad_op(c, r, i, "%s %" PRId64 " is negative", what, b);
    if (b > OG_MAX_BYTES)
        return bad_op(c, r, i, "%s %" PRId64 " exceeds the limit of %" PRId64 " (1 PiB; a unit "
                               "error?)", what, b, OG_MAX_BYTES);
    return 0;
}

static int check_compute(checker *c, int r, int i, const og_op *op)
{
    char num[32];
    if (isnan(op->duration) || isinf(op->duration))
        return bad_op(c, r, i, "duration %s is not finite", isnan(op->duration) ? "nan" : "inf");
    if (op->duration >= 0) {
        if (op->duration > OG_MAX_DURATION) {
            ts_fmt_double(num, sizeof num, op->duration);
            return bad_op(c, r, i, "duration %s s exceeds the limit of %g s (a unit error?)", num,
                          OG_MAX_DURATION);
        }
        return 0;
    }
    if (isnan(op->flops) || isinf(op->flops))
        return bad_op(c, r, i, "flops %s is not finite", isnan(op->flops) ? "nan" : "inf");
    ts_fmt_double(num, sizeof num, op->flops);
    if (op->flops < 0) return bad_op(c, r, i, "flops %s is negative", num);
    if (op->flops > OG_MAX_FLOPS)
        return bad_op(c, r, i, "flops %s exceeds the limit of %g (a unit error?)", num,
                      OG_MAX_FLOPS);
    return check_bytes(c, r, i, "bytes", op->bytes);
}

static int check_p2p(checker *c, int r, int i, const og_op *op)
{
    const char *what = op->kind == OG_SEND ? "send to" : "recv from";
    if (op->peer < 0 || op->peer >= c->g->nranks)
        return bad_op(c, r, i, "%s rank %d: peer out of range (nranks %d)", what, op->peer,
                      c->g->nranks);
    if (op->peer == r) return bad_op(c, r, i, "%s rank %d: peer is the rank itself", what, r);
    return check_bytes(c, r, i, "bytes", op->bytes);
}

static int check_coll(checker *c, int r, int i, const og_op *op)
{
    const og_graph *g = c->g;
    if (op->coll >= OG_NCOLLS)
        return bad_op(c, r, i, "unknown collective type %d", (int)op->coll);
    const char *cn = og_coll_name(op->coll);
    if (op->dtype >= OG_NDTYPES)
        return bad_op(c, r, i, "%s: unknown dtype %d", cn, (int)op->dtype);
    if (op->group < 0 || op->group >= g->ngroups)
        return bad_op(c, r, i, "%s on unknown group %d (the graph has %d group%s)", cn, op->group,
                      g->ngroups, pl(g->ngroups));
    const og_group *gr = &g->groups[op->group];
    if (member_pos(c, op->group, r) < 0)
        return bad_op(c, r, i, "%s on group %d, which does not contain rank %d", cn, op->group, r);
    if (op->root < 0 || op->root >= gr->n)
        return bad_op(c, r, i, "%s on group %d: root %d out of range (the group has %d members)",
                      cn, op->group, op->root, gr->n);
    if (check_bytes(c, r, i, "bytes", op->bytes)) return -1;
    if (op->coll == OG_BARRIER && op->bytes != 0)
        return bad_op(c, r, i, "barrier with bytes %" PRId64 " (a barrier moves no data: bytes "
                               "must be 0)", op->bytes);
    if (op->coll != OG_ALLTOALLV) return 0;
    if (!op->vbytes)
        return bad_op(c, r, i, "alltoallv on group %d without send_bytes", op->group);
    int64_t sum = 0;
    for (int j = 0; j < gr->n; j++) {
        char what[48];
        snprintf(what, sizeof what, "send_bytes[%d]", j);
        if (check_bytes(c, r, i, what, op->vbytes[j])) return -1;
        sum += op->vbytes[j];
        if (sum > OG_MAX_BYTES)
            return bad_op(c, r, i, "alltoallv send_bytes sum to more than bytes %" PRId64,
                          op->bytes);
    }
    if (sum != op->bytes)
        return bad_op(c, r, i, "alltoallv send_bytes sum to %" PRId64 " but bytes is %" PRId64,
                      sum, op->bytes);
    return 0;
}

static int check_ops(checker *c)
{
    const og_graph *g = c->g;
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        for (int i = 0; i < rk->nops; i++) {
            const og_op *op = &rk->ops[i];
            if (op->kind >= OG_NKINDS)
                return bad_op(c, r, i, "unknown kind %d", (int)op->kind);
            if (op->stream < 0 || op->stream >= OG_MAX_STREAMS)
                return bad_op(c, r, i, "stream %d out of range (0..%d)", op->stream,
                              OG_MAX_STREAMS - 1);
            for (int j = 0; j < op->ndeps; j++) {
                int d = og_deps(op)[j];
                if (d == i) return bad_op(c, r, i, "depends on itself (deps[%d] is %d)", j, d);
                if (d < 0 || d >= rk->nops)
                    return bad_op(c, r, i, "dep %d is not an op of rank %d (it has ops 0..%d)", d,
                                  r, rk->nops - 1);
            }
            int rc = 0;
            switch (op->kind) {
            case OG_COMPUTE: rc = check_compute(c, r, i, op); break;
            case OG_SEND:
            case OG_RECV: rc = check_p2p(c, r, i, op); break;
            case OG_COLL: rc = check_coll(c, r, i, op); break;
            default: break;
            }
            if (rc) return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ dependency cycles */

/* Kahn's algorithm over deps plus stream order; on failure, walk predecessors
 * from a blocked op until one repeats, which yields a cycle. */
static int check_cycles(checker *c)
{
    const og_graph *g = c->g;
    int maxops = 0;
    size_t maxdeps = 0;
    for (int r = 0; r < g->nranks; r++) {
        size_t nd = 0;
        if (g->ranks[r].nops > maxops) maxops = g->ranks[r].nops;
        for (int i = 0; i < g->ranks[r].nops; i++)
            nd += (size_t)g->ranks[r].ops[i].ndeps;
        if (nd > maxdeps) maxdeps = nd;
    }
    size_t m = (size_t)maxops + 1;
    int *indeg = ts_malloc(m * sizeof(int));
    int *prev = ts_malloc(m * sizeof(int));  /* previous op of the same stream */
    int *next = ts_malloc(m * sizeof(int));  /* next op of the same stream */
    int *queue = ts_malloc(m * sizeof(int));
    size_t *soff = ts_malloc((m + 1) * sizeof(size_t));
    int *succ = ts_malloc((maxdeps ? maxdeps : 1) * sizeof(int));
    int rc = 0;

    for (int r = 0; r < g->nranks && !rc; r++) {
        const og_rank *rk = &g->ranks[r];
        int n = rk->nops, last[OG_MAX_STREAMS];
        for (int s = 0; s < OG_MAX_STREAMS; s++) last[s] = -1;
        memset(soff, 0, (n + 2) * sizeof(size_t));
        for (int i = 0; i < n; i++) {
            const og_op *op = &rk->ops[i];
            int s = op->stream;
            prev[i] = last[s];
            next[i] = -1;
            if (last[s] >= 0) next[last[s]] = i;
            last[s] = i;
            indeg[i] = (prev[i] >= 0) + op->ndeps;
            for (int j = 0; j < op->ndeps; j++) soff[og_deps(op)[j] + 2]++;
        }
        for (int i = 0; i < n; i++) soff[i + 2] += soff[i + 1];
        for (int i = 0; i < n; i++) {
            const og_op *op = &rk->ops[i];
            for (int j = 0; j < op->ndeps; j++) succ[soff[og_deps(op)[j] + 1]++] = i;
        }
        /* now succ[soff[u] .. soff[u+1]) are u's dependents */
        int head = 0, tail = 0;
        for (int i = 0; i < n; i++)
            if (indeg[i] == 0) queue[tail++] = i;
        while (head < tail) {
            int u = queue[head++];
            if (next[u] >= 0 && --indeg[next[u]] == 0) queue[tail++] = next[u];
            for (size_t k = soff[u]; k < soff[u + 1]; k++)
                if (--indeg[succ[k]] == 0) queue[tail++] = succ[k];
        }
        if (tail == n) continue;

        /* Every op left has indeg > 0, so it has a predecessor that is left too.
         * queue[] is free now: reuse it as the walk, next[] as visit marks. */
        int start = 0;
        while (indeg[start] == 0) start++;
        for (int i = 0; i < n; i++) next[i] = -1;
        int len = 0, u = start;
        while (next[u] < 0) {
            next[u] = len;
            queue[len++] = u;
            const og_op *op = &rk->ops[u];
            int p = -1;
            if (prev[u] >= 0 && indeg[prev[u]] > 0) p = prev[u];
            for (int j = 0; p < 0 && j < op->ndeps; j++)
                if (indeg[og_deps(op)[j]] > 0) p = og_deps(op)[j];
            u = p;
        }
        /* The cycle is queue[next[u] .. len), each entry a predecessor of the one
         * before it; forwards it runs from the last entry back to the first. */
        int first = next[u], clen = len - first, lo = first;
        for (int k = first; k < len; k++)
            if (queue[k] < queue[lo]) lo = k;
        char path[256];
        size_t pl = 0;
        path[0] = 0;
        for (int k = 0; k <= clen && pl < sizeof path; k++) {
            int idx = first + ((lo - first) - k % clen + clen) % clen;
            if (k == 8 && clen > 8) {
                pl += snprintf(path + pl, sizeof path - pl, " -> ... (%d ops)", clen);
                break;
            }
            pl += snprintf(path + pl, sizeof path - pl, "%sop %d", k ? " -> " : "", queue[idx]);
        }
        rc = bad_op(c, r, queue[lo], "dependency cycle: %s (edges are deps and stream order)",
                    path);
    }
    free(indeg);
    free(prev);
    free(next);
    free(queue);
    free(soff);
    free(succ);
    return rc;
}

/* ------------------------------------------------------------ send/recv matching */

typedef struct {
    int src, dst, tag;
    int op;          /* op id on src (send) or dst (recv) */
    int recv;        /* 0 send, 1 recv */
    int64_t bytes;
} msg;

static int cmp_msg(const void *a, const void *b)
{
    const msg *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    if (x->recv != y->recv) return x->recv - y->recv;
    return (x->op > y->op) - (x->op < y->op);
}

/* Where a problem is reported: the smallest (rank, op) wins. */
typedef struct {
    int found, rank, op;
    char msg[TS_ERRLEN];
} finding;

static void consider(finding *f, int rank, int op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void consider(finding *f, int rank, int op, const char *fmt, ...)
{
    if (f->found && (f->rank < rank || (f->rank == rank && f->op <= op))) return;
    f->found = 1;
    f->rank = rank;
    f->op = op;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

static int check_p2p_matching(checker *c)
{
    const og_graph *g = c->g;
    size_t n = 0;
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_SEND || g->ranks[r].ops[i].kind == OG_RECV) n++;
    if (!n) return 0;
    msg *m = ts_malloc(n * sizeof *m);
    size_t k = 0;
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind == OG_SEND) m[k++] = (msg){r, op->peer, op->tag, i, 0, op->bytes};
            else if (op->kind == OG_RECV) m[k++] = (msg){op->peer, r, op->tag, i, 1, op->bytes};
        }
    qsort(m, n, sizeof *m, cmp_msg);

    finding f = {0};
    char a[24], b[24];
    for (size_t lo = 0; lo < n;) {
        size_t mid = lo, hi;
        while (mid < n && m[mid].src == m[lo].src && m[mid].dst == m[lo].dst &&
               m[mid].tag == m[lo].tag && !m[mid].recv)
            mid++;
        hi = mid;
        while (hi < n && m[hi].src == m[lo].src && m[hi].dst == m[lo].dst &&
               m[hi].tag == m[lo].tag)
            hi++;
        size_t ns = mid - lo, nr = hi - mid, common = ns < nr ? ns : nr;
        int src = m[lo].src, dst = m[lo].dst, tag = m[lo].tag;
        size_t j;
        for (j = 0; j < common; j++) {
            const msg *s = &m[lo + j], *q = &m[mid + j];
            if (s->bytes == q->bytes) continue;
            nth((long)j + 1, a, sizeof a);
            if (src < dst || (src == dst && s->op < q->op))
                consider(&f, src, s->op, "send to rank %d (tag %d) of %" PRId64 " bytes is matched "
                         "by rank %d op %d, a recv of %" PRId64 " bytes (the %s message from rank "
                         "%d to rank %d with tag %d)", dst, tag, s->bytes, dst, q->op, q->bytes, a,
                         src, dst, tag);
            else
                consider(&f, dst, q->op, "recv from rank %d (tag %d) of %" PRId64 " bytes is "
                         "matched by rank %d op %d, a send of %" PRId64 " bytes (the %s message "
                         "from rank %d to rank %d with tag %d)", src, tag, q->bytes, src, s->op,
                         s->bytes, a, src, dst, tag);
            break;
        }
        if (j == common && ns != nr) {
            nth((long)ns, a, sizeof a);
            nth((long)nr, b, sizeof b);
            if (ns > nr) {
                const msg *s = &m[lo + nr];
                consider(&f, src, s->op, "send to rank %d (tag %d, %" PRId64 " bytes) has no "
                         "matching recv (rank %d sends %zu message%s with tag %d to rank %d, which "
                         "posts %zu recv%s)", dst, tag, s->bytes, src, ns, pl((long long)ns), tag,
                         dst, nr, pl((long long)nr));
            } else {
                const msg *q = &m[mid + ns];
                consider(&f, dst, q->op, "recv from rank %d (tag %d, %" PRId64 " bytes) has no "
                         "matching send (rank %d posts %zu recv%s with tag %d from rank %d, which "
                         "sends %zu message%s)", src, tag, q->bytes, dst, nr, pl((long long)nr), tag,
                         src, ns, pl((long long)ns));
            }
        }
        lo = hi;
    }
    free(m);
    if (f.found) return bad(c, "rank %d op %d: %s", f.rank, f.op, f.msg);
    return 0;
}

/* ------------------------------------------------------------ collective agreement */

/* The k-th collective on group G of every member is compared with the k-th of
 * the group's first member (its "reference"); all must make as many calls. */
static int check_colls(checker *c)
{
    const og_graph *g = c->g;
    if (!g->ngroups) return 0;
    size_t total = c->moff[g->ngroups];
    size_t *cnt = ts_calloc(total ? total : 1, sizeof(size_t)); /* calls per (group, member) */
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind == OG_COLL) cnt[c->moff[op->group] + member_pos(c, op->group, r)]++;
        }
    /* reference calls of group G: ref[roff[G] .. roff[G+1]) */
    size_t *roff = ts_malloc(((size_t)g->ngroups + 1) * sizeof(size_t));
    roff[0] = 0;
    for (int G = 0; G < g->ngroups; G++) roff[G + 1] = roff[G] + cnt[c->moff[G]];
    int *ref = ts_malloc((roff[g->ngroups] ? roff[g->ngroups] : 1) * sizeof(int));
    size_t *seq = ts_calloc(total ? total : 1, sizeof(size_t));
    for (int G = 0; G < g->ngroups; G++) {
        int r0 = g->groups[G].ranks[0];
        size_t k = roff[G];
        for (int i = 0; i < g->ranks[r0].nops; i++) {
            const og_op *op = &g->ranks[r0].ops[i];
            if (op->kind == OG_COLL && op->group == G) ref[k++] = i;
        }
    }

    finding f = {0};
    char a[24];
    for (int r = 0; r < g->nranks && !f.found; r++)
        for (int i = 0; i < g->ranks[r].nops && !f.found; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind != OG_COLL) continue;
            int G = op->group, pos = member_pos(c, G, r);
            if (pos == 0) continue;
            size_t k = seq[c->moff[G] + pos]++, nref = roff[G + 1] - roff[G];
            int r0 = g->groups[G].ranks[0];
            const char *cn = og_coll_name(op->coll);
            nth((long)k + 1, a, sizeof a);
            if (k >= nref) {
                consider(&f, r, i, "%s on group %d is rank %d's %s collective on the group, but "
                         "rank %d makes only %zu on it", cn, G, r, a, r0, nref);
                break;
            }
            int j = ref[roff[G] + k];
            const og_op *x = &g->ranks[r0].ops[j];
            if (op->coll != x->coll)
                consider(&f, r, i, "the %s collective on group %d is %s here but %s on rank %d "
                         "(op %d)", a, G, cn, og_coll_name(x->coll), r0, j);
            else if (op->dtype != x->dtype)
                consider(&f, r, i, "%s on group %d (the %s on the group) has dtype %s but rank %d "
                         "op %d has dtype %s", cn, G, a, og_dtype_name(op->dtype), r0, j,
                         og_dtype_name(x->dtype));
            else if (op->coll != OG_ALLTOALLV && op->bytes != x->bytes)
                consider(&f, r, i, "%s on group %d (the %s on the group) has bytes %" PRId64
                         " but rank %d op %d has bytes %" PRId64, cn, G, a, op->bytes, r0, j,
                         x->bytes);
            else if (op->root != x->root)
                consider(&f, r, i, "%s on group %d (the %s on the group) has root %d but rank %d "
                         "op %d has root %d", cn, G, a, op->root, r0, j, x->root);
        }
    /* members that make fewer calls than the reference */
    for (int G = 0; G < g->ngroups; G++) {
        const og_group *gr = &g->groups[G];
        size_t nref = roff[G + 1] - roff[G];
        for (int pos = 1; pos < gr->n; pos++) {
            size_t have = cnt[c->moff[G] + pos];
            if (have >= nref) continue;
            int j = ref[roff[G] + have];
            const og_op *x = &g->ranks[gr->ranks[0]].ops[j];
            nth((long)have + 1, a, sizeof a);
            consider(&f, gr->ranks[0], j, "%s on group %d (the %s on the group) has no "
                     "counterpart on rank %d, which makes only %zu on it", og_coll_name(x->coll), G, a,
                     gr->ranks[pos], have);
        }
    }
    free(cnt);
    free(roff);
    free(ref);
    free(seq);
    if (f.found) return bad(c, "rank %d op %d: %s", f.rank, f.op, f.msg);
    return 0;
}

int og_check(const og_graph *g, const char *name, char *err, size_t errlen)
{
    checker c = {.g = g, .name = name ? name : "graph", .err = err, .errlen = errlen};
    if (!g) return bad(&c, "no graph");
    int rc = check_top(&c);
    if (!rc) rc = check_groups(&c);
    if (!rc) rc = check_ops(&c);
    if (!rc) rc = check_cycles(&c);
    if (!rc) rc = check_p2p_matching(&c);
    if (!rc) rc = check_colls(&c);
    free(c.moff);
    free(c.memb);
    return rc;
}
