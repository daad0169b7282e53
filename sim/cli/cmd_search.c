/* `trainsim search`: which parallel layout to launch. Enumerates, prunes by
 * rule and memory, ranks by the analytical estimate, simulates the best K. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytic/analytic.h"
#include "api_int.h"
#include "cluster.h"
#include "cmds.h"
#include "coll.h"
#include "compute/compute.h"
#include "engine.h"
#include "memory/memory.h"
#include "search/search.h"
#include "util.h"
#include "workload/workload.h"

#ifdef TS_HAVE_MPI
#include "mpi_search.h"
#else
/* Serial build: one rank, nothing to combine. */
static void srch_mpi_init(int *rank, int *size) { *rank = 0, *size = 1; }
static void srch_mpi_sum(double *buf, size_t n) { (void)buf, (void)n; }
static void srch_mpi_finalize(void) {}
#endif

#define BIGERR 16384
#define GIB 1073741824.0

static const char search_help[] =
    "usage: trainsim search --cluster C --gpus N --model M [options]\n\n"
    "Which parallel layout should this job launch with? Enumerates the layouts of model M on\n"
    "N GPUs of cluster C, drops those that break a divisibility rule or do not fit in GPU\n"
    "memory (the memory model), ranks the rest with the direct analytical estimate, simulates\n"
    "the best K on SimGrid and prints a ranked table with the layout counts. Run it under\n"
    "mpirun to split the candidates across ranks; the output is the same byte for byte.\n\n"
    "options:\n"
    "  --cluster C        cluster (name, NAME:NODES or JSON; docs/clusters.md): the GPU, the\n"
    "                     analytical network figures and the simulated platform\n"
    "  --platform C       the same as --cluster;  --calibration F  a calibration JSON\n"
    "  --gpus N           GPU count (the platform gets the nodes it needs)\n"
    "  --model M          HuggingFace config.json or a name in configs/models/\n"
    "  --gbs B            global batch in sequences (default: N)\n"
    "  --seq S            sequence length (default: the model's, at most 8192)\n"
    "  --dtype T          bf16 (default), fp16, fp8, fp32 (fp8: GEMMs in FP8 as Transformer\n"
    "                     Engine runs them, the rest in bf16)\n"
    "  --stack S          software stack: megatron-core (default), megatron-2021,\n"
    "                     megatron-2022, deepspeed-2021, deepspeed, megatron-deepspeed,\n"
    "                     fsdp2, fsdp1, torchtitan, torchtitan-compile, nemo-24.07: its\n"
    "                     attention kernel,\n"
    "                     fused kernels, GEMM library, overlaps and ZeRO-3 structure\n"
    "                     (docs/compute.md)\n"
    "  --top K            layouts simulated and shown (default 5)\n"
    "  --jobs J           simulate the top K in J processes at once (default: one per\n"
    "                     CPU; 1: in this process); the output is the same byte for byte\n"
    "  --objective O      time (iteration time, default), mfu (model FLOPs utilisation),\n"
    "                     cost (GPU-seconds per token; also tries N/2, N/4, ... GPUs)\n"
    "  --space S          3d: tp, pp, dp (with vpp, schedule 1f1b/interleaved/zbh1, mbs,\n"
    "                     zero, sp, recompute; default); 4d: AxoNN gx, gy, gz, dp (ranked\n"
    "                     by a closed-form estimate, the top K costed on op graphs);\n"
    "                     all: both, with cp and (MoE models) ep\n"
    "  --constraint C     e.g. 'tp<=8,pp>=2,zero!=3': keys tp pp dp cp ep vpp mbs zero sp\n"
    "                     recompute (0 none, 1 selective, 2 full) gx gy gz gpus\n"
    "  --fidelity F       estimate (no simulation), analytical (critical path of the op\n"
    "                     graph), pipelined (SimGrid, default) or step\n"
    CMD_POLICY_HELP
    "                     (the top K's collectives that are ops of their graph: EP\n"
    "                     all-to-all, TP across nodes; the ranking estimate and the DP and\n"
    "                     intra-node TP collectives folded into fixed-time ops use ring forms)\n"
    "  --explain L        why layout L is pruned, or where its time goes\n"
    "  --csv FILE         every candidate: status, memory, estimate, simulation\n"
    "  --json FILE        the counts, the ranked top K with breakdowns, every candidate\n"
    "  --plot FILE.svg    iteration time against memory per GPU, Pareto front marked\n"
    "  --cfg=K:V, --log=X passed to SimGrid\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 no layout fits or a simulation failed, 2 bad input.\n";

