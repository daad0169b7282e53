/* What the cost model derives from its parameters (coll_params.h) for one
 * plan: the call's software latency in NCCL's closed forms and the wire bytes
 * of a transfer. The engine, the analytical cost and the selection share them,
 * so every fidelity counts latency and protocol overheads alike. */
#include "coll_algos.h"
#include "coll_params.h"

#include <math.h>

coll_family coll_family_of(int algo)
{
    const coll_algo *a = coll_algo_get(algo);
    return a ? (coll_family)a->family : COLL_FAM_MPI;
}

static int log2_floor(int n)
{
    int k = 0;
    while ((2 << k) <= n) k++;
    return k;
}

double coll_call_latency(const coll_plan *p) { return coll_call_latency_with(p, coll_params_get()); }

/* The channels a call runs on (NCCL enqueue.cc: fewer while a channel would
 * get less than threads x threadThreshold bytes; the ring's LL threshold
 * scales with the rank count); 0 when the rule is off. */
static int one_node(const coll_plan *p)
{
    return p->topo && p->topo->nnodes == 1;
}

/* The channels the topology gives a call: on one node NCCL's intra-node
 * search's (node_channels, where the cluster gives it), else max_channels. */
static int chan_topo(const coll_plan *p, const coll_params *q)
{
    return one_node(p) && q->node_channels > 0 ? q->node_channels : q->max_channels;
}

/* The channels a call may use: the topology's within the run's
 * NCCL_MIN/MAX_CTAS and NCCL_MIN/MAX_NCHANNELS (coll_run_channels). */
static int chan_max(const coll_plan *p, const coll_params *q)
{
    return coll_run_channels(q, chan_topo(p, q));
}

static double chan_count(const coll_plan *p, const coll_params *q, coll_family fam)
{
    int mx = chan_max(p, q);
    if (mx <= 1 || q->chan_bytes[p->proto] <= 0 || fam == COLL_FAM_P2P || fam == COLL_FAM_MPI) return 0;
    /* NVLS and NVLS-tree run their fixed channel count at every size (nvls.c;
     * NCCL enqueue.cc, 2.18 on: nc = comm->nvlsChannels for both, no cut) */
    if (fam == COLL_FAM_NVLS || fam == COLL_FAM_NVLSTREE) return 0;
    double per = q->chan_bytes[p->proto] * (fam == COLL_FAM_RING && p->proto == COLL_LL ? p->n : 1);
    double nc = (double)p->bytes / per;
    return nc < 1 ? 1 : nc > mx ? mx : nc;
}

/* The channels a call runs on: NCCL's cut count where there is one, else
 * the most it may take, at least 1. */
static double chan_run(const coll_plan *p, const coll_params *q, coll_family fam)
{
    double nc = chan_count(p, q, fam);
    if (nc >= 1) return nc;
    return chan_max(p, q) > 1 ? chan_max(p, q) : 1;
}

/* The NICs a node's channels leave by: its GPUs / GPUs per NIC (1 without
 * a topology of nodes). */
static int node_nics(const coll_plan *p, const coll_params *q)
{
    if (!p->topo || p->topo->ppn < 1) return 1;
    int L = p->topo->ppn;
    return q->nic_gpus > 1 ? (L + q->nic_gpus - 1) / q->nic_gpus : L;
}

/* Wire bytes per data byte of a network message: LL sends 8 bytes of data
 * per 16-byte line (data and flag words), LL128 120 of 128. */
static const double msg_wire[COLL_NPROTOS] = {[COLL_SIMPLE] = 1.0, [COLL_LL128] = 128.0 / 120.0, [COLL_LL] = 2.0};

/* The latency one network step adds: the NIC tier's hop, and the
 * rendezvous when the step's network message reaches the threshold (in wire
 * bytes). A ring step sends a rank's block (S/n): on Polaris the step from
 * eager to rendezvous comes at an 8 KiB block (16 KiB of LL lines) on 8 to
 * 1,024 ranks, whatever the channel count. A tree step sends its channel's
 * share of the buffer. An eager message (below the threshold) lands in the
 * receiver's overflow buffers and is copied out (FI_CXI_RX_MATCH_MODE=software
 * matches in software): on a tree, one tree's half of the buffer / eager_bw
 * more per network step; on a lock-step ring, the step's block over the
 * node's NICs / eager_bw (Polaris all_gather, 128-540 nodes, 1-16 MiB). */
/* NCCL's Simple ring (src/device/prims_simple.h, enqueue.cc, collectives.h
 * 2.18-2.21): a channel's buffer is NCCL_BUFFSIZE 4 MiB in NCCL_STEPS 8 steps;
 * a ring chunk is CHUNKSTEPS 4 steps (2 MiB) and is sent in SlicePerChunk 2
 * slices of SLICESTEPS 2 steps, each slice at least 1/32 of its steps (32 KiB):
 * a chunk of at most 32 KiB goes as one slice, a larger one as two. The
 * buffer is cut into loops of nChannels x nRanks chunks. */
#define SIMPLE_CHUNK_MAX (4.0 * 1024 * 1024 / 8 * 4)
#define SIMPLE_SLICE_MIN (4.0 * 1024 * 1024 / 8 * 2 / 32)

/* A channel's chunk per ring step of a Simple ring and the loops over the
 * buffer it takes; 0 for every other plan. */
static double ring_chunk(const coll_plan *p, const coll_params *q, int *loops)
{
    *loops = 1;
    if (p->proto != COLL_SIMPLE || coll_family_of(p->algo) != COLL_FAM_RING || p->n < 2) return 0;
    if (p->coll == OG_BROADCAST || p->coll == OG_REDUCE) return 0;
    double nc = chan_count(p, q, COLL_FAM_RING);
    double chunk = (double)p->bytes / p->n / (nc > 0 ? nc : 1);
    if (chunk > SIMPLE_CHUNK_MAX) *loops = (int)ceil(chunk / SIMPLE_CHUNK_MAX);
    return chunk;
}

/* Network messages per ring step of a channel: slices per chunk x loops. */
int coll_ring_step_msgs(const coll_plan *p, const coll_params *q)
{
    int loops;
    double chunk = ring_chunk(p, q, &loops);
    if (chunk <= 0) return 1;
    return loops * (chunk / loops > SIMPLE_SLICE_MIN ? 2 : 1);
}

