// SPDX-License-Identifier: BSD-2-Clause
// GET /metrics over HTTP: one thread, poll(2) over non-blocking sockets, one response each.
#include "efu/metrics/MetricsServer.h"

#include "common/system/Affinity.h"
#include "common/time/Time.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace efu::metrics {
namespace {

constexpr int kListenBacklog = 16;
constexpr size_t kChunkBytes = 4096;
/// After the response, the rest of what the client sends is read and dropped (closing with
/// unread input would reset the connection and could destroy the response in flight), up to
/// this much.
constexpr size_t kMaxDrainBytes = 64 * 1024;
constexpr std::string_view kExpositionType = "text/plain; version=0.0.4";
constexpr std::string_view kTextType = "text/plain; charset=utf-8";

std::string_view reason(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 400:
    return "Bad Request";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 408:
    return "Request Timeout";
  case 431:
    return "Request Header Fields Too Large";
  case 503:
    return "Service Unavailable";
  default:
    return "Error";
  }
}

std::string response(int status, std::string_view contentType, std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + ' ' + std::string(reason(status)) +
                    "\r\nContent-Type: " + std::string(contentType) +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n";
  if (status == 405) {
    out += "Allow: GET\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

/// Where the request head ends (after the empty line), or npos. Bare LF line ends are accepted.
size_t headEnd(const std::string &data) {
  const size_t crlf = data.find("\r\n\r\n");
  const size_t lf = data.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) {
    return std::string::npos;
  }
  return crlf < lf ? crlf + 4 : lf + 2;
}

} // namespace

MetricsServer::MetricsServer(Stats &stats, MetricsServerOptions options)
    : stats_(stats), options_(std::move(options)), scrapes_(stats.add("metrics.scrapes")),
      errors_(stats.add("metrics.errors")), evicted_(stats.add("metrics.clients.evicted")),
      listener_("metrics server", options_.address, options_.port, kListenBacklog),
      clients_(options_.maxClients, 0) {
  wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "metrics server: eventfd");
  }
  thread_ = std::thread([this] { run(); });
}

MetricsServer::~MetricsServer() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wakeFd_, &one, sizeof(one));
  thread_.join();
  ::close(wakeFd_); // the client table closes the clients
}

void MetricsServer::run() {
  nameCurrentThread("efu-metrics");
  std::vector<pollfd> fds;
  std::vector<Client> &clients = clients_.clients();
  for (;;) {
    const int64_t nowNs = monotonicNs();
    int timeoutMs = -1;
    fds.clear();
    fds.push_back({wakeFd_, POLLIN, 0});
    fds.push_back({listener_.fd(), POLLIN, 0});
    for (const Client &client : clients) {
      const short events = client.phase == Phase::Response ? POLLOUT : POLLIN;
      fds.push_back({client.fd, events, 0});
      const int64_t leftMs = std::max<int64_t>(0, (client.deadlineNs - nowNs) / kNsPerMs + 1);
      timeoutMs =
          timeoutMs < 0 ? static_cast<int>(leftMs) : std::min(timeoutMs, static_cast<int>(leftMs));
    }
    if (::poll(fds.data(), fds.size(), timeoutMs) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return; // only EFAULT/EINVAL/ENOMEM: nothing to serve with; the daemon goes on
    }
    if (fds[0].revents != 0) {
      return; // stop
    }
    for (size_t i = 0; i < clients.size(); ++i) {
      Client &client = clients[i];
      if (fds[i + 2].revents != 0) {
        switch (client.phase) {
        case Phase::Request:
          read(client);
          break;
        case Phase::Response:
          write(client);
          break;
        case Phase::Drain:
          drain(client);
          break;
        }
      }
      expire(client, monotonicNs());
    }
    clients_.sweep();
    if ((fds[1].revents & POLLIN) != 0) {
      accept();
    }
  }
}

void MetricsServer::accept() {
  for (;;) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) {
        continue;
      }
      return; // EAGAIN: none left; EMFILE and friends: try again on the next round
    }
    // With every place taken, the connection quiet longest makes room. One still to send its
    // request is told so (best effort, never waiting: the answer goes out if its socket buffer
    // takes it); one being answered or already answered just goes.
    const int64_t nowNs = monotonicNs();
    bool evicted = false;
    bool answered = false;
    Client &client = clients_.admit(
        fd, nowNs,
        [&answered](const Client &quietest) {
          if (quietest.phase != Phase::Request) {
            return;
          }
          const std::string busy =
              response(503, kTextType, "too many connections: closed to serve a newer one\n");
          [[maybe_unused]] const ssize_t sent =
              ::send(quietest.fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          answered = true;
        },
        evicted);
    if (evicted) {
      evicted_.add();
    }
    if (answered) {
      errors_.add();
    }
    client.deadlineNs = nowNs + options_.timeoutMs * kNsPerMs;
  }
}