enum { SIM_ITER = API_SIM_ITER, SIM_CAT0 = API_SIM_CAT0, SIM_NFIELDS = API_SIM_NFIELDS };
typedef api_search_ctx search_ctx;
#define tflops api_search_tflops

/* ---- --explain ---- */

static int explain(search_ctx *x, const char *ls, char *err)
{
    wl_layout l;
    if (wl_layout_parse(ls, &l, err, BIGERR) < 0) return fprintf(stderr, "trainsim search: %s\n", err), EXIT_USAGE;
    if (!l.gbs) l.gbs = x->p.gbs;
    char lay[256];
    printf("layout           %s\n", ls);
    if (wl_layout_check(&l, x->m, x->p.seq, x->p.ngpus, err, BIGERR) < 0) {
        printf("pruned by rule   %s\n", err);
        return EXIT_OK;
    }
    wl_layout_apply_stack(&l, x->p.stack);
    wl_layout_format(&l, lay, sizeof lay);
    printf("as searched      %s\n", lay);
    if (!srch_satisfies(&x->p, &l)) printf("constraints      outside --constraint: never enumerated\n");
    mem_breakdown mb;
    mem_estimate(x->m, &l, x->p.seq, x->p.dtype, x->p.gpu->hbm_bytes, &mb);
    printf("memory per GPU   %.2f GiB of %.2f GiB (stage %d): weights %.2f, gradients %.2f, optimizer %.2f, "
           "activations %.2f, workspace %.2f GiB\n",
           mb.total / GIB, mb.capacity / GIB, mb.stage, mb.weights / GIB, mb.grads / GIB, mb.optim / GIB,
           mb.activations / GIB, mb.workspace / GIB);
    if (!mb.fits) {
        printf("pruned by memory needs %.2f GiB more than the GPU holds\n", (mb.total - mb.capacity) / GIB);
        return EXIT_OK;
    }
    srch_cand c;
    memset(&c, 0, sizeof c);
    c.l = l;
    srch_evaluate(x->m, &x->p, &c, err, BIGERR);
    if (c.status != SRCH_ESTIMATED) {
        printf("estimate failed  %s\n", err);
        return EXIT_FAIL;
    }
    wl_opts wo = {x->p.seq, x->p.dtype, x->p.gpu, x->p.net, 1, 1, x->p.stack};
    wl_est e;
    wl_estimate(x->m, &l, &wo, &e, err, BIGERR);
    if (!l.axonn) {
        printf("estimate         %.4f s: pipeline %.4f (bubble %.4f), exposed dp %.4f, optimizer %.4f s; "
               "slowest stage per micro-batch: forward %.4f, backward %.4f, weight gradients %.4f s\n",
               e.iter, e.pipeline, e.bubble, e.dp_exposed, e.optimizer, e.tf, e.tb, e.tw);
    } else {
        printf("estimate         %.4f s: compute %.4f, exposed tensor-grid communication %.4f, exposed dp %.4f, "
               "optimizer %.4f s; per micro-batch: forward %.4f, backward %.4f, weight gradients %.4f s\n",
               e.iter, e.compute, e.tp_exposed, e.dp_exposed, e.optimizer, e.tf, e.tb, e.tw);
    }
    printf("throughput       %.1f TFLOP/s per GPU, MFU %.1f%% (estimate)\n", tflops(x, &l, c.iter),
           100 * srch_mfu(x->m, &x->p, &l, c.iter));
    if (x->fid == -2) return EXIT_OK;
    double s[SIM_NFIELDS];
    if (api_search_simulate(x, &l, s, err, BIGERR) < 0) return fprintf(stderr, "trainsim search: %s\n", err), EXIT_FAIL;
    printf("%-16s %.4f s: compute %.4f, exposed tp %.4f, cp %.4f, ep %.4f, pp %.4f, dp %.4f, other %.4f, "
           "bubble %.4f s (mean over ranks)\n",
           x->fid == -1 ? "analytical" : eng_fidelity_name(x->fid), s[SIM_ITER], s[SIM_CAT0 + AN_COMP],
           s[SIM_CAT0 + AN_TP], s[SIM_CAT0 + AN_CP], s[SIM_CAT0 + AN_EP], s[SIM_CAT0 + AN_PP], s[SIM_CAT0 + AN_DP],
           s[SIM_CAT0 + AN_OTHER], s[SIM_CAT0 + AN_IDLE]);
    return EXIT_OK;
}