/* The lock-step waits a ring step pays per channel: one per message that
 * carries data (ring_slice_waits, the preset), or one per chunk at every
 * size. The kernel posts every slice of a chunk, an empty one when the
 * chunk fits one (prims_simple.h genericOp, NCCL and RCCL alike), and the
 * proxy sends a network message per slice, so the messages per step do
 * not change at SIMPLE_SLICE_MIN; whether the second message's wait shows
 * is the cluster's figure (docs/collectives.md, "Slices"). */
int coll_ring_step_waits(const coll_plan *p, const coll_params *q)
{
    if (coll_slice_waits(q)) return coll_ring_step_msgs(p, q);
    int loops;
    ring_chunk(p, q, &loops);
    return loops;
}

static double nic_hop(const coll_plan *p, const coll_params *q, coll_family fam, int lockstep)
{
    double h = q->hop_lat[COLL_TIER_NIC][fam][p->proto];
    /* chan_lat: a lock-step wait grows with the channels the call runs on */
    double cl = coll_chan_lat(q, p->proto);
    if (lockstep && fam == COLL_FAM_RING && cl > 0) {
        double nc = chan_count(p, q, fam);
        int mx = chan_max(p, q);
        h += cl * (nc > 0 ? nc : mx > 0 ? mx : 1);
    }
    /* P2P and MPI-style hops are per peer, fitted whole */
    if (fam == COLL_FAM_P2P || fam == COLL_FAM_MPI) return h;
    /* A lock-step ring (Slingshot) pays the network step per message: a
     * Simple step of two slices costs two (the 2x in time where a channel's
     * chunk passes 32 KiB: 256 KiB blocks on Polaris' 4 channels). */
    /* ring_overlap: where the waits add to the transfers (0), a step's
     * later messages stream behind its first and only the first waits */
    double msgs = lockstep && fam == COLL_FAM_RING ? 1 + (coll_ring_step_waits(p, q) - 1) * q->ring_overlap : 1;
    if (q->rdzv_bytes <= 0 || q->rdzv_lat <= 0) return msgs * h;
    double nc = chan_count(p, q, fam);
    double msg = (fam == COLL_FAM_RING ? (double)p->bytes / p->n : (double)p->bytes / (nc > 0 ? nc : 1)) * msg_wire[p->proto];
    /* libfabric CXI sends eagerly up to max_eager_size = FI_CXI_RDZV_THRESHOLD
     * + FI_CXI_RDZV_GET_MIN (prov/cxi cxip_txc_struct_init): a message of
     * the threshold itself goes eagerly */
    if (msg > q->rdzv_bytes) return msgs * (h + q->rdzv_lat);
    /* the copy is per node, all the channels' messages of the step: one
     * tree's half of the buffer, store-and-forward at every level. A ring
     * step's block is copied likewise before the step can be forwarded (a
     * lock-step ring waits for it): its channels spread over the node's
     * NICs, each NIC's share copied out of its own overflow buffers. */
    if (q->eager_bw <= 0) return h;
    if (fam == COLL_FAM_TREE) return h + (double)p->bytes / 2 * msg_wire[p->proto] / q->eager_bw;
    if (fam == COLL_FAM_RING && lockstep) return h + msg / node_nics(p, q) / q->eager_bw;
    return h;
}

/* NCCL's grouped send/recv (all-to-all) runs its n - 1 rounds on channels
 * side by side, not one after the other (enqueue.cc, channel.h
 * ncclP2pChannelBaseForRound): on one node round r takes channel base r; across
 * nodes the rounds to one node delta share a channel, NCCL_MAX_DEV_WORK_P2P_
 * PER_BATCH (8) per work batch whose peers a block serves at once, so M x
 * ceil(L / 8) batches spread over the p2p channels (comm->p2pnChannels, about
 * the collective channels). The latency is one round per wave of channels. */
#define P2P_PER_BATCH 8

static int p2p_waves(const coll_plan *p, const coll_params *q, int M, int L)
{
    int pch = q->max_channels > 1 ? coll_p2p_channels(q) : 1;
    int groups = M > 1 ? M * ((L + P2P_PER_BATCH - 1) / P2P_PER_BATCH) : p->n - 1;
    return (groups + pch - 1) / pch;
}

/* The receives a GPU's proxy posts for the remote peers of a grouped
 * send/recv: one per remote peer, or one per group where the plugin takes
 * several in one irecv. NCCL's recvProxyProgress (transport/net.cc) groups
 * the subs of one proxy op that share a receive comm, up to the plugin's
 * maxRecvs, and posts each step of a group as one irecv (n buffers) whose
 * completion is one flush (iflush over the group). Receive comms are
 * shared per (NIC, remote proxy rank, channel) where maxRecvs > 1
 * (NCCL_NET_SHARED_COMMS, recvProxyConnect). The remote proxy rank is the
 * sender's unless PXN routes the send: on nodes whose GPUs are all NVLink
 * peers (enqueue.cc pxnUsed: isAllNvlink, NCCL_PXN_DISABLE unset) a GPU
 * sends to a remote GPU through the local GPU on that GPU's rail
 * (graph/paths.cc ncclTopoGetNetDev, NCCL_P2P_PXN_LEVEL 2: proxyRank =
 * the GPU next to the peer's NIC), so the L senders of one node reach a
 * receiver through one proxy and one comm, and land in one channel (one
 * round base per node delta, ncclP2pChannelBaseForRound): (M - 1)
 * ceil(L / maxRecvs) receives. maxRecvs: 8 in NCCL's IB plugin
 * (NCCL_NET_IB_MAX_RECVS), 1 in aws-ofi-nccl ("single send/recv semantics",
 * NCCL_OFI_MAX_RECVS): the cluster's net_msg.max_recvs. */
static double p2p_recv_posts(const coll_plan *p, const coll_params *q, int M, int L)
{
    int remote = p->n - L, g = (int)q->msg_max_recvs;
    if (g <= 1 || L < 2 || q->intra_tier != COLL_TIER_NVLINK) return remote;
    return (double)(M - 1) * ((L + g - 1) / g);
}

