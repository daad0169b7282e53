/* The native trace format (docs/trace-format.md): a strict JSON reader whose
 * errors name file:line:col or rank/op, and the canonical, deterministic writer. */
#include "opgraph.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

/* ---------------------------------------------------------------- reading */

typedef struct {
    const char *name; /* file name for messages */
    char *err;
    size_t errlen;
    char where[64];   /* "rank 3 op 17", "group 2", or "" at top level */
} reader;

static int fail(reader *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ts_verr_at(c->err, c->errlen, c->name, c->where, fmt, ap);
    va_end(ap);
    return rc;
}

/* A string from the input, made safe for a one-line message: control
 * characters escaped, cut after about 40 bytes (at a character boundary). */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t len = 0, i = 0;
    for (; s[i] && i < 40 && len + 8 < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20) len += snprintf(buf + len, n - len, "\\u%04x", ch);
        else buf[len++] = (char)ch;
    }
    if (s[i]) {
        while (len > 0 && ((unsigned char)buf[len - 1] & 0xc0) == 0x80) len--;
        if (len > 0 && (unsigned char)buf[len - 1] >= 0xc0) len--;
        if (len + 4 <= n) memcpy(buf + len, "...", 3), len += 3;
    }
    buf[len] = 0;
    return buf;
}

/* A short description of a JSON value for messages: "integer 5", "string \"x\"". */
static const char *describe(const json_t *v, char *buf, size_t n)
{
    char num[32];
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    case JSON_INTEGER:
        snprintf(buf, n, "integer %" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        ts_fmt_double(num, sizeof num, json_real_value(v));
        snprintf(buf, n, "real number %s", num);
        return buf;
    case JSON_STRING: {
        char str[64];
        snprintf(buf, n, "string \"%s\"", shown(json_string_value(v), str, sizeof str));
        return buf;
    }
    }
    return "?";
}

static int bad_type(reader *c, const char *field, const json_t *v, const char *want)
{
    char buf[96];
    return fail(c, "field '%s' must be %s, got %s", field, want, describe(v, buf, sizeof buf));
}

static int as_int64(reader *c, const char *field, const json_t *v, int64_t lo, int64_t hi,
                    int64_t *out)
{
    if (!json_is_integer(v)) return bad_type(c, field, v, "an integer");
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return fail(c, "field '%s' value %" JSON_INTEGER_FORMAT " out of range (%" PRId64
                       "..%" PRId64 ")", field, x, lo, hi);
    *out = x;
    return 0;
}

static int as_int(reader *c, const char *field, const json_t *v, int lo, int *out)
{
    int64_t x = 0;
    if (as_int64(c, field, v, lo, INT_MAX, &x)) return -1;
    *out = (int)x;
    return 0;
}

static int as_num(reader *c, const char *field, const json_t *v, double *out)
{
    if (!json_is_number(v)) return bad_type(c, field, v, "a number");
    *out = json_number_value(v);
    return 0;
}

static int as_str(reader *c, const char *field, const json_t *v, const char **out)
{
    if (!json_is_string(v)) return bad_type(c, field, v, "a string");
    *out = json_string_value(v);
    return 0;
}

static int need(reader *c, const json_t *o, const char *field, json_t **v)
{
    *v = json_object_get(o, field);
    if (!*v) return fail(c, "missing field '%s'", field);
    return 0;
}

/* Optional integer field with a default. */
static int opt_int(reader *c, const json_t *o, const char *field, int def, int lo, int *out)
{
    json_t *v = json_object_get(o, field);
    if (!v) {
        *out = def;
        return 0;
    }
    return as_int(c, field, v, lo, out);
}

static int check_keys(reader *c, const json_t *o, const char *const *allowed)
{
    char buf[64];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, k) == 0) ok = 1;
        if (!ok) return fail(c, "unknown field '%s'", shown(k, buf, sizeof buf));
    }
    return 0;
}