void MetricsServer::read(Client &client) {
  std::array<char, kChunkBytes> buffer;
  for (;;) {
    const ssize_t got = ::recv(client.fd, buffer.data(), buffer.size(), 0);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    }
    if (got <= 0) {
      client.dead = true; // gone before a whole request: nobody to answer
      return;
    }
    client.lastActiveNs = monotonicNs();
    client.data.append(buffer.data(), static_cast<size_t>(got));
    const size_t end = headEnd(client.data);
    if (end != std::string::npos && end <= options_.maxRequestBytes) {
      client.data.resize(end);
      handle(client);
      return;
    }
    if (client.data.size() > options_.maxRequestBytes) {
      respond(client, 431,
              "request longer than " + std::to_string(options_.maxRequestBytes) + " bytes\n");
      return;
    }
  }
}

void MetricsServer::handle(Client &client) {
  // Request line: METHOD SP TARGET SP HTTP/1.x
  std::string_view line(client.data);
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  const size_t firstSpace = line.find(' ');
  const size_t secondSpace =
      firstSpace == std::string_view::npos ? firstSpace : line.find(' ', firstSpace + 1);
  if (secondSpace == std::string_view::npos ||
      line.find(' ', secondSpace + 1) != std::string_view::npos || firstSpace == 0 ||
      secondSpace == firstSpace + 1 || !line.substr(secondSpace + 1).starts_with("HTTP/1.") ||
      line.size() != secondSpace + 9 || line.back() < '0' || line.back() > '9') {
    respond(client, 400, "malformed request line\n");
    return;
  }
  const std::string_view method = line.substr(0, firstSpace);
  const std::string_view target = line.substr(firstSpace + 1, secondSpace - firstSpace - 1);
  if (method != "GET") {
    respond(client, 405, "only GET is served\n");
    return;
  }
  if (target.substr(0, target.find('?')) != "/metrics") {
    respond(client, 404, "only /metrics is served\n");
    return;
  }
  respond(client, 200, exposition(stats_.snapshot(), options_.labels));
}

void MetricsServer::respond(Client &client, int status, std::string_view body) {
  client.data = response(status, status == 200 ? kExpositionType : kTextType, body);
  client.sent = 0;
  client.phase = Phase::Response;
  client.deadlineNs = monotonicNs() + options_.timeoutMs * kNsPerMs;
  if (status == 200) {
    scrapes_.add();
  } else {
    errors_.add();
  }
  write(client);
}

void MetricsServer::write(Client &client) {
  while (client.sent < client.data.size()) {
    const ssize_t sent = ::send(client.fd, client.data.data() + client.sent,
                                client.data.size() - client.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno == EINTR) {
      continue;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return; // the rest when poll says the socket takes more
    }
    if (sent < 0) {
      client.dead = true; // EPIPE, ECONNRESET: the reader is gone
      return;
    }
    client.sent += static_cast<size_t>(sent);
    client.lastActiveNs = monotonicNs();
  }
  client.data.clear();
  ::shutdown(client.fd, SHUT_WR); // the response is complete: the client sees EOF
  client.phase = Phase::Drain;
  drain(client);
}

void MetricsServer::drain(Client &client) {
  std::array<char, kChunkBytes> buffer;
  for (;;) {
    const ssize_t got = ::recv(client.fd, buffer.data(), buffer.size(), 0);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    }
    client.drained += got > 0 ? static_cast<size_t>(got) : 0;
    if (got <= 0 || client.drained > kMaxDrainBytes) {
      client.dead = true; // closed by the client (or it keeps sending): done
      return;
    }
  }
}

void MetricsServer::expire(Client &client, int64_t nowNs) {
  if (client.dead || nowNs < client.deadlineNs) {
    return;
  }
  if (client.phase == Phase::Request) {
    respond(client, 408,
            "request not complete within " + std::to_string(options_.timeoutMs) + " ms\n");
    // A client that does not read gets at most one more timeout in Response.
  } else {
    client.dead = true;
  }
}

} // namespace efu::metrics