/* The proxy's serial work for a grouped send/recv across nodes. Each GPU
 * has one proxy thread (src/proxy.cc) that posts and progresses every
 * network send and receive of the group in turn, each paying NCCL's network
 * post overhead (src/graph/tuning.cc getNetOverhead, 2.19-2.26;
 * NCCL_NET_OVERHEAD overrides it: 1 us on Intel hosts, 2 us on AMD's, three
 * times that with the Simple protocol, which p2p runs across nodes: the
 * tuner charges it per ring step, a send and a receive, half each here): a
 * send per peer on another node, a receive per p2p_recv_posts. Before
 * Hopper, a GPUDirect receive of data is flushed before the GPU may read
 * it (graph/paths.cc ncclTopoNeedFlush; transport/net.cc recvProxyProgress,
 * one per posted receive, none for an empty one): msg_flush more per
 * receive. A message of at most inject_bytes per peer (one message: a part
 * is at least 64 KiB across nodes, enqueue.cc) is an inline send whose
 * payload the provider first copies out of GPU memory (libfabric CXI
 * cxip_msg.c: an IDC of an FI_HMEM buffer goes through a bounce buffer):
 * inject_copy more per send. */
static double p2p_proxy_lat(const coll_plan *p, const coll_params *q, int M, int L)
{
    /* NCCL on a cluster whose GPU its tables know: a bare platform (XML,
     * an MPI trace) names no host and no library run */
    if (q->lib != COLL_LIB_NCCL || q->tuner_own || M < 2 || q->arch == COLL_ARCH_NONE) return 0;
    double post = coll_net_overhead(q, COLL_SIMPLE) / 2, peer_bytes = (double)p->bytes / p->n;
    double send = post, recv = post;
    if (peer_bytes > 0 && q->arch < COLL_ARCH_HOPPER) recv += q->msg_flush;
    if (peer_bytes > 0 && peer_bytes <= q->inject_bytes) send += q->inject_copy;
    return (double)(p->n - L) * send + p2p_recv_posts(p, q, M, L) * recv;
}

static double call_latency(const coll_plan *p, const coll_params *q, int lockstep);

/* NCCL's network post overhead per ring step across nodes (src/graph/
 * tuning.cc getNetOverhead, 2.19-2.26: 1 us on an Intel x86 host, 2 us on
 * an AMD one, 1 us elsewhere; three times that for Simple, "Inter-node rings
 * still have to launch nsteps * net overhead"): the proxy posts every step's
 * send and receive, so a ring step across nodes that stays on NVLink still
 * costs at least this. The set's own net_overhead where it names one (RCCL's
 * tuner with rccl_tuning); NCCL on a cluster whose GPU its tables know
 * otherwise (a bare platform names no host and no library run); 0 else. */
double coll_net_overhead(const coll_params *q, coll_proto pr)
{
    if (q->net_overhead[pr] > 0) return q->net_overhead[pr];
    if (q->lib != COLL_LIB_NCCL || q->tuner_own || q->arch == COLL_ARCH_NONE) return 0;
    return (q->cpu_amd ? 2e-6 : 1e-6) * (pr == COLL_SIMPLE ? 3 : 1);
}

/* The channel rate (chan_bw) of a ring on one node: each step of a ring
 * all-reduce, all-gather or reduce-scatter sends a rank's block S/n, split
 * over the call's channels; a channel's thread block issues its share of
 * the step (in wire bytes: LL's 16-byte lines carry 8 bytes of data) at
 * chan_bw, and the next GPU's step waits for it. In NCCL's LL primitive
 * (src/collectives/device/prims_ll.h, LLGenericOp) every thread of the block
 * takes line tid, tid + nthreads, ...: it polls the line's flag
 * (ld.volatile), reduces it with its own input and stores it to the next GPU
 * (st.volatile 16 bytes), the block syncing on the step's credit (waitSend)
 * and head (postRecv) around it; below 32 KiB a channel (enqueue.cc: nc
 * and nthreads cut while a channel would get under nthreads x
 * threadThreshold, 512 x 8 bytes x nRanks for the ring's LL) a thread
 * holds about one line per step, so a step's lines are one wave, not a
 * stream. The channel's wave time adds to the GPU's aggregate (the
 * transfers at the link's rate x proto_bw, whatever the channel count):
 * steps x S / (n nc) x wire / chan_bw. 0 where chan_bw is off. */
static double chan_wave_lat(const coll_plan *p, const coll_params *q, int steps)
{
    if (!one_node(p) || q->chan_bw[p->proto] <= 0 || p->coll == OG_BROADCAST || p->coll == OG_REDUCE) return 0;
    double nc = chan_run(p, q, COLL_FAM_RING);
    return steps * (double)p->bytes / p->n / nc * msg_wire[p->proto] / q->chan_bw[p->proto];
}

/* NCCL's tuner prices NVLS as hwLat + bytes / bandwidth (tuning.cc): the
 * pipeline's loop costs (nvls.c) shape the time, not the library's choice.
 * They are channel structure: off with the channel rule (max_channels 0, as
 * in a bare alpha-beta set). */
static int nvls_pipe(const coll_params *q)
{
    return q->max_channels > 0 && (q->tuner_own || q != coll_params_tuner());
}

double coll_call_latency_with(const coll_plan *p, const coll_params *q) { return call_latency(p, q, q->ring_lockstep); }

/* The pace of a ring step across nodes set by its GPUs' proxy threads
 * (proxy_chan_step): the channels the call runs on over the node's NICs,
 * proxy_chan_step each; 0 where it is off, on one node and on a lock-step
 * ring (whose waits are its chan_lat). */
double coll_ring_proxy_pace(const coll_plan *p, const coll_params *q)
{
    if (q->proxy_chan_step <= 0 || q->ring_lockstep || coll_family_of(p->algo) != COLL_FAM_RING || !p->topo ||
        p->topo->nnodes < 2 || p->topo->ppn < 1 || p->n < 2)
        return 0;
    return chan_run(p, q, COLL_FAM_RING) / node_nics(p, q) * q->proxy_chan_step;
}

