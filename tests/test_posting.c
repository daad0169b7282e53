/* How the engine posts a collective's transfers (windows of in-flight comms,
 * a mailbox per receiver) must not change what it simulates: every algorithm
 * of every collective, at step and pipelined fidelity, against the posting it
 * replaced (everything at once on a mailbox per rank pair). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "fluid.h"
#include "rails.h"
#include "tests.h"
#include "util.h"

#define REL(a, b) (fabs((a) - (b)) / fabs(b))

static double sim_window(const char *platform, int n, og_coll c, int64_t S, const char *algo, eng_fidelity f,
                         int window)
{
    og_graph *g = test_one_collective(n, c, S, algo);
    eng_opts o = {f, 0, 0, window, 0};
    test_outcome t;
    int rc = test_sim(platform, g, &o, &t);
    if (rc) fprintf(stderr, "%s/%s n=%d window %d: %s\n", og_coll_name(c), algo, n, window, t.err);
    CU_ASSERT_EQUAL(rc, 0);
    og_free(g);
    return t.makespan;
}

/* Every algorithm that runs on n hosts of the platform: the default posting
 * equals the old one within 1e-9; returns how many were compared. */
static int compare_all(const char *platform, int n)
{
    int compared = 0;
    for (int c = 0; c < OG_NCOLLS; c++) {
        if (c == OG_ALLTOALLV) continue; /* needs per-rank sizes: all-to-all covers the path */
        for (int a = 0; a < coll_nalgos(); a++) {
            const coll_algo *al = coll_algo_get(a);
            if (!(al->colls & (1u << c))) continue;
            int64_t S = c == OG_BARRIER ? 0 : (int64_t)n * 4 << 20;
            for (int f = 0; f < ENG_NFIDELITY; f++) {
                og_graph *g = test_one_collective(n, c, S, al->name);
                eng_opts o = {f, 0, 0, -1, 0};
                test_outcome t;
                int rc = test_sim(platform, g, &o, &t); /* unfit here (NVLS without NVSwitch...) */
                og_free(g);
                if (rc) continue;
                double now = sim_window(platform, n, c, S, al->name, f, 0);
                if (REL(now, t.makespan) >= 1e-9)
                    fprintf(stderr, "%s/%s n=%d %s: windowed %.12g, all at once %.12g\n", og_coll_name(c), al->name, n,
                            eng_fidelity_name(f), now, t.makespan);
                CU_ASSERT(t.makespan > 0 || c == OG_BARRIER);
                CU_ASSERT(REL(now, t.makespan) < 1e-9);
                compared++;
            }
        }
    }
    return compared;
}

/* Contention: 16 hosts of a 2:1 oversubscribed fat-tree (every all-to-all
 * crosses the core); 6 hosts (a group that is not a power of two). */
static void test_fattree_equal(void)
{
    const char *ft = test_data("fattree-2to1.xml");
    CU_ASSERT(compare_all(ft, 16) >= 40);
    CU_ASSERT(compare_all(ft, 6) >= 40);
}

/* Windows smaller than the group (1 and 4 on 16 ranks): every flow still
 * runs (no deadlock, whatever order transfers complete in) and the all-to-all
 * cannot beat the per-NIC bound (n-1)/n S / B. */
static void test_small_windows(void)
{
    const char *ft = test_data("fattree-2to1.xml");
    const int n = 16;
    const int64_t S = (int64_t)n << 22;
    double all = sim_window(ft, n, OG_ALLTOALL, S, "direct", ENG_PIPELINED, -1);
    for (int w = 1; w <= 4; w *= 4) {
        double t = sim_window(ft, n, OG_ALLTOALL, S, "direct", ENG_PIPELINED, w);
        CU_ASSERT(t >= (n - 1.0) / n * S / 25e9);
        fprintf(stderr, "\n  all-to-all 16 ranks, window %d: %.6g s, all at once %.6g s", w, t, all);
        for (int f = 0; f < ENG_NFIDELITY; f++) {
            double r = sim_window(ft, n, OG_ALLREDUCE, S, "ring", f, w);
            CU_ASSERT(REL(r, sim_window(ft, n, OG_ALLREDUCE, S, "ring", f, -1)) < 1e-9); /* 1 peer per direction */
        }
    }
}

