// The pnet_tcp module (tcp_network.hpp, README.md).
#include "tcp_network.hpp"

#include <unistd.h>

#include "interfaces.hpp"
#include "pmixpp/mca/node_maps.hpp"
#include "pmixpp/mca/info.hpp"

#include <charconv>
#include <cstring>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace pmixpp::pnet_tcp {

namespace {

using mca::find_info;

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

const char *string_of(const pmix_info_t *i) {
    if (i == nullptr || i->value.type != PMIX_STRING) return nullptr;
    return i->value.data.string;
}

std::span<const pmix_info_t> info_array(const pmix_info_t &i) {
    if (i.value.type != PMIX_DATA_ARRAY || i.value.data.darray == nullptr ||
        i.value.data.darray->type != PMIX_INFO || i.value.data.darray->array == nullptr)
        return {};
    return {static_cast<const pmix_info_t *>(i.value.data.darray->array),
            i.value.data.darray->size};
}

// Splits "a<sep>b<sep>c" (an empty text: no item).
std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> out;
    if (text.empty()) return out;
    for (;;) {
        const auto pos = text.find(sep);
        out.emplace_back(text.substr(0, pos));
        if (pos == std::string_view::npos) return out;
        text.remove_prefix(pos + 1);
    }
}

std::optional<std::uint32_t> number(std::string_view s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string hostname() {
    char name[256] = {};
    return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
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
    const pmix_info_t *fabric = find_info(job_info, PMIX_ALLOC_FABRIC);
    if (fabric == nullptr) return mca::Status::success();  // no network asked for
    if (fabric->value.type != PMIX_DATA_ARRAY || fabric->value.data.darray == nullptr ||
        fabric->value.data.darray->type != PMIX_INFO)
        return bad("PMIX_ALLOC_FABRIC of job " + std::string(nspace) +
                   " is not an array of pmix_info_t");
    std::span<const pmix_info_t> request(
        static_cast<const pmix_info_t *>(fabric->value.data.darray->array),
        fabric->value.data.darray->size);
    const pmix_info_t *type = find_info(request, PMIX_ALLOC_FABRIC_TYPE);
    if (type == nullptr || type->value.type != PMIX_STRING || type->value.data.string == nullptr)
        return bad("PMIX_ALLOC_FABRIC without a PMIX_ALLOC_FABRIC_TYPE string");
    if (std::string_view(type->value.data.string) != "tcp")
        return mca::Status::success();  // another module's fabric
    const pmix_info_t *id = find_info(request, PMIX_ALLOC_FABRIC_ID);
    if (id == nullptr || id->value.type != PMIX_STRING || id->value.data.string == nullptr ||
        *id->value.data.string == '\0')
        return bad("PMIX_ALLOC_FABRIC without a PMIX_ALLOC_FABRIC_ID string");
    // Per-node endpoints are not built (a TCP port belongs to a process;
    // docs/network.md): refused rather than ignored.
    if (find_info(request, PMIX_ALLOC_FABRIC_ENDPTS_NODE) != nullptr)
        return mca::Status(PMIX_ERR_NOT_SUPPORTED,
                           "pnet_tcp: PMIX_ALLOC_FABRIC_ENDPTS_NODE is not supported");
    std::uint32_t endpoints = 0;
    const pmix_info_t *endpts = find_info(request, PMIX_ALLOC_FABRIC_ENDPTS);
    if (endpts == nullptr || !as_uint(endpts->value, endpoints) || endpoints == 0)
        return bad("PMIX_ALLOC_FABRIC without a positive PMIX_ALLOC_FABRIC_ENDPTS");
    if (endpoints > used_.size())
        return mca::Status(PMIX_ERR_OUT_OF_RESOURCE, "pnet_tcp: " + std::to_string(endpoints) +
                                                         " ports per process, the pool has " +
                                                         std::to_string(used_.size()));
    std::string plane;
    if (const pmix_info_t *p = find_info(request, PMIX_ALLOC_FABRIC_PLANE); p != nullptr) {
        const char *text = string_of(p);
        if (text == nullptr || *text == '\0')
            return bad("PMIX_ALLOC_FABRIC_PLANE of job " + std::string(nspace) +
                       " is not an IP network string");
        plane = text;
    }
    const bool maps = find_info(job_info, PMIX_NODE_MAP) != nullptr;
    if (!plane.empty() && !maps)
        return bad("PMIX_ALLOC_FABRIC_PLANE for job " + std::string(nspace) +
                   " needs the job's PMIX_NODE_MAP and PMIX_PROC_MAP");
    if (maps) {
        if (auto st = plan(nspace, job_info, endpoints, plane, launch_info); !st.ok()) return st;
    }
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
    const pmix_info_t *id = find_info(launch_info, kKeyId);
    if (id == nullptr) return mca::Status::success();  // no TCP fabric for this job
    const pmix_info_t *endpts = find_info(launch_info, kKeyEndpoints);
    const pmix_info_t *key = find_info(launch_info, kKeySecret);
    Job job;
    if (id->value.type != PMIX_STRING || id->value.data.string == nullptr || endpts == nullptr ||
        !as_uint(endpts->value, job.endpoints) || job.endpoints == 0 || key == nullptr ||
        key->value.type != PMIX_STRING || key->value.data.string == nullptr)
        return bad("malformed launch info for job " + std::string(nspace));
    job.id = id->value.data.string;
    job.key = key->value.data.string;
    const pmix_info_t *nodes = find_info(launch_info, kKeyNodes);
    const pmix_info_t *ports = find_info(launch_info, kKeyPorts);
    if ((nodes == nullptr) != (ports == nullptr))
        return bad("launch info for job " + std::string(nspace) + " has half a plan");
    if (nodes != nullptr) {
        if (auto st = read_plan(nspace, *nodes, *ports, job); !st.ok()) return st;
    }
    // A second set-up replaces the first (the ports this node gave go back).
    if (auto it = jobs_.find(nspace); it != jobs_.end()) {
        if (!it->second.planned)
            for (const auto &[rank, first] : it->second.first_port)
                give_back(used_, first, it->second.endpoints);
        jobs_.erase(it);
    }
    jobs_.emplace(std::string(nspace), std::move(job));
    return mca::Status::success();
}

mca::Status TcpNetwork::setup_fork(const pmix_proc_t &child, mca::Environment &env) {
    auto it = jobs_.find(std::string_view(child.nspace, strnlen(child.nspace, PMIX_MAX_NSLEN)));
    if (it == jobs_.end()) return mca::Status::success();
    Job &job = it->second;
    if (job.planned) {
        const auto port = job.first_port.find(child.rank);
        if (port == job.first_port.end())
            return bad("rank " + std::to_string(child.rank) + " is not in the plan of job " +
                       it->first);
        env[settings_.port_env] = std::to_string(port->second);
        env[settings_.range_env] = std::to_string(job.endpoints);
        env[settings_.key_env] = job.key;
        const Where &where = job.nodes.at(job.node_of.at(child.rank));
        if (!where.interface.empty() && !settings_.if_env.empty())
            env[settings_.if_env] = where.interface;
        return mca::Status::success();
    }
    auto [slot, fresh] = job.first_port.try_emplace(child.rank, 0);
    if (fresh) {
        slot->second = take(used_, job.endpoints);
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
    if (auto it = jobs_.find(nspace); it != jobs_.end()) {
        if (!it->second.planned)
            for (const auto &[rank, first] : it->second.first_port)
                give_back(used_, first, it->second.endpoints);
        jobs_.erase(it);
    }
    if (auto it = plans_.find(nspace); it != plans_.end()) {
        for (const auto &[node, first] : it->second.taken)
            give_back(pool_of(node), first, it->second.endpoints);
        plans_.erase(it);
    }
}

// One PMIX_FABRIC_DEVICE per interface (interfaces.hpp), in PMIX_FABRIC_DEVICES.
mca::Status TcpNetwork::collect_inventory(std::span<const pmix_info_t> directives,
                                          const mca::KeyValueSink &inventory) {
    std::string host;
    if (const pmix_info_t *h = find_info(directives, PMIX_HOSTNAME);
        h != nullptr && h->value.type == PMIX_STRING && h->value.data.string != nullptr) {
        host = h->value.data.string;
        names_.insert(host);  // the host calls this node so (its node map will too)
    } else {
        host = hostname();
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

// Another node's inventory (as collect_inventory made it there): its tcp
// devices, by node name, to plan that node's interfaces (choose). A later
// delivery for the node replaces the earlier one.
mca::Status TcpNetwork::deliver_inventory(std::span<const pmix_info_t> inventory,
                                          std::span<const pmix_info_t>) {
    const char *node = string_of(find_info(inventory, PMIX_HOSTNAME));
    const pmix_info_t *all = find_info(inventory, PMIX_FABRIC_DEVICES);
    if (node == nullptr || all == nullptr) return mca::Status::success();  // not ours
    std::vector<Device> devices;
    for (const pmix_info_t &d : info_array(*all)) {
        if (!PMIX_CHECK_KEY(&d, PMIX_FABRIC_DEVICE)) continue;
        const auto attrs = info_array(d);
        const char *fabric = string_of(find_info(attrs, PMIX_FABRIC_IDENTIFIER));
        const char *name = string_of(find_info(attrs, PMIX_FABRIC_DEVICE_NAME));
        if (fabric == nullptr || std::string_view(fabric) != "tcp" || name == nullptr) continue;
        Device device;
        device.name = name;
        const char *addrs = string_of(find_info(attrs, kKeyAddresses));
        const char *planes = string_of(find_info(attrs, PMIX_FABRIC_PLANE));
        device.addresses = split(addrs != nullptr ? addrs : "", ',');
        device.networks = split(planes != nullptr ? planes : "", ',');
        if (device.addresses.size() != device.networks.size())
            return bad("inventory of node " + std::string(node) + ": device " + device.name +
                       " has " + std::to_string(device.addresses.size()) + " addresses and " +
                       std::to_string(device.networks.size()) + " planes");
        devices.push_back(std::move(device));
    }
    delivered_[node] = std::move(devices);
    return mca::Status::success();
}

// The job's key (PMIX_ALLOC_FABRIC_SEC_KEY, job realm) and, for a planned
// job, every rank's PMIX_FABRIC_ENDPT: one pmix_endpoint_t per port, uuid
// "<node>:<interface>" (the PMIX_DEVICE_ID of the inventory) or "<node>" when
// the node's interface is unknown, osname the interface, endpt the text
// "<address>:<port>" (the node's name for the address when unknown).
mca::Status TcpNetwork::job_info(std::string_view nspace, const mca::KeyValueSink &info) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return mca::Status::success();
    const Job &job = it->second;
    pmix_value_t v{};
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = const_cast<char *>(job.key.data());
    v.data.bo.size = job.key.size();
    info(PMIX_ALLOC_FABRIC_SEC_KEY, v);
    if (!job.planned) return mca::Status::success();  // ports are taken at each fork
    std::vector<pmix_endpoint_t> endpoints(job.endpoints);
    std::vector<std::string> texts(job.endpoints);
    for (const auto &[rank, first] : job.first_port) {
        const Where &where = job.nodes.at(job.node_of.at(rank));
        const std::string uuid =
            where.interface.empty() ? where.node : where.node + ":" + where.interface;
        const std::string &address = where.address.empty() ? where.node : where.address;
        for (std::uint32_t k = 0; k < job.endpoints; ++k) {
            // An IPv6 address in brackets, as in a URI.
            texts[k] = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
                       ":" + std::to_string(first + k);
            endpoints[k].uuid = const_cast<char *>(uuid.c_str());
            endpoints[k].osname =
                where.interface.empty() ? nullptr : const_cast<char *>(where.interface.c_str());
            endpoints[k].endpt.bytes = texts[k].data();
            endpoints[k].endpt.size = texts[k].size();
        }
        pmix_data_array_t array{PMIX_ENDPOINT, endpoints.size(), endpoints.data()};
        pmix_info_t proc[2];
        PMIX_INFO_LOAD(&proc[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&proc[1], PMIX_FABRIC_ENDPT, &array, PMIX_DATA_ARRAY);
        pmix_data_array_t data{PMIX_INFO, 2, proc};
        v = {};
        v.type = PMIX_DATA_ARRAY;
        v.data.darray = &data;
        info(PMIX_PROC_DATA, v);
        PMIX_INFO_DESTRUCT(&proc[0]);
        PMIX_INFO_DESTRUCT(&proc[1]);
    }
    return mca::Status::success();
}

bool TcpNetwork::is_this_node(const std::string &node) const {
    return names_.count(node) != 0 || node == hostname();
}

TcpNetwork::Pool &TcpNetwork::pool_of(const std::string &node) {
    if (is_this_node(node)) return used_;
    auto [it, fresh] = remote_.try_emplace(node);
    if (fresh) it->second.resize(used_.size());  // every node has the same pool
    return it->second;
}

std::optional<std::vector<TcpNetwork::Device>> TcpNetwork::devices_of(
    const std::string &node) const {
    if (auto it = delivered_.find(node); it != delivered_.end()) return it->second;
    if (!is_this_node(node)) return std::nullopt;
    std::vector<Device> out;
    for (const Interface &itf : interfaces())
        out.push_back(Device{itf.name, itf.addresses, itf.networks});
    return out;
}

mca::Result<TcpNetwork::Where> TcpNetwork::choose(const std::string &node,
                                                  const std::string &plane) const {
    Where where{node, "", ""};
    const auto devices = devices_of(node);
    if (!devices) {
        if (plane.empty()) return where;  // listen on every interface; the name is the address
        return mca::Status(PMIX_ERR_NOT_FOUND, "pnet_tcp: plane " + plane +
                                                   " asked for, but the inventory of node " + node +
                                                   " is unknown (PMIx_server_deliver_inventory)");
    }
    std::string networks;
    for (const Device &d : *devices) {
        for (std::size_t k = 0; k < d.networks.size(); ++k) {
            networks += (networks.empty() ? "" : ", ") + d.networks[k];
            if (!plane.empty() && d.networks[k] != plane) continue;
            where.interface = d.name;
            where.address = d.addresses[k].substr(0, d.addresses[k].find('/'));
            return where;
        }
    }
    if (plane.empty()) return where;  // no interface with an address: the name
    return mca::Status(PMIX_ERR_NOT_FOUND,
                       "pnet_tcp: no interface of node " + node + " is on plane " + plane +
                           " (its networks: " + (networks.empty() ? "none" : networks) + ")");
}

mca::Status TcpNetwork::plan(std::string_view nspace, std::span<const pmix_info_t> job_info,
                             std::uint32_t endpoints, const std::string &plane,
                             const mca::KeyValueSink &launch_info) {
    const char *node_map = string_of(find_info(job_info, PMIX_NODE_MAP));
    const char *proc_map = string_of(find_info(job_info, PMIX_PROC_MAP));
    const auto index = node_map != nullptr && proc_map != nullptr
                           ? mca::maps::MapIndex::build(node_map, proc_map)
                           : std::nullopt;
    if (!index)
        return bad("job " + std::string(nspace) +
                   ": PMIX_NODE_MAP and PMIX_PROC_MAP are not both readable maps");
    deregister_job(nspace);  // planned again: the earlier plan's ports go back
    Plan plan;
    plan.endpoints = endpoints;
    std::string nodes_text, ports_text;
    mca::Status st = mca::Status::success();
    for (std::uint32_t n = 0; n < index->num_nodes() && st.ok(); ++n) {
        const std::string &node = index->node_name(n);
        auto where = choose(node, plane);
        if (!where) {
            st = where.status();
            break;
        }
        nodes_text += (n == 0 ? "" : ";") + node + "|" + where.value().interface + "|" +
                      where.value().address;
        if (n > 0) ports_text += ';';
        Pool &pool = pool_of(node);
        std::string runs;
        std::uint32_t run_first = 0, run_last = 0, run_port = 0;
        bool open = false;
        auto close_run = [&] {
            if (!open) return;
            runs += (runs.empty() ? "" : ",") + std::to_string(run_first) + "-" +
                    std::to_string(run_last) + "@" + std::to_string(run_port);
        };
        for (const auto &ranks : index->ranks_on(n)) {
            for (std::uint64_t r = ranks.first; r <= ranks.last && st.ok(); ++r) {
                const std::uint32_t port = take(pool, endpoints);
                if (port == 0) {
                    st = mca::Status(PMIX_ERR_OUT_OF_RESOURCE,
                                     "pnet_tcp: no " + std::to_string(endpoints) +
                                         " free consecutive ports left in " +
                                         std::to_string(settings_.first_port) + "-" +
                                         std::to_string(settings_.last_port) + " of node " + node +
                                         " for rank " + std::to_string(r) + " of job " +
                                         std::string(nspace));
                    break;
                }
                plan.taken.emplace_back(node, port);
                const auto rank = static_cast<std::uint32_t>(r);
                if (open && rank == run_last + 1 &&
                    port == run_port + (rank - run_first) * endpoints) {
                    run_last = rank;
                    continue;
                }
                close_run();
                run_first = run_last = rank;
                run_port = port;
                open = true;
            }
        }
        close_run();
        ports_text += runs;
    }
    if (!st.ok()) {
        for (const auto &[node, first] : plan.taken) give_back(pool_of(node), first, endpoints);
        return st;
    }
    plans_.emplace(std::string(nspace), std::move(plan));
    pmix_value_t v{};
    v.type = PMIX_STRING;
    v.data.string = nodes_text.data();
    launch_info(kKeyNodes, v);
    v.data.string = ports_text.data();
    launch_info(kKeyPorts, v);
    return mca::Status::success();
}

mca::Status TcpNetwork::read_plan(std::string_view nspace, const pmix_info_t &nodes,
                                  const pmix_info_t &ports, Job &job) const {
    const char *nodes_text = string_of(&nodes);
    const char *ports_text = string_of(&ports);
    const auto malformed = [&] { return bad("malformed plan for job " + std::string(nspace)); };
    if (nodes_text == nullptr || ports_text == nullptr) return malformed();
    const auto node_items = split(nodes_text, ';');
    auto port_items = split(ports_text, ';');
    if (port_items.empty() && node_items.size() == 1) port_items.emplace_back();
    if (node_items.size() != port_items.size()) return malformed();
    for (std::size_t n = 0; n < node_items.size(); ++n) {
        const auto fields = split(node_items[n], '|');
        if (fields.size() != 3 || fields[0].empty()) return malformed();
        job.nodes.push_back(Where{fields[0], fields[1], fields[2]});
        for (const std::string &run : split(port_items[n], ',')) {
            const auto dash = run.find('-'), at = run.find('@');
            if (dash == std::string::npos || at == std::string::npos || at < dash)
                return malformed();
            const auto first = number(std::string_view(run).substr(0, dash));
            const auto last = number(std::string_view(run).substr(dash + 1, at - dash - 1));
            const auto port = number(std::string_view(run).substr(at + 1));
            if (!first || !last || !port || *first > *last ||
                *port + std::uint64_t(*last - *first + 1) * job.endpoints > 65536)
                return malformed();
            for (std::uint32_t r = *first; r <= *last; ++r) {
                if (!job.first_port.emplace(r, *port + (r - *first) * job.endpoints).second)
                    return malformed();
                job.node_of[r] = static_cast<std::uint32_t>(n);
                if (r == *last) break;  // r + 1 could wrap at the top
            }
        }
    }
    job.planned = true;
    return mca::Status::success();
}

std::uint32_t TcpNetwork::take(Pool &pool, std::uint32_t count) {
    std::size_t run = 0;
    for (std::size_t i = 0; i < pool.size(); ++i) {
        run = pool[i] ? 0 : run + 1;
        if (run == count) {
            const std::size_t start = i + 1 - count;
            for (std::size_t j = start; j <= i; ++j) pool[j] = true;
            return settings_.first_port + static_cast<std::uint32_t>(start);
        }
    }
    return 0;
}

void TcpNetwork::give_back(Pool &pool, std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t p = first; p < first + count; ++p) pool[p - settings_.first_port] = false;
}

}  // namespace pmixpp::pnet_tcp
