// SPDX-License-Identifier: BSD-2-Clause
// udpgen --rr: one datagram out, wait for its echo, the round-trip time into a histogram.
#pragma once

#include "common/stats/LogHistogram.h"
#include "generators/udpgen/UdpGenOptions.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace efu::udpgen {

/// How long --rr waits for one echo before it counts the request as lost and sends the next.
inline constexpr int kEchoTimeoutMs = 1000;

struct RrSummary {
  uint64_t requests = 0; ///< datagrams sent
  uint64_t replies = 0;  ///< echoes of the datagram just sent (RTT samples)
  uint64_t lost = 0;     ///< requests without an echo within kEchoTimeoutMs
  uint64_t strays = 0;   ///< echoes of an earlier number (after its timeout), ignored
  uint32_t sizeBytes = 0;
  double elapsedS = 0.0;
  LogHistogram rttNs; ///< round-trip times, ns (CLOCK_MONOTONIC around send and receive)
  uint64_t rttSumNs = 0; ///< for the exact mean (the bins are 1/8 octave wide)
};

/// Sends --count requests (or until --stopafter or `stop`) to the echo at --dip:--port, one at
/// a time, each with its sequence number and tx time (wire-formats.md §1). Throws
/// std::runtime_error on set-up failure.
RrSummary runRequestResponse(const UdpGenOptions &options, const std::atomic<bool> &stop);

std::string rrJson(const RrSummary &summary);
std::string rrText(const RrSummary &summary);

} // namespace efu::udpgen