/* A direct all-to-all whose inter-node flows are merged per (source GPU,
 * destination node) where the routes are rail-symmetric (sim/engine/rails.c)
 * takes the same simulated time as every flow on its own (the posting of
 * window -1, which never merges), at step and pipelined fidelity: a single
 * switch, an oversubscribed rail-optimised fat-tree whose uplinks contend,
 * NVLink-mesh nodes on a dragonfly, a DGX H100 SuperPOD, and nodes whose GPUs
 * share NICs two by two (a fixture and Polaris): merged there too. */
static void test_rails_merge(void)
{
    static const struct {
        const char *spec;
        int n, merged;
    } cases[] = {
        {"test-cluster", 16, 1},
        {"rails-2to1.json", 32, 1},
        {"perlmutter:4", 16, -1}, /* whether it merges is the check's call; equal either way */
        {"dgx-h100-superpod:4", 32, 1},
        {"rails-shared-nic.json", 16, 1}, /* two GPUs per NIC: merged as well (rails.h) */
        {"polaris:4", 16, 1},             /* likewise, NVLink mesh nodes on a dragonfly */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char spec[256];
        const char *s = cases[c].spec;
        if (strstr(s, ".json")) s = test_data(s);
        snprintf(spec, sizeof spec, "%s", s);
        int n = cases[c].n;
        for (int f = 0; f < ENG_NFIDELITY; f++) {
            og_graph *g = test_one_collective(n, OG_ALLTOALL, (int64_t)n << 22, "direct");
            test_outcome old, now, fl;
            eng_opts oo = {f, 0, 0, -1, 0}, on = {f, 0, 0, 0, 0}, oa = {f, 0, 0, 0, 1};
            CU_ASSERT_EQUAL_FATAL(test_sim(spec, g, &oo, &old), 0);
            CU_ASSERT_EQUAL_FATAL(test_sim(spec, g, &on, &now), 0);
            CU_ASSERT_EQUAL_FATAL(test_sim(spec, g, &oa, &fl), 0); /* the fluid model where merged */
            og_free(g);
            if (REL(fl.makespan, old.makespan) >= 1e-9)
                fprintf(stderr, "\n  %s n=%d %s: fluid %.12g s, every flow %.12g s", cases[c].spec, n,
                        eng_fidelity_name(f), fl.makespan, old.makespan);
            CU_ASSERT(REL(fl.makespan, old.makespan) < 1e-9);
            CU_ASSERT_EQUAL(fl.ncomms, now.ncomms);
            if (REL(now.makespan, old.makespan) >= 1e-9 || (cases[c].merged >= 0 && (now.ncomms < old.ncomms) != cases[c].merged))
                fprintf(stderr, "\n  %s n=%d %s: merged %.12g s (%ld flows), every flow %.12g s (%ld flows)", cases[c].spec, n,
                        eng_fidelity_name(f), now.makespan, now.ncomms, old.makespan, old.ncomms);
            CU_ASSERT(REL(now.makespan, old.makespan) < 1e-9);
            if (cases[c].merged >= 0) CU_ASSERT_EQUAL(now.ncomms < old.ncomms, cases[c].merged);
        }
    }
    /* Larger: 40 SuperPOD nodes (a full leaf of 32 and one of 8: flows of
     * three latencies, NIC and leaf uplinks) and a 2:1 fat-tree of 24 nodes
     * (3 leaves), the fluid model against the merged flows all posted at once
     * on SimGrid (equal to every flow on its own, above) */
    static const struct {
        const char *spec;
        int n;
    } big[] = {{"dgx-h100-superpod:40", 320}, {"rails-2to1.json", 96}, {"polaris:32", 128}};
    for (size_t c = 0; c < sizeof big / sizeof *big; c++) {
        const char *spec = strstr(big[c].spec, ".json") ? test_data(big[c].spec) : big[c].spec;
        char sp[256];
        snprintf(sp, sizeof sp, "%s%s", spec, c == 1 ? ":24" : "");
        og_graph *g = test_one_collective(big[c].n, OG_ALLTOALL, (int64_t)big[c].n << 20, "direct");
        test_outcome all, fl;
        eng_opts oa = {ENG_PIPELINED, 0, 0, 1 << 20, 0}, of = {ENG_PIPELINED, 0, 0, 0, 1};
        CU_ASSERT_EQUAL_FATAL(test_sim(sp, g, &oa, &all), 0);
        CU_ASSERT_EQUAL_FATAL(test_sim(sp, g, &of, &fl), 0);
        og_free(g);
        if (REL(fl.makespan, all.makespan) >= 1e-9)
            fprintf(stderr, "\n  %s n=%d: fluid %.12g s, all at once %.12g s", sp, big[c].n, fl.makespan, all.makespan);
        CU_ASSERT(REL(fl.makespan, all.makespan) < 1e-9);
        CU_ASSERT_EQUAL(fl.ncomms, all.ncomms);
    }
    /* windows smaller than a rank's merged flows (3 intra-node + 7 nodes):
     * every flow runs, and no faster than the NICs allow */
    og_graph *g = test_one_collective(32, OG_ALLTOALL, (int64_t)32 << 22, "direct");
    for (int w = 1; w <= 4; w *= 2) {
        eng_opts o = {ENG_PIPELINED, 0, 0, w, 0};
        test_outcome t;
        CU_ASSERT_EQUAL(test_sim(test_data("rails-2to1.json"), g, &o, &t), 0);
        CU_ASSERT(t.makespan >= 28.0 * (4 << 20) / 10e9); /* 28 chunks of 4 MiB leave each node's GPU */
    }
    og_free(g);
}

