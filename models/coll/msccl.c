/* MSCCL algorithm XML: the reader (libxml2) and a symbolic run that checks
 * the chunks every rank ends with (docs/collectives.md). */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_algos.h"
#include "msccl.h"
#include "util.h"

#define MSCCL_MAX_GPUS 64       /* a rank set is a 64-bit mask */
#define MSCCL_MAX_CHUNKS 65536
#define MSCCL_MAX_STEPS 1000000

static int is(xmlNodePtr n, const char *name) { return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name); }

/* Integer attribute in [lo, hi]; dflt when absent and dflt >= lo, else an error. */
static int iattr(xmlNodePtr n, const char *name, long lo, long hi, long dflt, int *out, const char *path, char *err,
                 size_t errlen)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) {
        if (dflt >= lo) return *out = (int)dflt, 0;
        return ts_err(err, errlen, "%s:%d: <%s> lacks '%s'", path, n->line, (const char *)n->name, name);
    }
    char *end;
    long x = strtol((const char *)v, &end, 10);
    int ok = end != (char *)v && !*end && x >= lo && x <= hi;
    if (!ok) ts_err(err, errlen, "%s:%d: <%s> %s='%.20s' is not an integer in [%ld, %ld]", path, n->line,
                    (const char *)n->name, name, (const char *)v, lo, hi);
    xmlFree(v);
    if (ok) *out = (int)x;
    return ok ? 0 : -1;
}

static void sattr(xmlNodePtr n, const char *name, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    snprintf(buf, len, "%s", v ? (const char *)v : "");
    if (v) xmlFree(v);
}

static int buf_of(xmlNodePtr n, const char *name, int *out, const char *path, char *err, size_t errlen)
{
    char b[8];
    sattr(n, name, b, sizeof b);
    if (!strcmp(b, "i")) *out = MSCCL_BUF_IN;
    else if (!strcmp(b, "o")) *out = MSCCL_BUF_OUT;
    else if (!strcmp(b, "s")) *out = MSCCL_BUF_SCRATCH;
    else return ts_err(err, errlen, "%s:%d: %s='%s' is not a buffer (i, o or s)", path, n->line, name, b);
    return 0;
}

static const char *const step_types[] = {"s", "r", "rrc", "rcs", "rrs", "rrcs", "re", "cpy", "nop", NULL};

static int read_step(xmlNodePtr n, msccl_step *st, int index, int nchunks_max, const char *path, char *err, size_t errlen)
{
    int s;
    sattr(n, "type", st->type, sizeof st->type);
    int k = 0;
    while (step_types[k] && strcmp(step_types[k], st->type)) k++;
    if (!step_types[k])
        return ts_err(err, errlen, "%s:%d: step type '%s' unknown (s, r, rrc, rcs, rrs, rrcs, re, cpy, nop)", path,
                      n->line, st->type);
    st->line = n->line;
    if (iattr(n, "s", 0, MSCCL_MAX_STEPS, -1, &s, path, err, errlen) < 0) return -1;
    if (s != index) return ts_err(err, errlen, "%s:%d: step s=%d out of order (want %d)", path, n->line, s, index);
    if (!strcmp(st->type, "nop")) {
        st->srcbuf = st->dstbuf = MSCCL_BUF_IN, st->srcoff = st->dstoff = st->cnt = 0;
    } else if (buf_of(n, "srcbuf", &st->srcbuf, path, err, errlen) < 0 ||
               buf_of(n, "dstbuf", &st->dstbuf, path, err, errlen) < 0 ||
               iattr(n, "srcoff", 0, nchunks_max, -1, &st->srcoff, path, err, errlen) < 0 ||
               iattr(n, "dstoff", 0, nchunks_max, -1, &st->dstoff, path, err, errlen) < 0 ||
               iattr(n, "cnt", 1, nchunks_max, -1, &st->cnt, path, err, errlen) < 0) {
        return -1;
    }
    if (iattr(n, "depid", -1, 1 << 20, -1, &st->depid, path, err, errlen) < 0 ||
        iattr(n, "deps", -1, MSCCL_MAX_STEPS, -1, &st->deps, path, err, errlen) < 0)
        return -1;
    return 0;
}

