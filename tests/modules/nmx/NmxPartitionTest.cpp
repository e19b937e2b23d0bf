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
#include <cstring>
#include <string>
#include <vector>

namespace efu::nmx {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;
using vmm3::kReadoutBytes;
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
  std::vector<ReplayDatagram> out;
  const size_t header = readout::headerBytes(0);
  for (size_t i = 0; i < encoded.size(); ++i) {
    ReplayDatagram d{encoded[i], 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000};
    const size_t readouts = (d.bytes.size() - header) / kReadoutBytes;
    if (i % 5 == 2 && readouts > 10) {
      const size_t at = header + ((i * 7) % readouts) * kReadoutBytes;
      Vmm3Readout r;
      std::memcpy(&r, d.bytes.data() + at, sizeof(r));
      switch ((i / 5) % 8) {
      case 0: // every readout of the datagram: its events come beyond the time of flight
        for (size_t k = header; k < d.bytes.size(); k += kReadoutBytes) {
          Vmm3Readout late;
          std::memcpy(&late, d.bytes.data() + k, sizeof(late));
          late.timeHigh += 2;
          std::memcpy(d.bytes.data() + k, &late, sizeof(late));
        }
        std::memcpy(&r, d.bytes.data() + at, sizeof(r));
        break;
      case 1:
        r.fiber = 22;
        break;
      case 2:
        r.fen = 20;
        break;
      case 3:
        r.vmm = 14;
        break;
      case 4:
        r.otadc = 10;
        break;
      case 5:
        r.channel = 70;
        break;
      case 6:
        r.length = 19;
        break;
      default:
        d.bytes[offsetof(readout::EssHeaderV0, seqNum)] ^= 0x40;
        break;
      }
      std::memcpy(d.bytes.data() + at, &r, sizeof(r));
    }
    out.push_back(std::move(d));
  }
  std::vector<uint8_t> other = encoded.front();
  other[offsetof(readout::EssHeaderV0, detectorType)] ^= 0x02;
  out.insert(out.begin() + 3, ReplayDatagram{other, out[3].rxTimeNs});
  std::vector<uint8_t> ragged = encoded.back(); // one byte more than whole readouts
  ragged.push_back(0);
  const auto length = static_cast<uint16_t>(ragged.size());
  std::memcpy(ragged.data() + offsetof(readout::EssHeaderV0, totalLength), &length, sizeof(length));
  out.insert(out.begin() + 7, ReplayDatagram{ragged, out[7].rxTimeNs});
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
    for (const char *moved :
         {"readouts.error_size", "readouts.error_channel", "readouts.error_datalen",
          "geometry.ring_errors", "geometry.fen_errors", "geometry.hybrid_mapping_errors",
          "geometry.adc_errors", "geometry.validation_errors", "events.timestamp.tof.high",
          "cluster.matcherstats.match_attempt_count", "parser.essheader.errors.type",
          "parser.essheader.seq.lost"}) {
      EXPECT_GT(one.counters.at(moved), 0) << moved;
    }
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
