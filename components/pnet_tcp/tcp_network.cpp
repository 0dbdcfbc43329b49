// The pnet_tcp module (tcp_network.hpp, README.md).
#include "tcp_network.hpp"

#include <unistd.h>

#include "interfaces.hpp"

#include <cstring>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace pmixpp::pnet_tcp {

namespace {

const pmix_info_t *find(std::span<const pmix_info_t> info, const char *key) {
    for (const auto &i : info)
        if (PMIX_CHECK_KEY(&i, key)) return &i;
    return nullptr;
}

bool as_uint(const pmix_value_t &v, std::uint32_t &out) {
    std::int64_t n = -1;
    switch (v.type) {
        case PMIX_UINT32:
            n = v.data.uint32;
            break;
        case PMIX_UINT16:
            n = v.data.uint16;
            break;
        case PMIX_UINT8:
            n = v.data.uint8;
            break;
        case PMIX_UINT64:
            n = static_cast<std::int64_t>(v.data.uint64 & 0xffffffffU);
            break;
        case PMIX_SIZE:
            n = static_cast<std::int64_t>(v.data.size & 0xffffffffU);
            break;
        case PMIX_INT:
            n = v.data.integer;
            break;
        case PMIX_INT32:
            n = v.data.int32;
            break;
        default:
            return false;
    }
    if (n < 0) return false;
    out = static_cast<std::uint32_t>(n);
    return true;
}

std::string new_key() {
    std::random_device random;  // /dev/urandom
    static constexpr char kHex[] = "0123456789abcdef";
    std::string key;
    for (int i = 0; i < 8; ++i) {
        const auto word = random();
        for (int b = 0; b < 8; ++b) key += kHex[(word >> (4 * b)) & 0xf];
    }
    return key;  // 256 random bits, 64 hex digits
}

mca::Status bad(std::string message) {
    return mca::Status(PMIX_ERR_BAD_PARAM, "pnet_tcp: " + std::move(message));
}

}  // namespace

bool parse_pool(const std::string &text, std::uint32_t &first, std::uint32_t &last) {
    const auto dash = text.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == text.size()) return false;
    const std::string a = text.substr(0, dash), b = text.substr(dash + 1);
    if (a.find_first_not_of("0123456789") != std::string::npos ||
        b.find_first_not_of("0123456789") != std::string::npos || a.size() > 5 || b.size() > 5)
        return false;
    first = static_cast<std::uint32_t>(std::stoul(a));
    last = static_cast<std::uint32_t>(std::stoul(b));
    return first >= 1 && last <= 65535 && first <= last;
}

TcpNetwork::TcpNetwork(Settings settings)
    : settings_(std::move(settings)), used_(settings_.last_port - settings_.first_port + 1) {}

mca::Status TcpNetwork::setup_application(std::string_view nspace,
                                          std::span<const pmix_info_t> job_info,
                                          const mca::KeyValueSink &launch_info) {
    const pmix_info_t *fabric = find(job_info, PMIX_ALLOC_FABRIC);
    if (fabric == nullptr) return mca::Status::success();  // no network asked for
    if (fabric->value.type != PMIX_DATA_ARRAY || fabric->value.data.darray == nullptr ||
        fabric->value.data.darray->type != PMIX_INFO)
        return bad("PMIX_ALLOC_FABRIC of job " + std::string(nspace) +
                   " is not an array of pmix_info_t");
    std::span<const pmix_info_t> request(
        static_cast<const pmix_info_t *>(fabric->value.data.darray->array),
        fabric->value.data.darray->size);
    const pmix_info_t *type = find(request, PMIX_ALLOC_FABRIC_TYPE);
    if (type == nullptr || type->value.type != PMIX_STRING || type->value.data.string == nullptr)
        return bad("PMIX_ALLOC_FABRIC without a PMIX_ALLOC_FABRIC_TYPE string");
    if (std::string_view(type->value.data.string) != "tcp")
        return mca::Status::success();  // another module's fabric
    const pmix_info_t *id = find(request, PMIX_ALLOC_FABRIC_ID);
    if (id == nullptr || id->value.type != PMIX_STRING || id->value.data.string == nullptr ||
        *id->value.data.string == '\0')
        return bad("PMIX_ALLOC_FABRIC without a PMIX_ALLOC_FABRIC_ID string");
    std::uint32_t endpoints = 0;
    const pmix_info_t *endpts = find(request, PMIX_ALLOC_FABRIC_ENDPTS);
    if (endpts == nullptr || !as_uint(endpts->value, endpoints) || endpoints == 0)
        return bad("PMIX_ALLOC_FABRIC without a positive PMIX_ALLOC_FABRIC_ENDPTS");
    if (endpoints > used_.size())
        return mca::Status(PMIX_ERR_OUT_OF_RESOURCE, "pnet_tcp: " + std::to_string(endpoints) +
                                                         " ports per process, the pool has " +
                                                         std::to_string(used_.size()));
    pmix_value_t v{};
    v.type = PMIX_STRING;
    v.data.string = id->value.data.string;
    launch_info(kKeyId, v);
    v.type = PMIX_UINT32;
    v.data.uint32 = endpoints;
    launch_info(kKeyEndpoints, v);
    const std::string key = new_key();  // one per job
    v.type = PMIX_STRING;
    v.data.string = const_cast<char *>(key.c_str());
    launch_info(kKeySecret, v);
    return mca::Status::success();
}

