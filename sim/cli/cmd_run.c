/* `trainsim run`: one training iteration of a model under a parallel layout:
 * memory fit, iteration time, throughput, MFU and a time breakdown. */
#include <getopt.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytic/analytic.h"
#include "cluster.h"
#include "cmds.h"
#include "coll.h"
#include "compute/compute.h"
#include "engine.h"
#include "memory/memory.h"
#include "report.h"
#include "api_int.h"
#include "util.h"
#include "workload/workload.h"

#define BIGERR 16384
#define GIB 1073741824.0

static const char run_help[] =
    "usage: trainsim run --model M --layout L [--platform P] [options]\n\n"
    "Predict one training iteration of model M under the parallel layout L: memory per\n"
    "GPU (and whether it fits), iteration time, tokens/s, TFLOP/s per GPU, MFU and a time\n"
    "breakdown (compute, exposed TP/CP/EP/PP/DP communication, pipeline bubble).\n"
    "A layout that does not fit in GPU memory is reported with its breakdown and not\n"
    "simulated (exit status 1). docs/workload.md documents every modelling choice.\n\n"
    "options:\n"
    "  --model M          HuggingFace config.json (or trainsim model JSON), or a name in\n"
    "                     configs/models/ (gpt3-175b, llama3-70b, mixtral-8x7b, ...)\n"
    "  --layout L         Megatron-LM: tp=,pp=,dp=,cp=,ep=,vpp=,mbs=,gbs=,zero=0..3,sp=on|off,\n"
    "                     recompute=none|selective|full|op (op: torchtitan's selective op\n"
    "                     checkpointing),schedule=gpipe|1f1b|interleaved|zbh1,\n"
    "                     bucket= (DP bucket, parameters); with zero=3: hpz=N (ZeRO++ secondary\n"
    "                     parameter shard over N DP ranks), qwz=on (int8 weight gathers),\n"
    "                     qgz=on (int4 all-to-all gradients), hgz=N (gradients reduced inside\n"
    "                     N DP ranks, across once per iteration; hpz=2,hgz=8: 3-level)\n"
    "                     AxoNN 4D: gx=,gy=,gz=,dp=,mbs=,gbs=,zero=0..2,recompute=,\n"
    "                     overlap=on|off (AxoNN's overlap; default on)\n"
    "                     attn=flash3|flash2|flash|unfused: attention kernel (default: the\n"
    "                     stack's)\n"
    "  --platform P       cluster (name, NAME:NODES or JSON; docs/clusters.md) or SimGrid\n"
    "                     XML platform (needed unless --fidelity analytical); a cluster\n"
    "                     also gives the GPU and the analytical model's network figures\n"
    "  --cluster P        the same as --platform\n"
    "  --nodes N          cluster node count;  --calibration F  a calibration JSON\n"
    "  --gpus N           GPU count (derives dp when the layout leaves it out)\n"
    "  --gpu NAME         GPU spec from configs/gpus/ (a100, h100, h200, mi250x-gcd) or a\n"
    "                     path; default h100\n"
    "  --gemm-table CSV   calibrate GEMM efficiency from measured times (m,n,k,dtype,seconds)\n"
    "  --gpus-per-node N  node size for the network model (default: the GPU's node, 8)\n"
    "  --net K=V,...      analytical network figures: intra_bw, intra_lat, inter_bw,\n"
    "                     inter_lat (bytes/s per GPU per direction, seconds per hop);\n"
    "                     defaults by GPU from hardware.md (docs/workload.md)\n"
    "  --seq S            sequence length (default: the model's, at most 8192)\n"
    "  --dtype T          bf16 (default), fp16, fp8, fp32 (fp8: GEMMs in FP8 as Transformer\n"
    "                     Engine runs them; attention, norms, elementwise and messages\n"
    "                     between ranks in bf16; torchtitan stacks: torchao's tensorwise\n"
    "                     float8, f8ag=on in the layout for FSDP2's float8 all-gather)\n"
    "  --stack S          software stack: megatron-core (default), megatron-2021,\n"
    "                     megatron-2022, deepspeed-2021, deepspeed, megatron-deepspeed, fsdp2,\n"
    "                     fsdp1, torchtitan, torchtitan-compile, nemo-24.07: its attention\n"
    "                     kernel (unless\n"
    "                     the layout names attn=), fused kernels, GEMM library, overlaps\n"
    "                     and ZeRO-3 structure (docs/compute.md)\n"
    "  --fidelity F       estimate (closed form from model and layout, no graph),\n"
    "                     analytical (critical path of the op graph, no SimGrid), pipelined\n"
    "                     (default with --platform) or step: SimGrid collective fidelity\n"
    "  --detail D         reduced (default): data-parallel replica 0 only with DP\n"
    "                     collectives and intra-node TP collectives costed analytically,\n"
    "                     consecutive compute fused; replicas: every rank and DP\n"
    "                     collective simulated, intra-node TP analytical, compute fused;\n"
    "                     full: every rank and collective\n"
    "  --every-rank       replicas: simulate every rank, also where TP rank 0 of each TP\n"
    "                     group stands exactly for the others (rail copies, checked on\n"
    "                     the platform's routes; docs/performance.md); --opgraph implies it\n"
    CMD_POLICY_HELP
    "                     (the engine and the analytical model choose alike; the\n"
    "                     output lists each collective's algorithm)\n"
    "  --json FILE        write the results as JSON\n"
    "  --timeline FILE    write a Chrome trace / Perfetto timeline of the simulated ranks\n"
    "  --links N          the N busiest links of the SimGrid run (bytes, GB/s, busy %:\n"
    "                     bytes / (bandwidth x iteration)), also under \"links\" in --json;\n"
    "                     pipelined or step fidelity only. Links carry what SimGrid\n"
    "                     simulated: never the analytical intra-node TP collectives; with\n"
    "                     --detail reduced only replica 0's PP messages, inter-node TP and\n"
    "                     tied-embedding all-reduce, no DP gradient collectives; replicas:\n"
    "                     every rank's PP and DP; full: every collective\n"
    "  --opgraph FILE     write the op graph built (every message and collective of the\n"
    "                     ranks built, labels tp. pp. dp. cp. ep.) as a native trace\n"
    "  --breakdown STAGE  the compute-stream seconds of one rank of pipeline stage STAGE\n"
    "                     (TP, DP and CP index 0) by op kind: kernels and folded TP\n"
    "                     collectives, without waits (not with --fidelity estimate)\n"
    "  --progress         progress lines on stderr\n"
    "  --cfg=K:V, --log=X passed to SimGrid\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 the layout does not fit or the simulation failed, 2 bad input.\n";

