// SPDX-License-Identifier: BSD-2-Clause
// caen as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped instrument
// files, readoutgen's neutrons over several pulses with readouts broken on the way, run as 1, 2
// and 4 partitions give the same events per source and the same counter sums.
#include "common/readout/EssHeader.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace efu::caen {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::ReplayDatagram;

/// Readout `j` of datagram `d` (after its header).
CaenReadout readoutOf(const std::vector<uint8_t> &d, size_t j) {
  CaenReadout r;
  std::memcpy(&r, d.data() + readout::headerBytes(0) + j * sizeof(r), sizeof(r));
  return r;
}
void writeReadout(std::vector<uint8_t> &d, size_t j, const CaenReadout &r) {
  std::memcpy(d.data() + readout::headerBytes(0) + j * sizeof(r), &r, sizeof(r));
}

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
  std::vector<ReplayDatagram> out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    ReplayDatagram d{encoded[i], 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000};
    const size_t readouts = (d.bytes.size() - readout::headerBytes(0)) / sizeof(CaenReadout);
    if (i % 5 == 2 && readouts > 10) {
      const size_t j = (i * 7) % readouts;
      CaenReadout r = readoutOf(d.bytes, j);
      switch ((i / 5) % 8) {
      case 0:
        r.timeHigh += 2; // two seconds after the pulse
        break;
      case 1:
        r.fen = 23;
        break;
      case 2:
        r.group = 250;
        break;
      case 3:
        r.ampA = -400;
        r.ampB = 100;
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
        d.bytes[offsetof(readout::EssHeaderV0, seqNum)] ^= 0x40; // 64 up or down
        r.ampA = 0;
        r.ampB = 0;
        r.ampC = 0;
        r.ampD = 0;
        break;
      }
      writeReadout(d.bytes, j, r);
    }
    out.push_back(std::move(d));
  }
  std::vector<uint8_t> other = encoded.front();
  other[offsetof(readout::EssHeaderV0, detectorType)] ^= 0x01;
  out.insert(out.begin() + 3, ReplayDatagram{other, out[3].rxTimeNs});
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
  for (const char *moved : {"parser.readout.error_ringfen", "parser.readout.error_datlen_invalid",
                            "parser.readout.error_datlen_mismatch", "geometry.validation_errors",
                            "events.timestamp.tof.high", "parser.essheader.errors.type"}) {
    EXPECT_GT(one.counters.at(moved), 0) << moved;
  }
  EXPECT_GT(one.counters.at("geometry.pixel_errors") + one.counters.at("geometry.ampl_low"), 0);
  const std::vector<size_t> per = eventsPerPartition<CaenModule>(2, config, name, datagrams, cal);
  ASSERT_EQ(per.size(), 2U);
  EXPECT_GT(per[0], one.eventCount() / 4);
  EXPECT_GT(per[1], one.eventCount() / 4);
  EXPECT_EQ(per[0] + per[1], one.eventCount());
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
