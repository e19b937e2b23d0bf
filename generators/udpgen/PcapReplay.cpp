// SPDX-License-Identifier: BSD-2-Clause
// Capture replay: libpcap reads and filters, we strip link, IPv4 and UDP headers and send.
#include "generators/udpgen/PcapReplay.h"
#include "common/net/UdpSocket.h"
#include "generators/udpgen/UdpGenOptions.h"
#include "generators/udpgen/UdpSender.h"

#include "common/time/Time.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace efu::udpgen {
namespace {

using PcapPtr = std::unique_ptr<pcap_t, decltype(&pcap_close)>;

/// Bytes before the IPv4 header for a link type, or -1 when the frame is not IPv4.
int linkHeaderBytes(int linkType, const uint8_t *frame, uint32_t length) {
  const auto be16 = [&](uint32_t at) {
    return static_cast<uint32_t>(frame[at] << 8 | frame[at + 1]);
  };
  switch (linkType) {
  case DLT_EN10MB: {
    uint32_t offset = 12;
    while (offset + 2 <= length && (be16(offset) == 0x8100 || be16(offset) == 0x88A8)) {
      offset += 4; // VLAN tags
    }
    return offset + 2 <= length && be16(offset) == 0x0800 ? static_cast<int>(offset + 2) : -1;
  }
  case DLT_RAW:
#ifdef DLT_IPV4
  case DLT_IPV4:
#endif
    return 0;
  case DLT_LINUX_SLL:
    return length >= 16 && be16(14) == 0x0800 ? 16 : -1;
  case DLT_NULL:
  case DLT_LOOP: {
    if (length < 4) {
      return -1;
    }
    uint32_t family = 0;
    std::memcpy(&family, frame, 4);
    const bool ipv4 = family == AF_INET || ntohl(family) == AF_INET;
    return ipv4 ? 4 : -1;
  }
  default:
    return -1;
  }
}

/// Read buffer of the capture file: libpcap reads record by record through stdio, whose
/// default 4 KiB buffer made two read() calls per jumbo datagram, most of the replay's CPU.
constexpr size_t kReadBufferBytes = 1 << 20;

/// Opens the capture reading through `readBuffer` (kReadBufferBytes; it must outlive the
/// handle: glibc ignores a size given without a buffer).
PcapPtr openCapture(const PcapReplayOptions &options, std::vector<char> &readBuffer) {
  std::FILE *file = std::fopen(options.path.c_str(), "rb");
  if (file == nullptr) {
    throw std::runtime_error("--pcap " + options.path + ": " + std::strerror(errno));
  }
  readBuffer.resize(kReadBufferBytes);
  std::setvbuf(file, readBuffer.data(), _IOFBF, readBuffer.size());
  char error[PCAP_ERRBUF_SIZE] = {};
  // Once libpcap accepts the file, pcap_close closes it; when it refuses it, we do.
  PcapPtr pcap(pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, error),
               &pcap_close);
  if (!pcap) {
    std::fclose(file);
    throw std::runtime_error("--pcap " + options.path + ": " + error);
  }
  bpf_program program{};
  if (pcap_compile(pcap.get(), &program, options.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0) {
    throw std::runtime_error("--pcap-filter '" + options.filter + "': " + pcap_geterr(pcap.get()));
  }
  const int rc = pcap_setfilter(pcap.get(), &program);
  pcap_freecode(&program);
  if (rc != 0) {
    throw std::runtime_error("--pcap-filter '" + options.filter + "': " + pcap_geterr(pcap.get()));
  }
  return pcap;
}

/// Datagrams that are due, held until one sendmmsg call sends them all. A run of equal-size
/// datagrams shares one UDP GSO message (UDP_SEGMENT as a control message, so each message has
/// its own size; the last segment may be shorter), which the kernel cuts back into exactly the
/// same datagrams: the receiver cannot tell. Payloads are copied in (libpcap reuses its frame
/// buffer), one slot of kMaxSizeBytes per message.
class SendBatch {
public:
  SendBatch(int fd, uint32_t gso, uint32_t maxMessages, uint64_t maxDatagrams)
      : fd_(fd), gso_(std::clamp<uint32_t>(gso, 1, kMaxGsoSegments)),
        maxMessages_(std::max<uint32_t>(maxMessages, 1)),
        maxDatagrams_(std::max<uint64_t>(maxDatagrams, 1)),
        buffer_(static_cast<size_t>(maxMessages_) * kMaxSizeBytes), messages_(maxMessages_),
        iov_(maxMessages_), headers_(maxMessages_), control_(maxMessages_) {}

