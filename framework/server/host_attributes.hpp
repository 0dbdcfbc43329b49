// HostAttributes: what the host said its upcalls support
// (PMIx_Register_attributes), reported per user-facing function for
// PMIX_QUERY_ATTRIBUTE_SUPPORT with PMIX_HOST_ATTRIBUTES, and the host's
// functions (the upcalls it provides) for PMIX_HOST_FUNCTIONS (docs/tools.md,
// "Attribute support"). Progress thread only.
#pragma once

#include <pmix_server.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include "wire/attribute_support.hpp"

namespace pmixpp::server {

class HostAttributes {
  public:
    // `upcall`: a pmix_server_module_t member name ("spawn") or the
    // user-facing function it serves ("PMIx_Spawn"). PMIX_ERR_BAD_PARAM: no
    // such upcall; PMIX_ERR_REPEAT_ATTR_REGISTRATION: that function's host
    // attributes were registered before (the standard's rule, per level).
    pmix_status_t add(const std::string &upcall, std::vector<wire::AttributeFacts> attributes);
    // Adds PMIX_HOST_ATTRIBUTES / PMIX_HOST_FUNCTIONS entries the qualifiers ask for.
    void answer(std::span<const pmix_info_t> qualifiers, const pmix_server_module_t &module,
                std::vector<pmix_info_t> &entries) const;
    void clear() { by_function_.clear(); }

  private:
    std::map<std::string, std::vector<wire::AttributeFacts>> by_function_;  // user-facing name
};

}  // namespace pmixpp::server
