/* bin/trainsim-bench: nccl-tests' sweep (options, table, #wrong) run for real
 * under MPI, on MPI collectives, trainsim's own schedules, or NCCL. */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "coll.h"
#include "util.h"
#include "val.h"

static const char bench_help[] =
    "usage: mpirun -np N trainsim-bench [options]\n\n"
    "Run one collective per size from -b to -e on N MPI ranks and print nccl-tests'\n"
    "table (size, count, type, redop, root, time, algbw, busbw, #wrong, out-of-place\n"
    "and in-place). #wrong counts the elements that differ from the collective's\n"
    "definition, summed over ranks (checked once per size before timing).\n\n"
    "options (nccl-tests' names):\n"
    "  --op OP             all_reduce (default), all_gather, reduce_scatter, broadcast,\n"
    "                      reduce, alltoall, sendrecv\n"
    "  --backend B         mpi (default: MPI collectives, host memory), schedule\n"
    "                      (trainsim's schedules over MPI point-to-point), nccl\n"
    "  --algo A            schedule backend: the algorithm (default ring; broadcast\n"
    "                      and reduce: chain; alltoall: pairwise)\n"
    "  -b, --minbytes S    smallest size (default 32M; K, M, G suffixes)\n"
    "  -e, --maxbytes S    largest size (default 32M)\n"
    "  -f, --stepfactor F  multiply the size by F (default 2)\n"
    "  -i, --stepbytes S   add S instead\n"
    "  -n, --iters N       timed iterations (default 20)\n"
    "  -w, --warmup_iters N  untimed iterations first (default 5)\n"
    "  -c, --check 0/1     check the data (default 1)\n"
    "  -d, --datatype T    float (default), double, int32\n"
    "  -o, --op_type O     sum (default), prod, min, max\n"
    "  -r, --root R        root of broadcast and reduce (default 0)\n"
    "  --csv FILE, --json FILE  also write the results (rank 0)\n"
    "  --inject-errors K   overwrite K result elements of one rank before the check\n"
    "                      (shows that #wrong counts real mismatches)\n"
    "  -h, --help          this help\n\n"
    "exit status: 0 ok, 1 wrong data, 2 bad input.\n";

static const bench_backend *backends[] = {&bench_mpi, &bench_schedule,
#ifdef TS_HAVE_NCCL
                                          &bench_nccl,
#endif
};
#define NBACKENDS (int)(sizeof backends / sizeof backends[0])

static const struct { const char *name; int bop; } redops[] = {
    {"sum", BENCH_SUM}, {"prod", BENCH_PROD}, {"min", BENCH_MIN}, {"max", BENCH_MAX}};
static const struct { const char *name; int type; int size; } dtypes[] = {
    {"float", BENCH_FLOAT, 4}, {"double", BENCH_DOUBLE, 8}, {"int32", BENCH_INT32, 4}};

/* The input of rank r at element i of its send buffer: small integers so that
 * sums, products and comparisons are exact in every type. */
static double input(int r, int64_t i) { return (double)(((r + 1) * 3 + i * 7) % 5 + 1); }

double bench_combine(int op, double a, double b)
{
    switch (op) {
    case BENCH_PROD: return a * b;
    case BENCH_MIN: return a < b ? a : b;
    case BENCH_MAX: return a > b ? a : b;
    default: return a + b;
    }
}

double bench_get(int type, const void *buf, int64_t i)
{
    switch (type) {
    case BENCH_DOUBLE: return ((const double *)buf)[i];
    case BENCH_INT32: return ((const int32_t *)buf)[i];
    default: return ((const float *)buf)[i];
    }
}

void bench_set(int type, void *buf, int64_t i, double v)
{
    switch (type) {
    case BENCH_DOUBLE: ((double *)buf)[i] = v; break;
    case BENCH_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    default: ((float *)buf)[i] = (float)v;
    }
}

/* Poison the receive buffer and write rank me's input: into send, or for an
 * in-place run into recv (at me x count for all-gather). */
