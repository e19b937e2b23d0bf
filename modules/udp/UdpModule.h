// SPDX-License-Identifier: BSD-2-Clause
// The `udp` module: throughput, loss and one-way delay of udpgen's sequence-numbered datagrams.
// Small enough to live in its header (the shape of docs/modules.md; larger modules put the
// bodies in <Name>Module.cpp). Entry point: UdpPlugin.cpp.
#pragma once

#include "common/sdk/Module.h"
#include "common/stats/SequenceTracker.h"

#include <array>
#include <cstring>
#include <limits>
#include <vector>

namespace efu::udp {

constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kMaxPlausibleDelayNs = 3600LL * 1'000'000'000; // beyond this: not a timestamp
/// One sequence per source (address and port): several udpgens may feed one efu. Sources
/// beyond this many share the last tracker (and udp.seq.sources_overflow counts their datagrams).
constexpr uint32_t kMaxSources = 16;

class UdpModule final : public sdk::Module {
public:
  explicit UdpModule(sdk::ModuleContext &ctx)
      : intervalNs_(static_cast<int64_t>(ctx.statsIntervalMs()) * 1'000'000),
        // udp.seq.lost is net of late arrivals: it falls when one fills a gap, so a gauge.
        lost_(ctx.gauge("udp.seq.lost")), expected_(ctx.counter("udp.seq.expected")),
        reordered_(ctx.counter("udp.seq.reordered")),
        duplicates_(ctx.counter("udp.seq.duplicates")), restarts_(ctx.counter("udp.seq.restarts")),
        stale_(ctx.counter("udp.seq.stale")),
        sources_(ctx.counter("udp.seq.sources")),
        overflow_(ctx.counter("udp.seq.sources_overflow")),
        readouts_(ctx.counter("readouts.count")), short_(ctx.counter("readouts.errors.short")),
        delayMin_(ctx.gauge("udp.delay.min_us")), delayMean_(ctx.gauge("udp.delay.mean_us")),
        delayMax_(ctx.gauge("udp.delay.max_us")),
        delaySamples_(ctx.counter("udp.delay.samples")) {
    ctx.setLossCounters(lost_, expected_);
    // Registered so every module answers the ESS tools (efurates.py); udp forms no events.
    ctx.counter("events.count");
  }

  void process(const sdk::Packet &packet) noexcept override {
    if (packet.size < 8) {
      short_.add();
      return;
    }
    readouts_.add();
    uint64_t seq = 0;
    std::memcpy(&seq, packet.data, sizeof(seq)); // little-endian on the wire and on x86/arm64
    trackers_[sourceIndex(packet)].add(seq);
    // Published per datagram (five relaxed stores), so the counters are exact as soon as the
    // runtime's processing.packets, which is added after process() returns, shows this datagram.
    publishSequence();
    if (packet.size >= 16) {
      int64_t txNs = 0;
      std::memcpy(&txNs, packet.data + 8, sizeof(txNs));
      // Modular difference: a hostile or garbled timestamp must not overflow (found by fuzz_udp).
      const auto delayNs = static_cast<int64_t>(static_cast<uint64_t>(packet.rxTimeNs) -
                                                static_cast<uint64_t>(txNs));
      if (txNs != 0 && delayNs > -kMaxPlausibleDelayNs && delayNs < kMaxPlausibleDelayNs) {
        delayMinNs_ = delayNs < delayMinNs_ ? delayNs : delayMinNs_;
        delayMaxNs_ = delayNs > delayMaxNs_ ? delayNs : delayMaxNs_;
        delaySumNs_ += delayNs;
        ++delayCount_;
      }
    }
  }

  void tick(int64_t nowNs) noexcept override {
    if (nowNs >= intervalEndNs_) {
      publishDelay();
      intervalEndNs_ = nowNs + intervalNs_;
    }
  }

  void flush() noexcept override {
    publishDelay();
  }

private:
  /// The tracker of the packet's source; the last one used is the first guess.
  uint32_t sourceIndex(const sdk::Packet &packet) noexcept {
    const uint64_t key = uint64_t{packet.sourceIp} << 16 | packet.sourcePort;
    if (sourceCount_ > 0 && sourceKeys_[lastSource_] == key) {
      return lastSource_;
    }
    uint32_t index = 0;
    while (index < sourceCount_ && sourceKeys_[index] != key) {
      ++index;
    }
    if (index == sourceCount_) {
      if (sourceCount_ < kMaxSources) {
        sourceKeys_[sourceCount_++] = key;
      } else {
        index = kMaxSources - 1;
        overflow_.add();
      }
    }
    lastSource_ = index;
    return index;
  }

  /// Totals over the sources' sequences.
  void publishSequence() noexcept {
    uint64_t lost = 0;
    uint64_t expected = 0;
    uint64_t reordered = 0;
    uint64_t duplicates = 0;
    uint64_t restarts = 0;
    uint64_t stale = 0;
    for (uint32_t i = 0; i < sourceCount_; ++i) {
      const UdpSequenceTracker &t = trackers_[i];
      lost += t.lost();
      expected += t.expected();
      reordered += t.reordered();
      duplicates += t.duplicates();
      restarts += t.restarts();
      stale += t.stale();
    }
    lost_.set(static_cast<int64_t>(lost));
    expected_.set(static_cast<int64_t>(expected));
    reordered_.set(static_cast<int64_t>(reordered));
    duplicates_.set(static_cast<int64_t>(duplicates));
    restarts_.set(static_cast<int64_t>(restarts));
    stale_.set(static_cast<int64_t>(stale));
    sources_.set(sourceCount_);
  }

  /// One-way delay of the interval just ended; all zero when no timestamps arrived.
  void publishDelay() noexcept {
    if (delayCount_ > 0) {
      delayMin_.set(delayMinNs_ / kNsPerUs);
      delayMean_.set(delaySumNs_ / delayCount_ / kNsPerUs);
      delayMax_.set(delayMaxNs_ / kNsPerUs);
    } else {
      delayMin_.set(0);
      delayMean_.set(0);
      delayMax_.set(0);
    }
    delaySamples_.add(delayCount_);
    delayMinNs_ = std::numeric_limits<int64_t>::max();
    delayMaxNs_ = std::numeric_limits<int64_t>::min();
    delaySumNs_ = 0;
    delayCount_ = 0;
  }

  const int64_t intervalNs_;
  std::vector<UdpSequenceTracker> trackers_ = std::vector<UdpSequenceTracker>(kMaxSources);
  std::array<uint64_t, kMaxSources> sourceKeys_{};
  uint32_t sourceCount_ = 0;
  uint32_t lastSource_ = 0;
  Counter &lost_;
  Counter &expected_;
  Counter &reordered_;
  Counter &duplicates_;
  Counter &restarts_;
  Counter &stale_;
  Counter &sources_;
  Counter &overflow_;
  Counter &readouts_; ///< datagrams carrying a sequence number
  Counter &short_;
  Counter &delayMin_;
  Counter &delayMean_;
  Counter &delayMax_;
  Counter &delaySamples_;
  int64_t intervalEndNs_ = 0;
  int64_t delayMinNs_ = std::numeric_limits<int64_t>::max();
  int64_t delayMaxNs_ = std::numeric_limits<int64_t>::min();
  int64_t delaySumNs_ = 0;
  int64_t delayCount_ = 0;
};

} // namespace efu::udp
