/* libFuzzer harness for the chakra-json trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "chakra-json"
#define FUZZ_SUFFIX ""
#include "fuzz_common.h"
