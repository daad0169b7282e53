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
    "usage: trainsim convert IN... -o OUT.json [--format NAME] [--gap SECONDS]\n\n"
    "Import a recorded trace and write it as a native trainsim trace (docs/trace-format.md).\n"
    "Per-rank formats take one file per rank (Kineto, Chakra); the others one file\n"
    "(an SMPI index file listing per-rank files works too). The format is detected\n"
    "from the first file's contents unless --format names it. See docs/replay.md.\n\n"
    "options:\n"
    "  -o, --output OUT   native trace to write ('-' for stdout)\n"
    "  --format NAME      the input format (list: --formats)\n"
    "  --gap SECONDS      NCCL logs without timestamps: compute time between two\n"
    "                     collectives of a rank (default 0)\n"
    "  --formats          list the formats and exit\n"
    "  -h, --help         this help\n\n"
    "exit status: 0 ok, 2 bad input.\n";

int cmd_convert(int argc, char **argv)
{
    enum { O_FORMAT = 256, O_GAP, O_FORMATS };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"format", required_argument, 0, O_FORMAT},
        {"gap", required_argument, 0, O_GAP},  {"formats", no_argument, 0, O_FORMATS},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    tr_opts to = {NULL, 0};
    const char *outp = NULL;
    int c;
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
        case ':': return cmd_usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_unknown_option("convert", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return cmd_usage_error("convert", "no input trace given");
    if (!outp) return cmd_usage_error("convert", "-o OUT is required");
    og_graph *g = NULL;
    char err[TS_ERRLEN];
    if (tr_import(argc - optind, argv + optind, &to, &g, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim convert: %s\n", err);
        return EXIT_USAGE;
    }
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
