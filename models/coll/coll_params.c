/* The collective cost model's parameters: the NCCL and RCCL presets (their
 * tuning models' structure and figures), the JSON overlay that cluster files
 * and calibrations apply, and the process's active set. */
#include "coll_params.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "util.h"

static const char *const lib_names[COLL_NLIBS] = {"nccl", "rccl"};
static const char *const tier_names[COLL_NTIERS] = {"nvlink", "pcie", "xgmi", "nic", "switch"};
static const char *const fam_names[COLL_NFAMS] = {"ring", "tree", "nvls", "nvlstree", "collnet", "pat", "p2p", "mpi"};

static int find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], s) == 0) return i;
    return -1;
}

static const char *const arch_names[COLL_NARCHS] = {"none", "volta", "ampere", "hopper"};
const char *coll_arch_name(coll_arch a) { return (unsigned)a < COLL_NARCHS ? arch_names[a] : "?"; }
int coll_arch_from_name(const char *s) { return find(arch_names, COLL_NARCHS, s); }

const char *coll_lib_name(coll_lib l) { return (unsigned)l < COLL_NLIBS ? lib_names[l] : "?"; }
int coll_lib_from_name(const char *s) { return find(lib_names, COLL_NLIBS, s); }
const char *coll_tier_name(coll_tier t) { return (unsigned)t < COLL_NTIERS ? tier_names[t] : "?"; }
int coll_tier_from_name(const char *s) { return find(tier_names, COLL_NTIERS, s); }
const char *coll_family_name(coll_family f) { return (unsigned)f < COLL_NFAMS ? fam_names[f] : "?"; }
int coll_family_from_name(const char *s) { return find(fam_names, COLL_NFAMS, s); }

#define US 1e-6
/* {simple, ll128, ll} rows, in microseconds or fractions */
typedef double prow[COLL_NPROTOS];

/* NCCL 2.19-2.26 src/graph/tuning.cc: baseLat per algorithm and protocol,
 * hwLat per hardware (NVLink, PCI, NET), algorithm and protocol, and the
 * bandwidth refinements of ncclTopoTuneModel (ring LL 1/4, LL128 0.92, tree
 * 0.92 and LL 1/3.8, CollNet 0.9, PAT 0.75). Our families without an NCCL
 * row: P2P (NCCL's send/recv: Simple, the ring's figures) and MPI-style
 * schedules (the wire formats only). docs/collectives.md gives the table. */
static const prow nccl_base[COLL_NFAMS] = {
    [COLL_FAM_RING] = {8.4, 14.0, 6.6}, [COLL_FAM_TREE] = {8.4, 14.0, 6.8},
    [COLL_FAM_PAT] = {8.0, 0, 0},       [COLL_FAM_P2P] = {8.4, 0, 0},
    [COLL_FAM_MPI] = {8.4, 14.0, 6.6},
};
static const prow nccl_hw[COLL_NTIERS][COLL_NFAMS] = {
    [COLL_TIER_NVLINK] = {[COLL_FAM_RING] = {3.4, 1.9, 0.6}, [COLL_FAM_TREE] = {4.0, 1.25, 0.6},
                          [COLL_FAM_NVLS] = {25, 0, 0}, [COLL_FAM_NVLSTREE] = {25, 0, 0},
                          [COLL_FAM_COLLNET] = {3.7, 0, 0}, [COLL_FAM_PAT] = {2.8, 0, 0},
                          [COLL_FAM_P2P] = {3.4, 0, 0}, [COLL_FAM_MPI] = {3.4, 1.9, 0.6}},
    [COLL_TIER_PCIE] = {[COLL_FAM_RING] = {5.7, 2.5, 1.0}, [COLL_FAM_TREE] = {4.0, 1.9, 1.0},
                        [COLL_FAM_COLLNET] = {3.7, 0, 0}, [COLL_FAM_PAT] = {2.8, 0, 0},
                        [COLL_FAM_P2P] = {5.7, 0, 0}, [COLL_FAM_MPI] = {5.7, 2.5, 1.0}},
    /* NCCL has no Infinity Fabric row: its NVLink figures */
    [COLL_TIER_XGMI] = {[COLL_FAM_RING] = {3.4, 1.9, 0.6}, [COLL_FAM_TREE] = {4.0, 1.25, 0.6},
                        [COLL_FAM_COLLNET] = {3.7, 0, 0}, [COLL_FAM_PAT] = {2.8, 0, 0},
                        [COLL_FAM_P2P] = {3.4, 0, 0}, [COLL_FAM_MPI] = {3.4, 1.9, 0.6}},
    [COLL_TIER_NIC] = {[COLL_FAM_RING] = {14.0, 4.0, 2.7}, [COLL_FAM_TREE] = {14.0, 8.5, 5.0},
                       [COLL_FAM_NVLS] = {18, 0, 0}, [COLL_FAM_NVLSTREE] = {14, 0, 0},
                       [COLL_FAM_COLLNET] = {31, 0, 0}, [COLL_FAM_PAT] = {2.8, 0, 0},
                       [COLL_FAM_P2P] = {14.0, 0, 0}, [COLL_FAM_MPI] = {14.0, 4.0, 2.7}},
};
static const prow nccl_pbw[COLL_NFAMS] = {
    [COLL_FAM_RING] = {1.0, 0.92, 0.25},
    [COLL_FAM_TREE] = {0.92, 0.92 * 120.0 / 128.0, 0.92 / 3.8},
    /* NVLS: NCCL's tuner (nvlsEfficiency, read in a recent src/tuning/nvls.cc) takes the NVLink bandwidth x
     * nvlsEfficiency (0.85 on Hopper) x (nChannels - 1) / nChannels of its
     * 16 NVLS channels; the pipeline's per-step costs come on top (nvls.c) */
    [COLL_FAM_NVLS] = {0.85 * 15.0 / 16.0, 0, 0},
    [COLL_FAM_NVLSTREE] = {275.0 / 450.0 / 0.824, 0, 0},
    [COLL_FAM_COLLNET] = {0.9, 0, 0},
    [COLL_FAM_PAT] = {0.75, 0, 0},
    [COLL_FAM_P2P] = {1.0, 0, 0},
    [COLL_FAM_MPI] = {1.0, 120.0 / 128.0, 0.5},
};

