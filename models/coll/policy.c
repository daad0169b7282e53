/* The selection policy over the automatic choice: algorithms forced per
 * collective (--coll) and a tuning table read from CSV (--tuning). */
#include "coll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct rule {
    og_coll coll;
    int64_t lo_n, hi_n, lo_b, hi_b; /* inclusive; hi = INT64_MAX: no upper bound */
    int algo;
    coll_proto proto;
} rule;

struct coll_policy {
    int forced[OG_NCOLLS];          /* algorithm row, -1: not forced */
    coll_proto fproto[OG_NCOLLS];
    rule *rules;
    size_t nrules, cap;
    unsigned long serial;           /* coll_policy_serial */
};

static unsigned long policy_serial; /* every new policy and every change takes the next */

coll_policy *coll_policy_new(void)
{
    coll_policy *pol = ts_calloc(1, sizeof *pol);
    for (int c = 0; c < OG_NCOLLS; c++) pol->forced[c] = -1;
    pol->serial = ++policy_serial;
    return pol;
}

void coll_policy_free(coll_policy *pol)
{
    if (!pol) return;
    free(pol->rules);
    free(pol);
}

/* Copy s without underscores (at most n - 1 characters). */
static void squash(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (*s != '_') out[k++] = *s;
    out[k] = 0;
}

int coll_from_name(const char *s)
{
    char want[32], have[32];
    squash(s, want, sizeof want);
    for (int c = 0; c < OG_NCOLLS; c++) {
        squash(og_coll_name(c), have, sizeof have);
        if (strcmp(have, want) == 0) return c;
    }
    return -1;
}

int coll_policy_force(coll_policy *pol, const char *spec, char *err, size_t errlen)
{
    char *copy = ts_strdup(spec), *save = NULL;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            rc = ts_err(err, errlen, "'%s' is not COLLECTIVE=ALGORITHM", item);
            break;
        }
        *eq = 0;
        int c = coll_from_name(item), a;
        coll_proto pr;
        if (c < 0)
            rc = ts_err(err, errlen, "unknown collective '%s'", item);
        else if (coll_algo_parse(eq + 1, c, &a, &pr, err, errlen) < 0)
            rc = -1;
        else
            pol->forced[c] = a, pol->fproto[c] = pr;
    }
    free(copy);
    pol->serial = ++policy_serial;
    return rc;
}

unsigned long coll_policy_serial(const coll_policy *pol) { return pol ? pol->serial : 0; }

int coll_policy_forced(const coll_policy *pol, og_coll coll, int *algo, coll_proto *proto)
{
    if (!pol || coll >= OG_NCOLLS || pol->forced[coll] < 0) return 0;
    *algo = pol->forced[coll];
    *proto = pol->fproto[coll];
    return 1;
}

size_t coll_policy_rules(const coll_policy *pol) { return pol ? pol->nrules : 0; }

/* A non-negative integer field, or "inf" where allowed (INT64_MAX). */
static int parse_count(const char *s, int inf_ok, int64_t *out)
{
    if (inf_ok && strcmp(s, "inf") == 0) {
        *out = INT64_MAX;
        return 0;
    }
    if (*s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) return -1;
    *out = v;
    return 0;
}

static const char tuning_header[] = "coll,min_gpus,max_gpus,min_bytes,max_bytes,algorithm";

/* One data line (already split at commas into f[6]) of path:line. */
static int parse_rule(char **f, const char *path, int line, rule *r, char *err, size_t errlen)
{
    static const char *names[] = {"coll", "min_gpus", "max_gpus", "min_bytes", "max_bytes", "algorithm"};
    int c = coll_from_name(f[0]);
    if (c < 0) return ts_err(err, errlen, "%s:%d: unknown collective '%s'", path, line, f[0]);
    r->coll = c;
    int64_t *v[4] = {&r->lo_n, &r->hi_n, &r->lo_b, &r->hi_b};
    for (int i = 0; i < 4; i++)
        if (parse_count(f[i + 1], i == 1 || i == 3, v[i]) < 0 || (i < 2 && *v[i] < 1))
            return ts_err(err, errlen, "%s:%d: %s wants %s%s, not '%s'", path, line, names[i + 1],
                          i < 2 ? "a group size of at least 1" : "a byte count of at least 0",
                          i == 1 || i == 3 ? " or inf" : "", f[i + 1]);
    if (r->hi_n < r->lo_n)
        return ts_err(err, errlen, "%s:%d: max_gpus '%s' below min_gpus '%s'", path, line, f[2], f[1]);
    if (r->hi_b < r->lo_b)
        return ts_err(err, errlen, "%s:%d: max_bytes '%s' below min_bytes '%s'", path, line, f[4], f[3]);
    char msg[TS_ERRLEN];
    if (coll_algo_parse(f[5], c, &r->algo, &r->proto, msg, sizeof msg) < 0)
        return ts_err(err, errlen, "%s:%d: %s", path, line, msg);
    return 0;
}

