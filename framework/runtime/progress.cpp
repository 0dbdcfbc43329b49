#include "runtime/progress.hpp"

#include <event2/thread.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cstring>
#include <string>

#include "runtime/logging.hpp"

namespace pmixpp::runtime {

namespace {
auto log() {
    return runtime::framework_logger("runtime");
}
}  // namespace

ProgressEngine &ProgressEngine::instance() {
    static auto *engine = new ProgressEngine;  // never freed: see header
    return *engine;
}

mca::Status ProgressEngine::acquire(bool external) {
    std::unique_lock lock(mutex_);
    // A previous stop that is still draining must finish first.
    stopped_.wait(lock, [&] { return !stopping_ && !retiring_; });
    if (users_++ > 0) return mca::Status::success();

    static std::once_flag threads_once;
    std::call_once(threads_once, [] { evthread_use_pthreads(); });
    base_ = event_base_new();
    if (base_ == nullptr) {
        users_ = 0;
        return mca::Status(PMIX_ERR_OUT_OF_RESOURCE,
                           "runtime: cannot create the libevent event base");
    }
    wake_ = event_new(base_, -1, EV_PERSIST, &ProgressEngine::on_wake, this);
    event_add(wake_, nullptr);
    if (external) {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, &external_mask_);
        external_ = true;
        thread_id_ = std::this_thread::get_id();
        return mca::Status::success();
    }
    if (const int rc = pthread_create(&thread_, nullptr, &ProgressEngine::thread_start, this);
        rc != 0) {
        event_free(wake_);
        wake_ = nullptr;
        event_base_free(base_);
        base_ = nullptr;
        users_ = 0;
        return mca::Status(
            PMIX_ERR_OUT_OF_RESOURCE,
            std::string("runtime: cannot start the progress thread: ") + std::strerror(rc));
    }
    joinable_ = true;
    return mca::Status::success();
}

void *ProgressEngine::thread_start(void *self) {
    static_cast<ProgressEngine *>(self)->thread_main();
    return nullptr;
}

void ProgressEngine::progress() {
    if (!external() || !on_thread() || in_dispatch_) return;
    run_posted();
    in_dispatch_ = true;
    event_base_loop(base_, EVLOOP_NONBLOCK);
    in_dispatch_ = false;
    run_posted();
}

void ProgressEngine::release() {
    {
        std::unique_lock lock(mutex_);
        if (users_ == 0 || --users_ > 0) return;
        if (external()) {
            // No thread to stop: what is still queued runs here, then the loop goes.
            stopping_ = true;
            lock.unlock();
            run_posted();
            lock.lock();
            teardown();
            external_ = false;
            // A SIGPIPE the loop's writes raised stays with the loop, unless
            // the thread had it blocked already.
            if (sigismember(&external_mask_, SIGPIPE) == 0) {
                sigset_t pipe;
                sigemptyset(&pipe);
                sigaddset(&pipe, SIGPIPE);
                const timespec now{0, 0};
                while (sigtimedwait(&pipe, nullptr, &now) == SIGPIPE) {
                }
            }
            pthread_sigmask(SIG_SETMASK, &external_mask_, nullptr);
            return;
        }
        if (joinable_) {
            // Not joined by await_end(): end the loop (unless end_loop()
            // did, and the thread already freed it) and join it.
            stopping_ = true;
            if (wake_ != nullptr) event_active(wake_, EV_READ, 0);
            const pthread_t thread = thread_;
            joinable_ = false;
            if (pthread_equal(thread, pthread_self()) != 0) {
                pthread_detach(thread);  // the loop ends after the current closure returns
                return;
            }
            lock.unlock();
            pthread_join(thread, nullptr);
            lock.lock();
        }
        if (retiring_) {
            retiring_ = false;  // an acquire() waiting in another thread may start a new one
            stopped_.notify_all();
        }
    }
}

bool ProgressEngine::retire() {
    std::lock_guard lock(mutex_);
    if (users_ != 1 || external() || !joinable_ || stopping_ || retiring_ || on_thread()) {
        return false;
    }
    retiring_ = true;
    return true;
}

void ProgressEngine::end_loop() {
    std::lock_guard lock(mutex_);
    if (retiring_ && on_thread()) stopping_ = true;  // thread_main() ends after this turn
}

bool ProgressEngine::await_end(std::chrono::milliseconds limit) {
    pthread_t thread{};
    {
        std::lock_guard lock(mutex_);
        if (!retiring_) return false;
        if (!joinable_) return true;
        thread = thread_;
    }
    timespec deadline{};
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(limit);
    deadline.tv_sec += static_cast<time_t>(secs.count());
    deadline.tv_nsec += static_cast<long>((limit - secs).count() * 1000000L);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    // Only the retiring caller joins or detaches the thread (it holds the
    // last acquire(); a new acquire() waits for its release()).
    if (pthread_clockjoin_np(thread, nullptr, CLOCK_MONOTONIC, &deadline) != 0) return false;
    std::lock_guard lock(mutex_);
    joinable_ = false;
    return true;
}

bool ProgressEngine::running() const {
    std::lock_guard lock(mutex_);
    return users_ > 0 && !stopping_ && base_ != nullptr;  // not after end_loop()'s end
}