/* Comma-separated list of a name table, for "valid: ..." hints. */
static void name_list(char *buf, size_t n, const char *(*name)(int), int count)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < count && len < n; i++)
        len += snprintf(buf + len, n - len, "%s%s", i ? ", " : "", name(i));
}

static const char *kind_name_i(int i) { return og_kind_name((og_kind)i); }
static const char *coll_name_i(int i) { return og_coll_name((og_coll)i); }
static const char *dtype_name_i(int i) { return og_dtype_name((og_dtype)i); }

#define KB(k) (1u << (k))
#define K_ALL (KB(OG_COMPUTE) | KB(OG_SEND) | KB(OG_RECV) | KB(OG_COLL))
#define K_P2P (KB(OG_SEND) | KB(OG_RECV))

/* Which op fields exist, and for which kinds. */
static const struct {
    const char *name;
    unsigned kinds;
} op_fields[] = {
    {"id", K_ALL},           {"kind", K_ALL},          {"stream", K_ALL},
    {"deps", K_ALL},         {"label", K_ALL},         {"bytes", K_ALL},
    {"duration", KB(OG_COMPUTE)}, {"flops", KB(OG_COMPUTE)},
    {"peer", K_P2P},         {"tag", K_P2P},
    {"coll", KB(OG_COLL)},   {"group", KB(OG_COLL)},   {"dtype", KB(OG_COLL)},
    {"root", KB(OG_COLL)},   {"algo", KB(OG_COLL)},    {"send_bytes", KB(OG_COLL)},
};

static int check_op_keys(reader *c, const json_t *o, og_kind kind)
{
    char buf[64];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        size_t i, n = sizeof op_fields / sizeof op_fields[0];
        for (i = 0; i < n; i++)
            if (strcmp(op_fields[i].name, k) == 0) break;
        if (i == n) return fail(c, "unknown field '%s'", shown(k, buf, sizeof buf));
        if (!(op_fields[i].kinds & KB(kind)))
            return fail(c, "field '%s' does not apply to a %s op", k, og_kind_name(kind));
    }
    return 0;
}

static int read_compute(reader *c, const json_t *o, og_op *op)
{
    json_t *dur = json_object_get(o, "duration");
    json_t *fl = json_object_get(o, "flops");
    json_t *by = json_object_get(o, "bytes");
    if (dur) {
        if (fl || by)
            return fail(c, "field 'duration' excludes '%s' (a compute op has either a fixed "
                           "duration or flops and bytes)", fl ? "flops" : "bytes");
        if (as_num(c, "duration", dur, &op->duration)) return -1;
        if (op->duration < 0) {
            char num[32];
            ts_fmt_double(num, sizeof num, op->duration);
            return fail(c, "field 'duration' must be >= 0 seconds, got %s", num);
        }
        return 0;
    }
    if (!fl) return fail(c, "compute op needs field 'duration' or 'flops'");
    if (as_num(c, "flops", fl, &op->flops)) return -1;
    if (by && as_int64(c, "bytes", by, INT64_MIN, INT64_MAX, &op->bytes)) return -1;
    return 0;
}

static int read_p2p(reader *c, const json_t *o, og_op *op)
{
    json_t *v;
    if (need(c, o, "peer", &v) || as_int(c, "peer", v, INT_MIN, &op->peer)) return -1;
    if (need(c, o, "bytes", &v) || as_int64(c, "bytes", v, INT64_MIN, INT64_MAX, &op->bytes))
        return -1;
    return opt_int(c, o, "tag", 0, INT_MIN, &op->tag);
}

