/* NVLS: in-switch reduction on NVSwitch gen3 nodes (NCCL's NVLS). Model: each
 * GPU sends its data up to the node's switch once (the switch adds, or stores
 * for all-gather) and reads the result back once, over its own NVLink; the
 * engine runs those as flows between neighbouring GPUs (coll_plan_step_phys).
 * The one-node all-reduce also pays NCCL's loop structure: 16 channels, a
 * chunk cut by size, a handshake per loop step and one loop of fill (below).
 * NVLS+tree (all-reduce across nodes): NVLS reduce inside the node, member j
 * of every node takes part j, a binary tree across nodes all-reduces part j,
 * then NVLS multicast inside the node. */
#include "coll_algos.h"
#include "coll_params.h"

const char *coll_nvls_unfit(const coll_plan *p)
{
    if (!p->topo || !p->topo->nvls) return "needs NVLS-capable nodes (host property nvls=\"1\")";
    if (p->topo->nnodes != 1) return "runs inside one node (use nvlstree across nodes)";
    return NULL;
}

const char *coll_nvlstree_unfit(const coll_plan *p)
{
    if (!p->topo || !p->topo->nvls) return "needs NVLS-capable nodes (host property nvls=\"1\")";
    if (p->topo->ppn < 2) return "needs the same number (at least 2) of members on every node";
    return NULL;
}

/* NCCL 2.19-2.26 runs NVLS on a fixed nvlsChannels channels whatever the size
 * (enqueue.cc: "NVLS should not need more than 16 channels to get peak BW";
 * NCCL_NVLS_NCHANNELS, default 16, bounded by NCCL_MIN/MAX_CTAS: coll_nvls_channels,
 * src/transport/nvls.cc). Each channel loops
 * over the buffer nHeads (the node's ranks) x chunk bytes at a time, the
 * chunk NCCL_NVLS_CHUNKSIZE (128 KiB) cut by calcCollChunking (enqueue.cc)
 * while the call is small beside channels x heads x chunk: 64 KiB below 64
 * loops of 128 KiB, 32 KiB below 8 of 64 KiB, 16 KiB below 2 of 32 KiB. */
#define NVLS_CHUNK_MAX (128 * 1024)

static int nvls_pipelined(const coll_plan *p)
{
    return p->coll == OG_ALLREDUCE && p->bytes > 0 && p->topo && p->topo->nnodes == 1 && p->n > 1 &&
           coll_family_of(p->algo) == COLL_FAM_NVLS;
}

int64_t coll_nvls_chunk(const coll_plan *p)
{
    if (!nvls_pipelined(p)) return 0;
    int64_t ops = (int64_t)coll_nvls_channels(coll_params_get()) * p->n, c = NVLS_CHUNK_MAX;
    if (p->bytes < 64 * ops * c && c > 65536) c = 65536;
    if (p->bytes < 8 * ops * c && c > 32768) c = 32768;
    if (p->bytes < 2 * ops * c && c > 16384) c = 16384;
    return c;
}

int64_t coll_nvls_loop_bytes(const coll_plan *p)
{
    return (int64_t)coll_nvls_channels(coll_params_get()) * p->n * coll_nvls_chunk(p);
}

double coll_nvls_loops(const coll_plan *p)
{
    int64_t loop = coll_nvls_loop_bytes(p);
    return loop > 0 ? (double)p->bytes / (double)loop : 0;
}

/* Each loop step costs a fixed handshake on top of its bytes: the scatter,
 * multimem reduce/multicast and gather warp groups hand every chunk on
 * through the channel's step flags (src/device/all_reduce.h, NVLS branch).
 * The cost (coll_params nvls_step_lat, 4.9 us) is fitted on the measured NCCL 2.26 sweep of 8 H100 (tests/
 * data/accuracy/..._all_reduce_nvls_together.txt): the slope of time against
 * size changes with the chunk (16, 32, 64, 128 KiB: 169, 227, 257, 275 GB/s
 * algbw), one bandwidth and one per-step cost explain all four
 * (docs/collectives.md). */
double coll_nvls_steps_lat(const coll_plan *p, const coll_params *q)
{
    double n = coll_nvls_loops(p);
    return n > 0 ? (n > 1 ? n : 1) * q->nvls_step_lat : 0;
}

void coll_nvls_setup(coll_plan *p)
{
    p->nchunks = p->coll == OG_ALLREDUCE ? 1 : p->n;
    p->nsteps = 2;
    p->width = p->merged_width = 1;
}

void coll_nvls_step(const coll_plan *p, int me, int s, coll_step *out)
{
    int sw = p->n + p->topo->node[me], all = p->nchunks;
    switch (p->coll) {
    case OG_ALLGATHER: /* multicast store of my chunk, read everything */
        if (s == 0) coll_add_range(p, out, 1, sw, me, 1, 0);
        else coll_add_range(p, out, 0, sw, 0, all, 0);
        break;
    case OG_REDUCESCATTER: /* add everything, read my chunk */
        if (s == 0) coll_add_range(p, out, 1, sw, 0, all, 1);
        else coll_add_range(p, out, 0, sw, me, 1, 0);
        break;
    default:
        if (s == 0) coll_add_range(p, out, 1, sw, 0, all, 1);
        else coll_add_range(p, out, 0, sw, 0, all, 0);
    }
}

