// SPDX-License-Identifier: BSD-2-Clause
// The udp module fed in-process: losses at known positions, swaps at known distances and known
// receive-time gaps come back as exactly those histogram bins, loss positions and gauges.
#include "tests/support/FakeModuleContext.h"
#include "modules/udp/UdpModule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstring>
#include <tuple>
#include <vector>

namespace efu::udp {
namespace {

constexpr int64_t kStartNs = 1'700'000'000'000'000'000;

class UdpModuleTest : public ::testing::Test {
protected:
  /// One datagram: sequence number, tx time (0: none), rx time.
  void send(uint64_t seq, int64_t rxNs, int64_t txNs = 0) {
    std::array<uint8_t, 16> data{};
    std::memcpy(data.data(), &seq, 8);
    std::memcpy(data.data() + 8, &txNs, 8);
    sdk::Packet packet{data.data(), static_cast<uint32_t>(data.size()), 0, rxNs, 0x7f000001, 4000};
    module.process(packet);
  }
  /// Sends the numbers in this order, 1 µs apart.
  void sendAll(const std::vector<uint64_t> &seqs) {
    for (uint64_t seq : seqs) {
      send(seq, rxNs_);
      rxNs_ += 1000;
    }
  }
  /// The bins of a histogram: (lower bound, count) of the non-empty ones.
  static std::vector<std::pair<uint64_t, uint64_t>> bins(const LogHistogram &h) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (uint32_t i = 0; i < LogHistogram::kBins; ++i) {
      if (h.bin(i) != 0) {
        out.emplace_back(LogHistogram::lowerBound(i), h.bin(i));
      }
    }
    return out;
  }
  using Bins = std::vector<std::pair<uint64_t, uint64_t>>;

