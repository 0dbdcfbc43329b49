// The progress thread: one per process, one libevent event_base (DESIGN.md §4).
//
// Started by the first acquire() (the first init of any face) and stopped by
// the last release() (the last finalize). It owns every socket, timer and
// piece of mutable PMIx state.
//
// Two kinds of work run on it:
//  - libevent callbacks (socket readable/writable, timers, the wake-up event):
//    they only move bytes and queue work; they never call user or host code;
//  - posted closures (post()): everything else, FIFO, run *outside* libevent's
//    dispatch. That is what makes a blocking PMIx call made from a callback on
//    the progress thread safe: its wait pumps the loop (pump_once()) instead
//    of sleeping, which libevent allows only outside dispatch.
//
// Thread-shifting: any thread (a host completion callback, a user thread,
// the progress thread itself) calls post(); the closure runs later on the
// progress thread, never inline in post().
#pragma once

#include <event2/event.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <pthread.h>

#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::runtime {

class ProgressEngine {
  public:
    using Task = std::function<void()>;
    using TimerId = std::uint64_t;

    // The process's engine (never destroyed: callbacks may run during exit).
    static ProgressEngine &instance();

    // First acquire starts the thread; each acquire must be matched by a
    // release. The last release stops it: posted closures still queued run
    // first, then the thread is joined (or detached when the last release
    // runs on the progress thread itself).
    //
    // External progress (PMIX_EXTERNAL_PROGRESS, asked by the first acquire
    // only; later ones share the engine as it is): no thread is started, the
    // calling thread becomes the progress thread and drives the loop through
    // progress() (PMIx_Progress), and its own blocking calls pump the loop
    // while they wait. Work posted from other threads waits for it. SIGPIPE is
    // blocked on that thread until the last release (a write to a dead peer
    // then fails with EPIPE, as on the library's own thread).
    mca::Status acquire(bool external = false);
    void release();

    // The last release, ended by the loop itself (PMIx_Finalize: the
    // server's answer ends the loop on the progress thread, so that neither
    // the answer nor the stop needs a second wake-up of either thread;
    // bench/README.md, "Finalize ends the loop from the answer").
    //  - retire() (any thread but the progress thread): true when the caller
    //    holds the only acquire() of an engine with its own thread. The
    //    caller then calls end_loop() from a closure or callback on the
    //    progress thread, waits with await_end() and calls release() as
    //    usual. An acquire() from another thread waits until that release
    //    is done. False: nothing changed.
    //  - end_loop() (progress thread, after retire() returned true): the
    //    loop stops once the closures queued by then have run (a closure
    //    posted later is refused once the loop is freed); the thread frees
    //    the loop and ends.
    //  - await_end(limit): the caller sleeps until the thread has ended
    //    (the join: one wake-up, when it exits). False when `limit` passed
    //    first; release() then ends the loop itself and joins.
    bool retire();
    void end_loop();
    bool await_end(std::chrono::milliseconds limit);
    bool running() const;
    bool external() const noexcept { return external_.load(std::memory_order_acquire); }

    // PMIx_Progress: with external progress, on the progress thread and
    // outside dispatch, runs the posted closures and every event ready now
    // (no wait). Otherwise nothing: the library's own thread progresses it.
    void progress();

    // True on the progress thread.
    bool on_thread() const noexcept;

    // Queue `task` (any thread). Returns false when the engine is not running
    // (the task is dropped).
    bool post(Task task);

    // Closures posted and not yet finished (any thread). 0: every closure
    // posted so far has run, so whatever it sent is in its channel's queue
    // (Client::notify_event_direct writes from the caller's thread only then,
    // to keep the caller's requests in order).
    std::uint64_t unfinished() const noexcept {
        return unfinished_.load(std::memory_order_acquire);
    }

    // Run `task` on the progress thread and wait for it: inline when called
    // on the progress thread. Returns false if the engine is not running.
    bool run_sync(const Task &task);

    // Progress thread, outside libevent dispatch only: run one loop iteration
    // (wait for at least one event) and the posted closures. Used by waits
    // made on the progress thread. Returns false if called inside dispatch.
    bool pump_once();

    // One-shot timer on the progress thread; `fire` is run as a posted
    // closure. Progress thread only. cancel() of an unknown or fired id is a
    // no-op; after cancel() returns, `fire` does not run.
    TimerId after(std::chrono::milliseconds delay, Task fire);
    void cancel(TimerId id);

    // Progress thread only; for channels and listeners.
    event_base *base() const noexcept { return base_; }

  private:
    ProgressEngine() = default;
    static void *thread_start(void *self);
    void thread_main();
    void run_posted();
    void teardown();  // frees the loop; the lock is held
    static void on_wake(evutil_socket_t, short, void *arg);
    static void on_timer(evutil_socket_t, short, void *arg);

    mutable std::mutex mutex_;
    std::condition_variable stopped_;
    int users_ = 0;
    bool stopping_ = false;
    std::deque<Task> queue_;
    std::atomic<std::uint64_t> unfinished_{0};  // posted, not yet run to its end
    event_base *base_ = nullptr;
    event *wake_ = nullptr;
    // A pthread (not std::thread): await_end() joins it with a time limit.
    pthread_t thread_{};
    bool joinable_ = false;  // thread_ started and neither joined nor detached
    bool retiring_ = false;  // retire() holds the last release (see there)
    std::atomic<std::thread::id> thread_id_{};
    bool in_dispatch_ = false;
    std::atomic<bool> external_{false};
    sigset_t external_mask_{};  // the external thread's mask before acquire

    struct Timer {
        event *ev = nullptr;
        Task fire;
        ProgressEngine *engine = nullptr;
        TimerId id = 0;
    };
    std::map<TimerId, std::unique_ptr<Timer>> timers_;  // progress thread only
    TimerId next_timer_ = 1;
};

// One-shot completion for the blocking forms of non-blocking operations:
// complete() may be called from any thread, exactly once is enough (later
// calls are ignored); wait() sleeps on a condition variable, or pumps the
// engine when called on the progress thread.
template <class T>
class Completion {
  public:
    void complete(T value) {
        std::lock_guard lock(mutex_);
        if (done_) return;
        value_ = std::move(value);
        done_ = true;
        cv_.notify_all();
    }

    // Waits until complete() (or `limit` elapses: returns false).
    bool wait(std::chrono::milliseconds limit = std::chrono::milliseconds::max()) {
        auto &engine = ProgressEngine::instance();
        if (engine.on_thread()) {
            const auto deadline = limit == std::chrono::milliseconds::max()
                                      ? std::chrono::steady_clock::time_point::max()
                                      : std::chrono::steady_clock::now() + limit;
            while (!is_done()) {
                if (std::chrono::steady_clock::now() >= deadline) return false;
                // A timer keeps the loop from sleeping past the deadline.
                const auto guard = engine.after(std::chrono::milliseconds(50), [] {});
                if (!engine.pump_once()) return false;
                engine.cancel(guard);
            }
            return true;
        }
        std::unique_lock lock(mutex_);
        if (limit == std::chrono::milliseconds::max()) {
            cv_.wait(lock, [&] { return done_; });
            return true;
        }
        return cv_.wait_for(lock, limit, [&] { return done_; });
    }

    bool is_done() {
        std::lock_guard lock(mutex_);
        return done_;
    }
    T &value() { return value_; }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    T value_{};
};

}  // namespace pmixpp::runtime
