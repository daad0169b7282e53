/* Whether an all-to-all's inter-node flows may be merged per (source GPU,
 * destination node): the rail-symmetry check of sim/engine/rails.c. */
#ifndef TS_RAILS_H
#define TS_RAILS_H

#include <simgrid/host.h>

#include "coll.h"

/* 1 when every route between members of different nodes of the group is
 * P(source member) + M(source node, destination node) + Q(destination member),
 * with a node's P links distinct, of equal bandwidth and latency (likewise its
 * Q links), P, Q, M and the intra-node routes sharing no link; 2 when the
 * same holds but members share P (and Q) links, as many members on each and
 * the same members together on every node (two GPUs per NIC): a merged
 * all-to-all is exact there too (its flows a_i -> b_i cross each link ppn
 * times fewer, at ppn times the rate), rotations of the local indices are not
 * symmetries (eng_flows_fluid's orbits need 1); 0 otherwise. hosts[i] is
 * member i's host. Checked on a sample of node pairs. */
int eng_rails_symmetric(const sg_host_t *hosts, const coll_topo *t);
/* on = 1: remember the last group's answer and give it again for the same
 * hosts and node layout (a sweep asks for one group thousands of times;
 * 84% of a calibration fit's CPU on a 32-GPU InfiniBand sweep). Only where
 * the platform and its links' bandwidths and latencies stay as they are
 * (one loaded platform, no rail copies): the answer is a function of them.
 * on = 0: off, forgotten. */
void eng_rails_memo(int on);

/* A merged direct all-to-all of chunk (wire) bytes per member pair on a
 * rail-symmetric group, every member starting at once and nothing else on
 * the network: each member's end (s after the start) and largest latency to
 * or from its merged peers, from the max-min fluid model of the flow classes
 * (sim/engine/fluid.c): one class per ordered node pair (its ppn flows have
 * one rate at all times, the argument above) and every intra-node flow on its
 * own. events: the model's rate solves (may be NULL). */
int eng_rails_fluid(const sg_host_t *hosts, const coll_topo *t, double chunk, double *end, double *alpha,
                    long *events);

/* The nf flows src[f] -> dst[f] (members) of bytes[f] (wire bytes) of a
 * collective whose members post them all at once, every member starting
 * together and nothing else on the network: each member's end (s after the
 * start: its last flow, sent or received), largest and least route latency
 * over its flows, from the fluid model of sim/engine/fluid.c. With symmetric
 * (eng_rails_symmetric holds for the group) and every inter-node flow in a
 * complete rotation orbit (flows (A, i + r) -> (B, j + r) over every local
 * offset r, of one size), an orbit is one class: its flows have one rate at
 * all times, by the argument above; intra-node flows are classes of one.
 * Returns 1 when orbits were merged, 0 when every flow was its own class, -1
 * (nothing computed) where a route is empty or has no latency. */
int eng_flows_fluid(const sg_host_t *hosts, const coll_topo *t, int symmetric, int nf, const int *src, const int *dst,
                    const double *bytes, double *end, double *alpha, double *alpha_in, long *events);

#endif
