/* Shared helpers: error buffers, checked allocation, number formatting. */
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

int ts_verr_at(char *err, size_t errlen, const char *a, const char *b, const char *fmt, va_list ap)
{
    char msg[TS_ERRLEN];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *pa = a && *a ? a : NULL, *pb = b && *b ? b : NULL;
    if (pa && pb) return ts_err(err, errlen, "%s: %s: %s", pa, pb, msg);
    if (pa || pb) return ts_err(err, errlen, "%s: %s", pa ? pa : pb, msg);
    return ts_err(err, errlen, "%s", msg);
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
    if (d > -1e15 && d < 1e15 && d == (double)(long long)d) {
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
        if (*p == '"' || *p == '\\') {
            putc('\\', f);
            putc(*p, f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            putc(*p, f);
        }
    }
    putc('"', f);
}

void ts_json_number(FILE *f, double d)
{
    char buf[40];
    ts_fmt_double(buf, sizeof buf, d);
    fputs(buf, f);
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

static size_t slot_of(const ts_sums *m, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    size_t i = (size_t)(h >> 17) & (m->cap - 1);
    while (m->used[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

void ts_sums_add(ts_sums *m, uint64_t key, double v)
{
    if (2 * (m->n + 1) > m->cap) {
        ts_sums old = *m;
        m->cap = old.cap ? 2 * old.cap : 64;
        m->keys = ts_malloc(m->cap * sizeof *m->keys);
        m->vals = ts_malloc(m->cap * sizeof *m->vals);
        m->used = ts_calloc(m->cap, 1);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.used[i]) ts_sums_add(m, old.keys[i], old.vals[i]);
        ts_sums_free(&old);
    }
    size_t i = slot_of(m, key);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->vals[i] = 0;
        m->n++;
    }
    m->vals[i] += v;
}

int ts_sums_get(const ts_sums *m, uint64_t key, double *v)
{
    if (!m->cap) return 0;
    size_t i = slot_of(m, key);
    if (!m->used[i]) return 0;
    *v = m->vals[i];
    return 1;
}

void ts_sums_free(ts_sums *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

int ts_config_path(const char *name, const char *dir, char *path, size_t n)
{
    size_t l = strlen(name);
    if (strchr(name, '/') || (l > 5 && strcmp(name + l - 5, ".json") == 0)) {
        snprintf(path, n, "%s", name);
        return 0;
    }
    snprintf(path, n, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    fclose(f);
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir/../sub when dir is the folder of file (an absolute path) and it exists. */
static int beside(const char *file, const char *sub, char *dir, size_t n)
{
    char d[3000];
    snprintf(d, sizeof d, "%s", file);
    char *slash = strrchr(d, '/');
    if (!slash) return 0;
    *slash = 0;
    snprintf(dir, n, "%s/../%s", d, sub);
    return is_dir(dir);
}

int ts_is_json_text(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == '{';
}

const char *ts_config_dir(void)
{
    static char dir[4096];
    if (dir[0]) return dir;
    const char *env = getenv("TRAINSIM_CONFIGS");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    if (is_dir("configs")) {
        snprintf(dir, sizeof dir, "configs");
        return dir;
    }
    char exe[3000];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        if (beside(exe, "configs", dir, sizeof dir) || beside(exe, "share/trainsim", dir, sizeof dir)) return dir;
    }
    Dl_info lib; /* the shared object holding this function: libtrainsim.so, or the program itself */
    if (dladdr((void *)ts_config_dir, &lib) && lib.dli_fname && lib.dli_fname[0] == '/' &&
        beside(lib.dli_fname, "share/trainsim", dir, sizeof dir))
        return dir;
    snprintf(dir, sizeof dir, "configs");
    return dir;
}

/* Optimal string alignment distance, case-blind; long names are cut at 63. */
static int edit_distance(const char *a, const char *b)
{
    enum { M = 64 };
    int d[M][M];
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > M - 1) la = M - 1;
    if (lb > M - 1) lb = M - 1;
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *ts_closest(const char *s, const char *const *cands, size_t n)
{
    const char *best = NULL;
    int bestd = 1 << 30;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        int d = edit_distance(s, cands[i]);
        if (d < bestd) bestd = d, best = cands[i];
    }
    if (!best) return NULL;
    int longer = (int)(strlen(s) > strlen(best) ? strlen(s) : strlen(best));
    int limit = longer / 3 > 2 ? longer / 3 : 2;
    return bestd > 0 && bestd <= limit ? best : NULL;
}

static int names_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **ts_json_names(const char *dir, size_t *n)
{
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
        ts_grow(&names, sizeof *names, &cap, *n + 1);
        names[(*n)++] = strndup(e->d_name, l - 5);
    }
    closedir(d);
    if (*n) qsort(names, *n, sizeof *names, names_cmp);
    return names;
}

void ts_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* Read exactly n bytes from fd (a pipe from a forked child): 0, or -1 on an
 * error or an early end. */
int ts_read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) return -1;
        p += r, n -= (size_t)r;
    }
    return 0;
}

/* Write exactly n bytes to fd: 0, or -1 on an error. */
int ts_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}
