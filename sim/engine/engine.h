/* The engine: runs an op graph on a SimGrid platform (flow-level, CM02 without
 * cross-traffic) and returns timings per op, per rank and per link. */
#ifndef TS_ENGINE_H
#define TS_ENGINE_H

#include <stdint.h>

#include "opgraph.h"

typedef enum { ENG_STEP, ENG_PIPELINED, ENG_NFIDELITY } eng_fidelity;

typedef struct eng_opts {
    eng_fidelity fidelity;
    int links;          /* > 0: record per-link load and keep the N busiest */
    int progress;       /* print progress lines on stderr */
    int window;         /* most transfers of one collective step an actor keeps in flight per
                         * direction: 0 the default (ENG_WINDOW), -1 all at once on a mailbox
                         * per rank pair, every all-to-all flow on its own (the posting before
                         * windows and rail merging; for equivalence tests) */
    int alone;          /* 1: the graph's collectives run alone on the network, their members
                         * starting together (one collective measured on its own, as
                         * val_sweep does): a merged all-to-all (rail-symmetric group) is then
                         * solved as flow classes by the fluid model of sim/engine/fluid.c
                         * instead of flow by flow on SimGrid (the same max-min sharing), and
                         * so is any other collective whose members post all their flows at
                         * once (one step: pipelined fidelity or a one-step schedule) */
} eng_opts;

/* A collective's transfers are posted in rounds (send to rank+1, +2, ...),
 * at most this many per direction in flight per actor, as NCCL's p2p channels
 * keep a bounded set of peers in flight: SimGrid's cost per completion grows
 * with an actor's pending comms and its memory with the flows in flight. */
#define ENG_WINDOW 64

typedef struct eng_rank_stats {
    double compute;     /* time covered by compute ops */
    double comm;        /* time covered by communication ops */
    double exposed;     /* communication time not overlapped by compute */
    double idle;        /* neither computing nor communicating, until the makespan */
    double finish;      /* end of the rank's last op */
} eng_rank_stats;

typedef struct eng_link {
    char *name;
    double bytes;       /* bytes carried */
    double bandwidth;   /* bytes/s */
    double busy;        /* bytes / (bandwidth x makespan) */
} eng_link;

typedef struct eng_result {
    int nranks;
    double makespan;    /* simulated seconds, first op start to last op end */
    double **start;     /* start[rank][op] */
    double **end;
    char **host;        /* host of each rank */
    eng_rank_stats *ranks;
    long ncomms;        /* point-to-point flows simulated */
    long nfluid;        /* collective calls (per member) solved by the fluid model (eng_opts.alone) */
    long nlone;         /* collective flows timed alone on their links, without a SimGrid comm
                         * (eng_set_lone; counted in ncomms too) */
    int nlinks;
    eng_link *links;    /* busiest first */
    double wall;        /* wall-clock seconds of the simulation */
    eng_fidelity fidelity;
    int **algo;         /* [rank][c]: the rank's c-th collective op (in op order): its algorithm
                         * row | protocol << 8, -1 where no schedule was costed; NULL when not
                         * recorded. Per collective, not per op: 4 bytes per op were 176 MB at
                         * 44 M ops */
    int copies;         /* eng_set_copies' copies, checked exact: every copy's flows ran on links of
                         * its own isomorphic to the graph's or on links all copies share, whose
                         * bandwidth the run divided among them (the per-link load counts every
                         * copy); 0 when the check failed (copies_why says why: the caller must run
                         * every rank); -1: exact once shared links are divided, which the next run
                         * with copies does (run it again); 1 without copies */
    char copies_why[200];
} eng_result;

/* Start SimGrid with trainsim's network configuration (CM02, no cross-traffic,
 * large TCP-gamma, no actor stack guards), before eng_load_platform; calls
 * after the first do nothing. argc/argv may carry SimGrid's own --cfg/--log options. */
void eng_init(int *argc, char **argv);

/* Load a SimGrid XML platform (once per process: a SimGrid limit). */
int eng_load_platform(const char *path, char *err, size_t errlen);
/* What eng_load_platform checks before SimGrid reads the file (well-formed
 * XML, a <platform> of version 4.0/4.1 with SimGrid's DOCTYPE): 0, or -1
 * with "FILE:LINE: what" (sim/engine/platform_check.c). */
