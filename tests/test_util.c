/* Tests: the shared helpers of sim/ir/util (natural compare, shortest round-trip
 * number formatting, error buffers, growable arrays). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "util.h"

static void test_natcmp(void)
{
    CU_ASSERT(ts_natcmp("gpu-2", "gpu-10") < 0);
    CU_ASSERT(ts_natcmp("gpu-10", "gpu-2") > 0);
    CU_ASSERT(ts_natcmp("gpu-10", "gpu-10") == 0);
    CU_ASSERT(ts_natcmp("", "") == 0);
    CU_ASSERT(ts_natcmp("", "a") < 0);
    CU_ASSERT(ts_natcmp("a", "") > 0);
    CU_ASSERT(ts_natcmp("a", "b") < 0);
    CU_ASSERT(ts_natcmp("node9-gpu7", "node10-gpu0") < 0);
    CU_ASSERT(ts_natcmp("node10-gpu7", "node10-gpu12") < 0);
    CU_ASSERT(ts_natcmp("x1y", "x1z") < 0);
    CU_ASSERT(ts_natcmp("abc", "abcd") < 0);
    CU_ASSERT(ts_natcmp("9", "10") < 0);
    CU_ASSERT(ts_natcmp("100", "99") > 0);
    CU_ASSERT(ts_natcmp("a100b", "a99c") > 0);
    CU_ASSERT(ts_natcmp("gpu-", "gpu-0") < 0);

    /* sorting host names gives the numeric order */
    const char *names[] = {"gpu-10", "gpu-1", "gpu-0", "gpu-2", "gpu-100", "gpu-11"};
    const char *want[] = {"gpu-0", "gpu-1", "gpu-2", "gpu-10", "gpu-11", "gpu-100"};
    int n = sizeof names / sizeof names[0];
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ts_natcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < n; i++) CU_ASSERT_STRING_EQUAL(names[i], want[i]);
}

/* ts_fmt_double's output reads back as exactly d. */
static int round_trips(double d)
{
    char buf[64];
    ts_fmt_double(buf, sizeof buf, d);
    return strtod(buf, NULL) == d;
}

static void test_fmt_double_values(void)
{
    char buf[64];
    static const struct {
        double d;
        const char *s;
    } cases[] = {
        {0, "0"},
        {0.1, "0.1"},
        {1e-9, "1e-09"},
        {1e300, "1e+300"},
        {-3, "-3"},
        {9007199254740992.0, "9007199254740992"}, /* 2^53 */
        {0.0015, "0.0015"},
        {1e12, "1000000000000"},
        {4096, "4096"},
        {1.5, "1.5"},
        {-0.25, "-0.25"},
        {1.0 / 3, "0.3333333333333333"},
        {123456789012345.0, "123456789012345"},
        {1e15, "1e+15"},
        {2.5e-7, "2.5e-07"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_fmt_double(buf, sizeof buf, cases[i].d);
        CU_ASSERT_STRING_EQUAL(buf, cases[i].s);
        CU_ASSERT(strtod(buf, NULL) == cases[i].d);
    }
}

static void test_fmt_double_round_trip(void)
{
    static const double special[] = {
        0.1, 0.2, 0.3, 1e-9, 1e300, -1e300, -3, 9007199254740992.0, 9007199254740993.0,
        4503599627370497.5, 1e-300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
        -1.7976931348623157e308, 3.141592653589793, 2.718281828459045, 1e21, 1e22, 1e23,
        123.456, 0.000123456, 6.02214076e23, 1.0 / 7, 100.0 / 3, 1e15 - 0.5, 1e15 + 1,
        -1e15 + 1, 0.5, 1e-5, 1e-6, 1e-7,
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        CU_ASSERT(round_trips(special[i]));

    /* deterministic pseudo-random bit patterns: every finite double round-trips */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int bad = 0, tried = 0;
    for (int i = 0; i < 50000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d)) continue;
        tried++;
        if (!round_trips(d)) bad++;
    }
    CU_ASSERT(tried > 47000);
    CU_ASSERT_EQUAL(bad, 0);

    /* integers and "human" decimals */
    bad = 0;
    for (long long k = -100000; k <= 100000; k += 7)
        bad += !round_trips((double)k) + !round_trips(k / 1000.0) + !round_trips(k * 1e-9);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_fmt_double_shortest(void)
{
    /* shortest: dropping one more significant digit would not read back */
    char buf[64], shorter[400];
    static const double vals[] = {0.1, 1.0 / 3, 2.0 / 3, 1e-9, 3.14159, 6.02214076e23, 0.0015};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        ts_fmt_double(buf, sizeof buf, vals[i]);
        int digits = 0;
        for (const char *p = buf; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9') digits++;
        /* leading zeros of 0.00x do not count as significant */
        for (const char *p = buf; *p == '0' || *p == '.' || *p == '-'; p++)
            if (*p == '0') digits--;
        if (digits > 1) {
            snprintf(shorter, sizeof shorter, "%.*g", digits - 1, vals[i]);
            CU_ASSERT(strtod(shorter, NULL) != vals[i]);
        }
    }
}

static void test_err(void)
{
    char err[16];
    CU_ASSERT_EQUAL(ts_err(err, sizeof err, "x %d", 42), -1);
    CU_ASSERT_STRING_EQUAL(err, "x 42");
    /* truncated, still terminated */
    CU_ASSERT_EQUAL(ts_err(err, sizeof err, "%s", "a very long message indeed"), -1);
    CU_ASSERT_EQUAL(strlen(err), sizeof err - 1);
    /* no buffer: only the return value */
    CU_ASSERT_EQUAL(ts_err(NULL, 0, "ignored %d", 1), -1);
}

static void test_grow(void)
{
    int *a = NULL;
    size_t cap = 0;
    for (int i = 0; i < 1000; i++) {
        ts_grow(&a, sizeof *a, &cap, (size_t)i + 1);
        CU_ASSERT_FATAL(cap >= (size_t)i + 1);
        a[i] = i;
    }
    size_t before = cap;
    ts_grow(&a, sizeof *a, &cap, 10); /* never shrinks */
    CU_ASSERT_EQUAL(cap, before);
    long sum = 0;
    for (int i = 0; i < 1000; i++) sum += a[i];
    CU_ASSERT_EQUAL(sum, 999L * 1000 / 2);
    free(a);

    char *s = ts_strdup("gpu-7");
    CU_ASSERT_STRING_EQUAL(s, "gpu-7");
    free(s);
}

static void test_clock(void)
{
    double t0 = ts_wtime(), t1 = ts_wtime();
    CU_ASSERT(t1 >= t0);
    CU_ASSERT(ts_peak_rss() > 0);
}

void suite_util(void)
{
    test_add_suite("util",
                   "natcmp", test_natcmp,
                   "fmt_double values", test_fmt_double_values,
                   "fmt_double round trip", test_fmt_double_round_trip,
                   "fmt_double shortest", test_fmt_double_shortest,
                   "err buffers", test_err,
                   "grow and strdup", test_grow,
                   "clock and rss", test_clock,
                   NULL);
}