static int read_gpu(xmlNodePtr g, msccl_algo *a, const char *path, char *err, size_t errlen)
{
    int id;
    if (iattr(g, "id", 0, a->ngpus - 1, -1, &id, path, err, errlen) < 0) return -1;
    msccl_gpu *gp = &a->gpus[id];
    if (gp->tbs) return ts_err(err, errlen, "%s:%d: gpu %d given twice", path, g->line, id);
    if (iattr(g, "i_chunks", 0, MSCCL_MAX_CHUNKS, 0, &gp->nchunks[0], path, err, errlen) < 0 ||
        iattr(g, "o_chunks", 0, MSCCL_MAX_CHUNKS, 0, &gp->nchunks[1], path, err, errlen) < 0 ||
        iattr(g, "s_chunks", 0, MSCCL_MAX_CHUNKS, 0, &gp->nchunks[2], path, err, errlen) < 0)
        return -1;
    int ntb = 0;
    for (xmlNodePtr t = g->children; t; t = t->next) ntb += is(t, "tb");
    gp->tbs = ts_calloc(ntb + 1, sizeof *gp->tbs);
    for (xmlNodePtr t = g->children; t; t = t->next) {
        if (!is(t, "tb")) continue;
        msccl_tb *tb = &gp->tbs[gp->ntbs++];
        if (iattr(t, "id", 0, 1 << 20, -1, &tb->id, path, err, errlen) < 0 ||
            iattr(t, "send", -1, a->ngpus - 1, -1, &tb->send, path, err, errlen) < 0 ||
            iattr(t, "recv", -1, a->ngpus - 1, -1, &tb->recv, path, err, errlen) < 0 ||
            iattr(t, "chan", 0, a->nchannels - 1, 0, &tb->chan, path, err, errlen) < 0)
            return -1;
        for (int j = 0; j < gp->ntbs - 1; j++)
            if (gp->tbs[j].id == tb->id) return ts_err(err, errlen, "%s:%d: gpu %d: tb %d given twice", path, t->line, id, tb->id);
        int ns = 0;
        for (xmlNodePtr s = t->children; s; s = s->next) ns += is(s, "step");
        if (a->nsteps + ns > MSCCL_MAX_STEPS) return ts_err(err, errlen, "%s: more than %d steps", path, MSCCL_MAX_STEPS);
        a->nsteps += ns;
        tb->steps = ts_calloc(ns + 1, sizeof *tb->steps);
        for (xmlNodePtr s = t->children; s; s = s->next)
            if (is(s, "step") && read_step(s, &tb->steps[tb->nsteps], tb->nsteps, MSCCL_MAX_CHUNKS, path, err, errlen) == 0)
                tb->nsteps++;
            else if (is(s, "step"))
                return -1;
    }
    return 0;
}

int msccl_load(const char *path, msccl_algo *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        return ts_err(err, errlen, "%s:%d: malformed XML: %s", path, e ? e->line : 0,
                      e && e->message ? strtok(e->message, "\n") : "parse error");
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    int rc = -1;
    if (!root || !is(root, "algo")) {
        ts_err(err, errlen, "%s: not an MSCCL algorithm (root element <%s>, want <algo>)", path,
               root ? (const char *)root->name : "none");
        goto out;
    }
    sattr(root, "name", a->name, sizeof a->name);
    sattr(root, "coll", a->coll, sizeof a->coll);
    sattr(root, "proto", a->proto, sizeof a->proto);
    if (iattr(root, "ngpus", 1, MSCCL_MAX_GPUS, -1, &a->ngpus, path, err, errlen) < 0 ||
        iattr(root, "nchunksperloop", 1, MSCCL_MAX_CHUNKS, -1, &a->nchunks, path, err, errlen) < 0 ||
        iattr(root, "nchannels", 1, 64, 1, &a->nchannels, path, err, errlen) < 0 ||
        iattr(root, "inplace", 0, 1, 0, &a->inplace, path, err, errlen) < 0)
        goto out;
    a->gpus = ts_calloc(a->ngpus, sizeof *a->gpus);
    for (xmlNodePtr g = root->children; g; g = g->next)
        if (is(g, "gpu") && read_gpu(g, a, path, err, errlen) < 0) goto out;
    for (int i = 0; i < a->ngpus; i++)
        if (!a->gpus[i].tbs) {
            ts_err(err, errlen, "%s: ngpus=%d but gpu %d is missing", path, a->ngpus, i);
            goto out;
        }
    rc = 0;
out:
    xmlFreeDoc(doc);
    if (rc < 0) msccl_free(a);
    return rc;
}

