// The plog_syslog module: one syslog record per entry, written as one
// datagram to a unix socket (README.md). Progress thread only; every write
// is non-blocking, so log() completes before it returns.
#pragma once

#include <pmix_common.h>

#include <ctime>
#include <string>
#include <vector>

#include "pmixpp/mca/plog.hpp"

namespace pmixpp::plog_syslog {

enum class Format { rfc3164, rfc5424 };

struct Config {
    std::string socket_path = "/dev/log";
    int facility = 1;  // LOG_USER >> 3
    std::string ident = "pmix";
    Format format = Format::rfc3164;
};

// Facility names as syslog.conf spells them ("user", "local0", ...); -1: unknown.
int facility_code(const std::string &name);
const std::vector<std::string> &facility_names();

// One record: `pri` (facility * 8 + severity), the time of the entry, the
// sender's identity and pid, the source tag ("nspace:rank") and the message.
std::string format_record(Format format, int pri, std::time_t when, const std::string &hostname,
                          const std::string &ident, long pid, const std::string &source,
                          const std::string &message);

class SyslogChannel final : public mca::plog::Module {
  public:
    explicit SyslogChannel(Config config);
    ~SyslogChannel() override;
    SyslogChannel(const SyslogChannel &) = delete;
    SyslogChannel &operator=(const SyslogChannel &) = delete;

    std::vector<std::string> channels() const override;
    void log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t> directives, mca::plog::LogCompletion done) override;

  private:
    mca::plog::EntryResult send(const std::string &record);

    Config config_;
    int fd_ = -1;
    std::string hostname_;
};

}  // namespace pmixpp::plog_syslog
