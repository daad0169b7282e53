/* Tests: util (being written). */
#include "tests.h"

void suite_util(void)
{
    test_add_suite("util", NULL);
}
