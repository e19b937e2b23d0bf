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
/// Logs to stderr and, if logFile is not empty, appends to that file. Throws std::runtime_error
/// for an unknown level or a log file that cannot be opened (its directory must exist; it must be
/// a regular file or not exist yet).
std::shared_ptr<spdlog::logger> setupLogging(const std::string &name, const std::string &level,
                                             const std::string &logFile);

/// "" if logFile can be opened for appending as far as can be told without creating it: its
/// directory exists and it is not a directory, FIFO or device; else the problem.
std::string checkLogFilePath(const std::string &logFile);

/// What reopenLogFile() did.
struct LogReopen {
  enum class Status {
    NoLogFile, ///< setupLogging() was given none
    Reopened,  ///< lines go to the file now at the path
    Failed,    ///< lines still go to the file open before; `problem` says why
  };
  Status status;
  std::string problem; ///< names the file and the reason, with Failed
};

/// Reopens the log file of setupLogging() by name (SIGHUP after logrotate moved it). Never
/// blocks (a FIFO put in its place is refused, not waited on) and never throws: only what is
/// not a regular file that can be opened for appending fails, and then the old file stays in
/// use, so the caller can log the failure there and try again later. Main thread.
LogReopen reopenLogFile();

} // namespace efu
