// SPDX-License-Identifier: BSD-2-Clause
// The `udp` module: throughput, loss and one-way delay of udpgen's sequence-numbered datagrams.
// Small enough to live in its header (the shape of docs/modules.md; larger modules put the
// bodies in <Name>Module.cpp). Entry point: UdpPlugin.cpp.
#pragma once

#include "common/sdk/Module.h"
#include "common/stats/LogHistogram.h"
#include "common/stats/SequenceTracker.h"
#include "common/system/BusyWork.h"

#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace efu::udp {

constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kMaxPlausibleDelayNs = 3600LL * 1'000'000'000; // beyond this: not a timestamp
/// One sequence per source (address and port): several udpgens may feed one efu. Sources
/// beyond this many share the last tracker (and udp.seq.sources_overflow counts their datagrams).
constexpr uint32_t kMaxSources = 16;
/// The loss pattern keeps the first this many gaps (runs of lost numbers) and lost numbers.
constexpr uint32_t kPatternSize = 64;

/// The first gaps of the sequences (all sources, in arrival order): where losses fall, so a
/// periodic loss (every n-th datagram, e.g. from a ring size) shows as a period.
struct LossPattern {
  struct Gap {
    uint64_t first = 0;  ///< the first number skipped
    uint64_t length = 0; ///< numbers skipped
  };
  std::array<Gap, kPatternSize> gaps{};
  uint32_t gapCount = 0; ///< kept, at most kPatternSize
  uint64_t lastFirst = 0;
  uint64_t lastDistance = 0; ///< between the starts of the last two gaps
  uint64_t period = 0;       ///< lastDistance when the two distances before were equal, else 0
  uint64_t gapsSeen = 0;

  void add(uint64_t first, uint64_t length) noexcept {
    if (gapCount < kPatternSize) {
      gaps[gapCount++] = {first, length};
    }
    if (gapsSeen > 0) {
      const uint64_t distance = first - lastFirst;
      period = gapsSeen > 1 && distance == lastDistance ? distance : 0;
      lastDistance = distance;
    }
    lastFirst = first;
    ++gapsSeen;
  }
};

