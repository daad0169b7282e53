/* libFuzzer harness for cluster JSON (file and '{' text): a load yields a
 * cluster inside the documented bounds or a message, and file and text agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const topo_cluster *c, const char *err)
{
    if (rc == 0) {
        if (c->nodes < 1 || c->node.gpus < 1 || c->node.gpus > TOPO_MAX_GPUS || !c->name[0]) abort();
    } else if (!err[0]) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-cluster-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    static topo_cluster a, b;
    char err[TS_ERRLEN] = "";
    int rc = topo_load(path, 0, &a, err, sizeof err);
    check(rc, &a, err);
    /* the same bytes as cluster JSON text (what --cluster '{...}' passes) */
    if (size && data[0] == '{' && !memchr(data, 0, size)) {
        char *text = malloc(size + 1), terr[TS_ERRLEN] = "";
        memcpy(text, data, size);
        text[size] = 0;
        int rt = topo_load(text, 0, &b, terr, sizeof terr);
        check(rt, &b, terr);
        if ((rt == 0) != (rc == 0) || (rc == 0 && (a.nodes != b.nodes || a.node.gpus != b.node.gpus))) abort();
        free(text);
    }
    return 0;
}
