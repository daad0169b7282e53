/* `trainsim coll`: a simulated nccl-tests sweep (all_reduce_perf and friends):
 * one collective per size on the first N GPUs of a platform, printed in
 * nccl-tests' exact header and columns so that real and simulated logs diff. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "coll.h"
#include "engine.h"
#include "msccl.h"
#include "opgraph.h"
#include "util.h"
#include "val.h"

int cmd_algo_arg(const char *cmd, const char *arg, const char **out)
{
    if (strncmp(arg, "msccl:", 6) != 0) return *out = arg, 0;
    char err[TS_ERRLEN];
    if (coll_msccl_use(arg + 6, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim %s: --algo: %s\n", cmd, err);
        return EXIT_USAGE;
    }
    *out = "msccl";
    return 0;
}

static const char coll_help[] =
    "usage: trainsim coll --platform P --op OP [options]\n\n"
    "Simulate an nccl-tests sweep: one collective per size, from -b to -e, on the\n"
    "first N GPU hosts of platform P (natural name order), and print nccl-tests'\n"
    "header and columns (size, count, type, redop, root, time, algbw, busbw,\n"
    "#wrong = N/A; in-place equals out-of-place in simulation) with its algbw and\n"
    "busbw definitions.\n\n"
    "options:\n"
    "  --platform P        cluster (name, NAME:NODES or JSON: docs/clusters.md) or\n"
    "                      SimGrid XML platform file; --cluster P is the same\n"
    "  --nodes N           cluster node count;  --calibration F: a calibration JSON\n"
    "  --gpus N            group size (default: every host of the platform)\n"
    "  --op OP             all_reduce, all_gather, reduce_scatter, broadcast, reduce,\n"
    "                      alltoall (nccl-tests' names; 'allreduce' etc. also work)\n"
    "  -b, --minbytes S    smallest size (K, M, G suffixes are powers of 1024; default 8)\n"
    "  -e, --maxbytes S    largest size (default 128M)\n"
    "  -f, --stepfactor F  multiply the size by F each step (default 2)\n"
    "  -i, --stepbytes S   add S each step instead\n"
    "  --algo A[:PROTO]    force an algorithm (and protocol: simple, ll128, ll);\n"
    "                      msccl:FILE runs an MSCCL algorithm XML (all-reduce)\n"
    "                      default: automatic selection per size (docs/collectives.md)\n"
    "  --coll SPEC         per-collective forcing, e.g. allreduce=tree,allgather=ring\n"
    "                      (falls back to automatic where the group cannot run it)\n"
    "  --tuning FILE       tuning table CSV (coll,min_gpus,max_gpus,min_bytes,\n"
    "                      max_bytes,algorithm): the first matching row chooses;\n"
    "                      --algo and --coll win over it (docs/collectives.md)\n"
    "  --fidelity F        pipelined (default), step, or analytical (closed form,\n"
    "                      no simulation)\n"
    "  --dtype T           element type (default float)\n"
    "  --root R            root of broadcast and reduce (default 0)\n"
    "  --csv FILE          also write the results as CSV\n"
    "  --json FILE         also write the results as JSON\n"
    "  --cfg=K:V, --log=X  passed to SimGrid\n"
    "  -h, --help          this help\n\n"
    "exit status: 0 ok, 2 bad input.\n";

enum { FID_STEP = VAL_FID_STEP, FID_PIPELINED = VAL_FID_PIPELINED, FID_ANALYTICAL = VAL_FID_ANALYTICAL };
static const char *fid_names[] = {"step", "pipelined", "analytical"};

typedef struct result {
    int64_t size, count;
    double time;        /* seconds */
    int algo;
    coll_proto proto;
} result;

typedef struct opts {
    const char *platform, *algo, *coll_spec, *tuning, *csv, *json, *calib;
    int nodes;
    int gpus, fidelity, root;
    og_coll op;
    og_dtype dtype;
    int64_t minb, maxb, stepb;
    double factor;
} opts;

