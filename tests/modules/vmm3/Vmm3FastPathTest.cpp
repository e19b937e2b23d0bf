// SPDX-License-Identifier: BSD-2-Clause
// The readout loop's shortcuts against what they replace: forEachReadout() against a frozen
// copy of the loop before it (every counter and the readouts it passes on, over random
// datagrams with every kind of refused readout), RouteTable's word key against the ESS order of
// the ring, FEN and hybrid checks at every address a checked readout can have, and the identity
// hit time tested by seconds against the ESS formula.
#include "common/readout/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace efu::vmm3 {
namespace {

Vmm3Readout validReadout() {
  Vmm3Readout r{};
  r.fiber = 3;
  r.fen = 2;
  r.length = kReadoutBytes;
  r.timeHigh = 1'700'000'000;
  r.timeLow = 1000;
  r.bc = 17;
  r.otadc = 0x8000 | 500;
  r.geo = 0x80;
  r.tdc = 9;
  r.vmm = 5;
  r.channel = 40;
  return r;
}

// The loop as it was before the GEO and over-threshold counts were summed as masked bits and
// the payload walked by pointer: the oracle for the counters and the readouts passed on.
struct Counts {
  std::vector<int64_t> values;
  std::vector<std::vector<uint8_t>> passed;
};

Counts frozenLoop(const std::vector<uint8_t> &payload) {
  Counts c;
  c.values.assign(static_cast<size_t>(ReadoutError::Count_) + 4, 0);
  const size_t count = payload.size() / kReadoutBytes;
  int64_t bad = 0, calib = 0, over = 0;
  for (size_t i = 0; i < count; ++i) {
    Vmm3Readout r;
    std::memcpy(&r, payload.data() + i * kReadoutBytes, kReadoutBytes);
    const ReadoutError e = checkReadout(r);
    if (e != ReadoutError::Ok) {
      ++c.values[static_cast<size_t>(e)];
      ++bad;
      continue;
    }
    over += (r.otadc & kOverThresholdBit) != 0 ? 1 : 0;
    calib += (r.geo & 0x80) != 0 ? 1 : 0;
    c.passed.emplace_back(payload.data() + i * kReadoutBytes,
                          payload.data() + (i + 1) * kReadoutBytes);
  }
  const size_t n = static_cast<size_t>(ReadoutError::Count_);
  c.values[n] = static_cast<int64_t>(count);
  c.values[n + 1] = static_cast<int64_t>(count) - bad - calib;
  c.values[n + 2] = calib;
  c.values[n + 3] = over;
  return c;
}

TEST(Vmm3FastPath, ForEachReadoutCountsAsTheLoopBefore) {
  std::mt19937_64 rng(2026);
  readout::FakeModuleContext ctx;
  ParserCounters counters(ctx);
  Counts expected;
  expected.values.assign(static_cast<size_t>(ReadoutError::Count_) + 4, 0);
  Counts got;
  for (int datagram = 0; datagram < 2000; ++datagram) {
    std::vector<uint8_t> payload;
    const size_t readouts = rng() % 447;
    for (size_t i = 0; i < readouts; ++i) {
      Vmm3Readout r = validReadout();
      r.geo = static_cast<uint8_t>(rng());
      r.otadc = static_cast<uint16_t>((rng() & 0x83FF));
      r.channel = static_cast<uint8_t>(rng() % 64);
      r.tdc = static_cast<uint8_t>(rng());
      if (rng() % 4 == 0) { // break one or two fields
        for (int k = 0; k < 1 + static_cast<int>(rng() % 2); ++k) {
          switch (rng() % 8) {
          case 0:
            r.fiber = static_cast<uint8_t>(24 + rng() % 232);
            break;
          case 1:
            r.fen = static_cast<uint8_t>(24 + rng() % 232);
            break;
          case 2:
            r.length = static_cast<uint16_t>(rng());
            break;
          case 3:
            r.timeLow = readout::kMaxTicksLow + 1 + static_cast<uint32_t>(rng() % 1000);
            break;
          case 4:
            r.bc = static_cast<uint16_t>(4096 + rng() % 61440);
            break;
          case 5:
            r.otadc = static_cast<uint16_t>(r.otadc | (0x0400U << (rng() % 5)));
            break;
          case 6:
            r.vmm = static_cast<uint8_t>(16 + rng() % 240);
            break;
          default:
            r.channel = static_cast<uint8_t>(64 + rng() % 192);
            break;
          }
        }
      }
      const auto *b = reinterpret_cast<const uint8_t *>(&r);
      payload.insert(payload.end(), b, b + kReadoutBytes);
    }
    const Counts one = frozenLoop(payload);
    for (size_t i = 0; i < one.values.size(); ++i) {
      expected.values[i] += one.values[i];
    }
    expected.passed.insert(expected.passed.end(), one.passed.begin(), one.passed.end());
    ASSERT_TRUE(forEachReadout(payload.data(), payload.size(), counters, [&](const Vmm3Readout &r) {
      const auto *b = reinterpret_cast<const uint8_t *>(&r);
      got.passed.emplace_back(b, b + kReadoutBytes);
    }));
  }
  ASSERT_EQ(got.passed, expected.passed);
  for (size_t i = 1; i < static_cast<size_t>(ReadoutError::Count_); ++i) {
    const std::string name =
        std::string("readouts.error_") + readoutErrorName(static_cast<ReadoutError>(i));
    EXPECT_EQ(ctx.value(name), expected.values[i]) << name;
    EXPECT_GT(expected.values[i], 0) << name; // every kind is hit
  }
  const size_t n = static_cast<size_t>(ReadoutError::Count_);
  EXPECT_EQ(ctx.value("readouts.count"), expected.values[n]);
  EXPECT_EQ(ctx.value("readouts.data"), expected.values[n + 1]);
  EXPECT_EQ(ctx.value("readouts.bccalib"), expected.values[n + 2]);
  EXPECT_EQ(ctx.value("readouts.over_threshold"), expected.values[n + 3]);
}

// Every address a checked readout can have: the route, or the fault, as the table's key before.
TEST(Vmm3FastPath, RouteTableGivesEveryCheckedAddressItsRouteOrFault) {
  const auto routeOf = [](uint8_t ring, uint8_t fen, uint8_t vmm) {
    return (ring + fen + vmm / 2) % 3 == 0 ? -1 : ring * 1000 + fen * 20 + vmm;
  };
  const RouteTable table(routeOf);
  Vmm3Readout r = validReadout();
  for (unsigned fiber = 0; fiber <= readout::kMaxFiber; ++fiber) {
    for (unsigned fen = 0; fen <= readout::kMaxFen; ++fen) {
      for (unsigned vmm = 0; vmm <= kMaxVmm; ++vmm) {
        r.fiber = static_cast<uint8_t>(fiber);
        r.fen = static_cast<uint8_t>(fen);
        r.vmm = static_cast<uint8_t>(vmm);
        const auto ring = static_cast<uint8_t>(fiber / 2);
        int expected = RouteTable::kHybridFault;
        if (ring > kMaxRing) {
          expected = RouteTable::kRingFault;
        } else if (fen > kMaxFen) {
          expected = RouteTable::kFenFault;
        } else if (const int to =
                       routeOf(ring, static_cast<uint8_t>(fen), static_cast<uint8_t>(vmm));
                   to >= 0) {
          expected = to;
        }
        ASSERT_EQ(table(r), expected) << fiber << " " << fen << " " << vmm;
      }
    }
  }
}

// The identity time by seconds is the ESS formula for every TDC value at the seconds around the
// shortcut's first, the epoch's first and last, and random ones, each at the tick limits and
// random ticks.
TEST(Vmm3FastPath, IdentityTimeBySecondsIsTheEssFormula) {
  std::mt19937_64 rng(60);
  std::vector<uint32_t> seconds = {
      0, 1, 2, 1'152'921'502, 0xFFFFFFFEU, 0xFFFFFFFFU, 1'700'000'000, 1'800'000'000};
  for (uint32_t s = Vmm3Calibration::kIdentityFirstSecond - 3;
       s <= Vmm3Calibration::kIdentityFirstSecond + 3; ++s) {
    seconds.push_back(s);
  }
  for (int i = 0; i < 64; ++i) {
    seconds.push_back(static_cast<uint32_t>(rng()));
  }
  for (const uint32_t high : seconds) {
    std::vector<uint32_t> lows = {0, 1, readout::kMaxTicksLow - 1, readout::kMaxTicksLow};
    for (int i = 0; i < 64; ++i) {
      lows.push_back(static_cast<uint32_t>(rng() % (uint64_t{readout::kMaxTicksLow} + 1)));
    }
    for (const uint32_t low : lows) {
      const auto ns = static_cast<uint64_t>(readout::ticksToNs(high, low));
      for (unsigned tdc = 0; tdc < 256; ++tdc) {
        const auto t = static_cast<uint8_t>(tdc);
        ASSERT_EQ(Vmm3Calibration::identityTimeNs(high, low, t),
                  Vmm3Calibration::timeNs(Vmm3Calibration::Channel{}, ns, t))
            << high << " s " << low << " ticks, tdc " << tdc;
      }
    }
  }
}

} // namespace
} // namespace efu::vmm3
