/* A measured run's NCCL settings (its NCCL_* environment variables): what
 * they are, read from NAME=VALUE items, and what the collective model makes
 * of them (coll_nccl_env_apply). Sources per variable: docs/collectives.md,
 * "NCCL settings of a run". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll_algos.h"
#include "coll_params.h"
#include "util.h"

void coll_nccl_env_init(coll_nccl_env *e)
{
    memset(e, 0, sizeof *e);
    e->min_ctas = e->max_ctas = e->min_nch = e->max_nch = e->nvls_nch = -1;
    e->nvls_enable = e->collnet_enable = e->ib_qps = -1;
}

/* NCCL_ALGO's names (src/init.cc ncclAlgoStr, 2.19-2.26; "CollNet" the
 * older spelling of both CollNet algorithms) and NCCL_PROTO's. */
static const struct {
    const char *name;
    coll_family fam;
} algo_names[] = {
    {"Tree", COLL_FAM_TREE},    {"Ring", COLL_FAM_RING},         {"CollNetDirect", COLL_FAM_COLLNET},
    {"CollNetChain", COLL_FAM_COLLNET}, {"CollNet", COLL_FAM_COLLNET}, {"NVLS", COLL_FAM_NVLS},
    {"NVLSTree", COLL_FAM_NVLSTREE}, {"PAT", COLL_FAM_PAT},
};
static const struct {
    const char *name;
    coll_proto pr;
} proto_names[] = {{"LL", COLL_LL}, {"LL128", COLL_LL128}, {"Simple", COLL_SIMPLE}};

/* The families NCCL_ALGO chooses among; the others (P2P, MPI-style) are not
 * NCCL's collective algorithms and no setting turns them off. */
static const coll_family nccl_fams[] = {COLL_FAM_RING, COLL_FAM_TREE, COLL_FAM_NVLS, COLL_FAM_NVLSTREE,
                                        COLL_FAM_COLLNET, COLL_FAM_PAT};
#define NNCCL_FAMS (int)(sizeof nccl_fams / sizeof nccl_fams[0])

/* "Ring", "Tree,Ring", "^NVLS,NVLSTree" (NCCL's parseList: '^' first leaves
 * out the listed ones): the bit set of families (algo) or protocols. */
static int parse_set(const char *name, const char *v, int algo, unsigned *out, const char *where, char *err,
                     size_t errlen)
{
    char buf[256];
    const char *s = v;
    int invert = *s == '^';
    if (invert) s++;
    if (strlen(s) >= sizeof buf) return ts_err(err, errlen, "%s: %s: value too long", where, name);
    if (strpbrk(s, ":;"))
        return ts_err(err, errlen, "%s: %s=%s: per-collective lists (NCCL 2.24's 'allreduce:ring;...') are not "
                      "modelled: give one list for every collective", where, name, v);
    snprintf(buf, sizeof buf, "%s", s);
    unsigned set = 0;
    int items = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        size_t l = strlen(t);
        while (l && t[l - 1] == ' ') t[--l] = 0;
        int hit = 0;
        if (algo) {
            for (size_t i = 0; i < sizeof algo_names / sizeof algo_names[0]; i++)
                if (strcasecmp(t, algo_names[i].name) == 0) set |= 1u << algo_names[i].fam, hit = 1;
        } else {
            for (size_t i = 0; i < sizeof proto_names / sizeof proto_names[0]; i++)
                if (strcasecmp(t, proto_names[i].name) == 0) set |= 1u << proto_names[i].pr, hit = 1;
        }
        if (!hit)
            return ts_err(err, errlen, "%s: %s=%s: unknown %s '%s' (valid: %s)", where, name, v,
                          algo ? "algorithm" : "protocol", t,
                          algo ? "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT" : "LL, LL128, Simple");
        items++;
    }
    if (!items) return ts_err(err, errlen, "%s: %s=%s: names no %s", where, name, v, algo ? "algorithm" : "protocol");
    if (invert) {
        unsigned all = 0;
        if (algo)
            for (int i = 0; i < NNCCL_FAMS; i++) all |= 1u << nccl_fams[i];
        else
            all = (1u << COLL_NPROTOS) - 1;
        set = all & ~set;
        if (!set) return ts_err(err, errlen, "%s: %s=%s: leaves no %s", where, name, v, algo ? "algorithm" : "protocol");
    }
    *out = set;
    return 0;
}

