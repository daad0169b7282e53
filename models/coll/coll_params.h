/* The parameters of the collective cost model, shaped like NCCL's and RCCL's
 * tuning model (src/graph/tuning.cc): per algorithm family and protocol base
 * latency, per link tier per-step latency, achievable bandwidth per link tier,
 * per family and protocol bandwidth fractions, channel rules. */
#ifndef TS_COLL_PARAMS_H
#define TS_COLL_PARAMS_H

#include <stdio.h>

#include "coll.h"

/* Which library's tuning model the defaults come from. */
typedef enum { COLL_LIB_NCCL, COLL_LIB_RCCL, COLL_NLIBS } coll_lib;

/* Link tiers. A collective step's tier is the slowest kind of link it
 * crosses: NIC when it leaves the node, else the node's fabric. SWITCH is one
 * network switch hop (its latency is the cluster's wire latency; here only its
 * achievable bandwidth fraction). */
typedef enum {
    COLL_TIER_NVLINK,   /* NVLink, direct or through NVSwitch (NCCL_HW_NVLINK) */
    COLL_TIER_PCIE,     /* PCIe through the host (NCCL_HW_PCI) */
    COLL_TIER_XGMI,     /* AMD Infinity Fabric between GCDs (RCCL's "NVLINK" row) */
    COLL_TIER_NIC,      /* GPU -> NIC -> wire: any inter-node step (NCCL_HW_NET) */
    COLL_TIER_SWITCH,   /* a network switch port / link */
    COLL_NTIERS
} coll_tier;

/* GPU architecture generations, the rows of NCCL's per-architecture
 * bandwidth tables (src/graph/tuning.cc: compCapIndex from the lowest
 * compute capability, 7.x Volta, 8.x Ampere, 9.x Hopper). NONE: no table
 * (RCCL, or a GPU NCCL's tables do not cover). */
typedef enum { COLL_ARCH_NONE, COLL_ARCH_VOLTA, COLL_ARCH_AMPERE, COLL_ARCH_HOPPER, COLL_NARCHS } coll_arch;

/* Algorithm families: the rows of NCCL's tables. Every algorithm of the
 * table (coll.c) belongs to one (coll_family_of). */
typedef enum {
    COLL_FAM_RING,      /* ring, chain (NCCL Ring) */
    COLL_FAM_TREE,      /* double binary tree (NCCL Tree) */
    COLL_FAM_NVLS,      /* NVSwitch in-switch reduction, one node */
    COLL_FAM_NVLSTREE,  /* NVLS in the node + tree across nodes */
    COLL_FAM_COLLNET,   /* CollNet / SHARP in-network reduction */
    COLL_FAM_PAT,       /* parallel aggregated trees */
    COLL_FAM_P2P,       /* all-to-all as grouped send/recv */
    COLL_FAM_MPI,       /* MPI-style schedules the libraries do not run (rhd, bruck, hierarchical, ...) */
    COLL_NFAMS
} coll_family;

