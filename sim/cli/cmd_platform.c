/* `trainsim platform show|export`: what a cluster description amounts to. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cmds.h"
#include "util.h"

static const char help[] =
    "usage: trainsim platform show CLUSTER [--nodes N] [--calibration FILE]\n"
    "       trainsim platform export CLUSTER [--nodes N] [--calibration FILE] -o FILE.xml\n"
    "       trainsim platform import-topo NCCL_TOPO.xml\n\n"
    "CLUSTER is a shipped cluster name (configs/clusters/NAME.json), NAME:NODES, or a\n"
    "cluster JSON file (docs/clusters.md).\n\n"
    "show    nodes, GPUs, links, per-GPU injection bandwidth, bisection bandwidth\n"
    "        (max flow between the two halves of the nodes), diameter (igraph) and a\n"
    "        plain-text picture of one node\n"
    "export  write the SimGrid XML platform that every command simulates on\n"
    "import-topo  print the cluster JSON \"node\" object (GPUs, NVLink/NVSwitch or\n"
    "        PCIe, NICs and the GPUs each serves) of an NCCL topology XML\n"
    "        (NCCL_TOPO_DUMP_FILE); what the file does not say is noted on stderr\n\n"
    "options:\n"
    "  --nodes N            number of nodes (overrides the description)\n"
    "  --calibration FILE   apply a calibration JSON (docs/clusters.md)\n"
    "  -o, --output FILE    export: where to write the XML\n"
    "  -h, --help           this help\n";

static void gbs(FILE *f, double bw) { fprintf(f, "%.1f GB/s", bw / 1e9); }

static void picture(const topo_cluster *c)
{
    const topo_node *n = &c->node;
    printf("\none node: %d x %s, %s fabric", n->gpus, c->gpu.name, topo_fabric_name(n->fabric));
    if (n->fabric == TOPO_NVSWITCH || n->fabric == TOPO_PCIE) {
        printf("%s\n\n", n->nvls ? " (NVLS)" : "");
        printf("  ");
        for (int g = 0; g < n->gpus; g++) printf(" gpu%-2d", g);
        printf("\n  ");
        for (int g = 0; g < n->gpus; g++) printf("   |  ");
        printf("   each ");
        gbs(stdout, n->bw);
        printf(" per direction\n  [%s]\n", n->fabric == TOPO_NVSWITCH ? "=============== NVSwitch ===============" : "================= PCIe =================");
    } else {
        printf(", links of ");
        gbs(stdout, n->bw);
        printf(" per direction\n\n  links  ");
        for (int g = 0; g < n->gpus; g++) printf("%4s%d", "gpu", g);
        printf("\n");
        for (int a = 0; a < n->gpus; a++) {
            printf("  gpu%-2d  ", a);
            for (int b = 0; b < n->gpus; b++) {
                int cnt = 0;
                for (int l = 0; l < n->nlinks; l++)
                    if ((n->links[l].a == a && n->links[l].b == b) || (n->links[l].a == b && n->links[l].b == a))
                        cnt = n->links[l].count;
                if (a == b) printf("%5s", ".");
                else if (cnt) printf("%5d", cnt);
                else {
                    int hops[TOPO_MAX_LINKS];
                    printf("%4dh", topo_node_route(n, a, b, hops, TOPO_MAX_LINKS));
                }
            }
            printf("\n");
        }
        printf("  (numbers: parallel links; Nh: no direct link, routed over N hops)\n");
    }
    printf("\n  NICs:");
    for (int j = 0; j < n->nnics; j++) {
        printf("  nic%d <- gpu", j);
        int first = 1;
        for (int g = 0; g < n->gpus; g++)
            if (n->nics[j].gpus >> g & 1) {
                printf(first ? "%d" : ",%d", g);
                first = 0;
            }
    }
    printf("\n  each ");
    gbs(stdout, n->nics[0].bw);
    printf(", %.2f us\n", n->nics[0].lat * 1e6);
}

static int show(const topo_cluster *c)
{
    topo_summary s;
    char err[TS_ERRLEN];
    if (topo_summarize(c, &s, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim platform: %s\n", err);
        return EXIT_FAIL;
    }
    const topo_net *t = &c->net;
    printf("cluster      %s\n", c->name);
    printf("nodes        %ld x %d GPUs = %ld GPUs (%s, %.1f TFLOP/s bf16, %.0f GB HBM at %.2f TB/s)\n", s.nodes,
           c->node.gpus, s.gpus, c->gpu.name, c->gpu.flops / 1e12, c->gpu.hbm_bytes / 1e9, c->gpu.hbm_bw / 1e12);
    printf("network      %s", topo_net_name(t->kind));
    switch (t->kind) {
    case TOPO_FATTREE:
        printf(", %d levels, radix %d, oversubscription %g:1, rails %s", t->levels, t->radix, t->oversub,
               t->rails ? "on" : "off");
        break;
    case TOPO_DRAGONFLY:
        printf(", %d groups of %d switches x %d nodes, %d global links per group pair, %s routing in a group",
               t->groups, t->switches, t->nodes_per_switch, t->global_links, t->adaptive ? "adaptive" : "minimal");
        if (t->local_links > 1) printf(", %d local links per switch pair", t->local_links);
        break;
    case TOPO_TORUS: printf(" %dx%dx%d", t->dims[0], t->dims[1], t->dims[2]); break;
    default: break;
    }
    printf(", ports of ");
    gbs(stdout, t->bw);
    printf("\nswitches     %ld (igraph view, aggregated where parallel)\n", s.switches);
    printf("links        %ld\n", s.links);
    printf("injection    ");
    gbs(stdout, s.injection_bw);
    printf(" per GPU\n");
    printf("bisection    ");
    gbs(stdout, s.bisection_bw);
    printf(" (max flow between nodes 0..%ld and %ld..%ld), %.1f GB/s per GPU\n", s.nodes / 2 - 1, s.nodes / 2,
           s.nodes - 1, s.bisection_bw / 1e9 / (s.gpus / 2 ? s.gpus / 2 : 1));
    printf("diameter     %d hops GPU to GPU%s\n", s.diameter, s.diameter_exact ? "" : " (eccentricity of gpu-0)");
    picture(c);
    return EXIT_OK;
}

static int import_topo(const char *path, int extra)
{
    if (extra) return cmd_usage_error("platform", "import-topo takes only the topology file");
    char err[TS_ERRLEN], notes[2048];
    char *node = topo_nccl_node(path, notes, sizeof notes, err, sizeof err);
    if (!node) {
        fprintf(stderr, "trainsim platform: %s\n", err);
        return EXIT_USAGE;
    }
    printf("%s\n", node);
    for (char *save = NULL, *l = strtok_r(notes, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        fprintf(stderr, "trainsim platform: note: %s\n", l);
    free(node);
    return EXIT_OK;
}

int cmd_platform(int argc, char **argv)
{
    enum { O_NODES = 256, O_CALIB };
    static const struct option longopts[] = {
        {"nodes", required_argument, 0, O_NODES}, {"calibration", required_argument, 0, O_CALIB},
        {"output", required_argument, 0, 'o'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = NULL, *calib = NULL;
    int nodes = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case O_NODES: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000)
                return cmd_usage_error("platform", "--nodes wants a count from 1 to 1000000, not '%s'", optarg);
            nodes = (int)v;
            break;
        }
        case O_CALIB: calib = optarg; break;
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        case ':': return cmd_usage_error("platform", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_unknown_option("platform", argv[optind - 1], longopts);
        }
    }
    if (argc - optind != 2)
        return cmd_usage_error("platform", "want 'show CLUSTER', 'export CLUSTER -o FILE' or 'import-topo FILE'");
    const char *verb = argv[optind], *spec = argv[optind + 1];
    if (strcmp(verb, "import-topo") == 0) return import_topo(spec, out || nodes || calib);
    int is_show = strcmp(verb, "show") == 0;
    if (!is_show && strcmp(verb, "export") != 0)
        return cmd_usage_error("platform", "unknown subcommand '%s' (valid: show, export, import-topo)", verb);
    if (!is_show && !out) return cmd_usage_error("platform", "export needs -o FILE");
    if (is_show && out) return cmd_usage_error("platform", "-o belongs to export");
    if (!topo_is_cluster_spec(spec))
        return cmd_usage_error("platform", "'%s' is a SimGrid XML file already; give a cluster name or JSON", spec);
    topo_cluster cl;
    char err[TS_ERRLEN];
    if (topo_load(spec, nodes, &cl, err, sizeof err) < 0 || (calib && topo_calibrate(&cl, calib, err, sizeof err) < 0)) {
        fprintf(stderr, "trainsim platform: %s\n", err);
        return EXIT_USAGE;
    }
    if (is_show) return show(&cl);
    if (topo_write_platform(&cl, out, err, sizeof err) < 0) {
        fprintf(stderr, "trainsim platform: %s\n", err);
        return EXIT_USAGE;
    }
    fprintf(stderr, "trainsim platform: wrote %s (%d nodes, %d GPUs)\n", out, cl.nodes, cl.nodes * cl.node.gpus);
    return EXIT_OK;
}
