// SPDX-License-Identifier: BSD-2-Clause
// udpgen's command-line options: one struct, registered on a CLI11 app with the real defaults.
#pragma once

#include "common/system/CliFwd.h"

#include <cstdint>
#include <string>

namespace efu::udpgen {

/// Smallest payload: the 8-byte sequence number (docs/wire-formats.md §1).
inline constexpr uint32_t kMinSizeBytes = 8;
/// Largest UDP/IPv4 payload: 65535 - 20 (IP) - 8 (UDP).
inline constexpr uint32_t kMaxSizeBytes = 65507;
/// Kernel limit on messages per sendmmsg call (UIO_MAXIOV).
inline constexpr uint32_t kMaxBatch = 1024;

/// Everything udpgen can be told. Rates are already converted to bits/s by the CLI transform.
struct UdpGenOptions {
  std::string address = "127.0.0.1"; ///< Destination IPv4 address.
  uint16_t port = 9000;              ///< Destination UDP port.
  uint32_t sizeBytes = 8972;         ///< User data (UDP payload) per datagram.
  double rateBps = 0.0;              ///< Offered user-data rate in bits/s; 0 = unpaced.
  uint64_t pps = 0;                  ///< Offered datagram rate; 0 = unpaced.
  double spacingUs = 0.0;            ///< --spacing: µs from one group's start to the next; 0 = off.
  uint32_t burst = 1;                ///< --burst: datagrams sent back to back per --spacing.
  bool requestResponse = false;      ///< --rr: one datagram at a time, wait for its echo.
  uint32_t rrTimeoutMs = 1000;       ///< --rr-timeout: wait this long for one echo.
  std::string sweep;                 ///< --sweep FROM:TO:STEP (µs); "" = no sweep.
  uint16_t cmdPort = 0;              ///< -m/--cmdport: the receiving efu's control port, 0 = none.
  uint64_t count = 0;                ///< Datagrams (sequence numbers) to send; 0 = unlimited.
  double durationS = 0.0;            ///< --stopafter: run time in seconds; 0 = unlimited.
  int cpu = -1;                      ///< Core to pin the sending thread to; -1 = not pinned.
  uint32_t batch = 64;               ///< Messages per sendmmsg call.
  uint32_t gso = 0;                  ///< Datagrams per message with UDP_SEGMENT; 0 = off.
  uint64_t sndbufBytes = 0;          ///< SO_SNDBUF request; 0 = kernel default.
  bool json = false;                 ///< Final summary as one JSON line on stdout.
  bool quiet = false;                ///< No per-second progress lines.
  bool theory = false;               ///< Print the line-rate table and exit.
  double linkBps = 10e9;             ///< Link speed for --theory, bits/s.
  std::string pcapPath;              ///< --pcap: replay this capture instead of generating.
  std::string pcapFilter = "udp";    ///< --pcap-filter: BPF expression for the capture.
  double speed = 1.0;                ///< --speed: capture timing factor (0 = unpaced).
  uint64_t loops = 1;                ///< --loop: passes over the capture (0 = until stopped).

  /// Datagrams per second implied by --bitrate or --pps; 0 when unpaced.
  [[nodiscard]] double targetPps() const noexcept {
    if (spacingUs > 0.0) {
      return static_cast<double>(burst) * 1e6 / spacingUs;
    }
    if (pps > 0) {
      return static_cast<double>(pps);
    }
    return rateBps > 0.0 ? rateBps / (8.0 * static_cast<double>(sizeBytes)) : 0.0;
  }
};

/// Registers every udpgen option on `app`, bound to `options` (whose values are the defaults
/// shown by --help). Parse errors name the offending value.
void addUdpGenOptions(CLI::App &app, UdpGenOptions &options);

} // namespace efu::udpgen