/* eng_opts.alone: a collective whose members post all their flows at once
 * (pipelined fidelity, or a one-step schedule) is solved by the fluid model
 * (sim/engine/rails.c, eng_flows_fluid) instead of SimGrid's comms: every
 * collective and algorithm at both fidelities equals SimGrid's run of every
 * flow on its own (window -1) within 1e-9, on a 2:1 fat-tree without nodes,
 * a DGX H100 SuperPOD (NVLS and NVLS tree), a 2:1 rail fat-tree and
 * Perlmutter's NVLink-mesh nodes. Returns how many calls the model solved. */
static long compare_alone(const char *platform, int n, int *compared)
{
    long solved = 0;
    for (int c = 0; c < OG_NCOLLS; c++) {
        if (c == OG_ALLTOALLV) continue;
        for (int a = 0; a < coll_nalgos(); a++) {
            const coll_algo *al = coll_algo_get(a);
            if (!(al->colls & (1u << c))) continue;
            int64_t S = c == OG_BARRIER ? 0 : (int64_t)n * 4 << 20;
            for (int f = 0; f < ENG_NFIDELITY; f++) {
                og_graph *g = test_one_collective(n, c, S, al->name);
                eng_opts oo = {f, 0, 0, -1, 0}, oa = {f, 0, 0, 0, 1};
                test_outcome old, fl, act;
                int rc = test_sim(platform, g, &oo, &old); /* unfit here (NVLS without NVSwitch...) */
                if (rc == 0) CU_ASSERT_EQUAL(test_sim(platform, g, &oa, &fl), 0);
                /* a zero-length op after it: the actors run the model's figures
                 * (one collective alone is solved without them) */
                for (int r = 0; r < n && rc == 0; r++) og_compute_fixed(g, r, 0, 0.0);
                if (rc == 0) CU_ASSERT_EQUAL(test_sim(platform, g, &oa, &act), 0);
                og_free(g);
                if (rc) continue;
                if (act.makespan != fl.makespan || act.nfluid != fl.nfluid)
                    fprintf(stderr, "\n  %s %s/%s n=%d %s: by actors %.17g s (%ld solved), without %.17g s (%ld)", platform,
                            og_coll_name(c), al->name, n, eng_fidelity_name(f), act.makespan, act.nfluid, fl.makespan,
                            fl.nfluid);
                CU_ASSERT(REL(act.makespan, fl.makespan) < 1e-12 || act.makespan == fl.makespan);
                CU_ASSERT_EQUAL(act.nfluid, fl.nfluid);
                /* a rail-merged all-to-all counts its merged flows (test_rails_merge) */
                int same_flows = fl.ncomms == old.ncomms || c == OG_ALLTOALL;
                if (REL(fl.makespan, old.makespan) >= 1e-9 || !same_flows)
                    fprintf(stderr, "\n  %s %s/%s n=%d %s: alone %.12g s (%ld solved), every flow %.12g s", platform,
                            og_coll_name(c), al->name, n, eng_fidelity_name(f), fl.makespan, fl.nfluid, old.makespan);
                CU_ASSERT(REL(fl.makespan, old.makespan) < 1e-9 || (c == OG_BARRIER && fl.makespan == old.makespan));
                CU_ASSERT(same_flows);
                CU_ASSERT_EQUAL(old.nfluid, 0);
                solved += fl.nfluid;
                (*compared)++;
            }
        }
    }
    return solved;
}