typedef struct coll_params {
    coll_lib lib;
    /* s: the host's launch interval per collective call (per cluster and
     * software stack). A call takes at least this long: back-to-back calls
     * (nccl-tests, a training step's buckets) overlap the host's launch of
     * the next with the GPU's work on this one, so time = max(launch, the
     * GPU's time); the small-message floor. Measured with one process per
     * GPU (as training frameworks and MPI-launched nccl-tests run). */
    double launch;
    /* s per extra GPU one host thread drives (nccl-tests -g G): NCCL's group
     * launch (group.cc doLaunches) prepares and launches each communicator's
     * kernel one after another on that thread, so the floor is
     * launch + launch_per_gpu x (G - 1) (coll_launch_floor). */
    double launch_per_gpu;
    /* s per collective call per family and protocol (NCCL baseLat). */
    double base_lat[COLL_NFAMS][COLL_NPROTOS];
    /* s per schedule step whose slowest link is of this tier, per family and
     * protocol (NCCL hwLat: the protocol's per-step synchronisation); added to
     * the route's own wire latency. */
    double hop_lat[COLL_NTIERS][COLL_NFAMS][COLL_NPROTOS];
    /* achievable / nominal bandwidth of each link tier (0 < f <= 1.5): the
     * platform's links carry nominal x fraction. */
    double bw_frac[COLL_NTIERS];
    /* useful bytes per wire byte per family and protocol (LL's flags, LL128's
     * 120 of 128, NVLS's switch throughput): wire bytes = bytes / fraction. */
    double proto_bw[COLL_NFAMS][COLL_NPROTOS];
    /* Channels: NCCL splits a call over up to max_channels channels, each
     * carrying at least chan_bytes[protocol] bytes (the ring's LL: that x
     * the rank count, as NCCL scales its thread threshold); fewer channels
     * than the maximum move proportionally less bandwidth (0: no rule). */
    int max_channels;
    double chan_bytes[COLL_NPROTOS];
    /* 1: every step of a ring that spans nodes costs the NIC tier's hop
     * latency. A ring moves in lock-step (a rank's step s forwards what its
     * predecessor sent at step s - 1, NCCL_STEPS slots deep), so where the
     * network step is the slow one every step waits for it; NCCL's tuner
     * counts only 2(M-1) network steps (0, the preset). */
    int ring_lockstep;
    /* Share (0..1) of a lock-step ring's network waits that its transfers
     * hide (pipelined fidelity), and of a step's second Simple slice's wait
     * (a step pays 1 + (messages - 1) x ring_overlap messages): 1 (the
     * preset; Polaris) shows the larger of the waits and the transfers; 0
     * adds them, one wait per step, the form t = a (n - 1) + (n - 1)/n S/B
     * that Singh et al. (SC'25, PCCL reproducer data/comm_model.py) fitted
     * on Perlmutter and Frontier; Perlmutter and Frontier ship 0.5
     * (docs/collectives.md). JSON "ring_overlap". */
    double ring_overlap;
    /* 1 (the preset): a lock-step Simple ring step waits once per slice
     * that carries data, twice where a channel's chunk passes 32 KiB (the
     * Polaris sweeps' doubling); 0: once per chunk at every size (RCCL on
     * Frontier, whose sweeps launched next to their GCDs show no such
     * step). JSON "ring_slice_waits" (docs/collectives.md, "Slices"). */
    int ring_slice_waits;
    /* s per lock-step network wait per channel the call runs on, per
     * protocol: a ring step across nodes waits hop_lat + chan_lat x
     * channels (the proxy thread of each network rank serves its channels'
     * sends and receives one after another). 0: none (the presets). JSON
     * "chan_lat": {"ll": 2e-6}. */
    double chan_lat[COLL_NPROTOS];
    /* The lock-step waits of a launch that binds each rank's host threads
     * next to its GPU (Slurm --gpu-bind=closest): has_bound 1 when the
     * cluster gives them (JSON "bound": {"ring_slice_waits", "chan_lat"}),
     * used instead of ring_slice_waits and chan_lat for a run whose launch
     * is bound (coll_set_proxy_bound). The figures above are then those of
     * the unbound launch, whose network ranks' proxy threads may run on
     * another NUMA domain than their GPU and NIC (docs/collectives.md,
     * "Launches"). */
    int has_bound, bound_slice_waits;
    double bound_chan_lat[COLL_NPROTOS];
    /* s per step of a ring all of whose steps stay inside one node, per
     * protocol (0: hop_lat's figure of the node's tier, the presets): the
     * time's figure where a GPU generation's one-node ring steps are
     * measured slower than the library's tuner table. On one DGX/HGX A100
     * node NCCL's ring LL128 and Simple steps take about 5 and 8 us, where
     * tuning.cc prices 1.9 and 3.4 (docs/collectives.md, "One-node ring
     * steps"). Only the time reads it; the tuner keeps NCCL's. JSON
     * "node_ring_hop": {"ll128": 5e-6, "simple": 8e-6}. */
    double node_ring_hop[COLL_NPROTOS];
    /* Channels NCCL runs on one node (0: max_channels): its intra-node
     * search's rings, doubled (ncclTopoPostset), where max_channels is the
     * NICs' rule: 24 on an 8 x A100 NVSwitch node (the HGX A100 log of
     * NVIDIA/nccl-tests#100 prints 24 channels). JSON "node_channels". */
    int node_channels;
    /* Wire bytes per second one channel's thread block moves, per protocol
     * (0: off, the presets), on a ring whose steps all stay in one node. A
     * small LL call gives each thread one line per step, so a step is one
     * wave of lines that the next GPU waits for whole: each step costs the
     * channel's share of it / chan_bw on top of the GPU's aggregate rate
     * (the link x proto_bw, at every channel count). With it the channel
     * cut no longer divides the bandwidth (docs/collectives.md, "Channel
     * rate"). JSON "chan_bw": {"ll": 5e9}. */
    double chan_bw[COLL_NPROTOS];
    /* A ring channel's share of a NIC's rate across nodes (0: off, the
     * presets; JSON "net_chan_share"), as a fraction of the NIC's bw_frac
     * rate, and the most the ring's channels can drive (JSON
     * "net_chan_peak", the same unit; 0: 1). NCCL's bandwidth is per channel
     * (tuning.cc: busBw = nChannels x the graph's per-channel bw): a channel
     * is one thread block and one network connection whose steps move one
     * after another, so a NIC reaches its rate only with enough channels on
     * it. A ring across nodes spreads its channels over the node's NICs;
     * with c channels a NIC it runs at min(net_chan_peak, c x
     * net_chan_share) of the NIC's bw_frac rate. Channels that NCCL_MIN_CTAS
     * adds count (across nodes they are more connections). Not on a
     * lock-step ring (Slingshot: its own figures). docs/collectives.md,
     * "Channels per NIC". */
    double net_chan_share, net_chan_peak;
    /* s of proxy work per channel on each ring step across nodes (0: off,
     * the presets; JSON "proxy_chan_step"). One proxy thread per GPU posts
     * and polls every network send and receive of every channel it serves
     * (src/proxy.cc, transport/net.cc): a GPU that is the exit of c channels
     * and the entry of c more does 2c posts a step, each NCCL's network
     * post overhead (tuning.cc getNetOverhead, 1 us on an Intel host), so its
     * steps come no faster than c x proxy_chan_step, and a pipelined ring
     * runs every step at the pace of that slowest stage. The transfers hide
     * it (coll_ring_node_excess). docs/collectives.md, "Channels per NIC". */
    double proxy_chan_step;
    /* RCCL's per-topology tuning model (ROCm/rccl src/graph/tuning.cc
     * rcclTuningModel[], chosen by the rome model that matches the node): 0
     * the preset's generic tables, 3 tuning_model_3 (Frontier's node,
     * rome_model_63). Only the tuner reads it (coll_params_tuner): its ring
     * hwLat, the network post overhead and ringCorrectionFactor. JSON
     * "rccl_tuning": 3. */
    int rccl_tuning;
    /* s: the least a non-network ring step across nodes costs, per protocol
     * (NCCL / RCCL getNetOverhead: 2 us on an AMD host, x3 for Simple); set
     * in the tuner by rccl_tuning, 0 otherwise. */
    double net_overhead[COLL_NPROTOS];
    /* Seconds per loop of a one-node NVLS all-reduce, on top of its bytes:
     * the warp groups hand every chunk on through the channel's step flags.
     * 4.9 us, fitted on the NCCL 2.26 sweep of 8 H100 (docs/collectives.md,
     * "NVLS"). JSON "nvls_step_lat". */
    double nvls_step_lat;
    /* Bytes per second one GPU reduces: RCCL's (and NCCL's) ring kernel
     * reduces with the same threads that move the data (recvReduceSend:
     * load the received slice and the rank's own, add, store to the next
     * rank), a reducing ring's rank spends its reduced bytes (a ring
     * reduce-scatter's (n - 1)/n of the buffer) / reduce_bw on it. On one
     * node the kernel's stores are the transfers (peer memory over the
     * node's links): the time adds to them. Across nodes the NIC moves the
     * data beside the kernel: it is a floor the transfers hide. 0: none
     * (the presets). Frontier: its one-node RCCL all_gather / reduce_scatter
     * plateaus (docs/clusters.md). JSON "reduce_bw". */
    double reduce_bw;
    /* Network rendezvous: a network message (a channel's share of one step,
     * in wire bytes) larger than rdzv_bytes costs rdzv_lat more per network
     * step (libfabric CXI: messages above FI_CXI_RDZV_THRESHOLD go by
     * rendezvous, a read from the receiver). 0: none. Below it, an eager
     * message costs msg / eager_bw more (copied out of the receiver's
     * overflow buffers; 0: free). */
    double rdzv_bytes, rdzv_lat, eager_bw;
    /* The proxy's work per network message of a grouped send/recv (the
     * all-to-all across nodes), beyond NCCL's post overhead, serial on each
     * GPU's one proxy thread. flush: s per received message where NCCL
     * flushes a GPUDirect receive (GPUs before Hopper: graph/paths.cc
     * ncclTopoNeedFlush; transport/net.cc recvProxyProgress flushes every
     * Simple receive of data). inject_bytes, inject_copy: a message of at
     * most inject_bytes goes as the provider's inline send, its payload
     * first copied out of GPU memory into a host bounce buffer, inject_copy
     * s more per message (libfabric CXI: 192 B, C_MAX_IDC_PAYLOAD_UNR). 0:
     * none (the presets). max_recvs: the receives the network plugin
     * takes in one grouped irecv (ncclNetProperties maxRecvs: 8 in NCCL's
     * own IB plugin, NCCL_NET_IB_MAX_RECVS; 1 in aws-ofi-nccl,
     * NCCL_OFI_MAX_RECVS); 0 or 1: none grouped (p2p_recv_posts). JSON
     * "net_msg": {"flush", "inject_bytes", "inject_copy", "max_recvs"}. */
    double msg_flush, inject_bytes, inject_copy, msg_max_recvs;
    /* The library's version, as major * 10000 + minor * 100 + patch (NCCL
     * 2.21.5: 22105; 0: unknown, the preset's figures). Only the tuner reads
     * it: NCCL 2.20-2.21 tuning.cc had tree Simple at baseLat 0 and hwLat
     * 28 us on every tier (8.4 and 4 / 5.7 / 14 before and after), which
     * moves its tree LL / Simple choice. JSON "version": "2.21.5". */
    int version;
    /* GPUs that share one NIC on the cluster's nodes (0 or 1: a NIC per GPU;
     * 2 on Polaris: 4 A100, 2 NICs), from the cluster. The selection spreads
     * a node's traffic across nodes over its NICs on more than 2 nodes,
     * where NCCL's tuner takes the inter-node graph bandwidth, found with
     * the NICs shared (tuning.cc: bw = nNodes <= 2 ? bwIntra : bwInter).
     * Host property: the tuner keeps the active set's. */
    int nic_gpus;
    /* The GPU generation (from the cluster's GPU; JSON "arch": "volta",
     * "ampere", "hopper") and whether the host CPUs are AMD's (JSON "cpu":
     * "amd" or "intel"): NCCL's tuner caps its bandwidths per channel by
     * them (coll_nccl_bw_cap). */
    coll_arch arch;
    int cpu_amd;
    /* The fabric between nodes reduces in-network (SHARP): CollNet is
     * available to the selection. */
    int collnet;
    /* The node's intra tier (NVLINK, PCIE or XGMI): which hop_lat row an
     * intra-node step uses. */
    coll_tier intra_tier;
    /* 1: the selection decides with these parameters themselves instead of
     * the library's preset (coll_params_tuner); for studies of another
     * tuner and for test fixtures (JSON "tuner_own": true). */
    int tuner_own;
    /* The run's NCCL channel settings (coll_nccl_env_apply; 0: not set),
     * which the library applies after its topology search and its tuner
     * never sees: env_min_ch = max(NCCL_MIN_NCHANNELS, NCCL_MIN_CTAS),
     * env_max_ch = min(NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS) bound the channels
     * the ring and tree run on (coll_run_channels); env_min_ctas,
     * env_max_ctas alone bound NVLS's, env_nvls_ch (NCCL_NVLS_NCHANNELS)
     * replaces its 16 (coll_nvls_channels). Not in a cluster's or a
     * calibration's JSON: a setting of the measurement. */
    int env_min_ch, env_max_ch, env_min_ctas, env_max_ctas, env_nvls_ch;
} coll_params;