static int rooted(og_coll c) { return val_rooted(c); }

static void print_header(const opts *o)
{
    printf("# trainsim coll: simulated, not measured: platform %s, %d GPUs, fidelity %s, algorithm %s\n",
           o->platform, o->gpus, fid_names[o->fidelity],
           o->algo ? o->algo : o->coll_spec || o->tuning ? "policy (--coll/--tuning)" : "auto");
    printf("# Collective test starting: %s_perf\n", og_coll_name(o->op));
    printf("# nThread 1 nGpus 1 minBytes %lld maxBytes %lld step: %lld(%s) warmup iters: 0 iters: 1 agg iters: 1 "
           "validation: 0 graph: 0\n#\n",
           (long long)o->minb, (long long)o->maxb, o->stepb ? (long long)o->stepb : (long long)o->factor,
           o->stepb ? "bytes" : "factor");
    val_table_header(stdout);
}

static void bandwidths(const opts *o, const result *r, double *algbw, double *busbw)
{
    *algbw = r->time > 0 ? (double)r->size / r->time / 1e9 : 0;
    *busbw = *algbw * coll_busbw_factor(o->op, o->gpus);
}

static void print_row(const opts *o, const result *r)
{
    val_table_row(stdout, r->size, r->count, og_dtype_name(o->dtype), o->op, o->root, r->time * 1e6, r->time * 1e6,
                  coll_busbw_factor(o->op, o->gpus), -1, -1);
}

static int write_csv(const opts *o, const result *rs, int nr, char *err, size_t errlen)
{
    FILE *f = fopen(o->csv, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->csv);
    fprintf(f, "op,gpus,size,count,type,redop,root,time_us,algbw_gbs,busbw_gbs,algorithm,protocol,fidelity\n");
    for (int i = 0; i < nr; i++) {
        double alg, bus;
        char t[40], a[40], b[40];
        bandwidths(o, &rs[i], &alg, &bus);
        ts_fmt_double(t, sizeof t, rs[i].time * 1e6);
        ts_fmt_double(a, sizeof a, alg);
        ts_fmt_double(b, sizeof b, bus);
        fprintf(f, "%s,%d,%lld,%lld,%s,%s,%d,%s,%s,%s,%s,%s,%s\n", og_coll_name(o->op), o->gpus,
                (long long)rs[i].size, (long long)rs[i].count, og_dtype_name(o->dtype), val_redop(o->op),
                rooted(o->op) ? o->root : -1, t, a, b, coll_algo_get(rs[i].algo)->name,
                coll_proto_name(rs[i].proto), fid_names[o->fidelity]);
    }
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", o->csv);
}

