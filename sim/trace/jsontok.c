/* Streaming JSON tokenizer: strings (escapes decoded, long ones truncated),
 * numbers, literals and brackets, with a nesting limit; never builds a DOM. */
#include <stdlib.h>
#include <string.h>

#include "jsontok.h"
#include "util.h"

#define MAXDEPTH 512
#define BLOCK (1 << 16)

void jt_init(jt *t, tr_in *in, size_t smax)
{
    memset(t, 0, sizeof *t);
    t->in = in;
    t->peek = -2;
    t->smax = smax;
    t->line = 1;
    t->scap = 64;
    t->s = ts_malloc(t->scap);
    t->buf = ts_malloc(BLOCK);
}

void jt_free(jt *t)
{
    free(t->s);
    free(t->buf);
}

/* Bytes come from a local block (refilled with tr_read): one call per 64 KiB,
 * not per byte. */
static inline int get(jt *t)
{
    int c;
    if (t->peek != -2) {
        c = t->peek, t->peek = -2;
    } else {
        if (t->pos == t->len) {
            t->len = tr_read(t->in, t->buf, BLOCK);
            t->pos = 0;
            if (!t->len) return -1;
        }
        c = t->buf[t->pos++];
    }
    if (c == '\n') t->line++;
    return c;
}

static void unget(jt *t, int c)
{
    if (c == '\n') t->line--;
    t->peek = c;
}

static jt_kind fail(jt *t, const char *m)
{
    snprintf(t->err, sizeof t->err, "%s", m);
    return JT_ERR;
}

static inline void put(jt *t, int c)
{
    if (t->slen >= t->smax) return;
    if (t->slen + 2 > t->scap) ts_grow(&t->s, 1, &t->scap, t->slen + 2);
    t->s[t->slen++] = (char)c;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static jt_kind string(jt *t)
{
    t->slen = 0;
    for (;;) {
        int c = get(t);
        if (c < 0) return fail(t, "unterminated string");
        if (c == '"') break;
        if (c < 0x20) return fail(t, "control character in string");
        if (c == '\\') {
            c = get(t);
            switch (c) {
            case '"': case '\\': case '/': break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int h = hexval(get(t));
                    if (h < 0) return fail(t, "bad \\u escape in string");
                    v = v * 16 + h;
                }
                c = v < 0x80 && v >= 0x20 ? v : '?';
                break;
            }
            default: return fail(t, "bad escape in string");
            }
        }
        put(t, c);
    }
    t->s[t->slen] = 0;
    return JT_STR;
}

jt_kind jt_next(jt *t)
{
    int c;
    do c = get(t);
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',' || c == ':');
    if (c < 0) {
        if (tr_error(t->in)) return fail(t, tr_error(t->in));
        return t->depth ? fail(t, "truncated document") : JT_EOF;
    }
    switch (c) {
    case '{': case '[':
        if (++t->depth > MAXDEPTH) return fail(t, "nesting deeper than 512");
        return c == '{' ? JT_OBJ : JT_ARR;
    case '}': case ']':
        if (--t->depth < 0) return fail(t, "unbalanced closing bracket");
        return c == '}' ? JT_OBJ_END : JT_ARR_END;
    case '"':
        return string(t);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9')) {
            if (n == sizeof buf - 1) return fail(t, "number too long");
            buf[n++] = (char)c;
            c = get(t);
        }
        unget(t, c);
        buf[n] = 0;
        char *end;
        t->num = strtod(buf, &end);
        if (*end) return fail(t, "bad number");
        return JT_NUM;
    }
    if (c >= 'a' && c <= 'z') {
        t->slen = 0;
        while (c >= 'a' && c <= 'z' && t->slen < 8) put(t, c), c = get(t);
        unget(t, c);
        t->s[t->slen] = 0;
        if (strcmp(t->s, "true") && strcmp(t->s, "false") && strcmp(t->s, "null"))
            return fail(t, "unknown literal");
        return JT_LIT;
    }
    return fail(t, "unexpected character");
}

int jt_skip(jt *t, jt_kind k)
{
    if (k == JT_ERR) return -1;
    if (k != JT_OBJ && k != JT_ARR) return 0;
    int d = t->depth - 1;
    while (t->depth > d) {
        jt_kind x = jt_next(t);
        if (x == JT_ERR) return -1;
        if (x == JT_EOF) return fail(t, "truncated document"), -1;
    }
    return 0;
}
