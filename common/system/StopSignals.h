// SPDX-License-Identifier: BSD-2-Clause
// SIGINT/SIGTERM as a stop request, shared by the daemon and the command-line tools.
#pragma once

#include <atomic>

namespace efu {

/// Installs handlers for SIGINT and SIGTERM that record the signal and set stopFlag(). No
/// SA_RESTART: a blocked send, sleep or poll returns EINTR, so loops notice at once. One-shot
/// (SA_RESETHAND): a second signal ends the process even if its shutdown hangs.
/// Also ignores SIGPIPE (a peer that went away is an error return, not death).
void installStopSignals() noexcept;

/// Set by SIGINT/SIGTERM; for loops that take a `const std::atomic<bool>& stop`.
std::atomic<bool> &stopFlag() noexcept;

/// The signal that asked to stop (SIGINT or SIGTERM), 0 if none yet.
int stopSignal() noexcept;

} // namespace efu
