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

std::vector<std::string> controlExchange(const std::string &address, uint16_t port,
                                         const std::vector<std::string> &commands,
                                         int timeoutMs) {
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
  std::string reply;
  bool ok = send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size());
  while (ok && static_cast<size_t>(std::count(reply.begin(), reply.end(), '\n')) <
                   commands.size()) {
    pollfd pfd{fd, POLLIN, 0};
    char buffer[4096];
    ssize_t got = 0;
    ok = poll(&pfd, 1, timeoutMs) == 1 && (got = recv(fd, buffer, sizeof(buffer), 0)) > 0;
    reply.append(buffer, ok ? static_cast<size_t>(got) : 0);
  }
  close(fd);
  if (!ok) {
    throw ControlError("efu's control port " + where + " did not answer '" + commands.front() +
                       "'" + (commands.size() > 1 ? " ..." : ""));
  }
  std::vector<std::string> lines;
  for (size_t start = 0; lines.size() < commands.size();) {
    const size_t end = reply.find('\n', start);
    std::string line = reply.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
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
