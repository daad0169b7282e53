/* Tests: the native trace format reader and writer (sim/og_io.c): field values,
 * byte-identical canonical round trips, and every syntax and content error. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opgraph.h"
#include "tests.h"
#include "util.h"

/* Whole file into a malloc'd string, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        ts_grow(&buf, 1, &cap, len + n + 1);
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf) buf = ts_calloc(1, 1);
    buf[len] = 0;
    return buf;
}

/* og_write into a malloc'd string (NULL when og_write fails). */
static char *write_string(const og_graph *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc = og_write(g, f);
    fclose(f);
    if (rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int str_eq(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* Structural equality of two graphs; returns a description of the first
 * difference in why (for the assertion message), or 1 when equal. */
static int graph_equal(const og_graph *a, const og_graph *b, char *why, size_t n)
{
    if (a->nranks != b->nranks) return snprintf(why, n, "nranks"), 0;
    if (a->ngroups != b->ngroups) return snprintf(why, n, "ngroups"), 0;
    for (int i = 0; i < a->ngroups; i++) {
        const og_group *x = &a->groups[i], *y = &b->groups[i];
        if (x->id != y->id || x->n != y->n) return snprintf(why, n, "group %d", i), 0;
        for (int j = 0; j < x->n; j++)
            if (x->ranks[j] != y->ranks[j]) return snprintf(why, n, "group %d rank %d", i, j), 0;
    }
    for (int r = 0; r < a->nranks; r++) {
        const og_rank *x = &a->ranks[r], *y = &b->ranks[r];
        if (!str_eq(x->host, y->host)) return snprintf(why, n, "rank %d host", r), 0;
        if (x->nops != y->nops) return snprintf(why, n, "rank %d nops", r), 0;
        for (int i = 0; i < x->nops; i++) {
            const og_op *p = &x->ops[i], *q = &y->ops[i];
#define DIFF(cond, what) \
    if (cond) return snprintf(why, n, "rank %d op %d %s", r, i, what), 0
            DIFF(p->id != q->id, "id");
            DIFF(p->kind != q->kind, "kind");
            DIFF(p->stream != q->stream, "stream");
            DIFF(p->ndeps != q->ndeps, "ndeps");
            for (int j = 0; j < p->ndeps; j++) DIFF(og_deps(p)[j] != og_deps(q)[j], "deps");
            DIFF(!str_eq(og_label(a, p), og_label(b, q)), "label");
            DIFF(p->bytes != q->bytes, "bytes");
            /* a collective's algo and send_bytes share a compute op's flops and duration */
            DIFF(p->kind != OG_COLL && p->flops != q->flops, "flops");
            DIFF(p->kind != OG_COLL && p->duration != q->duration, "duration");
            DIFF(p->peer != q->peer, "peer");
            DIFF(p->tag != q->tag, "tag");
            DIFF(p->coll != q->coll, "coll");
            DIFF(p->group != q->group, "group");
            DIFF(p->dtype != q->dtype, "dtype");
            DIFF(p->root != q->root, "root");
            DIFF(p->kind == OG_COLL && !str_eq(p->algo, q->algo), "algo");
            DIFF(p->kind == OG_COLL && !p->vbytes != !q->vbytes, "send_bytes presence");
            if (p->kind == OG_COLL && p->vbytes)
                for (int j = 0; j < a->groups[p->group].n; j++)
                    DIFF(p->vbytes[j] != q->vbytes[j], "send_bytes");
#undef DIFF
        }
    }
    return 1;
}

static void test_read_example(void)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = NULL;
    int rc = og_read_file(test_data("example.json"), &g, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->nranks, 3);
    CU_ASSERT_STRING_EQUAL(g->ranks[0].host, "gpu-0");
    CU_ASSERT_STRING_EQUAL(g->ranks[2].host, "gpu-2");
    CU_ASSERT_EQUAL_FATAL(g->ngroups, 2);
    CU_ASSERT_EQUAL(g->groups[0].id, 0);
    CU_ASSERT_EQUAL(g->groups[0].n, 2);
    CU_ASSERT_EQUAL(g->groups[1].n, 3);
    CU_ASSERT_EQUAL(g->groups[1].ranks[0], 2);
    CU_ASSERT_EQUAL(g->groups[1].ranks[2], 0);
    CU_ASSERT_EQUAL_FATAL(g->ranks[0].nops, 6);
    CU_ASSERT_EQUAL(g->ranks[1].nops, 5);
    CU_ASSERT_EQUAL(g->ranks[2].nops, 2);
    CU_ASSERT_EQUAL(og_total_ops(g), 13);

    const og_op *op = &g->ranks[0].ops[0];
    CU_ASSERT_EQUAL(op->id, 0);
    CU_ASSERT_EQUAL(op->kind, OG_COMPUTE);
    CU_ASSERT_EQUAL(op->stream, 0);
    CU_ASSERT_EQUAL(op->flops, 1e12);
    CU_ASSERT_EQUAL(op->bytes, 4096);
    CU_ASSERT(op->duration < 0);
    CU_ASSERT_STRING_EQUAL(og_label(g, op), "layer0.fwd");
    CU_ASSERT_EQUAL(op->ndeps, 0);

    op = &g->ranks[0].ops[1];
    CU_ASSERT_EQUAL(op->kind, OG_COLL);
    CU_ASSERT_EQUAL(op->stream, 1);
    CU_ASSERT_EQUAL(op->coll, OG_ALLREDUCE);
    CU_ASSERT_EQUAL(op->group, 0);
    CU_ASSERT_EQUAL(op->bytes, 1048576);
    CU_ASSERT_EQUAL(op->dtype, OG_BF16);
    CU_ASSERT_EQUAL(op->root, 0);
    CU_ASSERT_PTR_NULL(op->algo);
    CU_ASSERT_PTR_NULL(og_label(g, op));
    CU_ASSERT_EQUAL_FATAL(op->ndeps, 1);
    CU_ASSERT_EQUAL(og_deps(op)[0], 0);

    op = &g->ranks[0].ops[2];
    CU_ASSERT_EQUAL(op->kind, OG_SEND);
    CU_ASSERT_EQUAL(op->peer, 1);
    CU_ASSERT_EQUAL(op->bytes, 4096);
    CU_ASSERT_EQUAL(op->tag, 3);

    op = &g->ranks[0].ops[3];
    CU_ASSERT_EQUAL(op->kind, OG_COMPUTE);
    CU_ASSERT_EQUAL(op->duration, 0.0015);
    CU_ASSERT_EQUAL(op->flops, 0);

    op = &g->ranks[0].ops[4];
    CU_ASSERT_EQUAL(op->coll, OG_BROADCAST);
    CU_ASSERT_EQUAL(op->group, 1);
    CU_ASSERT_EQUAL(op->dtype, OG_F32);
    CU_ASSERT_EQUAL(op->root, 2);
    CU_ASSERT_STRING_EQUAL(op->algo, "chain");
    CU_ASSERT_EQUAL_FATAL(op->ndeps, 2);
    CU_ASSERT_EQUAL(og_deps(op)[1], 3);

    op = &g->ranks[0].ops[5];
    CU_ASSERT_EQUAL(op->coll, OG_ALLTOALLV);
    CU_ASSERT_EQUAL(op->dtype, OG_I8);
    CU_ASSERT_EQUAL(op->bytes, 300);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op->vbytes);
    CU_ASSERT_EQUAL(op->vbytes[0], 100);
    CU_ASSERT_EQUAL(op->vbytes[1], 200);
    CU_ASSERT_EQUAL(op->vbytes[2], 0);

    op = &g->ranks[1].ops[2];
    CU_ASSERT_EQUAL(op->kind, OG_RECV);
    CU_ASSERT_EQUAL(op->peer, 0);
    CU_ASSERT_EQUAL(op->tag, 3);

    CU_ASSERT_EQUAL(og_check(g, "example.json", err, sizeof err), 0);
    og_free(g);
}

/* Read a canonical file, write it back: the bytes are identical. */
static void assert_canonical(const char *path)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = NULL;
    char *text = slurp(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(og_read_file(path, &g, err, sizeof err), 0);
    char *out = write_string(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_STRING_EQUAL(out, text);
    free(out);
    free(text);
    og_free(g);
}

static void test_canonical_example(void) { assert_canonical(test_data("example.json")); }

/* docs/trace-format.md's example is tests/data/example.json, verbatim. */
static void test_doc_example(void)
{
    char *doc = slurp("docs/trace-format.md"), *ex = slurp(test_data("example.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
    char *start = strstr(doc, "```json\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(start);
    start += strlen("```json\n");
    char *end = strstr(start, "```");
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    *end = 0;
    CU_ASSERT_STRING_EQUAL(start, ex);
    free(doc);
    free(ex);
}

static void test_canonical_layout(void)
{
    /* the exact layout of small cases: no hosts, no groups, empty op lists */
    static const char *const texts[] = {
        "{\n"
        "  \"format\": \"trainsim-trace\",\n"
        "  \"version\": 1,\n"
        "  \"nranks\": 1,\n"
        "  \"groups\": [],\n"
        "  \"ranks\": [\n"
        "    {\"rank\": 0, \"ops\": []}\n"
        "  ]\n"
        "}\n",
        "{\n"
        "  \"format\": \"trainsim-trace\",\n"
        "  \"version\": 1,\n"
        "  \"nranks\": 2,\n"
        "  \"hosts\": [\"a\\\"b\", \"c\\\\d\\u000a\\u0001\\u001f\xc3\xa9\"],\n"
        "  \"groups\": [\n"
        "    {\"id\": 0, \"ranks\": [1, 0]}\n"
        "  ],\n"
        "  \"ranks\": [\n"
        "    {\"rank\": 0, \"ops\": []},\n"
        "    {\"rank\": 1, \"ops\": [\n"
        "      {\"id\": 0, \"kind\": \"compute\", \"flops\": 0, \"bytes\": 0},\n"
        "      {\"id\": 1, \"kind\": \"compute\", \"stream\": 63, \"flops\": 1.5e+21, \"bytes\": "
        "-1, \"deps\": [0, 0], \"label\": \"\"},\n"
        "      {\"id\": 2, \"kind\": \"coll\", \"coll\": \"barrier\", \"group\": 0, \"bytes\": 0, "
        "\"dtype\": \"float\"}\n"
        "    ]}\n"
        "  ]\n"
        "}\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char err[TS_ERRLEN] = "";
        og_graph *g = NULL;
        int rc = og_read_string(texts[i], "t.json", &g, err, sizeof err);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        char *out = write_string(g);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_STRING_EQUAL(out, texts[i]);
        free(out);
        og_free(g);
    }
}

/* A graph with every op kind and every optional field, built through the API. */
static og_graph *build_full_graph(void)
{
    og_graph *g = og_new(4);
    for (int r = 0; r < 4; r++) {
        char host[32];
        snprintf(host, sizeof host, "node%d-gpu%d", r / 2, r % 2);
        og_set_host(g, r, host);
    }
    int world[] = {0, 1, 2, 3}, pair[] = {3, 1}, one[] = {2};
    int gw = og_add_group(g, 4, world);
    int gp = og_add_group(g, 2, pair);
    int g1 = og_add_group(g, 1, one);

    og_op *op = og_compute(g, 0, 0, 1.5e13 + 0.125, 123456789);
    og_set_label(g, op, "layer0.fwd \"attn\"\\\n\t\x01 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
    og_compute_fixed(g, 0, 2, 0);
    og_compute_fixed(g, 0, 2, 1e-9);
    op = og_compute_fixed(g, 0, 3, 12345.678901234567);
    og_set_deps(op, 3, (int[]){0, 1, 2});
    op = og_send(g, 0, 1, 1, (int64_t)1 << 50, -7);
    og_add_dep(op, 3);
    og_send(g, 0, 1, 2, 0, 2147483647);
    op = og_recv(g, 1, 63, 0, (int64_t)1 << 50, -7);
    og_set_label(g, op, "");
    og_recv(g, 2, 0, 0, 0, 2147483647);
    static const og_coll colls[] = {OG_ALLREDUCE, OG_ALLGATHER, OG_REDUCESCATTER, OG_BROADCAST,
                                    OG_REDUCE,    OG_ALLTOALL,  OG_ALLTOALLV,     OG_BARRIER};
    for (int r = 0; r < 4; r++)
        for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++) {
            og_dtype t = (og_dtype)(k % OG_NDTYPES);
            int64_t bytes = colls[k] == OG_BARRIER ? 0 : (int64_t)(k + 1) * 1024;
            op = og_collective(g, r, (int)k % 3, colls[k], gw, bytes, t);
            if (colls[k] == OG_BROADCAST || colls[k] == OG_REDUCE) op->root = 3;
            if (colls[k] == OG_ALLREDUCE) og_set_algo(op, "ring");
            if (colls[k] == OG_ALLTOALLV) {
                op->vbytes = ts_malloc(4 * sizeof(int64_t));
                for (int j = 0; j < 4; j++) op->vbytes[j] = (int64_t)(j + r) * 100;
                op->bytes = 0;
                for (int j = 0; j < 4; j++) op->bytes += op->vbytes[j];
            }
            if (k > 0) og_add_dep(op, op->id - 1);
        }
    op = og_collective(g, 3, 0, OG_ALLGATHER, gp, 8, OG_F64);
    op = og_collective(g, 1, 0, OG_ALLGATHER, gp, 8, OG_F64);
    og_set_label(g, op, "pair");
    og_collective(g, 2, 5, OG_ALLTOALL, g1, 64, OG_U8);
    for (og_dtype t = 0; t < OG_NDTYPES; t++) og_collective(g, 2, 0, OG_ALLREDUCE, g1, 8, t);
    return g;
}

static void test_api_round_trip(void)
{
    char err[TS_ERRLEN] = "", why[128] = "";
    og_graph *g = build_full_graph(), *h = NULL;
    CU_ASSERT_EQUAL(og_check(g, "api", err, sizeof err), 0);
    char *text = write_string(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int rc = og_read_string(text, "api", &h, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    int eq = graph_equal(g, h, why, sizeof why);
    CU_ASSERT(eq);
    if (!eq) fprintf(stderr, "\n  first difference: %s\n", why);
    /* and the text is a fixed point */
    char *text2 = write_string(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text2);
    CU_ASSERT_STRING_EQUAL(text, text2);
    /* every kind and collective name is in the text */
    for (int k = 0; k < OG_NKINDS; k++) {
        char want[32];
        snprintf(want, sizeof want, "\"kind\": \"%s\"", og_kind_name((og_kind)k));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    }
    for (int k = 0; k < OG_NCOLLS; k++) {
        char want[32];
        snprintf(want, sizeof want, "\"coll\": \"%s\"", og_coll_name((og_coll)k));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"send_bytes\": [300, 400, 500, 600]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\\\"attn\\\"\\\\\\u000a\\u0009\\u0001 caf\xc3\xa9"));
    free(text);
    free(text2);
    og_free(g);
    og_free(h);
}

static void test_file_round_trip(void)
{
    char err[TS_ERRLEN] = "", why[128] = "";
    char path[] = "/tmp/trainsim-io-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    og_graph *g = build_full_graph(), *h = NULL;
    CU_ASSERT_EQUAL_FATAL(og_write_file(g, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(og_read_file(path, &h, err, sizeof err), 0);
    CU_ASSERT(graph_equal(g, h, why, sizeof why));
    char *a = slurp(path), *b = write_string(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    unlink(path);

    /* a place that cannot be written */
    CU_ASSERT_EQUAL(og_write_file(g, "/nonexistent-dir/x.json", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "/nonexistent-dir/x.json: cannot open for writing: No such file "
                                "or directory");
    og_free(g);
    og_free(h);
}

static void test_write_unrepresentable(void)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = og_new(2);
    og_compute_fixed(g, 0, 0, 1);
    og_op *op = og_compute_fixed(g, 1, 0, NAN);
    char *text = write_string(g);
    CU_ASSERT_PTR_NULL(text);
    CU_ASSERT_EQUAL(og_write_file(g, "/tmp/never-written.json", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "/tmp/never-written.json: rank 1 op 0: cannot write: duration is "
                                "not finite");
    CU_ASSERT_EQUAL(access("/tmp/never-written.json", F_OK), -1);
    op->duration = -1;
    op->flops = INFINITY;
    CU_ASSERT_EQUAL(og_write_file(g, "/tmp/never-written.json", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "/tmp/never-written.json: rank 1 op 0: cannot write: flops is "
                                "not finite");
    op->flops = 1;
    og_set_label(g, op, "bad \xff utf-8");
    CU_ASSERT_EQUAL(og_write_file(g, "/tmp/never-written.json", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "/tmp/never-written.json: rank 1 op 0: cannot write: label is "
                                "not valid utf-8");
    og_set_label(g, op, "overlong \xc0\xaf");
    CU_ASSERT_PTR_NULL(write_string(g));
    og_set_label(g, op, "surrogate \xed\xa0\x80");
    CU_ASSERT_PTR_NULL(write_string(g));
    og_set_label(g, op, "truncated \xe2\x82");
    CU_ASSERT_PTR_NULL(write_string(g));
    og_set_label(g, op, "fine \xe2\x82\xac");
    text = write_string(g);
    CU_ASSERT_PTR_NOT_NULL(text);
    free(text);
    og_free(g);
}

/* ------------------------------------------------------------ errors */

#define HEAD "{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 2, "
#define GROUPS "\"groups\": [{\"id\": 0, \"ranks\": [0, 1]}], "
/* a 2-rank trace whose rank 0 holds the op list OPS */
#define OPS(ops) HEAD GROUPS "\"ranks\": [{\"rank\": 0, \"ops\": [" ops "]}, " \
                 "{\"rank\": 1, \"ops\": []}]}"
#define OK0 "{\"id\": 0, \"kind\": \"compute\", \"duration\": 1}, "

static const struct {
    const char *text, *msg;
} read_errors[] = {
    /* syntax, with line and column */
    {"", "t.json:1:0: '[' or '{' expected near end of file"},
    {"{\n  \"format\": \"trainsim-trace\",\n  \"version\": 1,,\n}",
     "t.json:3:16: string or '}' expected near ','"},
    {"{\"format\": \"trainsim-trace\", \"format\": \"x\"}",
     "t.json:1:37: duplicate object key near '\"format\"'"},
    {"{\"a\": 1} x", "t.json:1:10: end of file expected near 'x'"},
    {"{\"a\": tru}", "t.json:1:9: invalid token near 'tru'"},
    {"{\"bytes\": 99999999999999999999}", "t.json:1:30: too big integer near"},
    /* top level */
    {"[1, 2]", "t.json: top level must be an object, got an array"},
    {"{}", "t.json: missing field 'format' (not a trainsim-trace file?)"},
    {"{\"format\": \"chakra\"}",
     "t.json: field 'format' must be \"trainsim-trace\", got string \"chakra\""},
    {"{\"format\": \"trainsim-trace\"}", "t.json: missing field 'version'"},
    {"{\"format\": \"trainsim-trace\", \"version\": 2}",
     "t.json: unsupported version 2 (supported: 1)"},
    {"{\"format\": \"trainsim-trace\", \"version\": \"1\"}",
     "t.json: unsupported version string \"1\" (supported: 1)"},
    {HEAD "\"rankz\": []}", "t.json: unknown field 'rankz'"},
    {"{\"format\": \"trainsim-trace\", \"version\": 1, \"ranks\": []}",
     "t.json: missing field 'nranks'"},
    {"{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 0, \"ranks\": []}",
     "t.json: field 'nranks' must be >= 1, got 0"},
    {"{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 2.0, \"ranks\": []}",
     "t.json: field 'nranks' must be an integer, got real number 2"},
    {"{\"format\": \"trainsim-trace\", \"version\": 1, \"nranks\": 3000000000, \"ranks\": []}",
     "t.json: field 'nranks' value 3000000000 out of range (-2147483648..2147483647)"},
    {HEAD "\"groups\": []}", "t.json: missing field 'ranks'"},
    {HEAD "\"ranks\": {}}", "t.json: field 'ranks' must be an array, got an object"},
    {HEAD "\"ranks\": [{\"rank\": 0, \"ops\": []}]}",
     "t.json: field 'ranks' has 1 entry but nranks is 2"},
    {HEAD "\"hosts\": [\"a\"], \"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: field 'hosts' has 1 entry but nranks is 2 (give a host for every rank or leave "
     "'hosts' out)"},
    {HEAD "\"hosts\": [\"a\", 7], \"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: field 'hosts[1]' must be a string, got integer 7"},
    /* groups */
    {HEAD "\"groups\": {}, \"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: field 'groups' must be an array, got an object"},
    {HEAD "\"groups\": [{\"id\": 1, \"ranks\": [0]}], \"ranks\": [{\"rank\": 0, \"ops\": []}, "
          "{\"rank\": 1, \"ops\": []}]}",
     "t.json: group 0: field 'id' is 1 but the group is at position 0 (group ids must be 0, 1, "
     "2, ... in order)"},
    {HEAD "\"groups\": [{\"id\": 0, \"ranks\": [0], \"size\": 1}], \"ranks\": [{\"rank\": 0, "
          "\"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: group 0: unknown field 'size'"},
    {HEAD "\"groups\": [{\"id\": 0}], \"ranks\": [{\"rank\": 0, \"ops\": []}, "
          "{\"rank\": 1, \"ops\": []}]}",
     "t.json: group 0: missing field 'ranks'"},
    {HEAD "\"groups\": [{\"id\": 0, \"ranks\": [0, \"1\"]}], \"ranks\": [{\"rank\": 0, "
          "\"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: group 0: field 'ranks[1]' must be an integer, got string \"1\""},
    {HEAD "\"groups\": [7], \"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: group 0: group must be an object, got integer 7"},
    /* rank entries */
    {HEAD "\"ranks\": [{\"rank\": 1, \"ops\": []}, {\"rank\": 0, \"ops\": []}]}",
     "t.json: rank 0: field 'rank' is 1 but the entry is at position 0 (ranks must be listed "
     "0, 1, 2, ... in order)"},
    {HEAD "\"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1}]}",
     "t.json: rank 1: missing field 'ops'"},
    {HEAD "\"ranks\": [{\"rank\": 0, \"ops\": [], \"host\": \"a\"}, {\"rank\": 1, \"ops\": []}]}",
     "t.json: rank 0: unknown field 'host'"},
    {HEAD "\"ranks\": [[], {\"rank\": 1, \"ops\": []}]}",
     "t.json: rank 0: rank entry must be an object, got an array"},
    /* ops */
    {OPS("3"), "t.json: rank 0 op 0: op must be an object, got integer 3"},
    {OPS("{\"kind\": \"compute\", \"duration\": 1}"), "t.json: rank 0 op 0: missing field 'id'"},
    {OPS(OK0 "{\"id\": 2, \"kind\": \"compute\", \"duration\": 1}"),
     "t.json: rank 0 op 1: field 'id' is 2 but the op is at position 1 (ids must be 0, 1, 2, "
     "... in order)"},
    {OPS("{\"id\": 0, \"duration\": 1}"), "t.json: rank 0 op 0: missing field 'kind'"},
    {OPS("{\"id\": 0, \"kind\": \"gemm\"}"),
     "t.json: rank 0 op 0: unknown kind 'gemm' (valid: compute, send, recv, coll)"},
    {OPS("{\"id\": 0, \"kind\": \"send\", \"peer\": 1, \"byts\": 4}"),
     "t.json: rank 0 op 0: unknown field 'byts'"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"peer\": 1}"),
     "t.json: rank 0 op 0: field 'peer' does not apply to a compute op"},
    {OPS("{\"id\": 0, \"kind\": \"send\", \"peer\": 1, \"bytes\": 4, \"group\": 0}"),
     "t.json: rank 0 op 0: field 'group' does not apply to a send op"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"label\": 5}"),
     "t.json: rank 0 op 0: field 'label' must be a string, got integer 5"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"stream\": \"1\"}"),
     "t.json: rank 0 op 0: field 'stream' must be an integer, got string \"1\""},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"stream\": 1.5}"),
     "t.json: rank 0 op 0: field 'stream' must be an integer, got real number 1.5"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"deps\": 0}"),
     "t.json: rank 0 op 0: field 'deps' must be an array, got integer 0"},
    {OPS(OK0 "{\"id\": 1, \"kind\": \"compute\", \"duration\": 1, \"deps\": [0, null]}"),
     "t.json: rank 0 op 1: field 'deps[1]' must be an integer, got null"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": \"1ms\"}"),
     "t.json: rank 0 op 0: field 'duration' must be a number, got string \"1ms\""},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": -0.5}"),
     "t.json: rank 0 op 0: field 'duration' must be >= 0 seconds, got -0.5"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"flops\": 5}"),
     "t.json: rank 0 op 0: field 'duration' excludes 'flops' (a compute op has either a fixed "
     "duration or flops and bytes)"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"bytes\": 5}"),
     "t.json: rank 0 op 0: field 'duration' excludes 'bytes'"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"bytes\": 5}"),
     "t.json: rank 0 op 0: compute op needs field 'duration' or 'flops'"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"flops\": true}"),
     "t.json: rank 0 op 0: field 'flops' must be a number, got true"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"flops\": 1, \"bytes\": 1e6}"),
     "t.json: rank 0 op 0: field 'bytes' must be an integer, got real number 1000000"},
    {OPS("{\"id\": 0, \"kind\": \"send\", \"bytes\": 4}"),
     "t.json: rank 0 op 0: missing field 'peer'"},
    {OPS("{\"id\": 0, \"kind\": \"recv\", \"peer\": 1}"),
     "t.json: rank 0 op 0: missing field 'bytes'"},
    {OPS("{\"id\": 0, \"kind\": \"recv\", \"peer\": 10000000000, \"bytes\": 1}"),
     "t.json: rank 0 op 0: field 'peer' value 10000000000 out of range"},
    {OPS("{\"id\": 0, \"kind\": \"send\", \"peer\": 1, \"bytes\": 4, \"tag\": \"x\"}"),
     "t.json: rank 0 op 0: field 'tag' must be an integer, got string \"x\""},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"group\": 0, \"bytes\": 4}"),
     "t.json: rank 0 op 0: missing field 'coll'"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"allreduce\", \"group\": 0, \"bytes\": 4}"),
     "t.json: rank 0 op 0: unknown collective 'allreduce' (valid: all_reduce, all_gather, "
     "reduce_scatter, broadcast, reduce, alltoall, alltoallv, barrier)"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"bytes\": 4}"),
     "t.json: rank 0 op 0: missing field 'group'"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0}"),
     "t.json: rank 0 op 0: missing field 'bytes'"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 4, "
         "\"dtype\": \"fp32\"}"),
     "t.json: rank 0 op 0: unknown dtype 'fp32' (valid: float, half, bfloat16, double, fp8, "
     "int8, uint8, int32, int64)"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 4, "
         "\"algo\": 3}"),
     "t.json: rank 0 op 0: field 'algo' must be a string, got integer 3"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 4, "
         "\"root\": []}"),
     "t.json: rank 0 op 0: field 'root' must be an integer, got an array"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, \"bytes\": 4, "
         "\"send_bytes\": [2, 2]}"),
     "t.json: rank 0 op 0: field 'send_bytes' only applies to alltoallv, not all_reduce"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"alltoallv\", \"group\": 0, \"bytes\": 4, "
         "\"send_bytes\": [4]}"),
     "t.json: rank 0 op 0: field 'send_bytes' has 1 entry but group 0 has 2 members"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"alltoallv\", \"group\": 5, \"bytes\": 4, "
         "\"send_bytes\": [4]}"),
     "t.json: rank 0 op 0: field 'send_bytes' needs a known group, but group 5 does not exist "
     "(the trace has 1 group)"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"alltoallv\", \"group\": 0, \"bytes\": 4, "
         "\"send_bytes\": [4, 0.5]}"),
     "t.json: rank 0 op 0: field 'send_bytes[1]' must be an integer, got real number 0.5"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"alltoallv\", \"group\": 0, \"bytes\": 4, "
         "\"send_bytes\": {}}"),
     "t.json: rank 0 op 0: field 'send_bytes' must be an array, got an object"},
    /* input strings are shown on one line, escaped and cut short */
    {OPS("{\"id\": 0, \"kind\": \"send\", \"peer\": 1, \"by\\ntes\": 4}"),
     "t.json: rank 0 op 0: unknown field 'by\\u000ates'"},
    {OPS("{\"id\": 0, \"kind\": \"c\\u0001\"}"),
     "t.json: rank 0 op 0: unknown kind 'c\\u0001' (valid: compute, send, recv, coll)"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"label\": []}"),
     "t.json: rank 0 op 0: field 'label' must be a string, got an array"},
    {OPS("{\"id\": 0, \"kind\": \"coll\", \"coll\": \"all_reduce\", \"group\": 0, "
         "\"bytes\": 4, \"dtype\": \"0123456789012345678901234567890123456789xyz\"}"),
     "t.json: rank 0 op 0: unknown dtype '0123456789012345678901234567890123456789...' (valid:"},
    {OPS("{\"id\": 0, \"kind\": \"compute\", \"duration\": 1, \"label\": \"ab\ncd\"}"),
     "t.json:1:"},
    /* the error is in the second rank's third op */
    {HEAD GROUPS "\"ranks\": [{\"rank\": 0, \"ops\": []}, {\"rank\": 1, \"ops\": [" OK0
          "{\"id\": 1, \"kind\": \"compute\", \"duration\": 1}, "
          "{\"id\": 2, \"kind\": \"recv\", \"peer\": 0, \"bytes\": 1, \"tga\": 1}]}]}",
     "t.json: rank 1 op 2: unknown field 'tga'"},
};