const char *coll_lib_name(coll_lib l);
int coll_lib_from_name(const char *s);          /* -1: unknown */
const char *coll_tier_name(coll_tier t);
int coll_tier_from_name(const char *s);         /* -1: unknown */
const char *coll_family_name(coll_family f);
int coll_family_from_name(const char *s);       /* -1: unknown */
/* The family of a row of the algorithm table. */
coll_family coll_family_of(int algo);

/* The library preset (every field; collnet 0, intra_tier NVLINK). */
void coll_params_preset(coll_params *p, coll_lib lib);

/* Overlay a JSON object (a jansson json_t *, passed as void * so that callers
 * need not include jansson) onto p: the "collectives" object of a cluster
 * JSON or of a calibration JSON. Only the fields present change. Unknown keys
 * and out-of-range values fail with "WHERE: field: what: value" in err.
 * Keys: library, launch, base_lat{fam{proto}}, hop_lat{tier{fam{proto}}},
 * bw_frac{tier}, proto_bw{fam{proto}}, max_channels, chan_bytes{proto},
 * node_channels, chan_bw{proto} (and the fields documented above),
 * collnet, tuner_own. A family "*" or tier "*" applies to every one. */
int coll_params_overlay(coll_params *p, const void *json_obj, const char *where, char *err, size_t errlen);

