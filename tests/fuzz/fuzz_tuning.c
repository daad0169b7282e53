/* libFuzzer harness for tuning CSV (--tuning): a file loads all its rows or
 * none, with a message; a loaded table answers every selection in range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "coll.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-tuning-%d.csv", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    coll_policy *pol = coll_policy_new();
    char err[TS_ERRLEN] = "";
    if (coll_policy_load(pol, path, err, sizeof err) == 0) {
        static const int ns[] = {1, 2, 8, 64};
        static const int64_t bytes[] = {0, 1, 1 << 20, (int64_t)1 << 34};
        for (int c = 0; c < OG_NCOLLS; c++)
            for (size_t i = 0; i < 4; i++)
                for (size_t j = 0; j < 4; j++) {
                    coll_proto proto;
                    coll_source src;
                    int a = coll_policy_select(pol, c, ns[i], bytes[j], NULL, &proto, &src);
                    if (a < 0 && src != COLL_BY_AUTO) abort();
                }
    } else if (!err[0] || coll_policy_rules(pol) != 0) {
        abort();
    }
    coll_policy_free(pol);
    return 0;
}