static void fill(const bench_ctx *c)
{
    int64_t all = c->sendcount > c->recvcount ? c->sendcount : c->recvcount;
    int64_t at = c->inplace && c->coll == BENCH_ALLGATHER ? c->me * c->count : 0;
    for (int64_t i = 0; i < all; i++) bench_set(c->type, c->recv, i, -1);
    for (int64_t i = 0; i < c->sendcount; i++) bench_set(c->type, c->inplace ? c->recv : c->send, at + i, input(c->me, i));
}

/* What element i of rank me's result must be. */
static double expect(const bench_ctx *c, int64_t i)
{
    int n = c->n;
    switch (c->coll) {
    case BENCH_ALLGATHER: return input((int)(i / c->count), i % c->count);
    case BENCH_BROADCAST: return input(c->root, i);
    case BENCH_ALLTOALL: return input((int)(i / c->count), c->me * c->count + i % c->count);
    case BENCH_SENDRECV: return input((c->me - 1 + n) % n, i);
    case BENCH_REDUCESCATTER: {
        double v = input(0, c->me * c->count + i);
        for (int r = 1; r < n; r++) v = bench_combine(c->op, v, input(r, c->me * c->count + i));
        return v;
    }
    default: { /* all_reduce, reduce */
        double v = input(0, i);
        for (int r = 1; r < n; r++) v = bench_combine(c->op, v, input(r, i));
        return v;
    }
    }
}

/* Elements of the result that differ from the definition (reduce: root only). */
static long check(const bench_ctx *c, const void *result)
{
    if (c->coll == BENCH_REDUCE && c->me != c->root) return 0;
    long wrong = 0;
    for (int64_t i = 0; i < c->recvcount; i++) wrong += bench_get(c->type, result, i) != expect(c, i);
    return wrong;
}

typedef struct bopts {
    int coll, op, type, elsize, iters, warmup, check, root, backend, inject;
    int64_t minb, maxb, stepb;
    double factor;
    const char *algo, *csv, *json;
} bopts;

typedef struct bres {
    int64_t size, count;
    double t[2];
    long wrong[2];
} bres;

static int find_coll(const char *s)
{
    static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
                                  "sendrecv"};
    static const int ids[] = {BENCH_ALLREDUCE, BENCH_ALLGATHER, BENCH_REDUCESCATTER, BENCH_BROADCAST,
                              BENCH_REDUCE,    BENCH_ALLTOALL,  BENCH_SENDRECV};
    int v = val_coll_from_name(s);
    for (int i = 0; i < 7; i++)
        if (v != VAL_UNKNOWN && v == val_coll_from_name(names[i])) return ids[i];
    return -1;
}

/* og_coll of a bench collective (sendrecv: VAL_P2P), for names and busbw. */
static int og_of(int coll)
{
    static const int m[] = {OG_ALLREDUCE, OG_ALLGATHER, OG_REDUCESCATTER, OG_BROADCAST, OG_REDUCE, OG_ALLTOALL,
                            VAL_P2P};
    return m[coll];
}

