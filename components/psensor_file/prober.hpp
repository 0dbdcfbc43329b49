// Where the stat() calls of psensor_file run: off the progress thread, so a
// slow or hung filesystem never delays Get or Fence (README.md, "Threads").
//
// A Probe is one file's mailbox: the progress thread asks for a sample
// (request()), a worker fills it in, the progress thread takes it at its next
// check (take()). At most one stat per file is outstanding.
#pragma once

#include "file_watch.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace pmixpp::psensor_file {

using StatFunction = std::function<std::optional<FileSample>(const std::string &path)>;

class Probe {
  public:
    explicit Probe(std::string path) : path_(std::move(path)) {}
    const std::string &path() const { return path_; }

    // Progress thread. The sample taken since the last take(), if one is
    // ready: {true, sample}; {false, _} while a stat is still running or none
    // was asked for.
    std::pair<bool, std::optional<FileSample>> take();
    // Progress thread: whether a stat is running (then no new one is asked).
    bool pending() const;

    // Worker side.
    void mark_pending();
    void fill(std::optional<FileSample> sample);

  private:
    const std::string path_;
    mutable std::mutex mutex_;
    bool pending_ = false;
    bool ready_ = false;
    std::optional<FileSample> sample_;
};

class Prober {
  public:
    virtual ~Prober() = default;
    // Progress thread: stat probe->path() and fill the probe. Never blocks on
    // the filesystem. The prober holds the probe until it is filled.
    virtual void request(std::shared_ptr<Probe> probe) = 0;
};

// One worker thread, started with the prober, joined by its destructor (a
// stat still running is waited for: the destructor runs at server stop).
class ThreadProber final : public Prober {
  public:
    explicit ThreadProber(StatFunction stat = stat_file);
    ~ThreadProber() override;
    void request(std::shared_ptr<Probe> probe) override;

  private:
    void run();
    StatFunction stat_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Probe>> queue_;
    bool stopping_ = false;
    std::thread worker_;
};

// stat() in the caller's thread: the unit tests' deterministic prober.
class InlineProber final : public Prober {
  public:
    explicit InlineProber(StatFunction stat) : stat_(std::move(stat)) {}
    void request(std::shared_ptr<Probe> probe) override {
        probe->mark_pending();
        probe->fill(stat_(probe->path()));
    }

  private:
    StatFunction stat_;
};

}  // namespace pmixpp::psensor_file
