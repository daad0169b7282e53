/* `trainsim coll`: a simulated nccl-tests sweep (all_reduce_perf and friends):
 * one collective per size on the first N GPUs of a platform, printed in
 * nccl-tests' exact header and columns so that real and simulated logs diff. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "coll.h"
#include "coll_params.h"
#include "msccl.h"
#include "opgraph.h"
#include "api_int.h"
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
    "  --gpus-per-proc G   GPUs one thread drives, as nccl-tests -g G (default 1: one\n"
    "                      process per GPU); each further GPU adds launch_per_gpu\n"
    "  --gpu-bind B        closest: each rank's host threads next to its GPU (Slurm\n"
    "                      --gpu-bind=closest; the cluster's \"bound\" lock-step figures);\n"
    "                      none (default): the cluster's own (docs/collectives.md)\n"
    "  --op OP             all_reduce, all_gather, reduce_scatter, broadcast, reduce,\n"
    "                      alltoall (nccl-tests' names; 'allreduce' etc. also work)\n"
    "  -b, --minbytes S    smallest size (K, M, G suffixes are powers of 1024; default 8)\n"
    "  -e, --maxbytes S    largest size (default 128M)\n"
    "  -f, --stepfactor F  multiply the size by F each step (default 2)\n"
    "  -i, --stepbytes S   add S each step instead\n"
    "  --algo A[:PROTO]    force an algorithm (and protocol: simple, ll128, ll);\n"
    "                      msccl:FILE runs an MSCCL algorithm XML (all-reduce)\n"
    "                      default: automatic selection per size (docs/collectives.md)\n"
    "  --nccl-env LIST     NCCL settings to simulate, NCCL_X=V,...: NCCL_ALGO, NCCL_PROTO,\n"
    "                      NCCL_MIN/MAX_CTAS, NCCL_MIN/MAX_NCHANNELS, NCCL_NVLS_NCHANNELS,\n"
    "                      NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE (docs/collectives.md);\n"
    "                      --algo wins over NCCL_ALGO\n"
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

typedef struct opts {
    const char *platform, *algo, *coll_spec, *tuning, *csv, *json, *calib;
    int nodes;
    int gpus, fidelity, root;
    int gpp;                /* --gpus-per-proc: GPUs one thread drives (1: one process per GPU) */
    int bound;              /* --gpu-bind closest: the launch binds host threads next to the GPUs */
    coll_nccl_env env;      /* --nccl-env: the NCCL settings to simulate */
    og_coll op;
    og_dtype dtype;
    int64_t minb, maxb, stepb;
    double factor;
} opts;

static void print_header(const opts *o, const ts_coll_result *r)
{
    printf("# trainsim coll: simulated, not measured: platform %s, %d GPUs, fidelity %s, algorithm %s\n",
           o->platform, r->gpus, r->fidelity,
           o->algo ? o->algo : o->coll_spec || o->tuning ? "policy (--coll/--tuning)" : "auto");
    printf("# Collective test starting: %s_perf\n", r->op);
    printf("# nThread 1 nGpus %d minBytes %lld maxBytes %lld step: %lld(%s) warmup iters: 0 iters: 1 agg iters: 1 "
           "validation: 0 graph: 0\n#\n",
           o->gpp, (long long)o->minb, (long long)o->maxb, o->stepb ? (long long)o->stepb : (long long)o->factor,
           o->stepb ? "bytes" : "factor");
    val_table_header(stdout);
}

static void print_row(const opts *o, const ts_coll_result *r, const ts_coll_point *p)
{
    val_table_row(stdout, p->size, p->count, r->dtype, o->op, o->root, p->time_s * 1e6, p->time_s * 1e6,
                  r->busbw_factor, -1, -1);
}

static int write_csv(const opts *o, const ts_coll_result *r, char *err, size_t errlen)
{
    FILE *f = fopen(o->csv, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->csv);
    fprintf(f, "op,gpus,size,count,type,redop,root,time_us,algbw_gbs,busbw_gbs,algorithm,protocol,fidelity\n");
    for (size_t i = 0; i < r->npoints; i++) {
        const ts_coll_point *p = &r->points[i];
        char t[40], a[40], b[40];
        ts_fmt_double(t, sizeof t, p->time_s * 1e6);
        ts_fmt_double(a, sizeof a, p->algbw_gbs);
        ts_fmt_double(b, sizeof b, p->busbw_gbs);
        fprintf(f, "%s,%d,%lld,%lld,%s,%s,%d,%s,%s,%s,%s,%s,%s\n", r->op, r->gpus, p->size, p->count, r->dtype,
                r->redop, r->root, t, a, b, p->algorithm, p->protocol, r->fidelity);
    }
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", o->csv);
}