/* The NVLink hops of a ring across nodes at the cluster's measured one-node
 * step (node_ring_hop): what that step costs beyond the one call_latency
 * counts (NCCL's table or its post overhead, the larger), on the (n - 1) -
 * (M - 1) hops that stay in a node (twice for all-reduce; none on a
 * lock-step ring, whose steps all wait for the network). NCCL's tuner prices
 * those hops with the one-node figure (intraLat of the node's link type, on
 * one node and across nodes alike). It is a GPU-side cost of each step on
 * links that, across nodes, are not the ones that bind: the transfers,
 * paced by the NICs, hide it, and only what they leave shows
 * (coll_call_tail, the estimate). 2 DGX A100 nodes: the ring LL128
 * all_gather is flat at 79-82 us from 128 KiB to 1 MiB (15 steps of ~5 us,
 * the one-node step), the ring LL128 all_reduce at 16-64 MiB sits ~80 us
 * above its bus bytes, NCCL's own closed form (docs/collectives.md,
 * "One-node ring steps"). 0 on one node (call_latency applies it whole).
 * Where the proxies' pace (coll_ring_proxy_pace) over all the steps
 * exceeds the hops call_latency counts, that excess, if larger. */
double coll_ring_node_excess(const coll_plan *p, const coll_params *q)
{
    coll_proto pr = p->proto;
    if (coll_family_of(p->algo) != COLL_FAM_RING || q->ring_lockstep || !p->topo || p->topo->nnodes < 2 || p->n < 2)
        return 0;
    double own = q->hop_lat[q->intra_tier][COLL_FAM_RING][pr], post = coll_net_overhead(q, pr), node = 0;
    if (own < post) own = post;
    if (q->node_ring_hop[pr] > own) node = coll_plan_local_steps(p) * (q->node_ring_hop[pr] - own);
    /* the proxy's pace on every step, beyond the steps call_latency counts */
    double pace = coll_ring_proxy_pace(p, q);
    if (pace > 0) {
        int chain = p->coll == OG_BROADCAST || p->coll == OG_REDUCE, twice = p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER;
        int steps = (chain || !twice ? 1 : 2) * (p->n - 1);
        double hops = call_latency(p, q, 0) - q->base_lat[COLL_FAM_RING][pr], x = steps * pace - hops;
        if (x > node) node = x;
    }
    return node;
}

/* The wait a tree's network levels add where a node's channels outnumber
 * its NICs. Each GPU has one proxy thread (src/proxy.cc) that posts every
 * network send and receive of the channels it serves (transport/net.cc),
 * each at NCCL's network post overhead (coll_net_overhead: 2 us on an AMD
 * host, 1 us on Intel's); a tree channel crosses the network at its node
 * head, whose NIC is the channel's (graph/connect.cc, the tree graph's
 * inter NICs), so with c = ceil(channels / NICs) channels a NIC a network
 * level's step comes c posts after its data, c - 1 more than the one
 * post the hop latency counts. NCCL cuts a tree LL call to one channel per
 * 4 KiB (enqueue.cc: 512 threads x 8 bytes, NCCL_LL_THREAD_THRESHOLD), so
 * on 2 DGX A100 nodes (8 NICs, 16 channels) the extra post comes from
 * 64 KiB, the step the logs show there (+2.0 / +2.4 us from 32 KiB). The
 * run's cost only: NCCL's tuner does not count it (coll_params_tuner). */
double coll_tree_proxy_excess(const coll_plan *p, const coll_params *q)
{
    if (coll_family_of(p->algo) != COLL_FAM_TREE || q == coll_params_tuner() || !p->topo ||
        p->topo->nnodes < 2 || p->topo->ppn < 1)
        return 0;
    double post = coll_net_overhead(q, p->proto), c = ceil(chan_run(p, q, COLL_FAM_TREE) / node_nics(p, q));
    int twice = p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER;
    return c > 1 ? (twice ? 2 : 1) * log2_floor(p->topo->nnodes) * (c - 1) * post : 0;
}

static double call_latency(const coll_plan *p, const coll_params *q, int lockstep)
{
    if (p->n < 2 || p->nsteps == 0) return 0;
    coll_family fam = coll_family_of(p->algo);
    coll_proto pr = p->proto;
    int n = p->n, M = p->topo ? p->topo->nnodes : n, L = n / M;
    double intra = q->hop_lat[q->intra_tier][fam][pr], inter = M > 1 ? nic_hop(p, q, fam, lockstep) : 0;
    /* a ring across nodes: every step costs at least the network post
     * overhead (coll_net_overhead); the cluster's own step on its NVLink
     * hops comes on top where the transfers leave it showing
     * (coll_ring_node_excess) */
    if (M > 1 && fam == COLL_FAM_RING) {
        double post = coll_net_overhead(q, pr);
        if (intra < post) intra = post;
    }
    /* a ring on one node: the cluster's measured step where it has one
     * (node_ring_hop; the tuner's set has none) */
    if (M == 1 && fam == COLL_FAM_RING && q->node_ring_hop[pr] > 0) intra = q->node_ring_hop[pr];
    double own = M > 1 ? inter : intra; /* a step that may cross nodes */
    int twice = p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER, steps = 0, xsteps = 0;
    double lat;
    switch (fam) {
    case COLL_FAM_RING:
        if (p->coll == OG_BROADCAST || p->coll == OG_REDUCE) { /* the chain: n - 1 hops, M - 1 of them between nodes */
            steps = n - 1;
            xsteps = M - 1;
        } else {
            steps = (twice ? 2 : 1) * (n - 1);
            xsteps = M > 1 ? (twice ? 2 : 1) * (M - 1) : 0;
        }
        if (M > 1 && lockstep) xsteps = steps;
        lat = (steps - xsteps) * intra + xsteps * inter + chan_wave_lat(p, q, steps);
        break;
    case COLL_FAM_TREE: /* the chain inside the node, the tree across nodes: up, and down for all-reduce */
        lat = (twice ? 2 : 1) * ((L - 1) * intra + log2_floor(M) * inter) + coll_tree_proxy_excess(p, q);
        break;
    case COLL_FAM_NVLS: lat = intra + (M > 1 ? inter : 0) + (nvls_pipe(q) ? coll_nvls_steps_lat(p, q) : 0); break;
    case COLL_FAM_NVLSTREE: lat = intra + 2 * log2_floor(M) * inter; break;
    case COLL_FAM_COLLNET: lat = 2 * (L - 1) * intra + inter; break;
    case COLL_FAM_PAT: lat = n * own; break; /* NCCL: a part still linear in the ranks */
    case COLL_FAM_P2P: {
        /* two chains: the GPU's waves of rounds, and the proxy's posts for
         * every remote peer followed by the last message's network step */
        double waves = p2p_waves(p, q, M, L) * (M > 1 ? inter : intra), proxy = p2p_proxy_lat(p, q, M, L);
        lat = proxy > 0 && proxy + inter > waves ? proxy + inter : waves;
        break;
    }
    default: lat = p->nsteps * own; break;   /* MPI-style: every step */
    }
    return q->base_lat[fam][pr] + lat;
}