/* RCCL (ROCm/rccl src/graph/tuning.cc): baseLat 17 us Simple, 12 us LL and
 * LL128 for Tree, Ring and CollNet; hwLat rows NVLINK (Infinity Fabric on
 * MI200), PCI, NET; ring LL busbw 1/5; tree busbw x 0.27 and LL / 2.3. */
static const prow rccl_base[COLL_NFAMS] = {
    [COLL_FAM_RING] = {17, 12, 12}, [COLL_FAM_TREE] = {17, 12, 12}, [COLL_FAM_COLLNET] = {17, 12, 12},
    [COLL_FAM_PAT] = {17, 0, 0},    [COLL_FAM_P2P] = {17, 0, 0},    [COLL_FAM_MPI] = {17, 12, 12},
};
static const prow rccl_hw[COLL_NTIERS][COLL_NFAMS] = {
    [COLL_TIER_NVLINK] = {[COLL_FAM_RING] = {2.7, 2.3, 2.3}, [COLL_FAM_TREE] = {3.8, 1.2, 1.2},
                          [COLL_FAM_COLLNET] = {3.8, 1.2, 1.2}, [COLL_FAM_PAT] = {2.7, 0, 0},
                          [COLL_FAM_P2P] = {2.7, 0, 0}, [COLL_FAM_MPI] = {2.7, 2.3, 2.3}},
    [COLL_TIER_PCIE] = {[COLL_FAM_RING] = {1.9, 1.3, 1.3}, [COLL_FAM_TREE] = {5.7, 2.2, 2.2},
                        [COLL_FAM_COLLNET] = {5.7, 2.2, 2.2}, [COLL_FAM_PAT] = {1.9, 0, 0},
                        [COLL_FAM_P2P] = {1.9, 0, 0}, [COLL_FAM_MPI] = {1.9, 1.3, 1.3}},
    [COLL_TIER_XGMI] = {[COLL_FAM_RING] = {2.7, 2.3, 2.3}, [COLL_FAM_TREE] = {3.8, 1.2, 1.2},
                        [COLL_FAM_COLLNET] = {3.8, 1.2, 1.2}, [COLL_FAM_PAT] = {2.7, 0, 0},
                        [COLL_FAM_P2P] = {2.7, 0, 0}, [COLL_FAM_MPI] = {2.7, 2.3, 2.3}},
    [COLL_TIER_NIC] = {[COLL_FAM_RING] = {4.5, 2.0, 2.0}, [COLL_FAM_TREE] = {19.5, 9.8, 9.8},
                       [COLL_FAM_COLLNET] = {19.5, 9.8, 9.8}, [COLL_FAM_PAT] = {4.5, 0, 0},
                       [COLL_FAM_P2P] = {4.5, 0, 0}, [COLL_FAM_MPI] = {4.5, 2.0, 2.0}},
};
static const prow rccl_pbw[COLL_NFAMS] = {
    [COLL_FAM_RING] = {1.0, 0.92, 0.2},
    [COLL_FAM_TREE] = {0.27, 0.27 * 120.0 / 128.0, 0.27 / 2.3},
    [COLL_FAM_COLLNET] = {0.9, 0, 0},
    [COLL_FAM_PAT] = {0.75, 0, 0},
    [COLL_FAM_P2P] = {1.0, 0, 0},
    [COLL_FAM_MPI] = {1.0, 120.0 / 128.0, 0.5},
};

