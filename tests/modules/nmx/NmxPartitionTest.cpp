// SPDX-License-Identifier: BSD-2-Clause
// nmx as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped NMX files,
// readoutgen's neutrons over several pulses with readouts broken on the way, run as 1, 2 and 4
// partitions give the same events and the same counter sums.
#include "modules/nmx/NmxModule.h"
#include "modules/nmx/NmxSource.h"
#include "tests/modules/nmx/NmxTestSupport.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace efu::nmx {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;
using vmm3::Vmm3Readout;

/// Four pulses of 3000 of readoutgen's neutrons (30 to a datagram), every fifth datagram
/// broken, by turns: all its readouts two seconds later (beyond the time of flight); one
/// readout with ring 11, FEN 20, a VMM of no hybrid, an ADC below DefaultMinADC, the parser's
/// refusals (channel 70, a length that is not 20) and the sequence number 64 off; one datagram
/// of another detector type and one that is not a whole number of readouts.
std::vector<ReplayDatagram> stream(const nlohmann::json &config, const std::string &file) {
  NmxSource source(config, file, 5);
  readout::test::TruthCount truth;
  const auto encoded = readout::test::encodePulses(source, 19, 4, 3000, 30, truth);
  auto out = readout::test::faultyReplay<Vmm3Readout>(
      encoded, readout::test::vmm3Faults([](auto &r, auto &) { r.otadc = 10; }));
  readout::test::insertAt(out, 3, readout::test::otherType(encoded.front(), 0x02));
  readout::test::insertAt(out, 7, readout::test::ragged(encoded.back()));
  return out;
}

TEST(NmxPartitions, TheShippedFilesAgreeAsOneTwoAndFourPartitions) {
  for (const std::string file : {"nmx.json", "nmx_p0.json", "nmx_split.json", "mininmx.json"}) {
    SCOPED_TRACE(file);
    const nlohmann::json config = test::shipped(file);
    const std::vector<ReplayDatagram> datagrams = stream(config, file);
    const auto one = expectPartitionsAgree<NmxModule>(config, file, datagrams);
    EXPECT_GT(one.eventCount(), 2000U);
    EXPECT_EQ(one.counters.at("events.count"), static_cast<int64_t>(one.eventCount()));
    // The broken readouts moved the counters on both sides of the partition filter, and those
    // of readouts of no panel.
    readout::test::expectMoved(one, readout::test::kVmm3FaultCounters);
    readout::test::expectMoved(
        one, {"readouts.error_size", "geometry.adc_errors", "geometry.validation_errors",
              "cluster.matcherstats.match_attempt_count", "parser.essheader.errors.type"});
    const std::vector<size_t> per = eventsPerPartition<NmxModule>(2, config, file, datagrams);
    ASSERT_EQ(per.size(), 2U);
    EXPECT_EQ(per[0] + per[1], one.eventCount());
    if (file != "mininmx.json") { // one panel: partition 1 has nothing to do
      EXPECT_GT(per[0], one.eventCount() / 4);
      EXPECT_GT(per[1], one.eventCount() / 4);
    }
  }
}

TEST(NmxPartitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<NmxModule>(), nullptr);
}

} // namespace
} // namespace efu::nmx
