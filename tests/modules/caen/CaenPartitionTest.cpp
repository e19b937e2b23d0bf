// SPDX-License-Identifier: BSD-2-Clause
// caen as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped instrument
// files, readoutgen's neutrons over several pulses with readouts broken on the way, run as 1, 2
// and 4 partitions give the same events per source and the same counter sums.
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace efu::caen {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;

/// Four pulses of `perPulse` of readoutgen's neutrons for `config` (100 to a datagram), every
/// fifth datagram with one readout broken, by turns: a time of flight too large, a FEN and a
/// group beyond every file's, amplitudes that give no position, the parser's stops (fiber > 23,
/// a length that is not 24, a length beyond the datagram), all amplitudes 0 with the sequence
/// number 64 off; and one datagram of another detector type (the ESS header refuses it).
/// Receive times 1 ms apart.
std::vector<ReplayDatagram> stream(const std::string &config, const std::string &calibration,
                                   int perPulse) {
  const nlohmann::json cal =
      calibration.empty() ? nlohmann::json() : test::shippedCalibration(calibration);
  CaenSource source(test::shipped(config), config, 3, cal, calibration);
  readout::test::TruthCount truth;
  const auto encoded = readout::test::encodePulses(source, 17, 4, perPulse, 100, truth);
  const std::array<readout::test::Fault<CaenReadout>, 8> faults{
      [](auto &r, auto &) { r.timeHigh += 2; }, // two seconds after the pulse
      [](auto &r, auto &) { r.fen = 23; },
      [](auto &r, auto &) { r.group = 250; },
      [](auto &r, auto &) {
        r.ampA = -400;
        r.ampB = 100;
      },
      [](auto &r, auto &) { r.fiber = 30; },
      [](auto &r, auto &) { r.length = 20; },
      [](auto &r, auto &) { r.length = 4000; },
      [](auto &r, auto &bytes) {
        readout::test::shiftSequence(bytes); // 64 up or down
        r.ampA = 0;
        r.ampB = 0;
        r.ampC = 0;
        r.ampD = 0;
      },
  };
  auto out = readout::test::faultyReplay<CaenReadout>(encoded, faults);
  readout::test::insertAt(out, 3, readout::test::otherType(encoded.front(), 0x01));
  return out;
}

struct File {
  const char *config, *calibration;
  int perPulse; ///< CSPEC: readoutgen reaches one column in 12.5 (the pixels a readout gives)
};

void expectAgree(const nlohmann::json &config, const std::string &name,
                 const std::string &calibration, int perPulse = 3000) {
  SCOPED_TRACE(name + " " + calibration);
  const std::vector<ReplayDatagram> datagrams = stream(name, calibration, perPulse);
  const nlohmann::json cal =
      calibration.empty() ? nlohmann::json() : test::shippedCalibration(calibration);
  const auto one = expectPartitionsAgree<CaenModule>(config, name, datagrams, {2, 4}, cal);
  EXPECT_GT(one.eventCount(), 8000U);
  EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(one.eventCount()));
  // The broken readouts moved the counters on both sides of the partition filter.
  readout::test::expectMoved(one,
                             {"parser.readout.error_ringfen", "parser.readout.error_datlen_invalid",
                              "parser.readout.error_datlen_mismatch", "geometry.validation_errors",
                              "events.timestamp.tof.high", "parser.essheader.errors.type"});
  EXPECT_GT(one.counters.at("geometry.pixel_errors") + one.counters.at("geometry.ampl_low"), 0);
  readout::test::expectSpread(eventsPerPartition<CaenModule>(2, config, name, datagrams, cal),
                              one.eventCount());
}

TEST(CaenPartitions, LokiWithASourcePerBank) {
  nlohmann::json config = test::shipped("LokiFull.json");
  config["sources"] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"};
  expectAgree(config, "LokiFull.json", "lokinullcalib.json");
}

TEST(CaenPartitions, LokiWithTheDefaultSource) {
  expectAgree(test::shipped("LokiFull.json"), "LokiFull.json", "");
}

TEST(CaenPartitions, TheOtherInstruments) {
  for (const File &f : {File{"bifrost.json", "bifrostllbcalib.json", 3000},
                        File{"cspec.json", "cspecnullcalib.json", 40000},
                        File{"miracles.json", "miraclesnullcalib.json", 3000},
                        File{"tbl3he.json", "tbl3henullcalib.json", 3000}}) {
    expectAgree(test::shipped(f.config), f.config, f.calibration, f.perPulse);
  }
}

TEST(CaenPartitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<CaenModule>(), nullptr);
}

} // namespace
} // namespace efu::caen