  [[nodiscard]] uint64_t datagrams() const noexcept { return datagrams_; }

  /// Adds one datagram (at most kMaxSizeBytes); sends the batch first if it has no room.
  void add(const uint8_t *payload, uint32_t bytes, PcapReplaySummary &summary) {
    if (used_ > 0) {
      Message &last = messages_[used_ - 1];
      const bool joins = !last.closed && last.segments < gso_ && bytes <= last.segmentBytes &&
                         last.bytes + bytes <= kMaxSizeBytes;
      if (joins) {
        std::memcpy(slot(used_ - 1) + last.bytes, payload, bytes);
        last.bytes += bytes;
        ++last.segments;
        last.closed = bytes < last.segmentBytes; // only the last segment may be shorter
        ++datagrams_;
        flushIfFull(summary);
        return;
      }
      if (used_ == maxMessages_) {
        flush(summary);
      }
    }
    std::memcpy(slot(used_), payload, bytes);
    messages_[used_] = Message{bytes, bytes, 1, false};
    ++used_;
    ++datagrams_;
    flushIfFull(summary);
  }

  /// Sends what is held, counting every datagram as sent or failed.
  void flush(PcapReplaySummary &summary) {
    if (used_ == 0) {
      return;
    }
    for (uint32_t m = 0; m < used_; ++m) {
      layout(m);
    }
    uint32_t done = 0;
    while (done < used_) {
      ++summary.sendCalls;
      const int rc = sendmmsg(fd_, &headers_[done], used_ - done, 0);
      if (rc > 0) {
        for (uint32_t m = done; m < done + static_cast<uint32_t>(rc); ++m) {
          summary.sent += messages_[m].segments;
          summary.bytes += messages_[m].bytes;
          ++summary.messages;
          gsoConfirmed_ = gsoConfirmed_ || messages_[m].segments > 1;
        }
        done += static_cast<uint32_t>(rc);
        continue;
      }
      const int err = errno;
      if (err == EINTR) {
        continue;
      }
      if (messages_[done].segments > 1 && !gsoConfirmed_ && isGsoRefusal(err)) {
        spdlog::warn("the kernel refused a UDP GSO send ({}); replaying one datagram per message",
                     std::strerror(err));
        gso_ = 1;
        sendOneByOne(done, summary);
        break;
      }
      // sendmmsg stops at the first message it cannot send: its datagrams count as failed.
      summary.refused.count(err, messages_[done].segments);
      ++done;
    }
    used_ = 0;
    datagrams_ = 0;
  }

private:
  struct Message {
    uint32_t bytes;        ///< all segments
    uint32_t segmentBytes; ///< the first segment's size (UDP_SEGMENT)
    uint32_t segments;
    bool closed; ///< a shorter segment ended the run
  };

  uint8_t *slot(uint32_t m) noexcept { return buffer_.data() + static_cast<size_t>(m) * kMaxSizeBytes; }

  // (A batch whose messages are all used is sent by the next add() that does not join.)
  void flushIfFull(PcapReplaySummary &summary) {
    if (datagrams_ >= maxDatagrams_) {
      flush(summary);
    }
  }

  void layout(uint32_t m) noexcept {
    const Message &message = messages_[m];
    iov_[m] = iovec{slot(m), message.bytes};
    msghdr &header = headers_[m].msg_hdr;
    header = msghdr{};
    header.msg_iov = &iov_[m];
    header.msg_iovlen = 1;
    if (message.segments > 1) {
      Control &control = control_[m];
      header.msg_control = control.bytes;
      header.msg_controllen = sizeof(control.bytes);
      cmsghdr *cmsg = CMSG_FIRSTHDR(&header);
      cmsg->cmsg_level = SOL_UDP;
      cmsg->cmsg_type = UDP_SEGMENT;
      cmsg->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const auto segmentBytes = static_cast<uint16_t>(message.segmentBytes);
      std::memcpy(CMSG_DATA(cmsg), &segmentBytes, sizeof(segmentBytes));
    }
  }