static int read_coll(reader *c, const og_graph *g, const json_t *o, og_op *op)
{
    char buf[64];
    char names[256];
    const char *s = NULL;
    json_t *v;
    if (need(c, o, "coll", &v) || as_str(c, "coll", v, &s)) return -1;
    int k = og_coll_from_name(s);
    if (k < 0) {
        name_list(names, sizeof names, coll_name_i, OG_NCOLLS);
        return fail(c, "unknown collective '%s' (valid: %s)", shown(s, buf, sizeof buf), names);
    }
    op->coll = (og_coll)k;
    if (need(c, o, "group", &v) || as_int(c, "group", v, INT_MIN, &op->group)) return -1;
    v = json_object_get(o, "bytes");
    if (!v && op->coll != OG_BARRIER) return fail(c, "missing field 'bytes'");
    if (v && as_int64(c, "bytes", v, INT64_MIN, INT64_MAX, &op->bytes)) return -1;
    if ((v = json_object_get(o, "dtype"))) {
        if (as_str(c, "dtype", v, &s)) return -1;
        int t = og_dtype_from_name(s);
        if (t < 0) {
            name_list(names, sizeof names, dtype_name_i, OG_NDTYPES);
            return fail(c, "unknown dtype '%s' (valid: %s)", shown(s, buf, sizeof buf), names);
        }
        op->dtype = (og_dtype)t;
    }
    if (opt_int(c, o, "root", 0, INT_MIN, &op->root)) return -1;
    if ((v = json_object_get(o, "algo"))) {
        if (as_str(c, "algo", v, &s)) return -1;
        og_set_algo(op, s);
    }
    if ((v = json_object_get(o, "send_bytes"))) {
        if (op->coll != OG_ALLTOALLV)
            return fail(c, "field 'send_bytes' only applies to alltoallv, not %s",
                        og_coll_name(op->coll));
        if (!json_is_array(v)) return bad_type(c, "send_bytes", v, "an array");
        if (op->group < 0 || op->group >= g->ngroups)
            return fail(c, "field 'send_bytes' needs a known group, but group %d does not exist "
                           "(the trace has %d group%s)", op->group, g->ngroups,
                        g->ngroups == 1 ? "" : "s");
        int n = g->groups[op->group].n;
        if (json_array_size(v) != (size_t)n)
            return fail(c, "field 'send_bytes' has %zu entr%s but group %d has %d member%s",
                        json_array_size(v), json_array_size(v) == 1 ? "y" : "ies", op->group, n,
                        n == 1 ? "" : "s");
        op->vbytes = ts_malloc((n > 0 ? n : 1) * sizeof(int64_t));
        for (int i = 0; i < n; i++) {
            char field[32];
            snprintf(field, sizeof field, "send_bytes[%d]", i);
            if (as_int64(c, field, json_array_get(v, i), INT64_MIN, INT64_MAX, &op->vbytes[i]))
                return -1;
        }
    }
    return 0;
}

static int read_op(reader *c, og_graph *g, int r, int pos, const json_t *o)
{
    char buf[96];
    char names[128];
    const char *s = NULL;
    json_t *v;
    int id, stream;
    snprintf(c->where, sizeof c->where, "rank %d op %d", r, pos);
    if (!json_is_object(o))
        return fail(c, "op must be an object, got %s", describe(o, buf, sizeof buf));
    if (need(c, o, "id", &v) || as_int(c, "id", v, INT_MIN, &id)) return -1;
    if (id != pos)
        return fail(c, "field 'id' is %d but the op is at position %d (ids must be 0, 1, 2, ... "
                       "in order)", id, pos);
    if (need(c, o, "kind", &v) || as_str(c, "kind", v, &s)) return -1;
    int kind = og_kind_from_name(s);
    if (kind < 0) {
        name_list(names, sizeof names, kind_name_i, OG_NKINDS);
        return fail(c, "unknown kind '%s' (valid: %s)", shown(s, buf, sizeof buf), names);
    }
    if (check_op_keys(c, o, (og_kind)kind)) return -1;
    if (opt_int(c, o, "stream", 0, INT_MIN, &stream)) return -1;

    og_op *op = og_add_op(g, r, (og_kind)kind, stream);
    if ((v = json_object_get(o, "deps"))) {
        if (!json_is_array(v)) return bad_type(c, "deps", v, "an array");
        size_t n = json_array_size(v);
        if (n > INT_MAX) return fail(c, "field 'deps' has too many entries");
        for (size_t i = 0; i < n; i++) {
            char field[32];
            int d;
            snprintf(field, sizeof field, "deps[%zu]", i);
            if (as_int(c, field, json_array_get(v, i), INT_MIN, &d)) return -1;
            og_add_dep(op, d);
        }
    }
    if ((v = json_object_get(o, "label"))) {
        if (as_str(c, "label", v, &s)) return -1;
        og_set_label(g, op, s);
    }
    switch (op->kind) {
    case OG_COMPUTE: return read_compute(c, o, op);
    case OG_SEND:
    case OG_RECV: return read_p2p(c, o, op);
    case OG_COLL: return read_coll(c, g, o, op);
    default: return fail(c, "impossible kind");
    }
}

