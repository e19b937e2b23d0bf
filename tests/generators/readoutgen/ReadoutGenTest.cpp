// SPDX-License-Identifier: BSD-2-Clause
// readoutgen in-process: generator → caen module gives back exactly the truth; patterns, PGM,
// TOF specs, sequences per queue, and each injected defect moves exactly its counter.
#include "tests/support/FakeModuleContext.h"
#include "modules/caen/CaenSource.h"
#include "generators/readoutgen/Generator.h"
#include "generators/readoutgen/Run.h"
#include "generators/readoutgen/Sources.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenModule.h"
#include "modules/example/ExampleModule.h"
#include "modules/timepix3/Timepix3Module.h"
#include "modules/timepix3/Timepix3Readout.h"
#include "common/sdk/ModuleConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>

namespace efu::readoutgen {
namespace {

nlohmann::json instrument(const char *name) {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/" + name);
  return nlohmann::json::parse(in);
}

/// Keeps every datagram.
class VectorSink final : public DatagramSink {
public:
  bool send(std::span<const uint8_t> d) override {
    datagrams.emplace_back(d.begin(), d.end());
    return true;
  }
  std::vector<std::vector<uint8_t>> datagrams;
};

struct GenRun {
  VectorSink sink;
  std::vector<TruthEvent> truth;
  GeneratorSummary summary;
};

GenRun generate(const char *config, GeneratorOptions o) {
  GenRun r;
  const auto json = instrument(config);
  auto source = makeSource("caen", json, config, o.seed);
  Pattern pattern(o.pattern, source->imageWidth(), source->imageHeight());
  Generator g(o, std::move(source), std::move(pattern), r.sink);
  g.onTruth([&r](const TruthEvent &e) { r.truth.push_back(e); });
  std::atomic<bool> stop{false};
  r.summary = g.run(stop);
  return r;
}

/// Runs the module over the datagrams with the config validated as the daemon does.
std::unique_ptr<readout::FakeModuleContext> moduleOver(const char *config, const GenRun &r) {
  const auto json =
      validateModuleConfig("caen", caen::kCaenKeys, caen::kCaenKeyCount, instrument(config), config);
  auto ctx = std::make_unique<readout::FakeModuleContext>(json, config);
  caen::CaenModule m(*ctx);
  for (const auto &d : r.sink.datagrams) {
    m.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  return ctx;
}

/// The events the module gave `ctx` are exactly `truth`, in any order.
void expectEventsAreTheTruth(const readout::FakeModuleContext &ctx, std::vector<TruthEvent> truth) {
  std::vector<TruthEvent> got;
  for (const auto &e : ctx.sink.events) {
    got.push_back(TruthEvent{e.pulseTimeNs, e.tofNs, e.pixelId});
  }
  std::sort(got.begin(), got.end());
  std::sort(truth.begin(), truth.end());
  EXPECT_TRUE(got == truth);
}

TEST(ReadoutGen, ModuleReproducesTheTruthExactly) {
  for (const char *config : {"LokiFull.json"}) {
    GeneratorOptions o;
    o.count = 50'000;
    o.eventsPerPulse = 7'000;
    o.pattern = "letters";
    o.queues = 3;
    GenRun r = generate(config, o);
    EXPECT_EQ(r.summary.events, 50'000U);
    EXPECT_EQ(r.truth.size(), 50'000U);
    EXPECT_EQ(r.summary.pulses, 8U);
    for (const auto &d : r.sink.datagrams) {
      ASSERT_LE(d.size(), 8972U);
    }
    auto ctx = moduleOver(config, r);
    EXPECT_EQ(ctx->value("events.count"), 50'000);
    EXPECT_EQ(ctx->value("parser.essheader.seq.lost"), 0);
    EXPECT_EQ(ctx->value("parser.essheader.seq.expected"), static_cast<int64_t>(r.summary.datagrams));
    SCOPED_TRACE(config);
    expectEventsAreTheTruth(*ctx, r.truth);
  }
}

/// Keeps the datagrams it takes; refuses some, each kind with its own errno.
class RefusingSink final : public DatagramSink {
public:
  bool send(std::span<const uint8_t> d) override {
    const uint64_t n = offered++;
    last = n % 5 == 2 ? ENOBUFS : n % 7 == 3 ? ECONNREFUSED : n % 11 == 4 ? EPERM : 0;
    if (last != 0) {
      ++refused[last];
      return false;
    }
    datagrams.emplace_back(d.begin(), d.end());
    return true;
  }
  [[nodiscard]] int lastErrno() const noexcept override { return last; }
  uint64_t offered = 0;
  int last = 0;
  std::map<int, uint64_t> refused;
  std::vector<std::vector<uint8_t>> datagrams;
};

// Refused datagrams are counted by errno, and their events are not in the truth: the module
// given only the datagrams taken finds exactly the truth.
TEST(ReadoutGen, RefusedDatagramsAreCountedByErrnoAndLeftOutOfTheTruth) {
  GeneratorOptions o;
  o.count = 20'000;
  o.eventsPerPulse = 3'000;
  const auto json = instrument("LokiFull.json");
  auto source = makeSource("caen", json, "LokiFull.json", o.seed);
  Pattern pattern(o.pattern, source->imageWidth(), source->imageHeight());
  RefusingSink sink;
  Generator g(o, std::move(source), std::move(pattern), sink);
  GenRun r;
  g.onTruth([&r](const TruthEvent &e) { r.truth.push_back(e); });
  std::atomic<bool> stop{false};
  r.summary = g.run(stop);
  r.sink.datagrams = sink.datagrams;

  ASSERT_GT(sink.refused[EPERM], 0U);
  EXPECT_EQ(r.summary.sendErrors.enobufs, sink.refused[ENOBUFS]);
  EXPECT_EQ(r.summary.sendErrors.connRefused, sink.refused[ECONNREFUSED]);
  EXPECT_EQ(r.summary.sendErrors.other, sink.refused[EPERM]);
  EXPECT_EQ(r.summary.sendErrors.lastOtherErrno, EPERM);
  EXPECT_EQ(r.summary.datagrams + r.summary.sendErrors.total(), sink.offered);
  EXPECT_LT(r.summary.events, 20'000U); // refused datagrams took their events with them
  EXPECT_EQ(r.truth.size(), r.summary.events);
  expectEventsAreTheTruth(*moduleOver("LokiFull.json", r), r.truth);

  const auto summary = nlohmann::json::parse(summaryJson(r.summary));
  EXPECT_EQ(summary.at("send_errors").get<uint64_t>(), r.summary.sendErrors.total());
  EXPECT_EQ(summary.at("errors").at("enobufs").get<uint64_t>(), sink.refused[ENOBUFS]);
  EXPECT_EQ(summary.at("errors").at("econnrefused").get<uint64_t>(), sink.refused[ECONNREFUSED]);
  EXPECT_EQ(summary.at("errors").at("other").get<uint64_t>(), sink.refused[EPERM]);
  EXPECT_NE(summaryText(r.summary).find(r.summary.sendErrors.text()), std::string::npos);
}

/// A non-trivial ESS charge-division calibration for LokiFull.json (896 groups of 7 straws):
/// straw intervals of uneven lengths, each straw with its own cubic (monotonic over [0, 1]).
nlohmann::json lokiCalibration() {
  nlohmann::json parameters = nlohmann::json::array();
  const double edges[] = {0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0};
  for (int g = 0; g < 896; ++g) {
    nlohmann::json intervals = nlohmann::json::array();
    nlohmann::json polys = nlohmann::json::array();
    for (int u = 0; u < 7; ++u) {
      intervals.push_back({edges[u] + (u > 0 ? 0.001 : 0.0), edges[u + 1]});
      polys.push_back({0.01 * ((g + u) % 3) - 0.01, 0.03 - 0.003 * u, -0.04, 0.02});
    }
    parameters.push_back({{"groupindex", g}, {"intervals", intervals}, {"polynomials", polys}});
  }
  return {{"Calibration",
           {{"instrument", "loki"}, {"groups", 896}, {"groupsize", 7}, {"Parameters", parameters}}}};
}

// readoutgen --calibration F writes raw positions that efu --calibration F turns back into the
// drawn pixels: the calibrated module reproduces the truth exactly.
TEST(ReadoutGen, InverseCalibrationRoundTrip) {
  const auto cal = lokiCalibration();
  GeneratorOptions o;
  o.count = 30'000;
  o.eventsPerPulse = 5'000;
  o.pattern = "uniform";
  GenRun r;
  auto source = makeSource("caen", instrument("LokiFull.json"), "LokiFull.json", o.seed, {}, cal, "cal.json");
  Pattern pattern(o.pattern, source->imageWidth(), source->imageHeight());
  Generator g(o, std::move(source), std::move(pattern), r.sink);
  g.onTruth([&r](const TruthEvent &e) { r.truth.push_back(e); });
  std::atomic<bool> stop{false};
  r.summary = g.run(stop);
  // only pixels the correction pushes off the tube's ends are unreachable (and not written)
  ASSERT_GE(r.truth.size(), 29'000U);

  const auto json = validateModuleConfig("caen", caen::kCaenKeys, caen::kCaenKeyCount,
                                         instrument("LokiFull.json"), "LokiFull.json");
  readout::FakeModuleContext ctx(json, "LokiFull.json");
  ctx.setCalibration(cal, "cal.json");
  caen::CaenModule m(ctx);
  readout::FakeModuleContext plainCtx(json, "LokiFull.json");
  caen::CaenModule plain(plainCtx);
  for (const auto &d : r.sink.datagrams) {
    m.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    plain.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  EXPECT_EQ(ctx.value("geometry.pixel_errors"), ctx.value("geometry.ampl_zero")); // the noise
  expectEventsAreTheTruth(ctx, r.truth);
  // the calibration matters: with the null one many pixels differ
  size_t moved = 0;
  for (size_t i = 0; i < ctx.sink.events.size(); ++i) {
    moved += plainCtx.sink.events[i].pixelId != ctx.sink.events[i].pixelId ? 1 : 0;
  }
  EXPECT_GT(moved, r.truth.size() / 2);
}

TEST(ReadoutGen, ASourceWithoutCalibrationRefusesOne) {
  const nlohmann::json config{{"width", 20}, {"height", 10}};
  try {
    makeSource("example", config, "grid.json", 3, {}, nlohmann::json::object(), "cal.json");
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("cal.json: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("takes no calibration"), std::string::npos) << e.what();
  }
  auto bad = lokiCalibration();
  bad["Calibration"]["Parameters"][7]["intervals"][2] = {0.5, 1.2};
  try {
    makeSource("caen", instrument("LokiFull.json"), "LokiFull.json", 1, {}, bad, "bad-cal.json");
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("bad-cal.json: calibration Calibration.Parameters[7]"
                                         ".intervals[2] = [0.5,1.2]"),
              std::string::npos)
        << e.what();
  }
}

// A module that is only its own folder (modules/example) gets a generator: readoutgen loads
// the module library and asks it for its readout source; nothing in readoutgen names it.
TEST(ReadoutGen, AnyModuleThatDescribesItsSourceIsGenerated) {
  const nlohmann::json config{{"width", 20}, {"height", 10}};
  GeneratorOptions o;
  o.count = 5'000;
  o.eventsPerPulse = 1'000;
  GenRun r;
  auto source = makeSource("example", config, "grid.json", 3);
  EXPECT_EQ(source->imageWidth(), 20U);
  Pattern pattern(o.pattern, source->imageWidth(), source->imageHeight());
  Generator g(o, std::move(source), std::move(pattern), r.sink);
  g.onTruth([&r](const TruthEvent &e) { r.truth.push_back(e); });
  std::atomic<bool> stop{false};
  r.summary = g.run(stop);
  ASSERT_EQ(r.truth.size(), 5'000U);

  readout::FakeModuleContext ctx(
      validateModuleConfig("example", example::kExampleKeys, std::size(example::kExampleKeys),
                           config, "grid.json"),
      "grid.json");
  example::ExampleModule m(ctx);
  for (const auto &d : r.sink.datagrams) {
    m.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  EXPECT_EQ(ctx.value("events.count"), 5'000);
  EXPECT_EQ(ctx.value("parser.essheader.seq.lost"), 0);
  expectEventsAreTheTruth(ctx, r.truth);
}

TEST(ReadoutGen, DatagramsAreFullAndPulsesCorrect) {
  GeneratorOptions o;
  o.count = 10'000;
  o.eventsPerPulse = 5'000;
  o.pulseHz = 14;
  GenRun r = generate("LokiFull.json", o);
  // Every datagram but the last of each pulse is full: another 24-byte readout would not fit
  // into 8972 B. (Readouts per pulse: 5000 neutrons plus the noise readouts.)
  std::vector<size_t> sizes;
  std::vector<int64_t> pulseOf;
  for (const auto &d : r.sink.datagrams) {
    readout::EssHeader h;
    ASSERT_EQ(readout::validateHeader(d.data(), d.size(), readout::DetectorTypes{0x30}, h),
              readout::HeaderError::Ok);
    sizes.push_back(d.size());
    pulseOf.push_back(h.pulseTimeNs);
  }
  int64_t pulses = 0;
  size_t notFull = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const bool lastOfPulse = i + 1 == sizes.size() || pulseOf[i + 1] != pulseOf[i];
    if (i == 0 || pulseOf[i] != pulseOf[i - 1]) {
      if (i != 0) {
        EXPECT_NEAR(static_cast<double>(pulseOf[i] - pulseOf[i - 1]), 1e9 / 14, 12.0);
      }
      ++pulses;
    }
    if (!lastOfPulse) {
      EXPECT_GT(sizes[i] + sizeof(caen::CaenReadout), 8972U) << "datagram " << i;
    } else {
      ++notFull;
    }
  }
  EXPECT_EQ(pulses, 2);
  EXPECT_EQ(notFull, 2U);
  EXPECT_GE(sizes.size(), 2U * 14); // 5000 neutrons + noise need at least 14 datagrams a pulse
}

/// A source that takes a neutron only 10 ms after the last one it took (as a detector whose
/// every cassette is still busy), and writes one 8-byte readout for it.
class BusySource final : public sdk::ReadoutSource {
public:
  uint8_t detectorType() const override { return 0x30; }
  uint32_t imageWidth() const override { return 4; }
  uint32_t imageHeight() const override { return 4; }
  size_t maxEventBytes() const override { return 8; }
  size_t encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override {
    if (n.eventTimeNs - lastNs_ < 10'000'000) {
      return 0;
    }
    lastNs_ = n.eventTimeNs;
    std::fill_n(out.begin(), 8, uint8_t{0});
    truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs, 1);
    ++readouts_;
    return 8;
  }
  uint64_t readouts() const override { return readouts_; }

private:
  int64_t lastNs_ = INT64_MIN / 2;
  uint64_t readouts_ = 0;
};

// A source that refuses every position at a drawn time does not stall the run: after
// kSlotTries positions the time is given up and counted.
TEST(ReadoutGen, ATimeNoPositionTakesIsSkippedNotRetriedForever) {
  GeneratorOptions o;
  o.count = 20;
  o.eventsPerPulse = 1000; // 71 us apart on average: most times are within 10 ms of a taken one
  o.pulseHz = 14;
  VectorSink sink;
  std::vector<TruthEvent> truth;
  Generator g(o, SourcePtr(new BusySource, SourceDeleter{}), Pattern("uniform", 4, 4), sink);
  g.onTruth([&truth](const TruthEvent &e) { truth.push_back(e); });
  std::atomic<bool> stop{false};
  const GeneratorSummary s = g.run(stop);
  EXPECT_EQ(s.events, 20U);
  EXPECT_EQ(truth.size(), 20U);
  EXPECT_GT(s.slotsSkipped, 900U); // at most ~8 of a pulse's 1000 times are 10 ms apart
  EXPECT_GE(s.pulses, 3U);
  EXPECT_NE(summaryJson(s).find("\"slots_skipped\":" + std::to_string(s.slotsSkipped)),
            std::string::npos);
}

// A source without ESS headers (timepix3, loaded from its module as readoutgen loads it): each
// pulse's own datagram (the EVR's 24 bytes) goes right before the pulse's first datagram, which
// starts with the TDC; datagrams are the source's bytes only; the module reproduces the truth.
TEST(ReadoutGen, Timepix3HeaderlessWithPulseDatagrams) {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json");
  const nlohmann::json config = nlohmann::json::parse(in);
  GeneratorOptions o;
  o.count = 3000;
  o.eventsPerPulse = 500;
  o.pattern = "uniform";
  VectorSink sink;
  std::vector<TruthEvent> truth;
  Generator g(o, makeSource("timepix3", config, "timepix3.json", o.seed),
              Pattern("uniform", 1024, 1024), sink);
  g.onTruth([&truth](const TruthEvent &e) { truth.push_back(e); });
  std::atomic<bool> stop{false};
  const GeneratorSummary s = g.run(stop);
  EXPECT_EQ(s.events, 3000U);
  EXPECT_EQ(s.pulses, 6U);
  uint64_t evrs = 0;
  for (size_t i = 0; i < sink.datagrams.size(); ++i) {
    const auto &d = sink.datagrams[i];
    if (d.size() == timepix3::kEvrBytes && d[0] == timepix3::kEvrType) {
      ++evrs;
      ASSERT_LT(i + 1, sink.datagrams.size());
      EXPECT_EQ(timepix3::wordType(timepix3::loadWord(sink.datagrams[i + 1].data())),
                timepix3::kTdcType);
    } else {
      EXPECT_EQ(d.size() % 8, 0U);
      EXPECT_EQ(timepix3::wordType(timepix3::loadWord(d.data() + 8)), timepix3::kPixelType);
    }
  }
  EXPECT_EQ(evrs, s.pulses);
  EXPECT_EQ(s.datagrams, sink.datagrams.size());
  readout::FakeModuleContext ctx(
      validateModuleConfig("timepix3", timepix3::kTimepix3ConfigKeys,
                           timepix3::kTimepix3ConfigKeyCount, config, "timepix3.json"),
      "timepix3.json");
  timepix3::Timepix3Module m(ctx);
  for (const auto &d : sink.datagrams) {
    m.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  EXPECT_EQ(ctx.value("events.count"), 3000);
  expectEventsAreTheTruth(ctx, truth);
  // Header faults cannot be injected into datagrams without a header.
  o.inject = {"cookie:1"};
  EXPECT_THROW(Generator(o, makeSource("timepix3", config, "timepix3.json", 1),
                         Pattern("uniform", 1024, 1024), sink),
               std::invalid_argument);
}

// An ESS file's MaxPulseTimeNS below the pulse period (FREIA's 71428570 ns at 14 Hz): every
// header keeps pulse - previous pulse within it, so the ESS EFU accepts every datagram.
TEST(ReadoutGen, HeadersKeepThePulseGapOfTheFile) {
  GeneratorOptions o;
  o.count = 3000;
  o.eventsPerPulse = 100;
  o.pulseHz = 14;
  o.maxPulseGapNs = 71'428'570;
  GenRun r = generate("LokiFull.json", o);
  ASSERT_GE(r.summary.pulses, 30U);
  for (const auto &d : r.sink.datagrams) {
    readout::EssHeader h;
    ASSERT_EQ(readout::validateHeader(d.data(), d.size(), readout::DetectorTypes{0x30}, h,
                                      o.maxPulseGapNs),
              readout::HeaderError::Ok);
    EXPECT_GT(h.pulseTimeNs - h.prevPulseTimeNs, o.maxPulseGapNs - 12); // within a tick of it
  }
}

// A gap far below the pulse period, taken from an instrument file as readoutgen takes it: every
// header's previous pulse is moved up to within the gap (never past the pulse), while the pulses
// themselves stay one period apart. Without the gap the same run's headers are a period apart.
TEST(ReadoutGen, HeadersKeepASmallPulseGapFromTheFile) {
  GeneratorOptions o;
  o.count = 1000;
  o.eventsPerPulse = 100;
  o.pulseHz = 14;
  const auto gap = maxPulseGapNs(nlohmann::json::parse(R"({"MaxPulseTimeNS": 1000000})"));
  ASSERT_EQ(gap, 1'000'000);
  auto gaps = [](const GenRun &r) {
    std::vector<std::pair<int64_t, int64_t>> out; // pulse, pulse - previous pulse
    for (const auto &d : r.sink.datagrams) {
      readout::EssHeader h;
      EXPECT_EQ(readout::validateHeader(d.data(), d.size(), readout::DetectorTypes{0x30}, h),
                readout::HeaderError::Ok);
      out.emplace_back(h.pulseTimeNs, h.pulseTimeNs - h.prevPulseTimeNs);
    }
    return out;
  };
  const auto unlimited = gaps(generate("LokiFull.json", o));
  ASSERT_FALSE(unlimited.empty());
  EXPECT_NEAR(static_cast<double>(unlimited.front().second), 1e9 / 14, 12.0);
  o.maxPulseGapNs = *gap;
  const GenRun r = generate("LokiFull.json", o);
  ASSERT_GE(r.summary.pulses, 10U);
  const auto limited = gaps(r);
  ASSERT_FALSE(limited.empty());
  int64_t pulses = 0;
  for (size_t i = 0; i < limited.size(); ++i) {
    const auto [pulseNs, gapNs] = limited[i];
    EXPECT_LE(gapNs, *gap) << "datagram " << i;
    EXPECT_GT(gapNs, *gap - 12) << "datagram " << i; // the nearest tick, 11.4 ns each
    if (i > 0 && pulseNs != limited[i - 1].first) {
      EXPECT_NEAR(static_cast<double>(pulseNs - limited[i - 1].first), 1e9 / 14, 12.0);
      ++pulses;
    }
  }
  EXPECT_EQ(pulses + 1, static_cast<int64_t>(r.summary.pulses));
}

// The instrument file's limit as the ESS EFU reads it: MaxPulseTimeNS as an integer, else
// MaxPulseTimeDiffNS as an unsigned integer modulo 2^32; nothing else counts. (Parsed, as from a
// file: a parsed positive number is unsigned.)
TEST(ReadoutGen, MaxPulseGapOfAnInstrumentFile) {
  const auto gap = [](const char *text) { return maxPulseGapNs(nlohmann::json::parse(text)); };
  EXPECT_EQ(gap(R"({"MaxPulseTimeNS": 71428570})"), 71'428'570);
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": 5000000000})"), 5'000'000'000LL - (int64_t{1} << 32));
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": 4294967295})"), 4'294'967'295LL);
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": 4294967296})"), 0) << "wraps to no limit";
  // MaxPulseTimeNS wins over MaxPulseTimeDiffNS, and is not wrapped.
  EXPECT_EQ(gap(R"({"MaxPulseTimeNS": 5000000000, "MaxPulseTimeDiffNS": 1000})"), 5'000'000'000LL);
  // A MaxPulseTimeNS that is no integer leaves MaxPulseTimeDiffNS to decide.
  EXPECT_EQ(gap(R"({"MaxPulseTimeNS": 1.5, "MaxPulseTimeDiffNS": 1000})"), 1'000);
  EXPECT_EQ(gap(R"({"MaxPulseTimeNS": "71428570"})"), std::nullopt);
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": -1})"), std::nullopt);
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": 1e6})"), std::nullopt);
  EXPECT_EQ(gap(R"({"MaxPulseTimeDiffNS": "1000"})"), std::nullopt);
  EXPECT_EQ(gap("{}"), std::nullopt);
  EXPECT_EQ(gap("[1, 2]"), std::nullopt);
  EXPECT_EQ(maxPulseGapNs(instrument("LokiFull.json")), 357'142'855);
}

TEST(ReadoutGen, CaenNoiseReadoutsAreAdded) {
  GeneratorOptions o;
  o.count = 1'600;
  GenRun r = generate("LokiFull.json", o);
  uint64_t readouts = 0;
  for (const auto &d : r.sink.datagrams) {
    readouts += (d.size() - 30) / sizeof(caen::CaenReadout);
  }
  EXPECT_GT(readouts, o.count); // noise readouts were added
  EXPECT_LE(readouts, o.count + o.count / caen::CaenSource::kNoiseEvery);
}

TEST(ReadoutGen, InjectedDefectsMoveExactlyTheirCounters) {
  for (Injection kind : allInjections()) {
    GeneratorOptions o;
    o.count = 2'000;
    o.inject = {std::string(injectionName(kind)) + ":3"};
    GenRun r = generate("LokiFull.json", o);
    const bool accepted = injectionAccepted(kind);
    EXPECT_EQ(r.summary.injected, accepted ? 0U : 3U) << injectionName(kind);
    EXPECT_EQ(r.summary.altered, accepted ? 3U : 0U) << injectionName(kind);
    GeneratorOptions clean;
    clean.count = 2'000;
    GenRun c = generate("LokiFull.json", clean);
    EXPECT_EQ(r.summary.datagrams, c.summary.datagrams) << injectionName(kind);
    auto withErrors = moduleOver("LokiFull.json", r)->snapshot();
    const auto without = moduleOver("LokiFull.json", c)->snapshot();
    for (const std::string &counter : injectionCounters(kind)) {
      EXPECT_EQ(withErrors[counter] - without.at(counter), 3) << counter;
      withErrors[counter] -= 3;
    }
    EXPECT_EQ(withErrors, without) << injectionName(kind) << ": only "
                                   << injectionCounters(kind).front() << " may move";
  }
}

// Issue 38 item 2: a previous pulse after the pulse is accepted, as by the ESS EFU (its
// src/common/readout/ess/Parser.cpp compares pulse - previous pulse signed). readoutgen's
// prev_after_pulse puts it into valid datagrams: their events reach the module and are the truth.
TEST(ReadoutGen, PrevAfterPulseDatagramsKeepTheirEvents) {
  GeneratorOptions o;
  o.count = 6'000; // 6 pulses of 1000, 3 datagrams each
  o.injectEvery = 2;
  o.inject = {"prev_after_pulse:4", "cookie:2"};
  GenRun r = generate("LokiFull.json", o);
  ASSERT_EQ(r.summary.altered, 4U);
  EXPECT_EQ(r.summary.injected, 2U);
  EXPECT_EQ(r.summary.events, 6'000U);
  // Datagrams 2, 4, 6, 8 of the run (every second valid one) carry it: previous pulse 1 s later.
  std::vector<size_t> altered;
  size_t valid = 0;
  for (const auto &d : r.sink.datagrams) {
    readout::EssHeader h;
    if (readout::validateHeader(d.data(), d.size(), readout::DetectorTypes{0x30}, h) !=
        readout::HeaderError::Ok) {
      continue;
    }
    ++valid;
    if (h.prevPulseTimeNs > h.pulseTimeNs) {
      EXPECT_EQ(h.prevPulse, (readout::EssTime{h.pulse.high + 1, h.pulse.low}));
      altered.push_back(valid);
    }
  }
  EXPECT_EQ(altered, (std::vector<size_t>{2, 4, 6, 8}));
  const auto ctx = moduleOver("LokiFull.json", r);
  EXPECT_EQ(ctx->value("parser.essheader.prev_after_pulse"), 4);
  EXPECT_EQ(ctx->value("parser.essheader.errors.timehigh"), 0);
  EXPECT_EQ(ctx->value("parser.essheader.errors.cookie"), 2);
  expectEventsAreTheTruth(*ctx, r.truth);
  EXPECT_EQ(ctx->value("events.count"), 6'000);
}

// More prev_after_pulse than the run has valid datagrams: the rest are owed, not faked.
TEST(ReadoutGen, PrevAfterPulseBeyondTheRunIsOwed) {
  GeneratorOptions o;
  o.count = 400;
  o.inject = {"prev_after_pulse:50"};
  const auto json = instrument("LokiFull.json");
  auto source = makeSource("caen", json, "LokiFull.json", o.seed);
  Pattern pattern(o.pattern, source->imageWidth(), source->imageHeight());
  VectorSink sink;
  Generator g(o, std::move(source), std::move(pattern), sink);
  std::atomic<bool> stop{false};
  const GeneratorSummary s = g.run(stop);
  EXPECT_EQ(s.altered, s.datagrams);
  EXPECT_EQ(s.injected, 0U);
  EXPECT_EQ(sink.datagrams.size(), s.datagrams);
  EXPECT_EQ(g.alterationsOwed(), 50U - s.altered);
  EXPECT_NE(summaryJson(s).find("\"altered\":" + std::to_string(s.altered)), std::string::npos);
}

TEST(ReadoutGen, ParsesInjectionAndTofSpecs) {
  EXPECT_EQ(parseInjection("cookie:5"), std::make_pair(Injection::Cookie, uint64_t{5}));
  EXPECT_THROW(parseInjection("cookie"), std::invalid_argument);
  EXPECT_THROW(parseInjection("cookie:-1"), std::invalid_argument);
  EXPECT_THROW(parseInjection("bogus:1"), std::invalid_argument);
  EXPECT_THROW(TofDistribution("uniform:5:1"), std::invalid_argument);
  EXPECT_THROW(TofDistribution("flat:0:1"), std::invalid_argument);
  EXPECT_THROW(TofDistribution("gauss:1"), std::invalid_argument);
  std::mt19937_64 rng(1);
  TofDistribution u("uniform:1:2");
  TofDistribution g("gauss:0:1");
  for (int i = 0; i < 1000; ++i) {
    const int64_t t = u.draw(rng);
    ASSERT_GE(t, 1'000'000);
    ASSERT_LE(t, 2'000'000);
    ASSERT_GE(g.draw(rng), 0);
  }
}

TEST(ReadoutGen, RejectsBadOptions) {
  auto make = [](GeneratorOptions o) {
    VectorSink sink;
    auto source = makeSource("caen", instrument("LokiFull.json"), "LokiFull.json", 1);
    Pattern p("ring", source->imageWidth(), source->imageHeight());
    Generator g(o, std::move(source), std::move(p), sink);
  };
  GeneratorOptions o;
  o.sizeBytes = 53; // 30 + 24 needed
  EXPECT_THROW(make(o), std::invalid_argument);
  o.sizeBytes = 54;
  EXPECT_NO_THROW(make(o));
  o.queues = 13;
  EXPECT_THROW(make(o), std::invalid_argument);
  EXPECT_THROW(makeSource("nope", instrument("LokiFull.json"), "x", 1), std::invalid_argument);
  try {
    makeSource("udp", nlohmann::json::object(), "x", 1);
    FAIL() << "udp has no readout source";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("describes no readout source"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("example"), std::string::npos) << "lists the ones that do";
  }
  auto bad = instrument("LokiFull.json");
  bad["Resolution"] = 0;
  try {
    makeSource("caen", bad, "bad.json", 1);
    FAIL();
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Resolution"), std::string::npos) << e.what();
  }
}

TEST(Pattern, BuiltinsAndPgm) {
  for (const char *name : {"ring", "letters", "uniform"}) {
    Pattern p(name, 512, 224);
    EXPECT_FALSE(p.points().empty()) << name;
    for (const auto &pt : p.points()) {
      ASSERT_LT(pt.x, 512U);
      ASSERT_LT(pt.y, 224U);
    }
  }
  EXPECT_EQ(Pattern("uniform", 10, 3).points().size(), 30U);
  EXPECT_THROW(Pattern("square", 10, 10), std::invalid_argument);
  // P2: 2x2, top-left and bottom-right bright
  const PgmImage p2 = parsePgm("P2\n# c\n2 2\n255\n255 0\n0 200\n", "a.pgm");
  EXPECT_EQ(p2.pixels, (std::vector<uint16_t>{255, 0, 0, 200}));
  Pattern m(p2, 4, 4);
  EXPECT_EQ(m.points().size(), 8U);
  EXPECT_EQ(m.points().front().x, 0U);
  // P5 8-bit and 16-bit
  const std::string p5 = std::string("P5 3 1 255\n") + '\x00' + '\x80' + '\xff';
  EXPECT_EQ(parsePgm(p5, "b.pgm").pixels, (std::vector<uint16_t>{0, 128, 255}));
  const std::string p16 = std::string("P5\n1 1\n65535\n") + '\x12' + '\x34';
  EXPECT_EQ(parsePgm(p16, "c.pgm").pixels, (std::vector<uint16_t>{0x1234}));
  EXPECT_THROW(parsePgm("P6 1 1 255\n\x01\x02\x03", "d.pgm"), std::runtime_error);
  EXPECT_THROW(parsePgm("P5 2 2 255\n\x01", "e.pgm"), std::runtime_error);
  EXPECT_THROW(parsePgm("P2 1 1 10\n11\n", "f.pgm"), std::runtime_error);
  EXPECT_THROW(Pattern(parsePgm("P2 1 1 10\n0\n", "g.pgm"), 4, 4), std::invalid_argument);
}

} // namespace
} // namespace efu::readoutgen
