/* Group topology for the topology-aware collectives (which node each member
 * is on, NVLS capability) and the lowering of NVSwitch and SHARP transfers to
 * flows between members that the engine and the analytical cost run. */
#include <stdlib.h>
#include <string.h>

#include "coll_algos.h"
#include "coll_params.h"
#include "msccl.h"
#include "util.h"

static unsigned long topo_serial;

coll_topo *coll_topo_new(int n, const int *node_ids, int nvls)
{
    coll_topo *t = ts_calloc(1, sizeof *t);
    t->serial = ++topo_serial;
    t->n = n;
    t->nvls = nvls;
    t->node = ts_malloc(n * sizeof(int));
    t->local = ts_malloc(n * sizeof(int));
    t->order = ts_malloc(n * sizeof(int));
    int *ids = ts_malloc(n * sizeof(int)); /* distinct node ids, in order of appearance */
    int top = 0;                           /* the largest id so far */
    for (int i = 0; i < n; i++) {
        int k = t->nnodes;
        /* placements list members node by node: the last node, or a new
         * largest id, are found without a search */
        if (node_ids && k > 0 && ids[k - 1] == node_ids[i]) k--;
        else if (node_ids && (k == 0 || node_ids[i] > top)) top = node_ids[i];
        else if (node_ids)
            for (k = 0; k < t->nnodes && ids[k] != node_ids[i]; k++)
                ;
        if (k == t->nnodes) ids[t->nnodes++] = node_ids ? node_ids[i] : i;
        t->node[i] = k;
    }
    free(ids);
    t->first = ts_calloc(t->nnodes + 1, sizeof(int));
    for (int i = 0; i < n; i++) t->first[t->node[i] + 1]++;
    for (int k = 0; k < t->nnodes; k++) t->first[k + 1] += t->first[k];
    int *fill = ts_calloc(t->nnodes, sizeof(int));
    for (int i = 0; i < n; i++) {
        int k = t->node[i];
        t->local[i] = fill[k];
        t->order[t->first[k] + fill[k]++] = i;
    }
    free(fill);
    t->ppn = t->nnodes ? n / t->nnodes : 0;
    for (int k = 0; k < t->nnodes; k++)
        if (t->first[k + 1] - t->first[k] != t->ppn) t->ppn = 0;
    return t;
}

void coll_topo_set_nics(coll_topo *t, const int *nic_ids, const double *share)
{
    free(t->nic);
    free(t->nic_share);
    t->nic = NULL, t->nic_share = NULL, t->nnics = 0;
    if (!nic_ids || t->n < 1) return;
    t->nic = ts_malloc(t->n * sizeof *t->nic);
    t->nic_share = ts_malloc(t->n * sizeof *t->nic_share);
    /* pools numbered node by node, in order of first appearance there */
    for (int k = 0; k < t->nnodes; k++) {
        int base = t->nnics;
        for (int x = t->first[k]; x < t->first[k + 1]; x++) {
            int i = t->order[x], p = base;
            t->nic[i] = -1;
            if (nic_ids[i] < 0) continue;
            for (int y = t->first[k]; y < x && p == base; y++) {
                int j = t->order[y];
                if (nic_ids[j] == nic_ids[i] && t->nic[j] >= 0) p = t->nic[j] + 1;
            }
            if (p > base) {
                t->nic[i] = p - 1;
                continue;
            }
            t->nic[i] = t->nnics;
            t->nic_share[t->nnics++] = share && share[i] > 0 ? share[i] : 1;
        }
    }
}

static void links_clear(coll_topo *t)
{
    free(t->link_bw);
    free(t->pair_off);
    free(t->link_off);
    free(t->pair_link);
    t->link_bw = NULL, t->pair_off = NULL, t->link_off = NULL, t->pair_link = NULL, t->nlinks = 0;
}

/* Whether node k's members have the classes node j's have, in local order. */
static int same_classes(const coll_topo *t, const int *cls, int k, int j)
{
    int m = t->first[k + 1] - t->first[k];
    if (j < 0 || t->first[j + 1] - t->first[j] != m) return 0;
    for (int x = 0; x < m; x++)
        if (cls[t->order[t->first[k] + x]] != cls[t->order[t->first[j] + x]]) return 0;
    return 1;
}