bool ProgressEngine::on_thread() const noexcept {
    return thread_id_ == std::this_thread::get_id();
}

bool ProgressEngine::post(Task task) {
    std::lock_guard lock(mutex_);
    if (base_ == nullptr) return false;
    queue_.push_back(std::move(task));
    unfinished_.fetch_add(1, std::memory_order_acq_rel);
    // The progress thread runs the queue before it next sleeps: run_posted()
    // loops until it is empty, dispatch returns after the current callbacks,
    // pump_once() does not block while it holds work. Waking the loop from
    // there would only cost one more turn (an epoll_wait) per closure.
    if (!on_thread()) event_active(wake_, EV_READ, 0);
    return true;
}

bool ProgressEngine::run_sync(const Task &task) {
    if (on_thread()) {
        task();
        return true;
    }
    Completion<bool> done;
    if (!post([&] {
            task();
            done.complete(true);
        })) {
        return false;
    }
    done.wait();
    return true;
}

void ProgressEngine::on_wake(evutil_socket_t, short, void *) {
    // Nothing: run_posted() runs after dispatch returns.
}

void ProgressEngine::run_posted() {
    // One closure at a time, taken from the front of the queue: no batch
    // container is built per call (a std::deque allocates its map and a node
    // when constructed, and this runs after every turn of the loop: a
    // receiver's event took three such batches, bench/README.md "Notify per
    // event"). The order is the queue's, also when a closure pumps the loop
    // (a blocking call on this thread): the inner run_posted() goes on with
    // the closures queued behind that one, in order (before, the rest of its
    // batch waited until it returned).
    for (;;) {
        Task task;
        {
            std::lock_guard lock(mutex_);
            if (queue_.empty()) return;
            task = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            task();
        } catch (const std::exception &e) {
            log()->error("runtime: a task on the progress thread threw: {}", e.what());
        }
        unfinished_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

bool ProgressEngine::pump_once() {
    if (!on_thread() || in_dispatch_) return false;
    bool queued = false;
    {
        std::lock_guard lock(mutex_);
        queued = !queue_.empty();
    }
    in_dispatch_ = true;
    event_base_loop(base_, queued ? EVLOOP_NONBLOCK : EVLOOP_ONCE);
    in_dispatch_ = false;
    run_posted();
    return true;
}

void ProgressEngine::thread_main() {
    thread_id_ = std::this_thread::get_id();
    // Every socket write happens on this thread, and libevent's (writev on a
    // queued frame) cannot pass MSG_NOSIGNAL: a peer that died raises
    // SIGPIPE, which would kill an application that keeps the default
    // action (faults.server_killed_in_query). Blocked here, the write fails
    // with EPIPE and the channel closes as for any lost peer; the signal
    // stays pending on this thread only and goes with it.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    for (;;) {
        in_dispatch_ = true;
        // NO_EXIT_ON_EMPTY: with no event pending (before the connection is
        // watched, after the server closed it at finalize) a plain ONCE
        // returns at once and this loop would spin until release(); posted
        // work still wakes it through wake_ (event_active from any thread).
        event_base_loop(base_, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
        in_dispatch_ = false;
        run_posted();
        std::lock_guard lock(mutex_);
        if (stopping_ && queue_.empty()) {
            // Under the same lock as the test: a closure posted from now on
            // is refused (base_ is null), none is left behind in the queue.
            teardown();
            return;
        }
    }
}

void ProgressEngine::teardown() {
    for (auto &[id, timer] : timers_) event_free(timer->ev);
    timers_.clear();
    event_free(wake_);
    wake_ = nullptr;
    event_base_free(base_);
    base_ = nullptr;
    thread_id_.store(std::thread::id());
    stopping_ = false;
    stopped_.notify_all();
}

ProgressEngine::TimerId ProgressEngine::after(std::chrono::milliseconds delay, Task fire) {
    auto timer = std::make_unique<Timer>();
    timer->id = next_timer_++;
    timer->engine = this;
    timer->fire = std::move(fire);
    timer->ev = evtimer_new(base_, &ProgressEngine::on_timer, timer.get());
    timeval tv{static_cast<time_t>(delay.count() / 1000),
               static_cast<suseconds_t>((delay.count() % 1000) * 1000)};
    evtimer_add(timer->ev, &tv);
    const TimerId id = timer->id;
    timers_.emplace(id, std::move(timer));
    return id;
}

void ProgressEngine::cancel(TimerId id) {
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    event_free(it->second->ev);
    timers_.erase(it);
}

void ProgressEngine::on_timer(evutil_socket_t, short, void *arg) {
    auto *timer = static_cast<Timer *>(arg);
    ProgressEngine *engine = timer->engine;
    const TimerId id = timer->id;
    // Run as a posted closure (outside dispatch); a cancel() before then wins.
    engine->post([engine, id] {
        auto it = engine->timers_.find(id);
        if (it == engine->timers_.end()) return;
        Task fire = std::move(it->second->fire);
        event_free(it->second->ev);
        engine->timers_.erase(it);
        fire();
    });
}

}  // namespace pmixpp::runtime
