// SPDX-License-Identifier: BSD-2-Clause
// spdlog set-up for the daemon and the tools.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

namespace efu {

/// Level names accepted by --log-level, for help texts and validation.
inline constexpr const char *kLogLevels = "trace, debug, info, warn, error, critical, off";

/// Creates the process logger (stderr, plus `logFile` if not empty) and makes it spdlog's default.
/// Throws std::runtime_error on an unknown level or a file that cannot be opened.
/// Logs to stderr and, if logFile is not empty, appends to that file. Throws std::runtime_error
/// for an unknown level or a log file that cannot be opened (its directory must exist).
std::shared_ptr<spdlog::logger> setupLogging(const std::string &name, const std::string &level,
                                             const std::string &logFile);

/// "" if logFile can be opened for appending as far as can be told without creating it: its
/// directory exists and it is not a directory, FIFO or device; else the problem.
std::string checkLogFilePath(const std::string &logFile);

/// Closes and reopens the log file of setupLogging() by name (SIGHUP after logrotate).
/// Returns false when there is no log file. Main thread.
bool reopenLogFile();

} // namespace efu