void msccl_free(msccl_algo *a)
{
    for (int g = 0; a->gpus && g < a->ngpus; g++) {
        for (int t = 0; t < a->gpus[g].ntbs; t++) free(a->gpus[g].tbs[t].steps);
        free(a->gpus[g].tbs);
    }
    free(a->gpus);
    memset(a, 0, sizeof *a);
}

/* ---- the symbolic run ---- */

typedef struct sval {           /* a chunk slot: which chunk, reduced over which ranks */
    int chunk;                  /* -1: nothing written yet */
    uint64_t ranks;
} sval;

typedef struct fifo {           /* messages from one rank to another on one channel */
    sval *v;
    int *cnt, *round, *rec;     /* per message: chunks, round sent, its first transfer record */
    size_t vcap, ccap, rcap, ecap;
    int head, tail, vhead, vtail;
} fifo;

typedef struct srun {
    const msccl_algo *a;
    sval *bufs[MSCCL_MAX_GPUS][3];
    int *pc[MSCCL_MAX_GPUS];
    fifo *q;                    /* [src][dst][chan] */
    char *err;
    size_t errlen;
    long messages;
    int round;
    msccl_xfer *x;              /* transfer records, in the order sent */
    int nx;
    size_t xcap;
} srun;

static fifo *queue(srun *r, int src, int dst, int chan)
{
    return &r->q[((size_t)src * r->a->ngpus + dst) * r->a->nchannels + chan];
}

static int slot(srun *r, int g, int buf, int off, int cnt, const msccl_step *st, sval **out)
{
    static const char *names[] = {"input", "output", "scratch"};
    int have = r->a->gpus[g].nchunks[buf];
    if (off + cnt > have)
        return ts_err(r->err, r->errlen, "line %d: gpu %d: %s chunks %d..%d beyond its %d", st->line, g, names[buf], off,
                      off + cnt - 1, have);
    *out = r->bufs[g][buf] + off;
    return 0;
}

static int reduce(srun *r, int g, const msccl_step *st, sval *into, sval add)
{
    if (into->chunk < 0 || add.chunk < 0)
        return ts_err(r->err, r->errlen, "line %d: gpu %d: step %s reduces a chunk never written", st->line, g, st->type);
    if (into->chunk != add.chunk)
        return ts_err(r->err, r->errlen, "line %d: gpu %d: reduces chunk %d with chunk %d", st->line, g, into->chunk,
                      add.chunk);
    if (into->ranks & add.ranks)
        return ts_err(r->err, r->errlen, "line %d: gpu %d: chunk %d gets some rank's contribution twice", st->line, g,
                      into->chunk);
    into->ranks |= add.ranks;
    return 0;
}

static int tb_index(const msccl_gpu *gp, int id)
{
    for (int t = 0; t < gp->ntbs; t++)
        if (gp->tbs[t].id == id) return t;
    return -1;
}