/* Steps of a plan on which no transfer leaves a node: NCCL's tree
 * all-reduce runs the chain inside the node, L - 1 hops up and L - 1 down,
 * whatever the pipeline depth (the node-crossing levels sit between the two
 * chains: a chunk in flight on them keeps every other step a network step);
 * NVLS+tree its two NVLS steps each side of the tree across nodes. A ring
 * (and the chain of its broadcast and reduce) laid node after node: a
 * chunk's path round it crosses the network on M - 1 of its n - 1 hops
 * (2 (M - 1) of the all-reduce's 2 (n - 1)) and NVLink on the rest (NCCL's
 * nInterSteps, src/graph/tuning.cc). A lock-step ring's waits on every step
 * are its hop latencies (call_latency), not its route. 0 on one node: every
 * step is alike. */
int coll_plan_local_steps(const coll_plan *p)
{
    const coll_topo *t = p->topo;
    if (!t || t->nnodes < 2 || t->ppn < 2) return 0;
    int M = t->nnodes, n = p->n, twice = p->coll == OG_ALLREDUCE || p->coll == OG_BARRIER;
    switch (coll_family_of(p->algo)) {
    case COLL_FAM_TREE: return p->coll == OG_ALLREDUCE ? 2 * (t->ppn - 1) : 0;
    case COLL_FAM_NVLSTREE: return 4;
    case COLL_FAM_RING: return (twice ? 2 : 1) * (n - M);
    default: return 0;
    }
}

/* The route latencies the steps add beyond the transfers' own one: each
 * step the latency of the link it crosses, alpha across nodes and alpha_in
 * inside one (NCCL's nInterSteps, ncclTopoTuneModel: the inter-node latency
 * only on the steps between nodes). Step by step (all) a ring's steps each
 * wait for their slowest transfer, the one that crosses the network: the
 * engine's steps have paid alpha on each. */
double coll_plan_wire_lat(const coll_plan *p, double alpha, double alpha_in, int all)
{
    int local = all && coll_family_of(p->algo) == COLL_FAM_RING ? 0 : coll_plan_local_steps(p);
    int far = p->nsteps - local - (all ? 0 : 1);
    if (alpha_in <= 0 || alpha_in > alpha) alpha_in = alpha;
    return (far > 0 ? far : 0) * alpha + local * alpha_in;
}

/* NCCL's Simple tree all-reduce cuts each channel's share into chunks of
 * stepSize (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 = 512 KiB) and halves the
 * chunk while a channel gets fewer than 8 x depth chunks (down to 128 KiB),
 * 4 x depth (64 KiB), depth (32 KiB), with depth = L - 1 + log2(M) the tree's
 * (enqueue.cc, ncclPatternTreeUpDown, 2.12-2.26). A chunk climbs depth hops
 * and comes down depth more, so K chunks a channel take K + 2 depth - 1
 * chunk times: the fill (2 depth - 1) / K of the transfers' time, what
 * NCCL's tuner's treeCorrectionFactor stands in for at 1-64 MiB. */
double coll_tree_fill(const coll_plan *p, const coll_params *q)
{
    if (coll_family_of(p->algo) != COLL_FAM_TREE || p->coll != OG_ALLREDUCE || p->proto != COLL_SIMPLE || !p->topo ||
        p->topo->nnodes < 2 || q->max_channels < 1)
        return 0;
    int L = p->topo->ppn > 0 ? p->topo->ppn : 1, depth = L - 1 + log2_floor(p->topo->nnodes);
    double nc = chan_count(p, q, COLL_FAM_TREE), per = (double)p->bytes / (nc >= 1 ? nc : 1), chunk = 512.0 * 1024;
    while (per / chunk < depth * 8 && chunk > 131072) chunk /= 2;
    while (per / chunk < depth * 4 && chunk > 65536) chunk /= 2;
    while (per / chunk < depth && chunk > 32768) chunk /= 2;
    double k = ceil(per / chunk);
    return (2.0 * depth - 1) / (k >= 1 ? k : 1);
}

static int coll_plan_spans_nodes(const coll_plan *p)
{
    return p->topo && p->topo->nnodes > 1;
}

double coll_reduce_time(const coll_plan *p, const coll_params *q)
{
    if (q->reduce_bw <= 0 || p->n < 2 || coll_family_of(p->algo) != COLL_FAM_RING) return 0;
    if (p->coll != OG_REDUCESCATTER && p->coll != OG_ALLREDUCE) return 0;
    return (double)p->bytes * (p->n - 1) / p->n / q->reduce_bw;
}

/* NCCL's tree LL128 across nodes is bound by its kernel, not by the links:
 * the tuner's per-channel ceiling (coll_nccl_bw_cap: perChMaxTreeLL128Bws x
 * the graph's channels, or 120/128 of the tree's own ceiling) times its
 * treeCorrectionFactor, which for LL128 no structure of the run stands for
 * (LL128 consumes lines as they land: no chunk fill, coll_tree_fill). The
 * call takes at least the bus bytes at that rate; on 2 OCI A100 nodes
 * (tests/data/accuracy/nccl_a100_2nodes_16gpu_all_reduce_oci_roce.txt) that
 * is 92 / 114 / 165 / 281 us at 2 / 4 / 8 / 16 MiB with NCCL's 48.5 us of
 * latency, for 99 / 127 / 174 / 283 measured. 0 for every other plan. */
double coll_tree_ll128_floor(const coll_plan *p, const coll_params *q)
{
    if (coll_family_of(p->algo) != COLL_FAM_TREE || p->proto != COLL_LL128 || !coll_plan_spans_nodes(p)) return 0;
    double cap = coll_nccl_bw_cap(p, q) * coll_tree_correction(p, q);
    return cap > 0 ? coll_nccl_bus_bytes(p) / cap : 0;
}

