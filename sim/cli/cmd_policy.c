/* --coll SPEC and --tuning FILE, shared by the commands that select
 * collective algorithms (coll, sim, run, search): one parser for all. */
#include <stdio.h>

#include "cmds.h"
#include "coll.h"
#include "util.h"

int cmd_policy(const char *cmd, const char *coll_spec, const char *tuning, coll_policy **out)
{
    char err[TS_ERRLEN];
    *out = NULL;
    if (!coll_spec && !tuning) return 0;
    coll_policy *pol = coll_policy_new();
    if (tuning && coll_policy_load(pol, tuning, err, sizeof err) < 0) {
        coll_policy_free(pol);
        return cmd_usage_error(cmd, "--tuning: %s", err);
    }
    if (coll_spec && coll_policy_force(pol, coll_spec, err, sizeof err) < 0) {
        coll_policy_free(pol);
        return cmd_usage_error(cmd, "--coll: %s", err);
    }
    *out = pol;
    return 0;
}
