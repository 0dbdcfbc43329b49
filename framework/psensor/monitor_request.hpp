// What a PMIx_Process_monitor request must contain, checked the same way by
// the client (before anything is sent) and by the server (a request from any
// peer): framework/psensor/README.md, "Requests".
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::psensor_base {

enum class MonitorKind : std::uint8_t {
    heartbeat,       // PMIX_MONITOR_HEARTBEAT: watch the requestor's heartbeats
    send_heartbeat,  // PMIX_SEND_HEARTBEAT: one heartbeat
    file,            // PMIX_MONITOR_FILE (4.2) or PMIX_MONITOR_FILE_CHANGES (standard)
    cancel,          // PMIX_MONITOR_CANCEL: stop one monitor (an id) or all (none)
    resource_usage,  // PMIX_MONITOR_{PROC,NODE,DISK,NETWORK}_RESOURCE_USAGE: the host's
};

const char *to_string(MonitorKind kind) noexcept;

// The kind of `monitor`, or PMIX_ERR_BAD_PARAM with a message when the
// request cannot be served by anyone: no monitor (NULL or an empty key), a
// key that is no monitor attribute, a heartbeat monitor without a positive
// PMIX_MONITOR_HEARTBEAT_TIME, a file monitor without a file, a directive
// PMIX_MONITOR_*_DROPS / _CHECK_TIME that is not a non-negative integer.
mca::Result<MonitorKind> check_request(const pmix_info_t *monitor,
                                       std::span<const pmix_info_t> directives);

// The id a PMIX_MONITOR_CANCEL names: empty for "all of the requestor's"
// (no value, a NULL or empty string).
std::string cancel_id(const pmix_info_t &monitor);

// The request's PMIX_MONITOR_ID: nullopt when absent or empty.
std::optional<std::string> monitor_id(std::span<const pmix_info_t> directives);

}  // namespace pmixpp::psensor_base
