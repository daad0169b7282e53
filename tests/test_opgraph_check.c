/* Tests: opgraph_check (being written). */
#include "tests.h"

void suite_opgraph_check(void)
{
    test_add_suite("opgraph_check", NULL);
}