static void test_alone_equal(void)
{
    static const struct {
        const char *spec;
        int n;
    } cases[] = {
        {"fattree-2to1.xml", 16}, {"fattree-2to1.xml", 6}, {"dgx-h100-superpod:4", 32},
        {"rails-2to1.json", 32}, {"perlmutter:4", 16},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *s = strstr(cases[c].spec, ".") ? test_data(cases[c].spec) : cases[c].spec;
        int compared = 0;
        long solved = compare_alone(s, cases[c].n, &compared);
        fprintf(stderr, "\n  %s n=%d: %d compared, %ld member calls on the fluid model", cases[c].spec, cases[c].n,
                compared, solved);
        CU_ASSERT(compared >= 30);
        CU_ASSERT(solved >= (long)cases[c].n * compared / 3); /* most run on the model */
    }
}

/* Larger groups, where every inter-node flow of a rail-symmetric group lies in
 * a complete rotation orbit (one class for ppn flows): 40 SuperPOD nodes (a
 * full leaf of 32 and one of 8) and 24 nodes of the 2:1 rail fat-tree (3
 * leaves), all-reduce (NVLS tree, ring, tree), all-gather (ring) and broadcast (chain),
 * against the same flows all posted at once on SimGrid. */
static void test_alone_orbits(void)
{
    static const struct {
        const char *spec;
        int n;
    } big[] = {{"dgx-h100-superpod:40", 320}, {"rails-2to1.json:24", 96}};
    static const struct {
        og_coll c;
        const char *algo;
    } runs[] = {{OG_ALLREDUCE, "nvlstree"}, {OG_ALLREDUCE, "ring"}, {OG_ALLREDUCE, "tree"},
                {OG_ALLGATHER, "ring"}, {OG_BROADCAST, "chain"}};
    int solved = 0;
    for (size_t c = 0; c < sizeof big / sizeof *big; c++) {
        char sp[256];
        if (strstr(big[c].spec, ".json")) snprintf(sp, sizeof sp, "%s:24", test_data("rails-2to1.json"));
        else snprintf(sp, sizeof sp, "%s", big[c].spec);
        for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
            og_graph *g = test_one_collective(big[c].n, runs[k].c, (int64_t)big[c].n << 20, runs[k].algo);
            test_outcome all, fl;
            eng_opts oa = {ENG_PIPELINED, 0, 0, 1 << 20, 0}, of = {ENG_PIPELINED, 0, 0, 0, 1};
            int rc = test_sim(sp, g, &oa, &all);
            if (rc == 0) CU_ASSERT_EQUAL(test_sim(sp, g, &of, &fl), 0);
            og_free(g);
            if (rc) { /* NVLS tree on nodes without NVSwitch */
                if (!strstr(sp, "rails")) fprintf(stderr, "\n  %s %s: %s", sp, runs[k].algo, all.err);
                CU_ASSERT(strstr(sp, "rails") != NULL);
                continue;
            }
            if (REL(fl.makespan, all.makespan) >= 1e-9)
                fprintf(stderr, "\n  %s n=%d %s/%s: fluid %.12g s, all at once %.12g s", sp, big[c].n,
                        og_coll_name(runs[k].c), runs[k].algo, fl.makespan, all.makespan);
            CU_ASSERT(REL(fl.makespan, all.makespan) < 1e-9);
            CU_ASSERT_EQUAL(fl.ncomms, all.ncomms);
            CU_ASSERT_EQUAL(fl.nfluid, big[c].n);
            solved++;
        }
    }
    CU_ASSERT(solved >= 8);
}

/* eng_flows_fluid on 4 SuperPOD nodes: a ring over the nodes on every rail
 * plus a ring inside every node is merged into rotation orbits and gives
 * what every flow as its own class gives; an orbit with a flow missing or of
 * another size is not merged. */