static int usage(int me, const char *fmt, const char *arg)
{
    if (me == 0) {
        fprintf(stderr, "trainsim-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, " (see 'trainsim-bench --help')\n");
    }
    return 2;
}

static int parse(int argc, char **argv, bopts *o, int me)
{
    enum { O_OP = 256, O_BACKEND, O_ALGO, O_CSV, O_JSON, O_INJECT };
    static const struct option lo[] = {
        {"op", required_argument, 0, O_OP},          {"backend", required_argument, 0, O_BACKEND},
        {"algo", required_argument, 0, O_ALGO},      {"csv", required_argument, 0, O_CSV},
        {"json", required_argument, 0, O_JSON},      {"minbytes", required_argument, 0, 'b'},
        {"maxbytes", required_argument, 0, 'e'},     {"stepfactor", required_argument, 0, 'f'},
        {"stepbytes", required_argument, 0, 'i'},    {"iters", required_argument, 0, 'n'},
        {"warmup_iters", required_argument, 0, 'w'}, {"check", required_argument, 0, 'c'},
        {"datatype", required_argument, 0, 'd'},     {"op_type", required_argument, 0, 'o'},
        {"root", required_argument, 0, 'r'},         {"help", no_argument, 0, 'h'},
        {"inject-errors", required_argument, 0, O_INJECT},
        {0, 0, 0, 0},
    };
    int c;
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hb:e:f:i:n:w:c:d:o:r:", lo, NULL)) != -1) {
        long v;
        switch (c) {
        case O_OP:
            if ((o->coll = find_coll(optarg)) < 0)
                return usage(me, "unknown --op '%s' (valid: all_reduce, all_gather, reduce_scatter, broadcast, "
                                 "reduce, alltoall, sendrecv)", optarg);
            break;
        case O_BACKEND:
            for (o->backend = 0; o->backend < NBACKENDS && strcmp(backends[o->backend]->name, optarg); o->backend++)
                ;
            if (o->backend == NBACKENDS)
                return usage(me, strcmp(optarg, "nccl") == 0
                                     ? "backend '%s' was not built (no nvcc/nccl.h at build time)"
                                     : "unknown --backend '%s' (valid: mpi, schedule, nccl)", optarg);
            break;
        case O_ALGO: o->algo = optarg; break;
        case O_CSV: o->csv = optarg; break;
        case O_JSON: o->json = optarg; break;
        case 'b':
        case 'e':
        case 'i':
            if (val_parse_size(optarg, c == 'b' ? &o->minb : c == 'e' ? &o->maxb : &o->stepb) < 0 ||
                (c == 'i' && o->stepb == 0))
                return usage(me, "a size like 8, 64K, 1M or 8G is wanted, not '%s'", optarg);
            break;
        case 'f':
            o->factor = strtod(optarg, &end);
            if (*end || !(o->factor > 1) || o->factor > 1024) return usage(me, "-f wants a factor above 1, not '%s'", optarg);
            break;
        case O_INJECT:
            v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 1000000) return usage(me, "--inject-errors wants a count, not '%s'", optarg);
            o->inject = (int)v;
            break;
        case 'n':
        case 'w':
        case 'c':
        case 'r':
            v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 1000000 || (c == 'n' && v == 0))
                return usage(me, "a count is wanted, not '%s'", optarg);
            *(c == 'n' ? &o->iters : c == 'w' ? &o->warmup : c == 'c' ? &o->check : &o->root) = (int)v;
            break;
        case 'd':
            for (v = 0; v < 3 && strcmp(dtypes[v].name, optarg); v++)
                ;
            if (v == 3) return usage(me, "unknown -d '%s' (valid: float, double, int32)", optarg);
            o->type = dtypes[v].type, o->elsize = dtypes[v].size;
            break;
        case 'o':
            for (v = 0; v < 4 && strcmp(redops[v].name, optarg); v++)
                ;
            if (v == 4) return usage(me, "unknown -o '%s' (valid: sum, prod, min, max)", optarg);
            o->op = redops[v].bop;
            break;
        case 'h':
            if (me == 0) fputs(bench_help, stdout);
            return -1;
        case ':': return usage(me, "option '%s' needs a value", argv[optind - 1]);
        default: return usage(me, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage(me, "unexpected argument '%s'", argv[optind]);
    if (o->minb > o->maxb) return usage(me, "-b is larger than -e%s", "");
    return 0;
}

/* Counts of one size (nccl-tests' conventions): count is per rank for
 * all-gather, reduce-scatter and all-to-all (per peer). */
static void setup(bench_ctx *c, int64_t size, int64_t *shown)
{
    int n = c->n;
    int per = c->coll == BENCH_ALLGATHER || c->coll == BENCH_REDUCESCATTER || c->coll == BENCH_ALLTOALL;
    int64_t rounded = val_nccl_size(per ? OG_ALLGATHER : OG_ALLREDUCE, n, size, c->elsize, &c->count);
    *shown = rounded;
    c->sendcount = c->recvcount = c->count;
    if (c->coll == BENCH_ALLGATHER) c->recvcount = c->count * n;
    if (c->coll == BENCH_REDUCESCATTER) c->sendcount = c->count * n;
    if (c->coll == BENCH_ALLTOALL) c->sendcount = c->recvcount = c->count * n;
}

static double now(void) { return MPI_Wtime(); }

/* One size: check (when asked), warm up, time; out-of-place then in-place. */
static int run_size(const bopts *o, const bench_backend *be, bench_ctx *c, bres *res, char *err, size_t errlen)
{
    for (int ip = 0; ip < 2; ip++) {
        c->inplace = ip;
        long wrong = 0;
        if (o->check) {
            fill(c);
            if (be->upload) be->upload(c);
            if (be->run(c, err, errlen) < 0) return -1;
            const void *res = be->result(c);
            if (o->inject && c->me == (c->coll == BENCH_REDUCE ? c->root : 0))
                for (int64_t i = 0; i < o->inject && i < c->recvcount; i++)
                    bench_set(c->type, (void *)res, i * (c->recvcount / o->inject), -7);
            wrong = check(c, res);
        }
        for (int k = 0; k < o->warmup; k++)
            if (be->run(c, err, errlen) < 0) return -1;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int k = 0; k < o->iters; k++)
            if (be->run(c, err, errlen) < 0) return -1;
        if (be->sync) be->sync(c);
        double t = (now() - t0) / o->iters, tmax;
        long wsum;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&wrong, &wsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        res->t[ip] = tmax * 1e6;
        res->wrong[ip] = o->check ? wsum : -1;
    }
    return 0;
}

