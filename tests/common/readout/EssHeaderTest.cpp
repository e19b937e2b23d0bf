// SPDX-License-Identifier: BSD-2-Clause
// ESS header parser against hand-built datagrams: every error kind, every boundary, sequences, TOF.
#include "common/readout/EssReadout.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace efu::readout {
namespace {

const DetectorTypes kLoki{kTypeLoki};

/// A valid datagram: header (version v) + `payload` bytes.
std::vector<uint8_t> datagram(uint8_t version = 0, size_t payload = 24, uint32_t seq = 0,
                              uint8_t queue = 0) {
  std::vector<uint8_t> d(headerBytes(version) + payload, 0xAB);
  HeaderFields f;
  f.version = version;
  f.detectorType = kTypeLoki;
  f.totalLength = static_cast<uint16_t>(d.size());
  f.outputQueue = queue;
  f.pulse = {1000, 500};
  f.prevPulse = {999, 88'000'000};
  f.seqNum = seq;
  EXPECT_EQ(writeHeader(d, f), headerBytes(version));
  return d;
}

EssHeaderV0 fields(const std::vector<uint8_t> &d) {
  EssHeaderV0 h;
  std::memcpy(&h, d.data(), sizeof(h));
  return h;
}
void put(std::vector<uint8_t> &d, const EssHeaderV0 &h) {
  std::memcpy(d.data(), &h, sizeof(h));
}

HeaderError check(const std::vector<uint8_t> &d, size_t size = SIZE_MAX) {
  EssHeader out;
  return validateHeader(d.data(), size == SIZE_MAX ? d.size() : size, kLoki, out);
}

TEST(EssHeader, ValidV0AndV1) {
  for (uint8_t v : {0, 1}) {
    auto d = datagram(v);
    EssHeader h;
    ASSERT_EQ(validateHeader(d.data(), d.size(), kLoki, h), HeaderError::Ok);
    EXPECT_EQ(h.version, v);
    EXPECT_EQ(h.payload, d.data() + headerBytes(v));
    EXPECT_EQ(h.payloadBytes, 24U);
    EXPECT_EQ(h.pulseTimeNs, ticksToNs(1000, 500));
    EXPECT_EQ(h.prevPulseTimeNs, ticksToNs(999, 88'000'000));
  }
}

TEST(EssHeader, Version0To2) {
  auto d = datagram(0);
  EXPECT_EQ(check(d), HeaderError::Ok);
  auto d1 = datagram(1);
  EXPECT_EQ(check(d1), HeaderError::Ok);
  auto h = fields(d);
  h.version = 2;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Version);
  h.version = 255;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Version);
}

TEST(EssHeader, TooShort) {
  auto d = datagram(0, 0);
  EXPECT_EQ(check(d, 29), HeaderError::TooShort);
  EXPECT_EQ(check(d, 0), HeaderError::TooShort);
  // version 1 needs 32 bytes: 30 or 31 are short, not a length error
  auto d1 = datagram(1, 0);
  EXPECT_EQ(check(d1, 31), HeaderError::TooShort);
  EXPECT_EQ(check(d1, 30), HeaderError::TooShort);
  EXPECT_EQ(check(d1, 32), HeaderError::Ok);
}

TEST(EssHeader, Padding) {
  auto d = datagram();
  d[0] = 1;
  EXPECT_EQ(check(d), HeaderError::Padding);
}

TEST(EssHeader, CookieEachByte) {
  for (size_t i = 2; i < 5; ++i) {
    auto d = datagram();
    d[i] ^= 0x20;
    EXPECT_EQ(check(d), HeaderError::Cookie) << i;
  }
}

TEST(EssHeader, DetectorType) {
  auto d = datagram();
  auto h = fields(d);
  h.detectorType = kTypeBifrost;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::DetectorType);
  EssHeader out;
  EXPECT_EQ(validateHeader(d.data(), d.size(), DetectorTypes{kTypeLoki, kTypeBifrost}, out),
            HeaderError::Ok);
}