static int write_json(const opts *o, const ts_coll_result *r, char *err, size_t errlen)
{
    FILE *f = fopen(o->json, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write: %m", o->json);
    fprintf(f, "{\"op\": ");
    ts_json_string(f, r->op);
    fprintf(f, ", \"gpus\": %d, \"platform\": ", r->gpus);
    ts_json_string(f, o->platform);
    fprintf(f, ", \"fidelity\": \"%s\", \"type\": \"%s\", \"results\": [", r->fidelity, r->dtype);
    for (size_t i = 0; i < r->npoints; i++) {
        const ts_coll_point *p = &r->points[i];
        fprintf(f, "%s\n  {\"size\": %lld, \"count\": %lld, \"time_us\": ", i ? "," : "", p->size, p->count);
        ts_json_number(f, p->time_s * 1e6);
        fprintf(f, ", \"algbw_gbs\": ");
        ts_json_number(f, p->algbw_gbs);
        fprintf(f, ", \"busbw_gbs\": ");
        ts_json_number(f, p->busbw_gbs);
        fprintf(f, ", \"algorithm\": \"%s\", \"protocol\": \"%s\"}", p->algorithm, p->protocol);
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0 ? 0 : ts_err(err, errlen, "%s: write failed", o->json);
}

/* Parse our options (SimGrid's --cfg/--log are split off first). */
static int parse_opts(int argc, char **argv, opts *o)
{
    enum { O_PLATFORM = 256, O_GPUS, O_OP, O_ALGO, O_COLL, O_FIDELITY, O_DTYPE, O_ROOT, O_CSV, O_JSON, O_NODES, O_CALIB,
           O_TUNING, O_GPP, O_BIND, O_NCCL_ENV };
    static const struct option longopts[] = {
        {"platform", required_argument, 0, O_PLATFORM}, {"gpus", required_argument, 0, O_GPUS},
        {"cluster", required_argument, 0, O_PLATFORM},  {"nodes", required_argument, 0, O_NODES},
        {"calibration", required_argument, 0, O_CALIB},
        {"op", required_argument, 0, O_OP},             {"algo", required_argument, 0, O_ALGO},
        {"coll", required_argument, 0, O_COLL},         {"fidelity", required_argument, 0, O_FIDELITY},
        {"tuning", required_argument, 0, O_TUNING},     {"gpus-per-proc", required_argument, 0, O_GPP},
        {"gpu-bind", required_argument, 0, O_BIND},     {"nccl-env", required_argument, 0, O_NCCL_ENV},
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
        case O_NCCL_ENV:
            if (cmd_nccl_env_arg("coll", optarg, &o->env)) return EXIT_USAGE;
            break;
        case O_TUNING: o->tuning = optarg; break;
        case O_CSV: o->csv = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_GPUS:
            o->gpus = (int)strtol(optarg, &end, 10);
            if (*end || o->gpus < 1 || o->gpus > 10000000)
                return cmd_usage_error("coll", "--gpus wants a group size of at least 1, not '%s'", optarg);
            break;
        case O_GPP: { /* range-checked as a long: a huge count must not wrap into range */
            long g = strtol(optarg, &end, 10);
            if (end == optarg || *end || g < 1 || g > 1024)
                return cmd_usage_error("coll", "--gpus-per-proc wants a count from 1 to 1024, not '%s'", optarg);
            o->gpp = (int)g;
            break;
        }
        case O_BIND:
            if (strcmp(optarg, "closest") != 0 && strcmp(optarg, "none") != 0)
                return cmd_usage_error("coll", "--gpu-bind wants closest or none, not '%s'", optarg);
            o->bound = strcmp(optarg, "closest") == 0;
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
        default: return cmd_unknown_option("coll", argv[optind - 1], longopts);
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
              .maxb = (int64_t)128 << 20, .factor = 2, .gpp = 1};
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours;
    cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    coll_nccl_env_init(&o.env);
    int rc = parse_opts(nours, ours, &o);
    char err[TS_MSG_MAX];
    coll_policy *pol = NULL;
    ts_coll_result *r = NULL;
    if (rc != 0) {
        rc = rc < 0 ? EXIT_OK : rc;
        goto out;
    }
    if ((rc = cmd_policy("coll", o.coll_spec, o.tuning, &pol)) != 0) goto out;
    coll_nccl_env env;
    char spec[96];
    o.algo = cmd_nccl_env_resolve("coll", NULL, NULL, &o.env, o.algo, o.op, &env, spec, sizeof spec);
    coll_set_nccl_env(env.set ? &env : NULL);
    ts_coll_opts co = {.c = {o.platform, o.nodes, o.calib, o.coll_spec, o.tuning, (const char *const *)sgv + 1},
                       .op = og_coll_name(o.op), .gpus = o.gpus, .min_bytes = o.minb, .max_bytes = o.maxb,
                       .step_factor = o.factor, .step_bytes = o.stepb, .algo = o.algo,
                       .fidelity = fid_names[o.fidelity], .dtype = og_dtype_name(o.dtype), .root = o.root};
    coll_set_gpus_per_proc(o.gpp);
    coll_set_proxy_bound(o.bound);
    if ((rc = (int)ts_coll(&co, &r, err, sizeof err)) != TS_OK) {
        fprintf(stderr, "trainsim coll: %s\n", err);
        goto out;
    }
    print_header(&o, r);
    for (size_t i = 0; i < r->npoints; i++) print_row(&o, r, &r->points[i]);
    printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n", r->avg_busbw_gbs);
    printf("# Collective test concluded: %s_perf\n", r->op);
    fflush(stdout);
    if (o.csv && write_csv(&o, r, err, sizeof err) < 0) rc = EXIT_USAGE;
    if (rc == EXIT_OK && o.json && write_json(&o, r, err, sizeof err) < 0) rc = EXIT_USAGE;
    if (rc != EXIT_OK) fprintf(stderr, "trainsim coll: %s\n", err);
out:
    ts_coll_result_free(r);
    coll_policy_free(pol);
    free(sgv);
    free(ours);
    return rc;
}