static void write_outputs(const bopts *o, const bench_ctx *c, const bres *rs, int nr)
{
    const char *names[] = {"out_of_place", "in_place"};
    double f = val_busbw_factor(og_of(o->coll), c->n);
    if (o->csv) {
        FILE *fp = fopen(o->csv, "w");
        if (fp) {
            fprintf(fp, "collective,backend,ranks,size,count,type,redop,root,time_us,algbw_gbs,busbw_gbs,wrong,"
                        "ip_time_us,ip_algbw_gbs,ip_busbw_gbs,ip_wrong\n");
            for (int i = 0; i < nr; i++) {
                fprintf(fp, "%s,%s,%d,%lld,%lld,%s,%s,%d", val_coll_name(og_of(o->coll)), backends[o->backend]->name,
                        c->n, (long long)rs[i].size, (long long)rs[i].count, dtypes[o->type].name,
                        redops[o->op].name, val_rooted(og_of(o->coll)) ? o->root : -1);
                for (int k = 0; k < 2; k++) {
                    double alg = rs[i].t[k] > 0 ? rs[i].size / rs[i].t[k] / 1e3 : 0;
                    fprintf(fp, ",%.6g,%.6g,%.6g,%ld", rs[i].t[k], alg, alg * f, rs[i].wrong[k]);
                }
                fprintf(fp, "\n");
            }
            fclose(fp);
        } else {
            fprintf(stderr, "trainsim-bench: %s: cannot write\n", o->csv);
        }
    }
    if (o->json) {
        FILE *fp = fopen(o->json, "w");
        if (!fp) {
            fprintf(stderr, "trainsim-bench: %s: cannot write\n", o->json);
            return;
        }
        fprintf(fp, "{\"collective\": \"%s\", \"backend\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"redop\": "
                    "\"%s\", \"results\": [",
                val_coll_name(og_of(o->coll)), backends[o->backend]->name, c->n, dtypes[o->type].name,
                redops[o->op].name);
        for (int i = 0; i < nr; i++) {
            fprintf(fp, "%s\n  {\"size\": %lld, \"count\": %lld", i ? "," : "", (long long)rs[i].size,
                    (long long)rs[i].count);
            for (int k = 0; k < 2; k++) {
                double alg = rs[i].t[k] > 0 ? rs[i].size / rs[i].t[k] / 1e3 : 0;
                fprintf(fp, ", \"%s\": {\"time_us\": ", names[k]);
                ts_json_number(fp, rs[i].t[k]);
                fprintf(fp, ", \"algbw_gbs\": ");
                ts_json_number(fp, alg);
                fprintf(fp, ", \"busbw_gbs\": ");
                ts_json_number(fp, alg * f);
                fprintf(fp, ", \"wrong\": %ld}", rs[i].wrong[k]);
            }
            fprintf(fp, "}");
        }
        fprintf(fp, "\n]}\n");
        fclose(fp);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    bopts o = {.coll = BENCH_ALLREDUCE, .op = BENCH_SUM, .type = BENCH_FLOAT, .elsize = 4, .iters = 20, .warmup = 5,
               .check = 1, .minb = 32 << 20, .maxb = 32 << 20, .factor = 2};
    int rc = parse(argc, argv, &o, me);
    if (rc == 0 && (o.coll == BENCH_BROADCAST || o.coll == BENCH_REDUCE) && o.root >= n)
        rc = usage(me, "-r %s is outside the ranks", "");
    if (rc == 0 && o.coll == BENCH_SENDRECV && n < 2) rc = usage(me, "sendrecv needs 2 ranks or more%s", "");
    if (rc != 0) {
        MPI_Finalize();
        return rc < 0 ? 0 : rc;
    }
    const bench_backend *be = backends[o.backend];
    bench_ctx c = {.coll = o.coll, .op = o.op, .type = o.type, .elsize = o.elsize, .root = o.root, .me = me, .n = n,
                   .algo = o.algo};
    char err[TS_ERRLEN] = "";
    if (be->init && be->init(&c, err, sizeof err) < 0) {
        if (me == 0) fprintf(stderr, "trainsim-bench: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    char host[256] = "?";
    gethostname(host, sizeof host);
    if (me == 0) {
        printf("# Collective test starting: %s_perf\n", val_coll_name(og_of(o.coll)));
        printf("# trainsim-bench backend %s: measured, not simulated\n", be->name);
        printf("# nThread 1 nGpus 1 minBytes %lld maxBytes %lld step: %lld(%s) warmup iters: %d iters: %d agg iters: 1 "
               "validation: %d graph: 0\n#\n# Using devices\n",
               (long long)o.minb, (long long)o.maxb, o.stepb ? (long long)o.stepb : (long long)o.factor,
               o.stepb ? "bytes" : "factor", o.warmup, o.iters, o.check);
    }
    /* one line per rank, printed by rank 0 (mpirun interleaves ranks' output) */
    char line[512], *all = me == 0 ? ts_malloc((size_t)n * sizeof line) : NULL;
    snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s", me, (int)getpid(), host,
             c.device, be->name, c.device_name[0] ? c.device_name : "host memory");
    MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        for (int r = 0; r < n; r++) printf("%s\n", all + (size_t)r * sizeof line);
        free(all);
        printf("#\n");
        val_table_header(stdout);
        fflush(stdout);
    }
    bres *rs = NULL;
    size_t cap = 0;
    int nr = 0, fail = 0;
    double sum_bus = 0;
    long wrong_total = 0;
    double f = val_busbw_factor(og_of(o.coll), n);
    for (int64_t size = o.minb; size <= o.maxb;) {
        ts_grow(&rs, sizeof *rs, &cap, nr + 1);
        bres *r = &rs[nr];
        setup(&c, size, &r->size);
        r->count = c.count;
        if (be->alloc(&c, err, sizeof err) < 0 || run_size(&o, be, &c, r, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim-bench: rank %d: %s of %lld bytes: %s\n", me, val_coll_name(og_of(o.coll)),
                    (long long)r->size, err);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (me == 0) {
            val_table_row(stdout, r->size, r->count, dtypes[o.type].name, og_of(o.coll), o.root, r->t[0], r->t[1], f,
                          r->wrong[0], r->wrong[1]);
            fflush(stdout);
        }
        for (int k = 0; k < 2; k++) wrong_total += r->wrong[k] > 0 ? r->wrong[k] : 0;
        sum_bus += r->t[0] > 0 ? r->size / r->t[0] / 1e3 * f : 0;
        nr++;
        int64_t next = o.stepb ? size + o.stepb : (int64_t)(size * o.factor);
        if (next <= size) break;
        size = next;
    }
    fail = wrong_total > 0;
    if (me == 0) {
        printf("# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g \n#\n", wrong_total, fail ? "FAILED" : "OK",
               nr ? sum_bus / nr : 0);
        printf("# Collective test concluded: %s_perf\n", val_coll_name(og_of(o.coll)));
        write_outputs(&o, &c, rs, nr);
    }
    be->finish(&c);
    free(rs);
    MPI_Finalize();
    return fail ? 1 : 0;
}