static int orbits_child(void *arg, char *msg, size_t len)
{
    (void)arg;
    char err[TS_ERRLEN];
    if (eng_load("dgx-h100-superpod:4", 0, NULL, err, sizeof err) < 0) return snprintf(msg, len, "%s", err), -1;
    int n = 0;
    char **names = eng_host_names(&n);
    if (n != 32) return snprintf(msg, len, "%d hosts", n), -1;
    sg_host_t hs[32];
    for (int i = 0; i < n; i++) hs[i] = sg_host_by_name(names[i]);
    coll_topo *t = eng_topo((const char *const *)names, n, 0);
    int src[64], dst[64], nf = 0, bad = 0;
    double bytes[64], end[2][32], alpha[2][32], ain[2][32];
    for (int m = 0; m < n; m++) { /* member m: node m / 8, local m % 8 (names in natural order) */
        int A = t->node[m], i = t->local[m];
        src[nf] = m, dst[nf] = t->order[t->first[(A + 1) % 4] + i], bytes[nf++] = 1 << 26;
        src[nf] = m, dst[nf] = t->order[t->first[A] + (i + 1) % 8], bytes[nf++] = 1 << 27;
    }
    for (int v = 0; v < 3; v++) {
        if (v == 1) bytes[0] *= 2;  /* one orbit member of another size */
        if (v == 2) bytes[0] /= 2, src[0] = src[--nf], dst[0] = dst[nf], bytes[0] = bytes[nf]; /* one missing */
        int merged = eng_flows_fluid(hs, t, 1, nf, src, dst, bytes, end[0], alpha[0], ain[0], NULL);
        int single = eng_flows_fluid(hs, t, 0, nf, src, dst, bytes, end[1], alpha[1], ain[1], NULL);
        if (merged != (v == 0) || single != 0)
            bad += snprintf(msg, len, "variant %d: merged %d, single %d", v, merged, single) > 0;
        for (int m = 0; m < n; m++)
            if (fabs(end[0][m] - end[1][m]) > 1e-12 * end[1][m] || alpha[0][m] != alpha[1][m] || ain[0][m] != ain[1][m] ||
                end[1][m] <= 0)
                bad += snprintf(msg, len, "variant %d member %d: end %.15g vs %.15g", v, m, end[0][m], end[1][m]) > 0;
    }
    coll_topo_free(t);
    return bad ? -1 : 0;
}

static void test_orbits_direct(void)
{
    char msg[4096];
    int rc = test_child(orbits_child, NULL, msg, sizeof msg);
    if (rc) fprintf(stderr, "\n  %s", msg);
    CU_ASSERT_EQUAL(rc, 0);
}

/* The fluid model by hand: on a 12 B/s link, class A (2 flows, penalty 1,
 * 9.6 B each) and class B (1 flow, penalty 2, 12 B) fill to level 12 / (2 / 1
 * + 1 / 2) = 4.8: A at 4.8 B/s, B at 2.4 B/s; A ends at 2 s, then B alone at
 * 12 B/s carries its last 7.2 B in 0.6 s. C waits 1 s of latency, then has
 * its own 5 B/s link (and a 4 B/s cap): 8 B end at 3 s. A FATPIPE link gives
 * every flow its whole capacity: D and E, 6 B each on a 3 B/s one, end at 2 s. */
static void test_fluid_by_hand(void)
{
    fl_sys *s = fl_new();
    static const char l1, l2, l3;
    int r1 = fl_resource(s, &l1, 12, 1), r2 = fl_resource(s, &l2, 5, 1), r3 = fl_resource(s, &l3, 3, 0);
    CU_ASSERT_EQUAL(fl_resource(s, &l1, 12, 1), r1); /* one resource per key */
    int a = fl_flow(s, 9.6, 0, -1, 1);
    fl_use(s, r1, 2);
    int b = fl_flow(s, 12, 0, -1, 2);
    fl_use(s, r1, 1);
    int c = fl_flow(s, 8, 1, 4, 1);
    fl_use(s, r2, 1);
    int d = fl_flow(s, 6, 0, -1, 1);
    fl_use(s, r3, 1);
    int e = fl_flow(s, 6, 0, -1, 1);
    fl_use(s, r3, 1);
    fl_run(s);
    CU_ASSERT(fabs(fl_finish(s, a) - 2.0) < 1e-12);
    CU_ASSERT(fabs(fl_finish(s, b) - 2.6) < 1e-12);
    CU_ASSERT(fabs(fl_finish(s, c) - 3.0) < 1e-12);
    CU_ASSERT(fabs(fl_finish(s, d) - 2.0) < 1e-12);
    CU_ASSERT(fabs(fl_finish(s, e) - 2.0) < 1e-12);
    fl_free(s);
}