/* Write p as a "collectives" JSON object (every field), indented by indent
 * spaces: what a calibration writes back. */
void coll_params_write_json(FILE *f, const coll_params *p, int indent);

/* The parameters the model uses in this process (one platform per process):
 * set by eng_load / the commands from the cluster (and calibration); the NCCL
 * preset until then. */
void coll_params_set(const coll_params *p);
/* Changes with every coll_params_set: a memo of collective times keys on it,
 * or it serves times of another cluster's (or a calibration's) figures. */
unsigned coll_params_generation(void);
const coll_params *coll_params_get(void);
/* What the library's own tuner believes: the active library's preset, with
 * the active set's collnet, intra tier, channel rule and protocol
 * availability (a protocol with proto_bw 0 is off). The selection decides
 * with these, as NCCL does from its static model; times are costed with the
 * active set, so a fitted or calibrated figure changes the time of the
 * library's choice, never the choice. */
const coll_params *coll_params_tuner(void);
/* Channels a large collective call of `bytes` bytes runs on with the active
 * set (Simple protocol: max_channels, fewer while a channel would carry less
 * than chan_bytes); NCCL launches one thread block per channel (src/enqueue.cc,
 * ncclLaunchKernel: grid = nChannels), each resident on an SM for the whole
 * kernel. 0 when the set has no channel rule. */
