// SPDX-License-Identifier: BSD-2-Clause
// Graphite plaintext sender: one connection, kept open, re-established with back-off.
#include "efu/GraphiteOutput.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

namespace efu {
namespace {

constexpr int kTimeoutMs = 2000;
constexpr auto kFirstBackoff = std::chrono::seconds(1);
constexpr auto kMaxBackoff = std::chrono::seconds(30);

} // namespace

GraphiteOutput::GraphiteOutput(GraphiteOptions options, Stats &stats, spdlog::logger &log)
    : options_(std::move(options)), stats_(stats), log_(log), sent_(stats.add("graphite.sent")),
      failures_(stats.add("graphite.failures")), dropped_(stats.add("graphite.dropped")) {
  thread_ = std::thread([this] { run(); });
}

GraphiteOutput::~GraphiteOutput() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  disconnect();
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
  wake_.notify_one();
}

void GraphiteOutput::run() {
  auto backoff = std::chrono::steady_clock::duration(kFirstBackoff);
  bool troubled = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !pending_.empty(); });
    if (stop_) {
      return;
    }
    const std::string text = pending_.front();
    lock.unlock();
    if (fd_ >= 0 && peerClosed()) {
      disconnect(); // carbon restarted or dropped us while idle: write to a fresh connection
    }
    const bool ok = (fd_ >= 0 || connect()) && sendAll(text);
    lock.lock();
    if (ok) {
      pending_.pop_front();
      sent_.add();
      if (troubled) {
        log_.info("Graphite {}:{}: sending again", options_.host, options_.port);
        troubled = false;
      }
      backoff = kFirstBackoff;
      continue;
    }
    failures_.add();
    disconnect();
    if (!troubled) {
      log_.warn("Graphite {}:{} unreachable: keeping up to {} intervals and retrying (counted "
                "in graphite.failures)",
                options_.host, options_.port, kMaxPending);
      troubled = true;
    }
    wake_.wait_for(lock, backoff, [this] { return stop_; });
    backoff = std::min<std::chrono::steady_clock::duration>(backoff * 2, kMaxBackoff);
  }
}

bool GraphiteOutput::connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  const std::string service = std::to_string(options_.port);
  if (::getaddrinfo(options_.host.c_str(), service.c_str(), &hints, &found) != 0) {
    return false;
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  for (const addrinfo *ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      continue;
    }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof(error);
      if (::poll(&p, 1, kTimeoutMs) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0) {
        fd_ = fd;
        return true;
      }
    }
    ::close(fd);
  }
  return false;
}

bool GraphiteOutput::sendAll(const std::string &text) {
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
    }
    return false; // a partial interval is resent whole after reconnecting: carbon keeps the last
  }
  return true;
}

bool GraphiteOutput::peerClosed() {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) {
    return false;
  }
  char byte = 0;
  return ::recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) <= 0; // EOF or error (carbon never writes)
}

void GraphiteOutput::disconnect() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

} // namespace efu
