/* NCCL's topology XML (NCCL_TOPO_DUMP_FILE output, NCCL_TOPO_FILE input) as a
 * cluster JSON "node" object: GPUs, NVLink/NVSwitch or PCIe, NICs and the GPUs each serves. */
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "util.h"

#define MAXDEPTH 32
#define MAXLINKS 64

typedef struct tnode {          /* a GPU or a NIC port */
    xmlNodePtr chain[MAXDEPTH]; /* ancestors from the root, the device's own <pci> last */
    int depth;
    char busid[64];
    int dev, sm;
    double bw;                  /* NIC: port speed; GPU: its PCIe link (bytes/s per direction) */
} tnode;

typedef struct tlink {          /* an <nvlink> of the GPU at bus src */
    char src[64], dst[64], tclass[16];
    int count;
} tlink;

typedef struct tscan {
    tnode gpu[TOPO_MAX_GPUS], nic[TOPO_MAX_NICS];
    int ngpu, nnic, npci_nic;
    tlink link[MAXLINKS];
    int nlink;
    const char *path;
    char *err;
    size_t errlen;
} tscan;

static const char *attr(xmlNodePtr n, const char *name, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) return NULL;
    snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return buf;
}

static int is(xmlNodePtr n, const char *name) { return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name); }

/* PCIe bandwidth per direction of "16.0 GT/s PCIe" x width: 8b/10b coding
 * below 8 GT/s, 128b/130b from gen3 on (PCI-SIG base specifications). */
static double pcie_bw(xmlNodePtr pci)
{
    char s[64], w[16];
    if (!attr(pci, "link_speed", s, sizeof s) || !attr(pci, "link_width", w, sizeof w)) return 0;
    double gt = atof(s), width = atof(w);
    if (!(gt > 0 && gt < 1000 && width > 0 && width <= 64)) return 0;
    return gt * 1e9 * width * (gt < 8 ? 0.8 : 128.0 / 130) / 8;
}

static int add_dev(tscan *t, tnode *arr, int *n, int max, const char *what, xmlNodePtr *chain, int depth)
{
    if (*n == max)
        return ts_err(t->err, t->errlen, "%s: more than %d %s (trainsim's node limit)", t->path, max, what);
    tnode *d = &arr[(*n)++];
    memset(d, 0, sizeof *d);
    memcpy(d->chain, chain, depth * sizeof *chain);
    d->depth = depth;
    d->dev = -1;
    xmlNodePtr pci = NULL;
    for (int i = depth - 1; i >= 0 && !pci; i--)
        if (is(chain[i], "pci")) pci = chain[i];
    if (pci) attr(pci, "busid", d->busid, sizeof d->busid), d->bw = pcie_bw(pci);
    return 0;
}

static int scan(tscan *t, xmlNodePtr n, xmlNodePtr *chain, int depth)
{
    if (depth == MAXDEPTH) return ts_err(t->err, t->errlen, "%s: elements nested deeper than %d", t->path, MAXDEPTH);
    chain[depth++] = n;
    char buf[64];
    if (is(n, "pci") && attr(n, "class", buf, sizeof buf)) {
        long cls = strtol(buf, NULL, 16);
        int has_gpu = 0;
        for (xmlNodePtr c = n->children; c; c = c->next) has_gpu |= is(c, "gpu");
        /* class 0x03xxxx: display / 3D controller (a GPU even without a <gpu> child, as in hand-written files) */
        if ((cls >> 16) == 0x03 && !has_gpu && add_dev(t, t->gpu, &t->ngpu, TOPO_MAX_GPUS, "GPUs", chain, depth) < 0)
            return -1;
        int has_net = 0;
        for (xmlNodePtr c = n->children; c; c = c->next)
            if (is(c, "nic")) has_net = 1;
        if ((cls >> 16) == 0x02 && !has_net) { /* a network controller without <nic>: one port, speed unknown */
            if (add_dev(t, t->nic, &t->nnic, TOPO_MAX_NICS, "NIC ports", chain, depth) < 0) return -1;
            t->npci_nic++;
        }
    } else if (is(n, "gpu")) {
        if (add_dev(t, t->gpu, &t->ngpu, TOPO_MAX_GPUS, "GPUs", chain, depth - 1) < 0) return -1;
        tnode *g = &t->gpu[t->ngpu - 1];
        g->dev = attr(n, "dev", buf, sizeof buf) ? atoi(buf) : -1;
        g->sm = attr(n, "sm", buf, sizeof buf) ? atoi(buf) : 0;
    } else if (is(n, "net")) {
        if (add_dev(t, t->nic, &t->nnic, TOPO_MAX_NICS, "NIC ports", chain, depth) < 0) return -1;
        double mbps = attr(n, "speed", buf, sizeof buf) ? atof(buf) : 0;
        t->nic[t->nnic - 1].bw = mbps > 0 && mbps < 1e9 ? mbps * 1e6 / 8 : 0;
    } else if (is(n, "nvlink")) {
        if (t->nlink == MAXLINKS) return ts_err(t->err, t->errlen, "%s: more than %d <nvlink> elements", t->path, MAXLINKS);
        xmlNodePtr gpu = chain[depth - 2];
        xmlNodePtr pci = depth >= 3 ? chain[depth - 3] : NULL;
        if (!is(gpu, "gpu") || !pci || !is(pci, "pci"))
            return ts_err(t->err, t->errlen, "%s:%d: <nvlink> outside a <pci><gpu>", t->path, n->line);
        tlink *l = &t->link[t->nlink++];
        attr(pci, "busid", l->src, sizeof l->src);
        if (!attr(n, "target", l->dst, sizeof l->dst) || !attr(n, "count", buf, sizeof buf) || atoi(buf) < 1 ||
            atoi(buf) > 64)
            return ts_err(t->err, t->errlen, "%s:%d: <nvlink> needs a target and a count of 1 to 64", t->path, n->line);
        l->count = atoi(buf);
        if (!attr(n, "tclass", l->tclass, sizeof l->tclass)) l->tclass[0] = 0;
    }
    for (xmlNodePtr c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && scan(t, c, chain, depth) < 0) return -1;
    return 0;
}

