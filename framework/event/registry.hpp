// The event handlers of one process and their order (framework/event/README.md).
//
// HandlerRegistry keeps every registration in its category (single code,
// several codes, default) in precedence order, plus at most one handler
// declared FIRST and one declared LAST of the whole chain. chain_for() lists,
// in calling order, the active handlers an incoming event reaches.
//
// Threads: not thread-safe; the process's registry (ProcessEvents) is used
// on the progress thread only.
#pragma once

#include <pmix_common.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "event/event.hpp"
#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::events {

enum class Category : std::uint8_t { single_code = 0, multi_code = 1, fallback = 2 };

enum class Placement : std::uint8_t {
    prepend,            // front of its category (the default: RFC 0001)
    append,             // end of its category
    first,              // PMIX_EVENT_HDLR_FIRST: before every handler
    last,               // PMIX_EVENT_HDLR_LAST: after every handler
    first_in_category,  // PMIX_EVENT_HDLR_FIRST_IN_CATEGORY
    last_in_category,   // PMIX_EVENT_HDLR_LAST_IN_CATEGORY
    before,             // PMIX_EVENT_HDLR_BEFORE <name>
    after,              // PMIX_EVENT_HDLR_AFTER <name>
};

// What a registration asks for, read from its codes and info.
struct RegistrationSpec {
    std::vector<pmix_status_t> codes;  // empty: a default handler
    std::string name;                  // PMIX_EVENT_HDLR_NAME; empty: unnamed
    Placement placement = Placement::prepend;
    std::string relative_to;  // the handler named by BEFORE / AFTER
    // PMIX_RANGE: accept only events whose source lies in this range.
    std::optional<pmix_data_range_t> source_range;
    std::vector<pmix_proc_t> source_procs;  // PMIX_EVENT_CUSTOM_RANGE, with PMIX_RANGE_CUSTOM
    std::vector<pmix_proc_t> affected;      // PMIX_EVENT_AFFECTED_PROC(S)
    bool job_events = true;                 // PMIX_EVENT_JOB_LEVEL / _ENVIRO_LEVEL
    bool environment_events = true;
    void *return_object = nullptr;  // PMIX_EVENT_RETURN_OBJECT

    Category category() const noexcept {
        return codes.empty()       ? Category::fallback
               : codes.size() == 1 ? Category::single_code
                                   : Category::multi_code;
    }
    // Reads the registration attributes. Errors: PMIX_ERR_BAD_PARAM for
    // contradictory placements or a BEFORE/AFTER/NAME that is not a string.
    static mca::Result<RegistrationSpec> parse(std::span<const pmix_status_t> codes,
                                               std::span<const pmix_info_t> info);
    // The attributes the server needs to match events for a client (codes,
    // range, affected procs, levels), as info for the register message.
    std::vector<pmix_info_t> filter_info() const;  // caller destructs the values
};

// Whether `spec` wants `event` in a process identified as `self`: its codes,
// the event's PMIX_EVENT_NON_DEFAULT, its source range, affected procs and
// job/environment level.
bool matches(const RegistrationSpec &spec, const Event &event, const pmix_proc_t &self);

struct Handler {
    std::size_t id = 0;
    RegistrationSpec spec;
    pmix_notification_fn_t fn = nullptr;
    // The name given to the results entry of this handler: its name, or
    // "pmixpp.evhdlr.<id>" for an unnamed one (docs/events.md).
    std::string result_key;
};

class HandlerRegistry {
  public:
    // Adds a registration (inactive until activate()). Errors, all
    // PMIX_ERR_EVENT_REGISTRATION with a message: duplicate name; a second
    // FIRST or LAST (whole chain) or FIRST/LAST_IN_CATEGORY (per category);
    // BEFORE/AFTER naming an unknown handler, one of another category, or
    // one that may not be preceded/followed (FIRST, FIRST_IN_CATEGORY /
    // LAST, LAST_IN_CATEGORY).
    mca::Result<std::size_t> add(RegistrationSpec spec, pmix_notification_fn_t fn);
    void activate(std::size_t id);
    // False when `id` is unknown.
    bool remove(std::size_t id);
    bool contains(std::size_t id) const { return handlers_.count(id) != 0; }
    bool active(std::size_t id) const;
    std::shared_ptr<const Handler> find(std::size_t id) const;
    std::size_t size() const noexcept { return handlers_.size(); }

    // The active handlers `event` reaches, in calling order: FIRST, single
    // code, several codes, default, LAST.
    std::vector<std::shared_ptr<const Handler>> chain_for(const Event &event,
                                                          const pmix_proc_t &self) const {
        std::vector<std::shared_ptr<const Handler>> out;
        chain_for(event, self, out);
        return out;
    }
    // The same, appended to `out` (a vector the caller reuses).
    void chain_for(const Event &event, const pmix_proc_t &self,
                   std::vector<std::shared_ptr<const Handler>> &out) const;
    // Every handler's id in calling order, ignoring codes (for tests and logs).
    std::vector<std::size_t> order() const;

  private:
    struct Entry {
        std::shared_ptr<Handler> handler;
        bool active = false;
    };
    mca::Status place(std::size_t id, const RegistrationSpec &spec);
    std::optional<std::size_t> find_by_name(const std::string &name) const;

    std::map<std::size_t, Entry> handlers_;
    std::array<std::vector<std::size_t>, 3> categories_;  // by Category, in order
    std::optional<std::size_t> first_, last_;
    std::array<std::optional<std::size_t>, 3> first_in_category_, last_in_category_;
    std::size_t next_id_ = 0;
};

}  // namespace pmixpp::events
