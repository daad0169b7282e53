/* The subcommands of bin/trainsim (one row each in main.c's table). */
#ifndef TS_CMDS_H
#define TS_CMDS_H

#include <stdio.h>

#include "coll_params.h"

/* Exit statuses shared by every command. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

int cmd_sim(int argc, char **argv);
int cmd_validate_trace(int argc, char **argv);
int cmd_platform(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_accuracy(int argc, char **argv);

/* Split argv into SimGrid's own options (--cfg=..., --log=...: into sgv, for
 * simgrid_init) and the command's (into ours, *nours of them); both arrays
 * hold argc + 1 entries and start with argv[0]. Returns the count in sgv. */
int cmd_split_simgrid(int argc, char **argv, char **sgv, char **ours, int *nours);

/* Options shared by calibrate and compare (defined in sim/cli/cmd_calibrate.c):
 * --cluster/--platform, --nodes, --algo, --gpus, --half, --fidelity, -b, -e. */
typedef struct cmd_meas_opts {
    const char *cluster, *algo;
    int nodes, gpus, half, fidelity;
    long long minb, maxb;
    int op;             /* --op: collective of tables that name none (0: none; else og_coll + 1) */
    int explain;        /* --explain: print every parse decision */
    int gpus_per_proc;  /* --gpus-per-proc: GPUs one thread drove (0: the log's nGpus header, else 1) */
    coll_nccl_env env;  /* --nccl-env: NCCL settings over the log's (coll_nccl_env_init before parsing) */
} cmd_meas_opts;
enum { CMD_MEAS_CLUSTER = 300, CMD_MEAS_NODES, CMD_MEAS_ALGO, CMD_MEAS_GPUS, CMD_MEAS_HALF, CMD_MEAS_FID,
       CMD_MEAS_OP, CMD_MEAS_EXPLAIN, CMD_MEAS_GPP, CMD_MEAS_NCCL_ENV };
#define CMD_MEAS_LONGOPTS                                                                                    \
    {"cluster", required_argument, 0, CMD_MEAS_CLUSTER}, {"platform", required_argument, 0, CMD_MEAS_CLUSTER}, \
        {"nodes", required_argument, 0, CMD_MEAS_NODES}, {"algo", required_argument, 0, CMD_MEAS_ALGO},        \
        {"gpus", required_argument, 0, CMD_MEAS_GPUS}, {"half", required_argument, 0, CMD_MEAS_HALF},          \
        {"fidelity", required_argument, 0, CMD_MEAS_FID}, {"minbytes", required_argument, 0, 'b'},             \
        {"maxbytes", required_argument, 0, 'e'}, {"op", required_argument, 0, CMD_MEAS_OP},                     \
        {"explain", no_argument, 0, CMD_MEAS_EXPLAIN}, {"gpus-per-proc", required_argument, 0, CMD_MEAS_GPP},   \
        {"nccl-env", required_argument, 0, CMD_MEAS_NCCL_ENV}
#define CMD_MEAS_PARSE_HELP                                                                            \
    "  --op COLL          collective of tables whose output and command line name none\n"              \
    "  --explain          print every parse decision (collective, ranks, hosts, skipped lines)\n"              \
    "  --gpus-per-proc G  GPUs one thread drove (nccl-tests -g; default: the log's nGpus, else 1)\n"              \
    "  --nccl-env LIST    NCCL settings the run was made with, NCCL_X=V,... (NCCL_ALGO, NCCL_PROTO,\n"      \
    "                     NCCL_MIN/MAX_CTAS, NCCL_MIN/MAX_NCHANNELS, NCCL_NVLS_ENABLE, ...): over the\n"   \
    "                     log's own (NCCL INFO lines, -x NCCL_X=V, '# ENV:'; docs/collectives.md)\n"
/* Option c (with its argument) of command cmd: 0 when handled, EXIT_USAGE
 * (after the message) when its value is bad, 1 when c is not one of these. */
