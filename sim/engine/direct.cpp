/* Host-to-host comms for the engine's lone flows (direct.h): S4U's
 * Comm::sendto_async, and a latency-factor callback that gives a resumed
 * flow the part of its route's latency it had left. */
#include "direct.h"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace sg4 = simgrid::s4u;

namespace {
/* (src, dst, bytes) -> the factors of comms started and not yet seen by the
 * model (a comm is handed to the model at its start: the entry is taken then) */
std::multimap<std::tuple<const sg4::Host *, const sg4::Host *, double>, double> pending;
int ready = -1;

double lat_factor(double size, const sg4::Host *src, const sg4::Host *dst, const std::vector<sg4::Link *> &,
                  const std::unordered_set<sg4::NetZone *> &)
{
    if (pending.empty()) return 1.0;
    auto it = pending.find(std::make_tuple(src, dst, size));
    if (it == pending.end()) return 1.0;
    double f = it->second;
    pending.erase(it);
    return f;
}
} // namespace

extern "C" int eng_direct_ready(void)
{
    if (ready >= 0) return ready;
    ready = 0;
    try {
        /* a lone flow's time is CM02's for one flow alone (no factors, no reverse traffic),
         * as the full max-min update computes it */
        if (simgrid::config::get_value<std::string>("network/model") != "CM02" ||
            simgrid::config::get_value<std::string>("network/optim") != "Full" ||
            simgrid::config::get_value<bool>("network/crosstraffic") ||
            !simgrid::config::is_default("network/latency-factor") ||
            !simgrid::config::is_default("network/bandwidth-factor"))
            return 0;
        auto *model = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
        if (!model) return 0;
        model->set_lat_factor_cb(lat_factor);
        ready = 1;
    } catch (const std::exception &) {
        ready = 0;
    }
    return ready;
}

extern "C" void *eng_direct_start(sg_host_t src, sg_host_t dst, double bytes, double lat_factor)
{
    uint64_t b = bytes > 0 ? (uint64_t)std::llround(bytes) : 0;
    if (lat_factor != 1.0) pending.emplace(std::make_tuple(src, dst, (double)b), lat_factor);
    auto *c = new sg4::CommPtr(sg4::Comm::sendto_async(src, dst, b));
    return c;
}

extern "C" void *eng_direct_dup(void *comm)
{
    return new sg4::CommPtr(*static_cast<sg4::CommPtr *>(comm));
}

extern "C" void eng_direct_wait(void *comm)
{
    auto *c = static_cast<sg4::CommPtr *>(comm);
    (*c)->wait();
    delete c;
}

extern "C" void eng_direct_free(void *comm)
{
    delete static_cast<sg4::CommPtr *>(comm);
}