int coll_policy_load(coll_policy *pol, const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return ts_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    char buf[1024];
    int line = 0, header = 0, rc = 0;
    size_t first = pol->nrules;
    while (rc == 0 && fgets(buf, sizeof buf, fp)) {
        line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            rc = ts_err(err, errlen, "%s:%d: line longer than %zu characters", path, line, sizeof buf - 2);
            break;
        }
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = 0;
        if (len == 0 || buf[0] == '#') continue;
        if (!header) {
            if (strcmp(buf, tuning_header) != 0)
                rc = ts_err(err, errlen, "%s:%d: header '%s' is not '%s'", path, line, buf, tuning_header);
            header = 1;
            continue;
        }
        char *f[7], *p = buf;
        int nf = 0;
        for (;;) {
            if (nf < 7) f[nf] = p;
            nf++;
            char *comma = strchr(p, ',');
            if (!comma) break;
            *comma = 0;
            p = comma + 1;
        }
        if (nf != 6) {
            rc = ts_err(err, errlen, "%s:%d: %d fields, not the 6 of '%s'", path, line, nf, tuning_header);
            break;
        }
        rule r;
        if (parse_rule(f, path, line, &r, err, errlen) < 0) {
            rc = -1;
            break;
        }
        ts_grow(&pol->rules, sizeof *pol->rules, &pol->cap, pol->nrules + 1);
        pol->rules[pol->nrules++] = r;
    }
    if (rc == 0 && ferror(fp)) rc = ts_err(err, errlen, "%s: read error", path);
    if (rc == 0 && !header) rc = ts_err(err, errlen, "%s: empty: no '%s' header", path, tuning_header);
    fclose(fp);
    if (rc < 0) pol->nrules = first; /* all of a file's rows or none */
    pol->serial = ++policy_serial;
    return rc;
}

/* Whether algorithm a can run coll on n members of topo. */
static int fits(og_coll coll, int n, int64_t bytes, int a, const coll_topo *topo)
{
    coll_plan p;
    /* all-to-allv has no sizes here; its algorithms are the all-to-all ones */
    og_coll as = coll == OG_ALLTOALLV ? OG_ALLTOALL : coll;
    return coll_plan_init_topo(&p, as, n, 0, bytes, NULL, a, topo, NULL, 0) == 0;
}

int coll_policy_select(const coll_policy *pol, og_coll coll, int n, int64_t bytes, const coll_hw *hw,
                       coll_proto *proto, coll_source *src)
{
    coll_source dummy;
    if (!src) src = &dummy;
    const coll_topo *topo = hw ? hw->topo : NULL;
    if (pol && coll < OG_NCOLLS) {
        if (pol->forced[coll] >= 0 && fits(coll, n, bytes, pol->forced[coll], topo)) {
            *proto = pol->fproto[coll];
            if (*proto == COLL_PROTO_AUTO) *proto = coll_best_proto(coll, n, bytes, pol->forced[coll], hw);
            *src = COLL_BY_FORCE;
            return pol->forced[coll];
        }
        for (size_t i = 0; i < pol->nrules; i++) {
            const rule *r = &pol->rules[i];
            if (r->coll != coll || n < r->lo_n || n > r->hi_n || bytes < r->lo_b || bytes > r->hi_b) continue;
            if (!fits(coll, n, bytes, r->algo, topo)) break; /* the matching row is unfit: automatic */
            *proto = r->proto == COLL_PROTO_AUTO ? coll_best_proto(coll, n, bytes, r->algo, hw) : r->proto;
            *src = COLL_BY_TABLE;
            return r->algo;
        }
    }
    *src = COLL_BY_AUTO;
    return coll_select(coll, n, bytes, hw, proto);
}

const char *coll_source_name(coll_source s)
{
    static const char *names[] = {"auto", "forced", "table"};
    return (size_t)s < sizeof names / sizeof names[0] ? names[s] : "?";
}