/* One step if it can run now: 1 ran, 0 blocked, -1 error. */
static int try_step(srun *r, int g, int t)
{
    const msccl_gpu *gp = &r->a->gpus[g];
    const msccl_tb *tb = &gp->tbs[t];
    const msccl_step *st = &tb->steps[r->pc[g][t]];
    if (st->depid >= 0) {
        int d = tb_index(gp, st->depid);
        if (d < 0) return ts_err(r->err, r->errlen, "line %d: gpu %d: depends on tb %d, which it lacks", st->line, g, st->depid);
        if (st->deps >= gp->tbs[d].nsteps)
            return ts_err(r->err, r->errlen, "line %d: gpu %d: depends on step %d of tb %d, which has %d", st->line, g,
                          st->deps, st->depid, gp->tbs[d].nsteps);
        if (r->pc[g][d] <= st->deps) return 0;
    }
    const char *ty = st->type;
    int recvs = ty[0] == 'r' && strcmp(ty, "re") != 0, sends = !strcmp(ty, "s") || (recvs && ty[strlen(ty) - 1] == 's');
    int reduces = recvs && ty[1] == 'r', stores = !strcmp(ty, "r") || !strcmp(ty, "rrc") || !strcmp(ty, "rcs") ||
                                                  !strcmp(ty, "rrcs");
    if (!strcmp(ty, "nop")) return 1;
    sval *src = NULL, *dst = NULL, tmp[64], *val = NULL;
    if (st->cnt > 64) return ts_err(r->err, r->errlen, "line %d: cnt %d above 64 chunks per step", st->line, st->cnt);
    /* a send's destination and a receive's source name the peer's buffers */
    int local_src = !recvs || !strcmp(ty, "rrs"), local_dst = !strcmp(ty, "s") ? 0 : stores || !recvs;
    if ((local_src && slot(r, g, st->srcbuf, st->srcoff, st->cnt, st, &src) < 0) ||
        (local_dst && slot(r, g, st->dstbuf, st->dstoff, st->cnt, st, &dst) < 0))
        return -1;
    if (!strcmp(ty, "re") || !strcmp(ty, "cpy")) {
        for (int k = 0; k < st->cnt; k++) {
            if (ty[0] == 'c') dst[k] = src[k];
            else if (reduce(r, g, st, &dst[k], src[k]) < 0) return -1;
        }
        return 1;
    }
    if (recvs) {
        if (tb->recv < 0) return ts_err(r->err, r->errlen, "line %d: gpu %d: %s in a tb without recv peer", st->line, g, ty);
        fifo *q = queue(r, tb->recv, g, tb->chan);
        if (q->head == q->tail || q->round[q->head] >= r->round) return 0;
        int cnt = q->cnt[q->head];
        /* how the receiver takes it: adds it into its copy, or overwrites */
        int into = reduces || st->dstbuf == MSCCL_BUF_SCRATCH;
        for (int e = q->rec[q->head]; e < r->nx && r->x[e].src == tb->recv && r->x[e].dst == g &&
                                       r->x[e].round == q->round[q->head] && e < q->rec[q->head] + cnt; e++)
            r->x[e].reduce = into;
        if (cnt != st->cnt)
            return ts_err(r->err, r->errlen, "line %d: gpu %d receives %d chunk(s) from gpu %d, which sent %d", st->line, g,
                          st->cnt, tb->recv, cnt);
        memcpy(tmp, q->v + q->vhead, cnt * sizeof *tmp);
        q->head++, q->vhead += cnt;
        /* the local operand: the destination for rrc/rrcs, the source for rrs */
        sval *local = !strcmp(ty, "rrs") ? src : dst;
        for (int k = 0; k < cnt && reduces; k++) {
            sval v = local[k];
            if (reduce(r, g, st, &v, tmp[k]) < 0) return -1;
            tmp[k] = v;
        }
        if (stores) memcpy(dst, tmp, cnt * sizeof *tmp);
        val = tmp;
    } else {
        val = src;
    }
    if (sends) {
        if (tb->send < 0) return ts_err(r->err, r->errlen, "line %d: gpu %d: %s in a tb without send peer", st->line, g, ty);
        fifo *q = queue(r, g, tb->send, tb->chan);
        ts_grow(&q->v, sizeof *q->v, &q->vcap, q->vtail + st->cnt);
        ts_grow(&q->cnt, sizeof *q->cnt, &q->ccap, q->tail + 1);
        ts_grow(&q->round, sizeof *q->round, &q->rcap, q->tail + 1);
        ts_grow(&q->rec, sizeof *q->rec, &q->ecap, q->tail + 1);
        memcpy(q->v + q->vtail, val, st->cnt * sizeof *val);
        q->vtail += st->cnt;
        q->round[q->tail] = r->round;
        q->rec[q->tail] = r->nx;
        q->cnt[q->tail++] = st->cnt;
        r->messages++;
        /* one transfer record per run of consecutive chunk ids */
        for (int k = 0; k < st->cnt; k++) {
            if (k > 0 && val[k].chunk == val[k - 1].chunk + 1 && val[k].chunk >= 0) {
                r->x[r->nx - 1].nchunk++;
                continue;
            }
            ts_grow(&r->x, sizeof *r->x, &r->xcap, r->nx + 1);
            r->x[r->nx++] = (msccl_xfer){g, tb->send, r->round, val[k].chunk, 1, 0};
        }
    }
    return 1;
}

