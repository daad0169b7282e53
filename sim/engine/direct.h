/* Host-to-host SimGrid comms without mailboxes, for the engine's lone flows
 * (sim/engine/engine.c): one started by any actor and waited on by another,
 * with a share of its route's latency (a flow resumed part-way). */
#ifndef TS_DIRECT_H
#define TS_DIRECT_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the network model takes latency factors from eng_direct_start
 * (installs SimGrid's latency-factor callback once; 0 where the user set
 * network/latency-factor or the model refuses a callback). */
int eng_direct_ready(void);

/* Start a comm of bytes (rounded to whole bytes) from src to dst now, its
 * route's latency times lat_factor (1: the plain comm). */
void *eng_direct_start(sg_host_t src, sg_host_t dst, double bytes, double lat_factor);

/* A second handle on the comm (each actor that waits for it holds its own). */
void *eng_direct_dup(void *comm);

/* Wait for the comm to end and release this handle. */
void eng_direct_wait(void *comm);

/* Release a handle without waiting. */
void eng_direct_free(void *comm);

#ifdef __cplusplus
}
#endif

#endif