static int cmp_bd(const void *a, const void *b)
{
    const wl_bd_row *x = a, *y = b;
    return (x->s < y->s) - (x->s > y->s);
}

/* --breakdown: the rank's compute-stream work by op kind, longest first;
 * -1 (nothing printed) where the layout has no such stage. */
static int print_breakdown(int stage, const char *layout, char *err, size_t errlen)
{
    const wl_bd_row *rows;
    int n = wl_breakdown_rows(&rows);
    if (n == 0) {
        ts_err(err, errlen, "--breakdown %d: layout '%s' has no rank there (stages run from 0 to pp - 1)", stage,
               layout);
        return -1;
    }
    wl_bd_row *v = ts_malloc((size_t)n * sizeof *v);
    memcpy(v, rows, (size_t)n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_bd);
    double tot = 0;
    for (int i = 0; i < n; i++) tot += v[i].s;
    printf("breakdown        stage %d, TP/DP/CP index 0: %.4f s of compute-stream work (no waits)\n", stage, tot);
    printf("  %-24s %8s %12s %7s\n", "op", "ops", "seconds", "share");
    for (int i = 0; i < n; i++)
        printf("  %-24s %8d %12.6f %6.1f%%\n", v[i].what, v[i].count, v[i].s, tot > 0 ? 100 * v[i].s / tot : 0);
    free(v);
    return 0;
}

static void print_mem(FILE *f, const ts_memory *mb)
{
    fprintf(f, "memory per GPU   %.2f GiB of %.2f GiB: %s (pipeline stage %d)\n", mb->total / GIB,
            mb->capacity / GIB, mb->fits ? "fits" : "DOES NOT FIT", mb->stage);
    fprintf(f, "                 weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f "
               "(%.2f micro-batches in flight), workspace %.2f GiB\n",
            mb->weights / GIB, mb->gradients / GIB, mb->optimizer / GIB, mb->activations / GIB, mb->inflight,
            mb->workspace / GIB);
}

