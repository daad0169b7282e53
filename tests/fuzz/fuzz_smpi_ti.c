/* libFuzzer harness for the smpi-ti trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "smpi-ti"
#define FUZZ_SUFFIX ""
#include "fuzz_common.h"
