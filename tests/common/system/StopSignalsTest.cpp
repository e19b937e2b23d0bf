// SPDX-License-Identifier: BSD-2-Clause
// installStopSignals: what a first and a repeated stop signal do, each case in a child process
// (a handler, once installed, cannot be taken back).
#include "common/system/StopSignals.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>

namespace efu {
namespace {

// The daemon's handlers: a stop signal during the stop is counted, never fatal (issue 37: a
// second SIGTERM 10 ms after the first killed efu without its final accounting).
TEST(StopSignals, TheDaemonCountsRepeatedStopSignalsAndKeepsTheFirstAsReason) {
  EXPECT_EXIT(
      {
        installStopSignals(Hangup::ReopenLog, Repeat::Ignore);
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::raise(SIGINT);
        std::raise(SIGUSR1);
        const bool ok = stopFlag().load() && stopSignal() == SIGTERM && stopSignalCount() == 4;
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A tool's handlers are one-shot: the first stop signal asks, the second ends the process.
TEST(StopSignals, AToolEndsOnTheSecondStopSignal) {
  EXPECT_EXIT(
      {
        installStopSignals();
        std::raise(SIGINT);
        if (stopSignal() != SIGINT || stopSignalCount() != 1) {
          _exit(1);
        }
        std::raise(SIGINT);
        _exit(2);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

// SIGHUP reopens the log of a daemon as often as it comes and is no stop.
TEST(StopSignals, HangupIsNoStopForADaemon) {
  EXPECT_EXIT(
      {
        installStopSignals(Hangup::ReopenLog, Repeat::Ignore);
        std::raise(SIGHUP);
        const bool first = takeHangup();
        std::raise(SIGHUP);
        const bool ok =
            first && takeHangup() && !takeHangup() && stopSignal() == 0 && !stopFlag().load();
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
} // namespace efu
