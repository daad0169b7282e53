/* The importer table (one row per trace format), format detection, and the
 * native format's row. */
#include <string.h>

#include "trace.h"
#include "trace_int.h"
#include "util.h"

static int native_detect(const char *path, const char *head, size_t n)
{
    (void)path;
    return memmem(head, n, OG_FORMAT_NAME, strlen(OG_FORMAT_NAME)) != NULL;
}

static int native_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
                         size_t errlen)
{
    (void)o;
    if (nfiles != 1)
        return ts_err(err, errlen, "%s: the native format holds all ranks in one file (%d files given)",
                      paths[0], nfiles);
    return og_read_file(paths[0], out, err, errlen);
}

const tr_format tr_fmt_native = {"native", "trainsim's own JSON op graph (docs/trace-format.md)",
                                 native_detect, native_import};

/* Order matters for detection: the most specific signatures first. */
const tr_format *const tr_formats[] = {
    &tr_fmt_native, &tr_fmt_kineto, &tr_fmt_chakra_json, &tr_fmt_chakra_et, &tr_fmt_nccl, &tr_fmt_smpi,
    &tr_fmt_pytorch_et,
};
const int tr_nformats = sizeof tr_formats / sizeof tr_formats[0];

const tr_format *tr_find(const char *name)
{
    for (int i = 0; i < tr_nformats; i++)
        if (strcmp(tr_formats[i]->name, name) == 0) return tr_formats[i];
    return NULL;
}

const char *tr_format_names(void)
{
    static char buf[256];
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < tr_nformats; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", i ? ", " : "", tr_formats[i]->name);
    return buf;
}

int tr_detect(const char *path, const tr_format **f, char *err, size_t errlen)
{
    char head[4096];
    tr_in *in = tr_open(path, err, errlen);
    if (!in) return -1;
    tr_close(in);
    size_t n = tr_head(path, head, sizeof head - 1);
    head[n] = 0;
    for (int i = 0; i < tr_nformats; i++)
        if (tr_formats[i]->detect(path, head, n)) {
            *f = tr_formats[i];
            return 0;
        }
    return ts_err(err, errlen, "%s: unknown trace format (give --format; valid: %s)", path,
                  tr_format_names());
}

int tr_import(int nfiles, char *const *paths, const tr_opts *o, og_graph **out, char *err,
              size_t errlen)
{
    const tr_format *f = NULL;
    *out = NULL;
    if (nfiles < 1) return ts_err(err, errlen, "no trace file given");
    if (o && o->format) {
        if (!(f = tr_find(o->format)))
            return ts_err(err, errlen, "unknown trace format '%s' (valid: %s)", o->format, tr_format_names());
    } else if (tr_detect(paths[0], &f, err, errlen) < 0) {
        return -1;
    }
    tr_opts def = {0};
    og_graph *g = NULL;
    if (f->import(nfiles, paths, o ? o : &def, &g, err, errlen) < 0) return -1;
    if (og_check(g, paths[0], err, errlen) < 0) {
        og_free(g);
        return -1;
    }
    *out = g;
    return 0;
}