TEST(EssHeader, LengthPlusMinusOne) {
  auto d = datagram();
  auto h = fields(d);
  for (int delta : {-1, +1}) {
    h.totalLength = static_cast<uint16_t>(d.size() + delta);
    put(d, h);
    EXPECT_EQ(check(d), HeaderError::Length) << delta;
  }
  h.totalLength = static_cast<uint16_t>(d.size());
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Ok);
  // a datagram cut short keeps the old length field: length error
  EXPECT_EQ(check(d, d.size() - 1), HeaderError::Length);
}

TEST(EssHeader, OutputQueue11And12) {
  auto d = datagram();
  auto h = fields(d);
  h.outputQueue = 11;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Ok);
  h.outputQueue = 12;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::OutputQueue);
}

TEST(EssHeader, TimeSourceFlags) {
  namespace ts = timesource;
  auto d = datagram();
  auto h = fields(d);
  const auto with = [&](uint8_t bits) {
    h.timeSource = bits;
    put(d, h);
    return check(d);
  };
  // Healthy: local time without sync, timing-system time with sync and status bits, fibre
  // status bits alone.
  for (const uint8_t ok : {uint8_t{0}, uint8_t(ts::kLocalSync),
                           uint8_t(ts::kTimingSystemTime | ts::kTimingSystemSync),
                           uint8_t(ts::kTimingSystemTime | ts::kTimingStatus),
                           uint8_t(ts::kEvenFibreStatus | ts::kOddFibreStatus)}) {
    EXPECT_EQ(with(ok), HeaderError::Ok) << int(ok);
  }
  EXPECT_EQ(with(ts::kTimingSystemSync), HeaderError::Timing);
  EXPECT_EQ(with(ts::kTimingStatus), HeaderError::TimeStatus);
  EXPECT_EQ(with(ts::kTimingSystemTime | ts::kEvenFibreSyncLost), HeaderError::EvenFibreSync);
  EXPECT_EQ(with(ts::kTimingSystemTime | ts::kOddFibreSyncLost), HeaderError::OddFibreSync);
  // Several faults: the datagram is refused under the first (each fault is counted:
  // Counted.TimeSourceByteCountsEveryFault).
  EXPECT_EQ(with(ts::kTimingSystemSync | ts::kTimingStatus | ts::kOddFibreSyncLost),
            HeaderError::Timing);
  EXPECT_EQ(with(ts::kEvenFibreSyncLost | ts::kOddFibreSyncLost), HeaderError::EvenFibreSync);
}

TEST(EssHeader, PulseFractionBoundary) {
  auto d = datagram();
  auto h = fields(d);
  h.prevPulseHigh = 0;
  h.pulseLow = 88'052'499;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Ok);
  h.pulseLow = 88'052'500;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::PulseFraction);
}

TEST(EssHeader, PrevPulseFractionBoundary) {
  auto d = datagram();
  auto h = fields(d);
  h.prevPulseLow = 88'052'499;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Ok);
  h.prevPulseLow = 88'052'500;
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::PrevFraction);
}

// The ESS EFU refuses a header for its pulse gap only when pulse − previous pulse, a signed
// int64 duration (TimeDurationNano, src/common/time/ESSTime.h), is above MaxPulseTimeDiffNS
// (src/common/readout/ess/Parser.cpp, Parser::validate, ErrorTimeHigh): a previous pulse later
// than the pulse is a negative gap, and the datagram is accepted.
TEST(EssHeader, PrevPulseAfterPulseIsAccepted) {
  auto d = datagram();
  auto h = fields(d);
  h.prevPulseHigh = h.pulseHigh;
  h.prevPulseLow = h.pulseLow; // equal
  put(d, h);
  EXPECT_EQ(check(d), HeaderError::Ok);
  h.prevPulseLow = h.pulseLow + 1; // one tick later
  put(d, h);
  EssHeader out;
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out, 357'142'855), HeaderError::Ok);
  EXPECT_EQ(out.prevPulseTimeNs - out.pulseTimeNs, 11); // one tick, truncated to ns
  h.prevPulseHigh = 0xFFFFFFFF; // as late as the field goes
  h.prevPulseLow = kMaxTicksLow;
  put(d, h);
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out, 357'142'855), HeaderError::Ok);
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out, 0), HeaderError::Ok);
}

/// Bytes from hex digits.
std::vector<uint8_t> fromHex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

