/* libFuzzer harness for the kineto trace importer (see fuzz_common.h): the
 * whole trace with host gaps replayed, then its last ProfilerStep alone. */
#define FUZZ_FORMAT "kineto"
#define FUZZ_SUFFIX ""
#define FUZZ_STEPS 1
#include "fuzz_common.h"
