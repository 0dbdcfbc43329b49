// Fabrics: PMIx_Fabric_register / _update / _deregister in a server process
// (docs/network.md, "Fabric"). A registered fabric is made of the devices of
// the node inventory (this node's, collected anew, and every node's the host
// delivered; Inventory), filtered by the caller's directives, with a cost
// matrix. It owns every registered fabric's record (its directives and cost
// matrix); no client request and no departure concern it. Progress thread
// only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "server/inventory.hpp"

namespace pmixpp::server {

class Fabrics final {
  public:
    explicit Fabrics(Inventory &inventory) : inventory_(inventory) {}
    ~Fabrics();
    Fabrics(const Fabrics &) = delete;
    Fabrics &operator=(const Fabrics &) = delete;

    // Fills `fabric` (index, info, module) from the devices that match
    // `directives` (PMIX_FABRIC_IDENTIFIER, PMIX_FABRIC_VENDOR,
    // PMIX_FABRIC_PLANE). NOT_FOUND when no device matches; BAD_PARAM for a
    // directive that is not a string.
    pmix_status_t register_fabric(pmix_fabric_t &fabric, std::span<const pmix_info_t> directives);
    // Refills a registered `fabric` from the inventory as it is now.
    // BAD_PARAM when `fabric` is not one this server registered.
    pmix_status_t update(pmix_fabric_t &fabric);
    // Frees what register_fabric filled in and forgets the fabric (BAD_PARAM
    // when unknown); the fields are zeroed, `name` is the caller's.
    pmix_status_t deregister(pmix_fabric_t &fabric);

  private:
    struct Record {
        std::size_t index = 0;
        wire::InfoArray directives;
        std::vector<std::uint16_t> costs;  // n x n, row-major: PMIX_FABRIC_COST_MATRIX
    };
    Record *find(const pmix_fabric_t &fabric) const;
    pmix_status_t fill(pmix_fabric_t &fabric, Record &record);

    Inventory &inventory_;
    std::map<std::size_t, std::unique_ptr<Record>> records_;
    std::size_t next_index_ = 0;
};

}  // namespace pmixpp::server