int coll_params_channels(double bytes);

/* ---- A run's NCCL settings (nccl_env.c): the NCCL_* environment
 * variables a measurement ran with, from its log or the user
 * (docs/collectives.md, "NCCL settings of a run"). ---- */

/* NCCL's MAXCHANNELS (src/include/device.h, 2.22-2.26: 64) and its NVLS
 * channels on Hopper (NVLS_NCHANNELS_SM90 16, transport/nvls.cc). */
#define COLL_MAXCHANNELS 64
#define COLL_NVLS_NCHANNELS 16
#define COLL_ENV_IGNORED 512

typedef struct coll_nccl_env {
    int set;                    /* a modelled setting was given */
    unsigned fam_on;            /* NCCL_ALGO: bit (1 << coll_family) per family it allows (0: not set) */
    unsigned proto_on;          /* NCCL_PROTO: bit (1 << coll_proto) per protocol it allows (0: not set) */
    int min_ctas, max_ctas;     /* NCCL_MIN_CTAS, NCCL_MAX_CTAS (-1: not set) */
    int min_nch, max_nch;       /* NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS (or _NRINGS) (-1) */
    int nch_named[2];           /* [0] max, [1] min: set by the NCHANNELS spelling (wins over NRINGS) */
    int nvls_nch;               /* NCCL_NVLS_NCHANNELS (-1) */
    int nvls_enable;            /* NCCL_NVLS_ENABLE 0, 1, 2 (-1) */
    int collnet_enable;         /* NCCL_COLLNET_ENABLE 0, 1 (-1) */
    int ib_qps;                 /* NCCL_IB_QPS_PER_CONNECTION (-1): read, no place in the model */
    char ignored[COLL_ENV_IGNORED]; /* "NCCL_X, NCCL_Y": NCCL_ variables read and not modelled */
} coll_nccl_env;

void coll_nccl_env_init(coll_nccl_env *e);
/* One variable: 0 (a modelled one is recorded, any other NCCL_ name is
 * listed in e->ignored), or -1 with "WHERE: NAME=VALUE: what is wrong" in
 * err (a bad value, or a name that is not NCCL_...). */
