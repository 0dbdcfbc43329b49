// The plog_email module: PMIX_LOG_EMAIL entries sent over SMTP with libcurl,
// each on a worker thread of its own (README.md). log() only checks and
// copies the entry and starts the worker; the progress thread never waits
// for a mail server.
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pmixpp/mca/plog.hpp"

namespace pmixpp::plog_email {

struct Config {
    std::string server = "localhost";
    int port = 25;
    std::string sender;  // empty: pmix@<hostname>
    int timeout_s = 30;  // whole send, connection included
};

// One message, copied out of the caller's entry.
struct Message {
    std::vector<std::string> recipients;
    std::string subject, body, sender, server;
    int port = 25;
    std::time_t when = 0;
    std::string source;  // "nspace:rank"
};

// Reads a PMIX_LOG_EMAIL entry (its pmix_data_array_t of infos) with the
// defaults of `config`. PMIX_SUCCESS, or PMIX_ERR_BAD_PARAM with `why` set
// (not an info array, no recipient, no message).
pmix_status_t parse_entry(const pmix_info_t &entry, const Config &config, Message &out,
                          std::string &why);

// The RFC 5322 message (headers, blank line, body) with CRLF line ends.
std::string compose(const Message &m);

class EmailChannel final : public mca::plog::Module {
  public:
    explicit EmailChannel(Config config);
    // Aborts the sends still running (their entries fail) and joins them.
    ~EmailChannel() override;
    EmailChannel(const EmailChannel &) = delete;
    EmailChannel &operator=(const EmailChannel &) = delete;

    std::vector<std::string> channels() const override { return {PMIX_LOG_EMAIL}; }
    void log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t> directives, mca::plog::LogCompletion done) override;

  private:
    struct Worker {
        std::thread thread;
        bool finished = false;
    };
    // Worker thread: sends `m` (bounded by the timeout) and reports.
    mca::plog::EntryResult send(const Message &m);
    void reap_finished();  // progress thread: joins the workers that are done

    Config config_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;  // workers_' finished flags
    std::list<Worker> workers_;
};

}  // namespace pmixpp::plog_email
