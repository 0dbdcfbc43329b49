#include "signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pmixrun {

namespace {

std::atomic<int> g_signal{0};
std::atomic<std::atomic<bool> *> g_stop{nullptr};
std::atomic<int> g_wake_read{-1};
std::atomic<int> g_wake_write{-1};

void on_termination_signal(int sig) {
    int none = 0;
    g_signal.compare_exchange_strong(none, sig);
    if (std::atomic<bool> *stop = g_stop.load()) stop->store(true);
    wake_main_loop();
}

void on_child_signal(int) {
    wake_main_loop();
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

void install_child_signal() {
    static_assert(std::atomic<int>::is_always_lock_free);
    if (g_wake_read.load() < 0) {
        int fds[2];
        if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;  // wait_all then polls
        g_wake_write.store(fds[1]);
        g_wake_read.store(fds[0]);
    }
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &on_child_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, nullptr);
}

void wake_main_loop() {
    const int fd = g_wake_write.load();
    if (fd < 0) return;
    const int saved = errno;  // a handler must leave errno as it found it
    const char byte = 1;
    // A full pipe already holds a wake-up: nothing is lost.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
    errno = saved;
}

int main_loop_fd() {
    return g_wake_read.load();
}

void drain_main_loop() {
    const int fd = g_wake_read.load();
    if (fd < 0) return;
    char buf[64];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
}

}  // namespace pmixrun
