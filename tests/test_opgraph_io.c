/* Tests: opgraph_io (being written). */
#include "tests.h"

void suite_opgraph_io(void)
{
    test_add_suite("opgraph_io", NULL);
}
