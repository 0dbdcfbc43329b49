// The verdict logic of one watched file (README.md), apart from time and I/O:
// FileWatch is fed one FileSample per check and says when to alert. Pure and
// single-threaded; the tests drive it directly.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

namespace pmixpp::psensor_file {

// What stat() said of the file at one check; nullopt (at the call sites):
// the file was missing or could not be stat()ed.
struct FileSample {
    off_t size = 0;
    timespec atime{};
    timespec mtime{};
};
std::optional<FileSample> stat_file(const std::string &path);

// The signs of life a monitor looks for. A check is a hit when at least one
// requested sign changed since the previous check; a miss otherwise (and
// whenever the file is missing).
struct Criteria {
    bool size = false;    // PMIX_MONITOR_FILE_SIZE: the file grew
    bool access = false;  // PMIX_MONITOR_FILE_ACCESS: its access time changed
    bool modify = false;  // PMIX_MONITOR_FILE_MODIFY: its modification time changed
    bool any() const { return size || access || modify; }
    std::string describe() const;  // "size, modify"
};

class FileWatch {
  public:
    FileWatch(Criteria criteria, std::uint32_t drops) : criteria_(criteria), drops_(drops) {}

    // One check. True when it raises the alert: drops + 1 misses in a row, and
    // not already alerted for this stall. A hit re-arms the watch.
    bool observe(const std::optional<FileSample> &sample);

    std::uint32_t misses() const { return misses_; }
    bool stalled() const { return stalled_; }
    const Criteria &criteria() const { return criteria_; }
    std::uint32_t drops() const { return drops_; }

  private:
    bool changed(const FileSample &now) const;

    Criteria criteria_;
    std::uint32_t drops_;
    bool first_ = true;
    std::optional<FileSample> previous_;
    std::uint32_t misses_ = 0;
    bool stalled_ = false;
};

}  // namespace pmixpp::psensor_file