/* ---- outputs ---- */

static int write_csv(const char *path, const search_ctx *x, const srch_cand *c, size_t n, const double *sim,
                     const size_t *sim_of, char *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, BIGERR, "%s: cannot write", path);
    fprintf(f, "index,layout,gpus,status,memory_gib,estimate_s,simulated_s,tflops_per_gpu,mfu,score\n");
    for (size_t i = 0; i < n; i++) {
        char lay[256];
        wl_layout_format(&c[i].l, lay, sizeof lay);
        fprintf(f, "%zu,\"%s\",%d,%s,", i, lay, wl_layout_ngpus(&c[i].l), api_search_status(c[i].status));
        if (c[i].status >= SRCH_MEMORY) fprintf(f, "%.6g", c[i].mem / GIB);
        fputc(',', f);
        if (c[i].status == SRCH_ESTIMATED) {
            double it = sim_of[i] != (size_t)-1 ? sim[sim_of[i] * SIM_NFIELDS + SIM_ITER] : c[i].iter;
            fprintf(f, "%.6g,", c[i].iter);
            if (sim_of[i] != (size_t)-1) fprintf(f, "%.6g", it);
            fprintf(f, ",%.6g,%.6g,%.6g", tflops(x, &c[i].l, it), srch_mfu(x->m, &x->p, &c[i].l, it), c[i].score);
        } else {
            fprintf(f, ",,,,");
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0) return ts_err(err, BIGERR, "%s: write failed", path);
    return 0;
}

