/* Tests: cli (being written). */
#include "tests.h"

void suite_cli(void)
{
    test_add_suite("cli", NULL);
}
