// Fabrics (fabric.hpp): fabric objects built from the node inventory.
#include "server/fabric.hpp"
#include "pmixpp/mca/info.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

namespace pmixpp::server {

namespace {

using mca::find_info;

std::string string_of(std::span<const pmix_info_t> info, const char *key) {
    const pmix_info_t *i = find_info(info, key);
    if (i == nullptr || i->value.type != PMIX_STRING || i->value.data.string == nullptr) return {};
    return i->value.data.string;
}

std::vector<std::string> split(const std::string &list) {
    std::vector<std::string> out;
    std::string_view rest(list);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        if (comma != 0) out.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return out;
}

// One device of the inventory: its PMIX_FABRIC_DEVICE attributes.
struct Device {
    std::span<const pmix_info_t> attrs;
    std::string host, vendor, identifier;
    std::vector<std::string> planes;
};

// The PMIX_FABRIC_DEVICE entries of one node's inventory.
void devices_of(std::span<const pmix_info_t> inventory, std::vector<Device> &out) {
    const pmix_info_t *all = find_info(inventory, PMIX_FABRIC_DEVICES);
    if (all == nullptr || all->value.type != PMIX_DATA_ARRAY || all->value.data.darray == nullptr ||
        all->value.data.darray->type != PMIX_INFO)
        return;
    std::span<const pmix_info_t> entries(
        static_cast<const pmix_info_t *>(all->value.data.darray->array),
        all->value.data.darray->size);
    for (const auto &e : entries) {
        if (!PMIX_CHECK_KEY(&e, PMIX_FABRIC_DEVICE) || e.value.type != PMIX_DATA_ARRAY ||
            e.value.data.darray == nullptr || e.value.data.darray->type != PMIX_INFO)
            continue;
        Device d;
        d.attrs = {static_cast<const pmix_info_t *>(e.value.data.darray->array),
                   e.value.data.darray->size};
        d.host = string_of(d.attrs, PMIX_HOSTNAME);
        d.vendor = string_of(d.attrs, PMIX_FABRIC_DEVICE_VENDOR);
        d.identifier = string_of(d.attrs, PMIX_FABRIC_IDENTIFIER);
        d.planes = split(string_of(d.attrs, PMIX_FABRIC_PLANE));
        out.push_back(std::move(d));
    }
}

bool shares_plane(const Device &a, const Device &b) {
    for (const auto &p : a.planes)
        for (const auto &q : b.planes)
            if (p == q) return true;
    return false;
}

// The value every device agrees on, else "mixed".
template <class Get>
std::string common(const std::vector<Device> &devices, Get get) {
    std::string value = get(devices.front());
    for (const auto &d : devices)
        if (get(d) != value) return "mixed";
    return value.empty() ? "unknown" : value;
}

void release_info(pmix_fabric_t &fabric) {
    if (fabric.info != nullptr) PMIX_INFO_FREE(fabric.info, fabric.ninfo);
    fabric.info = nullptr;
    fabric.ninfo = 0;
}

}  // namespace

Fabrics::~Fabrics() = default;

Fabrics::Record *Fabrics::find(const pmix_fabric_t &fabric) const {
    auto it = records_.find(fabric.index);
    if (it == records_.end() || it->second.get() != fabric.module) return nullptr;
    return it->second.get();
}

pmix_status_t Fabrics::register_fabric(pmix_fabric_t &fabric,
                                       std::span<const pmix_info_t> directives) {
    for (const char *key : {PMIX_FABRIC_IDENTIFIER, PMIX_FABRIC_VENDOR, PMIX_FABRIC_PLANE}) {
        const pmix_info_t *d = find_info(directives, key);
        if (d != nullptr && (d->value.type != PMIX_STRING || d->value.data.string == nullptr))
            return PMIX_ERR_BAD_PARAM;
    }
    auto record = std::make_unique<Record>();
    record->index = next_index_;
    record->directives = wire::InfoArray::copy_of(directives);
    fabric.info = nullptr;
    fabric.ninfo = 0;
    const pmix_status_t rc = fill(fabric, *record);
    if (rc != PMIX_SUCCESS) return rc;
    ++next_index_;
    fabric.index = record->index;
    fabric.module = record.get();
    records_.emplace(record->index, std::move(record));
    return PMIX_SUCCESS;
}

pmix_status_t Fabrics::update(pmix_fabric_t &fabric) {
    Record *record = find(fabric);
    if (record == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_fabric_t fresh = fabric;
    fresh.info = nullptr;
    fresh.ninfo = 0;
    // On failure the record and `fabric` are untouched and stay valid.
    const pmix_status_t rc = fill(fresh, *record);
    if (rc != PMIX_SUCCESS) return rc;
    release_info(fabric);
    fabric.info = fresh.info;
    fabric.ninfo = fresh.ninfo;
    return PMIX_SUCCESS;
}

pmix_status_t Fabrics::deregister(pmix_fabric_t &fabric) {
    Record *record = find(fabric);
    if (record == nullptr) return PMIX_ERR_BAD_PARAM;
    release_info(fabric);
    records_.erase(record->index);
    fabric.index = 0;
    fabric.module = nullptr;
    return PMIX_SUCCESS;
}

pmix_status_t Fabrics::fill(pmix_fabric_t &fabric, Record &record) {
    // This node's inventory now, then every other node's as delivered.
    auto local = inventory_.collect({});
    if (!local) return local.status().code();
    const std::string here = string_of(local.value().span(), PMIX_HOSTNAME);
    std::vector<Device> all;
    devices_of(local.value().span(), all);
    for (const auto &[node, inventory] : inventory_.nodes())
        if (node != here) devices_of(inventory.span(), all);
    // The caller's choice of fabric.
    const auto dirs = record.directives.span();
    const std::string want_id = string_of(dirs, PMIX_FABRIC_IDENTIFIER);
    const std::string want_vendor = string_of(dirs, PMIX_FABRIC_VENDOR);
    const std::string want_plane = string_of(dirs, PMIX_FABRIC_PLANE);
    std::vector<Device> devices;
    for (auto &d : all) {
        if (!want_id.empty() && d.identifier != want_id) continue;
        if (!want_vendor.empty() && d.vendor != want_vendor) continue;
        if (!want_plane.empty() &&
            std::find(d.planes.begin(), d.planes.end(), want_plane) == d.planes.end())
            continue;
        devices.push_back(std::move(d));
    }
    if (devices.empty()) return PMIX_ERR_NOT_FOUND;
    // Costs: 0 to itself, 1 on one node, 2 on one IP network (plane), 3 routed.
    const std::size_t n = devices.size();
    std::vector<std::uint16_t> costs(n * n, 0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            costs[i * n + j] = i == j                                 ? 0
                               : devices[i].host == devices[j].host   ? 1
                               : shares_plane(devices[i], devices[j]) ? 2
                                                                      : 3;
    const std::size_t fixed = want_plane.empty() ? 4 : 5;
    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, fixed + n);
    if (info == nullptr) return PMIX_ERR_NOMEM;
    const std::string vendor = common(devices, [](const Device &d) { return d.vendor; });
    const std::string id = common(devices, [](const Device &d) { return d.identifier; });
    std::size_t k = 0;
    PMIx_Info_load(&info[k++], PMIX_FABRIC_VENDOR, vendor.c_str(), PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_FABRIC_IDENTIFIER, id.c_str(), PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_FABRIC_NUM_DEVICES, &n, PMIX_SIZE);
    // The record's until the next update or deregister (moving keeps the buffer).
    record.costs = std::move(costs);
    void *matrix = record.costs.data();
    PMIx_Info_load(&info[k++], PMIX_FABRIC_COST_MATRIX, matrix, PMIX_POINTER);
    if (!want_plane.empty())
        PMIx_Info_load(&info[k++], PMIX_FABRIC_PLANE, want_plane.c_str(), PMIX_STRING);
    for (std::size_t i = 0; i < n; ++i) {
        // The device's attributes plus its row in the cost matrix.
        const std::size_t na = devices[i].attrs.size();
        pmix_info_t *attrs = nullptr;
        PMIX_INFO_CREATE(attrs, na + 1);
        for (std::size_t a = 0; a < na; ++a) PMIX_INFO_XFER(&attrs[a], &devices[i].attrs[a]);
        const auto row = static_cast<std::uint32_t>(i);
        PMIx_Info_load(&attrs[na], PMIX_FABRIC_DEVICE_INDEX, &row, PMIX_UINT32);
        pmix_data_array_t array{PMIX_INFO, na + 1, attrs};
        PMIx_Info_load(&info[k++], PMIX_FABRIC_DEVICE, &array, PMIX_DATA_ARRAY);
        PMIX_INFO_FREE(attrs, na + 1);
    }
    fabric.info = info;
    fabric.ninfo = k;
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::server
