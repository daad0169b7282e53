/* Engine results for people and tools: a readable summary, JSON, and a
 * Chrome-trace/Perfetto timeline. */
#ifndef TS_REPORT_H
#define TS_REPORT_H

#include <stdio.h>

#include "engine.h"
#include "opgraph.h"

void eng_report_summary(FILE *f, const og_graph *g, const eng_result *r);
/* The busiest-links table (r->nlinks rows: name, bytes, GB/s, busy %), and the
 * same rows as a JSON array [{"name", "bytes", "bandwidth", "busy"}, ...]
 * written at a top-level key's indentation (no newline after the closing ]). */
void eng_report_links(FILE *f, const eng_result *r);
void eng_report_links_json(FILE *f, const eng_result *r);
int eng_report_json(const char *path, const og_graph *g, const eng_result *r, char *err, size_t errlen);
int eng_report_timeline(const char *path, const og_graph *g, const eng_result *r, char *err, size_t errlen);

/* The algorithms the run's collectives used (r->algo): one entry per distinct
 * (collective, group size, bytes, algorithm, protocol), sorted, with the
 * number of ops (one per member and call). json = 0: one line each, "  all_reduce
 * on 8 ranks, 16777216 B: nvls:simple x 96 ops"; json = 1: a JSON array of
 * {"collective", "ranks", "bytes", "algorithm", "protocol", "ops"} objects
 * (algorithm "closed-form" where no schedule was costed). */
void eng_report_colls(FILE *f, const og_graph *g, const eng_result *r, int json);

#endif
