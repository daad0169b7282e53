/* The in-process sink of the platform emitter: SimGrid S4U calls (the C API of
 * SimGrid 3.32 cannot create zones, links or routes). The only C++ file. */
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster.h"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace {

/* Names -> handles: an open-addressing table with the names stored in its
 * slots (linear probing, grown at half full), a std::unordered_map for names
 * too long for a slot. A std::unordered_map<std::string, ...> of every link,
 * each insertion a node allocated somewhere in SimGrid's heap, was 5% of a
 * 16,384-GPU build; a direct-mapped cache of recent names in front of it
 * spared the lookups, not the insertions. */
template <typename T> class Names {
    struct Slot {
        char name[32];
        T* val;
    };
    std::vector<Slot> slot = std::vector<Slot>(1024);
    size_t used = 0;
    std::unordered_map<std::string, T*> longer;

    static size_t hash(const char* s)
    {
        uint64_t h = 1469598103934665603ULL;
        for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return (size_t)(h ^ (h >> 29));
    }
    /* The slot holding name, or the empty one where it would go. */
    Slot& find(const char* name)
    {
        size_t mask = slot.size() - 1;
        for (size_t i = hash(name) & mask;; i = (i + 1) & mask)
            if (!slot[i].val || std::strcmp(slot[i].name, name) == 0) return slot[i];
    }
    void grow()
    {
        std::vector<Slot> old(slot.size() * 2);
        old.swap(slot);
        for (const Slot& e : old)
            if (e.val) find(e.name) = e;
    }

public:
    void put(const char* name, T* v)
    {
        if (std::strlen(name) >= sizeof slot[0].name) {
            longer[name] = v;
            return;
        }
        if (2 * (used + 1) > slot.size()) grow();
        Slot& e = find(name);
        if (!e.val) {
            std::strcpy(e.name, name);
            used++;
        }
        e.val = v;
    }
    T* get(const char* name)
    {
        if (std::strlen(name) >= sizeof slot[0].name) {
            auto it = longer.find(name);
            return it == longer.end() ? nullptr : it->second;
        }
        return find(name).val;
    }
};

struct S4uSink {
    topo_sink k;
    std::vector<sg4::NetZone*> zones;  // the open zones, root first
    sg4::NetZone* root = nullptr;      // SimGrid's root: holds the cluster's zone, nothing else
    Names<NetPoint> points; // hosts, routers, zones
    Names<sg4::Link> links;
    std::vector<sg4::Host*> hosts; // in the order created
    std::string error;
};

void add_point(struct S4uSink* s, const char* id, NetPoint* p)
{
    s->points.put(id, p);
}

S4uSink* self(topo_sink* k) { return static_cast<S4uSink*>(k->impl); }

void fail(topo_sink* k, const std::string& msg)
{
    if (!k->bad) self(k)->error = msg;
    k->bad = 1;
}

/* SimGrid 3.32 walks the whole attached platform for every new host and
 * link (a name check: a depth-first search of every zone) and every sealed
 * zone (NetZoneImpl::seal collects its hosts by filtering every host of the
 * platform): O(zones x hosts) in all, 142 s for Frontier. Both walks start at
 * SimGrid's root zone, so the cluster's zone is built detached from it (given
 * the root's models by hand, as set_parent would), and attached to an empty
 * root, "<name>-root", once complete: every walk during the build sees an
 * empty platform, and the two seals at the end walk it once each. Routes are
 * resolved in the cluster's zone or below, never in the root. */
void zone_open(topo_sink* k, const char* id, bool star)
{
    S4uSink* s = self(k);
    if (s->zones.empty()) {
        auto* root = sg4::create_full_zone(std::string(id) + "-root")->get_impl();
        sg4::NetZone* z = star ? sg4::create_star_zone(id) : sg4::create_full_zone(id);
        auto* zi        = z->get_impl();
        zi->set_network_model(root->get_network_model());
        zi->set_cpu_pm_model(root->get_cpu_pm_model());
        zi->set_cpu_vm_model(root->get_cpu_vm_model());
        zi->set_disk_model(root->get_disk_model());
        zi->set_host_model(root->get_host_model());
        s->root = root->get_iface();
        s->zones.push_back(z);
    } else {
        sg4::NetZone* z = star ? sg4::create_star_zone(id) : sg4::create_full_zone(id);
        s->zones.push_back(z->set_parent(s->zones.back()));
    }
    add_point(s, id, s->zones.back()->get_netpoint());
}

void zone_begin(topo_sink* k, const char* id) { zone_open(k, id, false); }

