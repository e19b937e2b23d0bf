// SPDX-License-Identifier: BSD-2-Clause
// Terminating signals as a stop request, shared by the daemon and the command-line tools.
#include "common/system/StopSignals.h"

#include <pthread.h>

#include <csignal>
#include <cstring>

namespace efu {
namespace {

std::atomic<bool> gStop{false};
std::atomic<int> gSignal{0};
std::atomic<bool> gHangup{false};
std::atomic<int> gSignalCount{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "set from a signal handler");

extern "C" void onStopSignal(int signal) {
  int none = 0; // the first signal stays the reason
  gSignal.compare_exchange_strong(none, signal, std::memory_order_relaxed);
  gSignalCount.fetch_add(1, std::memory_order_relaxed);
  gStop.store(true, std::memory_order_relaxed);
}

extern "C" void onHangup(int) { gHangup.store(true, std::memory_order_relaxed); }

constexpr int kStopSignals[] = {SIGINT,  SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
                                SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPWR};

} // namespace

void installStopSignals(Hangup hangup, Repeat repeat) noexcept {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  // One-shot for tools: a second Ctrl-C ends the process even if a shutdown hangs.
  action.sa_flags = repeat == Repeat::Kill ? SA_RESETHAND : 0;
  for (const int signal : kStopSignals) {
    sigaction(signal, &action, nullptr);
  }
  if (hangup == Hangup::ReopenLog) {
    struct sigaction reopen {};
    reopen.sa_handler = onHangup;
    sigemptyset(&reopen.sa_mask);
    sigaction(SIGHUP, &reopen, nullptr); // not one-shot: logrotate sends it every night
  } else {
    sigaction(SIGHUP, &action, nullptr);
  }
  std::signal(SIGPIPE, SIG_IGN);
  // A parent may have blocked them (the mask, and what is pending, survive exec): a stop asked
  // before this point arrives now, and is seen at the next step of the start-up.
  sigset_t stops;
  sigemptyset(&stops);
  for (const int signal : kStopSignals) {
    sigaddset(&stops, signal);
  }
  sigaddset(&stops, SIGHUP);
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
}

std::atomic<bool> &stopFlag() noexcept { return gStop; }

int stopSignal() noexcept { return gSignal.load(std::memory_order_relaxed); }

int stopSignalCount() noexcept {
  return gSignalCount.load(std::memory_order_relaxed);
}

std::string signalName(int signal) {
  const char *abbreviation = sigabbrev_np(signal);
  return abbreviation != nullptr ? std::string("SIG") + abbreviation
                                 : "signal " + std::to_string(signal);
}

bool takeHangup() noexcept { return gHangup.exchange(false, std::memory_order_relaxed); }

} // namespace efu