/// Issue 38 item 2: the header of a LoKI datagram from the ESS EFU's generator with header
/// fuzzing (version 1, type 0x30, 8960 bytes, output queue 0, time source 0, pulse 1796351008 s
/// + 20097094 ticks, previous pulse 1796351164 s + 13807630 ticks: 156 s after the pulse,
/// sequence number 50). The ESS EFU processed its readouts (368 events); efu refused it.
constexpr std::string_view kIssue38Header =
    "000145535330002300002024126b46a83201bc24126b0eb0d200320000000000";

/// The issue's datagram: its header and 8928 bytes of payload, as its length field says.
std::vector<uint8_t> issue38Datagram() {
  std::vector<uint8_t> d = fromHex(kIssue38Header);
  d.resize(8960, 0);
  return d;
}

TEST(EssHeader, Issue38HeaderWithThePreviousPulse156sLaterIsValid) {
  const auto d = issue38Datagram();
  ASSERT_EQ(fromHex(kIssue38Header).size(), 32U);
  EssHeader h;
  // LokiFull.json's MaxPulseTimeNS (357 142 855, the ESS caen Config.h default).
  ASSERT_EQ(validateHeader(d.data(), d.size(), kLoki, h, 357'142'855), HeaderError::Ok);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.seqNum, 50U);
  EXPECT_EQ(h.pulse, (EssTime{1'796'351'008, 20'097'094}));
  EXPECT_EQ(h.prevPulse, (EssTime{1'796'351'164, 13'807'630}));
  EXPECT_EQ(h.pulseTimeNs, 1'796'351'008'228'239'902);
  EXPECT_EQ(h.prevPulseTimeNs - h.pulseTimeNs, 155'928'571'432);
  EXPECT_EQ(h.payloadBytes, 8928U);
}

TEST(EssHeader, PulseGapAboveTheMaximumIsRefused) {
  // The ESS EFU's MaxPulseTimeNS rule (caen Config: pulse − previous pulse > max → timehigh).
  auto d = datagram();
  auto h = fields(d);
  h.prevPulseHigh = h.pulseHigh - 1; // one second before the pulse
  h.prevPulseLow = h.pulseLow;
  put(d, h);
  EssHeader out;
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out, 1'000'000'000), HeaderError::Ok);
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out, 999'999'999), HeaderError::PulseGap);
  EXPECT_EQ(validateHeader(d.data(), d.size(), kLoki, out), HeaderError::Ok); // no limit
}

TEST(EssHeader, ErrorNamesAreDistinct) {
  std::set<std::string> names;
  for (int i = 0; i < static_cast<int>(HeaderError::Count_); ++i) {
    names.insert(headerErrorName(static_cast<HeaderError>(i)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(HeaderError::Count_));
}

TEST(Ticks, ExactBoundaries) {
  EXPECT_EQ(ticksToNs(0, 0), 0);
  EXPECT_EQ(ticksToNs(1, 0), 1'000'000'000);
  EXPECT_EQ(ticksToNs(0, 1), 11);            // 11.357 → 11
  EXPECT_EQ(ticksToNs(0, 2), 22);            // 22.714 → 22: truncated, as the ESS EFU does
  EXPECT_EQ(ticksToNs(0, 44'026'250), 500'000'000);
  EXPECT_EQ(ticksToNs(0, 88'052'499), 999'999'988); // 999 999 988.64 → 988
  EXPECT_EQ(ticksToNs(0xFFFFFFFF, 88'052'499), 4'294'967'295LL * 1'000'000'000 + 999'999'988);
  EXPECT_EQ(ticksToNs(0, 35'221), 400'000); // 35 221 ticks are exactly 400 us: no truncation loss
  EXPECT_EQ(ticksToNs(0, 17'610'500), 200'000'000); // 0.2 s is exactly 17 610 500 ticks
}

TEST(Ticks, RoundTripEveryTickOfASlice) {
  for (uint32_t low = 0; low < 200'000; ++low) {
    const EssTime t{1'700'000'000, low};
    ASSERT_EQ(nsToTicks(ticksToNs(t.high, t.low)), t) << low;
  }
  for (uint32_t low = kMaxTicksLow - 200'000; low <= kMaxTicksLow; ++low) {
    const EssTime t{5, low};
    ASSERT_EQ(nsToTicks(ticksToNs(t.high, t.low)), t) << low;
  }
}

// eventTimeNs() rounds the tick in integers and leaves the two exact fractions 0 and 1/2 to the
// ESS double arithmetic. Against the literal double formula: every fraction of a second whose
// exact tick fraction is 0 or 1/2 (2 in 400000) and its neighbours, the first 2^20 ns of a
// second, the last ns, and random stretches. (Every one of the 1e9 fractions was compared once,
// by hand, for the change that introduced it: no difference.)
TEST(Ticks, EventTimeIsTheDoubleRoundingBitForBit) {
  const auto literal = [](uint64_t ns) {
    const uint64_t high = ns / 1'000'000'000;
    const double ticks = static_cast<double>(ns - high * 1'000'000'000) / kTickNs;
    auto low = static_cast<uint32_t>(ticks);
    low += ticks - low >= 0.5 ? 1U : 0U;
    return ticksToNs(static_cast<uint32_t>(high), low);
  };
  const uint64_t second = 1'700'000'123'000'000'000;
  int64_t checked = 0;
  int64_t doubled = 0; // fractions at 0 or 1/2 of a tick
  const auto check = [&](uint64_t frac) {
    const uint64_t rest = frac * 35'221 % 400'000;
    doubled += rest == 0 || rest == 200'000 ? 1 : 0;
    ++checked;
    return eventTimeNs(second + frac) == literal(second + frac);
  };
  // The fractions at 1/2 of a tick are one residue modulo 400000 (35221 is prime to it); those
  // at 0 are the multiples of 400000.
  uint64_t half = 0;
  while (half * 35'221 % 400'000 != 200'000) {
    ++half;
  }
  for (uint64_t base = 0; base < 1'000'000'000; base += 400'000) {
    for (const uint64_t at : {base, base + half}) {
      for (uint64_t f = at > 2 ? at - 2 : 0; f <= at + 2; ++f) {
        ASSERT_TRUE(check(f)) << "frac " << f;
      }
    }
  }
  for (uint64_t f = 0; f < 1U << 20; ++f) {
    ASSERT_TRUE(check(f)) << "frac " << f;
  }
  for (uint64_t f = 999'999'000; f < 1'000'000'000; ++f) {
    ASSERT_TRUE(check(f)) << "frac " << f;
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 64; ++i) {
    const uint64_t start = rng() % (1'000'000'000 - 65'536);
    for (uint64_t f = start; f < start + 65'536; ++f) {
      ASSERT_TRUE(check(f)) << "frac " << f;
    }
  }
  EXPECT_GE(doubled, 5'000);
  EXPECT_GT(checked, 5'000'000);
}

TEST(Ticks, NsToTicksNearestAndCarry) {
  EXPECT_EQ(nsToTicks(0), (EssTime{0, 0}));
  EXPECT_EQ(nsToTicks(5), (EssTime{0, 0}));  // 5 ns = 0.44 tick
  EXPECT_EQ(nsToTicks(6), (EssTime{0, 1}));  // 0.53 tick
  EXPECT_EQ(nsToTicks(999'999'999), (EssTime{1, 0})); // rounds up into the next second
  EXPECT_EQ(nsToTicks(2'000'000'000), (EssTime{2, 0}));
}

struct Counted : ::testing::Test {
  FakeModuleContext ctx;
  HeaderCounters counters{ctx};
  EssReadoutParser parser{counters, kLoki, 357'142'855}; // the ESS caen MaxPulseTimeNS default

  bool feed(const std::vector<uint8_t> &d) {
    EssHeader h;
    return parser.parse(d.data(), d.size(), h);
  }
  int64_t v(const std::string &n) { return ctx.value(n); }
};

/// The counters a datagram moved, by how much.
std::map<std::string, int64_t> moved(const std::map<std::string, int64_t> &before,
                                     const std::map<std::string, int64_t> &after) {
  std::map<std::string, int64_t> out;
  for (const auto &[k, v] : after) {
    if (v != before.at(k)) {
      out[k] = v - before.at(k);
    }
  }
  return out;
}

TEST_F(Counted, EachRefusalMovesItsCountersAndNothingElse) {
  struct Case {
    std::vector<uint8_t> datagram;
    std::vector<std::string> names; ///< each moves by one, under parser.essheader.errors.
  };
  std::vector<Case> cases;
  auto base = datagram();
  auto mutate = [&](auto f, std::vector<std::string> names) {
    auto d = base;
    auto h = fields(d);
    f(h);
    put(d, h);
    cases.push_back({d, std::move(names)});
  };
  mutate([](EssHeaderV0 &h) { h.padding = 3; }, {"pad"});
  mutate([](EssHeaderV0 &h) { h.version = 7; }, {"version"});
  mutate([](EssHeaderV0 &h) { h.cookie[0] = 'X'; }, {"cookie"});
  mutate([](EssHeaderV0 &h) { h.detectorType = 0x44; }, {"type"});
  mutate([](EssHeaderV0 &h) { h.totalLength = 1; }, {"size"});
  mutate([](EssHeaderV0 &h) { h.outputQueue = 200; }, {"output_queue"});
  mutate([](EssHeaderV0 &h) { h.timeSource = timesource::kTimingSystemSync; }, {"timing"});
  mutate([](EssHeaderV0 &h) { h.timeSource = timesource::kTimingStatus; }, {"time_status"});
  mutate([](EssHeaderV0 &h) { h.timeSource = timesource::kEvenFibreSyncLost; },
         {"even_fibre_sync"});
  mutate([](EssHeaderV0 &h) { h.timeSource = timesource::kOddFibreSyncLost; },
         {"odd_fibre_sync"});
  mutate([](EssHeaderV0 &h) { h.pulseLow = 0xFFFFFFFF; }, {"timefrac"});
  // The ESS EFU's timefrac counts a bad previous-pulse fraction too; prev_timefrac is efu's.
  mutate([](EssHeaderV0 &h) { h.prevPulseLow = 88'052'500; }, {"timefrac", "prev_timefrac"});
  mutate([](EssHeaderV0 &h) { h.prevPulseHigh = 990; }, {"timehigh"}); // 10 s before the pulse
  cases.push_back({std::vector<uint8_t>(base.begin(), base.begin() + 10), {"buffer"}});
  for (const Case &c : cases) {
    const auto before = ctx.snapshot();
    EXPECT_FALSE(feed(c.datagram));
    std::map<std::string, int64_t> expected;
    for (const std::string &name : c.names) {
      expected["parser.essheader.errors." + name] = 1;
    }
    EXPECT_EQ(moved(before, ctx.snapshot()), expected) << c.names.front();
  }
  EXPECT_EQ(v("parser.essheader.ok"), 0);
  EXPECT_EQ(v("parser.essheader.seq.expected"), 0);
}

// The ESS EFU checks the four time-source faults one after the other, counts each it finds,
// and then refuses the datagram (src/common/readout/ess/Parser.cpp, Parser::validate:
// ErrorTiming, ErrorTimeStatus, ErrorEvenFibreSync, ErrorOddFibreSync, then TSError). Issue 38
// item 3: 0xce moves timing, time_status and odd_fibre_sync by one each.
TEST_F(Counted, TimeSourceByteCountsEveryFault) {
  struct Case {
    uint8_t timeSource;
    std::vector<std::string> names;
  };
  for (const Case &c : std::vector<Case>{
           {0xce, {"timing", "time_status", "odd_fibre_sync"}},
           {0x0a, {"timing", "time_status"}},
           {0x28, {"time_status", "even_fibre_sync"}},
           {0xa0, {"even_fibre_sync", "odd_fibre_sync"}},
           {0xff, {"even_fibre_sync", "odd_fibre_sync"}}, // timing-system time: fibres only
           {0xaa, {"timing", "time_status", "even_fibre_sync", "odd_fibre_sync"}},
           {0x02, {"timing"}}}) {
    auto d = datagram();
    auto h = fields(d);
    h.timeSource = c.timeSource;
    put(d, h);
    const auto before = ctx.snapshot();
    EXPECT_FALSE(feed(d)) << int(c.timeSource);
    std::map<std::string, int64_t> expected;
    for (const std::string &name : c.names) {
      expected["parser.essheader.errors." + name] = 1;
    }
    EXPECT_EQ(moved(before, ctx.snapshot()), expected) << int(c.timeSource);
  }
  EXPECT_EQ(v("parser.essheader.ok"), 0);
}

// The ESS EFU counts a pulse fraction and a previous-pulse fraction above 88 052 499 in one
// counter, ErrorTimeFrac = parser.essheader.errors.timefrac (src/common/readout/ess/Parser.cpp,
// Parser.h). Issue 38 item 4: efu's timefrac is that count; prev_timefrac, efu's own, counts the
// previous pulse's again apart.
TEST_F(Counted, TimefracCountsBothFractionsAsTheEssEfu) {
  auto d = datagram();
  auto h = fields(d);
  h.pulseLow = 88'052'500;
  put(d, h);
  EXPECT_FALSE(feed(d));
  h = fields(datagram());
  h.prevPulseLow = 88'052'500;
  put(d, h);
  EXPECT_FALSE(feed(d));
  EXPECT_FALSE(feed(d));
  h.pulseLow = 88'052'500; // both bad: refused at the pulse's, as by the ESS EFU
  put(d, h);
  EXPECT_FALSE(feed(d));
  EXPECT_EQ(v("parser.essheader.errors.timefrac"), 4);
  EXPECT_EQ(v("parser.essheader.errors.prev_timefrac"), 2);
}

// Issue 38 item 2: a previous pulse later than the pulse is accepted, as by the ESS EFU
// (src/common/readout/ess/Parser.cpp: only a gap above MaxPulseTimeDiffNS is ErrorTimeHigh), and
// counted in parser.essheader.prev_after_pulse (efu's addition) so the anomaly is seen.
TEST_F(Counted, PrevPulseAfterPulseIsAcceptedAndCountedApart) {
  const auto d = issue38Datagram();
  const auto before = ctx.snapshot();
  EssHeader h;
  ASSERT_TRUE(parser.parse(d.data(), d.size(), h));
  EXPECT_EQ(h.payloadBytes, 8928U);
  EXPECT_EQ(moved(before, ctx.snapshot()),
            (std::map<std::string, int64_t>{{"parser.essheader.ok", 1},
                                            {"parser.essheader.oq.00.packets", 1},
                                            {"parser.essheader.seq.expected", 1},
                                            {"parser.essheader.prev_after_pulse", 1}}));
  // Equal pulses are no anomaly; one tick later is.
  auto e = datagram(0, 24, 51);
  auto f = fields(e);
  f.prevPulseHigh = f.pulseHigh;
  f.prevPulseLow = f.pulseLow;
  put(e, f);
  EXPECT_TRUE(feed(e));
  EXPECT_EQ(v("parser.essheader.prev_after_pulse"), 1);
  f.prevPulseLow = f.pulseLow + 1;
  f.seqNum = 52;
  put(e, f);
  EXPECT_TRUE(feed(e));
  EXPECT_EQ(v("parser.essheader.prev_after_pulse"), 2);
  EXPECT_EQ(v("parser.essheader.ok"), 3);
  EXPECT_EQ(v("parser.essheader.errors.timehigh"), 0);
  // The gap limit still refuses a previous pulse too far before the pulse.
  f.prevPulseHigh = f.pulseHigh - 1;
  f.seqNum = 53;
  put(e, f);
  EXPECT_FALSE(feed(e));
  EXPECT_EQ(v("parser.essheader.errors.timehigh"), 1);
}

TEST_F(Counted, HeartbeatsAndOk) {
  EXPECT_TRUE(feed(datagram(0, 0, 0)));
  EXPECT_TRUE(feed(datagram(1, 0, 1)));
  EXPECT_TRUE(feed(datagram(0, 24, 2)));
  EXPECT_EQ(v("parser.essheader.ok"), 3);
  EXPECT_EQ(v("parser.essheader.heartbeats"), 2);
}

TEST_F(Counted, SequenceGapsCountPacketsPerQueue) {
  EXPECT_TRUE(feed(datagram(0, 24, 10, 0)));
  EXPECT_TRUE(feed(datagram(0, 24, 11, 0)));
  EXPECT_TRUE(feed(datagram(0, 24, 15, 0))); // 12, 13, 14 lost
  EXPECT_TRUE(feed(datagram(0, 24, 0, 3)));  // other queue: independent
  EXPECT_TRUE(feed(datagram(0, 24, 1, 3)));
  EXPECT_EQ(v("parser.essheader.seq.lost"), 3);
  EXPECT_EQ(v("parser.essheader.seq.expected"), 8); // 10, 11, 12..15 on queue 0; 0, 1 on queue 3
  EXPECT_TRUE(feed(datagram(0, 24, 13, 0))); // late
  EXPECT_EQ(v("parser.essheader.seq.reordered"), 1);
  EXPECT_TRUE(feed(datagram(0, 24, 0, 0)));  // restart (back to 0)
  EXPECT_TRUE(feed(datagram(0, 24, 1, 0)));
  EXPECT_EQ(v("parser.essheader.seq.restarts"), 1);
  EXPECT_EQ(v("parser.essheader.seq.lost"), 3);
  EXPECT_EQ(v("parser.essheader.seq.expected"), 10);
  EXPECT_EQ(v("parser.essheader.oq.00.packets"), 6) << "valid headers per output queue";
  EXPECT_EQ(v("parser.essheader.oq.03.packets"), 2);
  EXPECT_EQ(v("parser.essheader.oq.11.packets"), 0);
}

TEST(SequenceTracker, FarBackIsARestartOnceConfirmedNearBackIsReordered) {
  QueueSequences t;
  t.add(1, 5000);
  EXPECT_TRUE(t.add(1, 5001 - 1024).reordered);
  const auto back = t.add(1, 5001 - 1025);
  EXPECT_FALSE(back.restarted) << "the next number tells";
  EXPECT_EQ(back.expected, 0U);
  const auto r = t.add(1, 5001 - 1024); // follows on: the sender restarted there
  EXPECT_TRUE(r.restarted);
  EXPECT_EQ(r.expected, 2U);
  EXPECT_EQ(r.lost, 0U);
}

// Issue 37: one stray sequence number (3e9 among 2000 in order) is stale; nothing is lost.
TEST_F(Counted, OneStraySequenceNumberIsStaleAndLosesNothing) {
  for (uint32_t seq = 1; seq <= 2000; ++seq) {
    ASSERT_TRUE(feed(datagram(0, 24, seq, 2)));
    if (seq == 1000) {
      ASSERT_TRUE(feed(datagram(0, 24, 3'000'000'000U, 2)));
    }
  }
  EXPECT_EQ(v("parser.essheader.seq.stale"), 1);
  EXPECT_EQ(v("parser.essheader.seq.lost"), 0);
  EXPECT_EQ(v("parser.essheader.seq.expected"), 2000);
  EXPECT_EQ(v("parser.essheader.seq.restarts"), 0);
  EXPECT_EQ(v("parser.essheader.ok"), 2001);
}

TEST(SequenceTracker, WrapsAround) {
  QueueSequences t;
  t.add(0, 0xFFFFFFFE);
  auto r = t.add(0, 0xFFFFFFFF);
  EXPECT_EQ(r.lost, 0U);
  r = t.add(0, 1); // 0 lost across the wrap
  EXPECT_EQ(r.lost, 1U);
  EXPECT_EQ(r.expected, 2U);
}

struct TofTest : ::testing::Test {
  FakeModuleContext ctx;
  TofCounters counters{ctx};
  TofCalculator calc{counters, 100'000'000};
  EssHeader h;
  TofTest() {
    h.pulseTimeNs = 10'000'000'000;
    h.prevPulseTimeNs = 10'000'000'000 - 71'428'571;
  }
};

TEST_F(TofTest, Cases) {
  // The rules of the ESS EFU's ESSReferenceTime::getTOF and getPrevTOF (common/time/ESSTime.cpp).
  Tof t;
  ASSERT_TRUE(calc.compute(h.pulseTimeNs + 5, h, t));
  EXPECT_EQ(t.tofNs, 5);
  EXPECT_EQ(t.pulseTimeNs, h.pulseTimeNs);
  ASSERT_TRUE(calc.compute(h.pulseTimeNs, h, t)); // zero: this pulse
  EXPECT_EQ(t.tofNs, 0);
  ASSERT_TRUE(calc.compute(h.pulseTimeNs - 1, h, t)); // before the pulse: previous pulse
  EXPECT_EQ(t.tofNs, 71'428'570);
  EXPECT_EQ(t.pulseTimeNs, h.prevPulseTimeNs);
  EXPECT_FALSE(calc.compute(h.prevPulseTimeNs - 1, h, t)); // before both
  ASSERT_TRUE(calc.compute(h.pulseTimeNs + 100'000'000, h, t)); // == max: accepted
  EXPECT_FALSE(calc.compute(h.pulseTimeNs + 100'000'001, h, t)); // max + 1: rejected
  EssHeader far = h; // the previous pulse more than the maximum before the event
  far.prevPulseTimeNs = h.pulseTimeNs - 200'000'000;
  EXPECT_FALSE(calc.compute(h.pulseTimeNs - 1, far, t));
  EXPECT_EQ(ctx.value("events.timestamp.tof.count"), 3);
  EXPECT_EQ(ctx.value("events.timestamp.tof.negative"), 3);
  EXPECT_EQ(ctx.value("events.timestamp.tof.high"), 1);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.count"), 1);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.negative"), 1);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.high"), 1);
}

// What the ESS EFU's getTOF and getPrevTOF (src/common/time/ESSTime.cpp) make of a datagram whose
// previous pulse is after its pulse: an event at or after the pulse is measured from the pulse; one
// before the pulse is before the previous pulse too (tof.negative, then prevtof.negative). The
// issue's LoKI datagram: ESS published its events from the pulse, e.g. tof 29907271.
TEST_F(TofTest, PreviousPulseAfterThePulse) {
  const auto d = issue38Datagram();
  EssHeader later;
  ASSERT_EQ(validateHeader(d.data(), d.size(), kLoki, later), HeaderError::Ok);
  Tof t;
  // Event at 1796351008 s + 22730504 ticks: the tick of the ESS EFU's tof 29907271.
  ASSERT_TRUE(calc.compute(ticksToNs(1'796'351'008, 22'730'504), later, t));
  EXPECT_EQ(t.tofNs, 29'907'271);
  EXPECT_EQ(t.pulseTimeNs, later.pulseTimeNs);
  EXPECT_FALSE(calc.compute(later.pulseTimeNs - 1, later, t));
  // Between the pulse and the previous pulse, and after both (within the maximum): the pulse.
  ASSERT_TRUE(calc.compute(later.pulseTimeNs + 99'999'999, later, t));
  EXPECT_EQ(t.pulseTimeNs, later.pulseTimeNs);
  TofTally tally;
  EXPECT_FALSE(calc.compute(later.pulseTimeNs - 1, later, t, tally));
  calc.add(tally);
  EXPECT_EQ(ctx.value("events.timestamp.tof.count"), 2);
  EXPECT_EQ(ctx.value("events.timestamp.tof.negative"), 2);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.negative"), 2);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.count"), 0);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.high"), 0);
}

TEST(HeaderCounters, EssNames) {
  // The ESS EFU's names, which its operator scripts and dashboards read.
  FakeModuleContext ctx;
  HeaderCounters c(ctx);
  for (const char *name :
       {"parser.essheader.errors.buffer", "parser.essheader.errors.pad",
        "parser.essheader.errors.size", "parser.essheader.errors.cookie",
        "parser.essheader.errors.version", "parser.essheader.errors.output_queue",
        "parser.essheader.errors.type", "parser.essheader.errors.timing",
        "parser.essheader.errors.time_status", "parser.essheader.errors.even_fibre_sync",
        "parser.essheader.errors.odd_fibre_sync", "parser.essheader.errors.timefrac",
        "parser.essheader.heartbeats", "parser.essheader.oq.00.packets",
        "parser.essheader.oq.11.packets"}) {
    EXPECT_TRUE(ctx.has(name)) << name;
  }
  EXPECT_FALSE(ctx.has("parser.essheader.oq.12.packets"));
  // efu's own, beside the ESS EFU's: prev_timefrac (part of timefrac), prev_after_pulse.
  EXPECT_TRUE(ctx.has("parser.essheader.errors.prev_timefrac"));
  EXPECT_TRUE(ctx.has("parser.essheader.prev_after_pulse"));
}

} // namespace
} // namespace efu::readout
