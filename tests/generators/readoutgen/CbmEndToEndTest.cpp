// SPDX-License-Identifier: BSD-2-Clause
// End to end: readoutgen -d cbm --truth → efu -d cbm (the ESS cbmtest.json, unchanged) →
// efu-broker → efu-dump. The ev44 events of every 0D and 2D monitor equal the truth of its
// source exactly; every da00 histogram equals the truth's values of its source and pulse, binned
// here by the ESS rules (100 bins of 100 ns, entries beyond dropped). The same for -d beer with
// the ESS beer_base_test.json (events only). efu-dump --da00-png charts the histograms summed per
// source. Real binaries on loopback.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <png.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace efu::testkit {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct TruthLine {
  int64_t pulse;
  int64_t tof;
  int64_t value;
  std::string source;
};

/// Width and height of a PNG, read with libpng; nullopt when it does not decode.
std::optional<std::pair<uint32_t, uint32_t>> readPngSize(const std::string &path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&png, path.c_str()) == 0) {
    return std::nullopt;
  }
  png.format = PNG_FORMAT_RGB;
  std::vector<uint8_t> rgb(PNG_IMAGE_SIZE(png));
  const bool ok = png_image_finish_read(&png, nullptr, rgb.data(), 0, nullptr) != 0;
  const std::pair<uint32_t, uint32_t> size{png.width, png.height};
  png_image_free(&png);
  return ok ? std::optional(size) : std::nullopt;
}

std::vector<TruthLine> readSourcedTruth(const fs::path &p) {
  std::vector<TruthLine> out;
  const auto ls = lines(readFile(p));
  EXPECT_FALSE(ls.empty());
  EXPECT_EQ(ls.at(0), "pulse_time_ns,tof_ns,pixel_id,source");
  for (size_t i = 1; i < ls.size(); ++i) {
    long long pulse = 0, tof = 0, value = 0;
    char source[64] = {};
    EXPECT_EQ(std::sscanf(ls[i].c_str(), "%lld,%lld,%lld,%63s", &pulse, &tof, &value, source), 4)
        << ls[i];
    out.push_back({pulse, tof, value, source});
  }
  return out;
}

/// One run of readoutgen -d `det` → efu -d `det` (the file `config` of modules/cbm/configs/) →
/// efu-broker → efu-dump of `<det>_detector` (the default topic of -d NAME); the truth and
/// efu-dump's JSON lines.
struct PipelineRun {
  std::vector<TruthLine> truth;
  std::string dump;
};

void runPipeline(const std::string &det, const std::string &configName, PipelineRun &run,
                 const std::vector<std::string> &dumpOptions = {}) {
  const fs::path dir = fs::temp_directory_path() / (det + "-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string config = std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/" + configName;
  DevBroker broker(EFU_BROKER, {"--log-level", "warn"});
  const std::string bootstrap = broker.bootstrap();
  const uint16_t udp = freeUdpPort();
  const uint16_t cmd = freeTcpPort();
  Process efu({EFU_BINARY, "-d", det, "-f", config, "-p", std::to_string(udp), "-m",
               std::to_string(cmd), "-b", bootstrap, "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] {
    return counter(cmd, "parser.essheader.ok").has_value() || !efu.running();
  })) << efu.output();
  ASSERT_TRUE(efu.running()) << efu.output();

  const fs::path truthPath = dir / "truth.csv";
  Process gen({READOUTGEN,
               "-d",
               det,
               "-f",
               config,
               "-p",
               std::to_string(udp),
               "-q",
               "--json",
               "-n",
               "16000",
               "--eps",
               "40000",
               "--events-per-pulse",
               "2000",
               "--pattern",
               "uniform",
               "--tof",
               "uniform:0:0.012",
               "--truth",
               truthPath.string()});
  ASSERT_EQ(gen.wait(120s), std::optional<int>(0)) << gen.output();
  int64_t datagrams = -1;
  for (const auto &l : lines(gen.output())) {
    if (l.rfind("{\"events\"", 0) == 0) {
      datagrams = nlohmann::json::parse(l).at("datagrams").get<int64_t>();
    }
  }
  ASSERT_GT(datagrams, 0) << gen.output();
  ASSERT_TRUE(eventually([&] { return counter(cmd, "parser.essheader.ok") == datagrams; }, 60s))
      << efu.output();
  // Every readout was the module's: none refused by the parser or the geometry.
  EXPECT_EQ(counter(cmd, "parser.readout.errors.type"), 0);
  EXPECT_EQ(counter(cmd, "geometry.validation_errors"), 0);
  // The stop publishes the last pulse's histograms and waits until Kafka has everything.
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();

  std::vector<std::string> dumpArgs{EFU_DUMP, "-b",        bootstrap,   "-t", det + "_detector",
                                    "--from", "beginning", "--timeout", "3",  "--log-level",
                                    "warn"};
  dumpArgs.insert(dumpArgs.end(), dumpOptions.begin(), dumpOptions.end());
  Process dump(dumpArgs);
  ASSERT_EQ(dump.wait(60s), std::optional<int>(0)) << dump.output();
  run.truth = readSourcedTruth(truthPath);
  run.dump = dump.output();
  fs::remove_all(dir);
}

