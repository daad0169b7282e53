/* `trainsim convert`: import a recorded trace (Kineto, Chakra, NCCL log, SMPI
 * time-independent, native) and write it in the native op-graph format. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "opgraph.h"
#include "trace.h"
#include "util.h"

static const char convert_help[] =
    "usage: trainsim convert IN... -o OUT.json [--format NAME] [--gap SECONDS]\n"
    "                        [--step N|all] [--host-gaps]\n\n"
    "Import a recorded trace and write it as a native trainsim trace (docs/trace-format.md).\n"
    "Per-rank formats take one file per rank (Kineto, Chakra); the others one file\n"
    "(an SMPI index file listing per-rank files works too). The format is detected\n"
    "from the first file's contents unless --format names it. See docs/replay.md.\n\n"
    "options:\n"
    "  -o, --output OUT   native trace to write ('-' for stdout)\n"
    "  --format NAME      the input format (list: --formats)\n"
    "  --gap SECONDS      NCCL logs without timestamps: compute time between two\n"
    "                     collectives of a rank (default 0)\n"
    CMD_TR_HELP
    "  --step all         one file per ProfilerStep#N: OUT.stepN.json\n"
    "  --formats          list the formats and exit\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 2 bad input (including a trace with nothing to simulate:\n"
    "no GPU activity, as in CPU-only or gloo traces).\n";

/* --step all: each ProfilerStep#N of the trace into OUT.stepN.json. */
static int convert_steps(int n, char **paths, tr_opts *to, const char *outp)
{
    char err[TS_ERRLEN], path[4096];
    og_graph *g = NULL;
    if (!strcmp(outp, "-")) return cmd_usage_error("convert", "--step all writes one file per step: -o cannot be '-'");
    if (tr_import(n, paths, to, &g, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim convert: %s\n", err);
        return EXIT_USAGE;
    }
    og_free(g);
    tr_info all = *to->info;
    if (!all.nsteps) {
        fprintf(stderr, "trainsim convert: %s: no ProfilerStep#N annotations: --step all has nothing to split\n", paths[0]);
        return EXIT_USAGE;
    }
    size_t stem = strlen(outp);
    if (stem > 5 && !strcmp(outp + stem - 5, ".json")) stem -= 5;
    for (int s = 0; s < all.nsteps; s++) {
        to->one_step = 1, to->step = all.step[s];
        memset(to->info, 0, sizeof *to->info);
        snprintf(path, sizeof path, "%.*s.step%ld.json", (int)stem, outp, all.step[s]);
        if (tr_import(n, paths, to, &g, err, sizeof err) < 0 || og_write_file(g, path, err, sizeof err) < 0) {
            fprintf(stderr, "trainsim convert: %s\n", err);
            og_free(g);
            return EXIT_USAGE;
        }
        printf("%s: ProfilerStep#%ld, %d ranks, %d ops, recorded %.3f ms\n", path, all.step[s], g->nranks,
               og_total_ops(g), all.step_span[s] * 1e3);
        og_free(g);
        g = NULL;
    }
    return EXIT_OK;
}

int cmd_convert(int argc, char **argv)
{
    enum { O_FORMAT = 256, O_GAP, O_FORMATS };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"format", required_argument, 0, O_FORMAT},
        {"gap", required_argument, 0, O_GAP},  {"formats", no_argument, 0, O_FORMATS},
        {"help", no_argument, 0, 'h'},         CMD_TR_LONGOPTS, {0, 0, 0, 0},
    };
    tr_info info = {0};
    tr_opts to = {.format = NULL, .info = &info};
    const char *outp = NULL;
    int c, all = 0, trc;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case O_FORMAT:
            if (!tr_find(optarg))
                return cmd_usage_error("convert", "unknown trace format '%s' (valid: %s)", optarg, tr_format_names());
            to.format = optarg;
            break;
        case O_GAP: {
            char *end;
            to.gap = strtod(optarg, &end);
            if (*end || !(to.gap >= 0) || to.gap > OG_MAX_DURATION)
                return cmd_usage_error("convert", "--gap wants seconds >= 0, not '%s'", optarg);
            break;
        }
        case O_FORMATS:
            for (int i = 0; i < tr_nformats; i++)
                printf("%-12s %s\n", tr_formats[i]->name, tr_formats[i]->description);
            return EXIT_OK;
        case 'h': fputs(convert_help, stdout); return EXIT_OK;
        case CMD_TR_STEP:
        case CMD_TR_HOSTGAPS:
            if ((trc = cmd_trace_option("convert", c, optarg, &to, &all)) != 0) return trc;
            break;
        case ':': return cmd_usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_unknown_option("convert", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return cmd_usage_error("convert", "no input trace given");
    if (!outp) return cmd_usage_error("convert", "-o OUT is required");
    if (all) return convert_steps(argc - optind, argv + optind, &to, outp);
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    if (tr_import(argc - optind, argv + optind, &to, &g, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim convert: %s\n", err);
        return EXIT_USAGE;
    }
    cmd_trace_notes(stdout, &info);
    int rc = EXIT_OK;
    if (!strcmp(outp, "-")) {
        if (og_write(g, stdout) < 0) rc = EXIT_USAGE;
    } else if (og_write_file(g, outp, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim convert: %s\n", err);
        rc = EXIT_USAGE;
    } else {
        printf("%s: %d ranks, %d ops, %d groups\n", outp, g->nranks, og_total_ops(g), g->ngroups);
    }
    og_free(g);
    return rc;
}
