// SPDX-License-Identifier: BSD-2-Clause
// The trex module as several partitions (efu --proc-threads, README "Partitions"): readoutgen's
// neutrons, and a stream with every kind of rejection, give 2 and 4 partitions the events and
// counter sums of 1; the event builders spread over the partitions.
#include "modules/trex/TrexModule.h"
#include "modules/trex/TrexSource.h"
#include "tests/modules/trex/TrexTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace efu::trex {
namespace {

using readout::test::ReplayDatagram;

/// Datagrams as received 2 ms apart (the ticks of expectPartitionsAgree come at these times).
void append(std::vector<ReplayDatagram> &out, std::vector<uint8_t> bytes) {
  const int64_t rx = 1'700'000'000'000'000'000 + static_cast<int64_t>(out.size()) * 2'000'000;
  out.push_back(ReplayDatagram{std::move(bytes), rx});
}

/// readoutgen's neutrons for `file`: `pulses` pulses of `perPulse` (SourceDatagrams.h).
std::vector<ReplayDatagram> neutrons(const std::string &file, int pulses, int perPulse,
                                     readout::test::TruthList &truth) {
  TrexSource source(test::shipped(file), file, 7);
  std::vector<ReplayDatagram> out;
  for (auto &d : readout::test::encodePulses(source, 3, pulses, perPulse, SIZE_MAX, truth)) {
    append(out, std::move(d));
  }
  return out;
}

/// Events per partition of an `n`-partition run: every partition formed some, none lost.
void expectSpread(unsigned n, const std::string &file, const std::vector<ReplayDatagram> &stream,
                  size_t total) {
  const std::vector<size_t> per =
      readout::test::eventsPerPartition<TrexModule>(n, test::shipped(file), file, stream);
  ASSERT_EQ(per.size(), n);
  for (unsigned p = 0; p < n; ++p) {
    EXPECT_GT(per[p], 0U) << file << ": partition " << p << " of " << n;
  }
  EXPECT_EQ(std::accumulate(per.begin(), per.end(), size_t{0}), total) << file;
}

TEST(TrexPartitions, TheModuleDeclaresItsKey) {
  EXPECT_STREQ(sdk::detail::partitionKeyOf<TrexModule>(), "event builder (ring, FEN)");
}

// TREX: 69 event builders over 70 (ring, FEN).
TEST(TrexPartitions, TrexNeutronsGiveTheSameEventsAndCountersInEveryPartitioning) {
  readout::test::TruthList truth;
  const std::vector<ReplayDatagram> stream = neutrons("trex.json", 12, 400, truth);
  const readout::test::PartitionedResult one = readout::test::expectPartitionsAgree<TrexModule>(
      test::shipped("trex.json"), "trex.json", stream);
  ASSERT_EQ(one.eventCount(), truth.events.size());
  EXPECT_EQ(one.events.at(""), readout::sortedEvents(truth.events));
  EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(truth.events.size()));
  expectSpread(2, "trex.json", stream, truth.events.size());
  expectSpread(4, "trex.json", stream, truth.events.size());
}

// LET: two event builders (ring 0 FEN 0, ring 1 FEN 0), one per partition of 2.
TEST(TrexPartitions, LetNeutronsGiveTheSameEventsAndCountersInEveryPartitioning) {
  readout::test::TruthList truth;
  const std::vector<ReplayDatagram> stream = neutrons("let.json", 6, 400, truth);
  const readout::test::PartitionedResult one = readout::test::expectPartitionsAgree<TrexModule>(
      test::shipped("let.json"), "let.json", stream);
  ASSERT_EQ(one.eventCount(), truth.events.size());
  EXPECT_EQ(one.events.at(""), readout::sortedEvents(truth.events));
  expectSpread(2, "let.json", stream, truth.events.size());
}

/// A datagram with the header (pulses, sequence number) of `like` and the given readouts.
std::vector<uint8_t> withHeaderOf(const std::vector<uint8_t> &like,
                                  const std::vector<vmm3::Vmm3Readout> &readouts,
                                  uint8_t type = readout::kTypeTrex) {
  readout::EssHeaderV0 h;
  std::memcpy(&h, like.data(), sizeof h);
  test::Datagram d({h.pulseHigh, h.pulseLow}, {h.prevPulseHigh, h.prevPulseLow}, h.seqNum, type);
  for (const vmm3::Vmm3Readout &r : readouts) {
    d.add(r);
  }
  const sdk::Packet p = d.packet();
  return {p.data, p.data + p.size};
}

