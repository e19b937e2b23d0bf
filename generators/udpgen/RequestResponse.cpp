// SPDX-License-Identifier: BSD-2-Clause
// udpgen --rr: one datagram out, wait for its echo, the round-trip time into a histogram.
#include "generators/udpgen/RequestResponse.h"
#include "common/net/UdpSocket.h"

#include "common/time/Time.h"

#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace efu::udpgen {

namespace {

uint64_t loadLe64(const uint8_t *src) noexcept {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | src[i];
  }
  return value;
}

void storeLe64(uint8_t *dst, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) {
    dst[i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

} // namespace

RrSummary runRequestResponse(const UdpGenOptions &options, const std::atomic<bool> &stop) {
  // Connected to the echo: it then receives only from there.
  const net::UdpSocket socket = net::UdpSocket::connectedTo(options.address, options.port);
  const int fd = socket.fd();
  RrSummary summary;
  summary.sizeBytes = options.sizeBytes;
  std::vector<uint8_t> out(options.sizeBytes);
  std::vector<uint8_t> in(options.sizeBytes + 1);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<uint8_t>(i % options.sizeBytes);
  }
  const int64_t startNs = monotonicNs();
  const int64_t endNs = options.durationS > 0.0
                            ? startNs + static_cast<int64_t>(options.durationS * 1e9)
                            : std::numeric_limits<int64_t>::max();
  const int64_t timeoutNs = int64_t{options.rrTimeoutMs} * kNsPerMs;
  summary.timeoutMs = options.rrTimeoutMs;
  uint64_t unansweredInARow = 0;
  for (uint64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
    if ((options.count > 0 && seq >= options.count) || monotonicNs() >= endNs) {
      break;
    }
    if (unansweredInARow >= kRrGiveUpAfter) {
      summary.gaveUp = true;
      break;
    }
    storeLe64(out.data(), seq);
    if (out.size() >= 16) {
      storeLe64(out.data() + 8, static_cast<uint64_t>(realtimeNs()));
    }
    const int64_t sentNs = monotonicNs();
    ++summary.requests;
    ++unansweredInARow;
    ssize_t sent = send(fd, out.data(), out.size(), 0);
    while (sent < 0 && errno == EINTR && !stop.load(std::memory_order_relaxed)) {
      sent = send(fd, out.data(), out.size(), 0);
    }
    if (sent < 0) {
      const int err = errno;
      if (err == ECONNREFUSED) { // the ICMP port unreachable of an earlier request
        ++summary.refused;
        continue;
      }
      --summary.requests;
      --unansweredInARow;
      if (err == EINTR) {
        break; // stopped
      }
      throw std::runtime_error("--rr: cannot send to " + options.address + ":" +
                               std::to_string(options.port) + ": " + std::strerror(err));
    }
    enum class Outcome { Waiting, Echoed, Refused, TimedOut } outcome = Outcome::Waiting;
    while (outcome == Outcome::Waiting) {
      const int64_t nowNs = monotonicNs();
      const int64_t deadlineNs = std::min(sentNs + timeoutNs, endNs);
      if (stop.load(std::memory_order_relaxed) || nowNs >= deadlineNs) {
        outcome = Outcome::TimedOut;
        break;
      }
      // In slices of at most kStopCheckNs, so a stop is seen at once whatever --rr-timeout is.
      const int64_t sliceNs = std::min(deadlineNs - nowNs, kStopCheckNs);
      pollfd wait{fd, POLLIN, 0};
      if (poll(&wait, 1, static_cast<int>((sliceNs + kNsPerMs - 1) / kNsPerMs)) <= 0) {
        continue;
      }
      const ssize_t got = recv(fd, in.data(), in.size(), 0);
      const int64_t gotNs = monotonicNs();
      if (got >= 8 && loadLe64(in.data()) == seq) {
        summary.rttNs.add(static_cast<uint64_t>(gotNs - sentNs));
        summary.rttSumNs += static_cast<uint64_t>(gotNs - sentNs);
        ++summary.replies;
        outcome = Outcome::Echoed;
      } else if (got >= 0) {
        ++summary.strays;
      } else if (errno == ECONNREFUSED) {
        outcome = Outcome::Refused; // no echo will come: nobody listens there
      }
    }
    if (outcome == Outcome::Echoed) {
      unansweredInARow = 0;
    } else if (outcome == Outcome::Refused) {
      ++summary.refused;
    } else if (!stop.load(std::memory_order_relaxed) && monotonicNs() < endNs) {
      ++summary.timeouts;
    } else {
      --summary.requests; // cut short by the stop or --stopafter: neither answered nor lost
      --unansweredInARow;
    }
  }
  summary.lost = summary.timeouts + summary.refused;
  summary.elapsedS = static_cast<double>(monotonicNs() - startNs) / 1e9;
  return summary;
}

namespace {
double meanUs(const RrSummary &s) {
  return s.replies > 0 ? static_cast<double>(s.rttSumNs) / static_cast<double>(s.replies) / 1e3
                       : 0.0;
}
} // namespace

std::string rrJson(const RrSummary &s) {
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  nlohmann::json json = {
      {"mode", "rr"},
      {"size_bytes", s.sizeBytes},
      {"requests", s.requests},
      {"replies", s.replies},
      {"lost", s.lost},
      {"timeouts", s.timeouts},
      {"refused", s.refused},
      {"timeout_ms", s.timeoutMs},
      {"gave_up", s.gaveUp},
      {"strays", s.strays},
      {"seconds", s.elapsedS},
      {"rtt_us",
       {{"p50", us(s.rttNs.percentile(0.5))},
        {"p90", us(s.rttNs.percentile(0.9))},
        {"p99", us(s.rttNs.percentile(0.99))},
        {"max", us(s.rttNs.max())},
        {"mean", meanUs(s)},
        {"samples", s.rttNs.count()}}},
  };
  return json.dump();
}

std::string rrText(const RrSummary &s) {
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  return fmt::format("udpgen request-response summary\n"
                     "  requests      {} of {} B in {:.3f} s, {} echoed, {} lost ({} timeouts "
                     "after {} ms, {} refused), {} strays\n"
                     "  rtt           p50 {:.1f} us, p90 {:.1f} us, p99 {:.1f} us, max {:.1f} us, "
                     "mean {:.1f} us "
                     "(percentiles: lower bounds of log bins, at most 12.5 % low)\n",
                     s.requests, s.sizeBytes, s.elapsedS, s.replies, s.lost, s.timeouts,
                     s.timeoutMs, s.refused, s.strays, us(s.rttNs.percentile(0.5)),
                     us(s.rttNs.percentile(0.9)), us(s.rttNs.percentile(0.99)), us(s.rttNs.max()),
                     meanUs(s));
}

} // namespace efu::udpgen
