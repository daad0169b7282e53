/* The calibration JSON's shape, checked whole on load by every command that
 * takes --calibration (topo_calibrate): fields and ranges in docs/validation.md. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "cluster.h"
#include "coll.h"
#include "util.h"

#define BASE_MAX 1e-3 /* a base latency per collective above 1 ms is a unit error */

/* "algo.proto" naming a row of the algorithm table and a protocol. */
static int known_term(const char *key)
{
    const char *dot = strrchr(key, '.');
    if (!dot || coll_proto_from_name(dot + 1) < 0) return 0;
    for (int a = 0; a < coll_nalgos(); a++) {
        const char *n = coll_algo_get(a)->name;
        if (strlen(n) == (size_t)(dot - key) && strncmp(n, key, dot - key) == 0) return 1;
    }
    return 0;
}

int topo_calib_check(json_t *root, const char *path, char *err, size_t errlen)
{
    static const char *const keys[] = {"format", "version", "source", "cluster", "base_latency", "fit",
                                       "collectives", NULL};
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        int ok = 0;
        for (int i = 0; keys[i]; i++) ok |= strcmp(k, keys[i]) == 0;
        if (!ok)
            return ts_err(err, errlen, "%s: not a calibration: unknown field '%s' (a calibration has format, "
                          "version, source, cluster, base_latency, fit)", path, k);
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!fmt || strcmp(fmt, "trainsim-calibration"))
        return ts_err(err, errlen, "%s: not a calibration: 'format' must be \"trainsim-calibration\" (write one "
                      "with trainsim calibrate)", path);
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) < 1 || json_integer_value(ver) > 2)
        return ts_err(err, errlen, "%s: 'version' must be 1 or 2", path);
    json_t *cl = json_object_get(root, "cluster"), *bl = json_object_get(root, "base_latency");
    if (cl && (!json_is_object(cl) || json_object_size(cl) == 0))
        return ts_err(err, errlen, "%s: 'cluster' must be an object with at least one factor", path);
    if (bl && !json_is_object(bl)) return ts_err(err, errlen, "%s: 'base_latency' must be an object", path);
    if (json_object_size(cl) + json_object_size(bl) == 0)
        return ts_err(err, errlen, "%s: a calibration without 'cluster' factors or 'base_latency' terms changes "
                      "nothing", path);
    json_object_foreach(bl, k, v) {
        if (!known_term(k))
            return ts_err(err, errlen, "%s: base_latency: '%s' is not ALGORITHM.PROTOCOL (e.g. ring.simple, "
                          "tree.ll)", path, k);
        double d = json_number_value(v);
        if (!json_is_number(v) || !(d >= 0 && d <= BASE_MAX))
            return ts_err(err, errlen, "%s: base_latency: '%s' must be a number of seconds in [0, %g]", path, k,
                          BASE_MAX);
    }
    return 0;
}

int topo_calib_base(const char *path, double *base, int nalgos, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *v;
    if (!root) return ts_err(err, errlen, "%s:%d: %s", path, je.line, je.text);
    int rc = 0;
    const char *k;
    if (!json_is_object(root) || (rc = topo_calib_check(root, path, err, errlen)) < 0) {
        if (!json_is_object(root)) rc = ts_err(err, errlen, "%s: top level must be an object", path);
        json_decref(root);
        return rc;
    }
    json_object_foreach(json_object_get(root, "base_latency"), k, v) {
        const char *dot = strrchr(k, '.');
        for (int a = 0; a < coll_nalgos() && a < nalgos; a++) {
            const char *n = coll_algo_get(a)->name;
            if (strlen(n) == (size_t)(dot - k) && strncmp(n, k, dot - k) == 0)
                base[a * COLL_NPROTOS + coll_proto_from_name(dot + 1)] = json_number_value(v);
        }
    }
    json_decref(root);
    return 0;
}
