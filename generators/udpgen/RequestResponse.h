// SPDX-License-Identifier: BSD-2-Clause
// udpgen --rr: one datagram out, wait for its echo, the round-trip time into a histogram.
#pragma once

#include "common/stats/LogHistogram.h"
#include "generators/udpgen/UdpGenOptions.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace efu::udpgen {

/// Requests in a row without an echo (timed out or refused) after which --rr gives up: the
/// responder is not there (or went away).
inline constexpr uint64_t kRrGiveUpAfter = 3;

struct RrSummary {
  uint64_t requests = 0; ///< datagrams sent (or refused by the kernel on sending)
  uint64_t replies = 0;  ///< echoes of the datagram just sent (RTT samples)
  uint64_t lost = 0;     ///< requests without an echo: timeouts + refused
  uint64_t timeouts = 0; ///< requests whose echo did not come within --rr-timeout
  uint64_t refused = 0;  ///< requests refused by an ICMP port unreachable (nobody listens)
  uint64_t strays = 0;   ///< echoes of an earlier number (after its timeout), ignored
  uint32_t sizeBytes = 0;
  uint32_t timeoutMs = 0; ///< --rr-timeout
  bool gaveUp = false;   ///< ended after kRrGiveUpAfter requests in a row without an echo
  double elapsedS = 0.0;
  LogHistogram rttNs; ///< round-trip times, ns (CLOCK_MONOTONIC around send and receive)
  uint64_t rttSumNs = 0; ///< for the exact mean (the bins are 1/8 octave wide)
};

/// Sends --count requests (or until --stopafter or `stop`) to the echo at --dip:--port, one at
/// a time, each with its sequence number and tx time (wire-formats.md §1), waiting up to
/// --rr-timeout for each echo (a stop is seen within 50 ms); gives up (gaveUp) after
/// kRrGiveUpAfter requests in a row without an echo. Throws std::runtime_error on set-up
/// failure.
RrSummary runRequestResponse(const UdpGenOptions &options, const std::atomic<bool> &stop);

std::string rrJson(const RrSummary &summary);
std::string rrText(const RrSummary &summary);

} // namespace efu::udpgen
