// The shape of an attribute-support answer (PMIX_QUERY_ATTRIBUTE_SUPPORT;
// docs/tools.md, "Attribute support"), shared by the library's own levels
// (api/attribute_support.cpp: client, server, tool) and the host's
// (server/query.cpp, what PMIx_Register_attributes registered).
//
// One level's entry: key = the level's qualifier (PMIX_CLIENT_ATTRIBUTES,
// ...), value = DATA_ARRAY of INFO, one per function: key = the user-facing
// function name ("PMIx_Get"), value = DATA_ARRAY of REGATTR. A *_FUNCTIONS
// entry: key = that qualifier, value = STRING, comma list of the functions.
#pragma once

#include <pmix_common.h>

#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace pmixpp::wire {

struct AttributeFacts {
    std::string name;  // "PMIX_TIMEOUT" (or the host's own name)
    std::string key;   // "pmix.timeout"
    pmix_data_type_t type = PMIX_UNDEF;
    std::string description;
};

struct FunctionAttributes {
    std::string function;  // user-facing: "PMIx_Get"
    std::vector<AttributeFacts> attributes;
};

// Which functions a level's qualifier asks for: nullopt = not asked; an
// empty set = all (value true or "all"); else the names of a STRING comma
// list (false: not asked).
std::optional<std::set<std::string>> asked_functions(std::span<const pmix_info_t> qualifiers,
                                                     const char *level_key);
// Whether the qualifier `functions_key` (a *_FUNCTIONS key) is present and true.
bool asked_function_list(std::span<const pmix_info_t> qualifiers, const char *functions_key);

// The level entry for `functions` restricted to `which` (empty: all).
pmix_info_t level_entry(const char *level_key, const std::vector<FunctionAttributes> &functions,
                        const std::set<std::string> &which);
// The *_FUNCTIONS entry: STRING, comma list of `names`.
pmix_info_t function_list_entry(const char *functions_key, const std::vector<std::string> &names);

}  // namespace pmixpp::wire