static int write_json(const char *path, const search_ctx *x, const srch_cand *c, size_t n, const srch_counts *k,
                      const size_t *top, size_t ntop, const double *sim, const char *fname, char *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, BIGERR, "%s: cannot write", path);
    fprintf(f, "{\n  \"model\": ");
    ts_json_string(f, x->m->name);
    fprintf(f, ",\n  \"cluster\": ");
    ts_json_string(f, x->cluster);
    fprintf(f, ",\n  \"gpus\": %d,\n  \"gbs\": %d,\n  \"seq\": %d,\n  \"objective\": \"%s\",\n  \"space\": \"%s\",\n"
               "  \"fidelity\": \"%s\",\n",
            x->p.ngpus, x->p.gbs, x->p.seq, srch_objective_name(x->p.objective), srch_space_name(x->p.space), fname);
    fprintf(f, "  \"counts\": {\"enumerated\": %zu, \"pruned_rule\": %zu, \"pruned_memory\": %zu, \"estimated\": %zu, "
               "\"failed\": %zu, \"simulated\": %zu},\n  \"top\": [",
            k->enumerated, k->rule, k->memory, k->estimated, k->failed, k->simulated);
    for (size_t j = 0; j < ntop; j++) {
        const srch_cand *cc = &c[top[j]];
        const double *s = sim + j * SIM_NFIELDS;
        char lay[256];
        wl_layout_format(&cc->l, lay, sizeof lay);
        double it = k->simulated ? s[SIM_ITER] : cc->iter;
        fprintf(f, "%s\n    {\"rank\": %zu, \"index\": %zu, \"layout\": ", j ? "," : "", j + 1, top[j]);
        ts_json_string(f, lay);
        fprintf(f, ", \"gpus\": %d, \"memory_bytes\": ", wl_layout_ngpus(&cc->l));
        ts_json_number(f, cc->mem);
        fprintf(f, ", \"estimate_s\": ");
        ts_json_number(f, cc->iter);
        fprintf(f, ", \"iteration_s\": ");
        ts_json_number(f, it);
        fprintf(f, ", \"tflops_per_gpu\": ");
        ts_json_number(f, tflops(x, &cc->l, it));
        fprintf(f, ", \"mfu\": ");
        ts_json_number(f, srch_mfu(x->m, &x->p, &cc->l, it));
        if (k->simulated) {
            fprintf(f, ", \"breakdown_s\": {");
            for (int cat = 0; cat < AN_NCATS; cat++) {
                fprintf(f, "%s\"%s\": ", cat ? ", " : "", cat == AN_IDLE ? "bubble" : an_cat_name(cat));
                ts_json_number(f, s[SIM_CAT0 + cat]);
            }
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"candidates\": [");
    for (size_t i = 0; i < n; i++) {
        char lay[256];
        wl_layout_format(&c[i].l, lay, sizeof lay);
        fprintf(f, "%s\n    {\"layout\": ", i ? "," : "");
        ts_json_string(f, lay);
        fprintf(f, ", \"status\": \"%s\"", api_search_status(c[i].status));
        if (c[i].status >= SRCH_MEMORY) {
            fprintf(f, ", \"memory_bytes\": ");
            ts_json_number(f, c[i].mem);
        }
        if (c[i].status == SRCH_ESTIMATED) {
            fprintf(f, ", \"estimate_s\": ");
            ts_json_number(f, c[i].iter);
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) return ts_err(err, BIGERR, "%s: write failed", path);
    return 0;
}

/* SVG scatter: estimated iteration time (y) against memory per GPU (x); the
 * Pareto front (no other layout both faster and smaller) joined in red, the
 * simulated top K as their simulated times (blue). */
static int write_svg(const char *path, const search_ctx *x, const srch_cand *c, const size_t *order, size_t ne,
                     const double *sim, size_t nsim, char *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, BIGERR, "%s: cannot write", path);
    const double W = 800, H = 520, L = 80, R = 20, T = 40, B = 60;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t j = 0; j < ne; j++) {
        const srch_cand *cc = &c[order[j]];
        x0 = fmin(x0, cc->mem / GIB), x1 = fmax(x1, cc->mem / GIB);
        y0 = fmin(y0, cc->iter), y1 = fmax(y1, cc->iter);
    }
    for (size_t j = 0; j < nsim; j++) y0 = fmin(y0, sim[j * SIM_NFIELDS]), y1 = fmax(y1, sim[j * SIM_NFIELDS]);
    if (!ne) x0 = y0 = 0, x1 = y1 = 1;
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= y0) y1 = y0 * 1.1 + 1e-9;
    double ly0 = log10(y0), ly1 = log10(y1);
#define PX(v) (L + ((v) - x0) / (x1 - x0) * (W - L - R))
#define PY(v) (H - B - (log10(v) - ly0) / (ly1 - ly0) * (H - T - B))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.0f\" y=\"24\" font-size=\"14\">", L);
    fprintf(f, "%s on %d GPUs: %zu layouts estimated; red: Pareto front, blue: simulated</text>\n", x->m->name,
            x->p.ngpus, ne);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T, L, H - B);
    for (int i = 0; i <= 4; i++) {
        double xv = x0 + (x1 - x0) * i / 4, yv = pow(10, ly0 + (ly1 - ly0) * i / 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.1f</text>\n", PX(xv), H - B + 18, xv);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 6, PY(yv) + 4, yv);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">memory per GPU (GiB)</text>\n", (L + W - R) / 2,
            H - 16);
    fprintf(f, "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">iteration time "
               "(s, log scale)</text>\n", (T + H - B) / 2, (T + H - B) / 2);
    for (size_t j = 0; j < ne; j++) {
        const srch_cand *cc = &c[order[j]];
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#999\"/>\n", PX(cc->mem / GIB), PY(cc->iter));
    }
    /* Pareto front: by memory ascending, keep each layout faster than all before it */
    size_t *bym = ts_malloc((ne ? ne : 1) * sizeof *bym);
    memcpy(bym, order, ne * sizeof *bym);
    for (size_t i = 1; i < ne; i++) /* insertion sort by (memory, time, index): deterministic */
        for (size_t j = i; j > 0; j--) {
            const srch_cand *a = &c[bym[j - 1]], *b = &c[bym[j]];
            int swap = a->mem > b->mem || (a->mem == b->mem && (a->iter > b->iter ||
                                                                (a->iter == b->iter && bym[j - 1] > bym[j])));
            if (!swap) break;
            size_t t = bym[j];
            bym[j] = bym[j - 1], bym[j - 1] = t;
        }
    fprintf(f, "<polyline fill=\"none\" stroke=\"red\" stroke-width=\"1.5\" points=\"");
    double best = INFINITY;
    for (size_t j = 0; j < ne; j++)
        if (c[bym[j]].iter < best) {
            best = c[bym[j]].iter;
            fprintf(f, "%.1f,%.1f ", PX(c[bym[j]].mem / GIB), PY(best));
        }
    fprintf(f, "\"/>\n");
    best = INFINITY;
    for (size_t j = 0; j < ne; j++)
        if (c[bym[j]].iter < best) {
            best = c[bym[j]].iter;
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"red\"/>\n", PX(c[bym[j]].mem / GIB), PY(best));
        }
    for (size_t j = 0; j < nsim; j++)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"blue\" stroke-width=\"2\"/>\n",
                PX(c[order[j]].mem / GIB), PY(sim[j * SIM_NFIELDS]));
    fprintf(f, "</svg>\n");
    free(bym);
