/* CUnit entry point: runs every suite of the registry; exit status 1 on failure. */
#include <CUnit/Basic.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "tests.h"

static void (*registry[])(void) = {
    suite_util, suite_opgraph_io, suite_opgraph_check, suite_engine, suite_coll, suite_cli, suite_platforms, suite_trace, suite_trace_wild,
    suite_collsim, suite_posting, suite_cmd_coll,
    suite_compute, suite_workload, suite_workload_graph, suite_run, suite_val, suite_val_fit, suite_search, suite_axonn,
    suite_zeropp, suite_policy, suite_run_links, suite_train, suite_api, suite_kernels, suite_coll_model, suite_msccl,
    suite_copies,
};

const char *test_data(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "tests/data/%s", name);
    return buf[k];
}

const char *test_tmp(const char *name)
{
    static char buf[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "/tmp/trainsim-%d-%s", (int)getpid(), name);
    return buf[k];
}

void test_add_suite(const char *name, ...)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    va_list ap;
    va_start(ap, name);
    for (;;) {
        const char *tname = va_arg(ap, const char *);
        if (!tname) break;
        CU_TestFunc fn = va_arg(ap, CU_TestFunc);
        CU_add_test(s, tname, fn);
    }
    va_end(ap);
}

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) registry[i]();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    /* Schedules are checked against alpha-beta closed forms with the cost
     * model's software terms off; suite coll_model sets the presets it tests
     * and puts these back. Clusters loaded by the engine bring their own. */
    test_bare_params();
    if (argc > 1) {
        /* run one suite by name */
        CU_pSuite s = CU_get_suite(argv[1]);
        if (!s) {
            fprintf(stderr, "test_trainsim: no suite named '%s'\n", argv[1]);
            return 2;
        }
        /* and one test of it, by its description */
        CU_pTest t = argc > 2 ? CU_get_test(s, argv[2]) : NULL;
        if (argc > 2 && !t) {
            fprintf(stderr, "test_trainsim: suite '%s' has no test '%s'\n", argv[1], argv[2]);
            return 2;
        }
        if (t) CU_basic_run_test(s, t);
        else CU_basic_run_suite(s);
    } else {
        CU_basic_run_tests();
    }
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