static void test_read_errors(void)
{
    for (size_t i = 0; i < sizeof read_errors / sizeof read_errors[0]; i++) {
        char err[TS_ERRLEN] = "";
        og_graph *g = (og_graph *)&err; /* must be reset to NULL */
        int rc = og_read_string(read_errors[i].text, "t.json", &g, err, sizeof err);
        CU_ASSERT_EQUAL(rc, -1);
        CU_ASSERT_PTR_NULL(g);
        int ok = strncmp(err, read_errors[i].msg, strlen(read_errors[i].msg)) == 0;
        CU_ASSERT(ok);
        if (!ok) fprintf(stderr, "\n  case %zu: got '%s'\n  expected  '%s'\n", i, err,
                         read_errors[i].msg);
        CU_ASSERT_PTR_NULL(strchr(err, '\n'));
    }
}

static void test_read_file_errors(void)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = NULL;
    CU_ASSERT_EQUAL(og_read_file("tests/data/no-such-file.json", &g, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "tests/data/no-such-file.json: cannot open: No such file or "
                                "directory");
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_EQUAL(og_read_file("tests/data", &g, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "tests/data: cannot open: Is a directory");

    /* syntax errors in files carry the file name, line and column */
    char path[] = "/tmp/trainsim-io-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    static const char text[] = "{\n  \"format\": \"trainsim-trace\",\n  \"version\": 1\n  "
                               "\"nranks\": 1\n}\n";
    CU_ASSERT_EQUAL_FATAL(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char want[TS_ERRLEN];
    snprintf(want, sizeof want, "%s:4:10: '}' expected near '\"nranks\"'", path);
    CU_ASSERT_EQUAL(og_read_file(path, &g, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(path);

    /* a short buffer truncates, never overflows */
    char small[12];
    memset(small, 'x', sizeof small);
    CU_ASSERT_EQUAL(og_read_string("[]", "a-long-file-name.json", &g, small, sizeof small), -1);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    /* no buffer at all */
    CU_ASSERT_EQUAL(og_read_string("[]", NULL, &g, NULL, 0), -1);
    CU_ASSERT_EQUAL(og_read_string(NULL, "t.json", &g, err, sizeof err), -1);
}

static void test_defaults(void)
{
    char err[TS_ERRLEN] = "";
    og_graph *g = NULL;
    const char *text = OPS(
        "{\"id\": 0, \"kind\": \"compute\", \"flops\": 2.5},"
        "{\"id\": 1, \"kind\": \"send\", \"peer\": 1, \"bytes\": 8},"
        "{\"id\": 2, \"kind\": \"coll\", \"coll\": \"all_gather\", \"group\": 0, \"bytes\": 8},"
        "{\"id\": 3, \"kind\": \"coll\", \"coll\": \"barrier\", \"group\": 0}");
    CU_ASSERT_EQUAL_FATAL(og_read_string(text, NULL, &g, err, sizeof err), 0);
    const og_op *op = g->ranks[0].ops;
    CU_ASSERT_EQUAL(op[0].stream, 0);
    CU_ASSERT_EQUAL(op[0].flops, 2.5);
    CU_ASSERT_EQUAL(op[0].bytes, 0);
    CU_ASSERT(op[0].duration < 0);
    CU_ASSERT_PTR_NULL(og_label(g, &op[0]));
    CU_ASSERT_EQUAL(op[1].tag, 0);
    CU_ASSERT_EQUAL(op[2].dtype, OG_F32);
    CU_ASSERT_EQUAL(op[2].root, 0);
    CU_ASSERT_PTR_NULL(op[2].algo);
    CU_ASSERT_PTR_NULL(op[2].vbytes);
    CU_ASSERT_EQUAL(op[3].bytes, 0);
    CU_ASSERT_PTR_NULL(g->ranks[0].host);
    CU_ASSERT_PTR_NULL(g->ranks[1].host);
    og_free(g);

    /* key order in the input does not matter */
    text = "{\"ranks\": [{\"ops\": [{\"peer\": 0, \"bytes\": 1, \"kind\": \"send\", \"id\": 0}], "
           "\"rank\": 0}], \"nranks\": 1, \"version\": 1, \"format\": \"trainsim-trace\"}";
    CU_ASSERT_EQUAL_FATAL(og_read_string(text, "t.json", &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL(g->ranks[0].ops[0].kind, OG_SEND);
    CU_ASSERT_EQUAL(g->ngroups, 0);
    og_free(g);
}

/* Random byte edits of the example: every one reads, or fails with a one-line
 * message; what reads is validated and, when valid, written back canonically. */
static void test_mutations(void)
{
    char *ex = slurp(test_data("example.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
    size_t len = strlen(ex);
    static const char alphabet[] = "{}[]\",:0123456789-+.eE \n\\abcdefghijklmnopqrstuvwxyz_";
    uint64_t x = 0x2545f4914f6cdd1dull;
    int bad_msgs = 0, read_ok = 0, check_ok = 0, crashes = 0;
    for (int iter = 0; iter < 3000; iter++) {
        char *t = ts_strdup(ex);
        int edits = 1 + iter % 4;
        for (int e = 0; e < edits; e++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t at = (size_t)(x % len);
            t[at] = alphabet[(x >> 32) % (sizeof alphabet - 1)];
        }
        char err[TS_ERRLEN] = "";
        og_graph *g = NULL;
        int rc = og_read_string(t, "m.json", &g, err, sizeof err);
        if (rc == 0) {
            read_ok++;
            rc = og_check(g, "m.json", err, sizeof err);
            if (rc == 0) {
                check_ok++;
                char *out = write_string(g);
                og_graph *h = NULL;
                if (!out || og_read_string(out, "w", &h, err, sizeof err) != 0) crashes++;
                og_free(h);
                free(out);
            } else if (rc != -1 || strncmp(err, "m.json: ", 8) != 0 || strchr(err, '\n')) {
                bad_msgs++;
            }
        } else if (rc != -1 || strncmp(err, "m.json", 6) != 0 || strchr(err, '\n') || g) {
            bad_msgs++;
        }
        og_free(g);
        free(t);
    }
    CU_ASSERT_EQUAL(bad_msgs, 0);
    CU_ASSERT_EQUAL(crashes, 0);
    CU_ASSERT(read_ok > 0);
    CU_ASSERT(check_ok > 0);
    free(ex);
}

void suite_opgraph_io(void)
{
    test_add_suite("opgraph_io",
                   "read example", test_read_example,
                   "example is canonical", test_canonical_example,
                   "doc example", test_doc_example,
                   "canonical layout", test_canonical_layout,
                   "api round trip", test_api_round_trip,
                   "file round trip", test_file_round_trip,
                   "unrepresentable graphs", test_write_unrepresentable,
                   "read errors", test_read_errors,
                   "file errors", test_read_file_errors,
                   "defaults", test_defaults,
                   "mutated inputs", test_mutations,
                   NULL);
}
