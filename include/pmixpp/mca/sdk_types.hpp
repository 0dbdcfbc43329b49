// Vocabulary shared by the framework interfaces of the component SDK
// (ptl.hpp, gds.hpp, psensor.hpp, plog.hpp, pnet.hpp, evcache.hpp).
//
// Components are C++ built with the same compiler and SDK as the core, so these
// types cross the core/component boundary freely. Only the component
// descriptor (component.h) must stay C POD. Interfaces are PMIXPP_SDK_EXPORT
// (export.h) so that their typeinfo and vtables are one object across libpmix
// and the component DSOs, which are all built with hidden visibility.
//
// Status/Result carry PMIx statuses of framework operations; the component
// model's own failures (loading, query, selection) are McaStatus/McaResult
// (status.hpp).
#pragma once

#include <pmix_common.h>

#include "pmixpp/mca/export.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace pmixpp::mca {

// "Not mine": a module returns it when it is offered work it does not serve
// (a monitor request of another kind, an entry for another channel), so the
// framework base offers the work to the next module. It is never returned
// through the C API: the base turns "nobody took it" into
// PMIX_ERR_NOT_SUPPORTED. The value lies in the range PMIx reserves for itself
// (between PMIX_SUCCESS and PMIX_EXTERNAL_ERR_BASE) and no public PMIx 4.2
// constant uses it.
inline constexpr pmix_status_t kStatusDeclined = -2900;

// The outcome of an operation: a PMIx status and, on failure, a message a user
// can act on ("ptl_usock: cannot bind /tmp/pmix-1000/s: Permission denied").
// A default-constructed Status is success.
class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(pmix_status_t code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status success() { return Status(); }

    bool ok() const noexcept { return code_ == PMIX_SUCCESS; }
    pmix_status_t code() const noexcept { return code_; }
    const std::string &message() const noexcept { return message_; }

  private:
    pmix_status_t code_ = PMIX_SUCCESS;
    std::string message_;
};

// A value of type T or the Status that explains why there is none.
// Building a Result from a success Status is a programming error; it is turned
// into a PMIX_ERROR status so the caller never sees "ok without a value".
template <class T>
class [[nodiscard]] Result {
  public:
    // From anything T is constructible from, so that a module can write
    // `return std::make_unique<MyConnection>(fd);` for a
    // Result<std::unique_ptr<Connection>>.
    // clang-format off
    template <class U = T>
        requires(std::is_constructible_v<T, U &&> &&
                 !std::is_same_v<std::remove_cvref_t<U>, Status> &&
                 !std::is_same_v<std::remove_cvref_t<U>, Result>)
    Result(U &&value) : state_(std::in_place_index<0>, std::forward<U>(value)) {}
    // clang-format on
    Result(Status error) : state_(std::move(error)) {
        if (std::get<Status>(state_).ok()) {
            state_ = Status(PMIX_ERROR, "internal error: Result built from a success status");
        }
    }

    bool ok() const noexcept { return std::holds_alternative<T>(state_); }
    explicit operator bool() const noexcept { return ok(); }

    // Precondition: ok(). Otherwise std::bad_variant_access is thrown.
    T &value() & { return std::get<T>(state_); }
    const T &value() const & { return std::get<T>(state_); }
    T &&value() && { return std::get<T>(std::move(state_)); }

    // The failure, or a success Status when ok().
    Status status() const { return ok() ? Status::success() : std::get<Status>(state_); }

  private:
    std::variant<T, Status> state_;
};

// Environment variables to add to a child's environment (setup_fork). The
// core merges what every module set into the host's char** env, module values
// replacing same-named variables already there.
using Environment = std::map<std::string, std::string, std::less<>>;

// Receives key/value pairs a module produces (launch info, inventory, the
// keys of a process). The value is borrowed: it is valid only during the call,
// and the receiver deep-copies whatever it keeps. The sink runs on the thread
// that called the module, before the module's method returns.
using KeyValueSink = std::function<void(std::string_view key, const pmix_value_t &value)>;

// Timers on the core's progress thread, for modules that must check something
// periodically (psensor). Provided by the core; it outlives every module that
// receives it. Callbacks run on the progress thread and must not block.
class PMIXPP_SDK_EXPORT ProgressTimers {
  public:
    using TimerId = std::uint64_t;

    virtual ~ProgressTimers() = default;

    // Run `tick` every `period` (> 0) until cancel(). Returns an id never 0.
    virtual TimerId every(std::chrono::milliseconds period, std::function<void()> tick) = 0;
    // Stop a timer; once it returns, `tick` will not run again. Unknown ids
    // (already cancelled, or 0) are ignored. May be called from inside `tick`.
    virtual void cancel(TimerId id) = 0;
};

}  // namespace pmixpp::mca
