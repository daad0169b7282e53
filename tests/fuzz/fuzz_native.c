/* libFuzzer harness for the native trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "native"
#define FUZZ_SUFFIX ""
#include "fuzz_common.h"
