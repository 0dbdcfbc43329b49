#include "server/host_attributes.hpp"

#include <cstring>
#include <utility>

namespace pmixpp::server {

namespace {

// Each upcall and the user-facing function it serves (the standard asks
// that host support be reported in terms of the user-facing APIs).
struct Upcall {
    const char *member;
    const char *function;
    bool (*provided)(const pmix_server_module_t &);
};

#define PMIXPP_UPCALL(member, function)                                                      \
    {                                                                                        \
#member, function, [](const pmix_server_module_t &m) { return m.member != nullptr; } \
    }

const Upcall kUpcalls[] = {
    PMIXPP_UPCALL(client_connected, "PMIx_Init"),
    PMIXPP_UPCALL(client_connected2, "PMIx_Init"),
    PMIXPP_UPCALL(client_finalized, "PMIx_Finalize"),
    PMIXPP_UPCALL(abort, "PMIx_Abort"),
    PMIXPP_UPCALL(fence_nb, "PMIx_Fence"),
    PMIXPP_UPCALL(direct_modex, "PMIx_Get"),
    PMIXPP_UPCALL(publish, "PMIx_Publish"),
    PMIXPP_UPCALL(lookup, "PMIx_Lookup"),
    PMIXPP_UPCALL(unpublish, "PMIx_Unpublish"),
    PMIXPP_UPCALL(spawn, "PMIx_Spawn"),
    PMIXPP_UPCALL(connect, "PMIx_Connect"),
    PMIXPP_UPCALL(disconnect, "PMIx_Disconnect"),
    PMIXPP_UPCALL(register_events, "PMIx_Register_event_handler"),
    PMIXPP_UPCALL(deregister_events, "PMIx_Deregister_event_handler"),
    PMIXPP_UPCALL(notify_event, "PMIx_Notify_event"),
    PMIXPP_UPCALL(query, "PMIx_Query_info"),
    PMIXPP_UPCALL(tool_connected, "PMIx_tool_init"),
    PMIXPP_UPCALL(log, "PMIx_Log"),
    PMIXPP_UPCALL(allocate, "PMIx_Allocation_request"),
    PMIXPP_UPCALL(job_control, "PMIx_Job_control"),
    PMIXPP_UPCALL(monitor, "PMIx_Process_monitor"),
    PMIXPP_UPCALL(get_credential, "PMIx_Get_credential"),
    PMIXPP_UPCALL(validate_credential, "PMIx_Validate_credential"),
    PMIXPP_UPCALL(iof_pull, "PMIx_IOF_pull"),
    PMIXPP_UPCALL(push_stdin, "PMIx_IOF_push"),
    PMIXPP_UPCALL(group, "PMIx_Group_construct"),
    PMIXPP_UPCALL(fabric, "PMIx_Fabric_register"),
};

#undef PMIXPP_UPCALL

const char *function_of(const std::string &upcall) {
    for (const auto &u : kUpcalls) {
        if (upcall == u.member || upcall == u.function) return u.function;
    }
    return nullptr;
}

}  // namespace

pmix_status_t HostAttributes::add(const std::string &upcall,
                                  std::vector<wire::AttributeFacts> attributes) {
    const char *function = function_of(upcall);
    if (function == nullptr) return PMIX_ERR_BAD_PARAM;
    if (!by_function_.emplace(function, std::move(attributes)).second)
        return PMIX_ERR_REPEAT_ATTR_REGISTRATION;
    return PMIX_SUCCESS;
}

void HostAttributes::answer(std::span<const pmix_info_t> qualifiers,
                            const pmix_server_module_t &module,
                            std::vector<pmix_info_t> &entries) const {
    if (auto which = wire::asked_functions(qualifiers, PMIX_HOST_ATTRIBUTES)) {
        std::vector<wire::FunctionAttributes> functions;
        for (const auto &[function, attrs] : by_function_) functions.push_back({function, attrs});
        entries.push_back(wire::level_entry(PMIX_HOST_ATTRIBUTES, functions, *which));
    }
    if (wire::asked_function_list(qualifiers, PMIX_HOST_FUNCTIONS)) {
        std::vector<std::string> names;
        for (const auto &u : kUpcalls) {
            if (!u.provided(module)) continue;
            bool seen = false;
            for (const auto &n : names) seen = seen || n == u.function;
            if (!seen) names.emplace_back(u.function);
        }
        entries.push_back(wire::function_list_entry(PMIX_HOST_FUNCTIONS, names));
    }
}

}  // namespace pmixpp::server
