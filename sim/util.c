/* Shared helpers: error buffers, checked allocation, number formatting. */
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

int ts_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void oom(size_t n)
{
    fprintf(stderr, "trainsim: out of memory allocating %zu bytes\n", n);
    abort();
}

void *ts_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *ts_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *ts_realloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) oom(n);
    return p;
}

char *ts_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(ts_malloc(n), s, n);
}

void ts_grow(void *arrp, size_t elsz, size_t *cap, size_t need)
{
    void **arr = arrp;
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 4;
    while (c < need) c *= 2;
    *arr = ts_realloc(*arr, c * elsz);
    *cap = c;
}

void ts_fmt_double(char *buf, size_t n, double d)
{
    if (d == (double)(long long)d && d > -1e15 && d < 1e15) {
        snprintf(buf, n, "%lld", (long long)d);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

void ts_json_string(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else putc(*p, f);
        }
    }
    putc('"', f);
}

int ts_natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y) return x < y ? -1 : 1;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

double ts_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

long ts_peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss * 1024L;
}