static int read_groups(reader *c, og_graph *g, const json_t *arr)
{
    static const char *const keys[] = {"id", "ranks", NULL};
    if (!json_is_array(arr)) return bad_type(c, "groups", arr, "an array");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i);
        json_t *v;
        int id;
        snprintf(c->where, sizeof c->where, "group %zu", i);
        if (!json_is_object(o)) {
            char buf[96];
            return fail(c, "group must be an object, got %s", describe(o, buf, sizeof buf));
        }
        if (check_keys(c, o, keys)) return -1;
        if (need(c, o, "id", &v) || as_int(c, "id", v, INT_MIN, &id)) return -1;
        if ((size_t)id != i || id < 0)
            return fail(c, "field 'id' is %d but the group is at position %zu (group ids must "
                           "be 0, 1, 2, ... in order)", id, i);
        if (need(c, o, "ranks", &v)) return -1;
        if (!json_is_array(v)) return bad_type(c, "ranks", v, "an array");
        size_t n = json_array_size(v);
        if (n > INT_MAX) return fail(c, "field 'ranks' has too many entries");
        int *ranks = ts_malloc((n ? n : 1) * sizeof(int));
        for (size_t j = 0; j < n; j++) {
            char field[32];
            snprintf(field, sizeof field, "ranks[%zu]", j);
            if (as_int(c, field, json_array_get(v, j), INT_MIN, &ranks[j])) {
                free(ranks);
                return -1;
            }
        }
        og_add_group(g, (int)n, ranks);
        free(ranks);
    }
    c->where[0] = 0;
    return 0;
}

static int read_rank(reader *c, og_graph *g, int r, const json_t *o)
{
    static const char *const keys[] = {"rank", "ops", NULL};
    json_t *v;
    int rank;
    snprintf(c->where, sizeof c->where, "rank %d", r);
    if (!json_is_object(o)) {
        char buf[96];
        return fail(c, "rank entry must be an object, got %s", describe(o, buf, sizeof buf));
    }
    if (check_keys(c, o, keys)) return -1;
    if (need(c, o, "rank", &v) || as_int(c, "rank", v, INT_MIN, &rank)) return -1;
    if (rank != r)
        return fail(c, "field 'rank' is %d but the entry is at position %d (ranks must be "
                       "listed 0, 1, 2, ... in order)", rank, r);
    if (need(c, o, "ops", &v)) return -1;
    if (!json_is_array(v)) return bad_type(c, "ops", v, "an array");
    size_t n = json_array_size(v);
    if (n > INT_MAX) return fail(c, "field 'ops' has too many entries");
    ts_grow(&g->ranks[r].ops, sizeof(og_op), &g->ranks[r].cap, n);
    for (size_t i = 0; i < n; i++)
        if (read_op(c, g, r, (int)i, json_array_get(v, i))) return -1;
    return 0;
}

