/* Static deadlock detection: the op graph's synchronisation run without time,
 * with the engine's semantics (each stream in order, dependencies, rendezvous
 * send/recv matched in order per (src, dst, tag), collectives waiting for every
 * member's matching call), reporting the streams that can never go on. */
#include "opgraph.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct {
    const og_graph *g;
    unsigned char **posted, **done;
    int **mate;         /* SEND/RECV: partner op on the peer; COLL: slot in arrived[] */
    int *arrived;       /* per (group, call): members that reached it */
    int **head;         /* [rank][stream]: next position in that stream's op list */
    int ***list;        /* [rank][stream]: op ids of the stream, in order */
    int **len;          /* [rank][stream]: length of the list */
    int *queue, qn, *queued;
} state;

typedef struct { int src, dst, tag, op, recv; } p2p;

static int cmp_p2p(const void *a, const void *b)
{
    const p2p *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    if (x->recv != y->recv) return x->recv - y->recv;
    return (x->op > y->op) - (x->op < y->op);
}

/* The k-th send of (src, dst, tag) meets the k-th recv, as og_check pairs them. */
static void pair_p2p(state *s)
{
    const og_graph *g = s->g;
    size_t n = 0, k = 0;
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_SEND || g->ranks[r].ops[i].kind == OG_RECV) n++;
    p2p *m = ts_malloc((n ? n : 1) * sizeof *m);
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind == OG_SEND) m[k++] = (p2p){r, op->peer, op->tag, i, 0};
            else if (op->kind == OG_RECV) m[k++] = (p2p){op->peer, r, op->tag, i, 1};
        }
    qsort(m, n, sizeof *m, cmp_p2p);
    for (size_t lo = 0, mid, hi; lo < n; lo = hi) {
        for (hi = lo; hi < n && m[hi].src == m[lo].src && m[hi].dst == m[lo].dst && m[hi].tag == m[lo].tag; hi++) {}
        for (mid = lo; mid < hi && !m[mid].recv; mid++) {} /* sends sort before recvs */
        for (size_t j = 0; lo + j < mid && mid + j < hi; j++) {
            s->mate[m[lo].src][m[lo + j].op] = m[mid + j].op;
            s->mate[m[lo].dst][m[mid + j].op] = m[lo + j].op;
        }
    }
    free(m);
}

/* The j-th call of a member on group G takes slot base[G] + j. */
static void number_colls(state *s)
{
    const og_graph *g = s->g;
    int *base = ts_calloc(g->ngroups + 1, sizeof *base), *seen = ts_calloc(g->ngroups ? g->ngroups : 1, sizeof *seen);
    for (int r = 0; r < g->nranks; r++) {
        memset(seen, 0, (g->ngroups ? g->ngroups : 1) * sizeof *seen);
        for (int i = 0; i < g->ranks[r].nops; i++)
            if (g->ranks[r].ops[i].kind == OG_COLL) seen[g->ranks[r].ops[i].group]++;
        for (int G = 0; G < g->ngroups; G++)
            if (seen[G] > base[G + 1]) base[G + 1] = seen[G];
    }
    for (int G = 0; G < g->ngroups; G++) base[G + 1] += base[G];
    s->arrived = ts_calloc(base[g->ngroups] ? base[g->ngroups] : 1, sizeof *s->arrived);
    for (int r = 0; r < g->nranks; r++) {
        memset(seen, 0, (g->ngroups ? g->ngroups : 1) * sizeof *seen);
        for (int i = 0; i < g->ranks[r].nops; i++) {
            const og_op *op = &g->ranks[r].ops[i];
            if (op->kind == OG_COLL) s->mate[r][i] = base[op->group] + seen[op->group]++;
        }
    }
    free(base);
    free(seen);
}

static void push(state *s, int r)
{
    if (s->queued[r]) return;
    s->queued[r] = 1;
    s->queue[s->qn++] = r;
}

static int deps_done(const state *s, int r, const og_op *op)
{
    for (int j = 0; j < op->ndeps; j++)
        if (!s->done[r][og_deps(op)[j]]) return 0;
    return 1;
}

/* Post op i of rank r once its dependencies are done, and settle it when its
 * partner (or every member of its collective) has posted too. */
static int step(state *s, int r, int i)
{
    const og_op *op = &s->g->ranks[r].ops[i];
    if (!s->posted[r][i]) {
        if (!deps_done(s, r, op)) return 0;
        s->posted[r][i] = 1;
        if (op->kind == OG_COLL) {
            const og_group *gr = &s->g->groups[op->group];
            if (++s->arrived[s->mate[r][i]] == gr->n)
                for (int k = 0; k < gr->n; k++) push(s, gr->ranks[k]);
        } else if (op->kind == OG_SEND || op->kind == OG_RECV) {
            push(s, op->peer);
        }
    }
    switch (op->kind) {
    case OG_COLL: return s->arrived[s->mate[r][i]] == s->g->groups[op->group].n;
    case OG_SEND:
    case OG_RECV: return s->mate[r][i] >= 0 && s->posted[op->peer][s->mate[r][i]];
    default: return 1;
    }
}

