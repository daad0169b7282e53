/* Importer for NCCL debug logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL):
 * communicators from the init lines, one op per "<Coll>: opCount" line. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

#define MAXLINE (1 << 16)
#define MAXCOMMRANKS (1 << 20)

typedef struct comm {      /* one communicator handle of one process */
    char *proc;            /* host:pid */
    uint64_t ptr, id;      /* handle value, commId */
    int rank, nranks;
    int dev;               /* global rank of the device, set after the scan */
} comm;

typedef struct call {
    int comm;              /* index in comms */
    int kind;              /* row of calls[] below */
    int64_t count;
    int dtype, root;
    double ts;             /* seconds, NAN when the log has no timestamps */
    long line;
    int file;
} call;

static const struct {
    const char *name;
    og_kind kind;
    og_coll coll;
} kinds[] = {
    {"AllReduce", OG_COLL, OG_ALLREDUCE},  {"AllGather", OG_COLL, OG_ALLGATHER},
    {"ReduceScatter", OG_COLL, OG_REDUCESCATTER}, {"Broadcast", OG_COLL, OG_BROADCAST},
    {"Reduce", OG_COLL, OG_REDUCE},        {"AllToAll", OG_COLL, OG_ALLTOALL},
    {"Send", OG_SEND, 0},                  {"Recv", OG_RECV, 0},
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

/* NCCL's ncclDataType_t order. */
static const og_dtype nccl_dtypes[] = {OG_I8, OG_U8, OG_I32, OG_I32, OG_I64, OG_I64,
                                       OG_F16, OG_F32, OG_F64, OG_BF16, OG_F8, OG_F8};
#define NDT (int)(sizeof nccl_dtypes / sizeof nccl_dtypes[0])

typedef struct ctx {
    comm *comms;
    size_t ncomms, ccap;
    call *calls;
    size_t ncalls, kcap;
    char *const *files;
    char *err;
    size_t errlen;
} ctx;

static int find_comm(ctx *c, const char *proc, uint64_t ptr)
{
    for (size_t i = c->ncomms; i-- > 0;)
        if (c->comms[i].ptr == ptr && strcmp(c->comms[i].proc, proc) == 0) return (int)i;
    return -1;
}

/* The value after " key " in s (hex with 0x or decimal), or -1 when absent/bad. */
static int field(const char *s, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    for (const char *p = strstr(s, key); p; p = strstr(p + 1, key)) {
        if ((p == s || p[-1] == ' ') && p[kl] == ' ') {
            const char *q = p + kl + 1;
            char *end;
            errno = 0;
            *v = strtoull(q, &end, 0);
            if (end == q || errno || (*end && *end != ' ')) return -1;
            return 0;
        }
    }
    return -1;
}

static int bad(ctx *c, int f, long ln, const char *what)
{
    return ts_err(c->err, c->errlen, "%s:%ld: %s", c->files[f], ln, what);
}

static int scan_line(ctx *c, int f, long ln, char *s)
{
    char *info = strstr(s, " NCCL INFO ");
    if (!info) return 0;
    *info = 0;
    char *msg = info + 11;
    /* prefix: "host:pid:tid [dev] [timestamp]". Processes are told apart by
     * pid: the host part is unreliable when NCCL's line is glued to other output. */
    char proc[32] = "";
    const char *dev = strstr(s, " [");
    const char *sp = strchr(s, ' ');
    if (dev) {
        const char *b = dev;
        while (b > s && b[-1] != ' ') b--;
        const char *c2 = NULL, *c1 = NULL;
        for (const char *p = b; p < dev; p++)
            if (*p == ':') c1 = c2, c2 = p;
        if (c1 && c2 - c1 - 1 < (long)sizeof proc) {
            memcpy(proc, c1 + 1, (size_t)(c2 - c1 - 1));
            proc[c2 - c1 - 1] = 0;
        }
    }
    double ts = NAN;
    const char *last = strrchr(s, ' ');
    if (last && last != sp) {
        char *end;
        double t = strtod(last + 1, &end);
        if (end != last + 1 && !*end && isfinite(t)) ts = t;
    }
    uint64_t ptr, v, n;
    char *opc = strstr(msg, ": opCount ");
    if (opc) {
        *opc = 0;
        char *rest = opc + 1;
        uint64_t count, dt, root;
        if (field(rest, "comm", &ptr) < 0 || field(rest, "count", &count) < 0 ||
            field(rest, "datatype", &dt) < 0 || field(rest, "root", &root) < 0)
            return bad(c, f, ln, "collective line without comm, count, datatype and root");
        int ci = find_comm(c, proc, ptr);
        if (ci < 0)
            return bad(c, f, ln, "collective on a communicator with no init line before it (log "
                                 "with NCCL_DEBUG_SUBSYS=INIT,COLL)");
        /* from here on, messages name the communicator and the rank in it */
        char m[256];
        int k = 0;
        while (k < NKINDS && strcmp(kinds[k].name, msg) != 0) k++;
        if (k == NKINDS)
            snprintf(m, sizeof m, "unknown collective '%.40s' (valid: AllReduce, AllGather, "
                     "ReduceScatter, Broadcast, Reduce, AllToAll, Send, Recv)", msg);
        else if (dt >= (uint64_t)NDT)
            snprintf(m, sizeof m, "unknown NCCL datatype id %llu (valid: 0-11)", (unsigned long long)dt);
        else if (count > (uint64_t)OG_MAX_BYTES)
            snprintf(m, sizeof m, "absurd element count %llu (over 2^50)", (unsigned long long)count);
        else if (root >= (uint64_t)c->comms[ci].nranks)
            snprintf(m, sizeof m, "root/peer %llu out of the communicator's %d ranks", (unsigned long long)root,
                     c->comms[ci].nranks);
        else if (strstr(rest, "[nranks=") && strtol(strstr(rest, "[nranks=") + 8, NULL, 10) != c->comms[ci].nranks)
            snprintf(m, sizeof m, "nranks differs from the communicator's init line (%d)", c->comms[ci].nranks);
        else
            m[0] = 0;
        if (m[0])
            return ts_err(c->err, c->errlen, "%s:%ld: comm %#" PRIx64 " rank %d: %s", c->files[f], ln,
                          c->comms[ci].ptr, c->comms[ci].rank, m);
        ts_grow(&c->calls, sizeof *c->calls, &c->kcap, c->ncalls + 1);
        c->calls[c->ncalls++] = (call){ci, k, (int64_t)count, (int)dt, (int)root, ts, ln, f};
        return 0;
    }
    /* init: "comm 0x.. rank R nRanks N ..." and "ncclCommInitRank... comm 0x.. rank R nranks N ... commId 0x.." */
    if (field(msg, "comm", &ptr) == 0 && field(msg, "rank", &v) == 0 &&
        (field(msg, "nRanks", &n) == 0 || field(msg, "nranks", &n) == 0)) {
        if (n < 1 || n > MAXCOMMRANKS || v >= n) return bad(c, f, ln, "communicator rank/size out of range");
        uint64_t id = 0;
        int has_id = field(msg, "commId", &id) == 0;
        int ci = find_comm(c, proc, ptr);
        if (ci >= 0 && (c->comms[ci].rank != (int)v || c->comms[ci].nranks != (int)n))
            ci = -1; /* the handle was freed and reused by a new communicator */
        if (ci < 0) {
            ts_grow(&c->comms, sizeof *c->comms, &c->ccap, c->ncomms + 1);
            c->comms[c->ncomms] = (comm){ts_strdup(proc), ptr, 0, (int)v, (int)n, -1};
            ci = (int)c->ncomms++;
        }
        if (has_id) c->comms[ci].id = id;
    }
    return 0;
}

/* Communicator members: handles sharing a commId (or, without one, a size). */
static int same_comm(const comm *a, const comm *b)
{
    return a->nranks == b->nranks && a->id == b->id;
}

static int nccl_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
                       size_t errlen)
{
    ctx c = {.files = paths, .err = err, .errlen = errlen};
    int rc = -1;
    og_graph *g = NULL;
    for (int f = 0; f < nfiles; f++) {
        tr_in *in = tr_open(paths[f], err, errlen);
        if (!in) goto out;
        char *s;
        int toolong, r = 0;
        while (!r && ((s = tr_getline(in, MAXLINE, &toolong)) || toolong))
            r = toolong ? 0 : scan_line(&c, f, tr_lineno(in), s);
        if (!r && tr_error(in)) r = ts_err(err, errlen, "%s: %s", paths[f], tr_error(in));
        tr_close(in);
        if (r) goto out;
    }
    if (!c.ncalls) {
        ts_err(err, errlen, "%s: no collective lines (log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL)", paths[0]);
        goto out;
    }
    /* Devices: a device is a (process, rank in its first largest communicator).
     * Global rank = position in the largest communicator of the log. */
    size_t big = 0;
    for (size_t i = 0; i < c.ncomms; i++)
        if (c.comms[i].nranks > c.comms[big].nranks) big = i;
    int nr = c.comms[big].nranks;
    /* Handles of the largest communicator give the global ranks. */
    for (size_t i = 0; i < c.ncomms; i++)
        if (same_comm(&c.comms[i], &c.comms[big])) {
            for (size_t j = 0; j < i; j++)
                if (same_comm(&c.comms[j], &c.comms[big]) && c.comms[j].rank == c.comms[i].rank) {
                    ts_err(err, errlen, "%s: communicator %#" PRIx64 " has rank %d twice", paths[0],
                           c.comms[i].id, c.comms[i].rank);
                    goto out;
                }
            c.comms[i].dev = c.comms[i].rank;
        }
    /* Other communicators: a handle shares its device with the world handle of
     * the same process and local position (one device per process, or
     * handles created in the same order per device). */
    for (size_t i = 0; i < c.ncomms; i++) {
        if (c.comms[i].dev >= 0) continue;
        int k = 0;
        for (size_t j = 0; j < i; j++)
            if (same_comm(&c.comms[j], &c.comms[i]) && !strcmp(c.comms[j].proc, c.comms[i].proc)) k++;
        int seen = 0;
        for (size_t j = 0; j < c.ncomms; j++)
            if (same_comm(&c.comms[j], &c.comms[big]) && !strcmp(c.comms[j].proc, c.comms[i].proc) && seen++ == k) {
                c.comms[i].dev = c.comms[j].dev;
                break;
            }
        if (c.comms[i].dev < 0) {
            ts_err(err, errlen, "%s: communicator %#" PRIx64 " (rank %d of %d) has no device in the largest communicator",
                   paths[0], c.comms[i].id, c.comms[i].rank, c.comms[i].nranks);
            goto out;
        }
    }
    /* members of every communicator, checked before any graph is built (the
     * graph's size is then bounded by the number of init lines) */
    if ((size_t)nr > c.ncomms) {
        ts_err(err, errlen, "%s: communicator %#" PRIx64 " has %d ranks but %zu handles appear in the init "
               "lines (give every process's log)", paths[0], c.comms[big].id, nr, c.ncomms);
        goto out;
    }
    int *gid = ts_malloc(c.ncomms * sizeof *gid);
    int *members = ts_malloc((size_t)nr * sizeof *members);
    for (int pass = 0; pass < 2; pass++) {
        if (pass) g = og_new(nr);
        for (size_t i = 0; i < c.ncomms; i++) {
            const comm *m = &c.comms[i];
            int got = 0;
            for (int r = 0; r < nr; r++) members[r] = -1;
            for (size_t j = 0; j < c.ncomms; j++)
                if (same_comm(&c.comms[j], m) && c.comms[j].rank < nr && members[c.comms[j].rank] < 0) {
                    members[c.comms[j].rank] = c.comms[j].dev;
                    got++;
                }
            if (got != m->nranks) {
                ts_err(err, errlen, "%s: communicator %#" PRIx64 " has %d ranks but %d appear in the init lines "
                       "(give every process's log)", paths[0], m->id, m->nranks, got);
                free(gid), free(members);
                goto out;
            }
            if (pass) gid[i] = tr_group(g, m->nranks, members);
        }
    }
    double *last = ts_malloc((size_t)nr * sizeof *last);
    for (int r = 0; r < nr; r++) last[r] = NAN;
    for (size_t i = 0; i < c.ncalls; i++) {
        const call *k = &c.calls[i];
        const comm *m = &c.comms[k->comm];
        int r = m->dev;
        double gap = isnan(k->ts) ? (o->gap > 0 && g->ranks[r].nops ? o->gap : 0)
                     : isnan(last[r]) ? 0 : k->ts - last[r];
        if (!isnan(k->ts)) last[r] = k->ts;
        if (gap > 0 && gap < OG_MAX_DURATION) og_set_label(g, og_compute_fixed(g, r, 0, gap), "compute");
        og_dtype dt = nccl_dtypes[k->dtype];
        int64_t bytes = k->count * og_dtype_size(dt);
        if (kinds[k->kind].kind == OG_COLL) {
            og_coll t = kinds[k->kind].coll;
            if (t == OG_ALLGATHER || t == OG_REDUCESCATTER || t == OG_ALLTOALL) bytes *= m->nranks;
            if (bytes > OG_MAX_BYTES) {
                ts_err(err, errlen, "%s:%ld: rank %d: message of more than 2^50 bytes", paths[k->file], k->line, r);
                free(gid), free(members), free(last);
                goto out;
            }
            og_op *op = og_collective(g, r, 0, t, gid[k->comm], bytes, dt);
            op->root = k->root;
            og_set_label(g, op, kinds[k->kind].name);
        } else {
            int peer = g->groups[gid[k->comm]].ranks[k->root];
            og_op *op = kinds[k->kind].kind == OG_SEND ? og_send(g, r, 0, peer, bytes, 0)
                                                       : og_recv(g, r, 0, peer, bytes, 0);
            og_set_label(g, op, kinds[k->kind].name);
        }
    }
    free(gid), free(members), free(last);
    *out = g;
    g = NULL;
    rc = 0;
out:
    og_free(g);
    for (size_t i = 0; i < c.ncomms; i++) free(c.comms[i].proc);
    free(c.comms);
    free(c.calls);
    return rc;
}

static int nccl_detect(const char *path, const char *head, size_t n)
{
    (void)path;
    return memmem(head, n, " NCCL INFO ", 11) != NULL;
}

const tr_format tr_fmt_nccl = {"nccl-log", "NCCL debug log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL)",
                               nccl_detect, nccl_import};
