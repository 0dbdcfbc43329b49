// ProcessEvents: the event handlers of this process (one registry shared by
// the client and server faces) and the delivery of an event to them
// (framework/event/README.md).
//
// Threads: every member runs on the progress thread.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "event/event.hpp"
#include "event/registry.hpp"

namespace pmixpp::events {

class ProcessEvents {
  public:
    static ProcessEvents &instance();

    HandlerRegistry &registry() noexcept { return registry_; }

    // Who this process is, for PMIX_RANGE_PROC_LOCAL filters: set by the
    // face that initializes (client: its proc; server process: the server's).
    void set_self(const pmix_proc_t &self) noexcept { self_ = self; }
    const pmix_proc_t &self() const noexcept { return self_; }

    // Runs the chain of `event` among the active handlers it matches; with a
    // `target`, only that registration (a cached event replayed to a late
    // registrant). Nothing happens when no handler matches. `results`, when
    // given, gets the chain's consolidated results once it ended (at once,
    // empty, when no handler matches).
    void deliver(std::shared_ptr<const Event> event, std::optional<std::size_t> target = {},
                 std::function<void(std::span<const pmix_info_t>)> results = {});

  private:
    ProcessEvents() = default;
    void run(std::vector<std::shared_ptr<const Handler>> chain, std::shared_ptr<const Event> event,
             std::function<void(std::span<const pmix_info_t>)> results);
    HandlerRegistry registry_;
    pmix_proc_t self_{};
    // deliver(): the matching handlers, kept between events for its storage
    // (emptied before any handler runs, so a delivery from a handler finds
    // it empty).
    std::vector<std::shared_ptr<const Handler>> scratch_;
};

}  // namespace pmixpp::events
