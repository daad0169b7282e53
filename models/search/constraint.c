/* Layout search constraints ("tp<=8,zero!=3", search --constraint): the
 * parser and the test of a layout against them. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *ckeys[] = {"tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "zero", "sp", "recompute", "gx", "gy", "gz", "gpus"};
#define NCKEYS (int)(sizeof ckeys / sizeof ckeys[0])

static int key_value(const wl_layout *l, int key)
{
    switch (key) {
    case 0: return l->tp;
    case 1: return l->pp;
    case 2: return l->dp;
    case 3: return l->cp;
    case 4: return l->ep;
    case 5: return l->vpp;
    case 6: return l->mbs;
    case 7: return l->zero;
    case 8: return l->sp;
    case 9: return (int)l->recompute;
    case 10: return l->gx;
    case 11: return l->gy;
    case 12: return l->gz;
    default: return wl_layout_ngpus(l);
    }
}

/* Longest operators first so "<=" is not read as "<". */
static const struct {
    const char *s;
    int op;
} cops[] = {{"<=", SRCH_LE}, {">=", SRCH_GE}, {"==", SRCH_EQ}, {"!=", SRCH_NE}, {"<", SRCH_LT}, {">", SRCH_GT}, {"=", SRCH_EQ}};

int srch_parse_constraints(const char *s, srch_params *p, char *err, size_t errlen)
{
    char *copy = ts_strdup(s), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        size_t klen = strcspn(tok, "<>=!");
        int key, op = -1;
        for (key = 0; key < NCKEYS; key++)
            if (strlen(ckeys[key]) == klen && strncmp(tok, ckeys[key], klen) == 0) break;
        size_t olen = 0;
        for (size_t i = 0; i < sizeof cops / sizeof cops[0] && op < 0; i++)
            if (strncmp(tok + klen, cops[i].s, strlen(cops[i].s)) == 0) op = cops[i].op, olen = strlen(cops[i].s);
        char *end;
        const char *vs = tok + klen + olen;
        long v = strtol(vs, &end, 10);
        if (key == NCKEYS)
            rc = ts_err(err, errlen, "constraint '%s': unknown key (valid: tp, pp, dp, cp, ep, vpp, mbs, zero, sp, "
                        "recompute, gx, gy, gz, gpus)", tok);
        else if (op < 0 || !*vs || *end || v < 0 || v > 100000000)
            rc = ts_err(err, errlen, "constraint '%s': want KEY OP N with OP one of <, <=, >, >=, =, != and N a "
                        "non-negative integer", tok);
        else if (p->nconstr == SRCH_MAX_CONSTRAINTS)
            rc = ts_err(err, errlen, "constraint '%s': more than %d constraints", tok, SRCH_MAX_CONSTRAINTS);
        else
            p->constr[p->nconstr++] = (srch_constraint){key, op, (int)v};
    }
    free(copy);
    return rc;
}

int srch_satisfies(const srch_params *p, const wl_layout *l)
{
    for (int i = 0; i < p->nconstr; i++) {
        int x = key_value(l, p->constr[i].key), v = p->constr[i].value, ok;
        switch (p->constr[i].op) {
        case SRCH_LT: ok = x < v; break;
        case SRCH_LE: ok = x <= v; break;
        case SRCH_GT: ok = x > v; break;
        case SRCH_GE: ok = x >= v; break;
        case SRCH_EQ: ok = x == v; break;
        default: ok = x != v; break;
        }
        if (!ok) return 0;
    }
    return 1;
}