TEST(CbmEndToEnd, EventsPerSourceAndHistogramsPerPulseMatchTheTruthExactly) {
  PipelineRun run;
  const fs::path pictures = fs::temp_directory_path() / ("cbm-e2e-png-" + std::to_string(getpid()));
  fs::create_directories(pictures);
  const std::string prefix = (pictures / "m-").string();
  runPipeline("cbm", "cbmtest.json", run, {"--da00-png", prefix});
  if (HasFatalFailure()) {
    return;
  }
  // The truth: events of the ev44 monitors, and (source, pulse) → bins of the da00 ones.
  const std::set<std::string> histogramSources{"cbm4", "cbm5", "cbm6"};
  constexpr int64_t kBins = 100;
  constexpr int64_t kWidth = 100;
  std::map<std::string, std::map<Event, int64_t>> wantEvents;
  std::map<std::pair<std::string, int64_t>, std::vector<int64_t>> wantBins;
  int64_t firstPulse = INT64_MAX;
  for (const TruthLine &t : run.truth) {
    firstPulse = std::min(firstPulse, t.pulse);
    if (histogramSources.count(t.source) == 0) {
      ++wantEvents[t.source][{t.pulse, t.tof, t.value}];
      continue;
    }
    auto &bins = wantBins[{t.source, t.pulse}];
    bins.resize(kBins);
    if (t.tof / kWidth < kBins) {
      bins[static_cast<size_t>(t.tof / kWidth)] += t.value;
    }
  }
  ASSERT_EQ(wantEvents.size(), 5U);
  ASSERT_FALSE(wantBins.empty());

  std::map<std::string, std::map<Event, int64_t>> gotEvents;
  std::map<std::pair<std::string, int64_t>, std::vector<int64_t>> gotBins;
  int64_t histograms = 0;
  for (const auto &l : lines(run.dump)) {
    if (l.empty() || l[0] != '{') {
      continue;
    }
    const auto j = nlohmann::json::parse(l);
    const std::string source = j.value("source_name", "");
    if (j.value("kind", "") == "ev44") {
      int64_t n = 0;
      for (const auto &[e, count] : dumpedEvents(l, n)) {
        gotEvents[source][e] += count;
      }
      continue;
    }
    ASSERT_EQ(j.value("kind", ""), "da00") << l;
    ++histograms;
    const auto &vars = j.at("data");
    ASSERT_EQ(vars.size(), 4U) << l;
    EXPECT_EQ(vars[0].at("name"), "frame_time");
    EXPECT_EQ(vars[0].at("unit"), "ns");
    EXPECT_EQ(vars[0].at("data_type"), "int32");
    EXPECT_EQ(vars[0].at("axes"), nlohmann::json::array({"frame_time"}));
    EXPECT_EQ(vars[0].at("data").size(), 101U);
    EXPECT_EQ(vars[0].at("data")[100], 10000);
    EXPECT_EQ(vars[1].at("name"), "signal");
    EXPECT_EQ(vars[1].at("unit"), "A");
    EXPECT_EQ(vars[1].at("shape"), nlohmann::json::array({100}));
    EXPECT_EQ(vars[2].at("name"), "reference_time");
    EXPECT_EQ(vars[3].at("name"), "frame_total");
    EXPECT_EQ(vars[3].at("data_type"), "uint64");
    const int64_t timestamp = j.at("timestamp").get<int64_t>();
    // reference_time: the pulse after the run's first one (int32 ns; the run is 0.6 s long).
    EXPECT_EQ(vars[2].at("data")[0].get<int64_t>(), timestamp - firstPulse);
    std::vector<int64_t> bins;
    int64_t sum = 0;
    for (const auto &b : vars[1].at("data")) {
      bins.push_back(b.get<int64_t>());
      sum += b.get<int64_t>();
    }
    EXPECT_EQ(vars[3].at("data")[0].get<int64_t>(), sum);
    EXPECT_TRUE(gotBins.emplace(std::make_pair(source, timestamp), bins).second)
        << "two histograms of " << source << " for pulse " << timestamp;
  }
  EXPECT_EQ(gotEvents, wantEvents);
  EXPECT_EQ(gotBins, wantBins);
  EXPECT_EQ(histograms, static_cast<int64_t>(wantBins.size()));

  // efu-dump --da00-png: per source the signal summed over its messages, which is the truth
  // summed over the pulses; the chart's extent and its largest bin are reported on stderr.
  std::map<std::string, std::vector<int64_t>> wantSums;
  std::map<std::string, int64_t> wantMessages;
  for (const auto &[key, bins] : wantBins) {
    auto &sums = wantSums[key.first];
    sums.resize(bins.size());
    for (size_t i = 0; i < bins.size(); ++i) {
      sums[i] += bins[i];
    }
    ++wantMessages[key.first];
  }
  ASSERT_EQ(wantSums.size(), 3U);
  for (const auto &[source, sums] : wantSums) {
    const std::string png = prefix + source + ".png";
    const std::string line =
        "da00: " + png + ", source '" + source + "': " + std::to_string(wantMessages[source]) +
        " messages summed (0 skipped), 100 bins of 'signal' over "
        "'frame_time' [0, 10000] ns, max " +
        std::to_string(*std::max_element(sums.begin(), sums.end())) + " per bin";
    EXPECT_NE(run.dump.find(line), std::string::npos) << line << "\n" << run.dump;
    const auto picture = readPngSize(png);
    ASSERT_TRUE(picture.has_value()) << png;
    EXPECT_GT(picture->first, 800U);
    EXPECT_GT(picture->second, 300U);
  }
  fs::remove_all(pictures);
}