static void run(state *s)
{
    const og_graph *g = s->g;
    for (int r = 0; r < g->nranks; r++) push(s, r);
    while (s->qn) {
        int r = s->queue[--s->qn];
        s->queued[r] = 0;
        for (int progress = 1; progress;) {
            progress = 0;
            for (int st = 0; st < OG_MAX_STREAMS; st++) {
                while (s->head[r][st] < s->len[r][st]) {
                    int i = s->list[r][st][s->head[r][st]];
                    if (!step(s, r, i)) break;
                    s->done[r][i] = 1;
                    s->head[r][st]++;
                    progress = 1;
                    const og_op *op = &g->ranks[r].ops[i];
                    if (op->kind == OG_SEND || op->kind == OG_RECV) push(s, op->peer);
                }
            }
        }
    }
}

static int report(const state *s, const char *name, char *err, size_t errlen)
{
    const og_graph *g = s->g;
    int nblocked = 0;
    size_t used = (size_t)snprintf(err, errlen, "%s: deadlock (found without simulating): ", name);
    for (int r = 0; r < g->nranks; r++)
        for (int st = 0; st < OG_MAX_STREAMS; st++) {
            if (s->head[r][st] >= s->len[r][st]) continue;
            const og_op *op = &g->ranks[r].ops[s->list[r][st][s->head[r][st]]];
            char what[160];
            int d = -1;
            for (int j = 0; j < op->ndeps && d < 0; j++)
                if (!s->done[r][og_deps(op)[j]]) d = og_deps(op)[j];
            if (!s->posted[r][op->id] && d >= 0) snprintf(what, sizeof what, "waits for op %d", d);
            else og_describe_wait(op, what, sizeof what);
            if (used < errlen)
                used += (size_t)snprintf(err + used, errlen - used, "%srank %d stream %d op %d (%s)",
                                         nblocked ? "; " : "", r, st, op->id, what);
            nblocked++;
        }
    if (used < errlen)
        snprintf(err + used, errlen - used, " [%d stream%s blocked]", nblocked, nblocked == 1 ? "" : "s");
    return -1;
}

int og_find_deadlock(const og_graph *g, const char *name, char *err, size_t errlen)
{
    state s = {.g = g};
    int R = g->nranks;
    s.posted = ts_calloc(R, sizeof *s.posted);
    s.done = ts_calloc(R, sizeof *s.done);
    s.mate = ts_calloc(R, sizeof *s.mate);
    s.head = ts_calloc(R, sizeof *s.head);
    s.list = ts_calloc(R, sizeof *s.list);
    s.len = ts_calloc(R, sizeof *s.len);
    s.queue = ts_malloc(R * sizeof *s.queue);
    s.queued = ts_calloc(R, sizeof *s.queued);
    for (int r = 0; r < R; r++) {
        const og_rank *rk = &g->ranks[r];
        size_t n = rk->nops ? (size_t)rk->nops : 1;
        s.posted[r] = ts_calloc(n, 1);
        s.done[r] = ts_calloc(n, 1);
        s.mate[r] = ts_malloc(n * sizeof **s.mate);
        for (int i = 0; i < rk->nops; i++) s.mate[r][i] = -1;
        s.head[r] = ts_calloc(OG_MAX_STREAMS, sizeof **s.head);
        s.len[r] = ts_calloc(OG_MAX_STREAMS, sizeof **s.len);
        s.list[r] = ts_calloc(OG_MAX_STREAMS, sizeof **s.list);
        for (int i = 0; i < rk->nops; i++) s.len[r][rk->ops[i].stream]++;
        for (int st = 0; st < OG_MAX_STREAMS; st++)
            if (s.len[r][st]) s.list[r][st] = ts_malloc(s.len[r][st] * sizeof ***s.list);
        int fill[OG_MAX_STREAMS] = {0};
        for (int i = 0; i < rk->nops; i++) s.list[r][rk->ops[i].stream][fill[rk->ops[i].stream]++] = i;
    }
    pair_p2p(&s);
    number_colls(&s);
    run(&s);
    int rc = 0;
    for (int r = 0; r < R && !rc; r++)
        for (int st = 0; st < OG_MAX_STREAMS && !rc; st++)
            if (s.head[r][st] < s.len[r][st]) rc = report(&s, name ? name : "graph", err, errlen);
    for (int r = 0; r < R; r++) {
        for (int st = 0; st < OG_MAX_STREAMS; st++) free(s.list[r][st]);
        free(s.posted[r]), free(s.done[r]), free(s.mate[r]), free(s.head[r]), free(s.len[r]), free(s.list[r]);
    }
    free(s.posted), free(s.done), free(s.mate), free(s.head), free(s.len), free(s.list);
    free(s.arrived), free(s.queue), free(s.queued);
    return rc;
}
