/* Tests: coll (being written). */
#include "tests.h"

void suite_coll(void)
{
    test_add_suite("coll", NULL);
}