void coll_params_preset(coll_params *p, coll_lib lib)
{
    memset(p, 0, sizeof *p);
    p->lib = lib;
    int r = lib == COLL_LIB_RCCL;
    for (int f = 0; f < COLL_NFAMS; f++)
        for (int q = 0; q < COLL_NPROTOS; q++) {
            p->base_lat[f][q] = (r ? rccl_base : nccl_base)[f][q] * US;
            p->proto_bw[f][q] = (r ? rccl_pbw : nccl_pbw)[f][q];
            for (int t = 0; t < COLL_NTIERS; t++) p->hop_lat[t][f][q] = (r ? rccl_hw : nccl_hw)[t][f][q] * US;
        }
    /* Achievable bandwidth: NCCL's topology model gives an H100 NVLink 20.6
     * GB/s of its 25 (SM90 figure in src/graph/topo.h; 20.0 on A100), PCIe
     * Gen4 x16 24 GB/s of 32 (PCI_BW); a NIC 0.88 of line rate (ib_send_bw
     * 353.5 of 400 Gb/s on NDR, shared/data/hardware.md); Infinity Fabric
     * 0.75 (comm_scope GCD to GCD: 148/200, 76/100, 38/50 GB/s, Pearson,
     * arXiv:2302.14827); switch ports at line rate. */
    p->bw_frac[COLL_TIER_NVLINK] = 20.6 / 25.0;
    p->bw_frac[COLL_TIER_PCIE] = 24.0 / 32.0;
    p->bw_frac[COLL_TIER_XGMI] = 0.75;
    p->bw_frac[COLL_TIER_NIC] = 0.88;
    p->bw_frac[COLL_TIER_SWITCH] = 1.0;
    /* NCCL: at most 32 channels (MAXCHANNELS); a channel takes at least
     * threads x threadThreshold bytes: Simple 512 x 64, LL128 640 x 8, LL
     * 512 x 8 (per ring rank) */
    p->max_channels = 16;
    p->chan_bytes[COLL_SIMPLE] = 512 * 64;
    p->chan_bytes[COLL_LL128] = 640 * 8;
    p->chan_bytes[COLL_LL] = 512 * 8;
    p->intra_tier = r ? COLL_TIER_XGMI : COLL_TIER_NVLINK;
    p->ring_overlap = 1;
    p->ring_slice_waits = 1;
    p->nvls_step_lat = 4.9e-6;
}

/* ---- the JSON overlay ---- */

static int fail(char *err, size_t errlen, const char *where, const char *what, const char *key)
{
    return ts_err(err, errlen, "%s: collectives: %s '%s'", where, what, key);
}

static int num(json_t *v, double lo, double hi, double *out, const char *where, const char *key, char *err,
               size_t errlen)
{
    if (!json_is_number(v))
        return ts_err(err, errlen, "%s: collectives: '%s' must be a number", where, key);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi)
        return ts_err(err, errlen, "%s: collectives: '%s' = %g outside [%g, %g]", where, key, x, lo, hi);
    *out = x;
    return 0;
}

/* {"simple": x, "ll128": y, "ll": z} onto row[]. */
static int proto_row(json_t *o, double *row, double lo, double hi, const char *where, const char *key, char *err,
                     size_t errlen)
{
    if (!json_is_object(o)) return ts_err(err, errlen, "%s: collectives: '%s' must be an object of protocols", where, key);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int q = coll_proto_from_name(k);
        if (q < 0) return fail(err, errlen, where, "unknown protocol (simple, ll128, ll)", k);
        char name[128];
        snprintf(name, sizeof name, "%s.%s", key, k);
        if (num(v, lo, hi, &row[q], where, name, err, errlen) < 0) return -1;
    }
    return 0;
}

/* {"FAMILY" or "*": {proto row}} onto rows[fam][]. */
static int fam_rows(json_t *o, double (*rows)[COLL_NPROTOS], double lo, double hi, const char *where, const char *key,
                    char *err, size_t errlen)
{
    if (!json_is_object(o)) return ts_err(err, errlen, "%s: collectives: '%s' must be an object of families", where, key);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int f = strcmp(k, "*") == 0 ? -2 : coll_family_from_name(k);
        if (f == -1) return fail(err, errlen, where, "unknown algorithm family (ring, tree, nvls, nvlstree, collnet, pat, p2p, mpi)", k);
        char name[128];
        snprintf(name, sizeof name, "%s.%s", key, k);
        for (int i = f < 0 ? 0 : f; i < (f < 0 ? COLL_NFAMS : f + 1); i++)
            if (proto_row(v, rows[i], lo, hi, where, name, err, errlen) < 0) return -1;
    }
    return 0;
}

