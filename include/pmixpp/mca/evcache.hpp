// Framework interface "evcache": the server's cache of events for clients and
// handlers that arrive after the event (see framework/evcache/README.md).
//
// One module per server: the highest-priority usable one. Two kinds of event
// are cached:
// - job events target the processes of one job: held until every local client
//   of that job that had not received the event when it was cached has
//   received it, then kept like environment events;
// - environment events (no job): kept until the module's capacity pushes them
//   out, oldest first.
// Every cached event is replayed to every late registration (the core decides
// which it matches), so that a handler a client registers later still gets
// the events that client had through earlier handlers (Chap_API_Event).
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmixpp::mca::evcache {

inline constexpr const char *kFrameworkName = "evcache";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 0;

// Assigned by cache(): increasing in arrival order, never 0.
using EventId = std::uint64_t;

// One event as the core hands it to the cache. The module owns it from
// cache() on and treats everything but `job` and `awaiting` as opaque.
struct CachedEvent {
    EventId id = 0;  // set by cache(); ignored on input
    pmix_status_t code = PMIX_SUCCESS;
    pmix_proc_t source{};
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    // The job the event targets (nspace); empty for an environment event.
    std::string job;
    // Job events: the local clients of `job` that still must receive it. While
    // it is not empty the event is not pushed out except by a flood. Ignored
    // for environment events.
    std::vector<pmix_proc_t> awaiting;
    // The notification as the core sends it to a client (encoded once, by the
    // core's codec).
    std::vector<std::byte> message;

    bool is_job_event() const noexcept { return !job.empty(); }
};

// Why an event left the cache other than by delivery.
enum class EvictionReason {
    // The cache was full: the oldest event nobody awaited made room.
    kCapacity,
    // The cache was full of job events: the oldest job event made room
    // before every awaiting client had it (an event "flood"). Worth a warning.
    kFlood,
};

// Told about every eviction, synchronously, on the progress thread, before the
// event is destroyed. Must not call back into the module.
using EvictionListener = std::function<void(const CachedEvent &event, EvictionReason reason)>;

// The module interface: what a component's create_module() returns.
// Every method runs on the progress thread.
class PMIXPP_SDK_EXPORT Module {
  public:
    virtual ~Module() = default;

    // Cache `event`; returns the id it got. When the cache is full the module
    // evicts by its policy (the ring: the oldest event nobody awaits first,
    // then the oldest awaited job event) and reports each eviction to the
    // listener.
    // Errors: PMIX_ERR_OUT_OF_RESOURCE (capacity 0: nothing is cached).
    virtual Result<EventId> cache(CachedEvent event) = 0;

    // A registration from `peer` arrived (a client connected or registered a
    // handler): visit every cached event, oldest first. `deliver` returns true
    // if the core sent the event to `peer`; for a job event `peer` awaits
    // that removes `peer` from `awaiting`. `deliver` must not call back into
    // the module.
    virtual void replay(const pmix_proc_t &peer,
                        const std::function<bool(const CachedEvent &event)> &deliver) = 0;

    // `peer` received event `id` outside replay() (it was connected when the
    // event came). Errors: PMIX_ERR_NOT_FOUND (no such event in the cache,
    // or `peer` was not awaiting it).
    virtual Status mark_delivered(EventId id, const pmix_proc_t &peer) = 0;

    // Job `nspace` was deregistered: drop its job events and its clients from
    // every `awaiting` list. Not reported as evictions.
    virtual void forget_job(std::string_view nspace) = 0;

    // How many events the cache holds at most, and holds now.
    virtual std::size_t capacity() const = 0;
    virtual std::size_t size() const = 0;

    // Set (or clear, with an empty function) the eviction listener. Default:
    // none; evictions are then silent.
    void set_eviction_listener(EvictionListener listener) {
        eviction_listener_ = std::move(listener);
    }

  protected:
    // For implementations: report one eviction. No-op without a listener.
    void report_eviction(const CachedEvent &event, EvictionReason reason) const {
        if (eviction_listener_) eviction_listener_(event, reason);
    }

  private:
    EvictionListener eviction_listener_;
};

}  // namespace pmixpp::mca::evcache
