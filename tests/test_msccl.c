/* MSCCL algorithm XML: the shared samples run symbolically to the right
 * chunks; small files written here reproduce each way a program can fail. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msccl.h"
#include "tests.h"
#include "util.h"

#define MSCCL_DIR "../shared/data/traces/msccl"

static int run(const char *path, long *msgs, char *err)
{
    msccl_algo a;
    if (msccl_load(path, &a, err, TS_ERRLEN) < 0) return -1;
    int rc = msccl_check(&a, msgs, err, TS_ERRLEN);
    msccl_free(&a);
    return rc;
}

/* The msccl-tools ring and all-pairs all-reduces and astra-sim's ring: every
 * rank ends with every chunk reduced over all 8 ranks. */
static void test_samples(void)
{
    static const struct { const char *file; long msgs; } ok[] = {
        {"msccl-tools_ring_8_1.xml", 112},   /* 8 rings x 2(n-1) = 14 messages each, 8 chunks */
        {"msccl-tools_ring_4_2.xml", 224},   /* 16 chunks: twice that */
        {"astrasim_custom_allreduce_8npus_1MB.xml", 112},
        {"msccl-tools_ap_1.xml", 112},       /* all-pairs: 8 x 7 reduce sends + 8 x 7 gathers */
        {"msccl-tools_alltonext_2in.xml", 130}, /* coll="custom": runs without deadlock, no chunk goal */
    };
    char path[512], err[TS_ERRLEN];
    if (access(MSCCL_DIR, R_OK) != 0) {
        printf("\n  (skipped: %s absent)", MSCCL_DIR);
        return;
    }
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", MSCCL_DIR, ok[i].file);
        long m = -1;
        int rc = run(path, &m, err);
        if (rc) fprintf(stderr, "\n  %s: %s\n", ok[i].file, err);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(m, ok[i].msgs);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

#define STEP(s, t, sb, so, db, dof) \
    "<step s=\"" #s "\" type=\"" t "\" srcbuf=\"" sb "\" srcoff=\"" #so "\" dstbuf=\"" db "\" dstoff=\"" #dof \
    "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>"

/* A 2-rank ring all-reduce: each sends its own chunk, receives the other's,
 * reduces, copies and sends it on, then receives the finished chunk. */
static const char *ring2(const char *g0, const char *g1)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allreduce\" inplace=\"1\">"
             "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\"><tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">%s</tb></gpu>"
             "<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\"><tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">%s</tb></gpu>"
             "</algo>", g0, g1);
    return buf;
}

static void test_small_programs(void)
{
    char path[] = "/tmp/ts_msccl_XXXXXX.xml", err[TS_ERRLEN];
    int fd = mkstemps(path, 4);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    long m;
    static const struct { const char *g0, *g1, *msg; } cases[] = {
        /* correct */
        {STEP(0, "s", "i", 0, "i", 0) STEP(1, "rrcs", "i", 1, "i", 1) STEP(2, "r", "i", 0, "i", 0),
         STEP(0, "s", "i", 1, "i", 1) STEP(1, "rrcs", "i", 0, "i", 0) STEP(2, "r", "i", 1, "i", 1), NULL},
        /* both receive first: deadlock */
        {STEP(0, "r", "i", 1, "i", 1) STEP(1, "s", "i", 0, "i", 0),
         STEP(0, "r", "i", 0, "i", 0) STEP(1, "s", "i", 1, "i", 1), "deadlock: gpu 0 tb 0 waits at step 0"},
        /* the finished chunk is never sent back: rank 0 lacks rank 1's part of chunk 0 */
        {STEP(0, "s", "i", 0, "i", 0) STEP(1, "rrc", "i", 1, "i", 1),
         STEP(0, "s", "i", 1, "i", 1) STEP(1, "rrc", "i", 0, "i", 0), "gpu 0 ends with chunk 0 not reduced over every rank"},
        /* reduces the wrong chunk */
        {STEP(0, "s", "i", 0, "i", 0) STEP(1, "rrc", "i", 0, "i", 0),
         STEP(0, "s", "i", 1, "i", 1) STEP(1, "rrc", "i", 1, "i", 1), "gpu 0: reduces chunk 0 with chunk 1"},
        /* a message never received */
        {STEP(0, "s", "i", 0, "i", 0) STEP(1, "s", "i", 1, "i", 1),
         STEP(0, "r", "i", 0, "i", 0), "never receives"},
        /* a chunk outside the buffer */
        {STEP(0, "s", "i", 5, "i", 0), STEP(0, "r", "i", 0, "i", 0), "input chunks 5..5 beyond its 2"},
        /* an unknown step type */
        {STEP(0, "xx", "i", 0, "i", 0), STEP(0, "r", "i", 0, "i", 0), "step type 'xx' unknown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(path, ring2(cases[i].g0, cases[i].g1));
        int rc = run(path, &m, err);
        if (!cases[i].msg) {
            if (rc) fprintf(stderr, "\n  case %zu: %s\n", i, err);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(m, 4);
        } else {
            CU_ASSERT_EQUAL(rc, -1);
            if (!strstr(err, cases[i].msg)) fprintf(stderr, "\n  case %zu: '%s'\n", i, err);
            CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].msg));
        }
    }
    /* not an algorithm at all, or a gpu missing */
    write_file(path, "<system version=\"1\"/>");
    CU_ASSERT_EQUAL(run(path, &m, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an MSCCL algorithm (root element <system>"));
    write_file(path, "<algo ngpus=\"2\" nchunksperloop=\"1\" coll=\"allreduce\"><gpu id=\"0\"/></algo>");
    CU_ASSERT_EQUAL(run(path, &m, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "gpu 1 is missing"));
    write_file(path, "<algo ngpus=\"99\" nchunksperloop=\"1\"/>");
    CU_ASSERT_EQUAL(run(path, &m, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ngpus='99'"));
    unlink(path);
}

void suite_msccl(void)
{
    test_add_suite("msccl", "shared samples reduce every chunk on every rank", test_samples,
                   "small programs: right, deadlocked, wrong", test_small_programs, NULL);
}
