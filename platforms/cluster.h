/* Cluster descriptions (JSON files in configs/clusters, docs/clusters.md): the node,
 * its intra-node fabric and NICs, the fabric between nodes. topo_ builds the
 * SimGrid platform and the igraph view from them. */
#ifndef TS_CLUSTER_H
#define TS_CLUSTER_H

#include <stddef.h>

#include "coll.h"
#include "coll_params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOPO_MAX_GPUS 16
#define TOPO_MAX_NICS 16
#define TOPO_MAX_LINKS 64

typedef enum { TOPO_NVSWITCH, TOPO_MESH, TOPO_GRAPH, TOPO_PCIE } topo_fabric_kind;
typedef enum { TOPO_SWITCH, TOPO_FATTREE, TOPO_DRAGONFLY, TOPO_TORUS } topo_net_kind;

typedef struct topo_gpu {
    char name[64];
    double flops;       /* peak dense bf16 FLOP/s */
    double hbm_bw;      /* bytes/s */
    double hbm_bytes;
} topo_gpu;

typedef struct topo_link {
    int a, b;           /* local GPU indices */
    int count;          /* parallel physical links */
} topo_link;

typedef struct topo_nic {
    double bw, lat;     /* per direction, bytes/s and s */
    unsigned gpus;      /* bitmask of local GPUs it serves */
} topo_nic;

typedef struct topo_node {
    int gpus;
    topo_fabric_kind fabric;
    double bw;          /* nvswitch/pcie: per GPU per direction; mesh/graph: per physical link */
    double lat;         /* per hop */
    int nvls;           /* NVSwitch in-network reduction available */
    int nlinks;
    topo_link links[TOPO_MAX_LINKS]; /* mesh/graph */
    int nnics;
    topo_nic nics[TOPO_MAX_NICS];
} topo_node;

typedef struct topo_net {
    topo_net_kind kind;
    double bw, lat;     /* one port / link, per direction; lat per switch hop */
    /* fat-tree */
    int levels, radix, rails;
    int sharp;          /* switch, fat-tree: SHARP in-network reduction (NCCL CollNet) */
    double oversub;
    /* dragonfly */
    int groups, switches, nodes_per_switch, global_links;
    int local_links;    /* parallel links per pair of switches of a group (default 1) */
    double global_bw, global_lat;
    int adaptive;       /* routing inside a group: 1 adaptive (default), 0 minimal */
    /* torus */
    int dims[3];
} topo_net;

typedef struct topo_cluster {
    char name[64];
    char gpu_key[64];   /* the GPU spec's name in configs/gpus */
    char comment[1024];
    int nodes;
    topo_gpu gpu;
    topo_node node;
    topo_net net;
    coll_params coll;   /* the collective cost model's parameters: the library preset (the GPU's
                         * vendor), the file's "collectives" object, a calibration's over them */
    double intra_bw_eff, inter_bw_eff; /* calibration factors on bandwidth (default 1) */
    double intra_lat_add, inter_lat_add; /* calibration: seconds added per route */
} topo_cluster;

/* Load a cluster: a path to a JSON file, a shipped name ("frontier"),
 * optionally with a node count ("frontier:64"), or cluster JSON text (first
 * character '{'; messages call it "cluster JSON"). nodes > 0 overrides the count.
 * Errors name the file and the offending field. */
int topo_load(const char *spec, int nodes, topo_cluster *c, char *err, size_t errlen);

/* Apply a calibration JSON (docs/clusters.md) on top of c. */
int topo_calibrate(topo_cluster *c, const char *path, char *err, size_t errlen);

/* The whole calibration file checked (platforms/calib.c): format
 * "trainsim-calibration", version 2, known fields only, some terms present.
 * -1 with "FILE: what is wrong" in err. */
struct json_t;
int topo_calib_check(struct json_t *root, const char *path, char *err, size_t errlen);

/* Is spec a cluster (name or .json) rather than a SimGrid XML file? */
int topo_is_cluster_spec(const char *spec);

/* What a link of tier t carries per unit of its nominal bandwidth: the
 * tier's achievable fraction (c->coll.bw_frac) x the calibration's factor. */
double topo_bw_factor(const topo_cluster *c, coll_tier t);

/* The GPUs served by each NIC, and the NIC of a GPU (-1: none). */
int topo_nic_of(const topo_node *n, int gpu);
int topo_gpus_of_nic(const topo_node *n, int nic);

/* Write the SimGrid XML platform of c to path. */
int topo_write_platform(const topo_cluster *c, const char *path, char *err, size_t errlen);

/* Per-pair figures for models without routes: GPUs per node, the GPU-to-GPU
 * bandwidth and latency inside a node (the widest pair) and between two nodes
 * on the same switch. */
void topo_an_figures(const topo_cluster *c, int *gpn, double *intra_bw, double *intra_lat, double *inter_bw,
                     double *inter_lat);

/* Dragonfly: the switch of group g that owns the global link(s) to group h. */
int topo_dragonfly_owner(const topo_net *t, int g, int h);

/* The links between nodes that flows share, as the platform builds them
 * (platforms/fabric.c), for the analytical cost: f is the coll_fabric to
 * give coll_topo_set_fabric (f.nids 0: no link of the fabric can limit a
 * flow, as on a fat-tree without taper); ids are laid out by class (-1: a
 * class left out). Torus fabrics are not described. L must outlive the
 * topologies given it. */
