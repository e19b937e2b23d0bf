// SPDX-License-Identifier: BSD-2-Clause
// dream as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped DREAM, MAGIC
// and HEIMDAL files, DreamSource's neutrons over several pulses with readouts broken on the
// way, run as 1, 2 and 4 partitions give the same events and the same counter sums.
#include "modules/dream/DreamModule.h"
#include "modules/dream/DreamSource.h"

#include "common/sdk/ModuleConfig.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace efu::dream {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;

nlohmann::json shipped(const std::string &name) {
  return validateModuleConfig(
      "dream", kDreamConfigKeys, kDreamConfigKeyCount,
      readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/" + name), name);
}

/// Four pulses of 6000 of DreamSource's neutrons for `file` (100 to a datagram), every fifth
/// datagram with one readout broken, by turns: a time of flight too large, FEN 12 and 11 (the
/// geometry's refusals), a unit of no part, the parser's stops (fiber > 23, a length that is
/// not 16, a length beyond the datagram, FEN > 12) with the sequence number 64 off; and one
/// datagram of another detector type (the ESS header refuses it). Receive times 1 ms apart.
std::vector<ReplayDatagram> stream(const std::string &file) {
  DreamSource source(shipped(file), file, 3);
  readout::test::TruthCount truth;
  const auto encoded = readout::test::encodePulses(source, 17, 4, 6000, 100, truth);
  const std::array<readout::test::Fault<CdtReadout>, 8> faults{
      [](auto &r, auto &) { r.timeHigh += 3; }, // beyond the largest 32-bit time of flight
      [](auto &r, auto &) { r.fen = 12; },
      [](auto &r, auto &) { r.fen = 11; },
      [](auto &r, auto &) { // no SUMO, no cuboid; MAGIC's PA: no cassette
        r.unit = 200;
        r.cathode = 255;
        r.anode = 255;
      },
      [](auto &r, auto &) { r.fiber = 30; },
      [](auto &r, auto &) { r.length = 20; },
      [](auto &r, auto &) { r.length = 4000; },
      [](auto &r, auto &bytes) {
        r.fen = 13;
        readout::test::shiftSequence(bytes);
      },
  };
  auto out = readout::test::faultyReplay<CdtReadout>(encoded, faults);
  readout::test::insertAt(out, 3, readout::test::otherType(encoded.front(), 0x01));
  return out;
}

TEST(DreamPartitions, TheShippedInstrumentsAgreeAsOneTwoAndFourPartitions) {
  for (const std::string file : {"DreamInst.json", "MagicInst.json", "HeimdalInst.json"}) {
    SCOPED_TRACE(file);
    const nlohmann::json config = shipped(file);
    const std::vector<ReplayDatagram> datagrams = stream(file);
    const auto one = expectPartitionsAgree<DreamModule>(config, file, datagrams);
    EXPECT_GT(one.eventCount(), 10000U);
    EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(one.eventCount()));
    // The broken readouts moved the counters on both sides of the partition filter.
    readout::test::expectMoved(one,
                               {"readouts.error_buffer", "readouts.error_datalen",
                                "readouts.error_fiber", "readouts.error_fen", "geometry.fen_errors",
                                "geometry.config_errors", "events.timestamp.tof.high",
                                "parser.essheader.errors.type", "parser.essheader.seq.lost"});
    if (file != "HeimdalInst.json") { // every readout of HEIMDAL's mantle is a pixel
      EXPECT_GT(one.counters.at("geometry.pixel_errors"), 0);
    }
    readout::test::expectSpread(eventsPerPartition<DreamModule>(2, config, file, datagrams),
                                one.eventCount());
  }
}

TEST(DreamPartitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<DreamModule>(), nullptr);
}

} // namespace
} // namespace efu::dream