int coll_nccl_env_set(coll_nccl_env *e, const char *name, const char *value, const char *where, char *err,
                      size_t errlen);
/* "NCCL_A=1,NCCL_B=x,...": a comma-separated list (an item without '='
 * continues the previous value: NCCL_ALGO=Tree,Ring,NCCL_MIN_CTAS=24). */
int coll_nccl_env_parse(coll_nccl_env *e, const char *spec, const char *where, char *err, size_t errlen);
/* src's settings over dst's (the ignored names added). */
void coll_nccl_env_merge(coll_nccl_env *dst, const coll_nccl_env *src);
/* The modelled settings are equal. */
int coll_nccl_env_same(const coll_nccl_env *a, const coll_nccl_env *b);
/* Where NCCL_ALGO names one algorithm: the forced "algo[:proto]" spec of
 * the table's algorithm of that family for coll (as --algo gives it; the
 * protocol where NCCL_PROTO names one): 1, else 0. */
int coll_nccl_env_forced(const coll_nccl_env *e, og_coll coll, char *spec, size_t n);
/* What the settings change in q: the families NCCL_ALGO leaves out, the
 * protocols NCCL_PROTO leaves out, NVLS and NVLS-tree with NCCL_NVLS_ENABLE=0
 * get proto_bw 0 (off for the selection, as coll_params_tuner says);
 * NCCL_COLLNET_ENABLE=0 clears collnet; the channel bounds go to env_*. */
void coll_nccl_env_apply(const coll_nccl_env *e, coll_params *q);
/* "NCCL_ALGO=ring NCCL_MIN_CTAS=24 ...": the modelled settings. */
void coll_nccl_env_describe(const coll_nccl_env *e, char *buf, size_t n);
/* "WHO: WHAT: NCCL_X, NCCL_Y: not modelled, ignored" on stderr for the
 * ignored names not said before in this process (nothing when none). */
void coll_nccl_env_warn(const coll_nccl_env *e, const char *who, const char *what);

/* The settings every coll_params_set applies from now on in this process
 * (NULL: none), applied at once to the active set: process-wide like the
 * launch's GPUs per thread (a forked sweep inherits them). */
void coll_set_nccl_env(const coll_nccl_env *e);
const coll_nccl_env *coll_get_nccl_env(void);

/* The channels a ring or tree call may use where the topology gives base
 * (NCCL's comm->nChannels after ncclTopoPostset): base bounded by
 * env_max_ch, then raised to env_min_ch, at most COLL_MAXCHANNELS
 * (src/graph/connect.cc); base <= 0 (no channel rule) as it is. */
int coll_run_channels(const coll_params *q, int base);
/* NVLS's (and NVLS-tree's) channels: max(min CTAs, min(max CTAs,
 * NCCL_NVLS_NCHANNELS or 16)) (transport/nvls.cc ncclNvlsInit). */
int coll_nvls_channels(const coll_params *q);
/* Grouped send/recv's channels: the run's channels rounded up to a power
 * of two (graph/connect.cc ncclTopoComputeP2pChannels). */
int coll_p2p_channels(const coll_params *q);

const char *coll_arch_name(coll_arch a);
int coll_arch_from_name(const char *s);         /* -1: unknown */

/* ---- What the model derives from the parameters (cost.c, coll.c); the
 * engine, the analytical cost and the selection all call these. ---- */

/* Seconds of software latency the call costs on the GPU, added once to its
 * time at every fidelity: base_lat[family][proto] + the family's closed form
 * of per-step latencies as NCCL counts them (ring: (nsteps - inter steps) x
 * intra-tier hop_lat + inter steps x NIC hop_lat; tree: 2 x ((ppn - 1) x intra
 * + log2(nodes) x NIC); NVLS: intra (+ NIC across nodes); NVLS-tree: intra +
 * 2 log2(nodes) x NIC; CollNet: 2 (ppn - 1) x intra + NIC; PAT and P2P and
 * MPI-style: their step count x the hop_lat of their tier). The wire latency
 * of each step's route comes on top, from the platform. */
