/* libFuzzer harness for the nccl-log trace importer (see fuzz_common.h). */
#define FUZZ_FORMAT "nccl-log"
#define FUZZ_SUFFIX ""
#include "fuzz_common.h"
