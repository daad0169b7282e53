/* libFuzzer harness for the nccl-tests / rccl-tests / OSU output parser: a
 * parse either succeeds with rows in every run or fails with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"
#include "val.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size ? size : 1, "r");
    if (!f) abort();
    FILE *ex = fopen("/dev/null", "w");
    val_parse_opts o = {size % 2 ? OG_ALLREDUCE : VAL_UNKNOWN, ex};
    val_file vf;
    char err[TS_ERRLEN] = "";
    if (val_parse_stream_opts(f, "fuzz.txt", &o, &vf, err, sizeof err) == 0) {
        if (vf.nruns < 1) abort();
        for (int i = 0; i < vf.nruns; i++) {
            if (vf.runs[i].nrows < 1 || vf.runs[i].nranks < 0 || vf.runs[i].nhosts < 0) abort();
            if (vf.runs[i].nranks > 1) val_run_set_ranks(&vf.runs[i], vf.runs[i].nranks);
        }
        val_file_free(&vf);
    } else if (!err[0] || vf.runs) {
        abort();
    }
    fclose(ex);
    fclose(f);
    return 0;
}