static int final_check(srun *r)
{
    const msccl_algo *a = r->a;
    if (strcmp(a->coll, "allreduce")) return 0;
    uint64_t all = a->ngpus == 64 ? ~0ull : (1ull << a->ngpus) - 1;
    int buf = a->inplace ? MSCCL_BUF_IN : MSCCL_BUF_OUT;
    for (int g = 0; g < a->ngpus; g++) {
        if (a->gpus[g].nchunks[buf] < a->nchunks)
            return ts_err(r->err, r->errlen, "gpu %d: %d %s chunks, fewer than nchunksperloop %d", g,
                          a->gpus[g].nchunks[buf], buf ? "output" : "input", a->nchunks);
        for (int c = 0; c < a->nchunks; c++) {
            sval v = r->bufs[g][buf][c];
            if (v.chunk != c || v.ranks != all)
                return ts_err(r->err, r->errlen, "gpu %d ends with chunk %d %s (ranks %#llx of %#llx)", g, c,
                              v.chunk != c ? "holding another chunk" : "not reduced over every rank",
                              (unsigned long long)v.ranks, (unsigned long long)all);
        }
    }
    return 0;
}

static int by_round(const void *x, const void *y)
{
    const msccl_xfer *a = x, *b = y;
    if (a->round != b->round) return (a->round > b->round) - (a->round < b->round);
    if (a->src != b->src) return (a->src > b->src) - (a->src < b->src);
    return (a->dst > b->dst) - (a->dst < b->dst);
}

void msccl_sched_free(msccl_sched *s)
{
    free(s->x);
    free(s->first);
    memset(s, 0, sizeof *s);
}

int msccl_check(const msccl_algo *a, long *messages, char *err, size_t errlen)
{
    return msccl_schedule(a, messages, NULL, err, errlen);
}

int msccl_schedule(const msccl_algo *a, long *messages, msccl_sched *out, char *err, size_t errlen)
{
    srun r = {.a = a, .err = err, .errlen = errlen};
    r.q = ts_calloc((size_t)a->ngpus * a->ngpus * a->nchannels, sizeof *r.q);
    for (int g = 0; g < a->ngpus; g++) {
        for (int b = 0; b < 3; b++) {
            int n = a->gpus[g].nchunks[b];
            r.bufs[g][b] = ts_malloc((n + 1) * sizeof(sval));
            for (int c = 0; c < n; c++) r.bufs[g][b][c] = (sval){b == MSCCL_BUF_IN ? c : -1, b == MSCCL_BUF_IN ? 1ull << g : 0};
        }
        r.pc[g] = ts_calloc(a->gpus[g].ntbs + 1, sizeof(int));
    }
    int rc = 0, progress = 1, pending = 0;
    /* rounds: a message sent in round k is received in a later one */
    for (r.round = 0; rc == 0 && (progress || pending); r.round++) {
        progress = 0;
        for (int g = 0; g < a->ngpus && rc == 0; g++)
            for (int t = 0; t < a->gpus[g].ntbs && rc == 0; t++)
                while (r.pc[g][t] < a->gpus[g].tbs[t].nsteps) {
                    int k = try_step(&r, g, t);
                    if (k < 0) rc = -1;
                    if (k <= 0) break;
                    r.pc[g][t]++;
                    progress = 1;
                }
        pending = 0;
        for (size_t i = 0; i < (size_t)a->ngpus * a->ngpus * a->nchannels && !progress; i++)
            if (r.q[i].head != r.q[i].tail && r.q[i].round[r.q[i].head] == r.round) pending = 1;
    }
    for (int g = 0; g < a->ngpus && rc == 0; g++)
        for (int t = 0; t < a->gpus[g].ntbs && rc == 0; t++)
            if (r.pc[g][t] < a->gpus[g].tbs[t].nsteps) {
                const msccl_step *st = &a->gpus[g].tbs[t].steps[r.pc[g][t]];
                rc = ts_err(err, errlen, "line %d: deadlock: gpu %d tb %d waits at step %d (%s) forever", st->line, g,
                            a->gpus[g].tbs[t].id, r.pc[g][t], st->type);
            }
    size_t nq = (size_t)a->ngpus * a->ngpus * a->nchannels;
    for (size_t i = 0; i < nq && rc == 0; i++)
        if (r.q[i].head != r.q[i].tail)
            rc = ts_err(err, errlen, "gpu %zu sends gpu %zu %d message(s) on channel %zu that it never receives",
                        i / a->nchannels / a->ngpus, i / a->nchannels % a->ngpus, r.q[i].tail - r.q[i].head,
                        i % a->nchannels);
    if (rc == 0) rc = final_check(&r);
    if (messages) *messages = r.messages;
    if (rc == 0 && out) {
        qsort(r.x, r.nx, sizeof *r.x, by_round);
        out->nx = r.nx, out->x = r.x, r.x = NULL;
        out->nrounds = r.nx ? out->x[r.nx - 1].round + 1 : 0;
        out->first = ts_calloc(out->nrounds + 2, sizeof *out->first);
        for (int i = 0, k = 0; k <= out->nrounds; k++) {
            while (i < out->nx && out->x[i].round < k) i++;
            out->first[k] = i;
        }
    }
    free(r.x);
    for (size_t i = 0; i < nq; i++) free(r.q[i].v), free(r.q[i].cnt), free(r.q[i].round), free(r.q[i].rec);
    free(r.q);
    for (int g = 0; g < a->ngpus; g++) {
        for (int b = 0; b < 3; b++) free(r.bufs[g][b]);
        free(r.pc[g]);
    }
    return rc;
}