static int write_json(const opts *o, const result *rs, int nr, char *err, size_t errlen)
{
    FILE *f = fopen(o->json, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->json);
    fprintf(f, "{\"op\": ");
    ts_json_string(f, og_coll_name(o->op));
    fprintf(f, ", \"gpus\": %d, \"platform\": ", o->gpus);
    ts_json_string(f, o->platform);
    fprintf(f, ", \"fidelity\": \"%s\", \"type\": \"%s\", \"results\": [", fid_names[o->fidelity],
            og_dtype_name(o->dtype));
    for (int i = 0; i < nr; i++) {
        double alg, bus;
        bandwidths(o, &rs[i], &alg, &bus);
        fprintf(f, "%s\n  {\"size\": %lld, \"count\": %lld, \"time_us\": ", i ? "," : "", (long long)rs[i].size,
                (long long)rs[i].count);
        ts_json_number(f, rs[i].time * 1e6);
        fprintf(f, ", \"algbw_gbs\": ");
        ts_json_number(f, alg);
        fprintf(f, ", \"busbw_gbs\": ");
        ts_json_number(f, bus);
        fprintf(f, ", \"algorithm\": \"%s\", \"protocol\": \"%s\"}", coll_algo_get(rs[i].algo)->name,
                coll_proto_name(rs[i].proto));
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", o->json);
}

/* Parse our options (SimGrid's --cfg/--log are split off first). */
static int parse_opts(int argc, char **argv, opts *o)
{
    enum { O_PLATFORM = 256, O_GPUS, O_OP, O_ALGO, O_COLL, O_FIDELITY, O_DTYPE, O_ROOT, O_CSV, O_JSON, O_NODES, O_CALIB,
           O_TUNING };
    static const struct option longopts[] = {
        {"platform", required_argument, 0, O_PLATFORM}, {"gpus", required_argument, 0, O_GPUS},
        {"cluster", required_argument, 0, O_PLATFORM},  {"nodes", required_argument, 0, O_NODES},
        {"calibration", required_argument, 0, O_CALIB},
        {"op", required_argument, 0, O_OP},             {"algo", required_argument, 0, O_ALGO},
        {"coll", required_argument, 0, O_COLL},         {"fidelity", required_argument, 0, O_FIDELITY},
        {"tuning", required_argument, 0, O_TUNING},
        {"dtype", required_argument, 0, O_DTYPE},       {"root", required_argument, 0, O_ROOT},
        {"csv", required_argument, 0, O_CSV},           {"json", required_argument, 0, O_JSON},
        {"minbytes", required_argument, 0, 'b'},        {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'},      {"stepbytes", required_argument, 0, 'i'},
        {"help", no_argument, 0, 'h'},                  {0, 0, 0, 0},
    };
    int c, have_op = 0;
    char *end;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hb:e:f:i:", longopts, NULL)) != -1) {
        switch (c) {
        case O_PLATFORM: o->platform = optarg; break;
        case O_CALIB: o->calib = optarg; break;
        case O_NODES:
            o->nodes = (int)strtol(optarg, &end, 10);
            if (*end || o->nodes < 1 || o->nodes > 1000000)
                return cmd_usage_error("coll", "--nodes wants a count from 1 to 1000000, not '%s'", optarg);
            break;
        case O_ALGO:
            if (cmd_algo_arg("coll", optarg, &o->algo)) return EXIT_USAGE;
            break;
        case O_COLL: o->coll_spec = optarg; break;
        case O_TUNING: o->tuning = optarg; break;
        case O_CSV: o->csv = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_GPUS:
            o->gpus = (int)strtol(optarg, &end, 10);
            if (*end || o->gpus < 1 || o->gpus > 10000000)
                return cmd_usage_error("coll", "--gpus wants a group size of at least 1, not '%s'", optarg);
            break;
        case O_ROOT:
            o->root = (int)strtol(optarg, &end, 10);
            if (*end || o->root < 0) return cmd_usage_error("coll", "--root wants a rank, not '%s'", optarg);
            break;
        case O_OP:
            if ((c = coll_from_name(optarg)) < 0 || c == OG_ALLTOALLV)
                return cmd_usage_error("coll", "unknown --op '%s' (valid: all_reduce, all_gather, reduce_scatter, "
                                               "broadcast, reduce, alltoall, barrier)", optarg);
            o->op = c;
            have_op = 1;
            break;
        case O_FIDELITY:
            for (o->fidelity = 0; o->fidelity < 3 && strcmp(fid_names[o->fidelity], optarg); o->fidelity++)
                ;
            if (o->fidelity == 3)
                return cmd_usage_error("coll", "unknown fidelity '%s' (valid: step, pipelined, analytical)", optarg);
            break;
        case O_DTYPE:
            if ((c = og_dtype_from_name(optarg)) < 0) return cmd_usage_error("coll", "unknown --dtype '%s'", optarg);
            o->dtype = c;
            break;
        case 'b':
        case 'e':
        case 'i':
            if (val_parse_size(optarg, c == 'b' ? &o->minb : c == 'e' ? &o->maxb : &o->stepb) < 0 ||
                (c == 'i' && o->stepb == 0))
                return cmd_usage_error("coll", "-%c wants a size like 8, 64K, 1M or 8G, not '%s'", c, optarg);
            break;
        case 'f':
            o->factor = strtod(optarg, &end);
            if (*end || !(o->factor > 1) || o->factor > 1024)
                return cmd_usage_error("coll", "-f wants a factor above 1, not '%s'", optarg);
            break;
        case 'h': fputs(coll_help, stdout); return -1;
        case ':': return cmd_usage_error("coll", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_usage_error("coll", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage_error("coll", "unexpected argument '%s'", argv[optind]);
    if (!o->platform || !have_op) return cmd_usage_error("coll", "--platform and --op are required");
    if (o->minb > o->maxb)
        return cmd_usage_error("coll", "-b %lld is larger than -e %lld", (long long)o->minb, (long long)o->maxb);
    return 0;
}

int cmd_coll(int argc, char **argv)
{
    opts o = {.fidelity = FID_PIPELINED, .op = OG_ALLREDUCE, .dtype = OG_F32, .minb = 8,
              .maxb = (int64_t)128 << 20, .factor = 2};
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int sgc, nours;
    sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    int rc = parse_opts(nours, ours, &o);
    char err[TS_ERRLEN];
    coll_policy *pol = NULL;
    result *rs = NULL;
    val_sweep sw;
    memset(&sw, 0, sizeof sw);
    int nr = 0;
    if (rc != 0) {
        rc = rc < 0 ? EXIT_OK : rc;
        goto out;
    }
    if ((rc = cmd_policy("coll", o.coll_spec, o.tuning, &pol)) != 0) goto out;
    rc = EXIT_USAGE;
    eng_init(&sgc, sgv);
    if (eng_load(o.platform, o.nodes, o.calib, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim coll: %s\n", err);
        goto out;
    }
    if (val_sweep_open(&sw, o.op, o.gpus, o.root, o.dtype, o.fidelity, o.algo, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim coll: %s\n", err);
        goto out;
    }
    sw.policy = pol;
    o.gpus = sw.n;
    print_header(&o);
    size_t cap = 0;
    double sum_bus = 0;
    for (int64_t size = o.minb; size <= o.maxb;) {
        ts_grow(&rs, sizeof *rs, &cap, nr + 1);
        result *r = &rs[nr];
        /* nccl-tests (2.14 on) rounds each size down to whole elements, and
         * per-rank counts down to 16 bytes' worth of elements */
        r->size = val_nccl_size(o.op, o.gpus, size, og_dtype_size(o.dtype), &r->count);
        val_point pt;
        if (val_sweep_size(&sw, r->size, &pt, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim coll: %s of %lld bytes: %s\n", og_coll_name(o.op), (long long)r->size, err);
            goto out;
        }
        r->time = pt.time, r->algo = pt.algo, r->proto = pt.proto;
        print_row(&o, r);
        double alg, bus;
        bandwidths(&o, r, &alg, &bus);
        sum_bus += bus;
        nr++;
        int64_t next = o.stepb ? size + o.stepb : (int64_t)(size * o.factor);
        if (next <= size) break;
        size = next;
    }
    printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n", nr ? sum_bus / nr : 0);
    printf("# Collective test concluded: %s_perf\n", og_coll_name(o.op));
    fflush(stdout);
    rc = EXIT_OK;
    if (o.csv && write_csv(&o, rs, nr, err, sizeof err) < 0) rc = EXIT_USAGE;
    if (rc == EXIT_OK && o.json && write_json(&o, rs, nr, err, sizeof err) < 0) rc = EXIT_USAGE;
    if (rc != EXIT_OK) fprintf(stderr, "trainsim coll: %s\n", err);
out:
    val_sweep_close(&sw);
    coll_policy_free(pol);
    free(rs);
    free(sgv);
    free(ours);
    return rc;
}