static void json_mem(FILE *f, const ts_memory *mb)
{
    fprintf(f, "  \"memory\": {\"weights\": ");
    ts_json_number(f, mb->weights);
    fprintf(f, ", \"gradients\": ");
    ts_json_number(f, mb->gradients);
    fprintf(f, ", \"optimizer\": ");
    ts_json_number(f, mb->optimizer);
    fprintf(f, ", \"activations\": ");
    ts_json_number(f, mb->activations);
    fprintf(f, ", \"workspace\": ");
    ts_json_number(f, mb->workspace);
    fprintf(f, ", \"total\": ");
    ts_json_number(f, mb->total);
    fprintf(f, ", \"capacity\": ");
    ts_json_number(f, mb->capacity);
    fprintf(f, ", \"stage\": %d, \"fits\": %s}", mb->stage, mb->fits ? "true" : "false");
}

static int write_json(const char *path, const ts_run_result *r, int links, char *err, size_t errlen)
{
    const og_graph *g = r->priv->g;
    const eng_result *res = r->priv->res;
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot write", path);
    fprintf(f, "{\n  \"model\": ");
    ts_json_string(f, r->model);
    fprintf(f, ",\n  \"layout\": ");
    ts_json_string(f, r->layout);
    fprintf(f, ",\n  \"gpus\": %d,\n  \"seq\": %d,\n  \"fidelity\": ", r->gpus, r->seq);
    ts_json_string(f, r->fidelity);
    fprintf(f, ",\n  \"detail\": ");
    ts_json_string(f, r->detail);
    fprintf(f, ",\n  \"rail_copies\": %d,\n", r->copies > 1 ? r->copies : 1);
    json_mem(f, &r->memory);
    if (r->simulated) {
        static const char *keys[] = {"iteration_s", "tokens_per_s", "tflops_per_gpu", "mfu"};
        double vals[] = {r->iteration_s, r->tokens_per_s, r->tflops_per_gpu, r->mfu};
        for (int i = 0; i < 4; i++) {
            fprintf(f, ",\n  \"%s\": ", keys[i]);
            ts_json_number(f, vals[i]);
        }
        fprintf(f, ",\n  \"breakdown_s\": {");
        for (int c = 0; c < TS_NCATS; c++) {
            fprintf(f, "%s\"%s\": ", c ? ", " : "", c == AN_IDLE ? "bubble" : an_cat_name(c));
            ts_json_number(f, r->breakdown[c]);
        }
        fprintf(f, "}");
    }
    if (g && res) {
        fprintf(f, ",\n  \"collectives\": ");
        eng_report_colls(f, g, res, 1);
    }
    if (links && res) {
        fprintf(f, ",\n  \"links\": ");
        eng_report_links_json(f, res);
    }
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) return ts_err(err, errlen, "%s: write failed", path);
    return 0;
}