typedef struct topo_net_links {
    coll_fabric f;
    topo_net_kind kind;
    int nodes;
    double up_bw;                       /* a node's uplink */
    int up, leaf, pod, sw, glob;        /* first id of each class, -1: left out */
    int per_leaf, leaves, per_pod, pods; /* fat-tree */
    double oversub;
    int switches, per_sw, groups, adaptive; /* dragonfly */
    double sw_bw, glob_bw;
    double inj;                         /* the most a node sends between nodes */
} topo_net_links;
void topo_net_links_init(topo_net_links *L, const topo_cluster *c);
/* Link id's name in the platform, with its direction ("g0-s1-up_UP"). */
int topo_net_link_name(const topo_net_links *L, int id, char *buf, size_t len);

/* The links of the routes between the GPUs of a node, as the platform
 * builds them (mesh and graph fabrics: each pair's route over its links;
 * links.fn NULL for NVSwitch and PCIe nodes, where a GPU's one port is what
 * the analytical cost's endpoint links already are): links.fn(ctx, a, b,
 * ...) takes local GPU indices (coll_links_fn), for the training path's
 * analytical cost (an_net.gpu_links). G must outlive its users. */
typedef struct topo_gpu_links {
    coll_gpu_links links;
    int gpus;
    int nhops[TOPO_MAX_GPUS][TOPO_MAX_GPUS];              /* -1: longer than COLL_ROUTE_HOPS */
    int hop[TOPO_MAX_GPUS][TOPO_MAX_GPUS][COLL_ROUTE_HOPS]; /* 2 x link + (1: against UP) */
    double bw[TOPO_MAX_LINKS];
} topo_gpu_links;
void topo_gpu_links_init(topo_gpu_links *G, const topo_cluster *c);

/* Route between two GPUs of one node, as a list of local link indices into
 * node->links (mesh/graph fabrics; igraph shortest paths, fewest hops then
 * widest). Returns the hop count, or -1 when unreachable. */
int topo_node_route(const topo_node *n, int a, int b, int *links, int max);

/* Figures for `platform show`, from the igraph view of the cluster. */
typedef struct topo_summary {
    long gpus, nodes, switches, links;
    double injection_bw;    /* per GPU, bytes/s */
    double bisection_bw;    /* bytes/s, one direction, max flow between the two node halves */
    int diameter;           /* switch-to-switch hops of the longest shortest GPU-GPU path */
    int diameter_exact;     /* 1: igraph_diameter; 0: eccentricity of gpu-0 (symmetric fabrics) */
} topo_summary;
int topo_summarize(const topo_cluster *c, topo_summary *s, char *err, size_t errlen);

const char *topo_fabric_name(topo_fabric_kind k);
const char *topo_net_name(topo_net_kind k);

/* A platform being built: the emitter calls these in document order (zones
 * nest; a zone's hosts, routers and links come before its routes). Routes
 * with gateways join child zones; without, hosts and routers. */
typedef struct topo_sink topo_sink;
struct topo_sink {
    void (*zone_begin)(topo_sink *k, const char *id);
    void (*zone_end)(topo_sink *k);
    void (*host)(topo_sink *k, const char *id, double speed, int nprops, const char *const *keys,
                 const char *const *vals);
    void (*router)(topo_sink *k, const char *id);
    void (*link)(topo_sink *k, const char *id, double bw, double lat);
    void (*route)(topo_sink *k, const char *src, const char *dst, const char *gw_src, const char *gw_dst, int n,
                  const char *const *links, const int *up);
    /* Optional (NULL: the emitter writes every pair's route instead): a zone
     * whose child zones are joined pairwise through one uplink each, the
     * route x -> y being [uplink x UP, uplink y DOWN]. star_begin opens it;
     * star_route gives each child its gateway and uplink (NULL: a core zone
     * reached from the others over their uplinks alone), after the zone's
     * resources. The routes between hosts are the same either way. */
    void (*star_begin)(topo_sink *k, const char *id);
    void (*star_route)(topo_sink *k, const char *child, const char *gw, const char *uplink);
    int bad;
    void *impl;
};
void topo_emit(const topo_cluster *c, topo_sink *k);

/* Build the platform in this process with SimGrid's S4U API (simgrid_init
 * done, no platform loaded yet): linear time, unlike loading the XML, whose
 * link lookups make SimGrid 3.32 quadratic in the platform size. */
int topo_sg_build(const topo_cluster *c, char *err, size_t errlen);
/* The hosts (sg_host_t) of the last successful topo_sg_build in the order
 * created, gpu-0 first, as a new array the caller frees; NULL (and *n = 0)
 * before one. SimGrid 3.32's sg_host_count and sg_host_list each walk every
 * zone of the platform for them. */
void **topo_sg_hosts(size_t *n);

#ifdef __cplusplus
}
#endif

/* NCCL's topology XML (NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE) as the JSON text
 * of a cluster's "node" object (caller frees), with one line per assumption
 * made in notes; NULL and a message naming the file (and line) on bad input. */
char *topo_nccl_node(const char *path, char *notes, size_t nlen, char *err, size_t errlen);

#endif
