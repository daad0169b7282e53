/* libFuzzer harness for NCCL topology XML: an import yields a JSON node
 * object or a message, never both, never neither. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cluster.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/trainsim-fuzz-topo-%d.xml", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    char err[TS_ERRLEN] = "", notes[2048];
    char *node = topo_nccl_node(path, notes, sizeof notes, err, sizeof err);
    if (node) {
        json_error_t je;
        json_t *o = json_loads(node, 0, &je);
        if (!o || json_integer_value(json_object_get(o, "gpus")) < 1) abort();
        json_decref(o);
        free(node);
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
