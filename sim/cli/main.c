/* bin/trainsim: the command table (git's style) and dispatch. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "engine.h"
#include "util.h"

static int cmd_help(int argc, char **argv);

static const struct cmd {
    const char *name;
    const char *summary;
    int (*fn)(int argc, char **argv);
} cmds[] = {
    {"sim", "simulate a trace (op graph) on a platform", cmd_sim},
    {"coll", "simulate an nccl-tests sweep of one collective (nccl-tests' output)", cmd_coll},
    {"validate-trace", "check a trace for errors without simulating it", cmd_validate_trace},
    {"platform", "show a cluster's figures or export its SimGrid platform", cmd_platform},
    {"run", "one training iteration of a model under a parallel layout", cmd_run},
    {"convert", "import a recorded trace (Kineto, Chakra, NCCL log, SMPI) as a native trace", cmd_convert},
    {"search", "choose a parallel layout: enumerate, prune, estimate, simulate the best", cmd_search},
    {"replay", "CI regression mode: simulate a trace and compare with a golden file", cmd_replay},
    {"calibrate", "fit measured collectives (nccl-tests, OSU) and write a calibration JSON", cmd_calibrate},
    {"compare", "measured vs simulated collectives per size, with errors and an SVG plot", cmd_compare},
    {"accuracy", "predict every shipped measurement: error per file, uncalibrated and calibrated", cmd_accuracy},
    {"help", "list the commands, or show one command's options", cmd_help},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "trainsim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'trainsim %s --help')\n", cmd);
    return EXIT_USAGE;
}

int cmd_unknown_option(const char *cmd, const char *arg, const struct option *longopts)
{
    const char *names[128];
    size_t n = 0;
    char given[64];
    const char *s = arg;
    while (*s == '-') s++;
    snprintf(given, sizeof given, "%.*s", (int)strcspn(s, "="), s);
    for (; longopts && longopts[n].name && n < 128; n++) names[n] = longopts[n].name;
    const char *near = arg[0] == '-' && arg[1] == '-' ? ts_closest(given, names, n) : NULL;
    if (near) return cmd_usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", arg, near);
    return cmd_usage_error(cmd, "unknown option '%s'", arg);
}

int cmd_split_simgrid(int argc, char **argv, char **sgv, char **ours, int *nours)
{
    int sgc = 1;
    *nours = 1;
    sgv[0] = ours[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--cfg=", 6) == 0 || strncmp(argv[i], "--log=", 6) == 0) sgv[sgc++] = argv[i];
        else ours[(*nours)++] = argv[i];
    }
    return sgc;
}

int cmd_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: trainsim <command> [options]\n\n"
               "trainsim simulates GPU clusters running parallel training: op graphs\n"
               "(traces) on SimGrid platforms, flow-level, with timelines and per-link load.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCMDS; i++) fprintf(f, "  %-16s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n'trainsim <command> --help' shows a command's options.\n"
               "exit status: 0 success, 1 simulation failed (e.g. deadlock), 2 bad input or usage.\n");
}

static const struct cmd *find(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(cmds[i].name, name) == 0) return &cmds[i];
    return NULL;
}

static int unknown_command(const char *who, const char *name)
{
    const char *names[NCMDS];
    for (size_t i = 0; i < NCMDS; i++) names[i] = cmds[i].name;
    const char *near = ts_closest(name, names, NCMDS);
    fprintf(stderr, "%s: unknown command '%s'", who, name);
    if (near) fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, " (commands:");
    for (size_t i = 0; i < NCMDS; i++) fprintf(stderr, " %s", cmds[i].name);
    fprintf(stderr, ")\n");
    return EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    const struct cmd *c = find(argv[1]);
    if (!c || c->fn == cmd_help) {
        if (c) return usage(stdout), EXIT_OK;
        return unknown_command("trainsim help", argv[1]);
    }
    char *av[] = {argv[1], "--help", NULL};
    return c->fn(2, av);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    const struct cmd *c = find(argv[1]);
    if (!c) return unknown_command("trainsim", argv[1]);
    int rc = c->fn(argc - 1, argv + 1);
    if (eng_loaded_hosts() > ENG_QUICK_EXIT_HOSTS) { /* the system frees a large platform faster */
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
