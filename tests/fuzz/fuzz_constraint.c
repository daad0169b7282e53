/* libFuzzer harness for search --constraint strings ("tp<=8,zero!=3"): a parse
 * appends at most SRCH_MAX_CONSTRAINTS rows of known keys and operators, or says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[1024], err[TS_ERRLEN] = "";
    if (size >= sizeof s) size = sizeof s - 1;
    memcpy(s, data, size);
    s[size] = 0;
    srch_params p;
    memset(&p, 0, sizeof p);
    if (srch_parse_constraints(s, &p, err, sizeof err) == 0) {
        if (p.nconstr < 0 || p.nconstr > SRCH_MAX_CONSTRAINTS) abort();
        for (int i = 0; i < p.nconstr; i++)
            if (p.constr[i].op < SRCH_LT || p.constr[i].op > SRCH_NE || p.constr[i].value < 0) abort();
        wl_layout l;
        char lerr[TS_ERRLEN];
        if (wl_layout_parse("tp=2,pp=2,dp=2,mbs=1,gbs=8", &l, lerr, sizeof lerr) < 0) abort();
        (void)srch_satisfies(&p, &l);
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
