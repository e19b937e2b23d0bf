// SPDX-License-Identifier: BSD-2-Clause
// Datagrams from a module's ReadoutSource, for round-trip tests and benchmarks: neutrons are
// encoded one after another into an ESS datagram while the source's largest encoding still fits
// (what readoutgen does), and take() writes the header. The neutrons' truth goes to the given
// sink as the source encodes them (TruthList records it as the events a module should give).
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"
#include "common/sdk/ReadoutSource.h"

#include "tests/support/FakeModuleContext.h"

#include <algorithm>
#include <cstdint>
#include <random>
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

/// Pulse k (k >= -1) of a 14 Hz source: 6289464 ticks apart (within every shipped file's
/// MaxPulseTimeNS).
inline EssTime pulseTime(int k) {
  const int64_t ticks = int64_t{100} * kTicksPerSecond + int64_t{k} * 6'289'464;
  return {static_cast<uint32_t>(1'699'999'900 + ticks / kTicksPerSecond),
          static_cast<uint32_t>(ticks % kTicksPerSecond)};
}

/// The truth a source writes, as the events a module should record.
struct TruthList final : sdk::TruthSink {
  void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) override {
    events.push_back(RecordedEvent{pulseTimeNs, static_cast<int32_t>(tofNs), pixelId});
  }
  std::vector<RecordedEvent> events;
};

/// A truth sink that only counts (benchmarks: the neutrons a stream encodes).
struct TruthCount final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override { ++count; }
  int64_t count = 0;
};

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
    events_ += written != 0 ? 1 : 0;
    return written;
  }
  /// The neutrons the source wrote something for since the last take().
  [[nodiscard]] size_t events() const { return events_; }
  /// True when no readout has been added since the last take().
  [[nodiscard]] bool empty() const { return bytes_.size() == headerBytes(0); }
  /// The datagram with its header (length, the next sequence number); the next one starts empty.
  std::vector<uint8_t> take() {
    fields_.totalLength = static_cast<uint16_t>(bytes_.size());
    writeHeader(bytes_, fields_);
    ++fields_.seqNum;
    events_ = 0;
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
  size_t events_ = 0;
};

/// `pulses` pulses (pulseTime(0), ...) of `perPulse` neutrons each at random positions, in time
/// order within the pulse as readoutgen sends them, packed into datagrams of at most
/// `perDatagram` neutrons (and what fits in one); every datagram holds one pulse's neutrons.
inline std::vector<std::vector<uint8_t>> encodePulses(sdk::ReadoutSource &source, uint64_t seed,
                                                      int pulses, int perPulse, size_t perDatagram,
                                                      sdk::TruthSink &truth) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> datagrams;
  DatagramPacker packer(source, truth);
  uint64_t index = 0;
  for (int p = 0; p < pulses; ++p) {
    const EssTime pulse = pulseTime(p);
    packer.setPulse(pulse, pulseTime(p - 1));
    std::vector<int64_t> tofs(static_cast<size_t>(perPulse));
    for (int64_t &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    for (const int64_t tof : tofs) {
      const auto x = static_cast<uint32_t>(rng() % source.imageWidth());
      const auto y = static_cast<uint32_t>(rng() % source.imageHeight());
      if (packer.events() == perDatagram || !packer.hasRoom()) {
        datagrams.push_back(packer.take());
      }
      packer.add(neutronAt(x, y, pulse, tof, index++));
    }
    if (!packer.empty()) {
      datagrams.push_back(packer.take());
    }
  }
  return datagrams;
}

/// `datagramsPerPulse` full datagrams for each of `pulses` pulses (pulseTime(0), ...), each with
/// its pulse and the previous one; neutrons at random positions, in time order within the pulse
/// as readoutgen sends them (benchmarks: up to 200 neutrons a datagram).
inline std::vector<std::vector<uint8_t>> fullDatagrams(sdk::ReadoutSource &source,
                                                       sdk::TruthSink &truth, int pulses,
                                                       int datagramsPerPulse, uint64_t seed = 42) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> out;
  DatagramPacker packer(source, truth);
  for (int p = 0; p < pulses; ++p) {
    const EssTime pulse = pulseTime(p);
    std::vector<int64_t> tofs(static_cast<size_t>(datagramsPerPulse) * 200);
    for (int64_t &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    size_t next = 0;
    packer.setPulse(pulse, pulseTime(p - 1));
    for (int k = 0; k < datagramsPerPulse; ++k) {
      while (packer.hasRoom() && next < tofs.size()) {
        const auto x = static_cast<uint32_t>(rng() % source.imageWidth());
        const auto y = static_cast<uint32_t>(rng() % source.imageHeight());
        packer.add(neutronAt(x, y, pulse, tofs[next++]));
      }
      out.push_back(packer.take());
    }
  }
  return out;
}

} // namespace efu::readout::test
