// SPDX-License-Identifier: BSD-2-Clause
// SIGINT/SIGTERM as a stop request, shared by the daemon and the command-line tools.
#include "common/system/StopSignals.h"

#include <csignal>

namespace efu {
namespace {

std::atomic<bool> gStop{false};
std::atomic<int> gSignal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "set from a signal handler");

extern "C" void onStopSignal(int signal) {
  gSignal.store(signal, std::memory_order_relaxed);
  gStop.store(true, std::memory_order_relaxed);
}

} // namespace

void installStopSignals() noexcept {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  // One-shot: a second Ctrl-C ends the process even if a shutdown hangs.
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

std::atomic<bool> &stopFlag() noexcept { return gStop; }

int stopSignal() noexcept { return gSignal.load(std::memory_order_relaxed); }

} // namespace efu