/// The configuration keys (validated by the daemon before the module sees them).
inline constexpr EfuConfigKey kUdpKeys[] = {
    {"work_ns", sdk::ConfigType::Integer, "0",
     "CPU work per datagram, ns: a stand-in for a detector module's cost (a fixed chain of "
     "steps sized at start; docs/performance.md, lossless and sustained rates). 0 = none",
     0, 10000000},
};

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
        delaySamples_(ctx.counter("udp.delay.samples")),
        delayP50_(ctx.gauge("udp.delay.p50_us")), delayP90_(ctx.gauge("udp.delay.p90_us")),
        delayP99_(ctx.gauge("udp.delay.p99_us")),
        interP50_(ctx.gauge("udp.interarrival.p50_us")),
        interP90_(ctx.gauge("udp.interarrival.p90_us")),
        interP99_(ctx.gauge("udp.interarrival.p99_us")),
        interMax_(ctx.gauge("udp.interarrival.max_us")),
        bursts_(ctx.counter("udp.loss.bursts")), burstMax_(ctx.gauge("udp.loss.burst_max")),
        period_(ctx.gauge("udp.loss.period")),
        reorderMax_(ctx.gauge("udp.reorder.distance_max")),
        histogramReport_(ctx.report("udp.histograms")),
        patternReport_(ctx.report("udp.loss.pattern")),
        work_(ctx.config().value("work_ns", uint64_t{0})) {
    ctx.setLossCounters(lost_, expected_);
    // Registered so every module answers the ESS tools (efurates.py); udp forms no events.
    ctx.counter("events.count");
    if (work_.ns() > 0) {
      ctx.log().info("udp: work_ns {}: {} steps of work per datagram (sized on this core)",
                     work_.ns(), work_.stepCount());
    }
  }

  void process(const sdk::Packet &packet) noexcept override {
    if (work_.ns() > 0) {
      // Before the counters: a datagram counted as processed has had its work done.
      workResult_ = work_.run(packet.size);
    }
    if (packet.size < 8) {
      short_.add();
      return;
    }
    readouts_.add();
    uint64_t seq = 0;
    std::memcpy(&seq, packet.data, sizeof(seq)); // little-endian on the wire and on x86/arm64
    const uint32_t source = sourceIndex(packet);
    UdpSequenceTracker &tracker = trackers_[source];
    const uint64_t highest = tracker.highest();
    const UdpSequenceTracker::Result result = tracker.add(seq);
    if (result.reordered) {
      interval_.reorder.add(highest - seq);
    } else if (result.lost > 0) {
      interval_.burst.add(result.lost);
      pattern_.add(seq - result.lost, result.lost);
      bursts_.add();
    }
    // Without `efu --rx-timestamps kernel` the datagrams of one receive batch share rxTimeNs:
    // they show an inter-arrival time of 0.
    if (lastRxNs_[source] != 0) {
      const int64_t gapNs = packet.rxTimeNs - lastRxNs_[source];
      interval_.interarrival.add(gapNs > 0 ? static_cast<uint64_t>(gapNs) : 0);
    }
    lastRxNs_[source] = packet.rxTimeNs;
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
        interval_.delay.add(delayNs > 0 ? static_cast<uint64_t>(delayNs) : 0);
      }
    }
  }

  /// Steps of work per datagram (work_ns sized on this core; 0 without).
  [[nodiscard]] uint64_t workSteps() const noexcept { return work_.stepCount(); }

  void tick(int64_t nowNs) noexcept override {
    if (nowNs >= intervalEndNs_) {
      publishDelay();
      publishHistograms();
      intervalEndNs_ = nowNs + intervalNs_;
    }
  }

  void flush() noexcept override {
    publishDelay();
    publishHistograms();
  }

  /// The histograms of one interval, or of the whole run (ns for times, datagrams otherwise).
  struct Histograms {
    LogHistogram delay;        ///< one-way delay, ns (negative: 0)
    LogHistogram interarrival; ///< rx time since the source's previous datagram, ns
    LogHistogram burst;        ///< numbers skipped per gap, when the gap opened
    LogHistogram reorder;      ///< highest number so far - the late arrival's number
    void merge(const Histograms &o) noexcept {
      delay.merge(o.delay);
      interarrival.merge(o.interarrival);
      burst.merge(o.burst);
      reorder.merge(o.reorder);
    }
  };
  /// Since start, up to the last interval's end (read on the processing thread, e.g. in tests).
  [[nodiscard]] const Histograms &totals() const noexcept { return total_; }
  [[nodiscard]] const LossPattern &lossPattern() const noexcept { return pattern_; }

  /// A histogram as JSON: {"unit":..,"count":..,"max":..,"bins":[[lower bound, count],...]}
  /// with the non-empty bins only.
  static std::string toJson(const LogHistogram &h, const char *unit) {
    std::string out = std::string(R"({"unit":")") + unit + R"(","count":)" +
                      std::to_string(h.count()) + R"(,"max":)" + std::to_string(h.max()) +
                      R"(,"bins":[)";
    const char *comma = "";
    for (uint32_t i = 0; i < LogHistogram::kBins; ++i) {
      if (h.bin(i) != 0) {
        out += comma;
        out += '[' + std::to_string(LogHistogram::lowerBound(i)) + ',' +
               std::to_string(h.bin(i)) + ']';
        comma = ",";
      }
    }
    return out + "]}";
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

  static int64_t us(uint64_t ns) noexcept { return static_cast<int64_t>(ns / kNsPerUs); }

  /// The interval's percentiles as gauges, the interval into the totals, the reports replaced.
  /// Once per interval on the processing thread: the reports' text is built here (allocates).
  void publishHistograms() noexcept {
    const Histograms &i = interval_;
    delayP50_.set(us(i.delay.percentile(0.5)));
    delayP90_.set(us(i.delay.percentile(0.9)));
    delayP99_.set(us(i.delay.percentile(0.99)));
    interP50_.set(us(i.interarrival.percentile(0.5)));
    interP90_.set(us(i.interarrival.percentile(0.9)));
    interP99_.set(us(i.interarrival.percentile(0.99)));
    interMax_.set(us(i.interarrival.max()));
    burstMax_.set(static_cast<int64_t>(i.burst.max()));
    reorderMax_.set(static_cast<int64_t>(i.reorder.max()));
    period_.set(static_cast<int64_t>(pattern_.period));
    total_.merge(interval_);
    interval_ = Histograms{};
    try {
      histogramReport_.publish(R"({"delay":)" + toJson(total_.delay, "ns") +
                               R"(,"interarrival":)" + toJson(total_.interarrival, "ns") +
                               R"(,"burst":)" + toJson(total_.burst, "datagrams") +
                               R"(,"reorder":)" + toJson(total_.reorder, "datagrams") + "}");
      patternReport_.publish(patternJson());
    } catch (...) { // out of memory: the reports keep their previous text
    }
  }

  std::string patternJson() const {
    std::string gaps;
    std::string lost;
    uint32_t lostCount = 0;
    for (uint32_t g = 0; g < pattern_.gapCount; ++g) {
      const LossPattern::Gap &gap = pattern_.gaps[g];
      gaps += g == 0 ? "[" : ",[";
      gaps += std::to_string(gap.first);
      gaps += ',';
      gaps += std::to_string(gap.length);
      gaps += ']';
      for (uint64_t n = 0; n < gap.length && lostCount < kPatternSize; ++n, ++lostCount) {
        lost += lostCount == 0 ? "" : ",";
        lost += std::to_string(gap.first + n);
      }
    }
    return R"({"gaps_seen":)" + std::to_string(pattern_.gapsSeen) + R"(,"period":)" +
           std::to_string(pattern_.period) + R"(,"first_lost":[)" + lost + R"(],"gaps":[)" +
           gaps + "]}";
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
  Counter &delayP50_;
  Counter &delayP90_;
  Counter &delayP99_;
  Counter &interP50_;
  Counter &interP90_;
  Counter &interP99_;
  Counter &interMax_;
  Counter &bursts_;
  Counter &burstMax_;
  Counter &period_;
  Counter &reorderMax_;
  sdk::Report &histogramReport_;
  sdk::Report &patternReport_;
  BusyWork work_;
  uint64_t workResult_ = 0; ///< kept so the work is not optimised away
  std::array<int64_t, kMaxSources> lastRxNs_{};
  Histograms interval_;
  Histograms total_;
  LossPattern pattern_;
  int64_t intervalEndNs_ = 0;
  int64_t delayMinNs_ = std::numeric_limits<int64_t>::max();
  int64_t delayMaxNs_ = std::numeric_limits<int64_t>::min();
  int64_t delaySumNs_ = 0;
  int64_t delayCount_ = 0;
};

} // namespace efu::udp