int coll_topo_set_links(coll_topo *t, coll_links_fn fn, void *ctx) { return coll_topo_set_links_by(t, fn, ctx, NULL); }

int coll_topo_set_links_by(coll_topo *t, coll_links_fn fn, void *ctx, const int *cls)
{
    links_clear(t);
    if (!fn || t->n < 1) return 0;
    size_t npairs = 0, pcap = 0, cap = 0, lcap = 0;
    t->pair_off = ts_malloc(t->nnodes * sizeof *t->pair_off);
    t->link_off = ts_malloc(t->nnodes * sizeof *t->link_off);
    const void **seen = NULL; /* the current node's links, by id - its first */
    int pbase = 0;            /* the previous node's first link */
    for (int k = 0; k < t->nnodes; k++) {
        int m = t->first[k + 1] - t->first[k], base = t->nlinks;
        if (cls && k > 0 && same_classes(t, cls, k, k - 1)) {
            /* the previous node's routes, on links of this node's own: its
             * table, each link pn further */
            int pn = base - pbase;
            pbase = base;
            if (pn > 0) ts_grow(&t->link_bw, sizeof *t->link_bw, &lcap, (size_t)base + pn);
            for (int i = 0; i < pn; i++) t->link_bw[base + i] = t->link_bw[base - pn + i];
            t->pair_off[k] = t->pair_off[k - 1];
            t->link_off[k] = t->link_off[k - 1] + pn;
            t->nlinks += pn;
            continue;
        }
        t->pair_off[k] = (int)npairs;
        t->link_off[k] = 0;
        npairs += (size_t)m * m;
        ts_grow(&t->pair_link, sizeof *t->pair_link, &pcap, npairs * COLL_ROUTE_HOPS);
        pbase = base;
        for (int x = 0; x < m; x++)
            for (int y = 0; y < m; y++) {
                int *pl = t->pair_link + ((size_t)t->pair_off[k] + (size_t)x * m + y) * COLL_ROUTE_HOPS;
                const void *ids[COLL_ROUTE_HOPS];
                double bw[COLL_ROUTE_HOPS];
                int nl = x == y ? 0 : fn(ctx, t->order[t->first[k] + x], t->order[t->first[k] + y], COLL_ROUTE_HOPS, ids, bw);
                if (nl < 0 || nl > COLL_ROUTE_HOPS) {
                    free(seen);
                    links_clear(t);
                    return 0;
                }
                for (int h = 0; h < COLL_ROUTE_HOPS; h++) {
                    if (h >= nl) {
                        pl[h] = -1;
                        continue;
                    }
                    int j = base;
                    while (j < t->nlinks && seen[j - base] != ids[h]) j++;
                    if (j == t->nlinks) {
                        size_t c2 = cap;
                        ts_grow(&seen, sizeof *seen, &c2, (size_t)(j - base) + 1);
                        cap = c2;
                        ts_grow(&t->link_bw, sizeof *t->link_bw, &lcap, (size_t)j + 1);
                        seen[j - base] = ids[h];
                        t->link_bw[j] = bw[h];
                        t->nlinks++;
                    }
                    pl[h] = j;
                }
            }
    }
    free(seen);
    if (t->nlinks == 0) links_clear(t);
    return t->nlinks > 0;
}

void coll_topo_set_fabric(coll_topo *t, const coll_fabric *f, const int *node_ids, double share)
{
    free(t->fab_node);
    t->fabric = NULL, t->fab_node = NULL, t->fab_share = 0;
    if (!f || f->nids <= 0 || !f->route || !node_ids || t->nnodes < 2) return;
    t->fabric = f;
    t->fab_share = share > 0 && share <= 1 ? share : 1;
    t->fab_node = ts_malloc(t->nnodes * sizeof *t->fab_node);
    for (int k = 0; k < t->nnodes; k++) t->fab_node[k] = node_ids[t->order[t->first[k]]];
}

void coll_topo_free(coll_topo *t)
{
    if (!t) return;
    links_clear(t);
    free(t->fab_node);
    free(t->nic);
    free(t->nic_share);
    free(t->node);
    free(t->local);
    free(t->first);
    free(t->order);
    free(t);
}

/* The member after (dir = 1) or before (dir = -1) me on its node. */
/* The member of the same local index on the next (dir = 1) or previous
 * node: where CollNet's switch traffic runs (every node has t->ppn members). */
