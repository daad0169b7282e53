/* The CUnit suite registry: each test file exports one register function,
 * listed once in tests/test_main.c. Shared test helpers live here too. */
#ifndef TS_TESTS_H
#define TS_TESTS_H

#include <CUnit/CUnit.h>

void suite_util(void);
void suite_opgraph_io(void);
void suite_opgraph_check(void);
void suite_engine(void);
void suite_coll(void);
void suite_cli(void);

/* Path of a fixture in tests/data/. */
const char *test_data(const char *name);

/* Add a suite with the given tests (NULL-terminated name/function pairs). */
void test_add_suite(const char *name, ...);

#endif
