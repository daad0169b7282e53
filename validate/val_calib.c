/* Reading the collective section of a calibration JSON (the "cluster" factors
 * are read by platforms/ through topo_calibrate). */
#include <jansson.h>
#include <string.h>

#include "util.h"
#include "val.h"

const char *val_scope_name(int scope) { return scope == VAL_INTER ? "inter" : "intra"; }

int val_calib_curve(const char *path, int coll, int scope, val_curve *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return ts_err(err, errlen, "%s:%d: %s", path, je.line, je.text);
    int rc = 0;
    json_t *cs = json_object_get(root, "collectives"), *e;
    size_t i;
    if (cs && !json_is_array(cs)) {
        rc = ts_err(err, errlen, "%s: 'collectives' must be an array", path);
        goto out;
    }
    json_array_foreach(cs, i, e) {
        const char *c = json_string_value(json_object_get(e, "collective"));
        const char *s = json_string_value(json_object_get(e, "scope"));
        if (!c || !s) {
            rc = ts_err(err, errlen, "%s: collectives[%zu] lacks 'collective' or 'scope'", path, i);
            goto out;
        }
        if (val_coll_from_name(c) != coll || strcmp(s, val_scope_name(scope))) continue;
        json_t *eff = json_object_get(e, "efficiency"), *pt;
        size_t k;
        if (!json_is_array(eff)) {
            rc = ts_err(err, errlen, "%s: collectives[%zu].efficiency must be an array", path, i);
            goto out;
        }
        out->size = ts_malloc((json_array_size(eff) + 1) * sizeof *out->size);
        out->eff = ts_malloc((json_array_size(eff) + 1) * sizeof *out->eff);
        json_array_foreach(eff, k, pt) {
            double sz = json_number_value(json_array_get(pt, 0)), ef = json_number_value(json_array_get(pt, 1));
            if (json_array_size(pt) != 2 || !(sz > 0) || !(ef > 0) ||
                (out->n && !(sz > out->size[out->n - 1]))) {
                val_curve_free(out);
                rc = ts_err(err, errlen,
                            "%s: collectives[%zu].efficiency[%zu] must be [size, eff] with sizes increasing and "
                            "both positive", path, i, k);
                goto out;
            }
            out->size[out->n] = sz;
            out->eff[out->n++] = ef;
        }
        rc = 1;
        break;
    }
out:
    json_decref(root);
    return rc;
}
