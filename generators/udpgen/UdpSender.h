// SPDX-License-Identifier: BSD-2-Clause
// The udpgen sending engine: one paced loop for sendmmsg batches with or without UDP GSO.
#pragma once

#include "common/net/SendErrors.h"
#include "common/net/UdpSocket.h"
#include "generators/udpgen/UdpGenOptions.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace efu::udpgen {

/// Largest number of segments the kernel accepts in one UDP GSO message (UDP_MAX_SEGMENTS on
/// older kernels; newer ones allow more, we stay portable).
inline constexpr uint32_t kMaxGsoSegments = 64;
/// Errors with which a kernel (or a route) refuses UDP GSO on a send, rather than the datagram.
inline bool isGsoRefusal(int err) noexcept {
  return err == EIO || err == EINVAL || err == EOPNOTSUPP || err == ENOPROTOOPT || err == EMSGSIZE;
}
/// When paced, one send call carries at most this much traffic, so bursts stay short.
inline constexpr int64_t kMaxBurstNs = 1'000'000;
/// With --spacing the last stretch before a group's due time is spun on the clock, not slept:
/// a sleep wakes 50-150 µs late (timer slack, scheduling), which would send the groups of a
/// short spacing back to back after each wake-up. Costs one core while pacing, as in udpmon.
inline constexpr int64_t kSpinNs = 200'000;

/// Counters of one run. Every sequence number handed out is either sent or failed.
struct SendCounters {
  uint64_t sent = 0;      ///< Datagrams the kernel accepted.
  uint64_t bytes = 0;     ///< User-data bytes of those datagrams.
  SendErrors refused;     ///< Datagrams the kernel refused.
  uint64_t sendCalls = 0; ///< sendmmsg calls made (successful or not).

  [[nodiscard]] uint64_t errors() const noexcept { return refused.total(); }
  /// The next sequence number: sent + failed.
  [[nodiscard]] uint64_t nextSequence() const noexcept { return sent + errors(); }
};

/// Result of run(): counters plus time and the process's CPU use.
struct SendSummary {
  SendCounters counters;
  double elapsedS = 0.0;    ///< From the first send attempt to the end of the loop.
  double cpuUserS = 0.0;    ///< Process user CPU time (getrusage) spent in run().
  double cpuSysS = 0.0;     ///< Process system CPU time (getrusage) spent in run().
  uint32_t sizeBytes = 0;   ///< User data per datagram.
  uint32_t gsoSegments = 0; ///< Datagrams per message actually used (1 = GSO off).
  uint32_t batch = 0;       ///< Messages per sendmmsg call (the maximum; pacing may send fewer).
  double targetPps = 0.0;   ///< Offered rate, 0 = unpaced.

  [[nodiscard]] double userMbps() const noexcept;
  [[nodiscard]] double kpps() const noexcept;
};

/// A one-second (or final) view for progress lines; rates are over the last interval.
struct Progress {
  SendCounters total;
  double intervalS = 0.0;
  double intervalMbps = 0.0;
  double intervalKpps = 0.0;
};

/// Owns the connected UDP socket, the datagram buffer and the message vectors; run() is the
/// hot loop (no allocation, errors are counters). Set-up throws std::runtime_error.
/// Not copyable; used by one thread.
class UdpSender {
public:
  explicit UdpSender(const UdpGenOptions &options);
  UdpSender(const UdpSender &) = delete;
  UdpSender &operator=(const UdpSender &) = delete;

  /// Bytes the kernel reports for SO_SNDBUF after the (optional) request.
  [[nodiscard]] int sndbufBytes() const noexcept { return sndbufBytes_; }
  /// Datagrams per message in use (1 when GSO is off or was refused).
  [[nodiscard]] uint32_t gsoSegments() const noexcept { return segments_; }
  /// Messages per sendmmsg call in use.
  [[nodiscard]] uint32_t messagesPerCall() const noexcept { return messagesPerCall_; }

  /// Sends until --count or --stopafter is reached or `stop` becomes true. Calls `onProgress`
  /// about once a second (from this thread) unless it is empty.
  SendSummary run(const std::atomic<bool> &stop,
                  const std::function<void(const Progress &)> &onProgress);

  /// --sweep: the next run() holds `spacingUs` (> 0; the sender was made with --spacing) and
  /// stops when `count` sequence numbers are used in all. Numbers go on across runs, so a
  /// receiver sees one stream, not restarts.
  void nextStep(double spacingUs, uint64_t count) noexcept {
    options_.spacingUs = spacingUs;
    options_.count = count;
  }

private:
  void layoutMessages(uint32_t datagrams) noexcept;
  void disableGso(int err);
  /// Sends datagrams [seq, seq + datagrams). Returns 0, or the errno with which the kernel
  /// refused GSO before anything of this call was accounted (the caller retries without GSO).
  int sendCall(uint64_t seq, uint32_t datagrams, const std::atomic<bool> &stop) noexcept;

  UdpGenOptions options_;
  net::UdpSocket socket_;
  int sndbufBytes_ = 0;
  uint32_t segments_ = 1;
  uint32_t messagesPerCall_ = 1;
  bool gsoConfirmed_ = false;
  SendCounters counters_;
  std::vector<uint8_t> buffer_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
};

/// The summary as one JSON object (no newline).
std::string summaryJson(const SendSummary &summary);
/// The summary as human-readable lines (each ending in a newline).
std::string summaryText(const SendSummary &summary);

} // namespace efu::udpgen