/* NCCL's p2p across nodes (enqueue.cc addP2pToPlan, scheduleP2pTasksToPlan,
 * 2.19-2.26): a Simple step is NCCL_P2P_NET_CHUNKSIZE (128 KiB) and a peer's
 * bytes go in parts of at least half a step, one part per channel: parts =
 * min(nChannelsMin, ceil(bytes / (step / 2))), doubled while a part exceeds
 * a step, up to nChannelsMax = the channels a peer may take
 * (p2pnChannelsPerPeer: 2 for a network peer, NCCL_NCHANNELS_PER_NET_PEER,
 * halved while 2 n > 4 p2pnChannels, graph/paths.cc ncclTopoGetNchannels);
 * nChannelsMin is nChannelsMax halved while nChannelsMin x n exceeds the
 * p2p channels (coll_p2p_channels). */
#define P2P_NET_STEP 131072.0

int coll_p2p_parts(const coll_plan *p, const coll_params *q)
{
    if (coll_family_of(p->algo) != COLL_FAM_P2P || !coll_plan_spans_nodes(p) || p->n < 2) return 0;
    int n = p->n, pch = q->max_channels > 1 ? coll_p2p_channels(q) : 1, most = 2, least;
    while (most * n > 4 * pch && most > 1) most /= 2;
    if (most > pch) most = pch;
    for (least = most; least * n > pch && least > 1; least /= 2)
        ;
    double b = ceil((double)p->bytes / n), half = P2P_NET_STEP / 2;
    if (b <= 0) return 1;
    int parts = (int)fmin(least, ceil(b / half));
    if (parts < 1) parts = 1;
    double part = fmax(half, ceil(b / parts));
    while (part > P2P_NET_STEP && parts <= most / 2) {
        parts *= 2;
        part = ceil(b / parts);
    }
    return parts;
}

/* NCCL's per-channel NVLink bandwidth by GPU generation (src/graph/topo.h
 * SM70/SM80/SM90_NVLINK_BW: 20, 20, 20.6 GB/s), what its topology search
 * credits one channel with on an NVLink path. */
static const double nvl_chan_bw[COLL_NARCHS] = {[COLL_ARCH_VOLTA] = 20e9, [COLL_ARCH_AMPERE] = 20e9, [COLL_ARCH_HOPPER] = 20.6e9};

/* A grouped send/recv's peers on other nodes run on few channels: the
 * rounds to one node delta share a channel base, one batch of up to
 * NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8) peers (p2p_waves), so a GPU's bytes
 * to other nodes go through (M - 1) ceil(L / 8) x parts channels at most
 * (and no more than the p2p channels). One channel is one thread block,
 * whose warps split between its peers' receives and sends (device/
 * sendrecv.h: the groups alternate recv and send): each direction at half
 * the channel's rate, here NCCL's own per-channel NVLink figure. On 2 DGX
 * A100 nodes a peer of up to 128 KiB is one part, 8 remote peers in one
 * block: 10 GB/s against the NIC's 22, what the log shows at 64-128 KiB a
 * peer (docs/accuracy.md, h-a2amid). The transfers pace the call where the
 * NIC is slower (Polaris: two GPUs a NIC). */
double coll_p2p_kernel_floor(const coll_plan *p, const coll_params *q)
{
    int parts = coll_p2p_parts(p, q);
    if (parts < 1 || !p->topo || q->lib != COLL_LIB_NCCL || q->tuner_own || q->arch == COLL_ARCH_NONE) return 0;
    int M = p->topo->nnodes, L = p->n / M, pch = q->max_channels > 1 ? coll_p2p_channels(q) : 1;
    int ch = (M - 1) * ((L + P2P_PER_BATCH - 1) / P2P_PER_BATCH) * parts;
    if (ch > pch) ch = pch;
    double rate = nvl_chan_bw[q->arch] / 2 * ch, remote = (double)p->bytes / p->n * (p->n - L);
    return rate > 0 ? remote / rate : 0;
}

double coll_call_tail(const coll_plan *p, double alpha, double alpha_in, int step, double busy)
{
    if (p->n < 2 || p->nsteps == 0) return 0;
    const coll_params *q = coll_params_get();
    double base = q->base_lat[coll_family_of(p->algo)][p->proto], hops = coll_call_latency_with(p, q) - base;
    double wire = coll_plan_wire_lat(p, alpha, alpha_in, step);
    /* the reduction (reduce_bw): on one node the kernel's own stores move
     * the data over the node's links, so its reduce work adds to them; across
     * nodes the NICs move the data beside the kernel and only what the
     * transfers did not cover shows */
    double red = coll_reduce_time(p, q), left = coll_plan_spans_nodes(p) ? (red > busy ? red - busy : 0) : red;
    double kern = coll_tree_ll128_floor(p, q) + coll_p2p_kernel_floor(p, q);
    if (kern > busy) left += kern - busy;
    double node = coll_ring_node_excess(p, q);
    if (step) return left + node + base + (hops > wire ? hops - wire : 0);
    left += node > busy ? node - busy : 0;
    /* pipelined: the flows stream the whole buffer; the tree's pipeline fill
     * comes on top of their transfer time, not of the route latency they
     * include (the hops below count that; the step fidelity runs its own
     * chunks) */
    double xfer = busy > alpha ? busy - alpha : 0, fill = xfer * coll_tree_fill(p, q);
    if (q->ring_lockstep && busy > 0) {
        /* pipelined: the lock-step waits overlap the transfers (NCCL_STEPS
         * slots in flight) by ring_overlap: at 1 what shows is the larger of
         * the waits and the transfers, at 0 their sum; at least the steps
         * NCCL counts across nodes */
        double own = call_latency(p, q, 0) - base, rest = hops - q->ring_overlap * busy;
        hops = own > rest ? own : rest;
    }
    return left + base + fill + (hops > wire ? hops : wire);
}

static int gpus_per_proc = 1, proxy_bound = 0;

void coll_set_proxy_bound(int b)
{
    proxy_bound = b != 0;
}

int coll_proxy_bound(void)
{
    return proxy_bound;
}

