/* Layout search: the enumeration of layouts (table-driven dimensions), the
 * rule and memory pruning, the analytical estimate and the ranking. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "util.h"

static const char *obj_names[SRCH_NOBJECTIVES] = {"time", "mfu", "cost"};

const char *srch_objective_name(srch_objective o) { return o < SRCH_NOBJECTIVES ? obj_names[o] : "?"; }

int srch_objective_from_name(const char *s)
{
    for (int i = 0; i < SRCH_NOBJECTIVES; i++)
        if (strcmp(s, obj_names[i]) == 0) return i;
    return -1;
}

static const struct {
    const char *name;
    srch_space space;
} spaces[] = {{"3d", SRCH_3D}, {"4d", SRCH_4D}, {"all", SRCH_ALL}};

const char *srch_space_name(srch_space s)
{
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (spaces[i].space == s) return spaces[i].name;
    return "?";
}

int srch_space_from_name(const char *s)
{
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (strcmp(s, spaces[i].name) == 0) return spaces[i].space;
    return -1;
}

/* ---- enumeration ---- */

/* The values each dimension takes (rows: change the space here). */
static const int mbs_values[] = {1, 2, 4, 8};
static const int vpp_values[] = {2, 3, 4, 6, 8};   /* interleaved: virtual stages per rank */
#define NELEM(a) (sizeof a / sizeof a[0])

typedef struct vec {
    srch_cand *c;
    size_t n, cap;
} vec;

static void push(vec *v, const srch_params *p, const wl_layout *l)
{
    if (!srch_satisfies(p, l)) return;
    ts_grow(&v->c, sizeof *v->c, &v->cap, v->n + 1);
    memset(&v->c[v->n], 0, sizeof v->c[v->n]);
    v->c[v->n++].l = *l;
}

static void base(wl_layout *l, int gbs)
{
    memset(l, 0, sizeof *l);
    l->tp = l->pp = l->cp = l->ep = l->vpp = l->mbs = l->gx = l->gy = l->gz = 1;
    l->gbs = gbs;
    l->schedule = WL_1F1B;
}

/* The per-layout options shared by both families: mbs, zero, sp, recompute. */
static void push_options(vec *v, const srch_params *p, wl_layout *l, int with_sp)
{
    for (size_t b = 0; b < NELEM(mbs_values); b++)
        for (int z = 0; z <= 3; z++)
            for (int sp = 0; sp <= with_sp; sp++)
                for (int r = 0; r <= WL_RC_FULL; r++) { /* Megatron's three modes */
                    l->mbs = mbs_values[b], l->zero = z, l->sp = sp, l->recompute = r;
                    push(v, p, l);
                }
}

static void enum_megatron(vec *v, const srch_params *p, const wl_model *m, int n)
{
    int all = p->space == SRCH_ALL;
    for (int tp = 1; tp <= n; tp++) {
        if (n % tp) continue;
        for (int pp = 1; pp <= n / tp; pp++) {
            if ((n / tp) % pp) continue;
            for (int cp = 1; cp <= n / (tp * pp); cp++) {
                if ((n / (tp * pp)) % cp || (cp > 1 && !all)) continue;
                int dp = n / (tp * pp * cp);
                for (int ep = 1; ep <= dp; ep++) {
                    if (dp % ep || (ep > 1 && (!all || !m->experts))) continue;
                    wl_layout l;
                    base(&l, p->gbs);
                    l.tp = tp, l.pp = pp, l.cp = cp, l.dp = dp, l.ep = ep;
                    /* schedules: 1F1B, interleaved with each vpp, ZB-H1; one when pp = 1 */
                    push_options(v, p, &l, tp > 1);
                    if (pp == 1) continue;
                    l.schedule = WL_INTERLEAVED;
                    for (size_t k = 0; k < NELEM(vpp_values); k++) {
                        l.vpp = vpp_values[k];
                        push_options(v, p, &l, tp > 1);
                    }
                    l.schedule = WL_ZBH1, l.vpp = 1;
                    push_options(v, p, &l, tp > 1);
                }
            }
        }
    }
}

static void enum_axonn(vec *v, const srch_params *p, int n)
{
    for (int gx = 1; gx <= n; gx++) {
        if (n % gx) continue;
        for (int gy = 1; gy <= n / gx; gy++) {
            if ((n / gx) % gy) continue;
            for (int gz = 1; gz <= n / (gx * gy); gz++) {
                if ((n / (gx * gy)) % gz) continue;
                wl_layout l;
                base(&l, p->gbs);
                l.axonn = 1, l.gx = gx, l.gy = gy, l.gz = gz, l.dp = n / (gx * gy * gz);
                push_options(v, p, &l, 0);
            }
        }
    }
}

