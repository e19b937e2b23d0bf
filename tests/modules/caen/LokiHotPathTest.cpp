// SPDX-License-Identifier: BSD-2-Clause
// The LoKI hot path (CaenGeometry's lokiValid/lokiGroup/lokiLocate/lokiFinish, CaenModule's
// blocks of readouts) against a reference written from the ESS EFU's definition, independent of
// the module's tables: two divisions, the first interval in the file's order that holds the
// straw coordinate, the file's polynomial, the clamp, std::round, LokiGeometry::row. Pixel for
// pixel and counter for counter, over an exhaustive sweep of small amplitude sums and millions
// of random readouts, with the shipped ESS calibrations and random ones.
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace efu::caen {
namespace {

using readout::FakeModuleContext;
using test::amplitudes;

/// A calibration as the file gives it, for the reference: per group and unit (file order) the
/// interval's two ends and the polynomial.
struct FileCalibration {
  uint32_t groups = 0, units = 0;
  std::vector<std::array<double, 2>> intervals;
  std::vector<std::array<double, 4>> polynomials;
  explicit FileCalibration(const nlohmann::json &file) {
    const auto &c = file.at("Calibration");
    groups = c.at("groups").get<uint32_t>();
    units = c.at("groupsize").get<uint32_t>();
    for (const auto &g : c.at("Parameters")) {
      for (uint32_t u = 0; u < units; ++u) {
        intervals.push_back(
            {g.at("intervals")[u][0].get<double>(), g.at("intervals")[u][1].get<double>()});
        polynomials.push_back(
            {g.at("polynomials")[u][0].get<double>(), g.at("polynomials")[u][1].get<double>(),
             g.at("polynomials")[u][2].get<double>(), g.at("polynomials")[u][3].get<double>()});
      }
    }
  }
};

/// The ESS EFU's LoKI readout validation (before the TOF), its reason counted in `t`.
bool referenceValid(const CaenConfig &c, const CaenReadout &r, CaenTally &t) {
  const LokiGeometry &g = c.loki;
  const uint32_t ring = r.fiber / 2U;
  if (g.rings[ring].bank < 0) {
    ++t.ringMapping;
    ++t.validation;
    return false;
  }
  if (r.fen >= g.rings[ring].fens) {
    ++t.topology;
    ++t.validation;
    return false;
  }
  return true;
}

/// The ESS EFU's LoKI pixel of a valid readout, its reasons counted in `t` as CaenTally names
/// them.
uint32_t referencePixel(const CaenConfig &c, const FileCalibration &cal, const CaenReadout &r,
                        CaenTally &t) {
  const LokiGeometry &g = c.loki;
  const uint32_t ring = r.fiber / 2U;
  const uint32_t group = g.globalGroup(ring, r.fen, r.group);
  const int sum = r.ampA + r.ampB + r.ampC + r.ampD;
  if (sum == 0) {
    ++t.amplitudeZero;
    ++t.pixel;
    return 0;
  }
  const double position = static_cast<double>(r.ampA + r.ampB) / sum;
  if (position < 0.0 || position > 1.0) {
    ++t.pixel;
    return 0;
  }
  const double straw = static_cast<double>(r.ampB + r.ampD) / sum;
  if (group >= cal.groups) {
    ++t.calibrationGroup;
    ++t.pixel;
    return 0;
  }
  int unit = -1;
  for (uint32_t u = 0; u < cal.units && unit < 0; ++u) {
    const auto &[first, second] = cal.intervals[group * cal.units + u];
    if (straw >= std::min(first, second) && straw <= std::max(first, second)) {
      unit = static_cast<int>(u);
    }
  }
  if (unit < 0) {
    ++t.outsideTube;
    ++t.pixel;
    return 0;
  }
  const auto &[a, b, cc, d] = cal.polynomials[group * cal.units + static_cast<uint32_t>(unit)];
  double corrected = position - (a + position * (b + position * (cc + position * d)));
  if (corrected < 0.0) {
    ++t.positionLow;
    corrected = 0.0;
  } else if (corrected > 1.0) {
    ++t.positionHigh;
    corrected = 1.0;
  }
  const auto x = static_cast<uint32_t>(std::round(corrected * (c.resolution - 1)));
  const uint32_t pixel = c.pixel(x, g.row(ring, r.fen, r.group, static_cast<uint32_t>(unit)));
  if (pixel == 0) {
    ++t.rowInvalid;
    ++t.pixel;
  }
  return pixel;
}

/// A calibration file of `groups` groups of `units` intervals with ends on a 1/1000 grid (as
/// the ESS files write them, so swept quotients land on them exactly), in a random order, some
/// reversed, some of zero width, and random polynomials that push some positions out of [0, 1].
nlohmann::json randomCalibration(uint32_t groups, uint32_t units, std::mt19937_64 &rng) {
  nlohmann::json parameters = nlohmann::json::array();
  for (uint32_t g = 0; g < groups; ++g) {
    // 2 x units distinct grid points, sorted: interval k is [p[2k], p[2k + 1]] (a zero-width one
    // now and then), at least 0.001 from the next.
    std::vector<int> p;
    while (p.size() < 2 * units) {
      const int v = static_cast<int>(rng() % 1001);
      if (std::find(p.begin(), p.end(), v) == p.end()) {
        p.push_back(v);
      }
    }
    std::sort(p.begin(), p.end());
    std::vector<std::array<double, 2>> intervals;
    for (uint32_t k = 0; k < units; ++k) {
      const double lo = p[2 * k] / 1000.0;
      const double hi = rng() % 10 == 0 ? lo : p[2 * k + 1] / 1000.0;
      intervals.push_back(rng() % 4 == 0 ? std::array<double, 2>{hi, lo}
                                         : std::array<double, 2>{lo, hi});
    }
    std::shuffle(intervals.begin(), intervals.end(), rng);
    nlohmann::json ij = nlohmann::json::array();
    nlohmann::json pj = nlohmann::json::array();
    std::uniform_real_distribution<double> coefficient(-0.3, 0.3);
    for (const auto &[first, second] : intervals) {
      ij.push_back({first, second});
      pj.push_back(rng() % 8 == 0 ? nlohmann::json::array({0.0, 0.0, 0.0, 0.0})
                                  : nlohmann::json::array({coefficient(rng), coefficient(rng),
                                                           coefficient(rng), coefficient(rng)}));
    }
    parameters.push_back({{"groupindex", g}, {"intervals", ij}, {"polynomials", pj}});
  }
  return {{"Calibration",
           {{"instrument", "loki"},
            {"groups", groups},
            {"groupsize", units},
            {"Parameters", parameters}}}};
}

/// CaenTally's geometry fields and events under their counter names (kCaenCounters).
std::map<std::string, int64_t> named(const CaenTally &t) {
  std::map<std::string, int64_t> out;
  for (const CaenCounterName &c : kCaenCounters) {
    if (std::string_view(c.name).starts_with("geometry.") ||
        c.name == std::string_view("events.count")) {
      out[c.name] = t.*c.field;
    }
  }
  return out;
}

bool sameReasons(const CaenTally &a, const CaenTally &b) {
  CaenTally x = a;
  CaenTally y = b;
  x.events = y.events = 0;
  return x == y;
}

/// One calibration through both paths: geometry.pixel() per readout and CaenModule::process()
/// per datagram, against referencePixel().
struct HotPath {
  CaenConfig config{test::lokiFull(), "LokiFull.json"};
  nlohmann::json file;
  FileCalibration reference;
  CaenGeometry geometry;
  FakeModuleContext ctx;
  CaenModule module;
  test::Builder builder;
  std::vector<CaenReadout> pending;
  std::vector<readout::RecordedEvent> expected;
  CaenTally expectedTally;
  int64_t readouts = 0;
  int64_t tofOk = 0, prevTofOk = 0, tofRejected = 0;

  explicit HotPath(nlohmann::json calibration)
      : file(std::move(calibration)), reference(file),
        geometry(CaenConfig(test::lokiFull(), "LokiFull.json"),
                 CaenCalibration(file, "random.json", "loki")),
        ctx(test::lokiFull(), "LokiFull.json"), module((ctx.setCalibration(file), ctx)) {
    ctx.sink.events.reserve(1 << 20);
  }

  /// A readout of amplitudes a..d on (fiber, fen, group), its TOF in range: both paths, the
  /// scalar one checked now, the module's when the datagram is full.
  void check(uint8_t fiber, uint8_t fen, uint8_t group, int16_t a, int16_t b, int16_t c, int16_t d,
             int64_t tofNs = 1000) {
    const CaenReadout r = builder.readout(fiber, fen, group, a, b, c, d, tofNs);
    CaenTally want;
    const bool valid = referenceValid(config, r, want);
    const uint32_t pixel = valid ? referencePixel(config, reference, r, want) : 0;
    CaenTally got;
    const uint32_t scalar = geometry.valid(r, got) ? geometry.pixel(r, got) : 0;
    ASSERT_EQ(scalar, pixel) << int(fiber) << " " << int(fen) << " " << int(group) << " " << a
                             << " " << b << " " << c << " " << d;
    if (!sameReasons(got, want)) { // (named() only now: it is slow)
      ASSERT_EQ(named(got), named(want)) << a << " " << b << " " << c << " " << d;
    }
    ++readouts;
    pending.push_back(r);
    if (pending.size() == 373) {
      flush();
    }
    if (!valid) {
      expectedTally.validation += want.validation;
      expectedTally.ringMapping += want.ringMapping;
      expectedTally.topology += want.topology;
      return;
    }
    // The ESS TOF rule, from this pulse or the previous one: the module's pixel only then.
    const int64_t eventNs = readout::ticksToNs(r.timeHigh, r.timeLow);
    const int64_t pulseNs = readout::ticksToNs(builder.f.pulse.high, builder.f.pulse.low);
    const int64_t prevNs = readout::ticksToNs(builder.f.prevPulse.high, builder.f.prevPulse.low);
    const int64_t fromPulse = eventNs >= pulseNs ? pulseNs : prevNs;
    const int64_t tof = eventNs - fromPulse;
    if (tof < 0 || tof > config.maxTofNs) {
      ++tofRejected;
      return;
    }
    ++(fromPulse == pulseNs ? tofOk : prevTofOk);
    expectedTally.validation += want.validation;
    expectedTally.ringMapping += want.ringMapping;
    expectedTally.topology += want.topology;
    expectedTally.pixel += want.pixel;
    expectedTally.amplitudeZero += want.amplitudeZero;
    expectedTally.calibrationGroup += want.calibrationGroup;
    expectedTally.outsideTube += want.outsideTube;
    expectedTally.positionLow += want.positionLow;
    expectedTally.positionHigh += want.positionHigh;
    expectedTally.rowInvalid += want.rowInvalid;
    if (pixel != 0) {
      ++expectedTally.events;
      expected.push_back({fromPulse, static_cast<int32_t>(tof), static_cast<int32_t>(pixel)});
    }
  }
  void flush() {
    builder.start();
    for (const CaenReadout &r : pending) {
      builder.add(r);
    }
    module.process(builder.finish());
    pending.clear();
  }
  /// The module's events and counters against the reference's.
  void compare() {
    flush();
    ASSERT_EQ(ctx.sink.events.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(ctx.sink.events[i], expected[i]) << "event " << i;
    }
    std::map<std::string, int64_t> got;
    for (const auto &[name, value] : named(expectedTally)) {
      got[name] = ctx.value(name);
    }
    EXPECT_EQ(got, named(expectedTally));
    EXPECT_EQ(ctx.value("parser.readout.count"), readouts);
    EXPECT_EQ(ctx.value("events.timestamp.tof.count"), tofOk);
    EXPECT_EQ(ctx.value("events.timestamp.prevtof.count"), prevTofOk);
    EXPECT_EQ(ctx.value("events.timestamp.tof.high") +
                  ctx.value("events.timestamp.prevtof.negative") +
                  ctx.value("events.timestamp.prevtof.high"),
              tofRejected);
  }

  /// Every quotient of a small sum: sum = A + B + C + D in [-300, -1] and [1, 1100], B + D from
  /// -2 to sum + 2 (every straw coordinate k / sum, the interval ends of a 1/1000 grid among
  /// them), A + B at both ends and in the middle; the groups taken in turn.
  void sweep() {
    uint32_t n = 0;
    for (int sum = -300; sum <= 1100; ++sum) {
      if (sum == 0) {
        continue;
      }
      const int lo = std::min(-2, sum - 2);
      const int hi = std::max(sum + 2, 2);
      for (int bd = lo; bd <= hi; ++bd) {
        for (const int ab : {0, sum / 2, sum, sum / 3 + 1}) {
          // B = 0: A = ab, D = bd, C = sum - ab - bd.
          const uint32_t k = n++;
          const auto fiber = static_cast<uint8_t>(k % 20);
          const auto fen = static_cast<uint8_t>((k / 20) % 16);
          const auto group = static_cast<uint8_t>((k / 320) % 8);
          check(fiber, fen, group, static_cast<int16_t>(ab), 0, static_cast<int16_t>(sum - ab - bd),
                static_cast<int16_t>(bd));
          if (::testing::Test::HasFatalFailure()) {
            return;
          }
        }
      }
    }
  }
  /// Random readouts: fibers, FENs and groups of the whole range (rings without a bank, FENs
  /// beyond a ring's, groups beyond 7), amplitudes of ADC range and of the whole int16 range,
  /// zero sums.
  void random(uint64_t seed, int count) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
      const auto fiber = static_cast<uint8_t>(rng() % 24);
      const auto fen = static_cast<uint8_t>(rng() % (rng() % 8 == 0 ? 24 : 16));
      const auto group = static_cast<uint8_t>(rng() % 16 == 0 ? rng() % 256 : rng() % 8);
      std::array<int16_t, 4> amp{};
      switch (rng() % 8) {
      case 0: // anything
        for (auto &v : amp) {
          v = static_cast<int16_t>(rng());
        }
        break;
      case 1: // zero sum, or one amplitude
        amp[rng() % 4] = static_cast<int16_t>(rng() % 3 == 0 ? 0 : rng() % 4096);
        break;
      default: // ADC range
        for (auto &v : amp) {
          v = static_cast<int16_t>(rng() % 4096);
        }
      }
      // Mostly from this pulse; some from the previous one, some too late or too early.
      // (LokiFull.json's MaxTOFNS is the default, 1.43 s.)
      int64_t tofNs = static_cast<int64_t>(rng() % 70'000'000);
      if (rng() % 8 == 0) {
        tofNs = static_cast<int64_t>(rng() % 400'000'000) - 200'000'000;
      } else if (rng() % 32 == 0) {
        tofNs = 1'400'000'000 + static_cast<int64_t>(rng() % 100'000'000);
      }
      check(fiber, fen, group, amp[0], amp[1], amp[2], amp[3], tofNs);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
};

TEST(LokiHotPath, TheNullCalibrationPixelForPixel) {
  HotPath h(test::lokiNullCalibration());
  h.sweep();
  h.random(1, 500'000);
  h.compare();
}

TEST(LokiHotPath, TheConstantCalibrationPixelForPixel) {
  HotPath h(test::shippedCalibration("lokiconstcalib.json"));
  h.sweep();
  h.random(2, 200'000);
  h.compare();
}

TEST(LokiHotPath, RandomCalibrationsPixelForPixel) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 3; ++i) {
    HotPath h(randomCalibration(896, 7, rng));
    h.sweep();
    h.random(4 + i, 500'000);
    h.compare();
  }
}

TEST(LokiHotPath, FewerGroupsOrAnotherGroupSizeThanSevenPixelForPixel) {
  // Groups beyond the calibration (calib_group_errors), and 5 units a group: the calibration's
  // general interval search instead of the seven-unit rows.
  std::mt19937_64 rng(8);
  for (const auto &[groups, units] : {std::pair{700U, 7U}, std::pair{896U, 5U}}) {
    HotPath h(randomCalibration(groups, units, rng));
    h.sweep();
    h.random(9, 200'000);
    h.compare();
  }
}

} // namespace
} // namespace efu::caen