int eng_platform_check(const char *path, char *err, size_t errlen);
/* Hosts of the loaded platform. */
int eng_host_count(void);
/* Hosts of the platform this process loaded (0: none loaded yet). */
size_t eng_loaded_hosts(void);
/* Past this many hosts a main that is done may skip SimGrid's teardown,
 * which frees a platform host by host, link by link and route by route at
 * exit (1.3 s for Frontier's 75,264 GCDs; 6% of a 4,096-GPU all-reduce's
 * instructions): fflush(NULL), then _exit. */
#define ENG_QUICK_EXIT_HOSTS 2048

/* Load what --platform/--cluster names: a SimGrid XML file, or a cluster
 * (shipped name, NAME:NODES or cluster JSON) built in-process; nodes > 0 and
 * calib (a calibration JSON, or NULL) apply to clusters only. */
int eng_load(const char *spec, int nodes, const char *calib, char *err, size_t errlen);

/* Run g on the loaded platform. Ranks map to g's host names, or else to the
 * platform's hosts in natural name order. A deadlock is an error naming every
 * blocked rank and what it waits for. */
int eng_run(const og_graph *g, const eng_opts *o, eng_result **out, char *err, size_t errlen);
void eng_result_free(eng_result *r);

/* Latency (s) and bandwidth (bytes/s) of the route between two hosts of the
 * loaded platform, without simulating (-1 when a host is unknown). */
int eng_route(const char *src, const char *dst, double *lat, double *bw);

/* The loaded platform's host names in natural order (gpu-2 before gpu-10),
 * NULL-terminated; the caller frees each name and the array. */
char **eng_host_names(int *n);

/* The topology of n hosts of the loaded platform for the collectives: host
 * property "node" (an integer; hosts without one are each their own node)
 * and "nvls" ("1" on every host: NVLS-capable); the hosts' NICs ("nic").
 * links: also the links of the routes inside each node, which only the
 * analytical cost (coll_cost) uses and which take a route lookup per pair of
 * a node's hosts. */
struct coll_topo *eng_topo(const char *const *hosts, int n, int links);

/* The selection policy (forced algorithms, tuning table) for the collectives
 * of later runs whose ops force none (NULL: automatic, the default). It
 * must outlive those runs. */
struct coll_policy;
void eng_set_policy(const struct coll_policy *pol);

/* Rail copies (wl_rail_copies) for later runs: copies > 1 says each rank of
 * the graph stands for `copies` ranks with the same ops whose peers and
 * groups are the copies' own, on hosts[rank * copies + k] (k = 0: the rank's
 * own host). After the run the engine checks that the copies' flows would
 * have run exactly as the graph's (eng_result.copies). 0 and NULL: none (the
 * default; also forgets the links a check found shared). hosts must outlive
 * those runs. */
void eng_set_copies(int copies, const char *const *hosts);

/* For equivalence tests: on (1), an op's end in later runs wakes every stream
 * of its rank that waits for dependencies, each checking its own and sleeping
 * again, as the engine did before targeted wake-ups; 0 (the default): only
 * the streams whose dependencies it completes, in the same order. */
void eng_set_wake_all(int on);

/* Lone flows (default on): a collective posted as one step (pipelined
 * fidelity or a one-step schedule) runs each flow as a SimGrid comm only
 * while another flow shares one of its links; a flow whose links carry
 * nothing else when it starts is timed in closed form (CM02: its route's
 * latency, then its smallest link bandwidth) and becomes a comm for what it
 * has left the moment another flow claims one of its links. 0: every flow a
 * comm on mailboxes, as before (the tests' reference). */
void eng_set_lone(int on);

/* For equivalence tests: off (0), every fixed-duration op (compute of a given
 * duration, a collective's latency tail) sleeps on its own, as the engine did
 * before; on (1, the default), a stream adds such seconds up and sleeps them
 * at once when it next meets SimGrid or ends an op another stream awaits:
 * the same instants up to the rounding of the sums (docs/performance.md). */
void eng_set_defer(int on);

const char *eng_fidelity_name(eng_fidelity f);
int eng_fidelity_from_name(const char *s);

#endif