mca::Status TcpNetwork::setup_local_support(std::string_view nspace,
                                            std::span<const pmix_info_t> launch_info) {
    const pmix_info_t *id = find(launch_info, kKeyId);
    if (id == nullptr) return mca::Status::success();  // no TCP fabric for this job
    const pmix_info_t *endpts = find(launch_info, kKeyEndpoints);
    const pmix_info_t *key = find(launch_info, kKeySecret);
    Job job;
    if (id->value.type != PMIX_STRING || id->value.data.string == nullptr || endpts == nullptr ||
        !as_uint(endpts->value, job.endpoints) || job.endpoints == 0 || key == nullptr ||
        key->value.type != PMIX_STRING || key->value.data.string == nullptr)
        return bad("malformed launch info for job " + std::string(nspace));
    job.id = id->value.data.string;
    job.key = key->value.data.string;
    deregister_job(nspace);  // a second set-up replaces the first
    jobs_.emplace(std::string(nspace), std::move(job));
    return mca::Status::success();
}

mca::Status TcpNetwork::setup_fork(const pmix_proc_t &child, mca::Environment &env) {
    auto it = jobs_.find(std::string_view(child.nspace, strnlen(child.nspace, PMIX_MAX_NSLEN)));
    if (it == jobs_.end()) return mca::Status::success();
    Job &job = it->second;
    auto [slot, fresh] = job.first_port.try_emplace(child.rank, 0);
    if (fresh) {
        slot->second = take(job.endpoints);
        if (slot->second == 0) {
            job.first_port.erase(slot);
            return mca::Status(PMIX_ERR_OUT_OF_RESOURCE,
                               "pnet_tcp: no " + std::to_string(job.endpoints) +
                                   " free consecutive ports left in " +
                                   std::to_string(settings_.first_port) + "-" +
                                   std::to_string(settings_.last_port) + " for rank " +
                                   std::to_string(child.rank) + " of " + it->first);
        }
    }
    env[settings_.port_env] = std::to_string(slot->second);
    env[settings_.range_env] = std::to_string(job.endpoints);
    env[settings_.key_env] = job.key;
    return mca::Status::success();
}

void TcpNetwork::deregister_job(std::string_view nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (const auto &[rank, first] : it->second.first_port) give_back(first, it->second.endpoints);
    jobs_.erase(it);
}

