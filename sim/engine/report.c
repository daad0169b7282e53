/* Writers for engine results: text summary, JSON and Chrome trace timeline.
 * Output is deterministic: the same inputs give byte-identical files. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "util.h"

#define MS(x) ((x) * 1e3)

static void rank_row(FILE *f, const eng_result *r, int i)
{
    const eng_rank_stats *s = &r->ranks[i];
    fprintf(f, "%6d  %-16s %12.6f %12.6f %12.6f %12.6f %12.6f\n", i, r->host[i], MS(s->compute),
            MS(s->comm), MS(s->exposed), MS(s->idle), MS(s->finish));
}

void eng_report_summary(FILE *f, const og_graph *g, const eng_result *r)
{
    fprintf(f, "ranks %d, ops %d, groups %d, fidelity %s\n", g->nranks, og_total_ops(g), g->ngroups,
            eng_fidelity_name(r->fidelity));
    fprintf(f, "simulated time   %.6f ms\n", MS(r->makespan));
    fprintf(f, "flows simulated  %ld in %.3f s of wall time (%.0f flows/s)\n", r->ncomms, r->wall,
            r->wall > 0 ? r->ncomms / r->wall : 0.0);

    eng_rank_stats mean = {0}, mx = {0};
    for (int i = 0; i < r->nranks; i++) {
        const eng_rank_stats *s = &r->ranks[i];
        mean.compute += s->compute / r->nranks;
        mean.comm += s->comm / r->nranks;
        mean.exposed += s->exposed / r->nranks;
        mean.idle += s->idle / r->nranks;
        if (s->exposed > mx.exposed) mx.exposed = s->exposed;
    }
    fprintf(f, "per rank (mean)  compute %.6f ms, communication %.6f ms, exposed communication "
               "%.6f ms (max %.6f), idle %.6f ms\n",
            MS(mean.compute), MS(mean.comm), MS(mean.exposed), MS(mx.exposed), MS(mean.idle));

    fprintf(f, "\n%6s  %-16s %12s %12s %12s %12s %12s\n", "rank", "host", "compute_ms", "comm_ms",
            "exposed_ms", "idle_ms", "finish_ms");
    int show = r->nranks <= 32 ? r->nranks : 8;
    for (int i = 0; i < show; i++) rank_row(f, r, i);
    if (show < r->nranks) {
        fprintf(f, "%6s  (%d more ranks: --json has them all)\n", "...", r->nranks - show - 1);
        rank_row(f, r, r->nranks - 1);
    }

    if (r->nlinks > 0) {
        fputc('\n', f);
        eng_report_links(f, r);
    }
}

void eng_report_links(FILE *f, const eng_result *r)
{
    fprintf(f, "%-40s %14s %12s %8s\n", "busiest links", "bytes", "GB/s", "busy %");
    for (int i = 0; i < r->nlinks; i++)
        fprintf(f, "%-40s %14.0f %12.3f %8.2f\n", r->links[i].name, r->links[i].bytes, r->links[i].bandwidth / 1e9,
                100 * r->links[i].busy);
}

void eng_report_links_json(FILE *f, const eng_result *r)
{
    fputs("[", f);
    for (int i = 0; i < r->nlinks; i++) {
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        ts_json_string(f, r->links[i].name);
        fputs(", \"bytes\": ", f);
        ts_json_number(f, r->links[i].bytes);
        fputs(", \"bandwidth\": ", f);
        ts_json_number(f, r->links[i].bandwidth);
        fputs(", \"busy\": ", f);
        ts_json_number(f, r->links[i].busy);
        fputs("}", f);
    }
    fputs(r->nlinks ? "\n  ]" : "]", f);
}

static FILE *open_out(const char *path, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) ts_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, char *err, size_t errlen)
{
    int bad = ferror(f);
    if (f == stdout) bad |= fflush(f) != 0;
    else bad |= fclose(f) != 0;
    return bad ? ts_err(err, errlen, "%s: write failed", path) : 0;
}

int eng_report_json(const char *path, const og_graph *g, const eng_result *r, char *err, size_t errlen)
{
    FILE *f = open_out(path, err, errlen);
    if (!f) return -1;
    fprintf(f, "{\n  \"fidelity\": \"%s\",\n  \"time_s\": ", eng_fidelity_name(r->fidelity));
    ts_json_number(f, r->makespan);
    fprintf(f, ",\n  \"flows\": %ld,\n  \"ranks\": [\n", r->ncomms);
    for (int i = 0; i < r->nranks; i++) {
        const eng_rank_stats *s = &r->ranks[i];
        fprintf(f, "    {\"rank\": %d, \"host\": ", i);
        ts_json_string(f, r->host[i]);
        fputs(", \"compute_s\": ", f);
        ts_json_number(f, s->compute);
        fputs(", \"comm_s\": ", f);
        ts_json_number(f, s->comm);
        fputs(", \"exposed_comm_s\": ", f);
        ts_json_number(f, s->exposed);
        fputs(", \"idle_s\": ", f);
        ts_json_number(f, s->idle);
        fputs(", \"finish_s\": ", f);
        ts_json_number(f, s->finish);
        fputs(",\n     \"ops\": [", f);
        for (int k = 0; k < g->ranks[i].nops; k++) {
            fputs(k ? ", [" : "[", f);
            ts_json_number(f, r->start[i][k]);
            fputs(", ", f);
            ts_json_number(f, r->end[i][k]);
            fputs("]", f);
        }
        fprintf(f, "]}%s\n", i + 1 < r->nranks ? "," : "");
    }
    fputs("  ],\n  \"links\": ", f);
    eng_report_links_json(f, r);
    fputs("\n}\n", f);
    return close_out(f, path, err, errlen);
}

static void op_name(FILE *f, const og_op *op, const og_graph *g)
{
    char b[128];
    const char *lab = og_label(g, op);
    if (lab) {
        ts_json_string(f, lab);
        return;
    }
    switch (op->kind) {
    case OG_SEND: snprintf(b, sizeof b, "send to %d", op->peer); break;
    case OG_RECV: snprintf(b, sizeof b, "recv from %d", op->peer); break;
    case OG_COLL: snprintf(b, sizeof b, "%s (%d ranks)", og_coll_name(op->coll), g->groups[op->group].n); break;
    default: snprintf(b, sizeof b, "compute");
    }
    ts_json_string(f, b);
}

int eng_report_timeline(const char *path, const og_graph *g, const eng_result *r, char *err, size_t errlen)
{
    FILE *f = open_out(path, err, errlen);
    if (!f) return -1;
    fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f);
    int first = 1;
    for (int i = 0; i < r->nranks; i++) {
        fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": ",
                first ? "" : ",\n", i);
        first = 0;
        char b[300];
        snprintf(b, sizeof b, "rank %d (%s)", i, r->host[i]);
        ts_json_string(f, b);
        fputs("}}", f);
        unsigned long long seen = 0;
        for (int k = 0; k < g->ranks[i].nops; k++) {
            int s = g->ranks[i].ops[k].stream;
            if (seen & (1ULL << s)) continue;
            seen |= 1ULL << s;
            fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
                       "\"args\": {\"name\": \"stream %d\"}}", i, s, s);
        }
        for (int k = 0; k < g->ranks[i].nops; k++) {
            const og_op *op = &g->ranks[i].ops[k];
            fputs(",\n{\"ph\": \"X\", \"name\": ", f);
            op_name(f, op, g);
            fprintf(f, ", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": ", og_kind_name(op->kind), i,
                    op->stream);
            ts_json_number(f, r->start[i][k] * 1e6);
            fputs(", \"dur\": ", f);
            ts_json_number(f, (r->end[i][k] - r->start[i][k]) * 1e6);
            fprintf(f, ", \"args\": {\"op\": %d", k);
            if (op->kind != OG_COMPUTE) fprintf(f, ", \"bytes\": %lld", (long long)op->bytes);
            fputs("}}", f);
        }
    }
    fputs("\n]}\n", f);
    return close_out(f, path, err, errlen);
}

typedef struct coll_use {
    int coll, n, algo;
    int64_t bytes;
} coll_use;

static int use_cmp(const void *a, const void *b)
{
    const coll_use *x = a, *y = b;
    if (x->coll != y->coll) return x->coll < y->coll ? -1 : 1;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->algo < y->algo ? -1 : x->algo > y->algo;
}

static void use_print(FILE *f, const coll_use *u, long count, int json, int first)
{
    const char *algo = u->algo < 0 ? "closed-form" : coll_algo_get(u->algo & 0xff)->name;
    const char *proto = u->algo < 0 ? "-" : coll_proto_name(u->algo >> 8);
    if (!json) {
        fprintf(f, "  %s on %d ranks, %lld B: %s:%s x %ld ops\n", og_coll_name(u->coll), u->n, (long long)u->bytes,
                algo, proto, count);
        return;
    }
    fprintf(f, "%s\n    {\"collective\": \"%s\", \"ranks\": %d, \"bytes\": %lld, \"algorithm\": \"%s\", "
               "\"protocol\": \"%s\", \"ops\": %ld}",
            first ? "" : ",", og_coll_name(u->coll), u->n, (long long)u->bytes, algo, proto, count);
}

/* The distinct (collective, ranks, bytes, algorithm) of the run and how many
 * ops each: counted in a hash table of the distinct ones, which are then
 * sorted. A table of every COLL op sorted whole (12 M entries at row 7's 44 M
 * ops: 288 MB and 2-3 s of qsort when the run's tables are still live) gave
 * the same lines. */
