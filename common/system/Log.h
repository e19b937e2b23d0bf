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
std::shared_ptr<spdlog::logger> setupLogging(const std::string &name, const std::string &level,
                                             const std::string &logFile);

} // namespace efu