// One PMIX_FABRIC_DEVICE per interface (interfaces.hpp), in PMIX_FABRIC_DEVICES.
mca::Status TcpNetwork::collect_inventory(std::span<const pmix_info_t> directives,
                                          const mca::KeyValueSink &inventory) {
    std::string host;
    if (const pmix_info_t *h = find(directives, PMIX_HOSTNAME);
        h != nullptr && h->value.type == PMIX_STRING && h->value.data.string != nullptr) {
        host = h->value.data.string;
    } else {
        char name[256] = {};
        host = ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
    }
    const auto found = interfaces();
    pmix_info_t *devices = nullptr;
    PMIX_INFO_CREATE(devices, found.size());
    if (devices == nullptr && !found.empty()) return mca::Status(PMIX_ERR_NOMEM, "pnet_tcp");
    for (std::size_t d = 0; d < found.size(); ++d) {
        const Interface &itf = found[d];
        std::vector<std::pair<const char *, std::string>> strings = {
            {PMIX_DEVICE_ID, host + ":" + itf.name},
            {PMIX_HOSTNAME, host},
            {PMIX_FABRIC_DEVICE_NAME, itf.name},
            {PMIX_FABRIC_DEVICE_VENDOR, itf.vendor_id.empty() ? "unknown" : itf.vendor_id},
            {PMIX_FABRIC_DEVICE_BUS_TYPE, itf.bus},
            {PMIX_FABRIC_DEVICE_TYPE, "Ethernet"},
        };
        if (!itf.pci_id.empty()) {
            // The standard's form: domain:bus:device:function.
            std::string id = itf.pci_id;
            id[10] = ':';
            strings.emplace_back(PMIX_FABRIC_DEVICE_PCI_DEVID, id);
            strings.emplace_back(PMIX_FABRIC_DEVICE_VENDORID, itf.vendor_id + ":" + itf.device_id);
        }
        if (!itf.driver.empty()) strings.emplace_back(PMIX_FABRIC_DEVICE_DRIVER, itf.driver);
        if (!itf.mac.empty()) strings.emplace_back(PMIX_FABRIC_DEVICE_ADDRESS, itf.mac);
        std::string addrs, planes;
        for (const auto &a : itf.addresses) addrs += (addrs.empty() ? "" : ",") + a;
        for (const auto &p : itf.networks) planes += (planes.empty() ? "" : ",") + p;
        strings.emplace_back(kKeyAddresses, addrs);
        // Its fabric planes: the IP networks it is on (the standard's example: a CIDR).
        strings.emplace_back(PMIX_FABRIC_PLANE, planes);
        strings.emplace_back(PMIX_FABRIC_IDENTIFIER, "tcp");
        const std::size_t n = strings.size() + 3;
        pmix_info_t *attrs = nullptr;
        PMIX_INFO_CREATE(attrs, n);
        std::size_t k = 0;
        for (const auto &[key, value] : strings)
            PMIx_Info_load(&attrs[k++], key, value.c_str(), PMIX_STRING);
        PMIx_Info_load(&attrs[k++], PMIX_FABRIC_DEVICE_MTU, &itf.mtu, PMIX_SIZE);
        PMIx_Info_load(&attrs[k++], PMIX_FABRIC_DEVICE_SPEED, &itf.speed, PMIX_SIZE);
        PMIx_Info_load(&attrs[k++], PMIX_FABRIC_DEVICE_STATE, &itf.state, PMIX_LINK_STATE);
        pmix_data_array_t array{PMIX_INFO, n, attrs};
        PMIx_Info_load(&devices[d], PMIX_FABRIC_DEVICE, &array, PMIX_DATA_ARRAY);
        PMIX_INFO_FREE(attrs, n);
    }
    pmix_data_array_t all{PMIX_INFO, found.size(), devices};
    pmix_value_t v{};
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = &all;
    inventory(PMIX_FABRIC_DEVICES, v);
    if (devices != nullptr) PMIX_INFO_FREE(devices, found.size());
    return mca::Status::success();
}

// Another node's inventory: kept by the server's Inventory service, which
// describes the fabric from it; nothing to plan here yet.
mca::Status TcpNetwork::deliver_inventory(std::span<const pmix_info_t>,
                                          std::span<const pmix_info_t>) {
    return mca::Status::success();
}

std::uint32_t TcpNetwork::take(std::uint32_t count) {
    std::size_t run = 0;
    for (std::size_t i = 0; i < used_.size(); ++i) {
        run = used_[i] ? 0 : run + 1;
        if (run == count) {
            const std::size_t start = i + 1 - count;
            for (std::size_t j = start; j <= i; ++j) used_[j] = true;
            return settings_.first_port + static_cast<std::uint32_t>(start);
        }
    }
    return 0;
}

void TcpNetwork::give_back(std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t p = first; p < first + count; ++p) used_[p - settings_.first_port] = false;
}

}  // namespace pmixpp::pnet_tcp