static int tier_of_key(const char *k, const char *where, char *err, size_t errlen)
{
    int t = strcmp(k, "*") == 0 ? -2 : coll_tier_from_name(k);
    if (t == -1) return fail(err, errlen, where, "unknown link tier (nvlink, pcie, xgmi, nic, switch)", k), -1;
    return t;
}

#define LAT_MAX 1e-2 /* 10 ms: a latency beyond is a unit mistake */

/* "bound": {"ring_slice_waits": B, "chan_lat": {...}}: the lock-step
 * figures of a launch bound next to its GPUs; a field left out keeps the
 * unbound one. */
static int bound_overlay(coll_params *q, json_t *v, const char *where, char *err, size_t errlen)
{
    if (!json_is_object(v))
        return ts_err(err, errlen, "%s: collectives: 'bound' must be an object {ring_slice_waits, chan_lat}", where);
    if (!q->has_bound) {
        q->bound_slice_waits = q->ring_slice_waits;
        memcpy(q->bound_chan_lat, q->chan_lat, sizeof q->bound_chan_lat);
    }
    const char *bk;
    json_t *bv;
    json_object_foreach(v, bk, bv) {
        if (strcmp(bk, "ring_slice_waits") == 0) {
            if (!json_is_boolean(bv))
                return ts_err(err, errlen, "%s: collectives: 'bound.ring_slice_waits' must be true or false", where);
            q->bound_slice_waits = json_is_true(bv);
        } else if (strcmp(bk, "chan_lat") == 0) {
            if (proto_row(bv, q->bound_chan_lat, 0, LAT_MAX, where, "bound.chan_lat", err, errlen) < 0) return -1;
        } else return fail(err, errlen, where, "unknown bound field (ring_slice_waits, chan_lat)", bk);
    }
    q->has_bound = 1;
    return 0;
}

