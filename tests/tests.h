/* The CUnit suite registry: each test file exports one register function,
 * listed once in tests/test_main.c. Shared test helpers live here too. */
#ifndef TS_TESTS_H
#define TS_TESTS_H

#include <CUnit/CUnit.h>
#include <jansson.h>

void suite_util(void);
void suite_opgraph_io(void);
void suite_opgraph_check(void);
void suite_engine(void);
void suite_coll(void);
void suite_cli(void);
void suite_platforms(void);
void suite_collsim(void);
void suite_posting(void);
void suite_cmd_coll(void);
void suite_compute(void);
void suite_workload(void);
void suite_workload_graph(void);
void suite_run(void);
void suite_trace(void);
void suite_trace_wild(void);
void suite_val(void);
void suite_val_fit(void);
void suite_search(void);
void suite_axonn(void);
void suite_zeropp(void);
void suite_policy(void);
void suite_run_links(void);
void suite_copies(void);
void suite_train(void);
void suite_msccl(void);
void suite_api(void);
void suite_kernels(void);
void suite_coll_model(void);

/* The collective model with its software terms off (no launch, base or hop
 * latency, no channel rule, bandwidth fractions 1 but the wire formats: LL
 * 1/2, LL128 120/128, NVLS 275/450): a schedule's time is its alpha-beta cost
 * on the platform, what the closed-form tests compare with, and the selection
 * picks by it. Made the active set by test_main. */
void test_bare_params(void);

/* Path of a fixture in tests/data/. */
const char *test_data(const char *name);

/* A scratch file path of this process (/tmp/trainsim-PID-name): checkouts
 * running the tests at once must not share files. */
const char *test_tmp(const char *name);

/* Add a suite with the given tests (NULL-terminated name/function pairs). */
void test_add_suite(const char *name, ...);

/* Running simulations in a forked child (SimGrid loads one platform per process). */
#include "engine.h"
#include "opgraph.h"

#define TEST_MAX_RANKS 128
typedef struct test_outcome {
    int rc;                 /* eng_run's return (or -2 when the child crashed) */
    double makespan;
    long ncomms;
    long nfluid;            /* eng_result.nfluid */
    long nlone;             /* eng_result.nlone */
    double wall;
    int nranks;
    eng_rank_stats ranks[TEST_MAX_RANKS];
    char err[4096];
} test_outcome;

/* A graph of n ranks, one group of all of them, one collective c of bytes
 * (float) on each, forced to algorithm algo (NULL: automatic). */
og_graph *test_one_collective(int n, og_coll c, int64_t bytes, const char *algo);

int test_sim(const char *platform, const og_graph *g, const eng_opts *o, test_outcome *out);

/* Write a contention-free crossbar of n hosts gpu-0..gpu-(n-1) (SimGrid cluster,
 * split-duplex private links of bw bytes/s and lat seconds, no backbone):
 * every route is up-link + down-link, latency 2*lat. Returns the file path. */
const char *test_crossbar(int n, double bw, double lat);

/* Run fn(arg) in a forked child after eng_init (SimGrid ready, nothing
 * loaded); returns fn's status (-2: the child died) and its message. */
int test_child(int (*fn)(void *arg, char *msg, size_t n), void *arg, char *msg, size_t n);

/* Run bin/trainsim with args (shell words): its stdout in out, its exit
 * status returned. Its stderr is kept apart (sanitizers and SimGrid write
 * there): test_cli_err() holds the last run's, for tests of error messages. */
int test_cli(const char *args, char *out, size_t outlen);
const char *test_cli_err(void);

/* Run bin/trainsim args --json to a scratch file of this process: the parsed
 * JSON (caller frees), or NULL after a failed assertion and the command, its
 * stdout (in out) and stderr on stderr. */
json_t *test_cli_json(const char *args, char *out, size_t outlen);

#endif
