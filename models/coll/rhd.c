/* Recursive halving/doubling family: recursive-doubling all-reduce and all-gather,
 * recursive-halving reduce-scatter and Rabenseifner's all-reduce (halving
 * reduce-scatter then doubling all-gather). Group sizes that are not powers of
 * two fold the rem = n - p2 extra ranks onto ranks 0..rem-1 first and unfold
 * them last (Rabenseifner 2004, Thakur et al. 2005). */
#include "coll_algos.h"

typedef struct {
    int p2, rem, L, pre; /* largest power of two <= n, n - p2, log2(p2), fold steps */
} geo;

static geo geometry(int n)
{
    geo g = {1, 0, 0, 0};
    while (g.p2 * 2 <= n) {
        g.p2 *= 2;
        g.L++;
    }
    g.rem = n - g.p2;
    g.pre = g.rem > 0;
    return g;
}

/* Chunks owned by the block of virtual ranks [a, b): [a, b) itself and, for
 * the folded ranks, [p2 + a, p2 + min(b, rem)). One or two transfers. */
static void add_block(const coll_plan *p, const geo *g, coll_step *st, int send, int peer, int a, int b,
                      int reduce)
{
    coll_add_range(p, st, send, peer, a, b - a, reduce);
    if (a < g->rem) {
        int hb = b < g->rem ? b : g->rem;
        coll_add_range(p, st, send, peer, g->p2 + a, hb - a, reduce);
    }
}

static void setup(coll_plan *p, int rab)
{
    geo g = geometry(p->n);
    p->nchunks = p->n;
    int core = rab && p->coll == OG_ALLREDUCE ? 2 * g.L : g.L;
    p->nsteps = core + 2 * g.pre;
    p->width = 2;
    p->merged_width = g.L + 1;
}

/* Recursive doubling all-gather, step k of the core: blocks of 2^k virtual ranks. */
static void ag_core(const coll_plan *p, const geo *g, int v, int k, coll_step *out)
{
    int d = 1 << k, peer = v ^ d, a = v & ~(d - 1), pa = peer & ~(d - 1);
    add_block(p, g, out, 1, peer, a, a + d, 0);
    add_block(p, g, out, 0, peer, pa, pa + d, 0);
}

/* Recursive halving reduce-scatter, step k: keep one half of the 2d block, send the other. */
static void rs_core(const coll_plan *p, const geo *g, int v, int k, coll_step *out)
{
    int d = g->p2 >> (k + 1), peer = v ^ d, a = v & ~(2 * d - 1);
    int keep = (v & d) ? a + d : a, give = (v & d) ? a : a + d;
    add_block(p, g, out, 1, peer, give, give + d, 1);
    add_block(p, g, out, 0, peer, keep, keep + d, 1);
}

static void step(const coll_plan *p, int me, int s, coll_step *out, int rab)
{
    geo g = geometry(p->n);
    int n = p->n, extra = me >= g.p2, partner = extra ? me - g.p2 : me + g.p2;
    int has_extra = !extra && me < g.rem;
    rab = rab && p->coll == OG_ALLREDUCE;
    int core = rab ? 2 * g.L : g.L;
    if (g.pre && s == 0) { /* fold: the extra rank hands its data to its partner */
        if (p->coll == OG_ALLGATHER) {
            if (extra) coll_add_range(p, out, 1, partner, me, 1, 0);
            else if (has_extra) coll_add_range(p, out, 0, partner, partner, 1, 0);
        } else {
            if (extra) coll_add_range(p, out, 1, partner, 0, n, 1);
            else if (has_extra) coll_add_range(p, out, 0, partner, 0, n, 1);
        }
        return;
    }
    if (g.pre && s == core + 1) { /* unfold: the partner returns the result */
        int send = !extra;
        if (!extra && !has_extra) return;
        int ex = extra ? me : partner;
        switch (p->coll) {
        case OG_ALLGATHER: /* everything but the extra rank's own chunk */
            coll_add_range(p, out, send, partner, 0, ex, 0);
            coll_add_range(p, out, send, partner, ex + 1, n - ex - 1, 0);
            break;
        case OG_REDUCESCATTER: coll_add_range(p, out, send, partner, ex, 1, 0); break;
        default: coll_add_range(p, out, send, partner, 0, n, 0);
        }
        return;
    }
    if (extra) return;
    int k = s - g.pre;
    switch (p->coll) {
    case OG_ALLGATHER: ag_core(p, &g, me, k, out); break;
    case OG_REDUCESCATTER: rs_core(p, &g, me, k, out); break;
    default:
        if (rab) {
            if (k < g.L) rs_core(p, &g, me, k, out);
            else ag_core(p, &g, me, k - g.L, out);
        } else { /* recursive doubling: the whole buffer each step */
            coll_add_range(p, out, 1, me ^ (1 << k), 0, n, 1);
            coll_add_range(p, out, 0, me ^ (1 << k), 0, n, 1);
        }
    }
}

void coll_rhd_setup(coll_plan *p) { setup(p, 0); }
void coll_rhd_step(const coll_plan *p, int me, int s, coll_step *out) { step(p, me, s, out, 0); }
void coll_rab_setup(coll_plan *p) { setup(p, 1); }
void coll_rab_step(const coll_plan *p, int me, int s, coll_step *out) { step(p, me, s, out, 1); }
