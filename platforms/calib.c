/* The calibration JSON's shape, checked whole on load by every command that
 * takes --calibration (topo_calibrate) before anything of it applies; the
 * "collectives" terms are then checked field by field by coll_params_overlay.
 * Fields and ranges: docs/validation.md. */
#include <jansson.h>
#include <string.h>

#include "cluster.h"
#include "util.h"

int topo_calib_check(json_t *root, const char *path, char *err, size_t errlen)
{
    static const char *const keys[] = {"format", "version", "source", "cluster", "collectives", "fit", NULL};
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        int ok = 0;
        for (int i = 0; keys[i]; i++) ok |= strcmp(k, keys[i]) == 0;
        if (!ok)
            return ts_err(err, errlen, "%s: not a calibration: unknown field '%s' (a calibration has format, "
                          "version, source, cluster, collectives, fit)", path, k);
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!fmt || strcmp(fmt, "trainsim-calibration"))
        return ts_err(err, errlen, "%s: not a calibration: 'format' must be \"trainsim-calibration\" (write one "
                      "with trainsim calibrate)", path);
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 2)
        return ts_err(err, errlen, "%s: 'version' must be 2 (version 1 held efficiency curves that no longer "
                      "apply: run trainsim calibrate again)", path);
    json_t *cl = json_object_get(root, "cluster"), *co = json_object_get(root, "collectives");
    if (cl && (!json_is_object(cl) || json_object_size(cl) == 0))
        return ts_err(err, errlen, "%s: 'cluster' must be an object with at least one factor", path);
    if (co && !json_is_object(co)) return ts_err(err, errlen, "%s: 'collectives' must be an object", path);
    if (json_object_size(cl) + json_object_size(co) == 0)
        return ts_err(err, errlen, "%s: a calibration without 'cluster' factors or 'collectives' terms changes "
                      "nothing", path);
    return 0;
}