#undef PX
#undef PY
    if (fclose(f) != 0) return ts_err(err, BIGERR, "%s: write failed", path);
    return 0;
}

int cmd_search(int argc, char **argv)
{
    enum { O_CLUSTER = 256, O_GPUS, O_MODEL, O_GBS, O_SEQ, O_TOP, O_OBJ, O_SPACE, O_CONSTR, O_FID, O_CSV, O_JSON,
           O_PLOT, O_EXPLAIN, O_DTYPE, O_CALIB, O_COLL, O_TUNING, O_STACK, O_JOBS };
    static const struct option longopts[] = {
        {"cluster", required_argument, 0, O_CLUSTER},  {"platform", required_argument, 0, O_CLUSTER},
        {"gpus", required_argument, 0, O_GPUS},        {"model", required_argument, 0, O_MODEL},
        {"gbs", required_argument, 0, O_GBS},          {"seq", required_argument, 0, O_SEQ},
        {"top", required_argument, 0, O_TOP},          {"objective", required_argument, 0, O_OBJ},
        {"space", required_argument, 0, O_SPACE},      {"constraint", required_argument, 0, O_CONSTR},
        {"fidelity", required_argument, 0, O_FID},     {"csv", required_argument, 0, O_CSV},
        {"json", required_argument, 0, O_JSON},        {"plot", required_argument, 0, O_PLOT},
        {"explain", required_argument, 0, O_EXPLAIN},  {"dtype", required_argument, 0, O_DTYPE},
        {"calibration", required_argument, 0, O_CALIB}, {"help", no_argument, 0, 'h'},
        {"coll", required_argument, 0, O_COLL},        {"tuning", required_argument, 0, O_TUNING},
        {"stack", required_argument, 0, O_STACK},      {"jobs", required_argument, 0, O_JOBS},
        {0, 0, 0, 0},
    };
    ts_search_opts so;      /* what ts_search gets: the options' strings, checked here first */
    memset(&so, 0, sizeof so);
    srch_params vp;         /* the options parsed, for their messages */
    memset(&vp, 0, sizeof vp);
    const char *model = NULL, *csv = NULL, *json = NULL, *plot = NULL, *expl = NULL, *cluster = NULL, *calib = NULL;
    const char *coll_spec = NULL, *tuning = NULL;
    char constraints[4096] = "";
    coll_policy *pol = NULL;
    ts_search_result *res = NULL;
    int top = 5, rc = EXIT_USAGE, c;
    char **sgv = ts_calloc(argc + 1, sizeof *sgv), **ours = ts_calloc(argc + 1, sizeof *ours);
    int nours;
    cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    char *err = ts_malloc(BIGERR);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(nours, ours, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_CLUSTER: cluster = optarg; break;
        case O_MODEL: model = optarg; break;
        case O_CSV: csv = optarg; break;
        case O_JSON: json = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_EXPLAIN: expl = optarg; break;
        case O_CALIB: calib = optarg; break;
        case O_COLL: coll_spec = optarg; break;
        case O_TUNING: tuning = optarg; break;
        case O_GPUS:
        case O_GBS:
        case O_SEQ:
        case O_JOBS:
        case O_TOP: {
            int *dst = c == O_GPUS ? &so.gpus : c == O_GBS ? &so.gbs : c == O_SEQ ? &so.seq : c == O_JOBS ? &so.jobs : &top;
            if (cmd_parse_int(optarg, c == O_TOP ? 0 : 1, 100000000, dst) < 0) {
                const char *opt = c == O_GPUS ? "--gpus" : c == O_GBS ? "--gbs" : c == O_SEQ ? "--seq" : c == O_JOBS ? "--jobs" : "--top";
                rc = cmd_usage_error("search", "%s wants a %s count, not '%s'", opt,
                                     c == O_TOP ? "non-negative" : "positive", optarg);
                goto out;
            }
            break;
        }
        case O_OBJ: {
            int o = srch_objective_from_name(optarg);
            if (o < 0) {
                rc = cmd_usage_error("search", "unknown objective '%s' (valid: time, mfu, cost)", optarg);
                goto out;
            }
            so.objective = optarg;
            break;
        }
        case O_SPACE: {
            int s = srch_space_from_name(optarg);
            if (s < 0) {
                rc = cmd_usage_error("search", "unknown space '%s' (valid: 3d, 4d, all)", optarg);
                goto out;
            }
            so.space = optarg;
            break;
        }
        case O_CONSTR:
            if (srch_parse_constraints(optarg, &vp, err, BIGERR) < 0) {
                rc = cmd_usage_error("search", "%s", err);
                goto out;
            }
            if (strlen(constraints) + strlen(optarg) + 2 > sizeof constraints) {
                rc = cmd_usage_error("search", "--constraint: more than %zu characters in all", sizeof constraints - 2);
                goto out;
            }
            snprintf(constraints + strlen(constraints), sizeof constraints - strlen(constraints), "%s%s",
                     constraints[0] ? "," : "", optarg);
            so.constraint = constraints;
            break;
        case O_FID:
            so.fidelity = optarg;
            if (strcmp(optarg, "estimate") && strcmp(optarg, "analytical") && eng_fidelity_from_name(optarg) < 0) {
                rc = cmd_usage_error("search", "unknown fidelity '%s' (valid: estimate, analytical, pipelined, step)",
                                     optarg);
                goto out;
            }
            break;
        case O_DTYPE: {
            int t = cm_dtype_from_name(optarg);
            if (t != CM_BF16 && t != CM_FP16 && t != CM_FP8 && t != CM_FP32) {
                rc = cmd_usage_error("search", "unknown dtype '%s' (valid: bf16, fp16, fp8, fp32)", optarg);
                goto out;
            }
            so.dtype = optarg;
            break;
        }
        case O_STACK:
            so.stack = optarg;
            if (!wl_stack_find(optarg, err, BIGERR)) {
                rc = cmd_usage_error("search", "%s", err);
                goto out;
            }
            break;
        case 'h':
            fputs(search_help, stdout);
            rc = EXIT_OK;
            goto out;
        case ':': rc = cmd_usage_error("search", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_unknown_option("search", ours[optind - 1], longopts); goto out;
        }
    }
    if (optind < nours) {
        rc = cmd_usage_error("search", "unexpected argument '%s'", ours[optind]);
        goto out;
    }
    if (!cluster || !model || !so.gpus) {
        rc = cmd_usage_error("search", "--cluster, --gpus and --model are required");
        goto out;
    }
    if (!topo_is_cluster_spec(cluster)) {
        rc = cmd_usage_error("search", "--cluster wants a cluster (name or JSON), not the SimGrid file '%s'", cluster);
        goto out;
    }
    if ((rc = cmd_policy("search", coll_spec, tuning, &pol)) != 0) goto out;
    so.c = (ts_common){cluster, 0, calib, coll_spec, tuning, (const char *const *)sgv + 1};
    so.model = model;
    so.top = top;
    so.progress = 1;
    if (expl) {
        res = ts_calloc(1, sizeof *res);
        if ((rc = (int)api_search_prepare(&so, res, err, BIGERR)) != TS_OK) {
            fprintf(stderr, "trainsim search: %s\n", err);
            goto out;
        }
        eng_set_policy(res->priv->policy);
        rc = explain(&res->priv->x, expl, err);
        eng_set_policy(NULL);
        goto out;
    }

    srch_mpi_init(&so.rank, &so.nranks);
    so.sum = srch_mpi_sum;
    rc = (int)ts_search(&so, &res, err, BIGERR);
    if (!res) {
        fprintf(stderr, "trainsim search: %s\n", err);
        srch_mpi_finalize();
        goto out;
    }
    if (rc == TS_FAILED && res->ntop) /* one line per failed simulation */
        for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n")) fprintf(stderr, "trainsim search: %s\n", line);
    if (so.rank == 0) {
        const struct ts_search_priv *pv = res->priv;
        printf("search           %s on %d x %s (%s), gbs %d, sequence %d, %s\n", res->model, res->gpus, res->gpu,
               res->cluster, res->gbs, res->seq, res->dtype);
        printf("space            %s, objective %s, fidelity %s, %d constraint%s\n", res->space, res->objective,
               res->fidelity, res->constraints, res->constraints == 1 ? "" : "s");
        printf("layouts          %zu enumerated, %zu pruned by rule, %zu pruned by memory, %zu estimated, "
               "%zu failed, %zu simulated\n",
               res->enumerated, res->pruned_rule, res->pruned_memory, res->estimated, res->failed, res->simulated);
        if (res->ntop) {
            printf("\n%4s %10s %10s %8s %6s %8s %-12s %s\n", "rank", "iter_s", "estimate_s", "TFLOP/s", "MFU%",
                   "mem_GiB", "exposed", "layout");
            for (size_t j = 0; j < res->ntop; j++) {
                const ts_search_layout *t = &res->top[j];
                char dom[32] = "-";
                if (t->dominant[0]) snprintf(dom, sizeof dom, "%s %.3fs", t->dominant, t->dominant_s);
                if (t->iteration_s > 0)
                    printf("%4zu %10.4f %10.4f %8.1f %6.1f %8.2f %-12s %s\n", j + 1, t->iteration_s, t->estimate_s,
                           t->tflops_per_gpu, 100 * t->mfu, t->memory_bytes / GIB, dom, t->layout);
                else
                    printf("%4zu %10s %10.4f %8s %6s %8.2f %-12s %s\n", j + 1, "failed", t->estimate_s, "-", "-",
                           t->memory_bytes / GIB, "-", t->layout);
            }
        } else if (!pv->ne) {
            printf("no layout fits: relax the constraints, add GPUs or a smaller global batch\n");
        }
        double t_est = res->wall_estimate_s, t_me = res->wall_my_estimates_s;
        fprintf(stderr, "search: %zu layouts evaluated in %.3f s (%.0f/s) over %d rank%s; rank 0: %zu estimates in "
                        "%.3f s (%.0f estimates/s); total with %zu simulated %.3f s\n",
                pv->n, t_est, t_est > 0 ? pv->n / t_est : 0.0, so.nranks, so.nranks == 1 ? "" : "s", res->my_estimates,
                t_me, t_me > 0 ? res->my_estimates / t_me : 0.0, res->simulated, res->wall_total_s);
        if ((csv && write_csv(csv, &pv->x, pv->cand, pv->n, pv->sim, pv->sim_of, err) < 0) ||
            (json && write_json(json, &pv->x, pv->cand, pv->n, &pv->k, pv->order, res->ntop, pv->sim, res->fidelity,
                                err) < 0) ||
            (plot && write_svg(plot, &pv->x, pv->cand, pv->order, pv->ne, pv->sim, res->simulated, err) < 0)) {
            fprintf(stderr, "trainsim search: %s\n", err);
            rc = EXIT_USAGE;
        }
    }
    srch_mpi_finalize();
out:
    ts_search_result_free(res);
    coll_policy_free(pol);
    free(err);
    free(sgv);
    free(ours);
    return rc;
}
