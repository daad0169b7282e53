/* Uncalibrated and cross-validated calibrated predictions of one measured
 * sweep: the calibration terms are fitted on every other size and predict the
 * sizes they did not see (both halves), in a child that loads the cluster. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"
#include "val.h"

/* The bandwidth term stands for the tier's bw_frac, which the platform's
 * links carry (one platform per process): a change of it by a factor f is
 * applied as the same factor on every family's and protocol's useful bytes
 * per wire byte (proto_bw, read at call time), which moves the time of the
 * bytes exactly as f on the links would for the run's own tier. */
void val_cal_use(const val_cal_set *cs, const val_cal_run *run)
{
    coll_params q = cs->cur;
    double f = cs->bw_eff[run->scope];
    for (int a = 0; a < COLL_NFAMS; a++)
        for (int p = 0; p < COLL_NPROTOS; p++) q.proto_bw[a][p] *= f;
    coll_params_set(&q);
}

/* The fitted points of every run, predicted in order with the fit's terms. */
static int predict(void *ctx, double *pred, int npts, char *err, size_t errlen)
{
    const val_cal_set *cs = ctx;
    int k = 0;
    for (int r = 0; r < cs->nruns; r++) {
        const val_cal_run *run = &cs->runs[r];
        val_cal_use(cs, run);
        for (int i = 0; i < run->nidx && k < npts; i++, k++) {
            val_point pt;
            if (val_sweep_size(run->sw, run->sizes[run->idx[i]], &pt, err, errlen) < 0) return -1;
            pred[k] = pt.time;
        }
    }
    return 0;
}

int val_cal_predict(const val_cal_run *run, const int *idx, int n, double *out, char *err, size_t errlen)
{
    /* with the parameters active as they stand (val_cal_use) */
    for (int i = 0; i < n; i++) {
        val_point pt;
        if (val_sweep_size(run->sw, run->sizes[idx[i]], &pt, err, errlen) < 0) return -1;
        out[i] = pt.time;
    }
    return 0;
}

/* prior, sd: where the cluster puts the term and how far the fit may
 * stray from it before the pull counts (val_term). */
static void add_term(val_cal_set *cs, const val_term_at *at, double *value, double lo, double hi, double prior,
                     double sd)
{
    static const char *const kinds[] = {"bw_frac", "base_lat", "hop_lat", "proto_bw"};
    int k = cs->nterms++;
    cs->terms[k] = (val_term){cs->names[k], value, lo, hi, prior, sd};
    cs->at[k] = *at;
    if (at->kind == VAL_T_BWFRAC)
        snprintf(cs->names[k], sizeof cs->names[k], "bw_frac.%s", coll_tier_name(at->tier));
    else if (at->kind == VAL_T_BASE || at->kind == VAL_T_PBW)
        snprintf(cs->names[k], sizeof cs->names[k], "%s.%s.%s", kinds[at->kind], coll_family_name(at->fam),
                 coll_proto_name(at->proto));
    else
        snprintf(cs->names[k], sizeof cs->names[k], "%s.%s.%s.%s", kinds[at->kind], coll_tier_name(at->tier),
                 coll_family_name(at->fam), coll_proto_name(at->proto));
}

/* The start of a term: its value when that is inside (lo, hi) by 0.1% of
 * the range, else 2% of the range from the bound (20 us for a base latency
 * the cluster leaves at 0). The transformation has no gradient at a bound,
 * and near the lower bound 0 it is exponential (v = hi e^u): a latency
 * started at 1e-3 of its span that the first steps push lower (another
 * latency taking its share) would not come back. */
static double inside(double v, double lo, double hi)
{
    double m = (hi - lo) * 1e-3, far = (hi - lo) * 0.02;
    return v < lo + m ? lo + far : v > hi - m ? hi - far : v;
}

static int tier_of(const coll_params *q, int scope) { return scope == VAL_INTER ? COLL_TIER_NIC : q->intra_tier; }