/* A count: a decimal integer from lo to hi (NCCL reads them with strtoll). */
static int count(const char *name, const char *v, int lo, int hi, int *out, const char *where, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        return ts_err(err, errlen, "%s: %s=%s: want an integer from %d to %d", where, name, v, lo, hi);
    *out = (int)x;
    return 0;
}

static int flag(const char *name, const char *v, int hi, int *out, const char *where, char *err, size_t errlen)
{
    return count(name, v, 0, hi, out, where, err, errlen);
}

/* Variables NCCL reads that change nothing the model has (said once as
 * "not modelled"); NCCL_IB_QPS_PER_CONNECTION is kept: docs/collectives.md
 * says why it has no place in the model. */
static void add_ignored(coll_nccl_env *e, const char *name)
{
    size_t l = strlen(e->ignored), n = strlen(name);
    for (const char *p = e->ignored; (p = strstr(p, name)); p += n)
        if ((p == e->ignored || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) return;
    if (l + n + 3 >= sizeof e->ignored) return;
    snprintf(e->ignored + l, sizeof e->ignored - l, "%s%s", l ? ", " : "", name);
}

int coll_nccl_env_set(coll_nccl_env *e, const char *name, const char *value, const char *where, char *err,
                      size_t errlen)
{
    if (strncmp(name, "NCCL_", 5) != 0 || !name[5])
        return ts_err(err, errlen, "%s: '%s' is not an NCCL_ variable", where, name);
    for (const char *c = name; *c; c++)
        if (!isupper((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_')
            return ts_err(err, errlen, "%s: '%s' is not an NCCL_ variable name (A-Z, 0-9, _)", where, name);
    const char *n = name + 5;
    int v, rc = 0;
    if (!strcmp(n, "ALGO")) rc = parse_set(name, value, 1, &e->fam_on, where, err, errlen);
    else if (!strcmp(n, "PROTO")) rc = parse_set(name, value, 0, &e->proto_on, where, err, errlen);
    else if (!strcmp(n, "MIN_CTAS") || !strcmp(n, "MAX_CTAS")) {
        /* NCCL caps both at MAXCHANNELS (init.cc, with a warning) */
        if ((rc = count(name, value, 1, 1 << 20, &v, where, err, errlen)) == 0)
            *(n[1] == 'I' ? &e->min_ctas : &e->max_ctas) = v;
    } else if (!strcmp(n, "MIN_NCHANNELS") || !strcmp(n, "MIN_NRINGS") || !strcmp(n, "MAX_NCHANNELS") ||
               !strcmp(n, "MAX_NRINGS")) {
        /* the NRINGS spellings are the older names; NCHANNELS wins where both are set (connect.cc) */
        int min = n[1] == 'I', nch = strstr(n, "NCHANNELS") != NULL;
        if ((rc = count(name, value, 1, 1 << 20, &v, where, err, errlen)) == 0) {
            int *dst = min ? &e->min_nch : &e->max_nch;
            if (nch || *dst < 0 || !e->nch_named[min]) *dst = v;
            if (nch) e->nch_named[min] = 1;
        }
    } else if (!strcmp(n, "NVLS_NCHANNELS")) {
        if ((rc = count(name, value, 1, 1 << 20, &v, where, err, errlen)) == 0) e->nvls_nch = v;
    } else if (!strcmp(n, "NVLS_ENABLE")) {
        /* 0 off; 1 on; 2 (older releases' default): on where the driver says the GPU multicasts */
        rc = flag(name, value, 2, &e->nvls_enable, where, err, errlen);
    } else if (!strcmp(n, "COLLNET_ENABLE")) {
        rc = flag(name, value, 1, &e->collnet_enable, where, err, errlen);
    } else if (!strcmp(n, "IB_QPS_PER_CONNECTION")) {
        /* NCCL_IB_MAX_QPS 128 (transport/net_ib.cc) */
        rc = count(name, value, 1, 128, &e->ib_qps, where, err, errlen);
        if (rc == 0) add_ignored(e, name);
        return rc;
    } else {
        add_ignored(e, name);
        return 0;
    }
    if (rc == 0) e->set = 1;
    return rc;
}

int coll_nccl_env_parse(coll_nccl_env *e, const char *spec, const char *where, char *err, size_t errlen)
{
    char buf[4096];
    if (strlen(spec) >= sizeof buf) return ts_err(err, errlen, "%s: settings longer than %zu characters", where, sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    /* split at commas; an item without '=' continues the previous value
     * (NCCL_ALGO=Tree,Ring) */
    char *items[256];
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        if (!*t) continue;
        if (!strchr(t, '=')) {
            if (!k) return ts_err(err, errlen, "%s: '%s': want NAME=VALUE", where, t);
            t[-1] = ','; /* join to the previous item */
            continue;
        }
        if (k == 256) return ts_err(err, errlen, "%s: more than 256 settings", where);
        items[k++] = t;
    }
    if (!k) return ts_err(err, errlen, "%s: no NAME=VALUE setting in '%s'", where, spec);
    for (int i = 0; i < k; i++) {
        char *eq = strchr(items[i], '=');
        *eq = 0;
        if (!items[i][0] || !eq[1]) {
            *eq = '=';
            return ts_err(err, errlen, "%s: '%s': want NAME=VALUE", where, items[i]);
        }
        if (coll_nccl_env_set(e, items[i], eq + 1, where, err, errlen) < 0) return -1;
    }
    return 0;
}

void coll_nccl_env_merge(coll_nccl_env *dst, const coll_nccl_env *src)
{
    if (src->fam_on) dst->fam_on = src->fam_on;
    if (src->proto_on) dst->proto_on = src->proto_on;
    int *d[] = {&dst->min_ctas, &dst->max_ctas, &dst->min_nch, &dst->max_nch, &dst->nvls_nch, &dst->nvls_enable,
                &dst->collnet_enable, &dst->ib_qps};
    const int *s[] = {&src->min_ctas, &src->max_ctas, &src->min_nch, &src->max_nch, &src->nvls_nch, &src->nvls_enable,
                      &src->collnet_enable, &src->ib_qps};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (*s[i] >= 0) *d[i] = *s[i];
    for (const char *p = src->ignored; *p;) {
        char name[128];
        size_t l = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), p);
        add_ignored(dst, name);
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
    dst->set |= src->set;
}

int coll_nccl_env_same(const coll_nccl_env *a, const coll_nccl_env *b)
{
    return a->fam_on == b->fam_on && a->proto_on == b->proto_on && a->min_ctas == b->min_ctas &&
           a->max_ctas == b->max_ctas && a->min_nch == b->min_nch && a->max_nch == b->max_nch &&
           a->nvls_nch == b->nvls_nch && a->nvls_enable == b->nvls_enable && a->collnet_enable == b->collnet_enable;
}

/* The one family a set names, or -1. */
static int only_family(unsigned fam_on)
{
    int f = -1;
    for (int i = 0; i < NNCCL_FAMS; i++)
        if (fam_on & (1u << nccl_fams[i])) {
            if (f >= 0) return -1;
            f = nccl_fams[i];
        }
    return f;
}

int coll_nccl_env_forced(const coll_nccl_env *e, og_coll coll, char *spec, size_t n)
{
    int f = e ? only_family(e->fam_on) : -1;
    if (f < 0 || coll < 0 || coll >= OG_NCOLLS) return 0;
    for (int a = 0; a < coll_nalgos(); a++) {
        const coll_algo *al = coll_algo_get(a);
        if (al->family != f || al->tuner == COLL_TUNER_NO || !(al->colls & (1u << coll))) continue;
        int pr = -1;
        for (int p = 0; p < COLL_NPROTOS; p++)
            if (e->proto_on == (1u << p)) pr = p;
        snprintf(spec, n, "%s%s%s", al->name, pr >= 0 ? ":" : "", pr >= 0 ? coll_proto_name(pr) : "");
        return 1;
    }
    return 0;
}

void coll_nccl_env_apply(const coll_nccl_env *e, coll_params *q)
{
    if (!e || !e->set) return;
    for (int i = 0; i < NNCCL_FAMS; i++) {
        int f = nccl_fams[i];
        int off = (e->fam_on && !(e->fam_on & (1u << f))) ||
                  (e->nvls_enable == 0 && (f == COLL_FAM_NVLS || f == COLL_FAM_NVLSTREE));
        for (int p = 0; p < COLL_NPROTOS; p++)
            if (off || (e->proto_on && !(e->proto_on & (1u << p)))) q->proto_bw[f][p] = 0;
    }
    if (e->collnet_enable == 0) q->collnet = 0;
    /* connect.cc ncclTopoPostset: at least max(NCCL_MIN_NCHANNELS, NCCL_MIN_CTAS),
     * at most min(NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS) channels */
    int mn = e->min_nch > e->min_ctas ? e->min_nch : e->min_ctas;
    int mx = e->max_nch;
    if (e->max_ctas > 0 && (mx < 0 || e->max_ctas < mx)) mx = e->max_ctas;
    q->env_min_ch = mn > 0 ? mn : 0;
    q->env_max_ch = mx > 0 ? mx : 0;
    q->env_min_ctas = e->min_ctas > 0 ? e->min_ctas : 0;
    q->env_max_ctas = e->max_ctas > 0 ? e->max_ctas : 0;
    q->env_nvls_ch = e->nvls_nch > 0 ? e->nvls_nch : 0;
}

static int cap_channels(int n)
{
    return n > COLL_MAXCHANNELS ? COLL_MAXCHANNELS : n;
}

/* n within a run's bounds (0: none), each capped at MAXCHANNELS as NCCL
 * caps them; the least bound wins over the most, as in NCCL. */
static int bounded(int n, int lo, int hi)
{
    if (hi > 0 && n > cap_channels(hi)) n = cap_channels(hi);
    if (cap_channels(lo) > n) n = cap_channels(lo);
    return n;
}

int coll_run_channels(const coll_params *q, int base)
{
    return base <= 0 ? base : bounded(base, q->env_min_ch, q->env_max_ch);
}

int coll_nvls_channels(const coll_params *q)
{
    /* transport/nvls.cc ncclNvlsInit: max(minCTAs, min(maxCTAs, NCCL_NVLS_NCHANNELS)) */
    return bounded(q->env_nvls_ch > 0 ? q->env_nvls_ch : COLL_NVLS_NCHANNELS, q->env_min_ctas, q->env_max_ctas);
}

int coll_p2p_channels(const coll_params *q)
{
    /* graph/connect.cc ncclTopoComputeP2pChannels: min(nChannels,
     * NCCL_MAX_P2P_NCHANNELS) rounded up to a power of two */
    int n = coll_run_channels(q, q->max_channels), p = 1;
    if (n <= 1) return 1;
    while (p < n) p <<= 1;
    return p;
}

void coll_nccl_env_describe(const coll_nccl_env *e, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
    if (e->fam_on) {
        PUT("%sNCCL_ALGO=", k ? " " : "");
        int first = 1;
        for (int i = 0; i < NNCCL_FAMS; i++)
            if (e->fam_on & (1u << nccl_fams[i]))
                PUT("%s%s", first ? "" : ",", coll_family_name(nccl_fams[i])), first = 0;
    }
    if (e->proto_on) {
        PUT("%sNCCL_PROTO=", k ? " " : "");
        int first = 1;
        for (int p = 0; p < COLL_NPROTOS; p++)
            if (e->proto_on & (1u << p)) PUT("%s%s", first ? "" : ",", coll_proto_name(p)), first = 0;
    }
    const struct { const char *name; int v; } nums[] = {
        {"NCCL_MIN_CTAS", e->min_ctas}, {"NCCL_MAX_CTAS", e->max_ctas}, {"NCCL_MIN_NCHANNELS", e->min_nch},
        {"NCCL_MAX_NCHANNELS", e->max_nch}, {"NCCL_NVLS_NCHANNELS", e->nvls_nch}, {"NCCL_NVLS_ENABLE", e->nvls_enable},
        {"NCCL_COLLNET_ENABLE", e->collnet_enable}, {"NCCL_IB_QPS_PER_CONNECTION", e->ib_qps},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (nums[i].v >= 0) PUT("%s%s=%d", k ? " " : "", nums[i].name, nums[i].v);
#undef PUT
}

/* Names already said on stderr (each once per process). */
static char said[2048];

void coll_nccl_env_warn(const coll_nccl_env *e, const char *who, const char *what)
{
    if (!e || !e->ignored[0]) return;
    char fresh[COLL_ENV_IGNORED] = "";
    size_t fl = 0;
    for (const char *p = e->ignored; *p;) {
        size_t l = strcspn(p, ",");
        char key[136];
        snprintf(key, sizeof key, "|%.*s|", (int)(l < 128 ? l : 128), p);
        if (!strstr(said, key)) {
            if (strlen(said) + strlen(key) < sizeof said) strcat(said, key);
            fl += (size_t)snprintf(fresh + fl, fl < sizeof fresh ? sizeof fresh - fl : 0, "%s%.*s", fl ? ", " : "",
                                   (int)l, p);
            if (fl >= sizeof fresh) fl = sizeof fresh - 1;
        }
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
    if (fresh[0])
        fprintf(stderr, "%s: %s%s%s: not modelled, ignored (docs/collectives.md, \"NCCL settings of a run\")\n", who,
                what ? what : "", what ? ": " : "", fresh);
}
