/* `trainsim replay`: CI regression mode. Simulates a recorded trace on a
 * platform and compares the result with a golden file (exit 0/1/2). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "engine.h"
#include "replay.h"
#include "trace.h"
#include "util.h"

#define BIGERR 16384

static const char replay_help[] =
    "usage: trainsim replay --platform P --trace T... --expect GOLDEN.json\n"
    "                       [--tolerance 3%] [--write-golden] [options]\n\n"
    "CI regression mode. Simulate the recorded trace T (any format 'trainsim convert'\n"
    "reads; several files for per-rank formats) on platform P and compare the\n"
    "iteration time, each rank's compute/communication/exposed/finish times and\n"
    "each collective's time with GOLDEN.json. Prints a table of what moved beyond\n"
    "the tolerance and by how much. See docs/replay.md for a ready-to-copy CI job.\n\n"
    "options:\n"
    "  --platform P       cluster (name, NAME:NODES or JSON: docs/clusters.md) or\n"
    "                     SimGrid XML platform file; --cluster P is the same\n"
    "  --nodes N          cluster node count;  --calibration F: a calibration JSON\n"
    "  --trace T          trace file; repeat, or list more files after the options\n"
    "  --format NAME      the trace's format instead of detection\n"
    "  --expect FILE      golden file to compare with (or to write)\n"
    "  --tolerance X      allowed relative change, '3%' or '0.03' (default 3%)\n"
    "  --write-golden     write FILE from this run instead of comparing\n"
    "  --fidelity F       'pipelined' (default) or 'step'\n"
    "  --gap SECONDS      NCCL logs without timestamps: compute between collectives\n"
    CMD_TR_HELP
    "  --cfg=K:V, --log=X passed to SimGrid\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 within tolerance (or golden written), 1 regression (something\n"
    "moved), 2 bad input (unreadable trace, platform or golden; trace and golden\n"
    "that do not describe the same ops).\n";

/* Parse "3%", "0.03" into a fraction; -1 when invalid. */
static double parse_tol(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0)) return -1;
    if (*end == '%' && !end[1]) return v / 100;
    return *end ? -1 : v;
}

