/* libFuzzer harness for the chakra-et trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "chakra-et"
#define FUZZ_SUFFIX ".0.et"
#include "fuzz_common.h"
