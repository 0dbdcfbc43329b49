// Inventory: PMIx_server_collect_inventory and PMIx_server_deliver_inventory
// (docs/network.md, "Inventory"). It owns the inventory other nodes' hosts
// delivered, per node name; the pnet modules (framework/pnet/README.md) add
// their part to a collection and get every delivery. No client request and
// no departure concern it. Progress thread only.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>

#include "mca/select.hpp"
#include "pnet/pnet_base.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

class Inventory final {
  public:
    // `networks` opens (once) and gives the pnet modules; an error fails
    // the calls that need them.
    using NetworksFn = std::function<mca::Result<pnet_base::Networks *>()>;
    explicit Inventory(NetworksFn networks) : networks_(std::move(networks)) {}

    // This node's inventory: PMIX_HOSTNAME (the directives' PMIX_HOSTNAME,
    // else gethostname), PMIX_TOPOLOGY_SIGNATURE, PMIX_HWLOC_XML_V2 (the
    // topology with its I/O devices), then what each pnet module emits
    // (pnet_tcp: PMIX_FABRIC_DEVICES). A topology that cannot be loaded
    // leaves its two keys out; a module's error fails the call.
    mca::Result<wire::InfoArray> collect(std::span<const pmix_info_t> directives);

    // Keeps `inventory` (one node's, as collect() made it) under its
    // PMIX_HOSTNAME, replacing an earlier delivery for that node, and hands
    // it to every pnet module. BAD_PARAM without a PMIX_HOSTNAME string.
    mca::Status deliver(std::span<const pmix_info_t> inventory,
                        std::span<const pmix_info_t> directives);

    // What was delivered, per node name.
    const std::map<std::string, wire::InfoArray, std::less<>> &nodes() const noexcept {
        return nodes_;
    }

  private:
    NetworksFn networks_;
    std::map<std::string, wire::InfoArray, std::less<>> nodes_;
};

}  // namespace pmixpp::server