/* The terms: per scope present, its tier's bandwidth fraction (as a factor
 * on the routes); per family and protocol the selection runs, its base
 * latency and (fit_lat) its per-step latency on each scope's tier. */
/* The (family, protocol) whose bandwidth the tiers' fractions carry: the
 * Simple one with the most points, else the one with the most points. */
static void pick_ref(int used[COLL_NFAMS][COLL_NPROTOS][2], int *rf, int *rp)
{
    int best = -1;
    *rf = *rp = -1;
    for (int simple = 1; simple >= 0 && best < 0; simple--)
        for (int f = 0; f < COLL_NFAMS; f++)
            for (int p = 0; p < COLL_NPROTOS; p++) {
                int k = used[f][p][0] + used[f][p][1];
                if (k > 0 && (!simple || p == COLL_SIMPLE) && k > best) best = k, *rf = f, *rp = p;
            }
}

static int make_terms(val_cal_set *cs, int fit_lat, char *err, size_t errlen)
{
    int used[COLL_NFAMS][COLL_NPROTOS][2] = {{{0}}}, scopes[2] = {0, 0}, rf, rp;
    cs->nterms = 0;
    cs->cur = cs->base;
    cs->bw_eff[VAL_INTRA] = cs->bw_eff[VAL_INTER] = 1;
    coll_params_set(&cs->base);
    for (int r = 0; r < cs->nruns; r++) {
        val_cal_run *run = &cs->runs[r];
        scopes[run->scope] = 1;
        for (int i = 0; i < run->nidx; i++) {
            val_point pt;
            if (val_sweep_size(run->sw, run->sizes[run->idx[i]], &pt, err, errlen) < 0) return -1;
            used[coll_family_of(pt.algo)][pt.proto][run->scope]++;
        }
    }
    pick_ref(used, &rf, &rp);
    for (int sc = VAL_INTRA; sc <= VAL_INTER; sc++) {
        if (!scopes[sc]) continue;
        double b0 = cs->base.bw_frac[tier_of(&cs->base, sc)];
        val_term_at at = {VAL_T_BWFRAC, tier_of(&cs->base, sc), 0, 0, sc};
        add_term(cs, &at, &cs->bw_eff[sc], VAL_FRAC_LO / b0, VAL_FRAC_HI / b0, 1, VAL_PRIOR_SD_BW);
    }
    for (int f = 0; f < COLL_NFAMS; f++)
        for (int p = 0; p < COLL_NPROTOS; p++) {
            if (!used[f][p][0] && !used[f][p][1]) continue;
            if (cs->nterms >= VAL_MAX_TERMS) return ts_err(err, errlen, "fit: more than %d terms", VAL_MAX_TERMS);
            val_term_at at = {VAL_T_BASE, 0, f, p, 0};
            cs->cur.base_lat[f][p] = inside(cs->cur.base_lat[f][p], 0, VAL_BASE_HI);
            add_term(cs, &at, &cs->cur.base_lat[f][p], 0, VAL_BASE_HI, cs->base.base_lat[f][p], VAL_BASE_HI);
            for (int sc = VAL_INTRA; fit_lat && sc <= VAL_INTER; sc++) {
                if (!used[f][p][sc]) continue;
                if (cs->nterms >= VAL_MAX_TERMS) return ts_err(err, errlen, "fit: more than %d terms", VAL_MAX_TERMS);
                val_term_at h = {VAL_T_HOP, tier_of(&cs->base, sc), f, p, sc};
                double *v = &cs->cur.hop_lat[h.tier][f][p];
                *v = inside(*v, 0, VAL_HOP_HI);
                add_term(cs, &h, v, 0, VAL_HOP_HI, cs->base.hop_lat[h.tier][f][p], VAL_HOP_HI);
            }
            double *b = &cs->cur.proto_bw[f][p];
            if ((f == rf && p == rp) || *b <= 0) continue;
            if (cs->nterms >= VAL_MAX_TERMS) return ts_err(err, errlen, "fit: more than %d terms", VAL_MAX_TERMS);
            val_term_at pb = {VAL_T_PBW, 0, f, p, 0};
            *b = fmin(*b, VAL_FRAC_HI * 0.999);
            add_term(cs, &pb, b, VAL_FRAC_LO, VAL_FRAC_HI, cs->base.proto_bw[f][p], VAL_PRIOR_SD_BW);
        }
    return 0;
}

