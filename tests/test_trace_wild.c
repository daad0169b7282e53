/* Recorded inputs as users have them (issue 16): each failure class reproduced
 * with a small file written here, and the fix checked (SimGrid platform
 * versions, SMPI action spellings and index files, Kineto variants, PyTorch
 * execution traces linked with Kineto). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "trace.h"
#include "util.h"

/* Write text to the scratch file name; returns its path. */
static const char *write_tmp(const char *name, const char *text)
{
    const char *p = test_tmp(name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static og_graph *import_fmt(int n, const char **paths, const char *fmt, char *err)
{
    og_graph *g = NULL;
    tr_opts o = {0};
    o.format = fmt;
    if (tr_import(n, (char *const *)paths, &o, &g, err, TS_ERRLEN) < 0) {
        printf("\n  import failed: %s", err);
        return NULL;
    }
    return g;
}

static int count_kind(const og_graph *g, int r, og_kind k)
{
    int n = 0;
    for (int i = 0; i < g->ranks[r].nops; i++) n += g->ranks[r].ops[i].kind == k;
    return n;
}

/* ------------------------------------------------------------ SimGrid platforms */

static const char v3_platform[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"http://simgrid.gforge.inria.fr/simgrid.dtd\">\n"
    "<platform version=\"%s\">\n"
    "  <AS id=\"AS0\" routing=\"Full\">\n"
    "    <host id=\"a\" power=\"1E9\"/>\n"
    "    <host id=\"b\" power=\"1E9\"/>\n"
    "    <link id=\"l\" bandwidth=\"1E9\" latency=\"1E-6\"/>\n"
    "    <route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n"
    "  </AS>\n"
    "</platform>\n";

/* SimGrid aborts the process (exit 134) on a platform of another formalism
 * version: trainsim refuses it first, exit 2, naming simgrid_update_xml. */
static void test_simgrid_old_platform(void)
{
    char xml[1024], out[8192], args[1024];
    char tr[256]; /* test_tmp's buffers rotate */
    snprintf(tr, sizeof tr, "%s", write_tmp("v3.ti", "0 init\n1 init\n0 send 1 0 100\n1 recv 0 0 100\n"));
    static const struct { const char *version, *name, *needle; } cases[] = {
        {"3", "v3.xml", "simgrid_update_xml"},
        {"2", "v2.xml", "simgrid_update_xml"},
        {"4.2", "v42.xml", "is not one SimGrid"},
        {"four", "vbad.xml", "simgrid_update_xml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(xml, sizeof xml, v3_platform, cases[i].version);
        const char *p = write_tmp(cases[i].name, xml);
        snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, cases[i].needle));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, ":3: SimGrid platform version"));
        CU_ASSERT_PTR_NULL(strstr(out, "Aborted"));
        unlink(p);
    }
    /* no version attribute at all: SimGrid's "ancient file" abort */
    const char *p = write_tmp("vnone.xml", "<?xml version='1.0'?>\n<platform>\n<zone id=\"z\" routing=\"Full\">"
                                           "<host id=\"a\" speed=\"1f\"/></zone>\n</platform>\n");
    snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
    CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "version '(none)' is older than 4"));
    unlink(p);
    /* formalism 4.1: SimGrid also aborts without its DOCTYPE line (or with
     * another one); with it, the platform runs */
    static const char v41[] = "<?xml version='1.0'?>\n%s<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                              "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>\n"
                              "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
                              "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n</zone>\n</platform>\n";
    static const struct { const char *doctype, *needle; int rc; } dt[] = {
        {"", "has no DOCTYPE", 2},
        {"<!DOCTYPE platform SYSTEM \"simgrid.dtd\">\n", "declares another DOCTYPE", 2},
        {"<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n", "ranks 2", 0},
        {"<!DOCTYPE platform SYSTEM \"http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd\">\n", "ranks 2", 0},
    };
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        snprintf(xml, sizeof xml, v41, dt[i].doctype);
        p = write_tmp("v41.xml", xml);
        snprintf(args, sizeof args, "sim --platform %s --trace %s", p, tr);
        CU_ASSERT_EQUAL(test_cli(args, out, sizeof out), dt[i].rc);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, dt[i].needle));
        unlink(p);
    }
    unlink(tr);
}

/* ------------------------------------------------------------ SMPI time-independent */

/* The camel-case actions of SimGrid's older replayers (allReduce, Isend,
 * waitAll, allToAllV, ...) import as the lowercase ones do. */
