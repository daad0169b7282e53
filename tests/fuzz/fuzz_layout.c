/* libFuzzer harness for layout strings ("tp=8,pp=4,..."): a parse succeeds or
 * says why; a parsed layout formats and parses back to the same layout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[512], err[TS_ERRLEN] = "", back[512];
    if (size >= sizeof s) size = sizeof s - 1;
    memcpy(s, data, size);
    s[size] = 0;
    wl_layout l, l2;
    if (wl_layout_parse(s, &l, err, sizeof err) == 0) {
        if (l.dp == 0) l.dp = 1;
        if (l.gbs == 0) l.gbs = l.mbs;
        /* what wl_layout_check settles before a layout is printed */
        if (l.schedule == WL_NSCHEDULES) l.schedule = l.vpp > 1 ? WL_INTERLEAVED : WL_1F1B;
        wl_layout_format(&l, back, sizeof back);
        if (wl_layout_parse(back, &l2, err, sizeof err) < 0) abort();
        char again[512];
        wl_layout_format(&l2, again, sizeof again);
        if (strcmp(back, again)) abort();
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