static int rail_neighbour(const coll_topo *t, int me, int dir)
{
    int k = ((t->node[me] + dir) % t->nnodes + t->nnodes) % t->nnodes;
    return t->order[t->first[k] + t->local[me]];
}

static int neighbour(const coll_topo *t, int me, int dir)
{
    int k = t->node[me], cnt = t->first[k + 1] - t->first[k];
    return t->order[t->first[k] + ((t->local[me] + dir) % cnt + cnt) % cnt];
}

/* Bytes rank me sends to and receives from its node's switch in st, and
 * whether it does at all; the switch entries are removed when strip. */
typedef struct {
    int64_t up, down;
    int has_up, has_down;
} swio;

static swio switch_io(const coll_plan *p, coll_step *st, int strip)
{
    swio io = {0, 0, 0, 0};
    int k = 0;
    for (int i = 0; i < st->nsend; i++)
        if (coll_is_switch(p->n, st->send[i].peer)) {
            io.up += st->send[i].bytes;
            io.has_up = 1;
        } else {
            st->send[k++] = st->send[i];
        }
    if (strip) st->nsend = k;
    k = 0;
    for (int i = 0; i < st->nrecv; i++)
        if (coll_is_switch(p->n, st->recv[i].peer)) {
            io.down += st->recv[i].bytes;
            io.has_down = 1;
        } else {
            st->recv[k++] = st->recv[i];
        }
    if (strip) st->nrecv = k;
    return io;
}

/* view(p, who, out): the logical step or merged view of member who. */
static void lower(const coll_plan *p, int me, coll_step *out, int s, int merged)
{
    if (merged) coll_plan_merged(p, me, out);
    else coll_plan_step(p, me, s, out);
    int sharp = coll_algo_get(p->algo)->family == COLL_FAM_COLLNET;
    if (!p->topo || (!p->topo->nvls && !sharp)) return;
    swio mine = switch_io(p, out, 1);
    int next = sharp ? rail_neighbour(p->topo, me, 1) : neighbour(p->topo, me, 1);
    int prev = sharp ? rail_neighbour(p->topo, me, -1) : neighbour(p->topo, me, -1);
    int cap = merged ? p->merged_width : p->width;
    coll_step *tmp = coll_step_new(cap);
    if (merged) coll_plan_merged(p, next, tmp);
    else coll_plan_step(p, next, s, tmp);
    swio nx = switch_io(p, tmp, 0);
    if (merged) coll_plan_merged(p, prev, tmp);
    else coll_plan_step(p, prev, s, tmp);
    swio pv = switch_io(p, tmp, 0);
    coll_step_free(tmp);
    if (next != me && (mine.has_up || nx.has_down))
        coll_add_send(out, next, mine.up > nx.down ? mine.up : nx.down, 0, 0, 0);
    if (prev != me && (pv.has_up || mine.has_down))
        coll_add_recv(out, prev, pv.up > mine.down ? pv.up : mine.down, 0, 0, 0);
}

void coll_plan_step_phys(const coll_plan *p, int me, int s, coll_step *out) { lower(p, me, out, s, 0); }

/* The merged views of the last plan asked about, member by member as they
 * are asked for: the reference analytical cost (coll_cost_fast(0)) walks
 * every member's view three times (routes, flows, alpha), the policy's
 * probes and the engine read them again (coll_cost's one pass reads each
 * once, through coll_plan_merged_phys_once). A merged view is a
 * pure function of the plan and its topology (coll_topo_new's serial stands
 * for the topology's contents); MSCCL's steps read the loaded program, and
 * all-to-allv's the caller's sizes, so those are not kept. */
#define MVIEW_MAX_XFERS ((int64_t)1 << 19) /* entries per direction: 12 MiB each */

/* Member k's view is kept when stamp[k] == cur: a new plan only advances
 * cur (O(1)), so plans that alternate (the engine's groups) cost nothing
 * beyond the views they compute anyway. */
static struct {
    coll_plan p;
    unsigned long serial;
    int cap;                /* entries per direction per member */
    unsigned cur, *stamp;
    int *nsend, *nrecv;
    coll_xfer *send, *recv; /* member me's at me * cap */
    size_t nmem, nalloc;    /* members and entries allocated */
    int valid;
} mview;

static int mview_on = 1;

