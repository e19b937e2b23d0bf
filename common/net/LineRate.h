// SPDX-License-Identifier: BSD-2-Clause
// Ethernet line-rate arithmetic (Table 1 of Christensen and Richter's UDP paper, named in
// docs/performance.md; docs/wire-formats.md §6) and a bit-rate parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// Bytes a UDP/IPv4 datagram adds around its user data inside an Ethernet frame:
/// UDP 8 + IP 20 + Ethernet header 14 + FCS 4.
inline constexpr uint32_t kEthFrameOverheadBytes = 8 + 20 + 14 + 4;
/// Smallest Ethernet frame (header + payload + FCS); shorter frames are padded.
inline constexpr uint32_t kEthMinFrameBytes = 64;
/// Inter-frame gap (12) plus preamble and start-of-frame delimiter (8), per frame on the wire.
inline constexpr uint32_t kEthIfgPreambleBytes = 20;

/// One row of the paper's Table 1: what a link can carry for one user-data size.
struct LineRateRow {
  uint32_t userBytes = 0;      ///< UDP payload (user data) per datagram.
  uint32_t frameBytes = 0;     ///< Ethernet frame incl. headers, FCS and padding (>= 64).
  uint32_t wireBytes = 0;      ///< frameBytes + 20 (IFG + preamble): wire time per frame.
  double overheadPct = 0.0;    ///< Share of wire time that is not user data, in percent.
  double framesPerSec = 0.0;   ///< Maximum frame (= datagram) rate at the link speed.
  double userBitsPerSec = 0.0; ///< Maximum user-data rate at the link speed.
};

/// Table 1 arithmetic for `userBytes` of UDP payload on a link of `linkBitsPerSec` (> 0),
/// assuming one datagram per frame (no IP fragmentation).
LineRateRow lineRate(uint32_t userBytes, double linkBitsPerSec) noexcept;

/// The paper's Table 1 user-data sizes: 1 18 82 210 466 978 1472 8972.
std::vector<uint32_t> paperTable1UserSizes();

/// An aligned text table (one header line, one line per size) of lineRate() for each size,
/// titled with the link speed. Ends with a newline.
std::string formatLineRateTable(const std::vector<uint32_t> &userSizes, double linkBitsPerSec);

/// Parses a bit rate: a non-negative decimal number with an optional SI suffix
/// k/K (1e3), M (1e6), G (1e9), T (1e12), optionally followed by "b/s", "bps" or "bit/s";
/// e.g. "10G", "500M", "1.5G", "123456", "2k". Returns bits per second.
/// Throws std::invalid_argument naming the text when it is not such a rate.
double parseBitRate(std::string_view text);

/// Formats bits per second with an SI suffix and 3 significant decimals, e.g. "9.930 Gb/s".
std::string formatBitRate(double bitsPerSec);

} // namespace efu