/* What ts_run computed, in the command's lines. */
static void print_run(const ts_run_result *r, int links, int policy)
{
    const og_graph *g = r->priv->g;
    const eng_result *res = r->priv->res;
    const double *cat = r->breakdown;
    printf("fidelity         %s; %d of %d ranks built (%s), %ld ops, graph in %.2f s, %s in %.2f s\n", r->fidelity,
           r->ranks_built, r->ranks_total,
           strcmp(r->detail, "full") == 0       ? "full detail"
           : strcmp(r->detail, "replicas") == 0 ? "replicas: every rank, analytical intra-node TP"
                                                : "reduced: replica 0, analytical DP and intra-node TP",
           r->ops, r->graph_wall_s, strcmp(r->fidelity, "analytical") == 0 ? "critical path" : "simulation",
           r->sim_wall_s);
    if (r->copies > 1)
        printf("                 rail copies: each rank simulated stands for the %d ranks of its TP group (checked "
               "exact on the platform's routes)\n", r->copies);
    else if (r->copies_why[0])
        printf("                 every rank simulated: one TP rank per group would not be exact (%s)\n", r->copies_why);
    printf("iteration        %.4f s\n", r->iteration_s);
    printf("throughput       %.0f tokens/s, %.1f TFLOP/s per GPU (with recompute), MFU %.1f%%\n", r->tokens_per_s,
           r->tflops_per_gpu, 100 * r->mfu);
    printf("time per rank    compute %.4f s, exposed tp %.4f, cp %.4f, ep %.4f, pp %.4f, dp %.4f, other %.4f, "
           "bubble %.4f s (mean over ranks)\n",
           cat[TS_COMPUTE], cat[TS_TP], cat[TS_CP], cat[TS_EP], cat[TS_PP], cat[TS_DP], cat[TS_OTHER], cat[TS_BUBBLE]);
    if (links) {
        printf("\nlinks            traffic SimGrid simulated: %s\n",
               strcmp(r->detail, "full") == 0 ? "every rank and collective (full detail)"
               : strcmp(r->detail, "replicas") == 0 ? "every rank's PP and DP, no intra-node TP (replicas)"
                                                    : "replica 0's PP, inter-node TP and embedding all-reduce only, "
                                                      "no DP gradient collectives (reduced)");
        if (res->nlinks) eng_report_links(stdout, res);
        else printf("                 no link carried simulated traffic\n");
    }
    printf("collectives      algorithm per distinct call of the ranks built (%s):\n",
           policy ? "policy: --coll/--tuning, else automatic" : "automatic");
    eng_report_colls(stdout, g, res, 0);
}

static void print_estimate(const ts_run_result *r)
{
    printf("fidelity         estimate: closed form from model and layout, no graph, in %.6f s\n", r->sim_wall_s);
    printf("iteration        %.4f s\n", r->iteration_s);
    printf("throughput       %.0f tokens/s, %.1f TFLOP/s per GPU (with recompute), MFU %.1f%%\n", r->tokens_per_s,
           r->tflops_per_gpu, 100 * r->mfu);
    printf("time             micro-batch on the slowest stage: forward %.4f, backward %.4f, weight gradients "
           "%.4f s; bubble %.4f, exposed dp %.4f, optimizer %.4f s\n",
           r->est_forward, r->est_backward, r->est_wgrad, r->est_bubble, r->est_dp_exposed, r->est_optimizer);
    if (r->axonn)
        printf("                 compute %.4f s, exposed tensor-grid communication %.4f s (%s)\n", r->est_compute,
               r->est_tp_exposed, r->axonn_overlap ? "overlap=on" : "overlap=off");
}

