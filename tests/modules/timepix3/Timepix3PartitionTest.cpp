// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module as N partitions (tests/support/Partitions.h): each partition clusters every
// Nth camera datagram and all follow the EVR/TDC time line, so 2 and 4 partitions give the events
// and the counter sums of one, faults included. The pulse's TDC word is in its first camera
// datagram only: the partitions owning the others are timed by a TDC they did not own.
#include "modules/timepix3/Timepix3Module.h"
#include "modules/timepix3/Timepix3Source.h"
#include "tests/modules/timepix3/Timepix3TestSupport.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace efu::timepix3 {
namespace {

using readout::test::ReplayDatagram;

constexpr int64_t kStartNs = 1'700'000'000'000'000'000;
constexpr int64_t kPeriodNs = 100'000'000; // the shipped file's 10 Hz
constexpr int kPulses = 8;

/// `count` pixels at random places and times, one hit each: clusters too small for the shipped
/// file's 9 hits (or, before the first time line, pixels without a time).
std::vector<uint8_t> lonePixels(std::mt19937_64 &rng, int count) {
  test::Words w;
  for (int i = 0; i < count; ++i) {
    w.pixel(static_cast<uint16_t>(rng() % 256), static_cast<uint16_t>(rng() % 256),
            static_cast<uint16_t>(rng()), static_cast<uint16_t>(rng() % 16384), 0,
            static_cast<uint16_t>(rng() % 1024));
  }
  return w.bytes;
}

void appendWord(std::vector<uint8_t> &d, uint64_t word) {
  const size_t at = d.size();
  d.resize(at + 8);
  std::memcpy(d.data() + at, &word, 8);
}

/// Timepix3Source datagrams of the shipped file (an EVR datagram, then camera datagrams of at
/// most 50 neutrons; 800 neutrons a pulse), received as a camera would send them: the EVR 0.5 ms
/// after its pulse, camera datagrams from 1 ms on, 50 us apart. `shuffled`: each camera
/// datagram's words out of time order (the TDC kept first). With faults that move the error
/// counters: pixels before any time line, lone pixels, an EVR repeated, an EVR that arrives
/// too late to pair and one never sent (their pulses' neutrons land beyond the period), an EVR
/// after its pulse's first camera datagram (that datagram is timed by the previous pulse),
/// undefined words, unknown and repeated TDC words, a skipped TDC counter, trailing bytes and an
/// empty datagram.
std::vector<ReplayDatagram> stream(bool shuffled) {
  Timepix3Source source(test::shipped(), "timepix3.json", 3);
  readout::test::TruthCount truth;
  std::mt19937_64 rng(shuffled ? 17 : 11);
  std::vector<ReplayDatagram> out;
  const auto send = [&](std::vector<uint8_t> bytes, int64_t rxNs) {
    out.push_back(ReplayDatagram{std::move(bytes), rxNs});
  };
  send(lonePixels(rng, 20), kStartNs - 5'000'000); // no time line yet
  std::vector<uint8_t> buf(9000);
  std::vector<uint8_t> evrBuf(64);
  for (int k = 0; k < kPulses; ++k) {
    const int64_t pulseNs = kStartNs + k * kPeriodNs;
    const size_t n = source.pulseDatagram({pulseNs, pulseNs - kPeriodNs, static_cast<uint64_t>(k)},
                                          std::span<uint8_t>(evrBuf));
    const std::vector<uint8_t> evr(evrBuf.begin(), evrBuf.begin() + static_cast<std::ptrdiff_t>(n));
    if (k == 3) {
      send(evr, pulseNs + 51'000'000); // 50 ms from its TDC: no pair, the old time line stays
    } else if (k != 5 && k != 6) {     // pulse 5's never comes: miss_evr_count at pulse 6
      send(evr, pulseNs + 500'000);
    }
    if (k == 2) {
      send(evr, pulseNs + 600'000); // repeated: evr_readout_dropped
    }
    std::vector<int64_t> tofs(800);
    for (int64_t &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    std::vector<std::vector<uint8_t>> camera;
    size_t len = 0;
    for (size_t i = 0; i < tofs.size(); ++i) {
      sdk::Neutron nu;
      nu.x = static_cast<uint32_t>(rng() % source.imageWidth());
      nu.y = static_cast<uint32_t>(rng() % source.imageHeight());
      nu.pulseTimeNs = pulseNs;
      nu.eventTimeNs = pulseNs + tofs[i];
      len += source.encodeEvent(nu, std::span<uint8_t>(buf.data() + len, buf.size() - len), truth);
      if ((i + 1) % 50 == 0 || i + 1 == tofs.size()) {
        std::vector<uint8_t> d(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
        if (shuffled && d.size() > 8) {
          std::vector<uint64_t> words(d.size() / 8);
          std::memcpy(words.data(), d.data(), d.size());
          std::shuffle(words.begin() + 1, words.end(), rng);
          std::memcpy(d.data(), words.data(), d.size());
        }
        camera.push_back(std::move(d));
        len = 0;
      }
    }
    // The pulse's TDC word is the first word of its first camera datagram.
    uint64_t tdcWord = 0;
    std::memcpy(&tdcWord, camera.front().data(), 8);
    EXPECT_EQ(wordType(tdcWord), kTdcType);
    appendWord(camera[1], uint64_t{0x7} << 60 | 1234); // a control word: undefined
    TdcWord unknown = decodeTdc(tdcWord);
    unknown.kind = 0x5;
    appendWord(camera[1], encodeTdc(unknown)); // unknown_tdc_type_count
    if (k == 1) {
      appendWord(camera[2], tdcWord);                            // repeated: tdc_readout_dropped
      camera[3].insert(camera[3].end(), {0xAA, 0xBB, 0xCC});     // readouts.errors.size
      camera.insert(camera.begin() + 4, std::vector<uint8_t>{}); // empty: a camera datagram too
    }
    if (k == 2) {
      camera.insert(camera.begin() + 5, lonePixels(rng, 30)); // cluster_size_to_small
    }
    if (k == kPulses - 1) {
      TdcWord ahead = decodeTdc(tdcWord);
      ahead.counter = static_cast<uint16_t>(ahead.counter + 5);
      appendWord(camera.back(), encodeTdc(ahead)); // miss_tdc_count
    }
    for (size_t j = 0; j < camera.size(); ++j) {
      send(std::move(camera[j]), pulseNs + 1'000'000 + static_cast<int64_t>(j) * 50'000);
      if (k == 6 && j == 0) {
        send(evr, pulseNs + 1'020'000); // after its TDC: the EVR finds the TDC (tdc_pair_count)
      }
    }
  }
  return out;
}

class Timepix3PartitionedStream : public ::testing::TestWithParam<bool> {};

TEST_P(Timepix3PartitionedStream, TwoAndFourGiveTheSingleThreadEventsAndCounters) {
  const std::vector<ReplayDatagram> datagrams = stream(GetParam());
  const nlohmann::json config = test::shipped();
  const readout::test::PartitionedResult one =
      readout::test::expectPartitionsAgree<Timepix3Module>(config, "timepix3.json", datagrams);
  // Most of 8 x 800 neutrons (the source leaves out some; pulses 3 and 5 land beyond the period).
  EXPECT_GT(one.eventCount(), 4000U);
  EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(one.eventCount()));
  for (const char *moved :
       {"handlers.pixelevent.no_global_time_error", "handlers.pixelevent.cluster_size_to_small",
        "handlers.pixelevent.event_time_next_pulse_count", "readouts.evr.evr_readout_dropped",
        "handlers.timeingevent.miss_evr_count", "readouts.undefined_readout_count",
        "readouts.tdc.unknown_tdc_type_count", "readouts.tdc.tdc_readout_dropped",
        "handlers.timeingevent.miss_tdc_count", "readouts.errors.size",
        "handlers.timeingevent.evr_pair_count", "handlers.timeingevent.tdc_pair_count"}) {
    EXPECT_GT(one.counters.at(moved), 0) << moved;
  }
  const std::vector<size_t> perPartition =
      readout::test::eventsPerPartition<Timepix3Module>(2, config, "timepix3.json", datagrams);
  ASSERT_EQ(perPartition.size(), 2U);
  EXPECT_GT(perPartition[0], 0U);
  EXPECT_GT(perPartition[1], 0U);
  EXPECT_EQ(perPartition[0] + perPartition[1], one.eventCount());
}

INSTANTIATE_TEST_SUITE_P(WordOrder, Timepix3PartitionedStream, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &param) {
                           return param.param ? "Shuffled" : "TimeOrdered";
                         });

TEST(Timepix3Partitions, ParallelThreadsInTheFileChangesNothingInTheModule) {
  // The daemon reads ParallelThreads; an instance goes by its context's partitions() alone.
  const std::vector<ReplayDatagram> datagrams = stream(false);
  nlohmann::json four = test::shipped();
  four["ParallelThreads"] = 4;
  const auto run = [&](const nlohmann::json &config) {
    readout::test::PartitionedModule<Timepix3Module> m(1, config, "timepix3.json");
    for (const ReplayDatagram &d : datagrams) {
      m.process(d);
    }
    m.flush();
    return m.result();
  };
  const readout::test::PartitionedResult a = run(test::shipped());
  const readout::test::PartitionedResult b = run(four);
  EXPECT_GT(a.eventCount(), 0U);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_TRUE(a.events == b.events);
}

} // namespace
} // namespace efu::timepix3
