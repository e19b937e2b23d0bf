// SPDX-License-Identifier: BSD-2-Clause
// End to end: readoutgen --truth → efu -d caen → efu-broker → efu-dump; then injected defects
// move exactly their counters. Real binaries on loopback; counters are polled.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unistd.h>

namespace efu::testkit {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// All counters of the daemon, by name (STAT_GET_COUNT / STAT_GET i).
std::map<std::string, int64_t> allCounters(uint16_t cmd) {
  std::map<std::string, int64_t> out;
  const std::string count = control(cmd, "STAT_GET_COUNT");
  const int n = std::atoi(count.substr(count.rfind(' ') + 1).c_str());
  for (int i = 1; i <= n; ++i) {
    std::istringstream reply(control(cmd, "STAT_GET " + std::to_string(i)));
    std::string verb, name;
    int64_t value = 0;
    reply >> verb >> name >> value;
    out[name] = value;
  }
  return out;
}

/// Counters of the module (deterministic for a given input), not the daemon's.
std::map<std::string, int64_t> moduleCounters(uint16_t cmd) {
  // The daemon's sections (docs/counters.md); everything else is the module's.
  static const char *const daemon[] = {"receive.", "processing.", "thread.", "machine.",
                                       "process.", "main.",       "kernel.", "kafka.",
                                       "control.", "graphite.", "events.unpublished"};
  std::map<std::string, int64_t> out;
  for (const auto &[k, v] : allCounters(cmd)) {
    if (std::none_of(std::begin(daemon), std::end(daemon),
                     [&k](const char *p) { return k.rfind(p, 0) == 0; })) {
      out[k] = v;
    }
  }
  return out;
}

std::map<std::string, int64_t> delta(const std::map<std::string, int64_t> &after,
                                     const std::map<std::string, int64_t> &before) {
  std::map<std::string, int64_t> out;
  for (const auto &[k, v] : after) {
    const auto it = before.find(k);
    out[k] = v - (it == before.end() ? 0 : it->second);
  }
  return out;
}

class CaenEndToEnd : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("caen-e2e-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    broker_ =
        std::make_unique<DevBroker>(EFU_BROKER, std::vector<std::string>{"--log-level", "warn"});
    bootstrap_ = broker_->bootstrap();
    udp_ = freeUdpPort();
    cmd_ = freeTcpPort();
    efu_ = std::make_unique<Process>(std::vector<std::string>{
        EFU_BINARY, "-d", "caen", "-f", config_, "--instrument", "loki", "-p", std::to_string(udp_),
        "-m", std::to_string(cmd_), "-b", bootstrap_, "--stats-interval", "0.2", "--monitor-every",
        "1"}); // every datagram also to loki_samples, for the replay test
    ASSERT_TRUE(eventually([&] {
      return counter(cmd_, "parser.essheader.ok").has_value() || !efu_->running();
    })) << efu_->output();
    ASSERT_TRUE(efu_->running()) << efu_->output();
  }

  void TearDown() override {
    if (efu_) {
      efu_->signal(SIGTERM);
      EXPECT_EQ(efu_->wait(20s), std::optional<int>(0)) << efu_->output();
    }
    broker_.reset();
    fs::remove_all(dir_);
  }

