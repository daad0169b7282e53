/* Trace options shared by sim, convert and replay (--step, --host-gaps) and
 * the notes an import leaves for the user (recorded iteration, host gaps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "trace.h"

int cmd_trace_option(const char *cmd, int c, const char *arg, tr_opts *o, int *all_steps)
{
    if (c == CMD_TR_HOSTGAPS) {
        o->host_gaps = 1;
        return 0;
    }
    if (c != CMD_TR_STEP) return 1;
    if (!strcmp(arg, "all")) {
        if (!all_steps) return cmd_usage_error(cmd, "--step all is not available here: give one step number");
        *all_steps = 1;
        o->one_step = 0;
        return 0;
    }
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < 0)
        return cmd_usage_error(cmd, "--step wants a ProfilerStep number (the N of ProfilerStep#N) or 'all', not '%s'",
                               arg);
    o->one_step = 1, o->step = v;
    if (all_steps) *all_steps = 0;
    return 0;
}

void cmd_trace_notes(FILE *f, const tr_info *in)
{
    if (!(in->recorded > 0)) return;
    double frac = in->host_gap / in->recorded;
    if (in->gaps_replayed)
        fprintf(f, "host gaps replayed: %.3f ms without GPU activity within the recorded %.3f ms run as delays on a "
                   "CPU stream\n", in->host_gap * 1e3, in->recorded * 1e3);
    else if (frac > 0.01)
        fprintf(f, "note: host gaps dropped: the recorded span is %.3f ms, of which %.3f ms (%.0f%%) has no GPU "
                   "activity on some rank; the simulation leaves that host time out (--host-gaps replays it)\n",
                in->recorded * 1e3, in->host_gap * 1e3, 100 * frac);
}
