// SPDX-License-Identifier: BSD-2-Clause
// udpgen --pcap: replays the UDP payloads of a capture file, byte for byte, to one destination.
#pragma once

#include "common/net/SendErrors.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace efu::udpgen {

/// What and how to replay.
struct PcapReplayOptions {
  std::string path;             ///< capture file (pcap or pcapng, as libpcap reads them)
  std::string filter = "udp";   ///< BPF filter applied to the capture (tcpdump syntax)
  std::string address;          ///< destination IPv4 address
  uint16_t port = 0;            ///< destination UDP port
  double speed = 1.0;           ///< 1 = the capture's own timing, 2 = twice as fast; 0 = unpaced
  uint64_t pps = 0;             ///< fixed rate instead of the capture's timing (0 = not fixed)
  uint64_t loops = 1;           ///< passes over the file (0 = until stopped)
  uint64_t count = 0;           ///< stop after this many datagrams (0 = no limit)
  double durationS = 0.0;       ///< --stopafter: stop after this many seconds (0 = no limit)
  uint32_t gso = 0;             ///< --gso: datagrams of equal size per UDP GSO message (0, 1 = off)
  uint32_t batch = 64;          ///< --batch: messages per sendmmsg call (of datagrams already due)
};

/// What a replay did. Skipped frames passed the filter but carry no whole IPv4/UDP datagram.
struct PcapReplaySummary {
  uint64_t sent = 0;             ///< datagrams sent
  uint64_t bytes = 0;            ///< their UDP payload bytes
  SendErrors refused;            ///< datagrams the kernel refused, by errno
  uint64_t messages = 0;         ///< messages the kernel accepted (a GSO message holds several)
  uint64_t sendCalls = 0;        ///< sendmmsg / send calls made
  uint64_t skippedNotUdp = 0;    ///< not IPv4/UDP (or an unknown link type)
  uint64_t skippedFragment = 0;  ///< IPv4 fragments (no whole datagram to send)
  uint64_t skippedTruncated = 0; ///< captured with a snap length shorter than the packet
  uint64_t loops = 0;            ///< complete passes over the file
  double elapsedS = 0.0;
  double captureSpanS = 0.0;     ///< first to last sent datagram's capture time, first pass
};

/// Replays until the file (times `loops`) is done, `count` or `durationS` is reached or `stop`
/// is set; every wait (the capture's gaps, --pps) ends within 50 ms of a stop or at
/// `durationS`. Throws std::runtime_error naming the file for an unreadable capture or a bad
/// filter, before anything is sent, and for a capture with nothing to send (no frame passes
/// the filter and carries a whole IPv4/UDP datagram), after its first pass.
PcapReplaySummary replayPcap(const PcapReplayOptions &options, const std::atomic<bool> &stop);

/// The summary as one line of text and as one JSON object.
std::string replayText(const PcapReplaySummary &summary);
std::string replayJson(const PcapReplaySummary &summary);

} // namespace efu::udpgen