  /// The GSO fall-back: messages [from, used_) again, one datagram per send.
  void sendOneByOne(uint32_t from, PcapReplaySummary &summary) {
    for (uint32_t m = from; m < used_; ++m) {
      const Message &message = messages_[m];
      uint32_t at = 0;
      for (uint32_t s = 0; s < message.segments; ++s) {
        const uint32_t bytes = std::min(message.segmentBytes, message.bytes - at);
        ssize_t rc;
        do { // a signal before anything was sent is no refusal: send again, as flush() does
          ++summary.sendCalls;
          rc = ::send(fd_, slot(m) + at, bytes, 0);
        } while (rc < 0 && errno == EINTR);
        if (rc == static_cast<ssize_t>(bytes)) {
          ++summary.sent;
          summary.bytes += bytes;
          ++summary.messages;
        } else {
          summary.refused.count(errno, 1);
        }
        at += bytes;
      }
    }
  }

  struct Control {
    alignas(cmsghdr) uint8_t bytes[CMSG_SPACE(sizeof(uint16_t))];
  };

  int fd_;
  uint32_t gso_;
  uint32_t maxMessages_;
  uint64_t maxDatagrams_;
  bool gsoConfirmed_ = false;
  std::vector<uint8_t> buffer_;
  std::vector<Message> messages_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> headers_;
  std::vector<Control> control_;
  uint32_t used_ = 0;
  uint64_t datagrams_ = 0;
};

} // namespace