/* Issue 17's crash: a 16 KiB all-to-all (16 B a peer) on 1,024 Polaris GPUs
 * (256 nodes, two GPUs per NIC) posted its 1,024 x 1,023 flows to SimGrid in
 * windows of 64, and SimGrid 3.32's max-min solve failed on the sum of 1 /
 * latency over thousands of flows on one dragonfly global link (a usage
 * residue above its absolute 1e-5 precision), then crashed formatting that
 * assertion's message. The group is rail-symmetric with shared NICs: every
 * member is solved by the fluid model (equal to SimGrid's run of every flow at
 * 4 and 32 nodes, test_rails_merge) over the merged flows, and the payload costs
 * time over the empty call, no less than the NIC's share of the bytes. */
static void test_polaris_alltoall_1024(void)
{
    const int n = 1024;
    og_graph *g = test_one_collective(n, OG_ALLTOALL, 16384, "direct"), *z = test_one_collective(n, OG_ALLTOALL, 0, "direct");
    eng_opts oa = {ENG_PIPELINED, 0, 0, 0, 1};
    test_outcome t, t0;
    CU_ASSERT_EQUAL_FATAL(test_sim("polaris:256", g, &oa, &t), 0);
    CU_ASSERT_EQUAL_FATAL(test_sim("polaris:256", z, &oa, &t0), 0);
    og_free(g), og_free(z);
    fprintf(stderr, "\n  polaris 1,024 GPUs, 16 KiB all-to-all: %.9g s (empty %.9g s), %ld flows, %ld on the model, %.2f s wall",
            t.makespan, t0.makespan, t.ncomms, t.nfluid, t.wall);
    CU_ASSERT_EQUAL(t.nfluid, n);
    CU_ASSERT_EQUAL(t.ncomms, (long)n * (3 + 255)); /* merged: 3 GPUs of the node + 255 nodes a member */
    /* two GPUs' 1,020 remote chunks of 16 B leave by one 18.25 GB/s NIC */
    CU_ASSERT(t.makespan - t0.makespan >= 2 * 1020 * 16 / 18.25e9);
    CU_ASSERT(t.makespan < 1.0);
}

/* An empty (0-byte) direct all-to-all on a rail-symmetric group with
 * shared NICs (two GPUs a NIC) on the fluid model creates no flow: each
 * member ends at its largest route latency, what SimGrid's run of every
 * empty flow on its own gives (rails-2to1.json, 32 GPUs; Polaris, 4 nodes). */
static void test_alone_empty(void)
{
    static const struct {
        const char *spec;
        int n;
    } cases[] = {{"rails-2to1.json", 32}, {"polaris:4", 16}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *s = strstr(cases[c].spec, ".") ? test_data(cases[c].spec) : cases[c].spec;
        og_graph *g = test_one_collective(cases[c].n, OG_ALLTOALL, 0, "direct");
        eng_opts oo = {ENG_PIPELINED, 0, 0, -1, 0}, oa = {ENG_PIPELINED, 0, 0, 0, 1};
        test_outcome old, fl;
        CU_ASSERT_EQUAL_FATAL(test_sim(s, g, &oo, &old), 0);
        CU_ASSERT_EQUAL_FATAL(test_sim(s, g, &oa, &fl), 0);
        og_free(g);
        fprintf(stderr, "\n  %s n=%d empty all-to-all: alone %.12g s (%ld on the model), every flow %.12g s", cases[c].spec,
                cases[c].n, fl.makespan, fl.nfluid, old.makespan);
        CU_ASSERT(fl.makespan > 0);
        CU_ASSERT(REL(fl.makespan, old.makespan) < 1e-9);
        CU_ASSERT_EQUAL(fl.nfluid, cases[c].n);
    }
}

void suite_posting(void)
{
    test_add_suite("posting",
                   "every collective and algorithm: windowed posting equals all at once (2:1 fat-tree)",
                   test_fattree_equal,
                   "windows smaller than the group: all-to-all completes, ring unchanged", test_small_windows,
                   "all-to-all merged per rail equals every flow on its own (6 clusters)", test_rails_merge,
                   "fluid model: weighted max-min shares, latency, caps and FATPIPE by hand", test_fluid_by_hand,
                   "alone: one-step collectives on the fluid model equal every flow on its own (4 clusters)", test_alone_equal,
                   "alone: rotation orbits of inter-node flows equal the flows all at once (2 clusters)", test_alone_orbits,
                   "alone: orbits merged only where complete, equal to every flow its own class", test_orbits_direct,
                   "alone: 16 KiB all-to-all on 1,024 Polaris GPUs (the SimGrid crash) on the fluid model",
                   test_polaris_alltoall_1024, "alone: an empty all-to-all with shared NICs costs its latencies, no flow",
                   test_alone_empty, NULL);
}
