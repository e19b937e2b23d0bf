// SPDX-License-Identifier: BSD-2-Clause
// Ethernet line-rate arithmetic (Table 1 of Christensen and Richter's UDP paper, named in
// docs/performance.md; docs/wire-formats.md §6) and a bit-rate parser.
#include "common/net/LineRate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace efu {

LineRateRow lineRate(uint32_t userBytes, double linkBitsPerSec) noexcept {
  LineRateRow row;
  row.userBytes = userBytes;
  row.frameBytes = std::max(userBytes + kEthFrameOverheadBytes, kEthMinFrameBytes);
  row.wireBytes = row.frameBytes + kEthIfgPreambleBytes;
  const double wire = static_cast<double>(row.wireBytes);
  row.overheadPct = 100.0 * (wire - static_cast<double>(userBytes)) / wire;
  row.framesPerSec = linkBitsPerSec / (8.0 * wire);
  row.userBitsPerSec = row.framesPerSec * 8.0 * static_cast<double>(userBytes);
  return row;
}

std::vector<uint32_t> paperTable1UserSizes() {
  return {1, 18, 82, 210, 466, 978, 1472, 8972};
}

std::string formatBitRate(double bitsPerSec) {
  static constexpr struct {
    double scale;
    const char *unit;
  } kUnits[] = {{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}};
  char text[64];
  for (const auto &unit : kUnits) {
    if (bitsPerSec >= unit.scale) {
      std::snprintf(text, sizeof(text), "%.3f %s", bitsPerSec / unit.scale, unit.unit);
      return text;
    }
  }
  std::snprintf(text, sizeof(text), "%.3f b/s", bitsPerSec);
  return text;
}

std::string formatLineRateTable(const std::vector<uint32_t> &userSizes, double linkBitsPerSec) {
  std::string out = "Line rate for UDP/IPv4 over Ethernet at " + formatBitRate(linkBitsPerSec) +
                    " (frame = user + 46 B, padded to >= 64 B; + 20 B IFG/preamble)\n";
  // Mpps and Gb/s read like the paper at 1 Gb/s and above; slower links get kpps and Mb/s.
  const bool fast = linkBitsPerSec >= 1e9;
  const double rateScale = fast ? 1e6 : 1e3;
  const double bitScale = fast ? 1e9 : 1e6;
  char line[160];
  std::snprintf(line, sizeof(line), "%14s %10s %13s %18s %21s\n", "User data [B]", "Frame [B]",
                "Overhead [%]", fast ? "Frame rate [Mpps]" : "Frame rate [kpps]",
                fast ? "Max user data [Gb/s]" : "Max user data [Mb/s]");
  out += line;
  for (const uint32_t size : userSizes) {
    const LineRateRow row = lineRate(size, linkBitsPerSec);
    std::snprintf(line, sizeof(line), "%14u %10u %13.1f %18.3f %21.3f\n", row.userBytes,
                  row.frameBytes, row.overheadPct, row.framesPerSec / rateScale,
                  row.userBitsPerSec / bitScale);
    out += line;
  }
  return out;
}

double parseBitRate(std::string_view text) {
  const auto fail = [&](const char *why) -> std::invalid_argument {
    return std::invalid_argument("bad bit rate '" + std::string(text) + "': " + why +
                                 " (expected e.g. 10G, 500M, 1.5G, 2k or 123456, in bits/s)");
  };
  std::string_view rest = text;
  // Digits with at most one decimal point; no sign, no exponent, no spaces.
  size_t pos = 0;
  bool sawDigit = false;
  bool sawPoint = false;
  for (; pos < rest.size(); ++pos) {
    const char c = rest[pos];
    if (c >= '0' && c <= '9') {
      sawDigit = true;
    } else if (c == '.' && !sawPoint) {
      sawPoint = true;
    } else {
      break;
    }
  }
  if (!sawDigit) {
    throw fail(text.empty() ? "empty" : "no number");
  }
  const std::string number(rest.substr(0, pos));
  rest.remove_prefix(pos);
  double scale = 1.0;
  if (!rest.empty()) {
    switch (rest.front()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      scale = 0.0;
      break;
    }
    if (scale != 0.0) {
      rest.remove_prefix(1);
    } else {
      scale = 1.0;
    }
  }
  if (!rest.empty() && rest != "b/s" && rest != "bps" && rest != "bit/s") {
    throw fail("unknown unit suffix (use k, M, G or T)");
  }
  const double value = std::strtod(number.c_str(), nullptr) * scale;
  if (!std::isfinite(value)) {
    throw fail("out of range");
  }
  return value;
}

} // namespace efu