static int read_graph(reader *c, const json_t *root, og_graph **out)
{
    static const char *const keys[] = {"format", "version", "nranks", "hosts",
                                       "groups", "ranks",   NULL};
    char buf[96];
    json_t *v;
    if (!json_is_object(root))
        return fail(c, "top level must be an object, got %s", describe(root, buf, sizeof buf));
    if (!(v = json_object_get(root, "format")))
        return fail(c, "missing field 'format' (not a %s file?)", OG_FORMAT_NAME);
    if (!json_is_string(v) || strcmp(json_string_value(v), OG_FORMAT_NAME) != 0)
        return fail(c, "field 'format' must be \"%s\", got %s", OG_FORMAT_NAME,
                    describe(v, buf, sizeof buf));
    if (!(v = json_object_get(root, "version"))) return fail(c, "missing field 'version'");
    if (!json_is_integer(v))
        return fail(c, "unsupported version %s (supported: %d)", describe(v, buf, sizeof buf),
                    OG_FORMAT_VERSION);
    if (json_integer_value(v) != OG_FORMAT_VERSION)
        return fail(c, "unsupported version %" JSON_INTEGER_FORMAT " (supported: %d)",
                    json_integer_value(v), OG_FORMAT_VERSION);
    if (check_keys(c, root, keys)) return -1;

    int nranks;
    if (need(c, root, "nranks", &v) || as_int(c, "nranks", v, INT_MIN, &nranks)) return -1;
    if (nranks < 1) return fail(c, "field 'nranks' must be >= 1, got %d", nranks);
    json_t *ranks, *hosts = json_object_get(root, "hosts");
    if (need(c, root, "ranks", &ranks)) return -1;
    if (!json_is_array(ranks)) return bad_type(c, "ranks", ranks, "an array");
    /* Check sizes before allocating anything proportional to nranks. */
    if (json_array_size(ranks) != (size_t)nranks)
        return fail(c, "field 'ranks' has %zu entr%s but nranks is %d", json_array_size(ranks),
                    json_array_size(ranks) == 1 ? "y" : "ies", nranks);
    if (hosts) {
        if (!json_is_array(hosts)) return bad_type(c, "hosts", hosts, "an array");
        if (json_array_size(hosts) != (size_t)nranks)
            return fail(c, "field 'hosts' has %zu entr%s but nranks is %d (give a host for "
                           "every rank or leave 'hosts' out)", json_array_size(hosts),
                        json_array_size(hosts) == 1 ? "y" : "ies", nranks);
        for (int r = 0; r < nranks; r++) {
            char field[32];
            const char *s = NULL;
            snprintf(field, sizeof field, "hosts[%d]", r);
            if (as_str(c, field, json_array_get(hosts, r), &s)) return -1;
        }
    }

    og_graph *g = og_new(nranks);
    if (hosts)
        for (int r = 0; r < nranks; r++)
            og_set_host(g, r, json_string_value(json_array_get(hosts, r)));
    if ((v = json_object_get(root, "groups")) && read_groups(c, g, v)) goto fail;
    for (int r = 0; r < nranks; r++)
        if (read_rank(c, g, r, json_array_get(ranks, r))) goto fail;
    *out = g;
    return 0;
fail:
    og_free(g);
    return -1;
}

static int syntax_error(const char *name, const json_error_t *e, char *err, size_t errlen)
{
    char text[JSON_ERROR_TEXT_LENGTH];
    snprintf(text, sizeof text, "%s", e->text);
    for (char *p = text; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    if (e->line < 0) return ts_err(err, errlen, "%s: %s", name, text);
    return ts_err(err, errlen, "%s:%d:%d: %s", name, e->line, e->column, text);
}

static int read_json(json_t *root, const char *name, og_graph **out, char *err, size_t errlen)
{
    reader c = {.name = name, .err = err, .errlen = errlen};
    int rc = read_graph(&c, root, out);
    json_decref(root);
    return rc;
}

int og_read_string(const char *text, const char *name, og_graph **out, char *err, size_t errlen)
{
    json_error_t e;
    *out = NULL;
    if (!name) name = "<string>";
    if (!text) return ts_err(err, errlen, "%s: no text", name);
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!root) return syntax_error(name, &e, err, errlen);
    return read_json(root, name, out, err, errlen);
}

