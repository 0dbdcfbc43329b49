#include "prober.hpp"

namespace pmixpp::psensor_file {

std::pair<bool, std::optional<FileSample>> Probe::take() {
    std::lock_guard lock(mutex_);
    if (!ready_) return {false, std::nullopt};
    ready_ = false;
    return {true, std::move(sample_)};
}

bool Probe::pending() const {
    std::lock_guard lock(mutex_);
    return pending_;
}

void Probe::mark_pending() {
    std::lock_guard lock(mutex_);
    pending_ = true;
}

void Probe::fill(std::optional<FileSample> sample) {
    std::lock_guard lock(mutex_);
    sample_ = std::move(sample);
    ready_ = true;
    pending_ = false;
}

ThreadProber::ThreadProber(StatFunction stat) : stat_(std::move(stat)) {
    worker_ = std::thread([this] { run(); });
}

ThreadProber::~ThreadProber() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

void ThreadProber::request(std::shared_ptr<Probe> probe) {
    probe->mark_pending();
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(probe));
    }
    wake_.notify_one();
}

void ThreadProber::run() {
    for (;;) {
        std::shared_ptr<Probe> probe;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (stopping_) return;
            probe = std::move(queue_.front());
            queue_.pop_front();
        }
        probe->fill(stat_(probe->path()));
    }
}

}  // namespace pmixpp::psensor_file
