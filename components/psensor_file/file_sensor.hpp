// FileSensor: the psensor_file module (README.md). Takes file monitors in
// both forms, 4.2's (PMIX_MONITOR_FILE = the file, PMIX_MONITOR_FILE_SIZE /
// _ACCESS / _MODIFY among the directives) and the standard's
// (PMIX_MONITOR_FILE_CHANGES = the criteria, PMIX_MONITOR_TARGET_FILES = the
// files). Every PMIX_MONITOR_FILE_CHECK_TIME seconds each file of a monitor
// is judged by its FileWatch on the sample its Probe got since the previous
// check, and a new stat is asked of the Prober (a worker thread).
//
// Progress thread only, except inside the Prober.
#pragma once

#include "file_watch.hpp"
#include "prober.hpp"

#include "pmixpp/mca/psensor.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pmixpp::psensor_file {

class FileSensor final : public mca::psensor::Module {
  public:
    // `default_check_s` / `default_drops`: used when a request gives no
    // PMIX_MONITOR_FILE_CHECK_TIME / _DROPS (parameters psensor_file_check_time
    // and psensor_file_drops).
    FileSensor(std::uint32_t default_check_s, std::uint32_t default_drops,
               std::unique_ptr<Prober> prober);
    ~FileSensor() override;

    std::vector<std::string> monitor_keys() const override;
    mca::Status start(const mca::psensor::MonitorRequest &request, mca::ProgressTimers &timers,
                      mca::psensor::ViolationHandler raise) override;
    mca::Status stop(const pmix_proc_t &requestor, std::string_view id) override;

    std::size_t size() const;

  private:
    using Proc = std::pair<std::string, pmix_rank_t>;
    struct Watched {
        std::shared_ptr<Probe> probe;
        FileWatch watch;
    };
    struct Monitor {
        std::uint32_t period_s = 0;
        pmix_status_t code = PMIX_SUCCESS;
        std::vector<Watched> files;
        mca::ProgressTimers::TimerId timer = 0;
    };
    void check(const Proc &proc, const std::string &id);

    std::uint32_t default_check_s_;
    std::uint32_t default_drops_;
    mca::ProgressTimers *timers_ = nullptr;
    mca::psensor::ViolationHandler raise_;
    std::map<Proc, std::map<std::string, Monitor, std::less<>>> monitors_;
    std::unique_ptr<Prober> prober_;  // last member: joined first
};

}  // namespace pmixpp::psensor_file
