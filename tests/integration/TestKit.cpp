// SPDX-License-Identifier: BSD-2-Clause
// Helpers for integration tests: real child processes, free ports, a control-port client.
#include "tests/integration/TestKit.h"

#include "common/time/Time.h"

#include <algorithm>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace efu::testkit {

Process::Process(std::vector<std::string> argv, const std::vector<int> &pendingSignals) {
  char pattern[] = "/tmp/efu-test-output-XXXXXX";
  const int outFd = mkstemp(pattern);
  if (outFd < 0) {
    throw std::runtime_error("mkstemp failed");
  }
  outputPath_ = pattern;
  pid_ = fork();
  if (pid_ < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    dup2(outFd, STDOUT_FILENO);
    dup2(outFd, STDERR_FILENO);
    const int devNull = open("/dev/null", O_RDONLY);
    dup2(devNull, STDIN_FILENO);
    if (!pendingSignals.empty()) {
      sigset_t blocked;
      sigemptyset(&blocked);
      for (const int sig : pendingSignals) {
        sigaddset(&blocked, sig);
      }
      sigprocmask(SIG_BLOCK, &blocked, nullptr);
      for (const int sig : pendingSignals) {
        kill(getpid(), sig);
      }
    }
    std::vector<char *> args;
    for (auto &arg : argv) {
      args.push_back(arg.data());
    }
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "execv %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(outFd);
}

Process::~Process() {
  if (running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(outputPath_.c_str());
}

void Process::signal(int sig) const { kill(pid_, sig); }

bool Process::running() {
  if (exitCode_ || pid_ <= 0) {
    return false;
  }
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  eventually([this] { return !running(); }, timeout);
  return exitCode_;
}

std::string Process::output() const {
  std::ifstream in(outputPath_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

DevBroker::DevBroker(const std::string &binary, const std::vector<std::string> &extraArgs) {
  char pattern[] = "/tmp/efu-test-broker-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  dir_ = pattern;
  const std::string file = dir_ + "/bootstrap";
  std::vector<std::string> argv{binary, "--bootstrap-file", file};
  argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
  process_ = std::make_unique<Process>(argv);
  eventually([&] {
    std::ifstream in(file);
    return (std::getline(in, bootstrap_) && !bootstrap_.empty()) || !process_->running();
  });
  if (bootstrap_.empty()) {
    throw std::runtime_error("efu-broker did not start: " + process_->output());
  }
}

std::optional<int> DevBroker::stop() {
  if (!process_->running()) {
    return process_->wait(std::chrono::milliseconds(0));
  }
  process_->signal(SIGTERM);
  return process_->wait(std::chrono::seconds(30));
}

DevBroker::~DevBroker() {
  stop();
  std::filesystem::remove_all(dir_);
}

namespace {
/// A port the kernel gives to a socket bound to port 0, released at once. The kernel may give the
/// same port again to the next such call (a test asks for a control, a metrics and a Graphite
/// port one after the other), so a port is not handed out twice in one process.
uint16_t freePort(int type) {
  static std::mutex mutex;
  static std::set<std::pair<int, uint16_t>> handedOut;
  const std::lock_guard<std::mutex> lock(mutex);
  uint16_t port = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = socket(AF_INET, type, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
    socklen_t length = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &length);
    close(fd);
    port = ntohs(addr.sin_port);
    if (handedOut.insert({type, port}).second) {
      break;
    }
  }
  return port;
}

/// A TCP connection to 127.0.0.1:port with a 5 s receive timeout; -1 when it fails.
int connectLoopback(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}
} // namespace

uint16_t freeUdpPort() { return freePort(SOCK_DGRAM); }
uint16_t freeTcpPort() { return freePort(SOCK_STREAM); }

std::string control(uint16_t port, const std::string &line) {
  const int fd = connectLoopback(port);
  if (fd < 0) {
    return {};
  }
  const std::string request = line + "\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    close(fd);
    return {};
  }
  // One reply line per request line, joined by "\n".
  const auto lines = std::count(request.begin(), request.end(), '\n');
  std::string reply;
  char c = 0;
  for (auto seen = 0; seen < lines && recv(fd, &c, 1, 0) == 1;) {
    if (c == '\n' && ++seen == lines) {
      break;
    }
    reply += c;
  }
  close(fd);
  if (!reply.empty() && reply.back() == '\n') {
    reply.pop_back(); // closed by the server before the last reply
  }
  return reply;
}

std::string tcpExchange(uint16_t port, const std::string &request, bool halfClose) {
  const int fd = connectLoopback(port);
  if (fd < 0) {
    return {};
  }
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      break; // the server may answer (and close) before taking all of an over-long request
    }
    sent += static_cast<size_t>(n);
  }
  if (halfClose) {
    shutdown(fd, SHUT_WR);
  }
  std::string reply;
  char buffer[4096];
  for (ssize_t got; (got = recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    reply.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return reply;
}

std::string HttpResponse::header(const std::string &name) const {
  auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
  };
  std::istringstream lines(head);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    const auto colon = line.find(':');
    if (colon != std::string::npos && lower(line.substr(0, colon)) == lower(name)) {
      const auto start = line.find_first_not_of(' ', colon + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    }
  }
  return {};
}

HttpResponse parseHttpResponse(const std::string &raw) {
  HttpResponse response;
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos || raw.size() < 12) {
    return response;
  }
  response.status = std::atoi(raw.substr(9, 3).c_str());
  response.head = raw.substr(0, end);
  response.body = raw.substr(end + 4);
  return response;
}

HttpResponse httpGet(uint16_t port, const std::string &target) {
  return parseHttpResponse(
      tcpExchange(port, "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"));
}

bool eventually(const std::function<bool()> &condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return condition();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::optional<int64_t> counter(uint16_t cmdPort, const std::string &name) {
  const std::string reply = control(cmdPort, "STAT_GET_NAME " + name);
  const std::string prefix = "STAT_GET_NAME " + name + " ";
  if (reply.rfind(prefix, 0) != 0) {
    return std::nullopt;
  }
  return std::stoll(reply.substr(prefix.size()));
}

UdpSender::UdpSender() : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {}
UdpSender::~UdpSender() { close(fd_); }

void UdpSender::send(uint16_t port, const void *data, size_t size) const {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd_, data, size, 0, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
}

void UdpSender::sendSequence(uint16_t port, uint64_t seq, size_t size) const {
  std::vector<uint8_t> buffer(size, 0);
  std::memcpy(buffer.data(), &seq, std::min<size_t>(8, size));
  if (size >= 16) {
    const int64_t now = realtimeNs();
    std::memcpy(buffer.data() + 8, &now, 8);
  }
  send(port, buffer.data(), buffer.size());
}

} // namespace efu::testkit