  /// Runs readoutgen to completion; returns its --json summary.
  nlohmann::json readoutgen(std::vector<std::string> extra) {
    std::vector<std::string> argv{READOUTGEN,           "-f", config_, "-p",
                                  std::to_string(udp_), "-q", "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Process gen(argv);
    EXPECT_EQ(gen.wait(120s), std::optional<int>(0)) << gen.output();
    for (const auto &l : lines(gen.output())) {
      if (l.rfind("{\"events\"", 0) == 0) {
        return nlohmann::json::parse(l);
      }
    }
    ADD_FAILURE() << "no summary: " << gen.output();
    return {};
  }

  int64_t value(const std::string &name) {
    auto v = counter(cmd_, name);
    return v ? *v : -1;
  }

  /// Replays `pcap` (udpgen --pcap, paced: a slow machine's socket buffer must not overflow)
  /// into a second efu -d caen and returns its module counters once its ESS header count
  /// reached `essOk`; checks that udpgen sent `datagrams`, all of them UDP.
  std::map<std::string, int64_t> replayCapture(const fs::path &pcap, int64_t datagrams,
                                               int64_t essOk) {
    const uint16_t replayUdp = freeUdpPort();
    const uint16_t replayCmd = freeTcpPort();
    Process replayEfu({EFU_BINARY, "-d", "caen", "-f", config_, "-p", std::to_string(replayUdp),
                       "-m", std::to_string(replayCmd), "--no-kafka"});
    EXPECT_TRUE(eventually([&] { return !control(replayCmd, "VERSION_GET").empty(); }))
        << replayEfu.output();
    Process udpgen({UDPGEN, "--pcap", pcap.string(), "-p", std::to_string(replayUdp), "--pps",
                    "20000", "--json", "-q"});
    EXPECT_EQ(udpgen.wait(60s), std::optional<int>(0)) << udpgen.output();
    nlohmann::json replayed;
    for (const auto &l : lines(udpgen.output())) {
      if (l.rfind("{", 0) == 0) {
        replayed = nlohmann::json::parse(l);
      }
    }
    EXPECT_EQ(replayed.value("sent", int64_t{-1}), datagrams) << udpgen.output();
    EXPECT_EQ(replayed.value("skipped_not_udp", int64_t{-1}), 0);
    EXPECT_TRUE(eventually([&] {
      const auto now = moduleCounters(replayCmd);
      const auto it = now.find("parser.essheader.ok");
      return it != now.end() && it->second == essOk;
    })) << replayEfu.output();
    auto counters = moduleCounters(replayCmd);
    replayEfu.signal(SIGTERM);
    EXPECT_EQ(replayEfu.wait(20s), std::optional<int>(0)) << replayEfu.output();
    return counters;
  }

  /// Waits until the module has looked at `datagrams` headers in total (valid + refused). Each
  /// refusal readoutgen sends moves one error counter, and a bad previous-pulse fraction
  /// prev_timefrac besides timefrac (the ESS EFU's count of both): prev_timefrac is left out.
  bool processed(int64_t datagrams) {
    return eventually([&] {
      int64_t seen = 0;
      for (const auto &[k, v] : moduleCounters(cmd_)) {
        if (k == "parser.essheader.ok" || (k.rfind("parser.essheader.errors.", 0) == 0 &&
                                           k != "parser.essheader.errors.prev_timefrac")) {
          seen += v;
        }
      }
      return seen == datagrams;
    });
  }

  std::string config_ = std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json";
  fs::path dir_;
  std::string bootstrap_;
  uint16_t udp_ = 0;
  uint16_t cmd_ = 0;
  std::unique_ptr<DevBroker> broker_;
  std::unique_ptr<Process> efu_;
};

TEST_F(CaenEndToEnd, EventsMatchGroundTruthAndInjectedErrorsAreCountedExactly) {
  // 1. Ground truth through the whole chain.
  const auto truthPath = dir_ / "truth.csv";
  const auto s1 = readoutgen({"-n", "20000", "--eps", "100000", "--events-per-pulse", "2500",
                              "--pattern", "letters", "--truth", truthPath.string()});
  ASSERT_EQ(s1.at("events").get<int64_t>(), 20000);
  ASSERT_TRUE(processed(s1.at("datagrams").get<int64_t>()));
  const auto truth = readTruth(truthPath);
  std::map<Event, int64_t> got;
  int64_t dumped = 0;
  int64_t matched = 0;
  // efu publishes ev44 in batches; consume from the beginning until (almost) all have arrived.
  eventually(
      [&] {
        Process dump({EFU_DUMP, "-b", bootstrap_, "-t", "loki_detector", "--from", "beginning",
                      "--timeout", "2", "--log-level", "warn"});
        dump.wait(60s);
        got = dumpedEvents(dump.output(), dumped);
        matched = 0;
        for (const auto &[e, n] : truth) {
          const auto it = got.find(e);
          matched += it == got.end() ? 0 : std::min(n, it->second);
        }
        return matched >= 20000;
      },
      60s);
  EXPECT_GE(matched * 100, 20000 * 99) << "matched " << matched << " of 20000; dumped " << dumped;
  {
    // Read as just-bin-it does (reference_time[0] for every event): the same events, because
    // each message holds one pulse by default (2500 events per pulse, 8 pulses).
    Process dump({EFU_DUMP, "-b", bootstrap_, "-t", "loki_detector", "--from", "beginning",
                  "--timeout", "2", "--log-level", "warn"});
    dump.wait(60s);
    int64_t firstPulseTotal = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), firstPulseTotal, true), got);
    EXPECT_EQ(firstPulseTotal, dumped);
    // Every event under the ESS EFU's LoKI source name, "caen"
    // (src/modules/loki/geometry/LokiGeometry.h serializerName()), not the instrument's.
    int64_t underCaen = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), underCaen, false, "caen"), got);
    EXPECT_EQ(underCaen, dumped);
  }
  RecordProperty("matched", static_cast<int>(matched));
  RecordProperty("dumped", static_cast<int>(dumped));
  EXPECT_EQ(value("parser.essheader.seq.lost"), 0);

  // 2. The same run without and with injected defects: module counters differ by exactly the
  //    counters each moves. A bad previous-pulse fraction moves timefrac (the ESS EFU's count of
  //    both fractions) and prev_timefrac; prev_after_pulse goes into valid datagrams, which efu
  //    accepts as the ESS EFU does (issue 38): their events are formed, only
  //    parser.essheader.prev_after_pulse tells.
  const std::vector<std::pair<std::string, std::vector<std::string>>> injected = {
      {"cookie", {"errors.cookie"}},
      {"version", {"errors.version"}},
      {"padding", {"errors.pad"}},
      {"length", {"errors.size"}},
      {"truncated", {"errors.size"}},
      {"short", {"errors.buffer"}},
      {"queue", {"errors.output_queue"}},
      {"type", {"errors.type"}},
      {"pulse_fraction", {"errors.timefrac"}},
      {"prev_pulse_fraction", {"errors.timefrac", "errors.prev_timefrac"}},
      {"prev_after_pulse", {"prev_after_pulse"}}};
  std::string spec;
  std::map<std::string, int64_t> expected;
  int64_t injectedTotal = 0;
  int64_t alteredTotal = 0;
  int n = 1;
  for (const auto &[kind, counterNames] : injected) {
    spec += (spec.empty() ? "" : ",") + kind + ":" + std::to_string(n);
    for (const std::string &name : counterNames) {
      expected["parser.essheader." + name] += n;
    }
    (kind == "prev_after_pulse" ? alteredTotal : injectedTotal) += n;
    n = n % 3 + 1;
  }
  int64_t total = s1.at("datagrams").get<int64_t>();
  const auto c0 = moduleCounters(cmd_);
  const auto clean = readoutgen({"-n", "5000", "--eps", "100000", "--seed", "7"});
  total += clean.at("datagrams").get<int64_t>();
  ASSERT_TRUE(processed(total));
  const auto c1 = moduleCounters(cmd_);
  const auto dirty =
      readoutgen({"-n", "5000", "--eps", "100000", "--seed", "7", "--inject-errors", spec});
  ASSERT_EQ(dirty.at("injected").get<int64_t>(), injectedTotal);
  ASSERT_EQ(dirty.at("altered").get<int64_t>(), alteredTotal);
  ASSERT_EQ(dirty.at("datagrams"), clean.at("datagrams"));
  total += dirty.at("datagrams").get<int64_t>() + injectedTotal;
  ASSERT_TRUE(processed(total));
  const auto c2 = moduleCounters(cmd_);
  auto cleanDelta = delta(c1, c0);
  auto dirtyDelta = delta(c2, c1);
  for (const auto &[k, v] : expected) {
    EXPECT_EQ(dirtyDelta[k] - cleanDelta[k], v) << k;
    dirtyDelta[k] -= v;
  }
  EXPECT_EQ(dirtyDelta, cleanDelta) << "only the injected error counters may differ";
  EXPECT_EQ(value("parser.essheader.seq.lost"), 0);
  EXPECT_TRUE(efu_->running());
}