void val_cal_init(val_cal_set *cs, val_cal_run *runs, int nruns)
{
    memset(cs, 0, sizeof *cs);
    cs->runs = runs, cs->nruns = nruns;
    cs->base = cs->cur = *coll_params_get();
    cs->bw_eff[VAL_INTRA] = cs->bw_eff[VAL_INTER] = 1;
}

int val_cal_fit(val_cal_set *cs, int fit_lat, char *err, size_t errlen)
{
    int np = 0;
    for (int r = 0; r < cs->nruns; r++) np += cs->runs[r].nidx;
    if (make_terms(cs, fit_lat, err, errlen) < 0) return -1;
    if (fit_lat && np < cs->nterms && make_terms(cs, 0, err, errlen) < 0) return -1;
    double *m = ts_malloc((np + 1) * sizeof *m);
    int k = 0;
    for (int r = 0; r < cs->nruns; r++)
        for (int i = 0; i < cs->runs[r].nidx; i++) m[k++] = cs->runs[r].meas[cs->runs[r].idx[i]];
    int rc = val_fit_terms(cs->terms, cs->nterms, m, np, predict, cs, &cs->fit, err, errlen);
    free(m);
    return rc;
}

double val_cal_value(const val_cal_set *cs, int t)
{
    const val_term_at *at = &cs->at[t];
    return at->kind == VAL_T_BWFRAC ? cs->base.bw_frac[at->tier] * *cs->terms[t].value : *cs->terms[t].value;
}

void val_cal_note(const val_cal_set *cs, char *note, size_t notelen)
{
    size_t len = 0;
    note[0] = 0;
    for (int t = 0; t < cs->nterms; t++) {
        int bw = cs->at[t].kind == VAL_T_BWFRAC || cs->at[t].kind == VAL_T_PBW;
        /* a term the fit drove to its bound at 0 lands a few ulps above it (1e-180 s):
         * below a picosecond it is 0 to anyone reading the note */
        double v = val_cal_value(cs, t);
        if (!bw && fabs(v) < 1e-12) v = 0;
        int w = snprintf(note + len, len < notelen ? notelen - len : 0, "%s%s %.4g%s", t ? ", " : "", cs->names[t],
                         v * (bw ? 1 : 1e6), bw ? "" : " us");
        if (w > 0) len += (size_t)w;
    }
    if (cs->fit.kept_start && len < notelen) {
        int w = snprintf(note + len, notelen - len, " (the cluster's figures: no fit beat them on both the loss and "
                                                    "the median |error|)");
        if (w > 0) len += (size_t)w;
    } else if (cs->fit.restarted && len < notelen) {
        int w = snprintf(note + len, notelen - len, " (fitted without the sizes the cluster's figures miss by far)");
        if (w > 0) len += (size_t)w;
    }
    char bnote[512];
    if (val_terms_bound_note(cs->terms, cs->nterms, &cs->fit, bnote, sizeof bnote) && len < notelen)
        snprintf(note + len, notelen - len, " (%s)", bnote);
}

/* The term of kind at (tier, fam, proto) (-1 for a field that does not
 * matter), or -1. */
static int find(const val_cal_set *cs, val_term_kind kind, int tier, int fam, int proto)
{
    for (int t = 0; t < cs->nterms; t++) {
        const val_term_at *a = &cs->at[t];
        if (a->kind == kind && (tier < 0 || a->tier == tier) && (fam < 0 || a->fam == fam) &&
            (proto < 0 || a->proto == proto))
            return t;
    }
    return -1;
}