typedef struct use_count {
    coll_use u;
    long count;
} use_count;

static int count_cmp(const void *a, const void *b)
{
    return use_cmp(&((const use_count *)a)->u, &((const use_count *)b)->u);
}

static size_t use_hash(const coll_use *u)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the four fields */
    uint64_t v[4] = {(uint64_t)(uint32_t)u->coll, (uint64_t)(uint32_t)u->n, (uint64_t)(uint32_t)u->algo,
                     (uint64_t)u->bytes};
    for (int i = 0; i < 4; i++) h = (h ^ v[i]) * 1099511628211ULL;
    return (size_t)(h ^ h >> 29);
}

static int use_same(const coll_use *x, const coll_use *y)
{
    return x->coll == y->coll && x->n == y->n && x->algo == y->algo && x->bytes == y->bytes;
}

void eng_report_colls(FILE *f, const og_graph *g, const eng_result *r, int json)
{
    use_count *us = NULL;      /* distinct uses, in order of first sight */
    size_t n = 0, cap = 0;
    size_t nslot = 64, *slot = ts_calloc(nslot, sizeof *slot); /* index + 1 into us; 0: empty */
    for (int k = 0; r->algo && k < g->nranks; k++)
        for (int i = 0, c = 0; i < g->ranks[k].nops; i++) {
            const og_op *op = &g->ranks[k].ops[i];
            if (op->kind != OG_COLL) continue;
            coll_use u = {op->coll, g->groups[op->group].n, r->algo[k][c++], op->bytes};
            size_t j = use_hash(&u) & (nslot - 1);
            while (slot[j] && !use_same(&us[slot[j] - 1].u, &u)) j = (j + 1) & (nslot - 1);
            if (slot[j]) {
                us[slot[j] - 1].count++;
                continue;
            }
            ts_grow(&us, sizeof *us, &cap, n + 1);
            us[n++] = (use_count){u, 1};
            slot[j] = n;
            if (2 * n > nslot) { /* keep it at most half full */
                free(slot);
                nslot *= 2;
                slot = ts_calloc(nslot, sizeof *slot);
                for (size_t m = 0; m < n; m++) {
                    size_t h = use_hash(&us[m].u) & (nslot - 1);
                    while (slot[h]) h = (h + 1) & (nslot - 1);
                    slot[h] = m + 1;
                }
            }
        }
    free(slot);
    if (n) qsort(us, n, sizeof *us, count_cmp);
    if (json) fprintf(f, "[");
    for (size_t i = 0; i < n; i++) use_print(f, &us[i].u, us[i].count, json, i == 0);
    if (json) fprintf(f, "%s]", n ? "\n  " : "");
    free(us);
}
