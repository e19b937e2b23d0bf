// SPDX-License-Identifier: BSD-2-Clause
// The udpgen sending engine: one paced loop for sendmmsg batches with or without UDP GSO.
#include "generators/udpgen/UdpSender.h"

#include "common/time/Time.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace efu::udpgen {

namespace {

std::string errnoText(int err) {
  return std::strerror(err);
}

inline void storeLe64(uint8_t *dst, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) {
    dst[i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

double seconds(const timeval &tv) noexcept {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

} // namespace

double SendSummary::userMbps() const noexcept {
  return elapsedS > 0.0 ? static_cast<double>(counters.bytes) * 8.0 / elapsedS / 1e6 : 0.0;
}

double SendSummary::kpps() const noexcept {
  return elapsedS > 0.0 ? static_cast<double>(counters.sent) / elapsedS / 1e3 : 0.0;
}

UdpSender::UdpSender(const UdpGenOptions &options) : options_(options) {
  if (options_.spacingUs > 0.0) {
    // One send call per group: --batch grows to hold a whole --burst.
    options_.batch = std::max(options_.batch, options_.burst);
  }
  if (options_.sizeBytes < kMinSizeBytes || options_.sizeBytes > kMaxSizeBytes) {
    throw std::runtime_error("size " + std::to_string(options_.sizeBytes) + " B is outside " +
                             std::to_string(kMinSizeBytes) + ".." + std::to_string(kMaxSizeBytes));
  }
  const int requested =
      static_cast<int>(std::min<uint64_t>(options_.sndbufBytes, std::numeric_limits<int>::max()));
  socket_ = net::UdpSocket::connectedTo(options_.address, options_.port, requested);
  sndbufBytes_ = socket_.sndbufBytes();
  // Linux doubles the request for bookkeeping; less than double means net.core.wmem_max capped
  // it.
  if (options_.sndbufBytes > 0 && static_cast<uint64_t>(sndbufBytes_) < 2 * options_.sndbufBytes) {
    spdlog::warn("SO_SNDBUF: requested {} B, kernel granted {} B (half usable); raise the cap "
                 "with: sysctl -w net.core.wmem_max={}",
                 options_.sndbufBytes, sndbufBytes_, options_.sndbufBytes);
  }
  if (options_.gso > 0) {
    const uint32_t bySize = kMaxSizeBytes / options_.sizeBytes;
    segments_ = std::min({options_.gso, kMaxGsoSegments, bySize});
    if (segments_ < options_.gso) {
      spdlog::warn("--gso {} clamped to {}: a GSO message carries at most {} segments and at "
                   "most {} B ({} x {} B = {} B)",
                   options_.gso, segments_, kMaxGsoSegments, kMaxSizeBytes, segments_,
                   options_.sizeBytes, segments_ * options_.sizeBytes);
    }
    const int segmentBytes = static_cast<int>(options_.sizeBytes);
    if (setsockopt(socket_.fd(), IPPROTO_UDP, UDP_SEGMENT, &segmentBytes, sizeof(segmentBytes)) !=
        0) {
      spdlog::warn("UDP GSO (UDP_SEGMENT) refused by the kernel: {}; sending without GSO",
                   errnoText(errno));
      segments_ = 1;
    }
  }

  messagesPerCall_ = options_.batch;
  const double pps = options_.targetPps();
  if (options_.spacingUs > 0.0) {
    messagesPerCall_ = (options_.burst + segments_ - 1) / segments_;
  } else if (pps > 0.0) {
    // Keep each paced burst within kMaxBurstNs of traffic, but at least one message.
    const double burstDatagrams = pps * static_cast<double>(kMaxBurstNs) / 1e9;
    const double burstMessages = burstDatagrams / segments_;
    messagesPerCall_ =
        static_cast<uint32_t>(std::clamp(burstMessages, 1.0, static_cast<double>(options_.batch)));
  }
  const size_t maxDatagrams = static_cast<size_t>(messagesPerCall_) * segments_;
  buffer_.resize(maxDatagrams * options_.sizeBytes);
  for (size_t i = 0; i < buffer_.size(); ++i) {
    buffer_[i] = static_cast<uint8_t>(i % options_.sizeBytes);
  }
  // Capacity for --batch messages, so a GSO fall-back never reallocates (iov_ pointers stay).
  iov_.reserve(options_.batch);
  msgs_.reserve(options_.batch);
  iov_.resize(messagesPerCall_);
  msgs_.resize(messagesPerCall_);
  for (uint32_t m = 0; m < messagesPerCall_; ++m) {
    msgs_[m] = mmsghdr{};
    msgs_[m].msg_hdr.msg_iov = &iov_[m];
    msgs_[m].msg_hdr.msg_iovlen = 1;
  }
  layoutMessages(static_cast<uint32_t>(maxDatagrams));
}

void UdpSender::layoutMessages(uint32_t datagrams) noexcept {
  const size_t messageBytes = static_cast<size_t>(segments_) * options_.sizeBytes;
  uint32_t left = datagrams;
  for (uint32_t m = 0; m < messagesPerCall_ && left > 0; ++m) {
    const uint32_t inThis = std::min(left, segments_);
    iov_[m].iov_base = buffer_.data() + m * messageBytes;
    iov_[m].iov_len = static_cast<size_t>(inThis) * options_.sizeBytes;
    left -= inThis;
  }
}

void UdpSender::disableGso(int err) {
  spdlog::warn("the kernel refused a UDP GSO send ({}); falling back to one datagram per message",
               errnoText(err));
  const int off = 0;
  setsockopt(socket_.fd(), IPPROTO_UDP, UDP_SEGMENT, &off, sizeof(off));
  // The buffer holds messagesPerCall_ * segments_ datagrams; --batch still bounds the messages.
  messagesPerCall_ = std::min(messagesPerCall_ * segments_, options_.batch);
  segments_ = 1;
  iov_.resize(messagesPerCall_);
  msgs_.resize(messagesPerCall_);
  for (uint32_t m = 0; m < messagesPerCall_; ++m) {
    msgs_[m] = mmsghdr{};
    msgs_[m].msg_hdr.msg_iov = &iov_[m];
    msgs_[m].msg_hdr.msg_iovlen = 1;
  }
}

int UdpSender::sendCall(uint64_t seq, uint32_t datagrams, const std::atomic<bool> &stop) noexcept {
  const uint32_t size = options_.sizeBytes;
  // One transmit time per call: all its datagrams leave within the same system call.
  const auto txNs = static_cast<uint64_t>(realtimeNs());
  for (uint32_t i = 0; i < datagrams; ++i) {
    uint8_t *datagram = buffer_.data() + static_cast<size_t>(i) * size;
    storeLe64(datagram, seq + i);
    if (size >= 16) {
      storeLe64(datagram + 8, txNs);
    }
  }
  layoutMessages(datagrams);
  const uint32_t messages = (datagrams + segments_ - 1) / segments_;
  uint32_t done = 0;
  while (done < messages) {
    ++counters_.sendCalls;
    const int rc = sendmmsg(socket_.fd(), &msgs_[done], messages - done, 0);
    if (rc > 0) {
      for (uint32_t m = done; m < done + static_cast<uint32_t>(rc); ++m) {
        counters_.sent += iov_[m].iov_len / size;
        counters_.bytes += iov_[m].iov_len;
      }
      done += static_cast<uint32_t>(rc);
      gsoConfirmed_ = gsoConfirmed_ || segments_ > 1;
      continue;
    }
    const int err = errno;
    if (err == EINTR) {
      if (stop.load(std::memory_order_relaxed)) {
        // The rest of this call was never sent nor counted: nextSequence() stays exact.
        return 0;
      }
      continue;
    }
    if (segments_ > 1 && !gsoConfirmed_ && done == 0 && isGsoRefusal(err)) {
      return err;
    }
    // sendmmsg reports the error of the first message it could not send: that message's
    // datagrams are counted as failed and their sequence numbers are not reused.
    counters_.refused.count(err, iov_[done].iov_len / size);
    ++done;
  }
  return 0;
}

SendSummary UdpSender::run(const std::atomic<bool> &stop,
                           const std::function<void(const Progress &)> &onProgress) {
  const double pps = options_.targetPps();
  const double nsPerDatagram = pps > 0.0 ? 1e9 / pps : 0.0;
  const int64_t startNs = monotonicNs();
  const int64_t endNs = options_.durationS > 0.0
                            ? startNs + static_cast<int64_t>(options_.durationS * 1e9)
                            : std::numeric_limits<int64_t>::max();
  rusage usageStart{};
  getrusage(RUSAGE_SELF, &usageStart);
  int64_t nextReportNs = startNs + kNsPerSec;
  int64_t lastReportNs = startNs;
  const auto spacingNs = static_cast<int64_t>(options_.spacingUs * 1e3);
  int64_t nextGroupNs = startNs; // --spacing: when the next group is due
  SendCounters lastReport;

  while (!stop.load(std::memory_order_relaxed)) {
    const int64_t nowNs = monotonicNs();
    if (nowNs >= nextReportNs) {
      if (onProgress) {
        Progress progress;
        progress.total = counters_;
        progress.intervalS = static_cast<double>(nowNs - lastReportNs) / 1e9;
        progress.intervalMbps = static_cast<double>(counters_.bytes - lastReport.bytes) * 8.0 /
                                progress.intervalS / 1e6;
        progress.intervalKpps =
            static_cast<double>(counters_.sent - lastReport.sent) / progress.intervalS / 1e3;
        onProgress(progress);
      }
      lastReport = counters_;
      lastReportNs = nowNs;
      nextReportNs = std::max(nextReportNs + kNsPerSec, nowNs + 1);
    }
    if (nowNs >= endNs) {
      break;
    }
    const uint64_t seq = counters_.nextSequence();
    if (options_.count > 0 && seq >= options_.count) {
      break;
    }
    uint64_t datagrams = static_cast<uint64_t>(messagesPerCall_) * segments_;
    if (options_.spacingUs > 0.0) {
      datagrams = std::min<uint64_t>(datagrams, options_.burst); // one group per call
    }
    if (options_.count > 0) {
      datagrams = std::min(datagrams, options_.count - seq);
    }
    if (pps > 0.0) {
      // --bitrate/--pps: scheduled against the start time, late calls catch up, early ones
      // wait; no drift. --spacing (udpmon's -w): every call is one group, due one spacing after
      // the previous group's send began; a late group never makes the next one early.
      const int64_t targetNs =
          options_.spacingUs > 0.0
              ? nextGroupNs
              : startNs + static_cast<int64_t>(static_cast<double>(seq) * nsPerDatagram);
      if (targetNs > nowNs) {
        if (options_.spacingUs > 0.0 && targetNs - nowNs <= kSpinNs) {
          continue; // spin: the loop reads the clock again
        }
        const int64_t wakeNs = options_.spacingUs > 0.0 ? targetNs - kSpinNs : targetNs;
        sleepUntilMonotonicNs(std::min({wakeNs, nextReportNs, endNs}), stop);
        continue;
      }
    }
    nextGroupNs = nowNs + spacingNs;
    if (const int gsoErr = sendCall(seq, static_cast<uint32_t>(datagrams), stop); gsoErr != 0) {
      disableGso(gsoErr);
    }
  }
  const int64_t endRunNs = monotonicNs();

  SendSummary summary;
  summary.counters = counters_;
  summary.elapsedS = static_cast<double>(endRunNs - startNs) / 1e9;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  summary.cpuUserS = seconds(usage.ru_utime) - seconds(usageStart.ru_utime);
  summary.cpuSysS = seconds(usage.ru_stime) - seconds(usageStart.ru_stime);
  summary.sizeBytes = options_.sizeBytes;
  summary.gsoSegments = segments_;
  summary.batch = messagesPerCall_;
  summary.targetPps = pps;
  return summary;
}

std::string summaryJson(const SendSummary &summary) {
  const SendCounters &c = summary.counters;
  nlohmann::json json = {
      {"sent", c.sent},
      {"bytes", c.bytes},
      {"seconds", summary.elapsedS},
      {"mbps", summary.userMbps()},
      {"kpps", summary.kpps()},
      {"errors", c.refused.json()},
      {"next_sequence", c.nextSequence()},
      {"send_calls", c.sendCalls},
      {"size_bytes", summary.sizeBytes},
      {"gso_segments", summary.gsoSegments},
      {"batch", summary.batch},
      {"target_pps", summary.targetPps},
      {"cpu_user_s", summary.cpuUserS},
      {"cpu_sys_s", summary.cpuSysS},
  };
  return json.dump();
}

std::string summaryText(const SendSummary &summary) {
  const SendCounters &c = summary.counters;
  const double cpuPct = summary.elapsedS > 0.0
                            ? 100.0 * (summary.cpuUserS + summary.cpuSysS) / summary.elapsedS
                            : 0.0;
  char offered[64];
  if (summary.targetPps > 0.0) {
    std::snprintf(offered, sizeof(offered), "offered %.3f kpps", summary.targetPps / 1e3);
  } else {
    std::snprintf(offered, sizeof(offered), "unpaced");
  }
  char text[1024];
  std::snprintf(
      text, sizeof(text),
      "udpgen summary\n"
      "  sent          %llu datagrams of %u B, %llu B user data, in %.3f s\n"
      "  rate          %.3f Mb/s user data, %.3f kpps (%s)\n"
      "  send errors   %s\n"
      "  sequence      next number %llu (failed datagrams keep their numbers: receivers see "
      "them as lost)\n"
      "  send calls    %llu (up to %u messages x %u datagrams each)\n"
      "  cpu           user %.3f s, sys %.3f s (%.1f %% of one core)\n",
      static_cast<unsigned long long>(c.sent), summary.sizeBytes,
      static_cast<unsigned long long>(c.bytes), summary.elapsedS, summary.userMbps(),
      summary.kpps(), offered, c.refused.text().c_str(),
      static_cast<unsigned long long>(c.nextSequence()),
      static_cast<unsigned long long>(c.sendCalls), summary.batch, summary.gsoSegments,
      summary.cpuUserS, summary.cpuSysS, cpuPct);
  return text;
}

} // namespace efu::udpgen
