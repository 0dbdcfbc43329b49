// The attributes this library acts on, per level and function, for
// PMIX_QUERY_ATTRIBUTE_SUPPORT (docs/tools.md, "Attribute support"), and the
// standard's dictionary for PMIx_Register_attributes.
#pragma once

#include <pmix_common.h>

#include <span>
#include <string>
#include <vector>

#include "wire/attribute_support.hpp"

namespace pmixpp::api {

// Appends the entries of the library's levels the qualifiers ask for
// (PMIX_CLIENT_/SERVER_/TOOL_ATTRIBUTES and _FUNCTIONS); the host's level is
// the server's to answer. Nothing appended: no library level was asked.
void library_attribute_support(std::span<const pmix_info_t> qualifiers,
                               std::vector<pmix_info_t> &entries);
// Whether the qualifiers ask for the host's level (PMIX_HOST_ATTRIBUTES / _FUNCTIONS).
bool asks_host_level(std::span<const pmix_info_t> qualifiers);
// What the standard says of an attribute given by name ("PMIX_TIMEOUT") or
// key ("pmix.timeout"); one the standard does not define (the host's own)
// keeps the given string as both, type PMIX_UNDEF.
wire::AttributeFacts describe_attribute(const std::string &name_or_key);

}  // namespace pmixpp::api