/* A bound launch (--gpu-bind=closest) puts every rank's proxy thread on
 * its GPU's NUMA domain; without it (the cluster's own figures) the network
 * ranks' proxies may run on another, and the lock-step waits are that
 * launch's. */
int coll_slice_waits(const coll_params *q)
{
    return proxy_bound && q->has_bound ? q->bound_slice_waits : q->ring_slice_waits;
}

double coll_chan_lat(const coll_params *q, int pr)
{
    if (pr < 0 || pr >= COLL_NPROTOS) return 0;
    return proxy_bound && q->has_bound ? q->bound_chan_lat[pr] : q->chan_lat[pr];
}

void coll_set_gpus_per_proc(int g)
{
    gpus_per_proc = g > 1 ? g : 1;
}

int coll_gpus_per_proc(void)
{
    return gpus_per_proc;
}

double coll_launch_floor(const coll_params *q, int g)
{
    return q->launch + (g > 1 ? q->launch_per_gpu * (g - 1) : 0);
}

double coll_call_time(const coll_plan *p, double gpu)
{
    if (p->n < 2 || p->nsteps == 0) return gpu;
    double l = coll_launch_floor(coll_params_get(), gpus_per_proc);
    return gpu > l ? gpu : l;
}

/* NCCL's tuner's correction of its tree all-reduce ("trees are not
 * perfectly sticking to the model for medium sizes"): tuning.cc
 * (ncclTopoGetAlgoTime, 2.19-2.26) multiplies the tree's bandwidth by
 * treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MiB, 1 past
 * it. The selection uses it (coll.c), the run only in tree LL128's kernel
 * floor (coll_tree_ll128_floor): charged to every run as well, it
 * made 256 Polaris nodes' tree Simple 15-30% slow at 16-256 MiB where the
 * uncorrected time is within 5-10% of the log (median 8.7 -> 10.8%). */