// readoutgen --calibration F → efu --calibration F (a second efu, instrument lokicalib): the
// events in Kafka are the truth, and no readout falls outside the calibration's intervals.
TEST_F(CaenEndToEnd, CalibratedChainMatchesGroundTruth) {
  // LokiFull's 896 groups of 7 straws: uneven straw intervals, a cubic per straw.
  nlohmann::json parameters = nlohmann::json::array();
  for (int g = 0; g < 896; ++g) {
    parameters.push_back(
        {{"groupindex", g},
         {"intervals", {{0.0, 0.12}, {0.13, 0.3}, {0.31, 0.42}, {0.43, 0.6}, {0.61, 0.7},
                        {0.71, 0.85}, {0.86, 1.0}}},
         {"polynomials", {{0.01, 0.02, -0.03, 0.01}, {-0.01, 0.03, 0.0, 0.0},
                          {0.005 * (g % 4), -0.02, 0.01, 0.0}, {0.0, 0.0, 0.0, 0.0},
                          {0.01, 0.0, 0.0, 0.0}, {-0.01, 0.0, 0.0, 0.0}, {0.0, 0.01, 0.0, 0.0}}}});
  }
  const auto calPath = dir_ / "loki-calibration.json";
  std::ofstream(calPath) << nlohmann::json{
      {"Calibration",
       {{"instrument", "loki"}, {"groups", 896}, {"groupsize", 7}, {"Parameters", parameters}}}};
  const uint16_t udp = freeUdpPort();
  const uint16_t cmd = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "caen", "-f", config_, "--calibration", calPath.string(),
               "--instrument", "lokicalib", "-p", std::to_string(udp), "-m", std::to_string(cmd),
               "-b", bootstrap_, "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
      << efu.output();
  ASSERT_TRUE(efu.running()) << efu.output();
  const auto truthPath = dir_ / "calibrated-truth.csv";
  Process gen({READOUTGEN, "-f", config_, "--calibration", calPath.string(), "-p",
               std::to_string(udp), "-q", "--json", "-n", "10000", "--eps", "100000",
               "--events-per-pulse", "2500", "--pattern", "uniform", "--truth", truthPath.string()});
  ASSERT_EQ(gen.wait(120s), std::optional<int>(0)) << gen.output();
  const auto truth = readTruth(truthPath);
  int64_t truthEvents = 0;
  for (const auto &[e, n] : truth) {
    truthEvents += n;
  }
  ASSERT_GE(truthEvents, 9'500); // pixels pushed off the tube ends are not drawn
  ASSERT_TRUE(eventually([&] { return counter(cmd, "parser.readout.count") >= truthEvents; }));
  EXPECT_EQ(counter(cmd, "geometry.pixel_errors"), counter(cmd, "geometry.ampl_zero"))
      << "only readoutgen's noise readouts have no pixel";
  int64_t dumped = 0;
  int64_t matched = 0;
  eventually(
      [&] {
        Process dump({EFU_DUMP, "-b", bootstrap_, "-t", "lokicalib_detector", "--from",
                      "beginning", "--timeout", "2", "--log-level", "warn"});
        dump.wait(60s);
        const auto got = dumpedEvents(dump.output(), dumped);
        matched = 0;
        for (const auto &[e, n] : truth) {
          const auto it = got.find(e);
          matched += it == got.end() ? 0 : std::min(n, it->second);
        }
        return matched >= truthEvents;
      },
      60s);
  EXPECT_GE(matched * 100, truthEvents * 99) << "matched " << matched << " of " << truthEvents;
  efu.signal(SIGTERM);
  EXPECT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
}

// "sources" in the config: each bank's events in ev44 messages of their own source_name on the
// instrument's topic, and each source holds exactly its bank's share of the truth.
// With --proc-threads 3 (issue 40) the same: every partition has a sink per bank, the banks'
// message ids stay gap-free over the partitions.
TEST_F(CaenEndToEnd, EachBankPublishesUnderItsOwnSourceName) {
  nlohmann::json config = nlohmann::json::parse(readFile(config_));
  config["sources"] = nlohmann::json::array();
  for (int bank = 0; bank < 9; ++bank) {
    config["sources"].push_back("loki_bank" + std::to_string(bank));
  }
  const auto configPath = dir_ / "loki-sources.json";
  std::ofstream(configPath) << config.dump();
  for (const std::string threads : {"1", "3"}) {
    SCOPED_TRACE("--proc-threads " + threads);
    const std::string instrument = "lokibanks" + threads;
    const uint16_t udp = freeUdpPort();
    const uint16_t cmd = freeTcpPort();
    Process efu({EFU_BINARY, "-d", "caen", "-f", configPath.string(), "--instrument", instrument,
                 "-p", std::to_string(udp), "-m", std::to_string(cmd), "-b", bootstrap_,
                 "--stats-interval", "0.2", "--proc-threads", threads});
    ASSERT_TRUE(
        eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
        << efu.output();
    ASSERT_TRUE(efu.running()) << efu.output();
    const auto truthPath = dir_ / ("banks-truth-" + threads + ".csv");
    Process gen({READOUTGEN, "-f", config_, "-p", std::to_string(udp), "-q", "-n", "8000",
                 "--eps", "100000", "--events-per-pulse", "2000", "--pattern", "uniform",
                 "--truth", truthPath.string()});
    ASSERT_EQ(gen.wait(120s), std::optional<int>(0)) << gen.output();
    ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") >= 8000; }));
    efu.signal(SIGTERM); // flushes every source's last message
    ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();

    // The first straw row of each bank of LokiFull.json (YOffset), and the end of the last.
    const int64_t firstRow[] = {0, 1568, 2016, 2352, 2800, 3136, 3920, 4816, 5376, 6272};
    std::map<Event, int64_t> truthOfBank[9];
    for (const auto &[e, n] : readTruth(truthPath)) {
      const int64_t row = (std::get<2>(e) - 1) / 512;
      const auto bank = std::upper_bound(std::begin(firstRow), std::end(firstRow), row) -
                        std::begin(firstRow) - 1;
      truthOfBank[bank][e] += n;
    }
    Process dump({EFU_DUMP, "-b", bootstrap_, "-t", instrument + "_detector", "--from",
                  "beginning", "--timeout", "3", "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t all = 0;
    (void)dumpedEvents(dump.output(), all);
    EXPECT_EQ(all, 8000) << "every event is in a bank's source, none under another name";
    std::map<std::string, std::vector<int64_t>> ids;
    for (const auto &l : lines(dump.output())) {
      const auto j = nlohmann::json::parse(l, nullptr, false);
      if (!j.is_discarded() && j.value("kind", "") == "ev44") {
        ids[j.value("source_name", "")].push_back(j.value("message_id", int64_t{-1}));
      }
    }
    for (int bank = 0; bank < 9; ++bank) {
      int64_t n = 0;
      const std::string source = "loki_bank" + std::to_string(bank);
      const auto got = dumpedEvents(dump.output(), n, false, source);
      EXPECT_GT(n, 0) << bank;
      EXPECT_EQ(got, truthOfBank[bank]) << "bank " << bank;
      std::vector<int64_t> sorted = ids[source];
      std::sort(sorted.begin(), sorted.end());
      for (size_t m = 0; m < sorted.size(); ++m) {
        ASSERT_EQ(sorted[m], static_cast<int64_t>(m)) << source << ": ids with a gap or a repeat";
      }
    }
  }
}

// The other ESS CAEN instruments, by their own names (efu -d bifrost, readoutgen -d bifrost)
// with the shipped ESS files: every drawn neutron arrives in Kafka with its pixel and time, under
// the ESS EFU's source names: BIFROST's per triplet, TBL3HE's per bank, CSPEC's and MIRACLES's
// "caen" (src/modules/{cspec,miracles}/geometry/*Geometry.h serializerName()).
TEST_F(CaenEndToEnd, EachEssInstrumentMatchesGroundTruthUnderTheEssSourceNames) {
  struct Instrument {
    std::string name, calibration, sourcePrefix;
  };
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/";
  const std::string calibrations = std::string(EFU_SOURCE_DIR) + "/modules/caen/calibrations/";
  for (const Instrument &i : std::vector<Instrument>{{"bifrost", "bifrostllbcalib.json", "arc="},
                                                     {"cspec", "cspecnullcalib.json", "caen"},
                                                     {"miracles", "miraclesnullcalib.json", "caen"},
                                                     {"tbl3he", "tbl3henullcalib.json", "bank"}}) {
    const std::string config = configs + i.name + ".json";
    const std::string calibration = calibrations + i.calibration;
    const uint16_t udp = freeUdpPort();
    const uint16_t cmd = freeTcpPort();
    Process efu({EFU_BINARY, "-d", i.name, "-f", config, "--calibration", calibration, "-p",
                 std::to_string(udp), "-m", std::to_string(cmd), "-b", bootstrap_,
                 "--stats-interval", "0.2"});
    ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
        << efu.output();
    ASSERT_TRUE(efu.running()) << efu.output();
    const auto truthPath = dir_ / (i.name + "-truth.csv");
    Process gen({READOUTGEN, "-d", i.name, "-f", config, "--calibration", calibration, "-p",
                 std::to_string(udp), "-q", "-n", "4000", "--eps", "100000",
                 "--events-per-pulse", "1000", "--pattern", "uniform", "--truth",
                 truthPath.string()});
    ASSERT_EQ(gen.wait(120s), std::optional<int>(0)) << gen.output();
    const auto truth = readTruth(truthPath);
    int64_t truthEvents = 0;
    for (const auto &[e, n] : truth) {
      truthEvents += n;
    }
    ASSERT_GE(truthEvents, 3000) << i.name; // pixels the geometry cannot give are not drawn
    ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") == truthEvents; }))
        << i.name << ": " << counter(cmd, "events.count").value_or(-1) << " of " << truthEvents;
    efu.signal(SIGTERM); // flushes every source's last message
    ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
    Process dump({EFU_DUMP, "-b", bootstrap_, "-t", i.name + "_detector", "--from", "beginning",
                  "--timeout", "3", "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t dumped = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), dumped), truth) << i.name;
    EXPECT_EQ(dumped, truthEvents) << i.name;
    // Every message under the instrument's source names.
    for (const auto &l : lines(dump.output())) {
      if (l.rfind("{", 0) == 0) {
        const std::string source = nlohmann::json::parse(l).value("source_name", "");
        if (i.sourcePrefix == "caen") {
          EXPECT_EQ(source, "caen") << i.name;
        } else {
          EXPECT_EQ(source.rfind(i.sourcePrefix, 0), 0U) << i.name << ": " << source;
        }
      }
    }
  }
}

// Commissioning loop: the live run's datagrams, sampled to ar51 (--monitor-every 1), written to
// a pcap file by efu-dump and replayed by udpgen --pcap into a second efu, form the same events
// and move the same module counters as the live run did.
TEST_F(CaenEndToEnd, ACaptureReplayedFormsTheSameEventsAsTheLiveRun) {
  const auto sent = readoutgen({"-n", "20000", "--eps", "200000", "--events-per-pulse", "2500"});
  const int64_t datagrams = sent.at("datagrams").get<int64_t>();
  ASSERT_TRUE(processed(datagrams));
  const auto live = moduleCounters(cmd_);
  ASSERT_TRUE(eventually([&] { return value("kafka.ar51.messages") == datagrams; }))
      << value("kafka.ar51.messages") << " of " << datagrams;
  EXPECT_EQ(value("kafka.ar51.dropped"), 0);

  const auto pcap = dir_ / "loki.pcap";
  Process dump({EFU_DUMP, "-b", bootstrap_, "-t", "loki_samples", "--from", "beginning",
                "--timeout", "3", "--format", "text", "--log-level", "warn", "--pcap",
                pcap.string()});
  ASSERT_TRUE(dump.wait(60s).has_value());

  auto again = replayCapture(pcap, datagrams, live.at("parser.essheader.ok"));
  auto expected = live;
  for (auto *counters : {&again, &expected}) {
    for (auto it = counters->begin(); it != counters->end();) {
      it = it->first.find(".seq.") != std::string::npos ? counters->erase(it) : std::next(it);
    }
  }
  EXPECT_EQ(again, expected);
  EXPECT_EQ(again.at("events.count"), sent.at("events").get<int64_t>());
}

// readoutgen --pcap-out writes what it sends, in send order: replayed into a second efu, the
// capture moves every module counter exactly as the live run did, sequence counters included.
TEST_F(CaenEndToEnd, ReadoutgenCaptureReplayedMovesExactlyTheLiveCounters) {
  const auto pcap = dir_ / "readoutgen.pcap";
  const auto sent = readoutgen({"-n", "20000", "--eps", "200000", "--events-per-pulse", "2500",
                                "--inject-errors", "cookie:3", "--pcap-out", pcap.string()});
  const int64_t datagrams = sent.at("datagrams").get<int64_t>() + sent.at("injected").get<int64_t>();
  ASSERT_TRUE(processed(datagrams));
  const auto live = moduleCounters(cmd_);
  EXPECT_EQ(live.at("parser.essheader.errors.cookie"), 3);
  const auto again = replayCapture(pcap, datagrams, live.at("parser.essheader.ok"));
  EXPECT_EQ(again, live);
}

} // namespace
} // namespace efu::testkit
