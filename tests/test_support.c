/* Test helpers: forked simulations, generated platforms, running the CLI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll_params.h"
#include "tests.h"
#include "coll.h"
#include "util.h"

int test_sim(const char *platform, const og_graph *g, const eng_opts *o, test_outcome *out)
{
    int fd[2];
    memset(out, 0, sizeof *out);
    if (pipe(fd) < 0) return out->rc = -2;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        test_outcome t;
        memset(&t, 0, sizeof t);
        int argc = 1;
        char *argv[] = {"test", NULL};
        eng_init(&argc, argv);
        eng_result *res = NULL;
        t.rc = eng_load(platform, 0, NULL, t.err, sizeof t.err);
        if (t.rc == 0) t.rc = eng_run(g, o, &res, t.err, sizeof t.err);
        if (res) {
            t.makespan = res->makespan;
            t.ncomms = res->ncomms;
            t.nfluid = res->nfluid;
            t.nlone = res->nlone;
            t.wall = res->wall;
            t.nranks = res->nranks;
            for (int i = 0; i < res->nranks && i < TEST_MAX_RANKS; i++) t.ranks[i] = res->ranks[i];
        }
        ssize_t w = write(fd[1], &t, sizeof t);
        _exit(w == (ssize_t)sizeof t ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t n;
    while (got < sizeof *out && (n = read(fd[0], (char *)out + got, sizeof *out - got)) > 0) got += n;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got != sizeof *out) {
        memset(out, 0, sizeof *out);
        out->rc = -2;
        snprintf(out->err, sizeof out->err, "child died (status %d)", status);
    }
    return out->rc;
}

const char *test_crossbar(int n, double bw, double lat)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "/tmp/trainsim-test-xbar-%d-%d-%d.xml", (int)getpid(), n, k);
    FILE *f = fopen(path[k], "w");
    if (!f) return NULL;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n"
               "  <cluster id=\"xbar\" prefix=\"gpu-\" suffix=\"\" radical=\"0-%d\" speed=\"100Tf\"\n"
               "           bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n"
               "</zone>\n</platform>\n", n - 1, bw, lat);
    fclose(f);
    return path[k];
}

static char cli_err[1 << 16];

int test_cli(const char *args, char *out, size_t outlen)
{
    char cmd[4096];
    char errf[64];
    snprintf(errf, sizeof errf, "/tmp/trainsim-%d-cli.stderr", (int)getpid());
    snprintf(cmd, sizeof cmd, "bin/trainsim %s 2>%s", args, errf);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t got = fread(out, 1, outlen - 1, p);
    out[got] = 0;
    while (fgetc(p) != EOF) {} /* the rest, unread, must not block the child */
    int st = pclose(p);
    cli_err[0] = 0;
    FILE *e = fopen(errf, "r");
    if (e) {
        cli_err[fread(cli_err, 1, sizeof cli_err - 1, e)] = 0;
        fclose(e);
        remove(errf);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *test_cli_err(void) { return cli_err; }

json_t *test_cli_json(const char *args, char *out, size_t outlen)
{
    char cmd[4096];
    const char *path = test_tmp("cli.json");
    snprintf(cmd, sizeof cmd, "%s --json %s", args, path);
    int rc = test_cli(cmd, out, outlen);
    if (rc != 0) fprintf(stderr, "\n%s\n%s\n%s\n", cmd, out, cli_err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0) return NULL;
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    remove(path);
    CU_ASSERT_PTR_NOT_NULL(j);
    return j;
}

og_graph *test_one_collective(int n, og_coll c, int64_t bytes, const char *algo)
{
    return coll_graph(c, n, bytes, OG_F32, 0, algo);
}

int test_child(int (*fn)(void *arg, char *msg, size_t n), void *arg, char *msg, size_t n)
{
    int fd[2];
    if (pipe(fd) < 0) return -2;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        char buf[4096] = "";
        int argc = 1;
        char *argv[] = {"test", NULL};
        eng_init(&argc, argv);
        int rc = fn(arg, buf, sizeof buf);
        ssize_t w = write(fd[1], &rc, sizeof rc);
        w += write(fd[1], buf, sizeof buf);
        _exit(w > 0 ? 0 : 1);
    }
    close(fd[1]);
    int rc = -2;
    char buf[4096] = "child died";
    if (read(fd[0], &rc, sizeof rc) != (ssize_t)sizeof rc) rc = -2;
    else {
        size_t got = 0;
        ssize_t r;
        while (got < sizeof buf && (r = read(fd[0], buf + got, sizeof buf - got)) > 0) got += r;
    }
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    snprintf(msg, n, "%s", buf);
    return rc;
}

void test_bare_params(void)
{
    coll_params q;
    coll_params_preset(&q, COLL_LIB_NCCL);
    memset(q.base_lat, 0, sizeof q.base_lat);
    memset(q.hop_lat, 0, sizeof q.hop_lat);
    q.max_channels = 0;
    q.tuner_own = 1; /* the selection too: least alpha-beta time */
    for (int t = 0; t < COLL_NTIERS; t++) q.bw_frac[t] = 1;
    for (int f = 0; f < COLL_NFAMS; f++) {
        double e = f == COLL_FAM_NVLS || f == COLL_FAM_NVLSTREE ? 275.0 / 450.0 : 1.0;
        q.proto_bw[f][COLL_SIMPLE] = e;
        q.proto_bw[f][COLL_LL128] = e * 120.0 / 128.0;
        q.proto_bw[f][COLL_LL] = e * 0.5;
    }
    coll_params_set(&q);
}
