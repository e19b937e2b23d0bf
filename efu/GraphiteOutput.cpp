// SPDX-License-Identifier: BSD-2-Clause
// Graphite plaintext sender: one connection, kept open, re-established with back-off; intervals
// count as sent once the connection has outlived them.
#include "efu/GraphiteOutput.h"

#include "common/time/Time.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <system_error>

namespace efu {
namespace {

constexpr int kTimeoutMs = 2000;

void drain(int eventFd) {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = ::read(eventFd, &count, sizeof(count));
}

} // namespace

GraphiteOutput::GraphiteOutput(GraphiteOptions options, Stats &stats, spdlog::logger &log)
    : options_(std::move(options)), stats_(stats), log_(log), sent_(stats.add("graphite.sent")),
      failures_(stats.add("graphite.failures")), dropped_(stats.add("graphite.dropped")),
      problemLog_{static_cast<int64_t>(options_.logIntervalMs) * kNsPerMs, 0, false, 0, {}} {
  wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "Graphite output: eventfd");
  }
  thread_ = std::thread([this] { run(); });
}

GraphiteOutput::~GraphiteOutput() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wakeFd_, &one, sizeof(one));
  thread_.join();
  disconnect();
  if (problemLog_.suppressed > 0) {
    log_.warn("Graphite {}:{}: {} further problem messages were not logged (the last was: {})",
              options_.host, options_.port, problemLog_.suppressed, problemLog_.last);
  }
  ::close(wakeFd_);
}

void GraphiteOutput::publish(int64_t unixSeconds) {
  std::string text;
  std::string stamp(1, ' ');
  stamp += std::to_string(unixSeconds);
  stamp += '\n';
  for (const auto &entry : stats_.snapshot()) {
    text += options_.prefix;
    text += entry.name;
    text += ' ';
    text += std::to_string(entry.value);
    text += stamp;
  }
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(text));
    if (pending_.size() > kMaxPending) {
      pending_.pop_front();
      dropped_.add();
    }
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wakeFd_, &one, sizeof(one));
}

void GraphiteOutput::run() {
  using Duration = std::chrono::steady_clock::duration;
  const Duration firstBackoff = std::chrono::milliseconds(std::max(options_.firstBackoffMs, 1));
  const Duration maxBackoff =
      std::max(firstBackoff, Duration(std::chrono::milliseconds(options_.maxBackoffMs)));
  Duration backoff = firstBackoff;
  const auto retryLater = [&] {
    const bool going = backOff(backoff);
    backoff = std::min(backoff * 2, maxBackoff);
    return going;
  };
  for (;;) {
    reportSuppressed();
    if (fd_ >= 0) {
      const std::string why = connectionLost();
      if (!why.empty()) {
        disconnect();
        if (!unconfirmed_.empty()) {
          lose(why);
          if (!retryLater()) {
            return;
          }
          continue;
        }
        // Closed while nothing was at stake (carbon restarted while idle): a new connection for
        // the next interval, no failure.
      }
    }
    bool waiting = false;
    {
      std::lock_guard lock(mutex_);
      if (stop_) {
        return;
      }
      waiting = !pending_.empty();
    }
    if (!waiting) {
      if (!waitForWork(-1)) {
        return;
      }
      continue;
    }
    // A later interval has come, and the connection that took the earlier ones is still open
    // and error-free: they have arrived.
    if (fd_ >= 0 && !unconfirmed_.empty()) {
      sent_.add(static_cast<int64_t>(unconfirmed_.size()));
      unconfirmed_.clear();
      recovered();
      backoff = firstBackoff;
    }
    if (fd_ < 0) {
      const std::string why = connect();
      if (!why.empty()) {
        failures_.add();
        problem("cannot connect: " + why);
        if (!retryLater()) {
          return;
        }
        continue;
      }
    }
    // Everything waiting, oldest first.
    bool failed = false;
    for (;;) {
      std::string text;
      {
        std::lock_guard lock(mutex_);
        if (stop_ || pending_.empty()) {
          break;
        }
        text = std::move(pending_.front());
        pending_.pop_front();
      }
      const std::string why = sendAll(text);
      unconfirmed_.push_back(std::move(text)); // a partial interval is sent again whole
      if (!why.empty()) {
        disconnect();
        lose("write failed: " + why);
        failed = true;
        break;
      }
    }
    if (failed && !retryLater()) {
      return;
    }
  }
}

bool GraphiteOutput::waitForWork(int timeoutMs) {
  pollfd fds[2] = {{wakeFd_, POLLIN, 0}, {fd_, POLLIN, 0}};
  // Connected, the connection is watched too: carbon never writes, so anything there is its
  // end (EOF or a reset), seen now rather than at the next interval.
  if (::poll(fds, fd_ >= 0 ? 2 : 1, timeoutMs) > 0 && fds[0].revents != 0) {
    drain(wakeFd_);
  }
  std::lock_guard lock(mutex_);
  return !stop_;
}

