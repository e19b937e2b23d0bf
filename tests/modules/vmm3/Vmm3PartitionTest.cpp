// SPDX-License-Identifier: BSD-2-Clause
// vmm3 as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped FREIA (with and
// without its calibration), ESTIA, AMOR and TBLMB files, readoutgen's neutrons over several
// pulses with readouts broken on the way, run as 1, 2 and 4 partitions give the same events and
// the same counter sums.
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace efu::vmm3 {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;

/// Four pulses of 2000 of readoutgen's neutrons (30 to a datagram), every fifth datagram
/// broken, by turns: all its readouts two seconds later (beyond the time of flight); one
/// readout with ring 11, FEN 20, a VMM of no hybrid, channel 2 (outside a wire plane), the
/// parser's refusals (channel 70, a length that is not 20) and the sequence number 64 off; one
/// datagram of another detector type and one that is not a whole number of readouts.
std::vector<ReplayDatagram> stream(const nlohmann::json &config, const std::string &file,
                                   const nlohmann::json &calibration,
                                   const std::string &calibrationFile) {
  Vmm3Source source(config, file, 5, calibration, calibrationFile);
  readout::test::TruthCount truth;
  const auto encoded = readout::test::encodePulses(source, 19, 4, 2000, 30, truth);
  auto out = readout::test::faultyReplay<Vmm3Readout>(
      encoded, readout::test::vmm3Faults([](auto &r, auto &) { r.channel = 2; }));
  readout::test::insertAt(out, 3, readout::test::otherType(encoded.front(), 0x02));
  readout::test::insertAt(out, 7, readout::test::ragged(encoded.back()));
  return out;
}

readout::test::PartitionedResult expectAgree(const nlohmann::json &config, const std::string &file,
                                             const std::string &calibrationFile,
                                             const nlohmann::json &sourceConfig = nullptr) {
  SCOPED_TRACE(file + " " + calibrationFile);
  const nlohmann::json calibration =
      calibrationFile.empty() ? nlohmann::json() : test::shippedCalibration(calibrationFile);
  const std::vector<ReplayDatagram> datagrams =
      stream(sourceConfig.is_null() ? config : sourceConfig, file, calibration, calibrationFile);
  const auto one = expectPartitionsAgree<Vmm3Module>(config, file, datagrams, {2, 4}, calibration);
  EXPECT_GT(one.eventCount(), 3000U);
  EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(one.eventCount()));
  // The broken readouts moved the counters on both sides of the partition filter, and those
  // of readouts of no cassette.
  readout::test::expectMoved(one, readout::test::kVmm3FaultCounters);
  readout::test::expectMoved(one, {"readouts.error_size", "geometry.validation_errors",
                                   "cluster.no_coincidence", "parser.essheader.errors.type"});
  readout::test::expectSpread(
      eventsPerPartition<Vmm3Module>(2, config, file, datagrams, calibration), one.eventCount());
  return one;
}

TEST(Vmm3Partitions, FreiaWithAndWithoutItsCalibration) {
  expectAgree(test::shipped("freia.json"), "freia.json", "");
  expectAgree(test::shipped("freia.json"), "freia.json", "calib.json");
}

TEST(Vmm3Partitions, FreiaWithThresholds) {
  nlohmann::json config = test::rawShipped("freia.json");
  for (size_t entry = 0; entry < config["Config"].size(); entry += 3) {
    config["Config"][entry]["Thresholds"] = {{300}, {300}};
  }
  // readoutgen sends no readout below a threshold: it encodes for the file without them.
  const auto one = expectAgree(test::validated(config, "freia.json"), "freia.json", "",
                               test::shipped("freia.json"));
  EXPECT_GT(one.counters.at("readouts.adc_below_threshold"), 0);
}

TEST(Vmm3Partitions, EstiaAmorAndTblmb) {
  expectAgree(test::shipped("estia_config.json"), "estia_config.json", "estia_calib.json");
  expectAgree(test::shipped("amor.json"), "amor.json", "");
  expectAgree(test::shipped("tblmb.json"), "tblmb.json", "");
}

TEST(Vmm3Partitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<Vmm3Module>(), nullptr);
}

} // namespace
} // namespace efu::vmm3
