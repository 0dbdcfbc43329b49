#include "signals.hpp"

#include <signal.h>

#include <cstring>

namespace pmixrun {

namespace {

std::atomic<int> g_signal{0};
std::atomic<std::atomic<bool> *> g_stop{nullptr};

void on_termination_signal(int sig) {
    int none = 0;
    g_signal.compare_exchange_strong(none, sig);
    if (std::atomic<bool> *stop = g_stop.load()) stop->store(true);
}

}  // namespace

void install_termination_signals(std::atomic<bool> &stop) {
    static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
    g_stop.store(&stop);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &on_termination_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int termination_signal() {
    return g_signal.load();
}

}  // namespace pmixrun
