// SPDX-License-Identifier: BSD-2-Clause
// dream as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped DREAM, MAGIC
// and HEIMDAL files, DreamSource's neutrons over several pulses with readouts broken on the
// way, run as 1, 2 and 4 partitions give the same events and the same counter sums.
#include "modules/dream/DreamModule.h"
#include "modules/dream/DreamSource.h"

#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
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
  std::vector<ReplayDatagram> out;
  const size_t header = readout::headerBytes(0);
  for (size_t i = 0; i < encoded.size(); ++i) {
    ReplayDatagram d{encoded[i], 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000};
    const size_t readouts = (d.bytes.size() - header) / kReadoutBytes;
    if (i % 5 == 2 && readouts > 10) {
      const size_t at = header + ((i * 7) % readouts) * kReadoutBytes;
      CdtReadout r;
      std::memcpy(&r, d.bytes.data() + at, sizeof(r));
      switch ((i / 5) % 8) {
      case 0:
        r.timeHigh += 3; // beyond the largest 32-bit time of flight
        break;
      case 1:
        r.fen = 12;
        break;
      case 2:
        r.fen = 11;
        break;
      case 3:
        r.unit = 200; // no SUMO, no cuboid; MAGIC's PA: no cassette
        r.cathode = 255;
        r.anode = 255;
        break;
      case 4:
        r.fiber = 30;
        break;
      case 5:
        r.length = 20;
        break;
      case 6:
        r.length = 4000;
        break;
      default:
        r.fen = 13;
        d.bytes[offsetof(readout::EssHeaderV0, seqNum)] ^= 0x40;
        break;
      }
      std::memcpy(d.bytes.data() + at, &r, sizeof(r));
    }
    out.push_back(std::move(d));
  }
  std::vector<uint8_t> other = encoded.front();
  other[offsetof(readout::EssHeaderV0, detectorType)] ^= 0x01;
  out.insert(out.begin() + 3, ReplayDatagram{other, out[3].rxTimeNs});
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
    for (const char *moved : {"readouts.error_buffer", "readouts.error_datalen",
                              "readouts.error_fiber", "readouts.error_fen", "geometry.fen_errors",
                              "geometry.config_errors", "events.timestamp.tof.high",
                              "parser.essheader.errors.type", "parser.essheader.seq.lost"}) {
      EXPECT_GT(one.counters.at(moved), 0) << moved;
    }
    if (file != "HeimdalInst.json") { // every readout of HEIMDAL's mantle is a pixel
      EXPECT_GT(one.counters.at("geometry.pixel_errors"), 0);
    }
    const std::vector<size_t> per = eventsPerPartition<DreamModule>(2, config, file, datagrams);
    ASSERT_EQ(per.size(), 2U);
    EXPECT_GT(per[0], one.eventCount() / 4);
    EXPECT_GT(per[1], one.eventCount() / 4);
    EXPECT_EQ(per[0] + per[1], one.eventCount());
  }
}

TEST(DreamPartitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<DreamModule>(), nullptr);
}

} // namespace
} // namespace efu::dream
