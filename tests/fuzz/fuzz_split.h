/* Multi-file fuzz inputs: the input cut at NUL bytes into up to FUZZ_MAXFILES
 * parts, each written to its own scratch file (name i of the harness). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAXFILES 4

/* Write the parts under dir (created once); returns their count, paths in p. */
static int fuzz_split(const uint8_t *data, size_t size, const char *dir, const char *const *names,
                      char p[][256])
{
    static int made;
    if (!made) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
        if (system(cmd) != 0) abort();
        made = 1;
    }
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size && n < FUZZ_MAXFILES; i++) {
        if (i < size && data[i] != 0) continue;
        snprintf(p[n], 256, "%s/%s", dir, names[n]);
        FILE *f = fopen(p[n], "wb");
        if (!f) abort();
        fwrite(data + start, 1, i - start, f);
        fclose(f);
        n++;
        start = i + 1;
    }
    return n;
}