static int gpu_of_bus(const tscan *t, const char *bus)
{
    for (int i = 0; i < t->ngpu; i++)
        if (!strcasecmp(t->gpu[i].busid, bus)) return i;
    return -1;
}

static int common_depth(const tnode *a, const tnode *b)
{
    int k = 0;
    while (k < a->depth && k < b->depth && a->chain[k] == b->chain[k]) k++;
    return k;
}

static int by_dev(const void *x, const void *y)
{
    const tnode *a = x, *b = y;
    return (a->dev > b->dev) - (a->dev < b->dev);
}

/* Per NVLink, per direction: 20 GB/s for NVLink1 (P100, sm 60), 25 GB/s from
 * NVLink2 on (V100 6 links = 150 GB/s, A100 12 = 300, H100 18 = 450 per
 * direction; docs/clusters.md, shared/data/hardware.md). */
static double nvlink_bw(int sm) { return sm && sm < 70 ? 20e9 : 25e9; }

static void add_note(char *notes, size_t n, const char *s)
{
    size_t l = strlen(notes);
    if (l + strlen(s) + 2 < n) snprintf(notes + l, n - l, "%s%s", l ? "\n" : "", s);
}

static json_t *build(tscan *t, char *notes, size_t nlen)
{
    char msg[256];
    if (t->ngpu == 0) {
        ts_err(t->err, t->errlen, "%s: no GPU (<gpu> or a <pci> of class 0x03....) in the topology", t->path);
        return NULL;
    }
    int ordered = 1;
    for (int i = 0; i < t->ngpu; i++) ordered &= t->gpu[i].dev >= 0;
    if (ordered) qsort(t->gpu, t->ngpu, sizeof *t->gpu, by_dev);
    json_t *node = json_object(), *fab = json_object();
    json_object_set_new(node, "gpus", json_integer(t->ngpu));
    /* the intra-node fabric */
    int links[TOPO_MAX_GPUS][TOPO_MAX_GPUS] = {{0}}, nsw[TOPO_MAX_GPUS] = {0}, any_gpu = 0, any_sw = 0, asym = 0;
    for (int i = 0; i < t->nlink; i++) {
        int a = gpu_of_bus(t, t->link[i].src), b = gpu_of_bus(t, t->link[i].dst);
        if (a < 0) continue;
        if (b >= 0 && b != a) {
            if (links[a][b] && links[a][b] != t->link[i].count) asym = 1;
            if (t->link[i].count > links[a][b]) links[a][b] = links[b][a] = t->link[i].count;
            any_gpu = 1;
        } else if (b < 0) { /* to an NVSwitch (tclass 0x068000) or another bridge */
            nsw[a] += t->link[i].count;
            any_sw = 1;
        }
    }
    double per = nvlink_bw(t->gpu[0].sm);
    if (any_sw) {
        int lo = nsw[0];
        for (int g = 1; g < t->ngpu; g++) lo = nsw[g] < lo ? nsw[g] : lo;
        json_object_set_new(fab, "type", json_string("nvswitch"));
        json_object_set_new(fab, "bw", json_real(lo * per));
        json_object_set_new(fab, "lat", json_real(0.7e-6));
        snprintf(msg, sizeof msg, "fabric: NVSwitch, %d NVLinks per GPU (the fewest any GPU has) x %.0f GB/s", lo,
                 per / 1e9);
        add_note(notes, nlen, msg);
    } else if (any_gpu) {
        int full = 1, cnt = 0;
        for (int a = 0; a < t->ngpu; a++)
            for (int b = a + 1; b < t->ngpu; b++) {
                if (!links[a][b] || (cnt && links[a][b] != cnt)) full = 0;
                if (!cnt) cnt = links[a][b];
            }
        json_object_set_new(fab, "type", json_string(full ? "mesh" : "graph"));
        json_object_set_new(fab, "link_bw", json_real(per));
        json_object_set_new(fab, "lat", json_real(0.7e-6));
        if (full) json_object_set_new(fab, "links_per_pair", json_integer(cnt));
        else {
            json_t *arr = json_array();
            for (int a = 0; a < t->ngpu; a++)
                for (int b = a + 1; b < t->ngpu; b++)
                    if (links[a][b]) json_array_append_new(arr, json_pack("[iii]", a, b, links[a][b]));
            json_object_set_new(fab, "links", arr);
        }
        snprintf(msg, sizeof msg, "fabric: direct NVLinks between GPUs (%s), %.0f GB/s per link%s", full ? "every pair" : "a graph",
                 per / 1e9, asym ? "; the two ends list different link counts: the larger is used" : "");
        add_note(notes, nlen, msg);
    } else {
        double lo = 0;
        for (int g = 0; g < t->ngpu; g++)
            if (t->gpu[g].bw > 0 && (lo == 0 || t->gpu[g].bw < lo)) lo = t->gpu[g].bw;
        if (lo == 0) lo = 16e9 * 128 / 130 * 16 / 8, add_note(notes, nlen, "fabric: no PCIe link speed: PCIe gen4 x16 assumed");
        json_object_set_new(fab, "type", json_string("pcie"));
        json_object_set_new(fab, "bw", json_real(lo));
        json_object_set_new(fab, "lat", json_real(2e-6));
        add_note(notes, nlen, "fabric: no <nvlink> in the file, so PCIe; NCCL_TOPO_FILE inputs written by hand (Azure's) "
                              "list PCIe only and NCCL finds NVLink at run time: set node.fabric if the GPUs have it");
    }
    json_object_set_new(node, "fabric", fab);
    /* NICs: each GPU to the nearest port (deepest common PCIe ancestor), the least loaded among equals */
    if (t->nnic == 0) {
        json_decref(node);
        ts_err(t->err, t->errlen, "%s: no NIC (<net> or a <pci> of class 0x02....): a node needs one for the network",
               t->path);
        return NULL;
    }
    unsigned serve[TOPO_MAX_NICS] = {0};
    int load[TOPO_MAX_NICS] = {0};
    for (int g = 0; g < t->ngpu; g++) {
        int best = -1, bd = -1;
        for (int k = 0; k < t->nnic; k++) {
            int d = common_depth(&t->gpu[g], &t->nic[k]);
            if (d > bd || (d == bd && load[k] < load[best])) best = k, bd = d;
        }
        serve[best] |= 1u << g;
        load[best]++;
    }
    json_t *gl = json_array();
    double bw = 0;
    int used = 0;
    for (int k = 0; k < t->nnic; k++) {
        if (!serve[k]) continue;
        json_t *one = json_array();
        for (int g = 0; g < t->ngpu; g++)
            if (serve[k] >> g & 1) json_array_append_new(one, json_integer(g));
        json_array_append_new(gl, one);
        if (t->nic[k].bw > 0 && (bw == 0 || t->nic[k].bw < bw)) bw = t->nic[k].bw;
        used++;
    }
    if (used < t->nnic) {
        snprintf(msg, sizeof msg, "nics: %d of %d ports serve no GPU (another GPU's port is nearer) and are left out",
                 t->nnic - used, t->nnic);
        add_note(notes, nlen, msg);
    }
    if (t->npci_nic)
        add_note(notes, nlen, "nics: a <pci> network controller without <net> has no port speed: its PCIe link "
                              "bandwidth is used (an upper bound); set node.nics.bw");
    if (bw == 0) {
        bw = 25e9;
        add_note(notes, nlen, "nics: no port speed in the file: 25 GB/s (200 Gb/s) assumed; set node.nics.bw");
    }
    json_t *nics = json_object();
    json_object_set_new(nics, "count", json_integer(used));
    json_object_set_new(nics, "bw", json_real(bw));
    json_object_set_new(nics, "lat", json_real(1.2e-6));
    json_object_set_new(nics, "gpus", gl);
    json_object_set_new(node, "nics", nics);
    add_note(notes, nlen, "latencies are not in the file: the shipped clusters' assumptions (calibrate them)");
    return node;
}

char *topo_nccl_node(const char *path, char *notes, size_t nlen, char *err, size_t errlen)
{
    if (nlen) notes[0] = 0;
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        ts_err(err, errlen, "%s:%d: malformed XML: %s", path, e ? e->line : 0,
               e && e->message ? strtok(e->message, "\n") : "parse error");
        return NULL;
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    json_t *node = NULL;
    if (!root || !is(root, "system")) {
        ts_err(err, errlen, "%s: not an NCCL topology (root element <%s>, want <system>)", path,
               root ? (const char *)root->name : "none");
    } else {
        tscan *t = ts_calloc(1, sizeof *t);
        t->path = path, t->err = err, t->errlen = errlen;
        xmlNodePtr chain[MAXDEPTH];
        if (scan(t, root, chain, 0) == 0) node = build(t, notes, nlen);
        free(t);
    }
    xmlFreeDoc(doc);
    char *text = node ? json_dumps(node, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(node);
    return text;
}