  readout::FakeModuleContext ctx;
  UdpModule module{ctx};
  int64_t rxNs_ = kStartNs;
};

TEST_F(UdpModuleTest, LossesAtKnownPositionsGiveThoseBurstLengthsAndPositions) {
  // 0..99 without 10 (1), 20..22 (3), 40..42 (3), 60..69 (10).
  std::vector<uint64_t> seqs;
  for (uint64_t n = 0; n < 100; ++n) {
    const bool lost = n == 10 || (n >= 20 && n <= 22) || (n >= 40 && n <= 42) || (n >= 60 && n <= 69);
    if (!lost) {
      seqs.push_back(n);
    }
  }
  sendAll(seqs);
  module.flush();
  EXPECT_EQ(bins(module.totals().burst), (Bins{{1, 1}, {3, 2}, {10, 1}}));
  EXPECT_EQ(ctx.value("udp.loss.burst_max"), 10);
  EXPECT_EQ(ctx.value("udp.loss.bursts"), 4);
  EXPECT_EQ(ctx.value("udp.seq.lost"), 17);
  const auto pattern = nlohmann::json::parse(ctx.reportText("udp.loss.pattern"));
  EXPECT_EQ(pattern["gaps"], nlohmann::json::parse("[[10,1],[20,3],[40,3],[60,10]]"));
  std::vector<uint64_t> lost{10, 20, 21, 22, 40, 41, 42};
  for (uint64_t n = 60; n < 70; ++n) {
    lost.push_back(n);
  }
  EXPECT_EQ(pattern["first_lost"].get<std::vector<uint64_t>>(), lost);
  EXPECT_EQ(pattern["gaps_seen"], 4);
  // Gap starts 10, 20, 40, 60: distances 10, 20, 20; the last two are equal, so period 20.
  EXPECT_EQ(pattern["period"], 20);
}

TEST_F(UdpModuleTest, LossEveryEighthDatagramShowsPeriodEight) {
  std::vector<uint64_t> seqs;
  for (uint64_t n = 0; n < 800; ++n) {
    if (n % 8 != 7) {
      seqs.push_back(n);
    }
  }
  sendAll(seqs);
  module.flush();
  EXPECT_EQ(ctx.value("udp.loss.period"), 8);
  EXPECT_EQ(bins(module.totals().burst), (Bins{{1, 99}})); // the 100th (799) was never overtaken
  const auto pattern = nlohmann::json::parse(ctx.reportText("udp.loss.pattern"));
  EXPECT_EQ(pattern["period"], 8);
  const auto lost = pattern["first_lost"].get<std::vector<uint64_t>>();
  ASSERT_EQ(lost.size(), kPatternSize);
  for (size_t i = 0; i < lost.size(); ++i) {
    EXPECT_EQ(lost[i], 8 * i + 7);
  }
}

TEST_F(UdpModuleTest, SwapsAtKnownDistancesGiveThoseReorderBins) {
  // 5 arrives after 6 (1 back), 20 after 23 (3 back), 40 after 43 (3 back), 60 after 70 (10 back).
  sendAll({0, 1, 2, 3, 4, 6, 5, 7});
  std::vector<uint64_t> seqs;
  for (uint64_t n = 8; n < 100; ++n) {
    if (n == 20 || n == 40 || n == 60) {
      continue;
    }
    seqs.push_back(n);
    if (n == 23) {
      seqs.push_back(20);
    } else if (n == 43) {
      seqs.push_back(40);
    } else if (n == 70) {
      seqs.push_back(60);
    }
  }
  sendAll(seqs);
  module.flush();
  EXPECT_EQ(bins(module.totals().reorder), (Bins{{1, 1}, {3, 2}, {10, 1}}));
  EXPECT_EQ(ctx.value("udp.reorder.distance_max"), 10);
  EXPECT_EQ(ctx.value("udp.seq.lost"), 0);
  EXPECT_EQ(ctx.value("udp.seq.reordered"), 4);
}

TEST_F(UdpModuleTest, KnownReceiveGapsGiveThoseInterArrivalBins) {
  // Gaps of 10 µs (x3), 100 µs (x2), 0 (same receive batch, x1).
  const std::vector<int64_t> gapsNs{10'000, 10'000, 100'000, 0, 10'000, 100'000};
  int64_t rx = kStartNs;
  send(0, rx);
  for (size_t i = 0; i < gapsNs.size(); ++i) {
    rx += gapsNs[i];
    send(i + 1, rx);
  }
  module.flush();
  const LogHistogram &h = module.totals().interarrival;
  EXPECT_EQ(h.count(), 6U);
  EXPECT_EQ(h.bin(0), 1U);
  EXPECT_EQ(h.bin(LogHistogram::binOf(10'000)), 3U);
  EXPECT_EQ(h.bin(LogHistogram::binOf(100'000)), 2U);
  EXPECT_EQ(h.max(), 100'000U);
  EXPECT_EQ(ctx.value("udp.interarrival.p50_us"), LogHistogram::lowerBound(LogHistogram::binOf(10'000)) / 1000);
  EXPECT_EQ(ctx.value("udp.interarrival.max_us"), 100);
  const auto report = nlohmann::json::parse(ctx.reportText("udp.histograms"));
  EXPECT_EQ(report["interarrival"]["count"], 6);
  EXPECT_EQ(report["interarrival"]["unit"], "ns");
  EXPECT_EQ(report["interarrival"]["bins"].size(), 3U);
}

TEST_F(UdpModuleTest, DelayPercentilesPerInterval) {
  int64_t rx = kStartNs;
  for (uint64_t n = 0; n < 100; ++n) {
    const int64_t delayNs = n < 90 ? 5'000 : 200'000; // 90 at 5 µs, 10 at 200 µs
    send(n, rx, rx - delayNs);
    rx += 1000;
  }
  module.tick(rx);
  // 5000 ns lies in the bin from 4608 ns: the percentile is that lower bound, 4 µs.
  EXPECT_EQ(ctx.value("udp.delay.p50_us"), 4);
  EXPECT_EQ(ctx.value("udp.delay.p90_us"), 4);
  EXPECT_EQ(ctx.value("udp.delay.p99_us"),
            static_cast<int64_t>(LogHistogram::lowerBound(LogHistogram::binOf(200'000)) / 1000));
  EXPECT_EQ(ctx.value("udp.delay.max_us"), 200);
  EXPECT_EQ(module.totals().delay.count(), 100U);
  // The next interval has no datagrams: its percentiles are 0, the totals stay.
  module.tick(rx + 2'000'000'000);
  EXPECT_EQ(ctx.value("udp.delay.p50_us"), 0);
  EXPECT_EQ(module.totals().delay.count(), 100U);
  EXPECT_TRUE(ctx.isGauge("udp.delay.p99_us"));
}

TEST(UdpModuleWork, WorkPerDatagramChangesNoCount) {
  // work_ns stands in for a module's cost: it must load the core and change nothing measured.
  auto run = [](uint64_t workNs) {
    readout::FakeModuleContext ctx(nlohmann::json{{"work_ns", workNs}});
    UdpModule module(ctx);
    std::array<uint8_t, 16> data{};
    for (const uint64_t seq : std::array<uint64_t, 7>{0, 1, 2, 5, 4, 6, 9}) {
      std::memcpy(data.data(), &seq, 8);
      module.process({data.data(), static_cast<uint32_t>(data.size()), 0, kStartNs, 0x7f000001, 4000});
    }
    module.process({data.data(), 4, 0, kStartNs, 0x7f000001, 4000}); // short
    return std::make_tuple(module.workSteps(), ctx.value("udp.seq.lost"),
                           ctx.value("udp.seq.reordered"), ctx.value("readouts.count"),
                           ctx.value("readouts.errors.short"));
  };
  const auto none = run(0);
  const auto some = run(2000);
  EXPECT_EQ(std::get<0>(none), 0U);
  EXPECT_GT(std::get<0>(some), 0U);
  EXPECT_EQ(std::get<1>(some), std::get<1>(none));
  EXPECT_EQ(std::get<1>(none), 3); // 3, 7, 8
  EXPECT_EQ(std::get<2>(some), std::get<2>(none));
  EXPECT_EQ(std::get<2>(none), 1);
  EXPECT_EQ(std::get<3>(some), 7);
  EXPECT_EQ(std::get<4>(some), 1);
}

} // namespace
} // namespace efu::udp
