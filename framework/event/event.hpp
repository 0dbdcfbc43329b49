// One event as the library carries it: the notifier's status, source, range
// and info, plus the attributes read out of the info that routing and
// matching need (framework/event/README.md).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "pmixpp/mca/info.hpp"
#include "wire/message.hpp"

namespace pmixpp::events {

struct Event {
    pmix_status_t status = PMIX_SUCCESS;
    // The generator; the SMS (host or server library) is an empty nspace with
    // rank PMIX_RANK_UNDEF, as the standard says for pmix_notification_fn_t.
    pmix_proc_t source{};
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    std::shared_ptr<const wire::InfoArray> info;

    // Read from `info` by derive().
    std::vector<pmix_proc_t> custom_range;  // PMIX_EVENT_CUSTOM_RANGE
    std::vector<pmix_proc_t> affected;      // PMIX_EVENT_AFFECTED_PROC(S)
    bool non_default = false;               // PMIX_EVENT_NON_DEFAULT
    bool do_not_cache = false;              // PMIX_EVENT_DO_NOT_CACHE

    // Builds an event from a notifier's arguments (deep copy of `info`).
    // A NULL source means the SMS.
    static Event make(pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                      const pmix_info_t *info, std::size_t ninfo);
    void derive();

    bool from_sms() const noexcept { return source.nspace[0] == '\0'; }
    // Environment event: from the SMS and aimed at no process or job.
    bool is_environment() const noexcept {
        return from_sms() && affected.empty() && custom_range.empty();
    }
    std::span<const pmix_info_t> info_span() const {
        return info ? info->span() : std::span<const pmix_info_t>{};
    }

    // The payload of an event message: i32 status, proc source, u8 range, infos.
    std::vector<std::uint8_t> encode() const;
    void write(wire::BodyWriter &w) const;
    // Reads the payload; nullopt if malformed.
    static std::optional<Event> read(wire::BodyReader &r);
};

// The SMS as an event source.
pmix_proc_t sms_source() noexcept;
bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) noexcept;
// `pattern` names `proc`: same nspace, and same rank or a wildcard rank.
bool proc_matches(const pmix_proc_t &pattern, const pmix_proc_t &proc) noexcept;
using mca::info_true;  // pmixpp/mca/info.hpp
// The procs of a PMIX_PROC value or a PMIX_DATA_ARRAY of PMIX_PROC.
std::vector<pmix_proc_t> procs_of(const pmix_value_t &value);

}  // namespace pmixpp::events
