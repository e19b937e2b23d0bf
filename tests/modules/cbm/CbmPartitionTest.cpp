// SPDX-License-Identifier: BSD-2-Clause
// cbm as partitions (--proc-threads, docs/modules.md "Partitions"): the shipped files (and
// cbmtest.json with histograms over the whole pulse, aggregated and averaged), readoutgen's
// readouts over several pulses with readouts broken on the way, run as 1, 2 and 4 partitions
// give the same events per source, the same histograms per source and the same counter sums.
#include "common/sdk/ModuleConfig.h"
#include "modules/cbm/CbmModule.h"
#include "modules/cbm/CbmReadout.h"
#include "modules/cbm/CbmSource.h"
#include "tests/support/Partitions.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
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
  const std::array<readout::test::Fault<CbmReadout>, 8> faults{
      [](auto &r, auto &bytes) { readout::test::allLater(r, bytes, 2); },
      [](auto &r, auto &) { r.fiber = 30; },
      [](auto &r, auto &) { r.fiber = static_cast<uint8_t>(r.fiber < 2 ? 2 : 0); }, // another ring
      [](auto &r, auto &) { r.fen = 3; },
      [](auto &r, auto &) { r.channel = 9; },
      [](auto &r, auto &) { r.type = 7; },
      [](auto &r, auto &) { r.length = 19; },
      [](auto &, auto &bytes) { readout::test::shiftSequence(bytes); },
  };
  auto out = readout::test::faultyReplay<CbmReadout>(encoded, faults);
  readout::test::insertAt(out, 3, readout::test::otherType(encoded.front(), 0x01));
  // A header alone, and one byte more than whole readouts, each of its neighbour's pulse.
  readout::test::insertAt(out, 9, readout::test::headerOnly(encoded[9]));
  readout::test::insertAt(out, 40, readout::test::ragged(encoded[40]));
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
  readout::test::expectMoved(one, {"parser.readout.errors.fiber", "parser.readout.errors.type",
                                   "parser.readout.errors.datalen", "parser.readout.errors.size",
                                   "parser.readout.errors.no_data",
                                   "geometry.monitor_ring_mismatch_errors", "geometry.fen_errors",
                                   "geometry.topology_errors", "events.timestamp.tof.high",
                                   "parser.essheader.errors.type", "parser.essheader.seq.lost"});
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
