// SPDX-License-Identifier: BSD-2-Clause
// cbm as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped files (and
// cbmtest.json with histograms over the whole pulse, aggregated and averaged), readoutgen's
// readouts over several pulses with readouts broken on the way, run as 1, 2 and 4 partitions
// give the same events per source, the same histograms per source and the same counter sums.
#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/cbm/CbmModule.h"
#include "modules/cbm/CbmReadout.h"
#include "modules/cbm/CbmSource.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace efu::cbm {
namespace {

using readout::test::eventsPerPartition;
using readout::test::expectPartitionsAgree;
using readout::test::PartitionedModule;
using readout::test::ReplayDatagram;

nlohmann::json shipped(const std::string &name) {
  const std::string path = std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/" + name;
  return validateModuleConfig("cbm", kCbmConfigKeys, kCbmConfigKeyCount, readConfigFile(path),
                              name);
}

/// cbmtest.json with its three IBM histograms over the whole pulse (700 bins of 100 us): cbm4
/// published every 2 pulses, cbm5 as the average of each pulse.
nlohmann::json histograms() {
  nlohmann::json c =
      readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/cbmtest.json");
  for (nlohmann::json &entry : c["Topology"]) {
    if (entry["Type"] == "IBM") {
      entry["MaxTofBin"] = 70'000'000;
      entry["BinCount"] = 700;
    }
    if (entry["Source"] == "cbm4") {
      entry["AggregatedFrames"] = 2;
    }
    if (entry["Source"] == "cbm5") {
      entry["AggregationMode"] = 1;
    }
  }
  return validateModuleConfig("cbm", kCbmConfigKeys, kCbmConfigKeyCount, c, "histograms.json");
}

/// Six pulses of 1000 of readoutgen's readouts (30 to a datagram), every fifth datagram broken,
/// by turns: all its readouts two seconds later (beyond MaxTOFNS); one readout with fiber 30,
/// another ring, FEN 3, a channel of no monitor, type 7, a length that is not 20, and the
/// sequence number 64 off; one datagram of another detector type, one without readouts and one
/// that is not a whole number of readouts.
std::vector<ReplayDatagram> stream(const nlohmann::json &config, const std::string &file) {
  CbmSource source(config, file, 5);
  readout::test::TruthCount truth;
  const auto encoded = readout::test::encodePulses(source, 19, 6, 1000, 30, truth);
  std::vector<ReplayDatagram> out;
  const size_t header = readout::headerBytes(0);
  for (size_t i = 0; i < encoded.size(); ++i) {
    ReplayDatagram d{encoded[i], 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000};
    const size_t readouts = (d.bytes.size() - header) / kReadoutBytes;
    if (i % 5 == 2 && readouts > 10) {
      const size_t at = header + ((i * 7) % readouts) * kReadoutBytes;
      CbmReadout r;
      std::memcpy(&r, d.bytes.data() + at, sizeof(r));
      switch ((i / 5) % 8) {
      case 0:
        for (size_t k = header; k < d.bytes.size(); k += kReadoutBytes) {
          CbmReadout late;
          std::memcpy(&late, d.bytes.data() + k, sizeof(late));
          late.timeHigh += 2;
          std::memcpy(d.bytes.data() + k, &late, sizeof(late));
        }
        std::memcpy(&r, d.bytes.data() + at, sizeof(r));
        break;
      case 1:
        r.fiber = 30;
        break;
      case 2:
        r.fiber = static_cast<uint8_t>(r.fiber < 2 ? 2 : 0); // another ring
        break;
      case 3:
        r.fen = 3;
        break;
      case 4:
        r.channel = 9;
        break;
      case 5:
        r.type = 7;
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
  other[offsetof(readout::EssHeaderV0, detectorType)] ^= 0x01;
  out.insert(out.begin() + 3, ReplayDatagram{other, out[3].rxTimeNs});
  // A header alone, and one byte more than whole readouts, each of its neighbour's pulse.
  for (const size_t at : {size_t{9}, size_t{40}}) {
    std::vector<uint8_t> bytes(encoded[at].begin(), encoded[at].begin() + header);
    if (at == 40) {
      bytes = encoded[at];
      bytes.push_back(0);
    }
    const auto length = static_cast<uint16_t>(bytes.size());
    std::memcpy(bytes.data() + offsetof(readout::EssHeaderV0, totalLength), &length,
                sizeof(length));
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at),
               ReplayDatagram{bytes, out[at].rxTimeNs});
  }
  return out;
}

/// One data array as published: time and, per variable, name, unit, axes, shape, type, bytes.
using Array =
    std::tuple<int64_t, std::vector<std::tuple<std::string, std::string, std::vector<std::string>,
                                               std::vector<int64_t>, int, std::vector<uint8_t>>>>;

/// Every data array the partitions published, per source, sorted.
std::map<std::string, std::vector<Array>> arraysOf(unsigned partitions,
                                                   const nlohmann::json &config,
                                                   const std::string &file,
                                                   const std::vector<ReplayDatagram> &datagrams) {
  PartitionedModule<CbmModule> m(partitions, config, file);
  for (const ReplayDatagram &d : datagrams) {
    m.process(d);
  }
  m.flush();
  std::map<std::string, std::vector<Array>> out;
  for (unsigned p = 0; p < partitions; ++p) {
    for (const auto &[source, sink] : m.context(p).arrays) {
      auto &list = out[source];
      for (const readout::RecordedArray &a : sink.arrays) {
        Array copy{a.timestampNs, {}};
        for (const readout::RecordedArray::Variable &v : a.variables) {
          std::get<1>(copy).emplace_back(v.name, v.unit, v.axes, v.shape, static_cast<int>(v.type),
                                         v.data);
        }
        list.push_back(std::move(copy));
      }
    }
  }
  for (auto &[source, list] : out) {
    std::sort(list.begin(), list.end());
  }
  return out;
}

void expectAgree(const nlohmann::json &config, const std::string &file) {
  SCOPED_TRACE(file);
  const std::vector<ReplayDatagram> datagrams = stream(config, file);
  const auto one = expectPartitionsAgree<CbmModule>(config, file, datagrams);
  EXPECT_GT(one.counters.at("readouts.processed"), 4000);
  for (const char *moved :
       {"parser.readout.errors.fiber", "parser.readout.errors.type",
        "parser.readout.errors.datalen", "parser.readout.errors.size",
        "parser.readout.errors.no_data", "geometry.monitor_ring_mismatch_errors",
        "geometry.fen_errors", "geometry.topology_errors", "events.timestamp.tof.high",
        "parser.essheader.errors.type", "parser.essheader.seq.lost"}) {
    EXPECT_GT(one.counters.at(moved), 0) << moved;
  }
  const auto arrays = arraysOf(1, config, file, datagrams);
  for (const unsigned n : {2U, 4U}) {
    EXPECT_EQ(arraysOf(n, config, file, datagrams), arrays) << n << " partitions";
  }
  // The work spread: events or histograms in both of two partitions.
  PartitionedModule<CbmModule> two(2, config, file);
  for (const ReplayDatagram &d : datagrams) {
    two.process(d);
  }
  two.flush();
  for (unsigned p = 0; p < 2; ++p) {
    uint64_t published = 0;
    for (const auto &[source, sink] : two.context(p).sources) {
      published += sink.count;
    }
    for (const auto &[source, sink] : two.context(p).arrays) {
      published += sink.count;
    }
    EXPECT_GT(published, 0U) << "partition " << p;
  }
}

TEST(CbmPartitions, MonitorsOfEveryKindAgreeAsOneTwoAndFourPartitions) {
  expectAgree(shipped("cbmtest.json"), "cbmtest.json");
}

TEST(CbmPartitions, HistogramsAggregatedAndAveragedAgree) {
  const nlohmann::json config = histograms();
  expectAgree(config, "histograms.json");
  const auto arrays = arraysOf(1, config, "histograms.json", stream(config, "histograms.json"));
  ASSERT_EQ(arrays.size(), 3U);
  EXPECT_GE(arrays.at("cbm4").size(), 3U); // every two of six pulses
  EXPECT_GE(arrays.at("cbm5").size(), 5U);
}

TEST(CbmPartitions, Beer) {
  expectAgree(shipped("beer_base_test.json"), "beer_base_test.json");
}

TEST(CbmPartitions, TheDescriptorDeclaresTheKey) {
  EXPECT_NE(sdk::detail::partitionKeyOf<CbmModule>(), nullptr);
}

} // namespace
} // namespace efu::cbm
