/* Tests: engine (being written). */
#include "tests.h"

void suite_engine(void)
{
    test_add_suite("engine", NULL);
}