static void test_smpi_action_case(void)
{
    char err[TS_ERRLEN];
    const char *lower = write_tmp("lower.ti",
                                  "0 init\n1 init\n0 allreduce 1000 10\n1 allreduce 1000 10\n"
                                  "0 isend 1 0 64\n1 irecv 0 0 64\n0 waitall\n1 waitall\n"
                                  "0 alltoallv 200 100 100 200 100 100\n1 alltoallv 200 100 100 200 100 100\n"
                                  "0 sendrecv 8 1 8 1\n1 sendrecv 8 0 8 0\n0 reducescatter 10 10 5\n"
                                  "1 reducescatter 10 10 5\n0 finalize\n1 finalize\n");
    const char *camel = write_tmp("camel.ti",
                                  "0 init\n1 Init\n0 allReduce 1000 10\n1 AllReduce 1000 10\n"
                                  "0 Isend 1 0 64\n1 Irecv 0 0 64\n0 waitAll\n1 WAITALL\n"
                                  "0 allToAllV 200 100 100 200 100 100\n1 AllToAllv 200 100 100 200 100 100\n"
                                  "0 sendRecv 8 1 8 1\n1 SendRecv 8 0 8 0\n0 reduceScatter 10 10 5\n"
                                  "1 ReduceScatter 10 10 5\n0 finalize\n1 Finalize\n");
    const char *p1[1] = {lower}, *p2[1] = {camel};
    og_graph *a = import_fmt(1, p1, NULL, err), *b = import_fmt(1, p2, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(a->ranks[r].nops, b->ranks[r].nops);
        CU_ASSERT_EQUAL(count_kind(b, r, OG_COLL), 3);
        for (int i = 0; i < a->ranks[r].nops && i < b->ranks[r].nops; i++) {
            CU_ASSERT_EQUAL(a->ranks[r].ops[i].kind, b->ranks[r].ops[i].kind);
            CU_ASSERT_EQUAL(a->ranks[r].ops[i].bytes, b->ranks[r].ops[i].bytes);
        }
    }
    og_free(a), og_free(b);
    /* an unknown action still fails, naming it (lowercased) */
    const char *bad = write_tmp("bad.ti", "0 init\n0 allFoo 1 2\n");
    const char *p3[1] = {bad};
    og_graph *g = NULL;
    tr_opts o = {.format = "smpi-ti"};
    CU_ASSERT_EQUAL(tr_import(1, (char *const *)p3, &o, &g, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.ti:2: rank 0: unknown action 'allfoo'"));
    unlink(lower), unlink(camel), unlink(bad);
}

/* split_traces-style index files: one per-rank path a line, relative to the
 * index's folder; blank lines, '#' comments, CRLF and stray blanks tolerated;
 * per-rank files that start with an action other than init detected. */
static void test_smpi_index(void)
{
    char err[TS_ERRLEN], dir[256], sub[300], cmd[700];
    snprintf(dir, sizeof dir, "%s", test_tmp("idx"));
    snprintf(sub, sizeof sub, "%s/ranks", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", sub);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    char p0[400], p1[400], idx[400];
    snprintf(p0, sizeof p0, "%s/r0.txt", sub);
    snprintf(p1, sizeof p1, "%s/r1.txt", sub);
    snprintf(idx, sizeof idx, "%s/index", dir);
    FILE *f = fopen(p0, "w");
    fputs("0 compute 1e6\n0 send 1 0 1e3\n0 allReduce 100 1\n", f); /* no init, no trailing newline after */
    fclose(f);
    f = fopen(p1, "w");
    fputs("1 compute 2e6\n1 recv 0 0 1e3\n1 allReduce 100 1", f);
    fclose(f);
    f = fopen(idx, "w");
    fputs("# per-rank traces\r\n\r\n  ranks/r0.txt \r\nranks/r1.txt\r\n", f);
    fclose(f);
    const char *p[1] = {idx};
    og_graph *g = import_fmt(1, p, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 2);
    CU_ASSERT_EQUAL(count_kind(g, 0, OG_SEND), 1);
    CU_ASSERT_EQUAL(count_kind(g, 1, OG_RECV), 1);
    CU_ASSERT_EQUAL(count_kind(g, 1, OG_COLL), 1);
    og_free(g);
    /* an index naming a missing file says which */
    f = fopen(idx, "w");
    fputs("ranks/r0.txt\nranks/r9.txt\n", f);
    fclose(f);
    og_graph *h = NULL;
    tr_opts o = {.format = "smpi-ti"};
    CU_ASSERT_EQUAL(tr_import(1, (char *const *)p, &o, &h, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "r9.txt: cannot open"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

void suite_trace_wild(void)
{
    test_add_suite("trace-wild", "simgrid: old platform versions refused, exit 2", test_simgrid_old_platform,
                   "smpi: action names in any case", test_smpi_action_case,
                   "smpi: index files of per-rank traces", test_smpi_index, NULL);
}
