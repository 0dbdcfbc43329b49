// The C entry points of the network area (docs/network.md):
// PMIx_server_collect_inventory / _deliver_inventory (the server's Inventory
// service), PMIx_Compute_distances(_nb) (runtime/devices.hpp; no
// connection needed, callable by a client, a tool or a server) and the
// PMIx_Fabric_* functions (below).
#include <hwloc.h>
#include <pmix_server.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "client/request_util.hpp"
#include "runtime/devices.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "runtime/topology.hpp"
#include "server/server.hpp"

using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;
using pmixpp::server::Server;

namespace {

bool server_up() {
    return pmixpp::runtime::init_count(Face::server) > 0;
}

void release_info(void *cbdata) {
    delete static_cast<pmixpp::wire::InfoArray *>(cbdata);
}

bool names_hwloc(const char *source) {
    return source != nullptr && ::strncasecmp(source, "hwloc", 5) == 0;
}

// The directives of PMIx_Compute_distances: PMIX_DEVICE_TYPE (a mask) and
// PMIX_DEVICE_ID (an osname or uuid).
pmix_status_t read_directives(const pmix_info_t *info, size_t ninfo, pmix_device_type_t &types,
                              std::string &device) {
    types = 0;
    device.clear();
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_DEVICE_TYPE)) {
            const pmix_value_t &v = info[i].value;
            if (v.type == PMIX_DEVTYPE)
                types |= v.data.devtype;
            else if (v.type == PMIX_UINT64)
                types |= v.data.uint64;
            else
                return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_DEVICE_ID)) {
            if (info[i].value.type != PMIX_STRING || info[i].value.data.string == nullptr)
                return PMIX_ERR_BAD_PARAM;
            device = info[i].value.data.string;
        }
    }
    return PMIX_SUCCESS;
}

// The distances as a malloc'd array the caller frees with
// PMIX_DEVICE_DIST_FREE.
pmix_status_t compute(pmix_topology_t *topo, pmix_cpuset_t *cpuset, const pmix_info_t *info,
                      size_t ninfo, pmix_device_distance_t **out, size_t *nout) {
    *out = nullptr;
    *nout = 0;
    if (cpuset == nullptr || cpuset->bitmap == nullptr) return PMIX_ERR_BAD_PARAM;
    if (!names_hwloc(cpuset->source)) return PMIX_ERR_NOT_SUPPORTED;
    pmix_device_type_t types = 0;
    std::string device;
    if (auto rc = read_directives(info, ninfo, types, device); rc != PMIX_SUCCESS) return rc;
    void *topology = nullptr;
    pmix_status_t status = PMIX_SUCCESS;
    if (topo == nullptr || topo->topology == nullptr ||
        pmixpp::runtime::is_local_topology(topo->topology)) {
        // This node: the topology that has its I/O devices (devices.hpp).
        topology = pmixpp::runtime::device_topology(&status);
        if (topology == nullptr) return status;
    } else {
        if (!names_hwloc(topo->source)) return PMIX_ERR_NOT_SUPPORTED;
        topology = topo->topology;  // the caller's, e.g. another node's
    }
    std::vector<pmixpp::runtime::DeviceDistance> found;
    status = pmixpp::runtime::device_distances(topology, cpuset->bitmap, types, device, found);
    if (status != PMIX_SUCCESS) return status;
    if (found.empty()) return PMIX_ERR_NOT_FOUND;
    pmix_device_distance_t *array = nullptr;
    PMIX_DEVICE_DIST_CREATE(array, found.size());
    if (array == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < found.size(); ++i) {
        array[i].uuid = ::strdup(pmixpp::runtime::device_uuid(found[i].osname).c_str());
        array[i].osname = ::strdup(found[i].osname.c_str());
        array[i].type = found[i].type;
        array[i].mindist = found[i].mindist;
        array[i].maxdist = found[i].maxdist;
        if (array[i].uuid == nullptr || array[i].osname == nullptr) {
            PMIX_DEVICE_DIST_FREE(array, found.size());
            return PMIX_ERR_NOMEM;
        }
    }
    *out = array;
    *nout = found.size();
    return PMIX_SUCCESS;
}

