/* The embedding API's shared part: SimGrid started and one platform loaded
 * per process, the collective selection policy, the configs folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "coll.h"
#include "util.h"

/* What this process loaded into SimGrid (it holds one platform). */
static struct {
    int loaded;
    char spec[1024], calib[1024];
    int nodes;
} eng_state;

int api_engine(const ts_common *c, int nodes, char *msg, size_t msglen)
{
    const char *calib = c->calibration ? c->calibration : "";
    if (eng_state.loaded) {
        if (strcmp(eng_state.spec, c->cluster) == 0 && strcmp(eng_state.calib, calib) == 0 && eng_state.nodes == nodes)
            return 0;
        return ts_err(msg, msglen, "%s: SimGrid holds one platform per process and this one has loaded '%s' "
                      "(simulate other clusters in other processes, or use the analytical fidelity)",
                      c->cluster, eng_state.spec);
    }
    int argc = 1;
    char *argv[64] = {"trainsim"};
    for (int i = 0; c->simgrid_args && c->simgrid_args[i] && argc < 63; i++) argv[argc++] = (char *)c->simgrid_args[i];
    eng_init(&argc, argv);
    if (eng_load(c->cluster, nodes, c->calibration, msg, msglen) < 0) return -1;
    eng_state.loaded = 1;
    api_copy(eng_state.spec, sizeof eng_state.spec, c->cluster);
    api_copy(eng_state.calib, sizeof eng_state.calib, calib);
    eng_state.nodes = nodes;
    return 0;
}

int api_policy(const ts_common *c, coll_policy **out, char *msg, size_t msglen)
{
    char err[TS_ERRLEN];
    *out = NULL;
    if (!c->coll && !c->tuning) return 0;
    coll_policy *pol = coll_policy_new();
    if (c->tuning && coll_policy_load(pol, c->tuning, err, sizeof err) < 0) {
        coll_policy_free(pol);
        return ts_err(msg, msglen, "--tuning: %s", err);
    }
    if (c->coll && coll_policy_force(pol, c->coll, err, sizeof err) < 0) {
        coll_policy_free(pol);
        return ts_err(msg, msglen, "--coll: %s", err);
    }
    *out = pol;
    return 0;
}

const char *api_or(const char *s, const char *def) { return s ? s : def; }

/* snprintf(dst, n, "%s", s) without the format's cost (every candidate of a
 * search copies its status). */
void api_copy(char *dst, size_t n, const char *s)
{
    if (n == 0) return;
    size_t len = s ? strlen(s) : 0;
    if (len > n - 1) len = n - 1;
    if (len) memmove(dst, s, len);
    dst[len] = 0;
}

const char *ts_configs_dir(void) { return ts_config_dir(); }
