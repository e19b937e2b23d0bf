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
#include <cstring>
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
        r.channel = 2;
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
  for (const char *moved :
       {"readouts.error_size", "readouts.error_channel", "readouts.error_datalen",
        "geometry.ring_errors", "geometry.fen_errors", "geometry.hybrid_mapping_errors",
        "geometry.validation_errors", "cluster.no_coincidence", "events.timestamp.tof.high",
        "parser.essheader.errors.type", "parser.essheader.seq.lost"}) {
    EXPECT_GT(one.counters.at(moved), 0) << moved;
  }
  const std::vector<size_t> per =
      eventsPerPartition<Vmm3Module>(2, config, file, datagrams, calibration);
  EXPECT_GT(per.at(0), one.eventCount() / 4);
  EXPECT_GT(per.at(1), one.eventCount() / 4);
  EXPECT_EQ(per.at(0) + per.at(1), one.eventCount());
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