size_t srch_enumerate(const wl_model *m, const srch_params *p, srch_cand **out)
{
    vec v = {NULL, 0, 0};
    for (int n = p->ngpus; n >= 1; n /= 2) {
        if (p->space & SRCH_3D) enum_megatron(&v, p, m, n);
        if (p->space & SRCH_4D) enum_axonn(&v, p, n);
        if (p->objective != SRCH_COST || n % 2) break;   /* cost: N, N/2, N/4, ... GPUs */
    }
    *out = v.c;
    return v.n;
}

/* ---- evaluation ---- */

double srch_mfu(const wl_model *m, const srch_params *p, const wl_layout *l, double iter)
{
    double peak = p->gpu->peak[p->dtype];
    return wl_iteration_flops(m, l, p->seq, 1) / (iter * wl_layout_ngpus(l) * peak);
}

double srch_score(const wl_model *m, const srch_params *p, const wl_layout *l, double iter)
{
    switch (p->objective) {
    case SRCH_MFU: return -srch_mfu(m, p, l, iter);
    case SRCH_COST: return iter * wl_layout_ngpus(l) / ((double)l->gbs * p->seq); /* GPU-seconds per token */
    default: return iter;
    }
}

void srch_evaluate(const wl_model *m, const srch_params *p, srch_cand *c, char *why, size_t whylen)
{
    /* without a buffer the reasons are not formatted (ts_err skips them): a
     * search rejects about half of its layouts, each message a vsnprintf */
    if (!why) whylen = 0;
    if (whylen) why[0] = 0;
    if (wl_layout_check(&c->l, m, p->seq, wl_layout_ngpus(&c->l), why, whylen) < 0) {
        c->status = SRCH_RULE;
        return;
    }
    wl_layout l = c->l; /* with the stack's kernels; the candidate keeps the layout as enumerated */
    wl_layout_apply_stack(&l, p->stack);
    mem_breakdown mb;
    mem_estimate(m, &l, p->seq, p->dtype, p->gpu->hbm_bytes, &mb);
    c->mem = mb.total;
    if (!mb.fits) {
        c->status = SRCH_MEMORY;
        ts_err(why, whylen, "needs %.2f GiB per GPU (pipeline stage %d), the GPU has %.2f GiB", mb.total / 1073741824.0,
               mb.stage, mb.capacity / 1073741824.0);
        return;
    }
    wl_opts o = {p->seq, p->dtype, p->gpu, p->net, 1, 1, p->stack};
    wl_est e;
    if (wl_estimate(m, &l, &o, &e, why, whylen) < 0) {
        c->status = SRCH_FAILED;
    } else {
        c->iter = e.iter, c->bubble = e.bubble, c->dp_exposed = e.dp_exposed;
        c->status = SRCH_ESTIMATED;
    }
    if (c->status == SRCH_ESTIMATED && !(c->iter > 0)) {
        c->status = SRCH_FAILED;
        ts_err(why, whylen, "estimated iteration time %g is not positive", c->iter);
    }
    if (c->status == SRCH_ESTIMATED) c->score = srch_score(m, p, &c->l, c->iter);
}

void srch_count(const srch_cand *c, size_t n, srch_counts *out)
{
    memset(out, 0, sizeof *out);
    out->enumerated = n;
    for (size_t i = 0; i < n; i++) {
        if (c[i].status == SRCH_RULE) out->rule++;
        else if (c[i].status == SRCH_MEMORY) out->memory++;
        else if (c[i].status == SRCH_ESTIMATED) out->estimated++;
        else if (c[i].status == SRCH_FAILED) out->failed++;
    }
}

static const srch_cand *rank_base;

static int by_score(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = rank_base[i].score, y = rank_base[j].score;
    if (x < y) return -1;
    if (x > y) return 1;
    /* equal objective: less memory per GPU first, then enumeration order */
    if (rank_base[i].mem != rank_base[j].mem) return rank_base[i].mem < rank_base[j].mem ? -1 : 1;
    return i < j ? -1 : i > j;
}

size_t srch_rank(const srch_cand *c, size_t n, size_t **order)
{
    size_t k = 0;
    *order = ts_malloc((n ? n : 1) * sizeof **order);
    for (size_t i = 0; i < n; i++)
        if (c[i].status == SRCH_ESTIMATED) (*order)[k++] = i;
    rank_base = c;
    qsort(*order, k, sizeof **order, by_score);
    return k;
}
