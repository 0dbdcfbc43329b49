// HeartbeatSensor: the psensor_heartbeat module (README.md). Watches
// PMIX_MONITOR_HEARTBEAT requests: a window of PMIX_MONITOR_HEARTBEAT_TIME
// seconds without a heartbeat is a miss; after drops + 1 misses in a row the
// monitor raises one violation and stays quiet until a heartbeat arrives,
// which re-arms it. Every heartbeat of a process credits every monitor of it.
//
// Time comes only from the ProgressTimers given to start(): a test drives it
// with a fake clock. Progress thread only.
#pragma once

#include "pmixpp/mca/psensor.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace pmixpp::psensor_heartbeat {

class HeartbeatSensor final : public mca::psensor::Module {
  public:
    // `default_drops`: misses tolerated when a request gives no
    // PMIX_MONITOR_HEARTBEAT_DROPS (parameter psensor_heartbeat_drops).
    explicit HeartbeatSensor(std::uint32_t default_drops = 0) : default_drops_(default_drops) {}
    ~HeartbeatSensor() override;

    std::vector<std::string> monitor_keys() const override;
    mca::Status start(const mca::psensor::MonitorRequest &request, mca::ProgressTimers &timers,
                      mca::psensor::ViolationHandler raise) override;
    mca::Status stop(const pmix_proc_t &requestor, std::string_view id) override;
    void heartbeat(const pmix_proc_t &from) override;

    // Monitors running (tests, logs).
    std::size_t size() const;

  private:
    using Proc = std::pair<std::string, pmix_rank_t>;
    struct Watch {
        std::uint32_t period_s = 0;
        std::uint32_t drops = 0;
        pmix_status_t code = PMIX_SUCCESS;
        std::uint32_t misses = 0;  // empty windows in a row
        bool beat = false;         // a heartbeat in the current window
        bool stalled = false;      // alerted; quiet until a heartbeat
        mca::ProgressTimers::TimerId timer = 0;
    };
    void tick(const Proc &proc, const std::string &id);

    std::uint32_t default_drops_;
    mca::ProgressTimers *timers_ = nullptr;
    mca::psensor::ViolationHandler raise_;
    std::map<Proc, std::map<std::string, Watch, std::less<>>> watches_;
};

}  // namespace pmixpp::psensor_heartbeat
