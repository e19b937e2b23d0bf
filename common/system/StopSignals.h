// SPDX-License-Identifier: BSD-2-Clause
// Terminating signals as a stop request, shared by the daemon and the command-line tools.
#pragma once

#include <atomic>
#include <string>

namespace efu {

/// What SIGHUP means to the program.
enum class Hangup {
  Stop,      ///< like SIGTERM (tools: the terminal went away)
  ReopenLog, ///< reopen the log file (daemons: the logrotate convention); see takeHangup()
};

/// What a stop signal does once a stop has been asked for.
enum class Repeat {
  Kill,   ///< ends the process (tools: a second Ctrl-C when a shutdown hangs)
  Ignore, ///< counted only (the daemon, whose stop is bounded; SIGKILL still cuts it short)
};

/// Installs handlers that record the signal and set stopFlag() for every signal whose default
/// action would end the process without a word: SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
/// SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPWR, and SIGHUP unless `hangup` is ReopenLog.
/// A stop ends with the same drain and flush as SIGTERM. No SA_RESTART: a blocked send,
/// sleep or poll returns EINTR, so loops notice at once. With Repeat::Kill the handlers are
/// one-shot (SA_RESETHAND): a second such signal ends the process even if its shutdown hangs;
/// with Repeat::Ignore every further one is only counted (stopSignalCount()) and the first
/// stays stopSignal(). Unblocks them all on the calling thread (threads started later inherit
/// that): a stop signal a parent left blocked and pending arrives at once. Also ignores SIGPIPE
/// (a peer that went away is an error return, not death). Crash signals (SIGSEGV, SIGABRT, ...)
/// and SIGQUIT keep their default (a core dump).
void installStopSignals(Hangup hangup = Hangup::Stop, Repeat repeat = Repeat::Kill) noexcept;

/// Stop signals received since installStopSignals().
int stopSignalCount() noexcept;

/// Set by a stop signal; for loops that take a `const std::atomic<bool>& stop`.
std::atomic<bool> &stopFlag() noexcept;

/// The signal that asked to stop, 0 if none yet.
int stopSignal() noexcept;

/// "SIGTERM", "SIGUSR1", ... for log lines.
std::string signalName(int signal);

/// With Hangup::ReopenLog: true once per SIGHUP received since the last call.
bool takeHangup() noexcept;

} // namespace efu