// BEER: the ESS EFU's beer_base_test.json unchanged, -d beer (the cbm module, detector type
// 0x50): four EVENT_2D monitors of 512 x 512, each source's ev44 events exactly its truth.
TEST(CbmEndToEnd, BeerEventsPerSourceMatchTheTruthExactly) {
  PipelineRun run;
  runPipeline("beer", "beer_base_test.json", run);
  if (HasFatalFailure()) {
    return;
  }
  std::map<std::string, std::map<Event, int64_t>> wantEvents;
  for (const TruthLine &t : run.truth) {
    ++wantEvents[t.source][{t.pulse, t.tof, t.value}];
  }
  ASSERT_EQ(wantEvents.size(), 4U);
  std::map<std::string, std::map<Event, int64_t>> gotEvents;
  for (const auto &l : lines(run.dump)) {
    if (l.empty() || l[0] != '{') {
      continue;
    }
    const auto j = nlohmann::json::parse(l);
    ASSERT_EQ(j.value("kind", ""), "ev44") << l;
    int64_t n = 0;
    for (const auto &[e, count] : dumpedEvents(l, n)) {
      gotEvents[j.value("source_name", "")][e] += count;
    }
  }
  EXPECT_EQ(gotEvents, wantEvents);
}

} // namespace
} // namespace efu::testkit
