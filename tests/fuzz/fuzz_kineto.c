/* libFuzzer harness for the kineto trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "kineto"
#define FUZZ_SUFFIX ""
#include "fuzz_common.h"