int cmd_run(int argc, char **argv)
{
    enum { O_PLATFORM = 256, O_MODEL, O_LAYOUT, O_SEQ, O_DTYPE, O_FIDELITY, O_JSON, O_TIMELINE, O_GPU, O_GPUS,
           O_GEMM, O_GPN, O_DETAIL, O_PROGRESS, O_NET, O_NODES, O_CALIB, O_OPGRAPH,
           O_COLL, O_TUNING, O_LINKS, O_STACK, O_EVERY, O_BREAKDOWN };
    static const struct option longopts[] = {
        {"platform", required_argument, 0, O_PLATFORM}, {"model", required_argument, 0, O_MODEL},
        {"layout", required_argument, 0, O_LAYOUT},     {"seq", required_argument, 0, O_SEQ},
        {"dtype", required_argument, 0, O_DTYPE},       {"fidelity", required_argument, 0, O_FIDELITY},
        {"json", required_argument, 0, O_JSON},         {"timeline", required_argument, 0, O_TIMELINE},
        {"gpu", required_argument, 0, O_GPU},           {"gpus", required_argument, 0, O_GPUS},
        {"gemm-table", required_argument, 0, O_GEMM},   {"gpus-per-node", required_argument, 0, O_GPN},
        {"detail", required_argument, 0, O_DETAIL},     {"progress", no_argument, 0, O_PROGRESS},
        {"net", required_argument, 0, O_NET},           {"cluster", required_argument, 0, O_PLATFORM},
        {"nodes", required_argument, 0, O_NODES},       {"calibration", required_argument, 0, O_CALIB},
        {"opgraph", required_argument, 0, O_OPGRAPH},   {"coll", required_argument, 0, O_COLL},
        {"tuning", required_argument, 0, O_TUNING},
        {"links", required_argument, 0, O_LINKS},       {"stack", required_argument, 0, O_STACK},
        {"every-rank", no_argument, 0, O_EVERY},         {"breakdown", required_argument, 0, O_BREAKDOWN},
        {"help", no_argument, 0, 'h'},                  {0, 0, 0, 0},
    };
    const char *platform = NULL, *model = NULL, *layout_s = NULL, *json = NULL, *timeline = NULL;
    const char *gpu_name = NULL, *gemm = NULL, *fid_name = NULL, *net_s = NULL, *calib = NULL, *opgraph = NULL;
    const char *coll_spec = NULL, *tuning = NULL, *stack = NULL;
    coll_policy *pol = NULL;
    int nodes = 0;
    int seq = 0, ngpus = 0, gpn = 0, full = 0, progress = 0, analytical = 0, links = 0, every = 0, stage = -1;
    cm_dtype dtype = CM_BF16;
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours;
    cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    int rc = EXIT_USAGE, c;
    ts_run_result *r = NULL;
    char *err = ts_malloc(BIGERR), err2[TS_ERRLEN];
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(nours, ours, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_PLATFORM: platform = optarg; break;
        case O_MODEL: model = optarg; break;
        case O_LAYOUT: layout_s = optarg; break;
        case O_JSON: json = optarg; break;
        case O_TIMELINE: timeline = optarg; break;
        case O_GPU: gpu_name = optarg; break;
        case O_GEMM: gemm = optarg; break;
        case O_FIDELITY: fid_name = optarg; break;
        case O_PROGRESS: progress = 1; break;
        case O_EVERY: every = 1; break;
        case O_NET: net_s = optarg; break;
        case O_CALIB: calib = optarg; break;
        case O_OPGRAPH: opgraph = optarg; break;
        case O_COLL: coll_spec = optarg; break;
        case O_TUNING: tuning = optarg; break;
        case O_STACK:
            stack = optarg;
            if (!wl_stack_find(optarg, err, BIGERR)) {
                rc = cmd_usage_error("run", "%s", err);
                goto out;
            }
            break;
        case O_NODES:
            if (cmd_parse_int(optarg, 1, 1000000, &nodes) < 0) {
                rc = cmd_usage_error("run", "--nodes wants a count from 1 to 1000000, not '%s'", optarg);
                goto out;
            }
            break;
        case O_BREAKDOWN:
            if (cmd_parse_int(optarg, 0, 1000000, &stage) < 0) {
                rc = cmd_usage_error("run", "--breakdown wants a pipeline stage from 0, not '%s'", optarg);
                goto out;
            }
            break;
        case O_LINKS:
            if (cmd_parse_int(optarg, 1, 1000000, &links) < 0) {
                rc = cmd_usage_error("run", "--links wants a count from 1 to 1000000, not '%s'", optarg);
                goto out;
            }
            break;
        case O_SEQ:
            if (cmd_parse_int(optarg, 1, 10000000, &seq) < 0) {
                rc = cmd_usage_error("run", "--seq wants a positive length, not '%s'", optarg);
                goto out;
            }
            break;
        case O_GPUS:
            if (cmd_parse_int(optarg, 1, 100000000, &ngpus) < 0) {
                rc = cmd_usage_error("run", "--gpus wants a positive count, not '%s'", optarg);
                goto out;
            }
            break;
        case O_GPN:
            if (cmd_parse_int(optarg, 1, 4096, &gpn) < 0) {
                rc = cmd_usage_error("run", "--gpus-per-node wants 1 to 4096, not '%s'", optarg);
                goto out;
            }
            break;
        case O_DTYPE: {
            int t = cm_dtype_from_name(optarg);
            if (t != CM_BF16 && t != CM_FP16 && t != CM_FP8 && t != CM_FP32) {
                rc = cmd_usage_error("run", "unknown dtype '%s' (valid: bf16, fp16, fp8, fp32)", optarg);
                goto out;
            }
            dtype = t;
            break;
        }
        case O_DETAIL:
            if (strcmp(optarg, "full") == 0) full = 1;
            else if (strcmp(optarg, "reduced") == 0) full = 0;
            else if (strcmp(optarg, "replicas") == 0) full = 2;
            else {
                rc = cmd_usage_error("run", "unknown detail '%s' (valid: reduced, replicas, full)", optarg);
                goto out;
            }
            break;
        case 'h':
            fputs(run_help, stdout);
            rc = EXIT_OK;
            goto out;
        case ':': rc = cmd_usage_error("run", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_unknown_option("run", ours[optind - 1], longopts); goto out;
        }
    }
    if (optind < nours) {
        rc = cmd_usage_error("run", "unexpected argument '%s'", ours[optind]);
        goto out;
    }
    if (!model || !layout_s) {
        rc = cmd_usage_error("run", "--model and --layout are required");
        goto out;
    }
    if ((rc = cmd_policy("run", coll_spec, tuning, &pol)) != 0) goto out;
    analytical = fid_name && (strcmp(fid_name, "analytical") == 0 || strcmp(fid_name, "estimate") == 0);
    if (links && analytical) {
        rc = cmd_usage_error("run", "--links needs a SimGrid fidelity (pipelined or step), not '%s'", fid_name);
        goto out;
    }
    if (fid_name && !analytical && eng_fidelity_from_name(fid_name) < 0) {
        rc = cmd_usage_error("run", "unknown fidelity '%s' (valid: estimate, analytical, pipelined, step)", fid_name);
        goto out;
    }
    if (!analytical && !platform) {
        rc = cmd_usage_error("run", "--platform is required unless --fidelity analytical");
        goto out;
    }
    ts_run_opts ro = {.c = {platform, nodes, calib, coll_spec, tuning, (const char *const *)sgv + 1},
                      .model = model, .layout = layout_s, .gpus = ngpus, .gpu = gpu_name, .gemm_table = gemm,
                      .gpus_per_node = gpn, .net = net_s, .seq = seq, .dtype = cm_dtype_name(dtype),
                      .fidelity = fid_name, .detail = full == 1 ? "full" : full == 2 ? "replicas" : "reduced",
                      .stack = stack, .links = links, .progress = progress, .every_rank = every || opgraph};
    if (stage >= 0 && fid_name && strcmp(fid_name, "estimate") == 0) {
        rc = cmd_usage_error("run", "--breakdown needs a fidelity that builds the op graph, not 'estimate'");
        goto out;
    }
    wl_breakdown(stage);
    rc = (int)ts_run(&ro, &r, err, BIGERR);
    if (r) {
        printf("model            %s: %.4g B parameters, %d layers, hidden %d, sequence %d, %s\n", r->model,
               r->params / 1e9, r->layers, r->hidden, r->seq, r->dtype);
        printf("layout           %s (%d micro-batches)\n", r->layout, r->micro_batches);
        printf("stack            %s: %s\n", r->stack, r->stack_description);
        printf("gpus             %d x %s\n", r->gpus, r->gpu);
        print_mem(stdout, &r->memory);
        if (!r->memory.fits) printf("not simulated: the layout does not fit in GPU memory\n");
    }
    if (r && r->priv->g && opgraph && og_write_file(r->priv->g, opgraph, err2, sizeof err2) < 0) {
        fprintf(stderr, "trainsim run: %s\n", err2);
        rc = EXIT_USAGE;
        goto out;
    }
    if (rc != TS_OK && !(r && !r->memory.fits)) {
        fprintf(stderr, "trainsim run: %s\n", err);
        goto out;
    }
    if (rc == TS_OK) {
        if (strcmp(r->fidelity, "estimate") == 0) print_estimate(r);
        else print_run(r, links, pol != NULL);
        if (stage >= 0 && print_breakdown(stage, r->layout, err, BIGERR) < 0) rc = EXIT_USAGE;
    }
    if (json && write_json(json, r, links, err, BIGERR) < 0) rc = EXIT_USAGE;
    else if (rc == EXIT_OK && timeline && r->priv->g &&
             eng_report_timeline(timeline, r->priv->g, r->priv->res, err, BIGERR) < 0)
        rc = EXIT_USAGE;
    if (rc == EXIT_USAGE) fprintf(stderr, "trainsim run: %s\n", err);
out:
    wl_breakdown(-1);
    ts_run_result_free(r);
    coll_policy_free(pol);
    free(err);
    free(sgv);
    free(ours);
    return rc;
}