struct Distances {
    pmix_device_distance_t *array = nullptr;
    size_t n = 0;
};

void release_distances(void *cbdata) {
    auto *d = static_cast<Distances *>(cbdata);
    if (d->array != nullptr) PMIX_DEVICE_DIST_FREE(d->array, d->n);
    delete d;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (cbfunc == nullptr || (directives == nullptr && ndirs > 0)) return PMIX_ERR_BAD_PARAM;
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(directives, ndirs));
    bool posted = ProgressEngine::instance().post([copied, cbfunc, cbdata] {
        auto result = Server::instance().inventory().collect(copied->span());
        if (!result) {
            cbfunc(result.status().code(), nullptr, 0, cbdata, nullptr, nullptr);
            return;
        }
        // Ours until the host calls the release function (any thread).
        auto *out = new pmixpp::wire::InfoArray(std::move(result).value());
        cbfunc(PMIX_SUCCESS, out->data(), out->size(), cbdata, &release_info, out);
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// A NULL cbfunc makes the call blocking: its status is returned
// (PMIX_OPERATION_SUCCEEDED once stored, the rule of every server API:
// server/README.md, "A NULL callback"). With a cbfunc, the status goes to it, once.
PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if ((info == nullptr && ninfo > 0) || (directives == nullptr && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    auto inventory =
        std::make_shared<pmixpp::wire::InfoArray>(pmixpp::wire::InfoArray::copy_of(info, ninfo));
    auto dirs = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(directives, ndirs));
    auto work = [inventory, dirs] {
        return Server::instance().inventory().deliver(inventory->span(), dirs->span()).code();
    };
    if (cbfunc == nullptr) {
        pmix_status_t rc = PMIX_ERR_INIT;
        ProgressEngine::instance().run_sync([&] { rc = work(); });
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    bool posted =
        ProgressEngine::instance().post([work, cbfunc, cbdata] { cbfunc(work(), cbdata); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t **distances,
                                                 size_t *ndist) {
    if (distances == nullptr || ndist == nullptr) return PMIX_ERR_BAD_PARAM;
    return compute(topo, cpuset, info, ninfo, distances, ndist);
}

// Computed in the caller's thread (no connection is involved); the callback
// is called once, before this returns, and the array is released by
// release_fn.
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc,
                                                    void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *d = new Distances;
    const pmix_status_t rc = compute(topo, cpuset, info, ninfo, &d->array, &d->n);
    if (rc != PMIX_SUCCESS) {
        delete d;
        return rc;
    }
    cbfunc(PMIX_SUCCESS, d->array, d->n, cbdata, &release_distances, d);
    return PMIX_SUCCESS;
}

}  // extern "C"

// ---- PMIx_Fabric_*: in a server process, its Fabrics service
// (server/fabric.hpp); in a client or tool, the request goes to its server,
// which forwards it to the host's fabric upcall (server/fabric_requests.hpp;
// no upcall: PMIX_ERR_NOT_SUPPORTED). docs/network.md, "Fabric".

namespace {

pmix_status_t fabric_unavailable() {
    return pmixpp::runtime::any_face_initialized() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_INIT;
}

template <class Work>
pmix_status_t fabric_blocking(Work work) {
    if (!server_up()) return fabric_unavailable();
    pmix_status_t rc = PMIX_ERR_INIT;
    ProgressEngine::instance().run_sync([&] { rc = work(Server::instance().fabrics()); });
    return rc;
}

template <class Work>
pmix_status_t fabric_nb(Work work, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return fabric_unavailable();
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    bool posted = ProgressEngine::instance().post(
        [work, cbfunc, cbdata] { cbfunc(work(Server::instance().fabrics()), cbdata); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// A fabric a client or tool registered through its server: the directives
// (sent again by an update) and the cost matrix the host sent as a
// PMIX_DATA_ARRAY of PMIX_UINT16, which `info` gives as the standard's
// PMIX_POINTER to it. Live records are in `forwarded()` (any thread).
struct ForwardedFabric {
    pmixpp::wire::InfoArray directives;
    std::vector<std::uint16_t> costs;
};

struct ForwardedFabrics {
    std::mutex lock;
    std::set<ForwardedFabric *> live;
    std::size_t next_index = 0;
};

ForwardedFabrics &forwarded() {
    static ForwardedFabrics all;
    return all;
}

bool forwarding() {
    return !server_up() && pmixpp::client::request_gate() == PMIX_SUCCESS;
}

// Frees what an earlier answer put in fabric.info (not the record).
void clear_info(pmix_fabric_t &fabric, ForwardedFabric &record) {
    if (fabric.info != nullptr) PMIX_INFO_FREE(fabric.info, fabric.ninfo);
    fabric.info = nullptr;
    fabric.ninfo = 0;
    record.costs.clear();
}

// The host's answer into `fabric` (its info; a cost matrix as a pointer).
void fill_forwarded(pmix_fabric_t &fabric, ForwardedFabric &record,
                    pmixpp::client::InfoAnswer &answer) {
    clear_info(fabric, record);
    pmixpp::client::hand_out(answer, &fabric.info, &fabric.ninfo);
    for (size_t i = 0; i < fabric.ninfo; ++i) {
        pmix_info_t &item = fabric.info[i];
        if (!PMIX_CHECK_KEY(&item, PMIX_FABRIC_COST_MATRIX) || item.value.type != PMIX_DATA_ARRAY ||
            item.value.data.darray == nullptr || item.value.data.darray->type != PMIX_UINT16)
            continue;
        const auto *cells = static_cast<const std::uint16_t *>(item.value.data.darray->array);
        record.costs.assign(cells, cells + item.value.data.darray->size);
        PMIx_Value_destruct(&item.value);
        item.value.type = PMIX_POINTER;
        item.value.data.ptr = record.costs.data();  // ours, freed at deregister
    }
}

// Sends `op` with the record's directives; `done` gets the status once the
// answer is in `fabric` (on the progress thread).
pmix_status_t forward(pmix_fabric_t *fabric, ForwardedFabric *record, pmix_fabric_operation_t op,
                      std::function<void(pmix_status_t)> done) {
    auto body = pmixpp::wire::BodyWriter()
                    .u8(static_cast<std::uint8_t>(op))
                    .infos(record->directives.data(), record->directives.size())
                    .take();
    const bool posted = pmixpp::client::post_info_request(
        pmixpp::wire::Command::fabric, std::move(body),
        pmixpp::client::timeout_of(record->directives.data(), record->directives.size()),
        [fabric, record, done = std::move(done)](pmixpp::client::InfoAnswer a) {
            if (a.status == PMIX_SUCCESS) fill_forwarded(*fabric, *record, a);
            done(a.status);
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// PMIx_Fabric_register(_nb) of a client or tool: `done` gets the status.
pmix_status_t register_forwarded(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                 size_t ndirs, std::function<void(pmix_status_t)> done) {
    auto *record = new ForwardedFabric{pmixpp::wire::InfoArray::copy_of(directives, ndirs), {}};
    fabric->info = nullptr;
    fabric->ninfo = 0;
    const pmix_status_t rc =
        forward(fabric, record, PMIX_FABRIC_REQUEST_INFO,
                [fabric, record, done = std::move(done)](pmix_status_t status) {
                    auto &all = forwarded();
                    if (status == PMIX_SUCCESS) {
                        std::lock_guard<std::mutex> guard(all.lock);
                        all.live.insert(record);
                        fabric->index = all.next_index++;
                        fabric->module = record;
                    } else {
                        clear_info(*fabric, *record);
                        delete record;
                    }
                    done(status);
                });
    if (rc != PMIX_SUCCESS) delete record;
    return rc;
}

ForwardedFabric *forwarded_record(const pmix_fabric_t *fabric) {
    auto &all = forwarded();
    std::lock_guard<std::mutex> guard(all.lock);
    auto *record = static_cast<ForwardedFabric *>(fabric->module);
    return all.live.count(record) != 0 ? record : nullptr;
}

pmix_status_t deregister_forwarded(pmix_fabric_t *fabric) {
    auto &all = forwarded();
    std::unique_lock<std::mutex> guard(all.lock);
    auto *record = static_cast<ForwardedFabric *>(fabric->module);
    if (all.live.erase(record) == 0) return PMIX_ERR_BAD_PARAM;
    guard.unlock();
    clear_info(*fabric, *record);
    delete record;
    fabric->index = 0;
    fabric->module = nullptr;
    return PMIX_SUCCESS;
}

// Blocks the caller until `start` calls its `done`.
pmix_status_t wait_forwarded(
    const std::function<pmix_status_t(std::function<void(pmix_status_t)>)> &start) {
    auto done = std::make_shared<pmixpp::runtime::Completion<pmix_status_t>>();
    const pmix_status_t rc = start([done](pmix_status_t s) { done->complete(s); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    return done->value();
}

std::function<void(pmix_status_t)> op_callback(pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); };
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                               const pmix_info_t directives[], size_t ndirs) {
    if (fabric == nullptr || (directives == nullptr && ndirs > 0)) return PMIX_ERR_BAD_PARAM;
    if (forwarding())
        return wait_forwarded([&](std::function<void(pmix_status_t)> done) {
            return register_forwarded(fabric, directives, ndirs, std::move(done));
        });
    std::span<const pmix_info_t> dirs(directives, directives == nullptr ? 0 : ndirs);
    return fabric_blocking(
        [fabric, dirs](pmixpp::server::Fabrics &f) { return f.register_fabric(*fabric, dirs); });
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (fabric == nullptr || (directives == nullptr && ndirs > 0)) return PMIX_ERR_BAD_PARAM;
    if (forwarding()) {
        if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
        return register_forwarded(fabric, directives, ndirs, op_callback(cbfunc, cbdata));
    }
    auto dirs = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(directives, ndirs));
    return fabric_nb(
        [fabric, dirs](pmixpp::server::Fabrics &f) {
            return f.register_fabric(*fabric, dirs->span());
        },
        cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric) {
    if (fabric == nullptr) return PMIX_ERR_BAD_PARAM;
    if (forwarding()) {
        ForwardedFabric *record = forwarded_record(fabric);
        if (record == nullptr) return PMIX_ERR_BAD_PARAM;
        return wait_forwarded([&](std::function<void(pmix_status_t)> done) {
            return forward(fabric, record, PMIX_FABRIC_UPDATE_INFO, std::move(done));
        });
    }
    return fabric_blocking([fabric](pmixpp::server::Fabrics &f) { return f.update(*fabric); });
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                                void *cbdata) {
    if (fabric == nullptr) return PMIX_ERR_BAD_PARAM;
    if (forwarding()) {
        ForwardedFabric *record = forwarded_record(fabric);
        if (record == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
        return forward(fabric, record, PMIX_FABRIC_UPDATE_INFO, op_callback(cbfunc, cbdata));
    }
    return fabric_nb([fabric](pmixpp::server::Fabrics &f) { return f.update(*fabric); }, cbfunc,
                     cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric) {
    if (fabric == nullptr) return PMIX_ERR_BAD_PARAM;
    if (forwarding()) return deregister_forwarded(fabric);
    return fabric_blocking([fabric](pmixpp::server::Fabrics &f) { return f.deregister(*fabric); });
}

// A client's or tool's deregistration is local (nothing to tell the host):
// the callback is called once, before this returns.
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                                    void *cbdata) {
    if (fabric == nullptr) return PMIX_ERR_BAD_PARAM;
    if (forwarding()) {
        if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
        const pmix_status_t rc = deregister_forwarded(fabric);
        if (rc == PMIX_SUCCESS) cbfunc(rc, cbdata);
        return rc;
    }
    return fabric_nb([fabric](pmixpp::server::Fabrics &f) { return f.deregister(*fabric); }, cbfunc,
                     cbdata);
}

}  // extern "C"