double coll_call_latency(const coll_plan *p);
double coll_call_latency_with(const coll_plan *p, const coll_params *q);
/* The latency a rank adds to its transfers' time at the end of a call, given
 * alpha, the largest route (wire) latency to its peers, and busy, the time
 * its transfers took. hop_lat includes the wire, and a step cannot take less
 * than its wire latency: pipelined (one flow per peer, which paid alpha
 * once): base + max(hop sum, wire latency), where with ring_lockstep
 * the hop sum beyond NCCL's count overlaps the transfers (max(NCCL's hops,
 * lock-step hops - busy)); step (every step's flows paid their wire
 * latency): base + max(0, hop sum - wire latency of all steps). With every software term
 * 0 this is the plain alpha-beta cost of the schedule. */
double coll_call_tail(const coll_plan *p, double alpha, double alpha_in, int step, double busy);
/* s: the cluster's one-node ring step (node_ring_hop) beyond NCCL's on the
 * NVLink hops of a ring across nodes, before the transfers hide it (model.c). */
double coll_ring_node_excess(const coll_plan *p, const coll_params *q);
double coll_net_chan_drive(const coll_plan *p, const coll_params *q); /* a NIC's rate share under a ring across nodes: net_chan_share */
double coll_ring_proxy_pace(const coll_plan *p, const coll_params *q); /* s: a ring step across nodes at its proxies' pace (proxy_chan_step) */
double coll_tree_proxy_excess(const coll_plan *p, const coll_params *q); /* s: a tree's network levels' extra proxy posts where channels outnumber NICs */
/* s: NCCL's network post overhead on a ring step across nodes, protocol pr
 * (getNetOverhead: 1 us Intel / 2 us AMD host, x3 Simple; model.c). */
double coll_net_overhead(const coll_params *q, coll_proto pr);
/* The wire latency above: each step charged the route latency of the link it
 * crosses, alpha (the largest of the member's routes) on a step that may leave
 * the node, alpha_in (the least, inside the node) on the coll_plan_local_steps
 * that cannot; all: every step, else all but the one the transfers paid. */
int coll_plan_local_steps(const coll_plan *p);
double coll_plan_wire_lat(const coll_plan *p, double alpha, double alpha_in, int all);
/* The call's time from its GPU time: max(launch, gpu) (0 for a call with
 * nothing to do). Every fidelity ends a call this way. */
double coll_call_time(const coll_plan *p, double gpu);
/* GPUs each host thread drives (nccl-tests' nGpus; 1, the default, for one
 * process per GPU): process-wide, set before a run or sweep (a forked sweep
 * child inherits it). Values below 1 count as 1. */
void coll_set_gpus_per_proc(int g);
int coll_gpus_per_proc(void);
/* Whether the measured or simulated launch binds each rank's host threads
 * next to its GPU (--gpu-bind=closest; 0, the default, when not known):
 * process-wide like the GPUs per thread; a cluster's "bound" figures apply
 * then (coll_params.has_bound). */
void coll_set_proxy_bound(int b);
int coll_proxy_bound(void);
/* The lock-step figures of the launch in force: ring_slice_waits and the
 * chan_lat of protocol pr, or their "bound" ones. */
int coll_slice_waits(const coll_params *q);
double coll_chan_lat(const coll_params *q, int pr);
/* The host's launch floor of one call with g GPUs per thread:
 * launch + launch_per_gpu x (g - 1). */
double coll_launch_floor(const coll_params *q, int g);
/* Wire bytes of a transfer of `bytes` in plan p (protocol/family fraction and
 * the channel rule). */
int64_t coll_plan_wire_bytes(const coll_plan *p, int64_t bytes);
int64_t coll_plan_wire_bytes_with(const coll_plan *p, int64_t bytes, const coll_params *q);
double coll_plan_wire_scale_with(const coll_plan *p, const coll_params *q);
/* bytes on the wire at factor scale (coll_plan_wire_scale_with): inline, as
 * the analytical cost applies it to every flow */
static inline int64_t coll_plan_wire_apply(int64_t bytes, double scale)
{
    if (bytes <= 0) return bytes;
    return scale == 1 ? bytes : (int64_t)((double)bytes * scale + 0.5);
}
/* NCCL's treeCorrectionFactor for the tree all-reduce at the plan's
 * protocol and size (1 otherwise, and for RCCL and tuner_own): what NCCL's
 * tuner multiplies the tree's bandwidth by; the selection, and the run
 * only through tree LL128's kernel floor (coll_tree_ll128_floor). */
