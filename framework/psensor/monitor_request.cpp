#include "psensor/monitor_request.hpp"

#include <cstring>
#include <string_view>

#include "pmixpp/mca/info.hpp"
#include "pmixpp/mca/psensor.hpp"

namespace pmixpp::psensor_base {

namespace {

using mca::Status;

// The monitor kinds PMIx defines that only a host can serve (resource usage
// reports, standard v5). Spelled out: PMIx 4.2's headers do not define them.
constexpr const char *kResourceUsageKeys[] = {"pmix.monitor.presuse", "pmix.monitor.ndresuse",
                                              "pmix.monitor.dkresuse", "pmix.monitor.netresuse"};

Status bad(std::string message) {
    return Status(PMIX_ERR_BAD_PARAM, "PMIx_Process_monitor: " + std::move(message));
}

// A directive that must be a non-negative integer when present.
bool bad_count(std::span<const pmix_info_t> directives, const char *key, std::string *why) {
    const pmix_info_t *i = mca::find_info(directives, key);
    if (i == nullptr || mca::as_u32(i->value)) return false;
    *why = std::string(key) + " must be a non-negative integer (seconds or a count)";
    return true;
}

bool has_string(const pmix_value_t &v) {
    return v.type == PMIX_STRING && v.data.string != nullptr && v.data.string[0] != '\0';
}

// PMIX_MONITOR_TARGET_FILES: one non-empty string, or an array of strings
// with at least one and none empty.
bool has_target_files(std::span<const pmix_info_t> directives) {
    const pmix_info_t *i = mca::find_info(directives, mca::psensor::kMonitorTargetFiles);
    if (i == nullptr) return false;
    if (has_string(i->value)) return true;
    if (i->value.type != PMIX_DATA_ARRAY || i->value.data.darray == nullptr) return false;
    const pmix_data_array_t &a = *i->value.data.darray;
    if (a.type != PMIX_STRING || a.size == 0 || a.array == nullptr) return false;
    auto **names = static_cast<char **>(a.array);
    for (std::size_t n = 0; n < a.size; ++n) {
        if (names[n] == nullptr || names[n][0] == '\0') return false;
    }
    return true;
}

}  // namespace

const char *to_string(MonitorKind kind) noexcept {
    switch (kind) {
        case MonitorKind::heartbeat:
            return "heartbeat";
        case MonitorKind::send_heartbeat:
            return "send heartbeat";
        case MonitorKind::file:
            return "file";
        case MonitorKind::cancel:
            return "cancel";
        case MonitorKind::resource_usage:
            return "resource usage";
    }
    return "unknown";
}

mca::Result<MonitorKind> check_request(const pmix_info_t *monitor,
                                       std::span<const pmix_info_t> directives) {
    if (monitor == nullptr) return bad("no monitor given (NULL)");
    const std::string_view key = mca::info_key(*monitor);
    if (key.empty()) return bad("the monitor has no key (a constructed but unloaded pmix_info_t)");
    std::string why;
    if (bad_count(directives, PMIX_MONITOR_HEARTBEAT_DROPS, &why) ||
        bad_count(directives, PMIX_MONITOR_FILE_DROPS, &why) ||
        bad_count(directives, PMIX_MONITOR_FILE_CHECK_TIME, &why)) {
        return bad(why);
    }
    if (key == PMIX_SEND_HEARTBEAT) return MonitorKind::send_heartbeat;
    if (key == PMIX_MONITOR_CANCEL) {
        if (monitor->value.type != PMIX_STRING && monitor->value.type != PMIX_UNDEF &&
            monitor->value.type != PMIX_BOOL) {
            return bad("PMIX_MONITOR_CANCEL takes the id to cancel (a string) or none (all)");
        }
        return MonitorKind::cancel;
    }
    if (key == PMIX_MONITOR_HEARTBEAT) {
        const pmix_info_t *t = mca::find_info(directives, PMIX_MONITOR_HEARTBEAT_TIME);
        if (t == nullptr) {
            return bad("a heartbeat monitor needs PMIX_MONITOR_HEARTBEAT_TIME (seconds)");
        }
        auto seconds = mca::as_u32(t->value);
        if (!seconds || *seconds == 0) {
            return bad("PMIX_MONITOR_HEARTBEAT_TIME must be a positive number of seconds");
        }
        return MonitorKind::heartbeat;
    }
    if (key == PMIX_MONITOR_FILE) {
        if (!has_string(monitor->value)) {
            return bad("PMIX_MONITOR_FILE needs the file's name (a non-empty string)");
        }
        return MonitorKind::file;
    }
    if (key == mca::psensor::kMonitorFileChanges) {
        if (!has_target_files(directives)) {
            return bad(
                "PMIX_MONITOR_FILE_CHANGES needs the files in PMIX_MONITOR_TARGET_FILES "
                "(a non-empty string or array of strings)");
        }
        return MonitorKind::file;
    }
    for (const char *k : kResourceUsageKeys) {
        if (key == k) return MonitorKind::resource_usage;
    }
    return bad("'" + std::string(key) +
               "' is not a monitor (PMIX_MONITOR_HEARTBEAT, PMIX_SEND_HEARTBEAT, "
               "PMIX_MONITOR_FILE, PMIX_MONITOR_FILE_CHANGES, PMIX_MONITOR_CANCEL, or a "
               "PMIX_MONITOR_*_RESOURCE_USAGE)");
}

std::string cancel_id(const pmix_info_t &monitor) {
    if (has_string(monitor.value)) return monitor.value.data.string;
    return {};
}

std::optional<std::string> monitor_id(std::span<const pmix_info_t> directives) {
    return mca::info_string(directives, PMIX_MONITOR_ID);
}

}  // namespace pmixpp::psensor_base