/* {proto: value, ...} of the terms of kind at tier (or any) and family. */
static void json_protos(FILE *f, const val_cal_set *cs, val_term_kind kind, int tier, int fam)
{
    const char *sep = "";
    fputc('{', f);
    for (int p = 0; p < COLL_NPROTOS; p++) {
        int t = find(cs, kind, tier, fam, p);
        if (t < 0) continue;
        char v[40];
        ts_fmt_double(v, sizeof v, val_cal_value(cs, t));
        fprintf(f, "%s\"%s\": %s", sep, coll_proto_name(p), v);
        sep = ", ";
    }
    fputc('}', f);
}

/* {family: {proto: value}} of the terms of kind at tier (or any). */
static void json_fams(FILE *f, const val_cal_set *cs, val_term_kind kind, int tier)
{
    const char *sep = "";
    fputc('{', f);
    for (int a = 0; a < COLL_NFAMS; a++) {
        if (find(cs, kind, tier, a, -1) < 0) continue;
        fprintf(f, "%s\"%s\": ", sep, coll_family_name(a));
        json_protos(f, cs, kind, tier, a);
        sep = ", ";
    }
    fputc('}', f);
}

/* bw_frac {tier: v}, base_lat and proto_bw {fam: {proto: v}}, hop_lat {tier: {fam: {proto: v}}}. */
static void json_kind(FILE *f, const val_cal_set *cs, val_term_kind kind)
{
    if (kind == VAL_T_BASE || kind == VAL_T_PBW) {
        json_fams(f, cs, kind, -1);
        return;
    }
    const char *sep = "";
    fputc('{', f);
    for (int tier = 0; tier < COLL_NTIERS; tier++) {
        int t = find(cs, kind, tier, -1, -1);
        if (t < 0) continue;
        fprintf(f, "%s\"%s\": ", sep, coll_tier_name(tier));
        if (kind == VAL_T_HOP) {
            json_fams(f, cs, kind, tier);
        } else {
            char v[40];
            ts_fmt_double(v, sizeof v, val_cal_value(cs, t));
            fputs(v, f);
        }
        sep = ", ";
    }
    fputc('}', f);
}

void val_cal_json(FILE *f, const val_cal_set *cs, int indent)
{
    static const char *const keys[] = {"bw_frac", "base_lat", "hop_lat", "proto_bw"};
    fprintf(f, "{");
    const char *sep = "";
    for (int k = VAL_T_BWFRAC; k <= VAL_T_PBW; k++) {
        int any = 0;
        for (int t = 0; t < cs->nterms; t++) any |= cs->at[t].kind == (val_term_kind)k;
        if (!any) continue;
        fprintf(f, "%s\n%*s\"%s\": ", sep, indent + 2, "", keys[k]);
        json_kind(f, cs, (val_term_kind)k);
        sep = ",";
    }
    fprintf(f, "\n%*s}", indent, "");
}

typedef struct child_ctx {
    const val_xval_in *in;
} child_ctx;

/* The child's answer, one block: unc, cal, fit [npts] doubles, fam, proto
 * [npts] ints, then the note. */
static size_t out_len(int npts) { return 3 * npts * sizeof(double) + 2 * npts * sizeof(int) + VAL_NOTE; }

