// SPDX-License-Identifier: BSD-2-Clause
// Datagrams from a module's ReadoutSource, for round-trip tests and benchmarks: neutrons are
// encoded one after another into an ESS datagram while the source's largest encoding still fits
// (what readoutgen does), and take() writes the header. The neutrons' truth goes to the given
// sink as the source encodes them.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"
#include "common/sdk/ReadoutSource.h"

#include <cstdint>
#include <span>
#include <vector>

namespace efu::readout::test {

/// A neutron at image position (x, y), `tofNs` after `pulse`: the fields a source reads.
inline sdk::Neutron neutronAt(uint32_t x, uint32_t y, EssTime pulse, int64_t tofNs,
                              uint64_t index = 0) {
  sdk::Neutron n;
  n.x = x;
  n.y = y;
  n.pulse = pulse;
  n.pulseTimeNs = ticksToNs(pulse.high, pulse.low);
  n.eventTime = nsToTicks(n.pulseTimeNs + tofNs);
  n.eventTimeNs = ticksToNs(n.eventTime.high, n.eventTime.low);
  n.index = index;
  return n;
}

/// A datagram as the daemon hands it to a module (no receive time, queue 0).
inline sdk::Packet packetOf(std::span<const uint8_t> datagram) {
  return sdk::Packet{datagram.data(), static_cast<uint32_t>(datagram.size()), 0, 0};
}

class DatagramPacker {
public:
  DatagramPacker(sdk::ReadoutSource &source, sdk::TruthSink &truth,
                 size_t maxBytes = kMaxDatagramBytes)
      : source_(source), truth_(truth), maxBytes_(maxBytes) {
    fields_.detectorType = source.detectorType();
    bytes_.resize(headerBytes(0));
  }

  /// The pulse and previous pulse written into the headers of the datagrams taken from now on.
  void setPulse(EssTime pulse, EssTime prevPulse) {
    fields_.pulse = pulse;
    fields_.prevPulse = prevPulse;
  }
  /// True while one more neutron fits whatever the source writes for it.
  [[nodiscard]] bool hasRoom() const {
    return bytes_.size() + source_.maxEventBytes() <= maxBytes_;
  }
  /// Encodes `n` into the datagram (hasRoom() must hold). Returns the bytes the source wrote
  /// (0: nothing, e.g. a position no readout reaches).
  size_t add(const sdk::Neutron &n) {
    const size_t at = bytes_.size();
    bytes_.resize(at + source_.maxEventBytes());
    const size_t written = source_.encodeEvent(n, std::span(bytes_).subspan(at), truth_);
    bytes_.resize(at + written);
    return written;
  }
  /// True when no readout has been added since the last take().
  [[nodiscard]] bool empty() const { return bytes_.size() == headerBytes(0); }
  /// The datagram with its header (length, the next sequence number); the next one starts empty.
  std::vector<uint8_t> take() {
    fields_.totalLength = static_cast<uint16_t>(bytes_.size());
    writeHeader(bytes_, fields_);
    ++fields_.seqNum;
    std::vector<uint8_t> out(headerBytes(0));
    out.swap(bytes_);
    return out;
  }

private:
  sdk::ReadoutSource &source_;
  sdk::TruthSink &truth_;
  size_t maxBytes_;
  HeaderFields fields_;
  std::vector<uint8_t> bytes_;
};

} // namespace efu::readout::test
