// Inventory (inventory.hpp): this node's resources for the host's scheduler,
// and what other nodes' hosts deliver.
#include "server/inventory.hpp"

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "mca/logging.hpp"
#include "runtime/devices.hpp"
#include "pmixpp/mca/info.hpp"

namespace pmixpp::server {

namespace {

using mca::find_info;

auto log() {
    return mca::framework_logger("server");
}

const char *string_of(const pmix_info_t *i) {
    if (i == nullptr || i->value.type != PMIX_STRING || i->value.data.string == nullptr ||
        *i->value.data.string == '\0')
        return nullptr;
    return i->value.data.string;
}

void append_string(std::vector<pmix_info_t> &out, const char *key, const std::string &value) {
    out.emplace_back();
    std::memset(&out.back(), 0, sizeof(pmix_info_t));
    PMIx_Info_load(&out.back(), key, value.c_str(), PMIX_STRING);
}

}  // namespace

mca::Result<wire::InfoArray> Inventory::collect(std::span<const pmix_info_t> directives) {
    std::vector<pmix_info_t> out;
    auto release = [&out] {
        for (auto &i : out) PMIx_Value_destruct(&i.value);
    };
    std::string host;
    if (const char *named = string_of(find_info(directives, PMIX_HOSTNAME))) {
        host = named;
    } else {
        char name[256] = {};
        host = ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
    }
    append_string(out, PMIX_HOSTNAME, host);
    pmix_status_t status = PMIX_SUCCESS;
    if (void *topology = runtime::device_topology(&status)) {
        append_string(out, PMIX_TOPOLOGY_SIGNATURE, runtime::topology_signature(topology));
        if (std::string xml = runtime::topology_xml(topology); !xml.empty())
            append_string(out, PMIX_HWLOC_XML_V2, xml);
    } else {
        log()->debug("server: inventory without a topology ({})", PMIx_Error_string(status));
    }
    auto nets = networks_();
    if (!nets) {
        release();
        return nets.status();
    }
    const mca::KeyValueSink sink = [&out](std::string_view key, const pmix_value_t &value) {
        out.emplace_back();
        std::memset(&out.back(), 0, sizeof(pmix_info_t));
        const std::string k(key);
        PMIX_LOAD_KEY(out.back().key, k.c_str());
        PMIx_Value_xfer(&out.back().value, &value);
    };
    for (auto *net : nets.value()->modules()) {
        auto st = net->collect_inventory(directives, sink);
        if (!st.ok()) {
            log()->error("server: collect_inventory: {}", st.message());
            release();
            return st;
        }
    }
    auto copy = wire::InfoArray::copy_of(out.data(), out.size());
    release();
    if (copy.size() != out.size()) return mca::Status(PMIX_ERR_NOMEM, "collect_inventory: copy");
    return copy;
}

mca::Status Inventory::deliver(std::span<const pmix_info_t> inventory,
                               std::span<const pmix_info_t> directives) {
    const char *host = string_of(find_info(inventory, PMIX_HOSTNAME));
    if (host == nullptr)
        return mca::Status(PMIX_ERR_BAD_PARAM,
                           "deliver_inventory: the inventory names no node (PMIX_HOSTNAME)");
    auto nets = networks_();
    if (!nets) return nets.status();
    for (auto *net : nets.value()->modules()) {
        auto st = net->deliver_inventory(inventory, directives);
        if (!st.ok()) {
            log()->error("server: deliver_inventory from {}: {}", host, st.message());
            return st;
        }
    }
    auto copy = wire::InfoArray::copy_of(inventory);
    if (copy.size() != inventory.size())
        return mca::Status(PMIX_ERR_NOMEM, "deliver_inventory: copy");
    nodes_.insert_or_assign(std::string(host), std::move(copy));
    return mca::Status::success();
}

}  // namespace pmixpp::server
