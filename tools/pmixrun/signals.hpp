// pmixrun's termination signals: SIGTERM, SIGINT and SIGHUP, which batch
// systems, `timeout` and terminals send to pmixrun's pid alone. pmixrun must
// not leave its ranks running as orphans nor the job's shared-memory fence
// segments in /dev/shm (docs/security.md).
//
// The handler only records the signal and sets the stop flag (two lock-free
// atomic stores: async-signal-safe). The launcher's wait loop then terminates
// the ranks (SIGTERM, then SIGKILL after its grace period) and reaps them;
// main() deregisters the jobs and finalizes the server, which removes the
// segments, and exits with 128 + the signal's number.
#pragma once

#include <atomic>

namespace pmixrun {

// Installs the handlers; `stop` must live until the process exits.
void install_termination_signals(std::atomic<bool> &stop);
// The first termination signal received, 0 if none.
int termination_signal();

// The main loop's wake-up (Launcher::wait_all sleeps in poll(2) on it instead
// of polling waitpid): a non-blocking self-pipe, made by
// install_child_signal(), which also catches SIGCHLD and wakes the loop on
// every child's end. wake_main_loop() is async-signal-safe and may be called
// from any thread or handler: whoever changes what the loop waits for (a
// queued spawn, an abort, a new deadline, a termination signal) calls it.
void install_child_signal();
void wake_main_loop();
// The pipe's read end (-1 before install_child_signal); drain_main_loop()
// empties it after a wake-up.
int main_loop_fd();
void drain_main_loop();

}  // namespace pmixrun