void coll_view_memo(int on)
{
    mview_on = on;
    mview.valid = 0; /* forget the last plan either way */
}

/* The protocol is not compared: no schedule and no lowering reads it (the
 * plan's setup runs before a protocol is set, and the wire bytes are
 * applied to the view by its readers), so the selection's probes of one
 * algorithm with each protocol read one set of views. */
static int mview_same(const coll_plan *p)
{
    const coll_plan *q = &mview.p;
    return mview.valid && q->coll == p->coll && q->n == p->n && q->root == p->root && q->bytes == p->bytes &&
           q->algo == p->algo && q->nsteps == p->nsteps && q->nchunks == p->nchunks &&
           q->width == p->width && q->merged_width == p->merged_width &&
           mview.serial == (p->topo ? p->topo->serial : 0);
}

/* The cached view slot of member me of p (-1 when p is not kept). */
static int mview_slot(const coll_plan *p, int me)
{
    if (!mview_on || p->vbytes || (p->topo && !p->topo->serial) || coll_algo_get(p->algo)->step == coll_msccl_step)
        return -1;
    int cap = p->merged_width + 1;
    if ((int64_t)p->n * cap > MVIEW_MAX_XFERS) return -1;
    if (!mview_same(p)) {
        size_t need = (size_t)p->n * cap;
        if (need > mview.nalloc) {
            mview.send = ts_realloc(mview.send, need * sizeof *mview.send);
            mview.recv = ts_realloc(mview.recv, need * sizeof *mview.recv);
            mview.nalloc = need;
        }
        if ((size_t)p->n > mview.nmem) {
            mview.stamp = ts_realloc(mview.stamp, p->n * sizeof *mview.stamp);
            mview.nsend = ts_realloc(mview.nsend, p->n * sizeof *mview.nsend);
            mview.nrecv = ts_realloc(mview.nrecv, p->n * sizeof *mview.nrecv);
            memset(mview.stamp + mview.nmem, 0, (p->n - mview.nmem) * sizeof *mview.stamp);
            mview.nmem = p->n;
        }
        if (++mview.cur == 0) { /* wrapped: no stamp may match */
            memset(mview.stamp, 0, mview.nmem * sizeof *mview.stamp);
            mview.cur = 1;
        }
        mview.p = *p;
        mview.serial = p->topo ? p->topo->serial : 0;
        mview.cap = cap;
        mview.valid = 1;
    }
    return me;
}

void coll_plan_merged_phys(const coll_plan *p, int me, coll_step *out)
{
    out->nsend = out->nrecv = 0;
    if (p->nsteps == 0) return;
    int k = mview_slot(p, me);
    if (k < 0) {
        lower(p, me, out, 0, 1);
        return;
    }
    coll_xfer *s = mview.send + (size_t)k * mview.cap, *r = mview.recv + (size_t)k * mview.cap;
    if (mview.stamp[k] != mview.cur) {
        lower(p, me, out, 0, 1);
        if (out->nsend > mview.cap || out->nrecv > mview.cap) return; /* not kept */
        mview.nsend[k] = out->nsend;
        mview.nrecv[k] = out->nrecv;
        memcpy(s, out->send, out->nsend * sizeof *s);
        memcpy(r, out->recv, out->nrecv * sizeof *r);
        mview.stamp[k] = mview.cur;
        return;
    }
    out->nsend = mview.nsend[k];
    out->nrecv = mview.nrecv[k];
    memcpy(out->send, s, out->nsend * sizeof *s);
    memcpy(out->recv, r, out->nrecv * sizeof *r);
}

/* The same view, not kept: for a caller that reads each member's view once
 * per plan (coll_cost's one pass), where keeping it only costs the copies. */
coll_merged_fn coll_plan_merged_direct(const coll_plan *p)
{
    const coll_algo *a = coll_algo_get(p->algo);
    if (p->nsteps == 0 || !a || !a->merged) return NULL;
    if (p->topo && (p->topo->nvls || a->family == COLL_FAM_COLLNET)) return NULL; /* lower() changes the view */
    return a->merged;
}

void coll_plan_merged_phys_once(const coll_plan *p, int me, coll_step *out)
{
    out->nsend = out->nrecv = 0;
    if (p->nsteps == 0) return;
    lower(p, me, out, 0, 1);
}
