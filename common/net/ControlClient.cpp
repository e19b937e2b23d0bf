// SPDX-License-Identifier: BSD-2-Clause
// A client of efu's control port (docs/control.md): command lines in, reply lines out.
#include "common/net/ControlClient.h"

#include "common/system/StopSignals.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace efu {

namespace {

/// Waits for `events` on `fd` for at most `timeoutMs`, in slices of 100 ms so that a stop signal
/// (which may be delivered to another thread) ends the wait within 100 ms. Returns the poll
/// result: 1 ready, 0 timed out or stopped (stopped() then tells), -1 error.
int waitFor(int fd, short events, int timeoutMs) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (stopSignal() == 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      return 0;
    }
    pollfd pfd{fd, events, 0};
    const int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (r != 0 && !(r < 0 && errno == EINTR)) {
      return r;
    }
  }
  return 0;
}

} // namespace

bool ControlReply::append(std::string_view bytes) {
  if (bytes.size() > max_ - text_.size()) {
    return false;
  }
  text_.append(bytes);
  // Only the new bytes: the reply so far has been searched already.
  lineEnds_ += static_cast<size_t>(
      std::count(text_.begin() + static_cast<std::ptrdiff_t>(scanned_), text_.end(), '\n'));
  scanned_ = text_.size();
  return true;
}

std::vector<std::string> ControlReply::lines() const {
  std::vector<std::string> lines;
  for (size_t start = 0; lines.size() < expected_ && start <= text_.size();) {
    size_t end = text_.find('\n', start);
    if (end == std::string::npos) {
      end = text_.size();
    }
    std::string line = text_.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> controlExchange(const std::string &address, uint16_t port,
                                         const std::vector<std::string> &commands, int timeoutMs,
                                         size_t maxReplyBytes) {
  const std::string where = address + ":" + std::to_string(port);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
    throw ControlError("bad IPv4 address '" + address + "' for efu's control port");
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    throw ControlError(std::string("cannot create a TCP socket: ") + std::strerror(errno));
  }
  // Connect without blocking: an address that does not answer costs timeoutMs, not the
  // kernel's SYN retries, and a stop signal ends the wait.
  int error = 0;
  if (connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof(to)) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      socklen_t len = sizeof(error);
      error = waitFor(fd, POLLOUT, timeoutMs) == 1 &&
                      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0
                  ? error
                  : ETIMEDOUT;
    }
  }
  if (error != 0) {
    close(fd);
    if (stopSignal() != 0) {
      throw ControlError("stopped while connecting to efu's control port " + where);
    }
    throw ControlError("cannot reach efu's control port " + where + ": " + std::strerror(error) +
                       " (is efu running with -m " + std::to_string(port) + "?)");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); // the rest waits through waitFor()
  std::string request;
  for (const std::string &command : commands) {
    request += command + '\n';
  }
  ControlReply reply(commands.size(), maxReplyBytes);
  bool ok = send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size());
  bool tooLong = false;
  std::vector<char> buffer(64 * 1024);
  while (ok && !reply.complete()) {
    ssize_t got = 0;
    ok = waitFor(fd, POLLIN, timeoutMs) == 1 &&
         (got = recv(fd, buffer.data(), buffer.size(), 0)) > 0;
    if (ok && !reply.append(std::string_view(buffer.data(), static_cast<size_t>(got)))) {
      ok = false;
      tooLong = true;
    }
  }
  close(fd);
  const std::string asked = "'" + commands.front() + "'" + (commands.size() > 1 ? " ..." : "");
  if (tooLong) {
    throw ControlError("efu's control port " + where + " answered " + asked + " with more than " +
                       std::to_string(maxReplyBytes) +
                       " bytes, more than any reply of efu's; not read further");
  }
  if (!ok && stopSignal() != 0) {
    throw ControlError("stopped while waiting for efu's control port " + where + " to answer " +
                       asked);
  }
  if (!ok) {
    throw ControlError("efu's control port " + where + " did not answer " + asked);
  }
  return reply.lines();
}

int64_t controlCounter(const std::string &address, uint16_t port, const std::string &name) {
  const std::string line = controlExchange(address, port, {"STAT_GET_NAME " + name}).front();
  const std::string prefix = "STAT_GET_NAME " + name + ' ';
  try {
    if (line.rfind(prefix, 0) == 0) {
      return std::stoll(line.substr(prefix.size()));
    }
  } catch (const std::exception &) {
  }
  throw ControlError("efu at " + address + ":" + std::to_string(port) + " answered '" + line +
                     "' to STAT_GET_NAME " + name);
}

} // namespace efu
