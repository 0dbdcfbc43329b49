#include "api/attribute_support.hpp"

#include <string_view>
#include <unordered_map>

namespace pmixpp::api {

namespace {

struct Dictionary {
    std::unordered_map<std::string_view, const wire::AttributeFacts *> by_name, by_key;
    std::vector<wire::AttributeFacts> all;
};

const Dictionary &dictionary() {
    static const Dictionary d = [] {
        Dictionary x;
#define PMIXPP_ATTRIBUTE(name, key, type, description) \
    x.all.push_back(wire::AttributeFacts{name, key, type, description});
#include "api/attributes.inc"
#undef PMIXPP_ATTRIBUTE
        for (const auto &a : x.all) {
            x.by_name.emplace(a.name, &a);
            x.by_key.emplace(a.key, &a);
        }
        return x;
    }();
    return d;
}

struct Row {
    const char *function;
    std::vector<const char *> attributes;  // attribute names, as in the headers
};

// What each function really acts on (the code that reads them: client/,
// server/, api/, event/, the plog and psensor bases). Keep in step with the
// code; tests/integration/tool_attrs.c checks that every name is in the
// standard's dictionary and that the answer reaches a tool.
const std::vector<Row> &client_rows() {
    static const std::vector<Row> rows = {
        {"PMIx_Init", {}},
        {"PMIx_Get", {"PMIX_OPTIONAL", "PMIX_IMMEDIATE", "PMIX_TIMEOUT", "PMIX_GET_STATIC_VALUES"}},
        {"PMIx_Fence", {"PMIX_COLLECT_DATA", "PMIX_TIMEOUT"}},
        {"PMIx_Connect", {"PMIX_TIMEOUT"}},
        {"PMIx_Disconnect", {"PMIX_TIMEOUT"}},
        {"PMIx_Register_event_handler",
         {"PMIX_EVENT_HDLR_NAME", "PMIX_EVENT_HDLR_FIRST", "PMIX_EVENT_HDLR_LAST",
          "PMIX_EVENT_HDLR_FIRST_IN_CATEGORY", "PMIX_EVENT_HDLR_LAST_IN_CATEGORY",
          "PMIX_EVENT_HDLR_BEFORE", "PMIX_EVENT_HDLR_AFTER", "PMIX_EVENT_HDLR_PREPEND",
          "PMIX_EVENT_HDLR_APPEND", "PMIX_EVENT_CUSTOM_RANGE", "PMIX_RANGE",
          "PMIX_EVENT_AFFECTED_PROC", "PMIX_EVENT_AFFECTED_PROCS", "PMIX_EVENT_RETURN_OBJECT"}},
        {"PMIx_Notify_event",
         {"PMIX_EVENT_NON_DEFAULT", "PMIX_EVENT_CUSTOM_RANGE", "PMIX_EVENT_AFFECTED_PROC",
          "PMIX_EVENT_AFFECTED_PROCS", "PMIX_EVENT_DO_NOT_CACHE"}},
        {"PMIx_Query_info",
         {"PMIX_QUERY_REFRESH_CACHE", "PMIX_NSPACE", "PMIX_RANK", "PMIX_PROCID",
          "PMIX_SYSTEM_TMPDIR", "PMIX_SERVER_TMPDIR", "PMIX_CLIENT_ATTRIBUTES",
          "PMIX_SERVER_ATTRIBUTES", "PMIX_TOOL_ATTRIBUTES", "PMIX_HOST_ATTRIBUTES",
          "PMIX_CLIENT_FUNCTIONS", "PMIX_SERVER_FUNCTIONS", "PMIX_TOOL_FUNCTIONS",
          "PMIX_HOST_FUNCTIONS"}},
        {"PMIx_Log",
         {"PMIX_LOG_GENERATE_TIMESTAMP", "PMIX_LOG_TIMESTAMP", "PMIX_LOG_ONCE", "PMIX_LOG_SOURCE"}},
        {"PMIx_Process_monitor",
         {"PMIX_MONITOR_HEARTBEAT", "PMIX_MONITOR_FILE", "PMIX_MONITOR_ID",
          "PMIX_MONITOR_APP_CONTROL", "PMIX_RANGE", "PMIX_SEND_HEARTBEAT"}},
        {"PMIx_Group_construct",
         {"PMIX_GROUP_ASSIGN_CONTEXT_ID", "PMIX_GROUP_OPTIONAL", "PMIX_GROUP_NOTIFY_TERMINATION",
          "PMIX_TIMEOUT"}},
    };
    return rows;
}

const std::vector<Row> &tool_rows() {
    static const std::vector<Row> rows = {
        {"PMIx_tool_init",
         {"PMIX_TOOL_NSPACE", "PMIX_TOOL_RANK", "PMIX_TOOL_DO_NOT_CONNECT",
          "PMIX_TOOL_CONNECT_OPTIONAL", "PMIX_TOOL_ATTACHMENT_FILE", "PMIX_SERVER_URI",
          "PMIX_TCP_URI", "PMIX_SERVER_PIDINFO", "PMIX_SERVER_NSPACE", "PMIX_CONNECT_TO_SYSTEM",
          "PMIX_CONNECT_SYSTEM_FIRST", "PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR",
          "PMIX_CONNECT_MAX_RETRIES", "PMIX_CONNECT_RETRY_DELAY", "PMIX_LAUNCHER"}},
        {"PMIx_tool_attach_to_server",
         {"PMIX_PRIMARY_SERVER", "PMIX_TOOL_ATTACHMENT_FILE", "PMIX_SERVER_URI", "PMIX_TCP_URI",
          "PMIX_SERVER_PIDINFO", "PMIX_SERVER_NSPACE", "PMIX_CONNECT_TO_SYSTEM",
          "PMIX_CONNECT_SYSTEM_FIRST", "PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR",
          "PMIX_CONNECT_MAX_RETRIES", "PMIX_CONNECT_RETRY_DELAY"}},
        {"PMIx_tool_get_servers", {}},
        {"PMIx_tool_set_server", {}},
        {"PMIx_tool_disconnect", {}},
        {"PMIx_tool_finalize", {}},
    };
    return rows;
}

const std::vector<Row> &server_rows() {
    static const std::vector<Row> rows = {
        {"PMIx_server_init",
         {"PMIX_SERVER_NSPACE", "PMIX_SERVER_RANK", "PMIX_SERVER_TOOL_SUPPORT",
          "PMIX_SERVER_SYSTEM_SUPPORT", "PMIX_SERVER_SESSION_SUPPORT", "PMIX_SERVER_TMPDIR",
          "PMIX_SYSTEM_TMPDIR", "PMIX_SOCKET_MODE", "PMIX_SERVER_ENABLE_MONITORING",
          "PMIX_SERVER_GATEWAY"}},
        {"PMIx_server_register_nspace", {"PMIX_JOB_SIZE"}},
        {"PMIx_server_setup_application", {"PMIX_SETUP_APP_ENVARS", "PMIX_SETUP_APP_ALL"}},
        {"PMIx_server_setup_local_support", {"PMIX_SET_ENVAR", "PMIX_ADD_ENVAR"}},
        {"PMIx_server_setup_fork", {}},
        {"PMIx_server_dmodex_request", {}},
        {"PMIx_server_IOF_deliver", {}},
        {"PMIx_Register_attributes", {}},
    };
    return rows;
}

std::vector<wire::FunctionAttributes> facts(const std::vector<Row> &rows) {
    std::vector<wire::FunctionAttributes> out;
    for (const auto &r : rows) {
        wire::FunctionAttributes f{r.function, {}};
        for (const char *a : r.attributes) f.attributes.push_back(describe_attribute(a));
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<std::string> names(const std::vector<Row> &rows) {
    std::vector<std::string> out;
    for (const auto &r : rows) out.emplace_back(r.function);
    return out;
}

}  // namespace

wire::AttributeFacts describe_attribute(const std::string &name_or_key) {
    const auto &d = dictionary();
    if (auto it = d.by_name.find(name_or_key); it != d.by_name.end()) return *it->second;
    if (auto it = d.by_key.find(name_or_key); it != d.by_key.end()) return *it->second;
    return wire::AttributeFacts{name_or_key, name_or_key, PMIX_UNDEF, ""};
}

bool asks_host_level(std::span<const pmix_info_t> qualifiers) {
    return wire::asked_functions(qualifiers, PMIX_HOST_ATTRIBUTES).has_value() ||
           wire::asked_function_list(qualifiers, PMIX_HOST_FUNCTIONS);
}

void library_attribute_support(std::span<const pmix_info_t> qualifiers,
                               std::vector<pmix_info_t> &entries) {
    struct Level {
        const char *attributes;
        const char *functions;
        const std::vector<Row> &rows;
    };
    const Level levels[] = {{PMIX_CLIENT_ATTRIBUTES, PMIX_CLIENT_FUNCTIONS, client_rows()},
                            {PMIX_SERVER_ATTRIBUTES, PMIX_SERVER_FUNCTIONS, server_rows()},
                            {PMIX_TOOL_ATTRIBUTES, PMIX_TOOL_FUNCTIONS, tool_rows()}};
    for (const auto &l : levels) {
        if (auto which = wire::asked_functions(qualifiers, l.attributes)) {
            entries.push_back(wire::level_entry(l.attributes, facts(l.rows), *which));
        }
        if (wire::asked_function_list(qualifiers, l.functions)) {
            entries.push_back(wire::function_list_entry(l.functions, names(l.rows)));
        }
    }
}

}  // namespace pmixpp::api
