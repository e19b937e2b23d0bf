// SPDX-License-Identifier: BSD-2-Clause
// A client of efu's control port (docs/control.md): command lines in, reply lines out.
#include "common/net/ControlClient.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace efu {

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
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw ControlError(std::string("cannot create a TCP socket: ") + std::strerror(errno));
  }
  if (connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof(to)) != 0) {
    const int error = errno;
    close(fd);
    throw ControlError("cannot reach efu's control port " + where + ": " + std::strerror(error) +
                       " (is efu running with -m " + std::to_string(port) + "?)");
  }
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
    pollfd pfd{fd, POLLIN, 0};
    ssize_t got = 0;
    ok = poll(&pfd, 1, timeoutMs) == 1 && (got = recv(fd, buffer.data(), buffer.size(), 0)) > 0;
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