/* ---- the algorithm table's "msccl" row ---- */

static struct {
    msccl_algo a;
    msccl_sched s;
    char path[256];
    int width, merged_width;
} prog;

int coll_msccl_use(const char *path, char *err, size_t errlen)
{
    msccl_algo a;
    msccl_sched s = {0};
    long m;
    if (msccl_load(path, &a, err, errlen) < 0) return -1;
    if (strcmp(a.coll, "allreduce")) {
        ts_err(err, errlen, "%s: coll=\"%s\": only allreduce programs run as collectives", path, a.coll);
        msccl_free(&a);
        return -1;
    }
    char e2[512];
    if (msccl_schedule(&a, &m, &s, e2, sizeof e2) < 0) {
        ts_err(err, errlen, "%s: %s", path, e2);
        msccl_free(&a);
        return -1;
    }
    msccl_free(&prog.a);
    msccl_sched_free(&prog.s);
    prog.a = a, prog.s = s;
    snprintf(prog.path, sizeof prog.path, "%s", path);
    /* the most transfers a rank posts in one round, and its peers overall */
    int *cnt = ts_calloc((size_t)2 * a.ngpus + 1, sizeof *cnt);
    prog.width = 1;
    for (int k = 0; k < s.nrounds; k++) {
        memset(cnt, 0, 2 * a.ngpus * sizeof *cnt);
        for (int i = s.first[k]; i < s.first[k + 1]; i++) {
            if (++cnt[s.x[i].src] > prog.width) prog.width = cnt[s.x[i].src];
            if (++cnt[a.ngpus + s.x[i].dst] > prog.width) prog.width = cnt[a.ngpus + s.x[i].dst];
        }
    }
    free(cnt);
    prog.merged_width = a.ngpus;
    return 0;
}

const char *coll_msccl_unfit(const coll_plan *p)
{
    static char why[320];
    if (!prog.a.gpus) return "msccl: no MSCCL program given (--algo msccl:FILE)";
    if (p->n != prog.a.ngpus) {
        snprintf(why, sizeof why, "msccl: %s is a program for %d ranks, not %d", prog.path, prog.a.ngpus, p->n);
        return why;
    }
    return NULL;
}

void coll_msccl_setup(coll_plan *p)
{
    p->nsteps = prog.s.nrounds;
    p->nchunks = prog.a.nchunks;
    p->width = prog.width;
    p->merged_width = prog.merged_width;
}

void coll_msccl_step(const coll_plan *p, int me, int s, coll_step *out)
{
    out->nsend = out->nrecv = 0;
    if (s < 0 || s >= prog.s.nrounds) return;
    for (int i = prog.s.first[s]; i < prog.s.first[s + 1]; i++) {
        const msccl_xfer *x = &prog.s.x[i];
        if (x->src == me) coll_add_range(p, out, 1, x->dst, x->chunk, x->nchunk, x->reduce);
        if (x->dst == me) coll_add_range(p, out, 0, x->src, x->chunk, x->nchunk, x->reduce);
    }
}
