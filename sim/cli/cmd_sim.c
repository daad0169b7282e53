/* `trainsim sim` and `trainsim validate-trace`: read, check and simulate a trace. */
#include <getopt.h>
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
    CMD_POLICY_HELP
    "  --json FILE        write results as JSON (per rank totals, per op start/end)\n"
    "  --timeline FILE    write a Chrome trace / Perfetto timeline (pid = rank,\n"
    "                     tid = stream); open in chrome://tracing or ui.perfetto.dev\n"
    "  --links N          report the N busiest links (bytes, busy fraction)\n"
    "  --progress         progress lines on stderr (default when stderr is a TTY)\n"
    "  --quiet            no summary on stdout\n"
    "  --cfg=K:V, --log=X passed to SimGrid\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 1 the simulation failed (deadlock), 2 bad input.\n";

static const char validate_help[] =
    "usage: trainsim validate-trace T...\n\n"
    "Check traces without simulating them: syntax, unknown ranks, groups and peers,\n"
    "dependency cycles, unmatched send/recv, collectives that disagree across a\n"
    "group, negative or absurd sizes. Prints 'T: ok' with counts, or the first\n"
    "error as 'T: rank R op N: what is wrong'.\n\n"
    "exit status: 0 all traces valid, 2 otherwise.\n";

/* Read (any format: detected, or named) and check a trace; on error print it and return NULL. */
static og_graph *load_trace(const char *cmd, int n, char **paths, const char *format)
{
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    tr_opts to = {format, 0};
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
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        og_graph *g = load_trace("validate-trace", 1, &argv[i], NULL);
        if (!g) {
            bad = 1;
            continue;
        }
        printf("%s: ok (%d ranks, %d ops, %d groups)\n", argv[i], g->nranks, og_total_ops(g), g->ngroups);
        og_free(g);
    }
    return bad ? EXIT_USAGE : EXIT_OK;
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
        {0, 0, 0, 0},
    };
    const char *platform = NULL, *trace = NULL, *json = NULL, *timeline = NULL, *calib = NULL, *format = NULL;
    const char *coll_spec = NULL, *tuning = NULL;
    coll_policy *pol = NULL;
    int nodes = 0;
    char **traces = ts_calloc((size_t)argc + 1, sizeof *traces);
    int ntrace = 0;
    eng_opts o = {ENG_PIPELINED, 0, isatty(2), 0};
    int quiet = 0;
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
        case 'h':
            fputs(sim_help, stdout);
            rc = EXIT_OK;
            goto out;
        case ':': rc = cmd_usage_error("sim", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_usage_error("sim", "unknown option '%s'", ours[optind - 1]); goto out;
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

    og_graph *g = load_trace("sim", ntrace, traces, format);
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