static const double tree_corr[COLL_NPROTOS][23] = {
    [COLL_LL] = {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    [COLL_LL128] = {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    [COLL_SIMPLE] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

/* RCCL's tuning_model_3 ringCorrectionFactor (src/graph/tuning.cc,
 * ncclTopoGetAlgoTime: the ring's bandwidth times the factor at
 * log2(bytes / 64), 64 B to 4 GiB), LL and Simple rows (LL128 is off on
 * Frontier). */
static const double ring_corr3[COLL_NPROTOS][27] = {
    [COLL_LL] = {.1, .1, .1, .1, .1, .3, .1, .2, .1, .4, .4, .2, .2, .3, .7, .5, .4, .3, .3, .3, .3, .2, .2, .2, .2, .2, .2},
    [COLL_SIMPLE] = {.1, .1, .1, .1, .1, .1, .1, .5, 1, .1, .3, .1, .1, .1, .2, .2, .2, .3, .4, .7, 1, 1, 1, 1, 1, 1, 1},
};

double coll_ring_correction(const coll_plan *p, const coll_params *q)
{
    if (q->lib != COLL_LIB_RCCL || q->rccl_tuning != 3 || coll_family_of(p->algo) != COLL_FAM_RING) return 1;
    int k = -1;
    for (int64_t b = p->bytes >> 6; b > 0; b >>= 1) k++;
    return k >= 0 && k < 27 && ring_corr3[p->proto][k] > 0 ? ring_corr3[p->proto][k] : 1;
}

static int nccl_tuned(const coll_plan *p, const coll_params *q)
{
    return q->lib == COLL_LIB_NCCL && !q->tuner_own && p->coll == OG_ALLREDUCE;
}

double coll_tree_correction(const coll_plan *p, const coll_params *q)
{
    if (!nccl_tuned(p, q) || coll_family_of(p->algo) != COLL_FAM_TREE) return 1;
    int k = -1;
    for (int64_t b = p->bytes >> 6; b > 0; b >>= 1) k++;
    return k >= 0 && k < 23 ? tree_corr[p->proto][k] : 1;
}

/* NCCL's per-channel bandwidth ceilings, GB/s (src/graph/tuning.cc,
 * ncclTopoTuneModel, as of 2.21-2.26; rows Volta, Ampere, Hopper, columns
 * 1 node, 2 nodes, more). llMaxBws' row is the GPU's on one node and the CPU
 * vendor's across nodes (Intel and others row 0, AMD row 1); the Hopper row
 * of one node was 87.7 in 2.19-2.20 (commit b647562). */
static const double ll_max_bw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
static const double ring_ll128_ch[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
static const double tree_ll128_ch[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
static const double tree_ch[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

double coll_nccl_bw_cap(const coll_plan *p, const coll_params *q)
{
    if (q->lib != COLL_LIB_NCCL || q->tuner_own || q->arch == COLL_ARCH_NONE || q->arch >= COLL_NARCHS || p->n < 2)
        return 0;
    coll_family fam = coll_family_of(p->algo);
    if (fam != COLL_FAM_RING && fam != COLL_FAM_TREE) return 0;
    int M = p->topo && p->topo->nnodes > 0 ? p->topo->nnodes : 1, col = M <= 2 ? M - 1 : 2, a = q->arch - 1;
    /* One node: NCCL's channels are its intra-node search's (NVSwitch: 6
     * rings at 40 GB/s on A100, 60 on H100, doubled by ncclTopoDupChannels
     * to 12, at 24 runtime channels), not max_channels (the NICs'), and at 12
     * no ceiling of the A100 or H100 rows binds (ring LL128 12 x 20 = 240 >=
     * 0.92 x 240; 12 x 36.7 >= 0.92 x 360; tree, LL alike): none is applied.
     * Across nodes max_channels is NCCL's ring channel count (one per NIC,
     * doubled), the graph's half of it. */
    if (M == 1) return 0;
    double ll = ll_max_bw[q->cpu_amd ? 1 : 0][col]; /* llMaxBws across nodes: by the host CPU */
    double nch = q->max_channels >= 2 ? q->max_channels / 2 : 1, cap;
    if (fam == COLL_FAM_RING) {
        if (p->proto == COLL_LL) cap = ll;
        else if (p->proto == COLL_LL128) cap = nch * ring_ll128_ch[a][col];
        else return 0;
    } else {
        if (p->coll != OG_ALLREDUCE) return 0;
        double tree = nch * tree_ch[a][col];
        if (p->proto == COLL_LL) cap = tree / 3.8 < ll ? tree / 3.8 : ll;
        else if (p->proto == COLL_LL128) {
            double f = tree * 120.0 / 128.0, g = nch * tree_ll128_ch[a][col];
            cap = f < g ? f : g;
        } else cap = tree;
    }
    return cap * 1e9;
}

double coll_nccl_bus_bytes(const coll_plan *p)
{
    int n = p->n;
    if (n < 2) return 0;
    double S = (double)p->bytes;
    if (coll_family_of(p->algo) == COLL_FAM_TREE) return 2 * S;
    switch (p->coll) {
    case OG_ALLREDUCE: return 2.0 * (n - 1) / n * S;
    case OG_ALLGATHER:
    case OG_REDUCESCATTER: return (double)(n - 1) / n * S;
    default: return S;
    }
}

/* NCCL's NVLS-tree all-reduce moves the buffer in loops of nChannels x
 * nHeads chunks (enqueue.cc, 2.19-2.26: chunk NCCL_NVLS_CHUNKSIZE 128 KiB, at
 * most 64 KiB from 4 nodes; 64 KiB below 4 loops of 128 KiB chunks, then 32
 * KiB below one loop of 64 KiB chunks). A loop's network stage overlaps the
 * next loop's NVLS stages only, so a call of K loops takes about K + 1 loop
 * times: the efficiency K / (K + 1), K at least 1. Heads: one per NIC of the
 * node; channels: NVLS's (coll_nvls_channels: 16 on H100, 128 chunks a loop). The
 * measured 2 DGX-class H100 nodes (issue 309: busbw 170 / 270 / 392 / 449
 * GB/s at 16 M / 64 M / 256 M / 1 GiB against 469 at 16 GiB) and 2 H20 nodes
 * (nccl issue 1244: 155 / 269 / 313 GB/s at 16 M / 64 M / 512 M) ramp so
 * (the one loop of fill is read off these ramps, not from NCCL's source);
 * without it the model ran 16-34% fast at 512 KiB-128 MiB. NCCL's tuner has
 * no such term (coll.c takes it back out of the selection's estimate). */
double coll_nvlstree_efficiency(const coll_plan *p, const coll_params *q)
{
    if (!nccl_tuned(p, q) || coll_family_of(p->algo) != COLL_FAM_NVLSTREE || !p->topo || p->topo->ppn < 1) return 1;
    int nics = q->nic_gpus > 1 ? (p->topo->ppn + q->nic_gpus - 1) / q->nic_gpus : p->topo->ppn;
    double ops = (double)(q->max_channels > 0 ? coll_nvls_channels(q) : 1) * nics;
    double chunk = p->topo->nnodes >= 4 ? 65536 : 131072;
    if (p->bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
    if (p->bytes < ops * chunk && chunk > 32768) chunk = 32768;
    double loops = (double)p->bytes / (ops * chunk);
    if (loops < 1) loops = 1;
    return loops / (loops + 1);
}

int64_t coll_plan_wire_bytes(const coll_plan *p, int64_t bytes)
{
    return coll_plan_wire_bytes_with(p, bytes, coll_params_get());
}

/* The rate a NIC runs at under a ring across nodes, as a fraction of its
 * bw_frac rate (net_chan_share; 1 where it is off): the run's channels
 * (NCCL_MIN_CTAS copies included) spread over the node's NICs, each
 * channel driving net_chan_share of a NIC, at most net_chan_peak. On a DGX
 * H100 (bw_frac.nic 0.88): 16 channels on 8 NICs drive 2 x 0.46 = 0.92 of
 * it (0.81 of line rate), 24 (NCCL_MIN_CTAS=24) the peak 1.11 (0.98). */
double coll_net_chan_drive(const coll_plan *p, const coll_params *q)
{
    if (q->net_chan_share <= 0 || q->ring_lockstep || coll_family_of(p->algo) != COLL_FAM_RING || !p->topo ||
        p->topo->nnodes < 2 || p->topo->ppn < 1)
        return 1;
    int nc = chan_max(p, q);
    double drive = (double)(nc > 0 ? nc : 1) / node_nics(p, q) * q->net_chan_share, peak = q->net_chan_peak > 0 ? q->net_chan_peak : 1;
    return drive < peak ? drive : peak;
}

/* The factor coll_plan_wire_bytes_with applies to a positive size: a pure
 * function of the plan and q, so a caller that converts many sizes of one
 * plan computes it once (coll_plan_wire_apply). */
double coll_plan_wire_scale_with(const coll_plan *p, const coll_params *q)
{
    coll_family fam = coll_family_of(p->algo);
    double f = q->proto_bw[fam][p->proto] * coll_nvlstree_efficiency(p, q), scale = f > 0 ? 1 / f : 1;
    /* Channels: a call too small to give every channel its minimum runs on
     * fewer channels and gets their share of the bandwidth: a channel
     * carries 1 / (the topology's channels) of it. Channels that
     * NCCL_MIN_CTAS / NCCL_MIN_NCHANNELS add beyond the topology's are
     * copies over the same links (connect.cc copyChannels): no more
     * bandwidth than the links'; fewer (NCCL_MAX_*) carry their share. */
    double nc = chan_count(p, q, fam);
    int mx = chan_topo(p, q);
    /* with a channel rate (chan_bw, one-node rings) a channel's share is
     * its wave time in the latency, and the GPU keeps its aggregate rate */
    int waves = fam == COLL_FAM_RING && one_node(p) && q->chan_bw[p->proto] > 0;
    if (nc > 0 && nc < mx && !waves) scale *= mx / nc;
    /* across nodes a NIC runs at the share its channels drive */
    scale /= coll_net_chan_drive(p, q);
    /* NVLS's pipeline fill: one loop of the channels' chunks before the
     * first chunk is through (nvls.c) */
    int64_t fill = nvls_pipe(q) ? coll_nvls_loop_bytes(p) : 0;
    if (fill > 0) scale *= 1 + (double)fill / (double)p->bytes;
    return scale;
}

int64_t coll_plan_wire_bytes_with(const coll_plan *p, int64_t bytes, const coll_params *q)
{
    if (bytes <= 0) return bytes;
    return coll_plan_wire_apply(bytes, coll_plan_wire_scale_with(p, q));
}
