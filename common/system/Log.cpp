// SPDX-License-Identifier: BSD-2-Clause
// spdlog set-up for the daemon and the tools.
#include "common/system/Log.h"

#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace efu {
namespace {

/// Appends to a file and can reopen it by name (after logrotate moved it away).
class ReopenableFileSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit ReopenableFileSink(std::string path) : path_(std::move(path)) { file_.open(path_); }

  void reopen() {
    const std::lock_guard lock(mutex_);
    file_.close();
    file_.open(path_);
  }

protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    file_.write(formatted);
  }
  void flush_() override { file_.flush(); }

private:
  std::string path_;
  spdlog::details::file_helper file_;
};

std::shared_ptr<ReopenableFileSink> gFileSink; // set once by setupLogging(), on the main thread

} // namespace

std::string checkLogFilePath(const std::string &logFile) {
  if (logFile.empty()) {
    return {};
  }
  std::error_code error;
  const std::filesystem::path path(logFile);
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, error)) {
    return "log file '" + logFile + "': directory '" + parent.string() + "' does not exist";
  }
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    return "log file '" + logFile + "' exists and is not a regular file";
  }
  return {};
}

bool reopenLogFile() {
  if (!gFileSink) {
    return false;
  }
  gFileSink->reopen();
  return true;
}

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
    // spdlog would create missing directories: a typo in the path must be an error instead.
    if (const auto problem = checkLogFilePath(logFile); !problem.empty()) {
      throw std::runtime_error(problem);
    }
    try {
      gFileSink = std::make_shared<ReopenableFileSink>(logFile);
      sinks.push_back(gFileSink);
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
