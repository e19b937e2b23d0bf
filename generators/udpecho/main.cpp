// SPDX-License-Identifier: BSD-2-Clause
// udpecho: sends every UDP datagram back to its sender, unchanged (the peer of udpgen --rr).
#include "common/net/UdpSocket.h"
#include "common/system/Affinity.h"
#include "common/system/CliExit.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"

#include <CLI/CLI.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::string address = "127.0.0.1";
  uint16_t port = 9000;
  uint64_t count = 0;
  int cpu = -1;
  CLI::App app{"udpecho: sends every UDP datagram back to its sender, unchanged (the responder "
               "of udpgen --rr)."};
  app.add_option("-i,--dip", address, "IPv4 address to receive on")->capture_default_str();
  app.add_option("-p,--port", port, "UDP port to receive on")->capture_default_str();
  app.add_option("-n,--count", count, "Datagrams to echo before exiting (0 = unlimited)")
      ->capture_default_str();
  app.add_option("--cpu", cpu, "Pin the thread to this core (-1 = not pinned)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 4095));
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }

  efu::installStopSignals();
  if (const std::string error = efu::pinCurrentThread(cpu); !error.empty()) {
    std::fprintf(stderr, "udpecho: %s; running unpinned\n", error.c_str());
  }
  efu::net::UdpSocket socket;
  try {
    socket = efu::net::UdpSocket::boundTo(address, port);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "udpecho: %s\n", e.what());
    return 1;
  }
  const int fd = socket.fd();
  // A blocking receive (one system call per datagram, as a latency peer should) that returns
  // every 50 ms, so a stop signal is noticed (Time.h's kStopCheckNs).
  const timeval timeout{0, static_cast<suseconds_t>(efu::kStopCheckNs / efu::kNsPerUs)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::fprintf(stderr, "udpecho: echoing on %s:%u\n", address.c_str(), port);
  std::vector<uint8_t> buffer(65536);
  uint64_t echoed = 0;
  uint64_t errors = 0;
  while (!efu::stopFlag().load() && (count == 0 || echoed < count)) {
    sockaddr_in from{};
    socklen_t fromLen = sizeof(from);
    const ssize_t got = recvfrom(fd, buffer.data(), buffer.size(), 0,
                                 reinterpret_cast<sockaddr *>(&from), &fromLen);
    if (got < 0) {
      continue;
    }
    if (sendto(fd, buffer.data(), static_cast<size_t>(got), 0,
               reinterpret_cast<const sockaddr *>(&from), fromLen) < 0) {
      ++errors;
    } else {
      ++echoed;
    }
  }
  close(fd);
  std::fprintf(stderr, "udpecho: echoed %llu datagrams, %llu send errors\n",
               static_cast<unsigned long long>(echoed), static_cast<unsigned long long>(errors));
  return 0;
}