// Every counter trex has, given by a stream that rejects in every way: readouts the parser
// refuses (counted by every partition alike: stream counters), readouts of every (ring, FEN)
// whether it has a builder or not (error_mapping counted once, by one partition), below MinADC,
// channels without a wire, times far from the pulse, other detectors' datagrams, a payload of
// no whole readout, and the whole capture twice (the pulse goes back: cluster.bound.pulse_back,
// once however many partitions see it).
TEST(TrexPartitions, EveryRejectionIsCountedOnceInEveryPartitioning) {
  readout::test::TruthList truth;
  const std::vector<ReplayDatagram> clean = neutrons("trex.json", 6, 400, truth);
  std::vector<ReplayDatagram> stream;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < clean.size(); ++i) {
      append(stream, clean[i].bytes);
      if (i % 3 != 1) {
        continue;
      }
      readout::EssHeaderV0 h;
      std::memcpy(&h, clean[i].bytes.data(), sizeof h);
      const uint32_t high = h.pulseHigh;
      const uint32_t low = (h.pulseLow + 1000 * static_cast<uint32_t>(i)) % 88'000'000;
      std::vector<vmm3::Vmm3Readout> bad;
      for (uint8_t ring = 0; ring <= 11; ++ring) {
        for (uint8_t fen = 0; fen <= 15; ++fen) {
          bad.push_back(test::readout(ring, fen, 0, 40, 100, high, low)); // TREX's wire hybrid
          bad.push_back(test::readout(ring, fen, 6, 0, 100, high, low));  // hybrid 3: none
        }
      }
      vmm3::Vmm3Readout r = test::readout(0, 0, 0, 40, 100, high, low);
      bad.push_back(r);
      r.fiber = 24; // the parser's errors
      bad.push_back(r);
      r = test::readout(0, 0, 0, 40, 100, high, low);
      r.channel = 64;
      bad.push_back(r);
      bad.push_back(test::readout(0, 0, 0, 40, 10, high, low));      // below MinADC
      bad.push_back(test::readout(0, 0, 0, 10, 100, high, low));     // no wire
      bad.push_back(test::readout(3, 1, 0, 40, 100, high + 5, low)); // 5 s after its pulse
      bad.push_back(test::readout(3, 1, 2, 60, 100, high - 2, low)); // 2 s before it
      append(stream, withHeaderOf(clean[i].bytes, bad));
      append(stream, withHeaderOf(clean[i].bytes, {r}, readout::kTypeFreia));
      std::vector<uint8_t> partial = withHeaderOf(clean[i].bytes, {r});
      partial.pop_back(); // length no longer the header's: refused by the header parser
      append(stream, partial);
    }
  }
  const readout::test::PartitionedResult one = readout::test::expectPartitionsAgree<TrexModule>(
      test::shipped("trex.json"), "trex.json", stream);
  EXPECT_GT(one.eventCount(), truth.events.size());
  for (const char *name :
       {"readouts.error_mapping", "readouts.adc_below_min", "readouts.error_coordinate",
        "readouts.time_far", "readouts.error_fiber", "readouts.error_channel",
        "cluster.no_coincidence", "cluster.matched_wire_only", "cluster.matched_clusters",
        "events.count", "events.formed_at_shutdown", "parser.essheader.errors.type"}) {
    EXPECT_GT(one.counters.at(name), 0) << name;
  }
  EXPECT_EQ(one.counters.at("cluster.bound.pulse_back"), 1);
  expectSpread(2, "trex.json", stream, one.eventCount());
}

/// let.json without its grid hybrids (a dead grid plane on both builders).
nlohmann::json letWithoutGrids() {
  nlohmann::json j = test::rawShipped("let.json");
  nlohmann::json wiresOnly = nlohmann::json::array();
  for (const auto &h : j["Config"]) {
    if (h["Hybrid"] != 0) {
      wiresOnly.push_back(h);
    }
  }
  j["Config"] = wiresOnly;
  return test::validated(j, "let.json");
}

// The bounds' counters and the gauges set by tick(): a silent plane per builder, clusters formed
// alone once the builder's time has passed them by 1 s.
TEST(TrexPartitions, TheBoundsAndGaugesSumToOnePartitions) {
  readout::test::TruthList truth;
  const std::vector<ReplayDatagram> stream = neutrons("let.json", 40, 200, truth);
  const readout::test::PartitionedResult one =
      readout::test::expectPartitionsAgree<TrexModule>(letWithoutGrids(), "let.json", stream);
  EXPECT_GT(one.counters.at("cluster.bound.stale"), 0);
  EXPECT_EQ(one.counters.at("cluster.silent_planes"), 2);
  EXPECT_EQ(one.counters.at("cluster.waiting"), 0); // after the flush
}

// Each partition says which of its own builders went silent, and which partition it is.
TEST(TrexPartitions, EachPartitionSaysItsOwnSilentPlanes) {
  readout::test::TruthList truth;
  const std::vector<ReplayDatagram> stream = neutrons("let.json", 40, 200, truth);
  readout::test::PartitionedModule<TrexModule> m(2, letWithoutGrids(), "let.json");
  for (const ReplayDatagram &d : stream) {
    m.process(d);
  }
  m.tick(stream.back().rxTimeNs);
  const char *said = "a plane that has received nothing";
  const auto zero = m.context(0).logged(said);
  const auto one = m.context(1).logged(said);
  ASSERT_EQ(zero.size(), 1U);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_NE(zero[0].find("trex (partition 0 of 2): "), std::string::npos) << zero[0];
  EXPECT_NE(zero[0].find("nothing for 1 s of the other's data (its clusters are formed alone, "
                         "cluster.bound.stale): ring 0 FEN 0 grids"),
            std::string::npos)
      << zero[0];
  EXPECT_EQ(zero[0].find("ring 1"), std::string::npos) << zero[0];
  EXPECT_NE(one[0].find("trex (partition 1 of 2): "), std::string::npos) << one[0];
  EXPECT_NE(one[0].find("cluster.bound.stale): ring 1 FEN 0 grids"), std::string::npos) << one[0];
  EXPECT_EQ(m.context(0).value("cluster.silent_planes"), 1);
  EXPECT_EQ(m.context(1).value("cluster.silent_planes"), 1);
  m.flush();
}

// The file's warnings are said once, by partition 0, not by every partition.
TEST(TrexPartitions, TheFilesWarningIsSaidOnce) {
  readout::test::PartitionedModule<TrexModule> m(2, test::shipped("let.json"), "let.json");
  EXPECT_EQ(m.context(0).logged("is rotated with YOffset").size(), 1U);
  EXPECT_TRUE(m.context(1).logged("is rotated with YOffset").empty());
}

} // namespace
} // namespace efu::trex
