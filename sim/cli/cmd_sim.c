/* `trainsim sim` and `trainsim validate-trace`: read, check and simulate a trace. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "coll.h"
#include "engine.h"
#include "opgraph.h"
#include "report.h"
#include "trace.h"
#include "util.h"

#define BIGERR 16384

static const char sim_help[] =
    "usage: trainsim sim --platform P --trace T [options]\n\n"
    "Simulate the op graph T (native trace format, docs/trace-format.md) on P, a\n"
    "cluster (shipped name such as dgx-h100-superpod, NAME:NODES, or a cluster JSON:\n"
    "docs/clusters.md) or a SimGrid XML platform, and print the iteration time and a per-rank\n"
    "breakdown. Rank r runs on the host named in the trace, or else on the r-th\n"
    "host of the platform in natural name order (gpu-2 before gpu-10).\n\n"
    "options:\n"
    "  --platform P       cluster name/JSON or SimGrid XML platform file\n"
    "  --cluster P        the same as --platform\n"
    "  --nodes N          cluster node count (overrides the description)\n"
    "  --calibration F    apply a calibration JSON to the cluster\n"
    "  --trace T          trace file: native JSON, or any format 'trainsim convert'\n"
    "                     reads (detected from the contents); repeat --trace for\n"
    "                     per-rank files (Kineto, Chakra)\n"
    "  --format NAME      the trace's format instead of detection (see 'trainsim\n"
    "                     convert --help' for the list)\n"
    "  --fidelity F       collectives: 'pipelined' (one flow per peer, default) or\n"
    "                     'step' (each schedule step waits for the previous one)\n"
    CMD_TR_HELP
    "  --step all         simulate each ProfilerStep#N on its own: a table of the\n"
    "                     recorded and simulated iterations and their spread\n"
    CMD_POLICY_HELP
    "  --json FILE        write results as JSON (per rank totals, per op start/end)\n"
    "  --timeline FILE    write a Chrome trace / Perfetto timeline (pid = rank,\n"
    "                     tid = stream); open in chrome://tracing or ui.perfetto.dev\n"
    "  --links N          report the N busiest links (bytes, busy fraction)\n"
    "  --progress         progress lines on stderr (default when stderr is a TTY)\n"
    "  --quiet            no summary on stdout\n"
    "  --cfg=K:V, --log=X passed to SimGrid\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 the simulation failed (deadlock), 2 bad input (including a\n"
    "trace with nothing to simulate: no GPU activity, as in CPU-only or gloo traces).\n";

static const char validate_help[] =
    "usage: trainsim validate-trace T...\n\n"
    "Check traces without simulating them: syntax, unknown ranks, groups and peers,\n"
    "dependency cycles, unmatched send/recv, collectives that disagree across a\n"
    "group, negative or absurd sizes. Then runs the trace's synchronisation without\n"
    "time (streams in order, rendezvous send/recv, collectives waiting for every\n"
    "member) and reports a deadlock it finds, naming every blocked stream (e.g. two\n"
    "ranks that both receive first). Prints 'T: ok' with counts, or the first\n"
    "error as 'T: rank R op N: what is wrong'.\n\n"
    "exit status: 0 all traces valid, 1 a trace deadlocks, 2 a trace is malformed.\n";

/* Read (any format: detected, or named) and check a trace; on error print it and return NULL. */
static og_graph *load_trace_opts(const char *cmd, int n, char **paths, const tr_opts *to)
{
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    if (tr_import(n, paths, to, &g, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim %s: %s\n", cmd, err);
        return NULL;
    }
    return g;
}

static og_graph *load_trace(const char *cmd, int n, char **paths, const char *format)
{
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    tr_opts to = {.format = format};
    if (tr_import(n, paths, &to, &g, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim %s: %s\n", cmd, err);
        return NULL;
    }
    return g;
}

int cmd_validate_trace(int argc, char **argv)
{
    if (argc < 2) return cmd_usage_error("validate-trace", "no trace given");
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(validate_help, stdout);
            return EXIT_OK;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cmd_usage_error("validate-trace", "unknown option '%s'", argv[i]);
        }
    int bad = 0, dead = 0;
    for (int i = 1; i < argc; i++) {
        og_graph *g = load_trace("validate-trace", 1, &argv[i], NULL);
        if (!g) {
            bad = 1;
            continue;
        }
        char err[TS_ERRLEN];
        if (og_find_deadlock(g, argv[i], err, sizeof err) < 0) {
            fprintf(stderr, "trainsim validate-trace: %s\n", err);
            dead = 1;
        } else {
            printf("%s: ok (%d ranks, %d ops, %d groups)\n", argv[i], g->nranks, og_total_ops(g), g->ngroups);
        }
        og_free(g);
    }
    return bad ? EXIT_USAGE : dead ? EXIT_FAIL : EXIT_OK;
}

/* --step all: every ProfilerStep#N simulated on its own (one platform, several
 * runs), then each step's recorded and simulated iteration and their spread. */
static int sim_steps(int n, char **paths, tr_opts *to, const eng_opts *o, int quiet)
{
    og_graph *g = load_trace_opts("sim", n, paths, to);
    if (!g) return EXIT_USAGE;
    og_free(g);
    tr_info all = *to->info;
    if (!all.nsteps) {
        fprintf(stderr, "trainsim sim: %s: no ProfilerStep#N annotations: --step all has no steps to simulate\n", paths[0]);
        return EXIT_USAGE;
    }
    char *err = ts_malloc(BIGERR);
    double sim[TR_MAXSTEPS];
    int rc = EXIT_OK, done = 0;
    double gap = 0, rec = 0; /* the notes: largest host gap and span over the steps */
    if (!quiet) printf("%8s %14s %14s %9s\n", "step", "recorded_ms", "simulated_ms", "error");
    for (int s = 0; s < all.nsteps && rc == EXIT_OK; s++) {
        to->one_step = 1, to->step = all.step[s];
        memset(to->info, 0, sizeof *to->info);
        eng_result *res = NULL;
        if (!(g = load_trace_opts("sim", n, paths, to))) {
            rc = EXIT_USAGE;
        } else if (eng_run(g, o, &res, err, BIGERR) < 0) {
            fprintf(stderr, "trainsim sim: %s: ProfilerStep#%ld: %s\n", paths[0], all.step[s], err);
            rc = strncmp(err, "deadlock", 8) == 0 ? EXIT_FAIL : EXIT_USAGE;
        } else {
            gap = fmax(gap, to->info->host_gap), rec = fmax(rec, to->info->recorded);
            sim[done++] = res->makespan;
            if (!quiet)
                printf("%8ld %14.3f %14.3f %+8.1f%%\n", all.step[s], all.step_span[s] * 1e3, res->makespan * 1e3,
                       100 * (res->makespan / all.step_span[s] - 1));
        }
        eng_result_free(res);
        og_free(g);
    }
    if (rc == EXIT_OK && !quiet) {
        double rmin = INFINITY, rmax = 0, rsum = 0, smin = INFINITY, smax = 0, ssum = 0, ssq = 0, rsq = 0;
        for (int s = 0; s < done; s++) {
            rmin = fmin(rmin, all.step_span[s]), rmax = fmax(rmax, all.step_span[s]), rsum += all.step_span[s];
            smin = fmin(smin, sim[s]), smax = fmax(smax, sim[s]), ssum += sim[s];
        }
        double rmean = rsum / done, smean = ssum / done;
        for (int s = 0; s < done; s++)
            rsq += (all.step_span[s] - rmean) * (all.step_span[s] - rmean), ssq += (sim[s] - smean) * (sim[s] - smean);
        printf("%d steps: recorded mean %.3f ms (min %.3f, max %.3f, stdev %.3f); simulated mean %.3f ms "
               "(min %.3f, max %.3f, stdev %.3f)\n", done, rmean * 1e3, rmin * 1e3, rmax * 1e3,
               sqrt(rsq / done) * 1e3, smean * 1e3, smin * 1e3, smax * 1e3, sqrt(ssq / done) * 1e3);
        to->info->host_gap = gap, to->info->recorded = rec;
        cmd_trace_notes(stdout, to->info);
    }
    free(err);
    return rc;
}

int cmd_sim(int argc, char **argv)
{
    enum { O_PLATFORM = 256, O_TRACE, O_FIDELITY, O_JSON, O_TIMELINE, O_LINKS, O_PROGRESS, O_QUIET, O_NODES, O_CALIB,
           O_FORMAT, O_COLL, O_TUNING };
    static const struct option longopts[] = {
        {"platform", required_argument, 0, O_PLATFORM}, {"trace", required_argument, 0, O_TRACE},
        {"cluster", required_argument, 0, O_PLATFORM},  {"nodes", required_argument, 0, O_NODES},
        {"calibration", required_argument, 0, O_CALIB},
        {"fidelity", required_argument, 0, O_FIDELITY}, {"json", required_argument, 0, O_JSON},
        {"timeline", required_argument, 0, O_TIMELINE}, {"links", required_argument, 0, O_LINKS},
        {"progress", no_argument, 0, O_PROGRESS},       {"quiet", no_argument, 0, O_QUIET},
        {"format", required_argument, 0, O_FORMAT},     {"help", no_argument, 0, 'h'},
        {"coll", required_argument, 0, O_COLL},         {"tuning", required_argument, 0, O_TUNING},
        CMD_TR_LONGOPTS,                                {0, 0, 0, 0},
    };
    const char *platform = NULL, *trace = NULL, *json = NULL, *timeline = NULL, *calib = NULL, *format = NULL;
    const char *coll_spec = NULL, *tuning = NULL;
    coll_policy *pol = NULL;
    int nodes = 0;
    char **traces = ts_calloc((size_t)argc + 1, sizeof *traces);
    int ntrace = 0;
    eng_opts o = {ENG_PIPELINED, 0, isatty(2), 0, 0};
    int quiet = 0, all_steps = 0, trc;
    tr_info info = {0};
    tr_opts to = {.info = &info};
    /* SimGrid's own options travel separately to simgrid_init. */
    char **sgv = ts_calloc(argc + 1, sizeof *sgv);
    char **ours = ts_calloc(argc + 1, sizeof *ours);
    int sgc, nours;
    sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    int rc = EXIT_USAGE, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(nours, ours, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_PLATFORM: platform = optarg; break;
        case O_TRACE: trace = traces[ntrace++] = optarg; break;
        case O_FORMAT:
            if (!tr_find(optarg)) {
                rc = cmd_usage_error("sim", "unknown trace format '%s' (valid: %s)", optarg, tr_format_names());
                goto out;
            }
            format = optarg;
            break;
        case O_JSON: json = optarg; break;
        case O_TIMELINE: timeline = optarg; break;
        case O_PROGRESS: o.progress = 1; break;
        case O_QUIET: quiet = 1; break;
        case O_COLL: coll_spec = optarg; break;
        case O_TUNING: tuning = optarg; break;
        case O_CALIB: calib = optarg; break;
        case O_NODES: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                rc = cmd_usage_error("sim", "--nodes wants a count from 1 to 1000000, not '%s'", optarg);
                goto out;
            }
            nodes = (int)n;
            break;
        }
        case O_FIDELITY: {
            int f = eng_fidelity_from_name(optarg);
            if (f < 0) {
                rc = cmd_usage_error("sim", "unknown fidelity '%s' (valid: step, pipelined)", optarg);
                goto out;
            }
            o.fidelity = f;
            break;
        }
        case O_LINKS: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                rc = cmd_usage_error("sim", "--links wants a count from 1 to 1000000, not '%s'", optarg);
                goto out;
            }
            o.links = (int)n;
            break;
        }
        case CMD_TR_STEP:
        case CMD_TR_HOSTGAPS:
            if ((trc = cmd_trace_option("sim", c, optarg, &to, &all_steps)) != 0) {
                rc = trc;
                goto out;
            }
            break;
        case 'h':
            fputs(sim_help, stdout);
            rc = EXIT_OK;
            goto out;
        case ':': rc = cmd_usage_error("sim", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_unknown_option("sim", ours[optind - 1], longopts); goto out;
        }
    }
    if (optind < nours) {
        rc = cmd_usage_error("sim", "unexpected argument '%s'", ours[optind]);
        goto out;
    }
    if (!platform || !trace) {
        rc = cmd_usage_error("sim", "--platform and --trace are required");
        goto out;
    }
    if ((rc = cmd_policy("sim", coll_spec, tuning, &pol)) != 0) goto out;
    rc = EXIT_USAGE;

    to.format = format;
    if (all_steps) {
        if (json || timeline) {
            rc = cmd_usage_error("sim", "--json and --timeline describe one run: give --step N, not --step all");
            goto out;
        }
        char err[TS_ERRLEN];
        eng_init(&sgc, sgv);
        eng_set_policy(pol);
        if (eng_load(platform, nodes, calib, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim sim: %s\n", err);
            goto out;
        }
        rc = sim_steps(ntrace, traces, &to, &o, quiet);
        goto out;
    }
    og_graph *g = load_trace_opts("sim", ntrace, traces, &to);
    if (!g) goto out;
    char *err = ts_malloc(BIGERR);
    eng_result *res = NULL;
    eng_init(&sgc, sgv);
    eng_set_policy(pol);
    if (eng_load(platform, nodes, calib, err, BIGERR) < 0) {
        fprintf(stderr, "trainsim sim: %s\n", err);
    } else if (eng_run(g, &o, &res, err, BIGERR) < 0) {
        fprintf(stderr, "trainsim sim: %s: %s\n", trace, err);
        rc = strncmp(err, "deadlock", 8) == 0 ? EXIT_FAIL : EXIT_USAGE;
    } else {
        rc = EXIT_OK;
        if (!quiet) eng_report_summary(stdout, g, res);
        if (!quiet) cmd_trace_notes(stdout, &info);
        if (json && eng_report_json(json, g, res, err, BIGERR) < 0) rc = EXIT_USAGE;
        if (rc == EXIT_OK && timeline && eng_report_timeline(timeline, g, res, err, BIGERR) < 0) rc = EXIT_USAGE;
        if (rc != EXIT_OK) fprintf(stderr, "trainsim sim: %s\n", err);
    }
    eng_result_free(res);
    free(err);
    og_free(g);
out:
    coll_policy_free(pol);
    free(sgv);
    free(ours);
    free(traces);
    return rc;
}