PcapReplaySummary replayPcap(const PcapReplayOptions &options, const std::atomic<bool> &stop) {
  PcapReplaySummary summary;
  const net::UdpSocket socket = net::UdpSocket::connectedTo(options.address, options.port);
  const int64_t startNs = monotonicNs();
  int64_t passStartNs = startNs;
  const double gapNs = options.pps > 0 ? 1e9 / static_cast<double>(options.pps) : 0.0;
  const double runNs = options.durationS * 1e9;
  const int64_t endNs = runNs > 0.0 && runNs < 4e18 ? startNs + static_cast<int64_t>(runNs)
                                                    : std::numeric_limits<int64_t>::max();
  // A wait ends at its deadline, at --stopafter or at a stop; false: the replay ends.
  const auto waitUntil = [&](int64_t deadlineNs) {
    return sleepUntilMonotonicNs(std::min(deadlineNs, endNs), stop) && monotonicNs() < endNs;
  };
  // A paced replay that fell behind catches up in bursts of at most kMaxBurstNs of traffic.
  const uint64_t burstDatagrams =
      options.pps > 0 ? std::max<uint64_t>(1, options.pps * kMaxBurstNs / kNsPerSec)
                      : std::numeric_limits<uint64_t>::max();
  SendBatch batch(socket.fd(), options.gso, options.batch, burstDatagrams);
  const auto over = [&] {
    return stop.load() || monotonicNs() >= endNs ||
           (options.count > 0 &&
            summary.sent + summary.refused.total() + batch.datagrams() >= options.count);
  };
  uint64_t paced = 0;
  std::vector<char> readBuffer;
  for (uint64_t pass = 0; options.loops == 0 || pass < options.loops; ++pass) {
    // Opened again per pass (also checks it before sending); closed before the next opens.
    PcapPtr pcap = openCapture(options, readBuffer);
    const int linkType = pcap_datalink(pcap.get());
    int64_t firstCaptureNs = -1;
    uint64_t passFiltered = 0;  // frames that passed the filter in this pass
    uint64_t passDatagrams = 0; // of them, whole IPv4/UDP datagrams (sent or not)
    pcap_pkthdr *header = nullptr;
    const u_char *frame = nullptr;
    int rc = 0;
    while (!over() && (rc = pcap_next_ex(pcap.get(), &header, &frame)) == 1) {
      ++passFiltered;
      if (header->caplen < header->len) {
        ++summary.skippedTruncated;
        continue;
      }
      const int ipAt = linkHeaderBytes(linkType, frame, header->caplen);
      const uint8_t *ip = frame + (ipAt < 0 ? 0 : ipAt);
      const uint32_t available = ipAt < 0 ? 0 : header->caplen - static_cast<uint32_t>(ipAt);
      if (ipAt < 0 || available < 20 || (ip[0] >> 4) != 4 || ip[9] != IPPROTO_UDP) {
        ++summary.skippedNotUdp;
        continue;
      }
      const uint32_t ipHeader = (ip[0] & 0x0F) * 4U;
      const uint32_t flagsOffset = static_cast<uint32_t>(ip[6] << 8 | ip[7]);
      if ((flagsOffset & 0x3FFF) != 0) { // more fragments, or not the first
        ++summary.skippedFragment;
        continue;
      }
      const uint32_t ipLength = static_cast<uint32_t>(ip[2] << 8 | ip[3]);
      if (ipHeader < 20 || ipLength > available || ipLength < ipHeader + 8) {
        ++summary.skippedNotUdp;
        continue;
      }
      const uint8_t *udp = ip + ipHeader;
      const uint32_t udpLength = static_cast<uint32_t>(udp[4] << 8 | udp[5]);
      if (udpLength < 8 || udpLength > ipLength - ipHeader) {
        ++summary.skippedNotUdp;
        continue;
      }
      const int64_t captureNs =
          int64_t{header->ts.tv_sec} * kNsPerSec + int64_t{header->ts.tv_usec}; // nano precision
      if (firstCaptureNs < 0) {
        firstCaptureNs = captureNs;
        passStartNs = monotonicNs();
      }
      ++passDatagrams;
      // Only datagrams already due wait in the batch: one not yet due sends the batch first.
      int64_t dueNs = 0;
      if (gapNs > 0.0) {
        dueNs = startNs + static_cast<int64_t>(gapNs * static_cast<double>(paced++));
      } else if (options.speed > 0.0) {
        dueNs = passStartNs + static_cast<int64_t>(
                                  static_cast<double>(captureNs - firstCaptureNs) / options.speed);
      }
      if (dueNs > 0 && dueNs > monotonicNs()) {
        batch.flush(summary);
        if (!waitUntil(dueNs)) {
          break;
        }
      }
      if (pass == 0) {
        summary.captureSpanS = static_cast<double>(captureNs - firstCaptureNs) / 1e9;
      }
      batch.add(udp + 8, udpLength - 8, summary);
    }
    batch.flush(summary);
    if (rc == PCAP_ERROR) {
      throw std::runtime_error("--pcap " + options.path + ": " + pcap_geterr(pcap.get()));
    }
    if (over()) {
      break;
    }
    if (passDatagrams == 0) {
      // Every further pass would find nothing either: say so instead of reading it again.
      throw std::runtime_error(fmt::format(
          "--pcap {}: nothing to send: {} frame(s) passed --pcap-filter '{}', none with a "
          "whole IPv4/UDP datagram (skipped: {} not IPv4/UDP, {} fragments, {} truncated)",
          options.path, passFiltered, options.filter, summary.skippedNotUdp,
          summary.skippedFragment, summary.skippedTruncated));
    }
    ++summary.loops;
  }
  summary.elapsedS = static_cast<double>(monotonicNs() - startNs) / 1e9;
  return summary;
}

std::string replayText(const PcapReplaySummary &s) {
  return fmt::format("udpgen replay: {} datagrams ({} B) sent in {:.3f} s over {} pass(es) "
                     "(capture span {:.3f} s) in {} messages, {} send calls; skipped: {} not "
                     "IPv4/UDP, {} fragments, {} truncated; send errors {}\n",
                     s.sent, s.bytes, s.elapsedS, s.loops, s.captureSpanS, s.messages,
                     s.sendCalls, s.skippedNotUdp, s.skippedFragment, s.skippedTruncated,
                     s.refused.text());
}

std::string replayJson(const PcapReplaySummary &s) {
  return nlohmann::json{{"sent", s.sent},
                        {"bytes", s.bytes},
                        {"send_errors", s.refused.total()},
                        {"errors", s.refused.json()},
                        {"messages", s.messages},
                        {"send_calls", s.sendCalls},
                        {"skipped_not_udp", s.skippedNotUdp},
                        {"skipped_fragment", s.skippedFragment},
                        {"skipped_truncated", s.skippedTruncated},
                        {"loops", s.loops},
                        {"elapsed_s", s.elapsedS},
                        {"capture_span_s", s.captureSpanS}}
      .dump();
}

} // namespace efu::udpgen