int coll_params_overlay(coll_params *p, const void *json_obj, const char *where, char *err, size_t errlen)
{
    json_t *o = (json_t *)json_obj;
    if (!json_is_object(o)) return ts_err(err, errlen, "%s: 'collectives' must be an object", where);
    coll_params q = *p; /* all or nothing */
    json_t *v = json_object_get(o, "library");
    if (v) {
        int l = json_is_string(v) ? coll_lib_from_name(json_string_value(v)) : -1;
        if (l < 0) return ts_err(err, errlen, "%s: collectives: 'library' must be \"nccl\" or \"rccl\"", where);
        if (l != (int)p->lib) { /* another library: its preset first, the other fields over it */
            coll_params_preset(&q, l);
            q.collnet = p->collnet;
            q.arch = p->arch;
            q.cpu_amd = p->cpu_amd;
            q.intra_tier = p->intra_tier == COLL_TIER_PCIE ? COLL_TIER_PCIE
                           : l == COLL_LIB_RCCL ? COLL_TIER_XGMI : COLL_TIER_NVLINK;
        }
    }
    const char *k;
    json_object_foreach(o, k, v) {
        char name[128];
        if (strcmp(k, "library") == 0 || strcmp(k, "comment") == 0 || strcmp(k, "source") == 0) continue;
        if (strcmp(k, "launch") == 0) {
            if (num(v, 0, LAT_MAX, &q.launch, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "launch_per_gpu") == 0) {
            if (num(v, 0, LAT_MAX, &q.launch_per_gpu, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "base_lat") == 0) {
            if (fam_rows(v, q.base_lat, 0, LAT_MAX, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "proto_bw") == 0) {
            if (fam_rows(v, q.proto_bw, 0, 1.5, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "hop_lat") == 0) {
            if (!json_is_object(v)) return ts_err(err, errlen, "%s: collectives: 'hop_lat' must be an object of tiers", where);
            const char *tk;
            json_t *tv;
            json_object_foreach(v, tk, tv) {
                int t = tier_of_key(tk, where, err, errlen);
                if (t == -1) return -1;
                snprintf(name, sizeof name, "hop_lat.%s", tk);
                for (int i = t < 0 ? 0 : t; i < (t < 0 ? COLL_NTIERS : t + 1); i++)
                    if (fam_rows(tv, q.hop_lat[i], 0, LAT_MAX, where, name, err, errlen) < 0) return -1;
            }
        } else if (strcmp(k, "bw_frac") == 0) {
            if (!json_is_object(v)) return ts_err(err, errlen, "%s: collectives: 'bw_frac' must be an object of tiers", where);
            const char *tk;
            json_t *tv;
            json_object_foreach(v, tk, tv) {
                int t = tier_of_key(tk, where, err, errlen);
                if (t == -1) return -1;
                snprintf(name, sizeof name, "bw_frac.%s", tk);
                for (int i = t < 0 ? 0 : t; i < (t < 0 ? COLL_NTIERS : t + 1); i++)
                    if (num(tv, 0.01, 1.5, &q.bw_frac[i], where, name, err, errlen) < 0) return -1;
            }
        } else if (strcmp(k, "max_channels") == 0) {
            double x;
            if (num(v, 0, 64, &x, where, k, err, errlen) < 0) return -1;
            q.max_channels = (int)x;
        } else if (strcmp(k, "chan_bytes") == 0) {
            if (proto_row(v, q.chan_bytes, 0, 1e9, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "version") == 0) {
            int ma = 0, mi = 0, pa = 0, end = 0;
            const char *vs = json_is_string(v) ? json_string_value(v) : "";
            int got = sscanf(vs, "%d.%d%n.%d%n", &ma, &mi, &end, &pa, &end);
            if (!json_is_string(v) || got < 2 || vs[end] || ma < 1 || mi < 0 || mi > 99 || pa < 0 || pa > 99)
                return ts_err(err, errlen, "%s: collectives: 'version' must be a string like \"2.21.5\"%s%s%s", where,
                              json_is_string(v) ? " (got '" : "", vs, json_is_string(v) ? "')" : "");
            q.version = ma * 10000 + mi * 100 + pa;
        } else if (strcmp(k, "ring_lockstep") == 0) {
            if (!json_is_boolean(v)) return ts_err(err, errlen, "%s: collectives: 'ring_lockstep' must be true or false", where);
            q.ring_lockstep = json_is_true(v);
        } else if (strcmp(k, "ring_slice_waits") == 0) {
            if (!json_is_boolean(v)) return ts_err(err, errlen, "%s: collectives: 'ring_slice_waits' must be true or false", where);
            q.ring_slice_waits = json_is_true(v);
        } else if (strcmp(k, "node_ring_hop") == 0) {
            if (proto_row(v, q.node_ring_hop, 0, LAT_MAX, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "node_channels") == 0) {
            double x;
            if (num(v, 0, 64, &x, where, k, err, errlen) < 0) return -1;
            q.node_channels = (int)x;
        } else if (strcmp(k, "chan_bw") == 0) {
            if (proto_row(v, q.chan_bw, 0, 1e13, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "net_chan_share") == 0) {
            if (num(v, 0, 1, &q.net_chan_share, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "net_chan_peak") == 0) {
            if (num(v, 0, 1.5, &q.net_chan_peak, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "proxy_chan_step") == 0) {
            if (num(v, 0, LAT_MAX, &q.proxy_chan_step, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "chan_lat") == 0) {
            if (proto_row(v, q.chan_lat, 0, LAT_MAX, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "bound") == 0) {
            if (bound_overlay(&q, v, where, err, errlen) < 0) return -1;
        } else if (strcmp(k, "rccl_tuning") == 0) {
            if (!json_is_integer(v) || (json_integer_value(v) != 0 && json_integer_value(v) != 3))
                return ts_err(err, errlen,
                              "%s: collectives: 'rccl_tuning' must be 0 (the generic tables) or 3 (tuning_model_3, "
                              "Frontier's node); no other RCCL tuning model is tabulated",
                              where);
            q.rccl_tuning = (int)json_integer_value(v);
        } else if (strcmp(k, "ring_overlap") == 0) {
            if (num(v, 0, 1, &q.ring_overlap, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "nvls_step_lat") == 0) {
            if (num(v, 0, LAT_MAX, &q.nvls_step_lat, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "reduce_bw") == 0) {
            if (num(v, 0, 1e13, &q.reduce_bw, where, k, err, errlen) < 0) return -1;
        } else if (strcmp(k, "rdzv") == 0) {
            if (!json_is_object(v)) return ts_err(err, errlen, "%s: collectives: 'rdzv' must be an object {bytes, lat, eager_bw}", where);
            const char *rk;
            json_t *rv;
            json_object_foreach(v, rk, rv) {
                snprintf(name, sizeof name, "rdzv.%s", rk);
                if (strcmp(rk, "bytes") == 0) {
                    if (num(rv, 0, 1e9, &q.rdzv_bytes, where, name, err, errlen) < 0) return -1;
                } else if (strcmp(rk, "lat") == 0) {
                    if (num(rv, 0, LAT_MAX, &q.rdzv_lat, where, name, err, errlen) < 0) return -1;
                } else if (strcmp(rk, "eager_bw") == 0) {
                    if (num(rv, 0, 1e13, &q.eager_bw, where, name, err, errlen) < 0) return -1;
                } else return fail(err, errlen, where, "unknown rdzv field (bytes, lat, eager_bw)", rk);
            }
        } else if (strcmp(k, "net_msg") == 0) {
            if (!json_is_object(v))
                return ts_err(err, errlen, "%s: collectives: 'net_msg' must be an object {flush, inject_bytes, inject_copy, max_recvs}", where);
            const char *mk;
            json_t *mv;
            json_object_foreach(v, mk, mv) {
                snprintf(name, sizeof name, "net_msg.%s", mk);
                double *dst = strcmp(mk, "flush") == 0 ? &q.msg_flush : strcmp(mk, "inject_bytes") == 0 ? &q.inject_bytes
                              : strcmp(mk, "inject_copy") == 0 ? &q.inject_copy
                              : strcmp(mk, "max_recvs") == 0   ? &q.msg_max_recvs : NULL;
                if (!dst) return fail(err, errlen, where, "unknown net_msg field (flush, inject_bytes, inject_copy, max_recvs)", mk);
                double hi = dst == &q.inject_bytes ? 1e6 : dst == &q.msg_max_recvs ? 64 : LAT_MAX;
                if (num(mv, 0, hi, dst, where, name, err, errlen) < 0) return -1;
            }
        } else if (strcmp(k, "arch") == 0) {
            int a = json_is_string(v) ? coll_arch_from_name(json_string_value(v)) : -1;
            if (a < 0) return ts_err(err, errlen, "%s: collectives: 'arch' must be \"none\", \"volta\", \"ampere\" or \"hopper\"", where);
            q.arch = (coll_arch)a;
        } else if (strcmp(k, "cpu") == 0) {
            const char *cs = json_is_string(v) ? json_string_value(v) : "";
            if (strcmp(cs, "amd") != 0 && strcmp(cs, "intel") != 0)
                return ts_err(err, errlen, "%s: collectives: 'cpu' must be \"amd\" or \"intel\"", where);
            q.cpu_amd = strcmp(cs, "amd") == 0;
        } else if (strcmp(k, "tuner_own") == 0) {
            if (!json_is_boolean(v)) return ts_err(err, errlen, "%s: collectives: 'tuner_own' must be true or false", where);
            q.tuner_own = json_is_true(v);
        } else if (strcmp(k, "collnet") == 0) {
            if (!json_is_boolean(v)) return ts_err(err, errlen, "%s: collectives: 'collnet' must be true or false", where);
            q.collnet = json_is_true(v);
        } else {
            return fail(err, errlen, where,
                        "unknown field (library, launch, launch_per_gpu, base_lat, hop_lat, bw_frac, proto_bw, max_channels, "
                        "chan_bytes, chan_lat, bound, node_ring_hop, node_channels, chan_bw, net_chan_share, net_chan_peak, proxy_chan_step, version, ring_lockstep, ring_overlap, ring_slice_waits, rccl_tuning, nvls_step_lat, "
                        "reduce_bw, rdzv, net_msg, arch, cpu, collnet, tuner_own)",
                        k);
        }
    }
    *p = q;
    return 0;
}

static void put_row(FILE *f, const double *row, double scale)
{
    fprintf(f, "{");
    for (int q = 0; q < COLL_NPROTOS; q++)
        fprintf(f, "%s\"%s\": %.6g", q ? ", " : "", coll_proto_name(q), row[q] * scale);
    fprintf(f, "}");
}

static void put_fams(FILE *f, const double (*rows)[COLL_NPROTOS], int ind)
{
    fprintf(f, "{\n");
    for (int i = 0; i < COLL_NFAMS; i++) {
        fprintf(f, "%*s\"%s\": ", ind + 2, "", fam_names[i]);
        put_row(f, rows[i], 1);
        fprintf(f, "%s\n", i + 1 < COLL_NFAMS ? "," : "");
    }
    fprintf(f, "%*s}", ind, "");
}

void coll_params_write_json(FILE *f, const coll_params *p, int ind)
{
    fprintf(f, "{\n%*s\"library\": \"%s\",\n", ind + 2, "", coll_lib_name(p->lib));
    fprintf(f, "%*s\"launch\": %.6g,\n", ind + 2, "", p->launch);
    fprintf(f, "%*s\"launch_per_gpu\": %.6g,\n", ind + 2, "", p->launch_per_gpu);
    fprintf(f, "%*s\"base_lat\": ", ind + 2, "");
    put_fams(f, p->base_lat, ind + 2);
    fprintf(f, ",\n%*s\"hop_lat\": {\n", ind + 2, "");
    for (int t = 0; t < COLL_NTIERS; t++) {
        fprintf(f, "%*s\"%s\": ", ind + 4, "", tier_names[t]);
        put_fams(f, p->hop_lat[t], ind + 4);
        fprintf(f, "%s\n", t + 1 < COLL_NTIERS ? "," : "");
    }
    fprintf(f, "%*s},\n%*s\"bw_frac\": {", ind + 2, "", ind + 2, "");
    for (int t = 0; t < COLL_NTIERS; t++) fprintf(f, "%s\"%s\": %.6g", t ? ", " : "", tier_names[t], p->bw_frac[t]);
    fprintf(f, "},\n%*s\"proto_bw\": ", ind + 2, "");
    put_fams(f, p->proto_bw, ind + 2);
    fprintf(f, ",\n%*s\"max_channels\": %d,\n%*s\"chan_bytes\": ", ind + 2, "", p->max_channels, ind + 2, "");
    put_row(f, p->chan_bytes, 1);
    if (p->version > 0)
        fprintf(f, ",\n%*s\"version\": \"%d.%d.%d\"", ind + 2, "", p->version / 10000, p->version / 100 % 100, p->version % 100);
    fprintf(f, ",\n%*s\"ring_lockstep\": %s,\n%*s\"rdzv\": {\"bytes\": %.6g, \"lat\": %.6g, \"eager_bw\": %.6g}", ind + 2, "",
            p->ring_lockstep ? "true" : "false", ind + 2, "", p->rdzv_bytes, p->rdzv_lat, p->eager_bw);
    if (p->msg_flush > 0 || p->inject_bytes > 0 || p->inject_copy > 0 || p->msg_max_recvs > 0) {
        fprintf(f, ",\n%*s\"net_msg\": {\"flush\": %.6g, \"inject_bytes\": %.6g, \"inject_copy\": %.6g", ind + 2, "",
                p->msg_flush, p->inject_bytes, p->inject_copy);
        if (p->msg_max_recvs > 0) fprintf(f, ", \"max_recvs\": %.6g", p->msg_max_recvs);
        fputc('}', f);
    }
    fprintf(f, ",\n%*s\"ring_overlap\": %.6g", ind + 2, "", p->ring_overlap);
    fprintf(f, ",\n%*s\"ring_slice_waits\": %s", ind + 2, "", p->ring_slice_waits ? "true" : "false");
    fprintf(f, ",\n%*s\"node_ring_hop\": ", ind + 2, "");
    put_row(f, p->node_ring_hop, 1);
    if (p->node_channels > 0) fprintf(f, ",\n%*s\"node_channels\": %d", ind + 2, "", p->node_channels);
    fprintf(f, ",\n%*s\"chan_bw\": ", ind + 2, "");
    put_row(f, p->chan_bw, 1);
    if (p->proxy_chan_step > 0) fprintf(f, ",\n%*s\"proxy_chan_step\": %.6g", ind + 2, "", p->proxy_chan_step);
    if (p->net_chan_share > 0) fprintf(f, ",\n%*s\"net_chan_share\": %.6g", ind + 2, "", p->net_chan_share);
    if (p->net_chan_peak > 0) fprintf(f, ",\n%*s\"net_chan_peak\": %.6g", ind + 2, "", p->net_chan_peak);
    fprintf(f, ",\n%*s\"chan_lat\": ", ind + 2, "");
    put_row(f, p->chan_lat, 1);
    if (p->has_bound) {
        fprintf(f, ",\n%*s\"bound\": {\"ring_slice_waits\": %s, \"chan_lat\": ", ind + 2, "",
                p->bound_slice_waits ? "true" : "false");
        put_row(f, p->bound_chan_lat, 1);
        fprintf(f, "}");
    }
    if (p->rccl_tuning) fprintf(f, ",\n%*s\"rccl_tuning\": %d", ind + 2, "", p->rccl_tuning);
    fprintf(f, ",\n%*s\"nvls_step_lat\": %.6g", ind + 2, "", p->nvls_step_lat);
    if (p->reduce_bw > 0) fprintf(f, ",\n%*s\"reduce_bw\": %.6g", ind + 2, "", p->reduce_bw);
    if (p->arch != COLL_ARCH_NONE) fprintf(f, ",\n%*s\"arch\": \"%s\"", ind + 2, "", coll_arch_name(p->arch));
    if (p->cpu_amd) fprintf(f, ",\n%*s\"cpu\": \"amd\"", ind + 2, "");
    fprintf(f, ",\n%*s\"collnet\": %s,\n%*s\"tuner_own\": %s\n%*s}", ind + 2, "", p->collnet ? "true" : "false",
            ind + 2, "", p->tuner_own ? "true" : "false", ind, "");
}

/* ---- the process's active set ---- */

static coll_params active;
static int active_set;
static unsigned generation; /* bumped by every coll_params_set: memos of costs key on it */
/* What the last coll_params_set gave, before the run's NCCL settings. */
static coll_params raw;
static coll_nccl_env run_env;
static int run_env_on;

static coll_params tuner;

static void make_tuner(void)
{
    if (active.tuner_own) {
        tuner = active;
        return;
    }
    coll_params_preset(&tuner, active.lib);
    tuner.collnet = active.collnet;
    tuner.intra_tier = active.intra_tier;
    tuner.max_channels = active.max_channels;
    tuner.version = active.version;
    /* NCCL 2.20-2.21 (src/graph/tuning.cc with MNNVL and the ncclInfo
     * interface; 2.23 has 8.4 / 4 / 14 again, 2.22 not checked): Tree Simple baseLat 0 and hwLat
     * 28 us on NVLink, PCI and NET alike */
    if (active.lib == COLL_LIB_NCCL && active.version >= 22000 && active.version < 22200) {
        tuner.base_lat[COLL_FAM_TREE][COLL_SIMPLE] = 0;
        for (int t = 0; t < COLL_NTIERS; t++) tuner.hop_lat[t][COLL_FAM_TREE][COLL_SIMPLE] = 28e-6;
    }
    tuner.nic_gpus = active.nic_gpus;
    tuner.arch = active.arch;
    tuner.cpu_amd = active.cpu_amd;
    /* NCCL's and RCCL's tuners price each protocol at the communicator's
     * full channel count (tuning.cc ncclTopoGetAlgoTime: latency + bytes /
     * the bandwidth of nChannels; enqueue.cc getAlgoInfo 2.8-2.21, the cost
     * table of topoGetAlgoInfo 2.22-2.26); the channels a small call runs on
     * are cut after the choice (enqueue.cc). Priced with the cut, LL lost to
     * Simple at 1-8 MiB on 512-1,024 Frontier GCDs and ring LL to tree LL at
     * 8-128 KiB on one DGX A100 (ABCI: -47..-53%), where NCCL runs ring LL */
    memset(tuner.chan_bytes, 0, sizeof tuner.chan_bytes);
    /* RCCL's tuning_model_3 (src/graph/tuning.cc; the same in the ROCm 6
     * era and the latest RCCL read): ring hwLat NVLINK (xGMI) 3.6 / 0.8 us
     * and NET 19.8 / 9.5 us Simple / LL; a ring across nodes pays at least
     * the network post overhead on its other steps (getNetOverhead 2 us on
     * an AMD host, x3 for Simple); ringCorrectionFactor: coll.c */
    if (active.lib == COLL_LIB_RCCL && active.rccl_tuning == 3) {
        tuner.rccl_tuning = 3;
        tuner.hop_lat[COLL_TIER_XGMI][COLL_FAM_RING][COLL_SIMPLE] = 3.6e-6;
        tuner.hop_lat[COLL_TIER_XGMI][COLL_FAM_RING][COLL_LL] = 0.8e-6;
        tuner.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_SIMPLE] = 19.8e-6;
        tuner.hop_lat[COLL_TIER_NIC][COLL_FAM_RING][COLL_LL] = 9.5e-6;
        tuner.net_overhead[COLL_SIMPLE] = 6e-6;
        tuner.net_overhead[COLL_LL] = 2e-6;
    }
    for (int f = 0; f < COLL_NFAMS; f++)
        for (int q = 0; q < COLL_NPROTOS; q++)
            if (active.proto_bw[f][q] <= 0) tuner.proto_bw[f][q] = 0;
}

unsigned coll_params_generation(void) { return generation; }

/* The active set: what was set, with the run's NCCL settings over it. */
static void make_active(void)
{
    active = raw;
    if (run_env_on) coll_nccl_env_apply(&run_env, &active);
    active_set = 1;
    generation++;
    make_tuner();
}

void coll_params_set(const coll_params *p)
{
    raw = *p;
    make_active();
}

const coll_params *coll_params_get(void)
{
    if (!active_set) {
        coll_params_preset(&raw, COLL_LIB_NCCL);
        make_active();
    }
    return &active;
}

void coll_set_nccl_env(const coll_nccl_env *e)
{
    coll_params_get();
    run_env_on = e != NULL;
    if (e) run_env = *e;
    make_active();
}

const coll_nccl_env *coll_get_nccl_env(void)
{
    return run_env_on ? &run_env : NULL;
}

int coll_params_channels(double bytes)
{
    const coll_params *q = coll_params_get();
    if (q->max_channels < 1) return 0;
    double per = q->chan_bytes[COLL_SIMPLE], nc = per > 0 ? bytes / per : q->max_channels;
    return nc < 1 ? 1 : nc > q->max_channels ? q->max_channels : (int)nc;
}

const coll_params *coll_params_tuner(void)
{
    coll_params_get();
    return &tuner;
}
