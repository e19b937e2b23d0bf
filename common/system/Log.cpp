// SPDX-License-Identifier: BSD-2-Clause
// spdlog set-up for the daemon and the tools.
#include "common/system/Log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <vector>

namespace efu {

std::shared_ptr<spdlog::logger> setupLogging(const std::string &name, const std::string &level,
                                             const std::string &logFile) {
  const auto parsed = spdlog::level::from_str(level);
  // from_str maps unknown names to "off"; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && level != "off") {
    throw std::runtime_error("unknown log level '" + level + "' (use one of: " + kLogLevels + ")");
  }
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  if (!logFile.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(logFile));
    } catch (const spdlog::spdlog_ex &e) {
      throw std::runtime_error("cannot open log file '" + logFile + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
  logger->set_level(parsed);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return logger;
}

} // namespace efu
