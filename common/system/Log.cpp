// SPDX-License-Identifier: BSD-2-Clause
// spdlog set-up for the daemon and the tools.
#include "common/system/Log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace efu {
namespace {

/// Opens `path` for appending without ever blocking and refuses anything but a regular file:
/// O_NONBLOCK, because opening a FIFO without a reader would otherwise wait for one forever
/// (it fails with ENXIO instead), then fstat() of what was opened (a FIFO with a reader, a
/// device). Returns the descriptor, or -1 with the reason in `problem`.
int openLogFile(const std::string &path, std::string &problem) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) {
    problem = errno == ENXIO ? "log file '" + path + "' is not a regular file (a FIFO or device "
                               "that nobody has open for reading)"
                             : "cannot open log file '" + path + "': " + std::strerror(errno);
    return -1;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    problem = "log file '" + path + "' is not a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, O_WRONLY | O_APPEND); // a regular file: writes block as usual
  return fd;
}

/// Appends to a file and can reopen it by name (after logrotate moved it away). A failed
/// reopen keeps the file open before, so no log line is lost and nothing writes to a closed
/// file. Each line is one write(2) (O_APPEND), so nothing is buffered in the process.
class ReopenableFileSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit ReopenableFileSink(std::string path) : path_(std::move(path)) {
    std::string problem;
    fd_ = openLogFile(path_, problem);
    if (fd_ < 0) {
      throw std::runtime_error(problem);
    }
  }
  ~ReopenableFileSink() override { ::close(fd_); }
  ReopenableFileSink(const ReopenableFileSink &) = delete;
  ReopenableFileSink &operator=(const ReopenableFileSink &) = delete;

  /// "" when reopened, else why not (the old file stays open).
  std::string reopen() {
    std::string problem;
    const int fd = openLogFile(path_, problem);
    if (fd < 0) {
      return problem;
    }
    const std::lock_guard lock(mutex_);
    ::close(fd_);
    fd_ = fd;
    return {};
  }

protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    const char *data = formatted.data();
    size_t left = formatted.size();
    while (left > 0) {
      const ssize_t written = ::write(fd_, data, left);
      if (written < 0 && errno == EINTR) {
        continue;
      }
      if (written <= 0) {
        return; // disk full or I/O error: logging never throws into the caller (stderr has it)
      }
      data += written;
      left -= static_cast<size_t>(written);
    }
  }
  void flush_() override {}

private:
  std::string path_;
  int fd_ = -1;
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

LogReopen reopenLogFile() {
  if (!gFileSink) {
    return {LogReopen::Status::NoLogFile, {}};
  }
  std::string problem = gFileSink->reopen();
  return {problem.empty() ? LogReopen::Status::Reopened : LogReopen::Status::Failed,
          std::move(problem)};
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
    gFileSink = std::make_shared<ReopenableFileSink>(logFile); // throws naming the file
    sinks.push_back(gFileSink);
  }
  auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
  logger->set_level(parsed);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return logger;
}

} // namespace efu