int og_read_file(const char *path, og_graph **out, char *err, size_t errlen)
{
    json_error_t e;
    struct stat st;
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ts_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    int have_st = fstat(fileno(f), &st) == 0;
    if (have_st && S_ISDIR(st.st_mode)) {
        fclose(f);
        return ts_err(err, errlen, "%s: cannot open: %s", path, strerror(EISDIR));
    }
    /* Parsing from memory is about 1.5x faster than jansson's stream reader. */
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    if (have_st && S_ISREG(st.st_mode) && st.st_size > 0) ts_grow(&buf, 1, &cap, (size_t)st.st_size + 1);
    for (;;) {
        ts_grow(&buf, 1, &cap, len + 65536);
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    if (ferror(f)) {
        int e2 = errno;
        fclose(f);
        free(buf);
        return ts_err(err, errlen, "%s: read error: %s", path, strerror(e2));
    }
    fclose(f);
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
    free(buf);
    if (!root) return syntax_error(path, &e, err, errlen);
    return read_json(root, path, out, err, errlen);
}

/* ---------------------------------------------------------------- writing */

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = utf8_len(p);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

/* Everything og_write cannot represent, found before a byte is written. */
static int check_writable(const og_graph *g, const char *name, char *err, size_t errlen)
{
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        if (rk->host && !utf8_valid(rk->host))
            return ts_err(err, errlen, "%s: rank %d: host name is not valid utf-8", name, r);
        for (int i = 0; i < rk->nops; i++) {
            const og_op *op = &rk->ops[i];
#define BAD(...) ts_err(err, errlen, "%s: rank %d op %d: cannot write: " __VA_ARGS__)
            if (op->kind >= OG_NKINDS)
                return BAD("unknown kind %d", name, r, i, (int)op->kind);
            if (og_label(g, op) && !utf8_valid(og_label(g, op)))
                return BAD("label is not valid utf-8", name, r, i);
            if (op->kind == OG_COMPUTE) {
                if (isnan(op->duration) || isinf(op->duration))
                    return BAD("duration is not finite", name, r, i);
                if (op->duration < 0 && !isfinite(op->flops))
                    return BAD("flops is not finite", name, r, i);
            }
            if (op->kind != OG_COLL) continue;
            if (op->coll >= OG_NCOLLS)
                return BAD("unknown collective %d", name, r, i, (int)op->coll);
            if (op->dtype >= OG_NDTYPES)
                return BAD("unknown dtype %d", name, r, i, (int)op->dtype);
            if (op->algo && !utf8_valid(op->algo))
                return BAD("algo is not valid utf-8", name, r, i);
            if (op->coll == OG_ALLTOALLV && op->vbytes &&
                (op->group < 0 || op->group >= g->ngroups))
                return BAD("send_bytes on unknown group %d", name, r, i, op->group);
#undef BAD
        }
    }
    return 0;
}

