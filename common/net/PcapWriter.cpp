// SPDX-License-Identifier: BSD-2-Clause
// Classic pcap writer: global header, then per packet a record header and the frame.
#include "common/net/PcapWriter.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace efu {
namespace {

constexpr uint32_t kPcapMagic = 0xa1b2c3d4; // microsecond timestamps, written in host order
constexpr uint32_t kLinkTypeEthernet = 1;
// tcpdump's default: above the largest frame we write (65 507 B of UDP payload + 42 B of
// headers), which a 65 535 snap length would make libpcap read back as truncated.
constexpr uint32_t kSnapLength = 262144;
constexpr size_t kEthernetBytes = 14;
constexpr size_t kIpv4Bytes = 20;
constexpr size_t kUdpBytes = 8;
constexpr size_t kMaxDatagram = 65535 - kIpv4Bytes - kUdpBytes;

void putBig16(uint8_t *at, uint32_t value) {
  at[0] = static_cast<uint8_t>(value >> 8);
  at[1] = static_cast<uint8_t>(value);
}

} // namespace

PcapWriter::PcapWriter(const std::string &path, uint16_t sourcePort, uint16_t destinationPort)
    : path_(path), file_(std::fopen(path.c_str(), "wb")), sourcePort_(sourcePort),
      destinationPort_(destinationPort) {
  if (file_ == nullptr) {
    throw std::runtime_error("pcap file " + path + ": " + std::strerror(errno));
  }
  struct GlobalHeader {
    uint32_t magic;
    uint16_t versionMajor;
    uint16_t versionMinor;
    int32_t thisZone;
    uint32_t sigFigs;
    uint32_t snapLength;
    uint32_t linkType;
  };
  static_assert(sizeof(GlobalHeader) == 24);
  const GlobalHeader header{kPcapMagic, 2, 4, 0, 0, kSnapLength, kLinkTypeEthernet};
  put(&header, sizeof(header));
}

PcapWriter::~PcapWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void PcapWriter::put(const void *data, size_t size) {
  if (std::fwrite(data, 1, size, file_) != size || std::fflush(file_) != 0) {
    throw std::runtime_error("pcap file " + path_ + ": write failed: " + std::strerror(errno));
  }
}

bool PcapWriter::write(std::span<const uint8_t> datagram, int64_t timeNs) {
  if (datagram.size() > kMaxDatagram) {
    return false;
  }
  std::array<uint8_t, kEthernetBytes + kIpv4Bytes + kUdpBytes> headers{};
  uint8_t *ethernet = headers.data();
  putBig16(ethernet + 12, 0x0800); // IPv4; MAC addresses stay zero (loopback)
  uint8_t *ip = ethernet + kEthernetBytes;
  const auto ipLength = static_cast<uint32_t>(kIpv4Bytes + kUdpBytes + datagram.size());
  ip[0] = 0x45; // version 4, 5 words of header
  putBig16(ip + 2, ipLength);
  putBig16(ip + 4, ipId_++);
  ip[8] = 64; // TTL
  ip[9] = 17; // UDP
  const uint8_t loopback[] = {127, 0, 0, 1};
  std::memcpy(ip + 12, loopback, 4);
  std::memcpy(ip + 16, loopback, 4);
  uint32_t sum = 0;
  for (size_t i = 0; i < kIpv4Bytes; i += 2) {
    sum += static_cast<uint32_t>(ip[i] << 8 | ip[i + 1]);
  }
  while (sum > 0xFFFF) {
    sum = (sum & 0xFFFF) + (sum >> 16);
  }
  putBig16(ip + 10, ~sum & 0xFFFF);
  uint8_t *udp = ip + kIpv4Bytes;
  putBig16(udp, sourcePort_);
  putBig16(udp + 2, destinationPort_);
  putBig16(udp + 4, static_cast<uint32_t>(kUdpBytes + datagram.size()));

  const auto frameBytes = static_cast<uint32_t>(headers.size() + datagram.size());
  const uint32_t record[] = {static_cast<uint32_t>(timeNs / 1'000'000'000),
                             static_cast<uint32_t>(timeNs % 1'000'000'000 / 1000), frameBytes,
                             frameBytes};
  put(record, sizeof(record));
  put(headers.data(), headers.size());
  put(datagram.data(), datagram.size());
  ++written_;
  return true;
}

} // namespace efu