double coll_tree_correction(const coll_plan *p, const coll_params *q);
/* NCCL's tuner's cap on the bus bandwidth (useful bytes per second) of
 * plan p under q (src/graph/tuning.cc ncclTopoTuneModel, 2.19-2.26): per
 * channel of the search's graph (q->max_channels / 2, ncclTopoPostset
 * doubles them), by GPU generation and node count (1, 2, more): ring LL128
 * perChMaxRingLL128Bws, tree perChMaxTreeBws and perChMaxTreeLL128Bws, LL
 * llMaxBws (one node: by GPU; across nodes: by CPU vendor). 0: no cap (not
 * NCCL, no arch, tuner_own, another family). The selection; the run only
 * through tree LL128's kernel floor (coll_tree_ll128_floor). */
double coll_nccl_bw_cap(const coll_plan *p, const coll_params *q);
/* Bus bytes of p as NCCL's tuner converts bus to algorithm bandwidth: ring
 * nsteps / n x bytes (all-reduce 2 (n - 1) / n, all-gather and
 * reduce-scatter (n - 1) / n, broadcast and reduce 1), tree 2 x bytes. */
double coll_nccl_bus_bytes(const coll_plan *p);
/* The least time of NCCL's tree LL128 all-reduce across nodes, bound by its
 * kernel: the bus bytes at coll_nccl_bw_cap x coll_tree_correction (0 for
 * other plans and where there is no cap). The run's tail adds what the
 * transfers leave of it. */
double coll_tree_ll128_floor(const coll_plan *p, const coll_params *q);
/* The channels one peer's p2p across nodes is split over (NCCL's parts,
 * enqueue.cc addP2pToPlan: 1 up to NCCL_P2P_NET_CHUNKSIZE a peer, doubling
 * above it up to the channels a peer may take); 0 on one node or for a plan
 * that is not NCCL's grouped send/recv. */
int coll_p2p_parts(const coll_plan *p, const coll_params *q);
/* The least time of NCCL's grouped send/recv (all-to-all) across nodes,
 * bound by its kernel: a GPU's bytes to other nodes through the channels
 * that carry them (coll_p2p_parts x one per batch of a remote node's
 * peers), each at half NCCL's per-channel NVLink figure of the GPU; 0 for
 * other plans. The run's tail adds what the transfers leave of it. */
double coll_p2p_kernel_floor(const coll_plan *p, const coll_params *q);
/* NCCL's Simple tree all-reduce pipeline fill beside its transfers:
 * (2 depth - 1) / K for K chunks a channel (NCCL's chunk rule); 0 for
 * other plans. The pipelined tail adds the transfers' time x it. */
double coll_tree_fill(const coll_plan *p, const coll_params *q);
/* The run's efficiency beyond the protocol's fraction for NCCL's NVLS-tree
 * all-reduce, a pipeline of K loops: K / (K + 1) (1 otherwise); the wire
 * bytes are divided by it, and the selection takes it back out. */
double coll_nvlstree_efficiency(const coll_plan *p, const coll_params *q);
/* Network messages a channel sends per step of a Simple ring (NCCL's slices
 * per chunk, 1 or 2, times the loops over the buffer); 1 for every other
 * plan. A lock-step ring (ring_lockstep) pays the NIC hop per message. */
int coll_ring_step_msgs(const coll_plan *p, const coll_params *q);
/* The lock-step waits per ring step of a channel: coll_ring_step_msgs with
 * ring_slice_waits, else the loops over the buffer alone (1 below 2 MiB a
 * channel). */
int coll_ring_step_waits(const coll_plan *p, const coll_params *q);
/* RCCL's ringCorrectionFactor of q's tuning model (rccl_tuning) for a
 * ring plan's protocol and size (1 otherwise): what RCCL's tuner
 * multiplies the ring's bandwidth by; the selection only. */
double coll_ring_correction(const coll_plan *p, const coll_params *q);
/* The time a rank of plan p spends reducing with q's reduce_bw (0 without
 * it, or when p reduces nothing): a ring reduce-scatter or all-reduce
 * reduces (n - 1)/n of the buffer per rank. coll_call_tail adds it on one
 * node, and what of it the transfers did not cover across nodes. */
double coll_reduce_time(const coll_plan *p, const coll_params *q);

#endif
