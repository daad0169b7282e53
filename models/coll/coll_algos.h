/* Internal: the functions behind the rows of the algorithm table (coll.c). */
#ifndef TS_COLL_ALGOS_H
#define TS_COLL_ALGOS_H

#include "coll.h"
#include "coll_params.h"

/* a mod n in 0..n-1 for any a (n > 0: one division, not two); smallest k
 * with 2^k >= n. */
static inline int coll_mod(int a, int n)
{
    int m = a % n;
    return m < 0 ? m + n : m;
}
static inline int coll_log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n) k++;
    return k;
}

/* Record one transfer in a step (internal helpers shared by algorithm files). */
void coll_add_send(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce);
void coll_add_recv(coll_step *st, int peer, int64_t bytes, int chunk, int nchunk, int reduce);

/* Chunks [chunk, chunk + nchunk) of the plan's nchunks, sent (send = 1) or
 * received; nothing when nchunk <= 0. coll_add_wrap splits a range that wraps
 * past the last chunk into two transfers. */
void coll_add_range(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce);
void coll_add_wrap(const coll_plan *p, coll_step *st, int send, int peer, int chunk, int nchunk, int reduce);

/* Add x to st's sends (send = 1) or receives, one entry per peer: bytes of a
 * peer already there are summed (chunk fields become meaningless): how the
 * merged (pipelined) views are built. */
void coll_step_add_merged(coll_step *st, int send, const coll_xfer *x);

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
void coll_tree_merged(const coll_plan *p, int me, coll_step *out);
int coll_bt_parent(int pos, int n);
int coll_bt_children(int pos, int n, int ch[2]);
int coll_bt_height(int pos, int n);
int coll_bt_depth(int pos, int n);
const char *coll_hier_unfit(const coll_plan *p);
void coll_hier_setup(coll_plan *p);
void coll_hier_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_hierag_setup(coll_plan *p);
void coll_hierag_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_hierag_merged(const coll_plan *p, int me, coll_step *out);
void coll_hierrd_setup(coll_plan *p);
void coll_hierrd_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_hierrd_merged(const coll_plan *p, int me, coll_step *out);
const char *coll_nvls_unfit(const coll_plan *p);
const char *coll_nvlstree_unfit(const coll_plan *p);
void coll_nvls_setup(coll_plan *p);
void coll_nvls_step(const coll_plan *p, int me, int s, coll_step *out);
/* NCCL's single-node NVLS all-reduce pipeline (nvls.c): the chunk one head of
 * one channel moves per loop (bytes), the loops each channel runs (fractional
 * below one full loop), and the bytes of one loop per rank; 0 for any other
 * plan (another collective or family, across nodes). */
int64_t coll_nvls_chunk(const coll_plan *p);
double coll_nvls_loops(const coll_plan *p);
int64_t coll_nvls_loop_bytes(const coll_plan *p);
/* Seconds the loops' per-step handshakes add (at least one step), 0 where
 * coll_nvls_chunk is 0. */
double coll_nvls_steps_lat(const coll_plan *p, const coll_params *q);
void coll_nvlstree_setup(coll_plan *p);
void coll_nvlstree_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_nvlstree_merged(const coll_plan *p, int me, coll_step *out);
const char *coll_collnet_unfit(const coll_plan *p);
void coll_collnet_setup(coll_plan *p);
void coll_collnet_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_pat_setup(coll_plan *p);
void coll_pat_step(const coll_plan *p, int me, int s, coll_step *out);
void coll_pat_merged(const coll_plan *p, int me, coll_step *out);

#endif
