/* A max-min fluid network model over flow classes (sim/engine/fluid.c): the
 * sharing SimGrid's CM02 model computes (latency first, then the max-min fair
 * rate, re-solved at every start and end), for flows that stand for several
 * identical flows at once. */
#ifndef TS_FLUID_H
#define TS_FLUID_H

#include <stddef.h>

typedef struct fl_sys fl_sys;

fl_sys *fl_new(void);
void fl_free(fl_sys *s);

/* The resource of key (a link handle): created at its first use with
 * capacity cap (bytes/s); shared 0 for a link whose every flow gets the whole
 * capacity (SimGrid's FATPIPE). Returns its index. */
int fl_resource(fl_sys *s, const void *key, double cap, int shared);

/* A flow class: every one of its flows carries bytes, starts after lat
 * seconds, is capped at bound bytes/s (< 0: no cap) and shares with weight
 * 1 / penalty (SimGrid's sharing penalty; <= 0: 1). Returns its index. */
int fl_flow(fl_sys *s, double bytes, double lat, double bound, double penalty);
/* The class's flows put coef flows on each resource res stands for (a
 * class of k flows over one link: coef k). Call right after fl_flow. */
void fl_use(fl_sys *s, int res, double coef);

/* Run every flow from time 0 to its end. */
void fl_run(fl_sys *s);
/* When flow f ended (after fl_run). */
double fl_finish(const fl_sys *s, int f);
/* Rate solves done by fl_run (events). */
long fl_events(const fl_sys *s);

#endif
