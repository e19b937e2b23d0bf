// SPDX-License-Identifier: BSD-2-Clause
// `efu --check`: the machine and the configuration checked without starting.
#pragma once

#include "efu/Options.h"

#include <spdlog/logger.h>

#include <string>
#include <vector>

namespace efu {

/// One check's outcome: what was checked and, for warn and FAIL, what to do.
struct CheckResult {
  enum class Level { Ok, Warn, Fail };
  Level level;
  std::string what;   ///< e.g. "net.core.rmem_max", "module", "control port"
  std::string detail; ///< the finding; for warn and FAIL with what to do about it
};

/// Runs every check for a start with `options`, using the same code as the start (module
/// loading and configuration, the data sockets, the listeners, pinning and SCHED_FIFO tried on
/// a short-lived thread, the Kafka producer) but starting nothing. Checks: the module loads
/// and accepts its configuration; the rx threads' configuration; the UDP port binds;
/// net.core.rmem_max >= --rcvbuf; the control port (and --metrics-port) can listen; the
/// control secret file; the log file; each CPU of --rx-cpu/--proc-cpu exists and is allowed;
/// --rx-priority can be had; the Kafka configuration and topic names; a broker answers within
/// `kafkaTimeoutMs` (warn only: efu starts without one and delivers later).
std::vector<CheckResult> preflight(const DaemonOptions &options, spdlog::logger &log,
                                   int kafkaTimeoutMs = 3000);

/// One line per result ("ok   what: detail", "warn ...", "FAIL ...") and a summary line.
std::string formatChecks(const std::vector<CheckResult> &results);

/// 0 when no check failed, else 1.
int checkExitCode(const std::vector<CheckResult> &results);

} // namespace efu