int cmd_replay(int argc, char **argv)
{
    enum { O_PLATFORM = 256, O_TRACE, O_FORMAT, O_EXPECT, O_TOL, O_WRITE, O_FIDELITY, O_GAP, O_NODES, O_CALIB };
    static const struct option longopts[] = {
        {"platform", required_argument, 0, O_PLATFORM}, {"trace", required_argument, 0, O_TRACE},
        {"cluster", required_argument, 0, O_PLATFORM},  {"nodes", required_argument, 0, O_NODES},
        {"calibration", required_argument, 0, O_CALIB},
        {"format", required_argument, 0, O_FORMAT},     {"expect", required_argument, 0, O_EXPECT},
        {"tolerance", required_argument, 0, O_TOL},     {"write-golden", no_argument, 0, O_WRITE},
        {"fidelity", required_argument, 0, O_FIDELITY}, {"gap", required_argument, 0, O_GAP},
        {"help", no_argument, 0, 'h'},                  CMD_TR_LONGOPTS, {0, 0, 0, 0},
    };
    const char *platform = NULL, *expect = NULL, *calib = NULL;
    int nodes = 0;
    tr_info info = {0};
    tr_opts to = {.format = NULL, .info = &info};
    int trc;
    eng_opts eo = {ENG_PIPELINED, 0, 0, 0, 0};
    double tol = 0.03;
    int write = 0, c, rc = EXIT_USAGE, ntr = 0;
    char **sgv = ts_calloc((size_t)argc + 1, sizeof *sgv), **ours = ts_calloc((size_t)argc + 1, sizeof *ours);
    char **traces = ts_calloc((size_t)argc + 1, sizeof *traces);
    int sgc, nours;
    sgc = cmd_split_simgrid(argc, argv, sgv, ours, &nours);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(nours, ours, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_PLATFORM: platform = optarg; break;
        case O_CALIB: calib = optarg; break;
        case O_NODES: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000) {
                rc = cmd_usage_error("replay", "--nodes wants a count from 1 to 1000000, not '%s'", optarg);
                goto out;
            }
            nodes = (int)v;
            break;
        }
        case O_TRACE: traces[ntr++] = optarg; break;
        case O_EXPECT: expect = optarg; break;
        case O_WRITE: write = 1; break;
        case O_FORMAT:
            if (!tr_find(optarg)) {
                rc = cmd_usage_error("replay", "unknown trace format '%s' (valid: %s)", optarg, tr_format_names());
                goto out;
            }
            to.format = optarg;
            break;
        case O_TOL:
            if ((tol = parse_tol(optarg)) < 0 || tol > 100) {
                rc = cmd_usage_error("replay", "--tolerance wants '3%%' or '0.03', not '%s'", optarg);
                goto out;
            }
            break;
        case O_GAP: {
            char *end;
            to.gap = strtod(optarg, &end);
            if (*end || !(to.gap >= 0) || to.gap > OG_MAX_DURATION) {
                rc = cmd_usage_error("replay", "--gap wants seconds >= 0, not '%s'", optarg);
                goto out;
            }
            break;
        }
        case O_FIDELITY: {
            int f = eng_fidelity_from_name(optarg);
            if (f < 0) {
                rc = cmd_usage_error("replay", "unknown fidelity '%s' (valid: step, pipelined)", optarg);
                goto out;
            }
            eo.fidelity = f;
            break;
        }
        case CMD_TR_STEP:
        case CMD_TR_HOSTGAPS:
            if ((trc = cmd_trace_option("replay", c, optarg, &to, NULL)) != 0) {
                rc = trc;
                goto out;
            }
            break;
        case 'h':
            fputs(replay_help, stdout);
            rc = EXIT_OK;
            goto out;
        case ':': rc = cmd_usage_error("replay", "option '%s' needs a value", ours[optind - 1]); goto out;
        default: rc = cmd_unknown_option("replay", ours[optind - 1], longopts); goto out;
        }
    }
    while (optind < nours) traces[ntr++] = ours[optind++];
    if (!platform || !ntr || !expect) {
        rc = cmd_usage_error("replay", "--platform, --trace and --expect are required");
        goto out;
    }

    char *err = ts_malloc(BIGERR);
    og_graph *g = NULL;
    rp_metrics *golden = NULL, *now = NULL;
    eng_result *res = NULL;
    if (!write && rp_read_golden(expect, &golden, err, BIGERR) < 0) {
        fprintf(stderr, "trainsim replay: %s\n", err);
    } else if (tr_import(ntr, traces, &to, &g, err, BIGERR) < 0) {
        fprintf(stderr, "trainsim replay: %s\n", err);
    } else {
        eng_init(&sgc, sgv);
        if (eng_load(platform, nodes, calib, err, BIGERR) < 0) {
            fprintf(stderr, "trainsim replay: %s\n", err);
        } else if (eng_run(g, &eo, &res, err, BIGERR) < 0) {
            fprintf(stderr, "trainsim replay: %s: %s\n", traces[0], err);
            rc = strncmp(err, "deadlock", 8) == 0 ? EXIT_FAIL : EXIT_USAGE;
        } else {
            now = rp_collect(g, res);
            cmd_trace_notes(stdout, &info);
            if (write) {
                if (rp_write_golden(expect, now, traces[0], platform, err, BIGERR) < 0)
                    fprintf(stderr, "trainsim replay: %s\n", err);
                else
                    printf("replay: wrote %s (%d metrics, iteration %.6f ms)\n", expect, now->n, now->m[0].seconds * 1e3), rc = EXIT_OK;
            } else {
                int nm = rp_compare(golden, now, tol, stdout, err, BIGERR);
                if (nm < 0) {
                    fprintf(stderr, "trainsim replay: %s: %s\n", expect, err);
                } else if (nm > 0) {
                    printf("replay: REGRESSION against %s\n", expect);
                    rc = EXIT_FAIL;
                } else {
                    printf("replay: ok, %d metrics within %.4g%% of %s (iteration %.6f ms)\n", now->n, tol * 100,
                           expect, now->m[0].seconds * 1e3);
                    rc = EXIT_OK;
                }
            }
        }
    }
    rp_free(golden);
    rp_free(now);
    eng_result_free(res);
    og_free(g);
    free(err);
out:
    free(sgv);
    free(ours);
    free(traces);
    return rc;
}
