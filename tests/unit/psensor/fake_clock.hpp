// A fake clock for the psensor modules: a ProgressTimers whose time moves
// only when the test calls advance(). Timers fire in time order, each at
// every multiple of its period, exactly as the progress thread would fire
// them, but without waiting.
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>

class FakeClock final : public pmixpp::mca::ProgressTimers {
  public:
    TimerId every(std::chrono::milliseconds period, std::function<void()> tick) override {
        const TimerId id = next_++;
        timers_[id] = Timer{period, now_ + period, std::move(tick)};
        return id;
    }
    void cancel(TimerId id) override { timers_.erase(id); }

    // Moves time forward by `by`, firing every timer due on the way.
    void advance(std::chrono::milliseconds by) {
        const auto until = now_ + by;
        for (;;) {
            TimerId due = 0;
            std::chrono::milliseconds when = until;
            for (const auto &[id, t] : timers_) {
                if (t.next <= when && (due == 0 || t.next < when)) {
                    due = id;
                    when = t.next;
                }
            }
            if (due == 0) break;
            now_ = when;
            auto &t = timers_.at(due);
            t.next += t.period;
            auto tick = t.tick;  // the tick may cancel its own timer
            tick();
        }
        now_ = until;
    }
    void advance_s(int seconds) { advance(std::chrono::seconds(seconds)); }
    std::size_t active() const { return timers_.size(); }

  private:
    struct Timer {
        std::chrono::milliseconds period;
        std::chrono::milliseconds next;
        std::function<void()> tick;
    };
    std::chrono::milliseconds now_{0};
    std::map<TimerId, Timer> timers_;
    TimerId next_ = 1;
};