static void write_op(const og_graph *g, const og_op *op, int id, FILE *f)
{
    fprintf(f, "{\"id\": %d, \"kind\": \"%s\"", id, og_kind_name(op->kind));
    if (op->stream) fprintf(f, ", \"stream\": %d", op->stream);
    switch (op->kind) {
    case OG_COMPUTE:
        if (op->duration >= 0) {
            fputs(", \"duration\": ", f);
            ts_json_number(f, op->duration);
        } else {
            fputs(", \"flops\": ", f);
            ts_json_number(f, op->flops);
            fprintf(f, ", \"bytes\": %" PRId64, op->bytes);
        }
        break;
    case OG_SEND:
    case OG_RECV:
        fprintf(f, ", \"peer\": %d, \"bytes\": %" PRId64, op->peer, op->bytes);
        if (op->tag) fprintf(f, ", \"tag\": %d", op->tag);
        break;
    case OG_COLL:
        fprintf(f, ", \"coll\": \"%s\", \"group\": %d, \"bytes\": %" PRId64 ", \"dtype\": \"%s\"",
                og_coll_name(op->coll), op->group, op->bytes, og_dtype_name(op->dtype));
        if (op->root) fprintf(f, ", \"root\": %d", op->root);
        if (op->algo) {
            fputs(", \"algo\": ", f);
            ts_json_string(f, op->algo);
        }
        if (op->coll == OG_ALLTOALLV && op->vbytes) {
            const og_group *gr = &g->groups[op->group];
            fputs(", \"send_bytes\": [", f);
            for (int j = 0; j < gr->n; j++)
                fprintf(f, "%s%" PRId64, j ? ", " : "", op->vbytes[j]);
            putc(']', f);
        }
        break;
    default: break;
    }
    if (op->ndeps > 0) {
        fputs(", \"deps\": [", f);
        for (int j = 0; j < op->ndeps; j++) fprintf(f, "%s%d", j ? ", " : "", og_deps(op)[j]);
        putc(']', f);
    }
    if (og_label(g, op)) {
        fputs(", \"label\": ", f);
        ts_json_string(f, og_label(g, op));
    }
    putc('}', f);
}

static void write_graph(const og_graph *g, FILE *f)
{
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"nranks\": %d,\n",
            OG_FORMAT_NAME, OG_FORMAT_VERSION, g->nranks);
    int all_hosts = g->nranks > 0;
    for (int r = 0; r < g->nranks; r++)
        if (!g->ranks[r].host) all_hosts = 0;
    if (all_hosts) {
        fputs("  \"hosts\": [", f);
        for (int r = 0; r < g->nranks; r++) {
            if (r) fputs(", ", f);
            ts_json_string(f, g->ranks[r].host);
        }
        fputs("],\n", f);
    }
    fputs("  \"groups\": [", f);
    for (int i = 0; i < g->ngroups; i++) {
        const og_group *gr = &g->groups[i];
        fprintf(f, "%s\n    {\"id\": %d, \"ranks\": [", i ? "," : "", i);
        for (int j = 0; j < gr->n; j++) fprintf(f, "%s%d", j ? ", " : "", gr->ranks[j]);
        fputs("]}", f);
    }
    fputs(g->ngroups ? "\n  ],\n" : "],\n", f);
    fputs("  \"ranks\": [", f);
    for (int r = 0; r < g->nranks; r++) {
        const og_rank *rk = &g->ranks[r];
        fprintf(f, "%s\n    {\"rank\": %d, \"ops\": [", r ? "," : "", r);
        for (int i = 0; i < rk->nops; i++) {
            fputs(i ? ",\n      " : "\n      ", f);
            write_op(g, &rk->ops[i], i, f);
        }
        fputs(rk->nops ? "\n    ]}" : "]}", f);
    }
    fputs(g->nranks > 0 ? "\n  ]\n}\n" : "]\n}\n", f);
}

int og_write(const og_graph *g, FILE *f)
{
    if (check_writable(g, "graph", NULL, 0)) {
        errno = EINVAL;
        return -1;
    }
    write_graph(g, f);
    return ferror(f) ? -1 : 0;
}

int og_write_file(const og_graph *g, const char *path, char *err, size_t errlen)
{
    if (check_writable(g, path, err, errlen)) return -1;
    FILE *f = fopen(path, "w");
    if (!f) return ts_err(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
    write_graph(g, f);
    int werr = ferror(f) ? errno : 0;
    if (fclose(f) != 0 && !werr) werr = errno ? errno : EIO;
    if (werr) return ts_err(err, errlen, "%s: write error: %s", path, strerror(werr));
    return 0;
}
