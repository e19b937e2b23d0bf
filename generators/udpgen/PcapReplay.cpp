// SPDX-License-Identifier: BSD-2-Clause
// Capture replay: libpcap reads and filters, we strip link, IPv4 and UDP headers and send.
#include "generators/udpgen/PcapReplay.h"
#include "common/net/UdpSocket.h"

#include "common/time/Time.h"

#include <pcap/pcap.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

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

PcapPtr openCapture(const PcapReplayOptions &options) {
  char error[PCAP_ERRBUF_SIZE] = {};
  PcapPtr pcap(pcap_open_offline_with_tstamp_precision(options.path.c_str(),
                                                       PCAP_TSTAMP_PRECISION_NANO, error),
               &pcap_close);
  if (!pcap) {
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
  const auto over = [&] {
    return stop.load() || monotonicNs() >= endNs ||
           (options.count > 0 && summary.sent + summary.sendErrors >= options.count);
  };
  uint64_t paced = 0;
  for (uint64_t pass = 0; options.loops == 0 || pass < options.loops; ++pass) {
    PcapPtr pcap = openCapture(options); // opened again per pass (also checks it before sending)
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
      if (gapNs > 0.0) {
        if (!waitUntil(startNs + static_cast<int64_t>(gapNs * static_cast<double>(paced++)))) {
          break;
        }
      } else if (options.speed > 0.0) {
        const auto offset = static_cast<double>(captureNs - firstCaptureNs) / options.speed;
        if (!waitUntil(passStartNs + static_cast<int64_t>(offset))) {
          break;
        }
      }
      if (pass == 0) {
        summary.captureSpanS = static_cast<double>(captureNs - firstCaptureNs) / 1e9;
      }
      if (::send(socket.fd(), udp + 8, udpLength - 8, 0) == static_cast<ssize_t>(udpLength - 8)) {
        ++summary.sent;
        summary.bytes += udpLength - 8;
      } else {
        ++summary.sendErrors;
      }
    }
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
                     "(capture span {:.3f} s); skipped: {} not IPv4/UDP, {} fragments, {} "
                     "truncated; {} send errors\n",
                     s.sent, s.bytes, s.elapsedS, s.loops, s.captureSpanS, s.skippedNotUdp,
                     s.skippedFragment, s.skippedTruncated, s.sendErrors);
}

std::string replayJson(const PcapReplaySummary &s) {
  return nlohmann::json{{"sent", s.sent},
                        {"bytes", s.bytes},
                        {"send_errors", s.sendErrors},
                        {"skipped_not_udp", s.skippedNotUdp},
                        {"skipped_fragment", s.skippedFragment},
                        {"skipped_truncated", s.skippedTruncated},
                        {"loops", s.loops},
                        {"elapsed_s", s.elapsedS},
                        {"capture_span_s", s.captureSpanS}}
      .dump();
}

} // namespace efu::udpgen