int cmd_meas_option(const char *cmd, int c, const char *arg, cmd_meas_opts *o);
/* Parse a measurement file with --op and --explain (decisions on stdout, a
 * one-line note of skipped lines otherwise). */
struct val_file;
int cmd_meas_parse(const cmd_meas_opts *o, const char *path, struct val_file *out, char *err, size_t errlen);

/* --nccl-env's value added to e (EXIT_USAGE after a message when bad). */
int cmd_nccl_env_arg(const char *cmd, const char *arg, coll_nccl_env *e);
/* The NCCL settings a prediction of one run uses: the log's (NULL: none)
 * under the option's (NULL: none), into out. An explicit algorithm (--algo,
 * the accuracy manifest's) wins over NCCL_ALGO (said on stderr where they
 * differ); without one, an NCCL_ALGO of one algorithm forces it (as --algo
 * would, spec). Returns the algorithm to force (explicit, spec or NULL).
 * The names the model ignores are said once on stderr ("trainsim CMD:
 * WHAT: NCCL_X: not modelled, ignored"). */
const char *cmd_nccl_env_resolve(const char *cmd, const char *what, const coll_nccl_env *log,
                                 const coll_nccl_env *opt, const char *algo, og_coll coll, coll_nccl_env *out,
                                 char *spec, size_t n);

/* --algo's value: "msccl:FILE" loads and checks the MSCCL program FILE and
 * gives "msccl" (EXIT_USAGE after a message when FILE is bad); else arg. */
int cmd_algo_arg(const char *cmd, const char *arg, const char **out);

/* Report an unknown option (argv[optind - 1] after getopt_long's '?') with
 * the closest long option of longopts when it looks like a slip. */
struct option;
int cmd_unknown_option(const char *cmd, const char *arg, const struct option *longopts);

/* Report an unknown/missing option for command cmd and return EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The collective selection policy of --coll SPEC and --tuning FILE (either
 * may be NULL; both NULL: *out = NULL, automatic). EXIT_USAGE after a one-line
 * message naming the bad item or FILE:LINE; the caller frees *out with
 * coll_policy_free. Help text for both options: CMD_POLICY_HELP. */
struct coll_policy;
int cmd_policy(const char *cmd, const char *coll_spec, const char *tuning, struct coll_policy **out);
#define CMD_POLICY_HELP                                                                  \
    "  --coll SPEC        force collectives' algorithms, e.g. allreduce=tree,alltoall=direct:ll128\n" \
    "                     (ALGO[:PROTO]; falls back to automatic where the group cannot run it)\n"  \
    "  --tuning FILE      tuning table CSV: coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm;\n" \
    "                     the first matching row chooses (--coll wins; docs/collectives.md)\n"

/* Trace options of sim, convert and replay (sim/cli/cmd_trace_opts.c):
 * --step N|all and --host-gaps. cmd_trace_option returns 0 when handled,
 * EXIT_USAGE (after the message) on a bad value, 1 when c is not one of them;
 * all_steps NULL where 'all' is not offered. */
struct tr_opts;
struct tr_info;
enum { CMD_TR_STEP = 320, CMD_TR_HOSTGAPS };
#define CMD_TR_LONGOPTS {"step", required_argument, 0, CMD_TR_STEP}, {"host-gaps", no_argument, 0, CMD_TR_HOSTGAPS}
#define CMD_TR_HELP                                                                                   \
    "  --step N           Kineto: only iteration ProfilerStep#N (kernels launched within it)\n"     \
    "  --host-gaps        Kineto: replay the host's gaps between kernel launches as delays on a\n" \
    "                     CPU stream, so the replay keeps the recorded iteration's idle time\n"
int cmd_trace_option(const char *cmd, int c, const char *arg, struct tr_opts *o, int *all_steps);
/* Print what the import says about the recorded timeline (host gaps dropped or replayed). */
void cmd_trace_notes(FILE *f, const struct tr_info *in);

/* An integer option value in [lo, hi]; -1 when malformed or out of range. */
int cmd_parse_int(const char *s, int lo, int hi, int *out);

#endif
