// SPDX-License-Identifier: BSD-2-Clause
// Writes datagrams to a classic pcap file (Ethernet/IPv4/UDP), for Wireshark and replay tools.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace efu {

/// A pcap file (the classic format: microsecond timestamps, link type Ethernet) of UDP
/// datagrams from 127.0.0.1:`sourcePort` to 127.0.0.1:`destinationPort`, as if captured on the
/// receiving host. Each datagram gets zero MAC addresses, an IPv4 header with a valid checksum
/// and a UDP header without checksum (allowed for IPv4). Datagrams over 65507 bytes (the IPv4
/// limit) are refused.
///
/// Throws std::runtime_error naming the path when the file cannot be created or written.
class PcapWriter {
public:
  PcapWriter(const std::string &path, uint16_t sourcePort, uint16_t destinationPort);
  ~PcapWriter();
  PcapWriter(const PcapWriter &) = delete;
  PcapWriter &operator=(const PcapWriter &) = delete;

  /// Appends one datagram with this capture time (ns since the Unix epoch). Returns false for
  /// a datagram too large for one IPv4 packet (nothing written).
  bool write(std::span<const uint8_t> datagram, int64_t timeNs);
  [[nodiscard]] uint64_t written() const noexcept { return written_; }

private:
  void put(const void *data, size_t size);

  std::string path_;
  std::FILE *file_ = nullptr;
  uint16_t sourcePort_;
  uint16_t destinationPort_;
  uint16_t ipId_ = 0;
  uint64_t written_ = 0;
};

} // namespace efu