/* A StarZone (topo_sink's star_begin): SimGrid composes the route between
 * two children from each one's uplink, as the pairs' routes of a Full zone
 * would list them. */
void star_begin(topo_sink* k, const char* id) { zone_open(k, id, true); }

void zone_end(topo_sink* k)
{
    S4uSink* s = self(k);
    sg4::NetZone* z = s->zones.back();
    s->zones.pop_back();
    if (s->zones.empty()) z->set_parent(s->root);
    z->seal();
    if (s->zones.empty()) s->root->seal();
}

void host(topo_sink* k, const char* id, double speed, int n, const char* const* keys, const char* const* vals)
{
    S4uSink* s = self(k);
    sg4::Host* h = s->zones.back()->create_host(id, speed);
    for (int i = 0; i < n; i++) h->set_property(keys[i], vals[i]);
    h->seal();
    s->hosts.push_back(h);
    add_point(s, id, h->get_netpoint());
}

void router(topo_sink* k, const char* id)
{
    S4uSink* s = self(k);
    add_point(s, id, s->zones.back()->create_router(id));
}

/* Links are created in the zone that declares them, as in the XML: the name
 * check's walk sees an empty platform during the build (zone_begin), and each
 * zone's own map stays small (one map of every link in the cluster's zone made
 * each insertion ~20 string compares). */
void link(topo_sink* k, const char* id, double bw, double lat)
{
    S4uSink* s = self(k);
    sg4::SplitDuplexLink* l = s->zones.back()->create_split_duplex_link(id, bw);
    l->set_latency(lat);
    l->seal();
    s->links.put(id, l);
}

NetPoint* point(topo_sink* k, const char* name)
{
    NetPoint* p = self(k)->points.get(name);
    if (!p) fail(k, std::string("route names unknown point '") + name + "'");
    return p;
}

sg4::Link* link_named(topo_sink* k, const char* name)
{
    sg4::Link* l = self(k)->links.get(name);
    if (!l) fail(k, std::string("route uses unknown link '") + name + "'");
    return l;
}

/* child -> every other child over [uplink UP], and back over [uplink DOWN];
 * no uplink: a core zone whose own route is empty (its gateway still set). */
void star_route(topo_sink* k, const char* child, const char* gw, const char* uplink)
{
    std::vector<sg4::LinkInRoute> path;
    if (uplink) {
        sg4::Link* l = link_named(k, uplink);
        if (!l) return;
        path.emplace_back(l, sg4::LinkInRoute::Direction::UP);
    }
    NetPoint *a = point(k, child), *g = point(k, gw);
    if (k->bad) return;
    self(k)->zones.back()->add_route(a, nullptr, g, nullptr, path, true);
}

void route(topo_sink* k, const char* src, const char* dst, const char* gs, const char* gd, int n,
           const char* const* names, const int* up)
{
    S4uSink* s = self(k);
    std::vector<sg4::LinkInRoute> path;
    for (int i = 0; i < n; i++) {
        sg4::Link* l = link_named(k, names[i]);
        if (!l) return;
        path.emplace_back(l, up[i] ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    }
    NetPoint *a = point(k, src), *b = point(k, dst);
    NetPoint *ga = gs ? point(k, gs) : nullptr, *gb = gd ? point(k, gd) : nullptr;
    if (k->bad) return;
    s->zones.back()->add_route(a, b, ga, gb, path, true);
}

std::vector<sg4::Host*> built_hosts; // of the last successful build

} // namespace

extern "C" void** topo_sg_hosts(size_t* n)
{
    *n = built_hosts.size();
    if (built_hosts.empty()) return nullptr;
    auto** all = static_cast<void**>(std::malloc(built_hosts.size() * sizeof(void*)));
    if (!all) {
        *n = 0;
        return nullptr;
    }
    for (size_t i = 0; i < built_hosts.size(); i++) all[i] = built_hosts[i];
    return all;
}

extern "C" int topo_sg_build(const topo_cluster* c, char* err, size_t errlen)
{
    S4uSink s;
    s.k = {zone_begin, zone_end, host, router, link, route, star_begin, star_route, 0, &s};
    try {
        topo_emit(c, &s.k);
    } catch (const std::exception& e) {
        fail(&s.k, e.what());
    }
    if (s.k.bad) {
        std::snprintf(err, errlen, "%s: building the SimGrid platform failed: %s", c->name, s.error.c_str());
        return -1;
    }
    built_hosts.swap(s.hosts);
    return 0;
}
