/* Internal: the functions behind the rows of the algorithm table (coll.c). */
#ifndef TS_COLL_ALGOS_H
#define TS_COLL_ALGOS_H

#include "coll.h"

/* Record one transfer in a step (internal helpers shared by algorithm files). */
void coll_add_send(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce);
void coll_add_recv(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce);

/* Chunks [chunk, chunk + nchunk) of the plan's nchunks, sent (send = 1) or
 * received; nothing when nchunk <= 0. coll_add_wrap splits a range that wraps
 * past the last chunk into two transfers. */
void coll_add_range(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce);
void coll_add_wrap(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce);

void coll_ring_setup(coll_plan *p);
void coll_ring_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_ring_merged(const coll_plan *p, int me, coll_step *out);
void coll_chain_setup(coll_plan *p);
void coll_chain_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_pairwise_setup(coll_plan *p);
void coll_pairwise_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_direct_setup(coll_plan *p);
void coll_direct_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_direct_merged(const coll_plan *p, int me, coll_step *out);
void coll_rhd_setup(coll_plan *p);
void coll_rhd_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_rab_setup(coll_plan *p);
void coll_rab_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_bruck_setup(coll_plan *p);
void coll_bruck_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_tree_setup(coll_plan *p);
void coll_tree_step(const coll_plan *p, int me, int s, coll_step *out);

#endif