void coll_nvlstree_setup(coll_plan *p)
{
    int H = coll_bt_height(0, p->topo->nnodes);
    p->nchunks = p->topo->ppn;
    p->nsteps = 2 * H + 4;
    p->width = 3;
    p->merged_width = 4;
}

void coll_nvlstree_step(const coll_plan *p, int me, int s, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, M = t->nnodes, k = t->node[me], j = t->local[me], sw = p->n + k;
    int H = coll_bt_height(0, M);
    if (s == 0) coll_add_range(p, out, 1, sw, 0, L, 1);          /* NVLS reduce */
    else if (s == 1) coll_add_range(p, out, 0, sw, j, 1, 0);     /* part j */
    else if (s == 2 * H + 2) coll_add_range(p, out, 1, sw, j, 1, 0); /* multicast store */
    else if (s == 2 * H + 3) coll_add_range(p, out, 0, sw, 0, L, 0);
    else { /* tree all-reduce of part j over the nodes, one part per step */
        int u = s - 2, par = coll_bt_parent(k, M), ch[2], nch = coll_bt_children(k, M, ch);
        int d = coll_bt_depth(k, M);
#define AT(node) t->order[t->first[node] + j]
        if (par >= 0 && u == coll_bt_height(k, M)) coll_add_range(p, out, 1, AT(par), j, 1, 1);
        for (int i = 0; i < nch; i++)
            if (u == coll_bt_height(ch[i], M)) coll_add_range(p, out, 0, AT(ch[i]), j, 1, 1);
        if (u == H + d)
            for (int i = 0; i < nch; i++) coll_add_range(p, out, 1, AT(ch[i]), j, 1, 0);
        if (par >= 0 && u == H + d - 1) coll_add_range(p, out, 0, AT(par), j, 1, 0);
#undef AT
    }
}

/* The merge of every step's transfers (coll_plan_merged) without walking the
 * 2H + 4 steps: the few transfers coll_nvlstree_step makes, each with the
 * step (and place in the step) where it occurs, merged in that order (a peer's
 * entry where it first appears, bytes summed). Checked against the merged
 * steps in the coll suite. */
typedef struct nvt_entry {
    int step, sub, send, peer, chunk, nchunk, reduce;
} nvt_entry;

static int nvt_cmp(const void *a, const void *b)
{
    const nvt_entry *x = a, *y = b;
    return x->step != y->step ? x->step - y->step : x->sub - y->sub;
}

void coll_nvlstree_merged(const coll_plan *p, int me, coll_step *out)
{
    const coll_topo *t = p->topo;
    int L = t->ppn, M = t->nnodes, k = t->node[me], j = t->local[me], sw = p->n + k;
    int H = coll_bt_height(0, M), last = 2 * H + 1; /* the tree's steps: 2 .. 2H + 1 */
    nvt_entry e[10];
    int ne = 0;
    e[ne++] = (nvt_entry){0, 0, 1, sw, 0, L, 1};
    e[ne++] = (nvt_entry){1, 0, 0, sw, j, 1, 0};
    e[ne++] = (nvt_entry){2 * H + 2, 0, 1, sw, j, 1, 0};
    e[ne++] = (nvt_entry){2 * H + 3, 0, 0, sw, 0, L, 0};
    if (H > 0) {
        int par = coll_bt_parent(k, M), ch[2], nch = coll_bt_children(k, M, ch), d = coll_bt_depth(k, M);
        int hk = coll_bt_height(k, M);
#define AT(node) t->order[t->first[node] + j]
#define TREE(u, sub, send, peer, reduce) \
    if ((u) >= 0 && (u) + 2 <= last) e[ne++] = (nvt_entry){(u) + 2, sub, send, peer, j, 1, reduce}
        if (par >= 0) TREE(hk, 0, 1, AT(par), 1);
        for (int i = 0; i < nch; i++) TREE(coll_bt_height(ch[i], M), 1 + i, 0, AT(ch[i]), 1);
        for (int i = 0; i < nch; i++) TREE(H + d, 3 + i, 1, AT(ch[i]), 0);
        if (par >= 0) TREE(H + d - 1, 5, 0, AT(par), 0);
#undef TREE
#undef AT
    }
    for (int i = 1; i < ne; i++) /* insertion sort: ten entries at most, nearly in order */
        for (int m = i; m > 0 && nvt_cmp(&e[m - 1], &e[m]) > 0; m--) {
            nvt_entry x = e[m];
            e[m] = e[m - 1], e[m - 1] = x;
        }
    out->nsend = out->nrecv = 0;
    for (int i = 0; i < ne; i++) {
        int64_t b = coll_chunk_range_bytes(p->bytes, p->nchunks, e[i].chunk, e[i].nchunk);
        coll_step_add_merged(out, e[i].send, &(coll_xfer){e[i].peer, b, 0, 0, e[i].reduce});
    }
}