bool GraphiteOutput::backOff(std::chrono::steady_clock::duration wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stop_) {
        return false;
      }
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return true;
    }
    pollfd wake{wakeFd_, POLLIN, 0}; // a publish() wakes it too: wait on for the rest
    if (::poll(&wake, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX))) > 0) {
      drain(wakeFd_);
    }
  }
}

std::string GraphiteOutput::connectionLost() {
  int error = 0;
  socklen_t len = sizeof(error);
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error != 0) {
    return std::string("connection failed: ") + std::strerror(error);
  }
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) {
    return "";
  }
  char buffer[4096];
  for (int reads = 0; reads < 16; ++reads) {
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      continue; // carbon does not write; whatever this is, it is not an answer
    }
    if (n == 0) {
      return "connection closed by carbon";
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      break;
    }
    return std::string("connection failed: ") + std::strerror(errno);
  }
  return (p.revents & (POLLHUP | POLLERR)) != 0 ? "connection hung up" : "";
}

void GraphiteOutput::lose(const std::string &why) {
  failures_.add();
  problem(why + "; " + std::to_string(unconfirmed_.size()) +
          " interval(s) written on it not confirmed, to be sent again");
  requeue(unconfirmed_);
}

void GraphiteOutput::requeue(std::deque<std::string> &intervals) {
  std::lock_guard lock(mutex_);
  for (auto it = intervals.rbegin(); it != intervals.rend(); ++it) {
    pending_.push_front(std::move(*it));
  }
  intervals.clear();
  while (pending_.size() > kMaxPending) {
    pending_.pop_front(); // the oldest go, as in publish()
    dropped_.add();
  }
}

std::string GraphiteOutput::connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  const std::string service = std::to_string(options_.port);
  if (const int rc = ::getaddrinfo(options_.host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return ::gai_strerror(rc);
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo *ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof(error);
      if (::poll(&p, 1, kTimeoutMs) != 1) {
        why = "no answer within " + std::to_string(kTimeoutMs) + " ms";
      } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0) {
        fd_ = fd;
        return "";
      } else {
        why = std::strerror(error);
      }
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
  }
  return why;
}

std::string GraphiteOutput::sendAll(const std::string &text) {
  size_t offset = 0;
  while (offset < text.size()) {
    const ssize_t n = ::send(fd_, text.data() + offset, text.size() - offset, MSG_NOSIGNAL);
    if (n > 0) {
      offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, kTimeoutMs) == 1) {
        continue;
      }
      return "carbon took nothing for " + std::to_string(kTimeoutMs) + " ms";
    }
    return n < 0 ? std::strerror(errno) : "nothing written";
  }
  return "";
}

void GraphiteOutput::disconnect() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void GraphiteOutput::problem(const std::string &what) {
  troubled_ = true;
  try {
    if (!problemLog_.allow(monotonicNs())) {
      problemLog_.last = what;
      return;
    }
    if (problemLog_.suppressed > 0) {
      log_.warn("Graphite {}:{}: {} ({} similar Graphite messages suppressed in the last {:g} s)",
                options_.host, options_.port, what, problemLog_.suppressed,
                static_cast<double>(problemLog_.intervalNs) / 1e9);
      problemLog_.suppressed = 0;
    } else {
      log_.warn("Graphite {}:{}: {}; keeping up to {} intervals and retrying (counted in "
                "graphite.failures)",
                options_.host, options_.port, what, kMaxPending);
    }
  } catch (...) {
    // Logging must never end the sender thread.
  }
}

void GraphiteOutput::recovered() {
  if (!troubled_) {
    return;
  }
  troubled_ = false;
  // Through the same limit: a carbon that flaps between taking and resetting connections
  // would otherwise log a pair of lines per interval.
  try {
    const std::string what = "sending again";
    if (!problemLog_.allow(monotonicNs())) {
      problemLog_.last = what;
      return;
    }
    log_.info("Graphite {}:{}: {}", options_.host, options_.port, what);
  } catch (...) {
  }
}

void GraphiteOutput::reportSuppressed() {
  if (!problemLog_.dueReport(monotonicNs())) {
    return;
  }
  try {
    log_.warn("Graphite {}:{}: {} further messages in the last {:g} s were not logged (the last "
              "was: {})",
              options_.host, options_.port, problemLog_.suppressed,
              static_cast<double>(problemLog_.intervalNs) / 1e9, problemLog_.last);
  } catch (...) {
  }
  problemLog_.reported();
}

} // namespace efu