static int run_child(void *vctx, void *out, size_t outlen, char *err, size_t errlen)
{
    const val_xval_in *in = ((child_ctx *)vctx)->in;
    (void)outlen;
    double *unc = out, *cal = unc + in->npts, *fit = cal + in->npts;
    int *fam = (int *)(fit + in->npts), *proto = fam + in->npts;
    char *note = (char *)(proto + in->npts);
    int sgc = in->sgc;
    eng_init(&sgc, in->sgv);
    if (eng_load(in->cluster, in->nodes, in->calib, err, errlen) < 0) return -1;
    val_sweep sw;
    if (val_sweep_open(&sw, in->op, in->n, 0, OG_F32, VAL_FID_PIPELINED, in->algo, err, errlen) < 0) return -1;
    /* the fits evaluate the same (parameters, size) many times: run each once */
    val_sweep_memo(&sw, 1);
    int rc = 0, *all = ts_malloc((in->npts + 1) * sizeof *all), *fit_idx = ts_malloc((in->npts + 1) * sizeof *all),
        *rest = ts_malloc((in->npts + 1) * sizeof *all);
    for (int i = 0; i < in->npts; i++) all[i] = i;
    val_cal_run run = {&sw, in->sizes, in->meas, in->npts, all, in->npts,
                       sw.topo && sw.topo->nnodes > 1 ? VAL_INTER : VAL_INTRA};
    for (int i = 0; i < in->npts && rc == 0; i++) {
        val_point pt;
        rc = val_sweep_size(&sw, in->sizes[i], &pt, err, errlen);
        unc[i] = pt.time, fam[i] = coll_family_of(pt.algo), proto[i] = pt.proto;
    }
    val_cal_set cs;
    val_cal_init(&cs, &run, 1);
    for (int fold = 0; fold < 2 && rc == 0; fold++) {
        int nf = 0, nr = 0;
        for (int i = 0; i < in->npts; i++) {
            if (i % 2 == fold) fit_idx[nf++] = i;
            else rest[nr++] = i;
        }
        run.idx = fit_idx, run.nidx = nf;
        double *p = ts_malloc((nr + 1) * sizeof *p);
        if ((rc = val_cal_fit(&cs, 0, err, errlen)) == 0) {
            val_cal_use(&cs, &run);
            rc = val_cal_predict(&run, rest, nr, p, err, errlen);
        }
        for (int i = 0; i < nr && rc == 0; i++) cal[rest[i]] = p[i];
        free(p);
    }
    run.idx = all, run.nidx = in->npts;
    if (rc == 0 && (rc = val_cal_fit(&cs, 0, err, errlen)) == 0) {
        val_cal_note(&cs, note, VAL_NOTE);
        val_cal_use(&cs, &run);
        rc = val_cal_predict(&run, all, in->npts, fit, err, errlen);
    }
    free(all), free(fit_idx), free(rest);
    val_sweep_close(&sw);
    return rc;
}

int val_xval_start(const val_xval_in *in, val_xval_job *job, char *err, size_t errlen)
{
    job->buf = NULL, job->npts = in->npts, job->ch.pid = job->ch.fd = -1;
    if (in->npts < 6) return ts_err(err, errlen, "cross-validation needs at least 6 sizes, got %d", in->npts);
    size_t len = out_len(in->npts);
    job->buf = ts_calloc(1, len);
    child_ctx c = {in};
    if (val_fork_start(run_child, &c, job->buf, len, &job->ch, err, errlen) < 0) {
        free(job->buf);
        job->buf = NULL;
        return -1;
    }
    return 0;
}

int val_xval_finish(val_xval_job *job, val_xval_out *out, char *err, size_t errlen)
{
    if (!job->buf) return ts_err(err, errlen, "cross-validation: no child started");
    size_t len = out_len(job->npts), d = job->npts * sizeof(double), k = job->npts * sizeof(int);
    const char *buf = job->buf;
    int rc = val_fork_finish(&job->ch, job->buf, len, err, errlen);
    if (rc == 0) {
        memcpy(out->unc, buf, d);
        memcpy(out->cal, buf + d, d);
        if (out->fit) memcpy(out->fit, buf + 2 * d, d);
        if (out->fam) memcpy(out->fam, buf + 3 * d, k);
        if (out->proto) memcpy(out->proto, buf + 3 * d + k, k);
        memcpy(out->note, buf + 3 * d + 2 * k, VAL_NOTE);
        out->note[VAL_NOTE - 1] = 0;
    }
    free(job->buf);
    job->buf = NULL;
    return rc;
}

int val_xval(const val_xval_in *in, val_xval_out *out, char *err, size_t errlen)
{
    val_xval_job job;
    if (val_xval_start(in, &job, err, errlen) < 0) return -1;
    return val_xval_finish(&job, out, err, errlen);
}
