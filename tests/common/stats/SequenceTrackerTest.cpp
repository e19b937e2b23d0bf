// SPDX-License-Identifier: BSD-2-Clause
// SequenceTracker: loss, reordering, duplicates, restarts and the sliding window, exact counts.
#include "common/stats/SequenceTracker.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

namespace efu::udp {
namespace {

using SequenceTracker = UdpSequenceTracker;

constexpr uint64_t kWindow = SequenceTracker::kWindow;

/// Adds [from, to).
void addRange(SequenceTracker &t, uint64_t from, uint64_t to) {
  for (uint64_t n = from; n < to; ++n) {
    t.add(n);
  }
}

void addAll(SequenceTracker &t, std::initializer_list<uint64_t> seqs) {
  for (uint64_t n : seqs) {
    t.add(n);
  }
}

struct Counts {
  uint64_t lost, reordered, duplicates, restarts, expected;
};

void expectCounts(const SequenceTracker &t, Counts c) {
  EXPECT_EQ(t.lost(), c.lost) << "lost";
  EXPECT_EQ(t.reordered(), c.reordered) << "reordered";
  EXPECT_EQ(t.duplicates(), c.duplicates) << "duplicates";
  EXPECT_EQ(t.restarts(), c.restarts) << "restarts";
  EXPECT_EQ(t.expected(), c.expected) << "expected";
}

TEST(SequenceTracker, NothingBeforeTheFirstPacket) {
  SequenceTracker t;
  expectCounts(t, {0, 0, 0, 0, 0});
  EXPECT_EQ(t.per(), 0.0);
}

TEST(SequenceTracker, InOrderFromZero) {
  SequenceTracker t;
  addRange(t, 0, 1000);
  expectCounts(t, {0, 0, 0, 0, 1000});
  EXPECT_EQ(t.per(), 0.0);
}

TEST(SequenceTracker, InOrderFromANonZeroStart) {
  SequenceTracker t;
  addRange(t, 5000, 5100); // joined a running generator: nothing before 5000 is lost
  expectCounts(t, {0, 0, 0, 0, 100});
}

TEST(SequenceTracker, SingleGap) {
  SequenceTracker t;
  addAll(t, {0, 1, 2, 3, 4, 6, 7, 8, 9});
  expectCounts(t, {1, 0, 0, 0, 10});
  EXPECT_DOUBLE_EQ(t.per(), 0.1);
}

TEST(SequenceTracker, MultiPacketGapCountsPacketsNotGaps) {
  SequenceTracker t;
  addAll(t, {0, 1, 10, 11});
  expectCounts(t, {8, 0, 0, 0, 12});
}

TEST(SequenceTracker, GapFilledLateMovesLostToReordered) {
  SequenceTracker t;
  addAll(t, {0, 1, 3, 4});
  EXPECT_EQ(t.lost(), 1U);
  t.add(2);
  expectCounts(t, {0, 1, 0, 0, 5});
}

TEST(SequenceTracker, SwappedPairsAreReorderedNotLost) {
  SequenceTracker t;
  addAll(t, {0, 2, 1, 4, 3, 6, 5, 7});
  expectCounts(t, {0, 3, 0, 0, 8});
}

TEST(SequenceTracker, PartlyFilledGap) {
  SequenceTracker t;
  addAll(t, {0, 10, 3, 7});
  expectCounts(t, {7, 2, 0, 0, 11});
}

TEST(SequenceTracker, Duplicates) {
  SequenceTracker t;
  addAll(t, {0, 1, 1, 2, 2, 2, 3});
  expectCounts(t, {0, 0, 3, 0, 4});
}

TEST(SequenceTracker, DuplicateOfTheFirstPacket) {
  SequenceTracker t;
  addAll(t, {5, 5, 6, 5});
  expectCounts(t, {0, 0, 2, 0, 2});
}

TEST(SequenceTracker, DuplicateOfALateArrival) {
  SequenceTracker t;
  addAll(t, {0, 2, 1, 1});
  expectCounts(t, {0, 1, 1, 0, 3});
}

TEST(SequenceTracker, DuplicateOfTheHighest) {
  SequenceTracker t;
  addAll(t, {0, 1, 5, 5});
  expectCounts(t, {3, 0, 1, 0, 6});
}

TEST(SequenceTracker, SeqBelowTheFirstExtendsTheRun) {
  SequenceTracker t;
  addAll(t, {10, 11});
  t.add(7); // the run started earlier: 8 and 9 are now missing
  expectCounts(t, {2, 1, 0, 0, 5});
  t.add(9);
  t.add(8);
  expectCounts(t, {0, 3, 0, 0, 5});
  t.add(7);
  t.add(10);
  expectCounts(t, {0, 3, 2, 0, 5});
}

TEST(SequenceTracker, SeqJustBelowTheFirst) {
  SequenceTracker t;
  addAll(t, {100, 101, 99});
  expectCounts(t, {0, 1, 0, 0, 3});
}

TEST(SequenceTracker, RestartResetsWithoutLoss) {
  SequenceTracker t;
  addRange(t, 0, 100'000);
  addRange(t, 0, 10); // the generator was restarted
  expectCounts(t, {0, 0, 0, 1, 100'010});
  t.add(5);
  expectCounts(t, {0, 0, 1, 1, 100'010}); // the new run has its own window
}

TEST(SequenceTracker, RestartKeepsEarlierLossAndCountsNewLoss) {
  SequenceTracker t;
  addRange(t, 0, 50);
  addRange(t, 51, 100'000);   // run 1: 0 .. 99'999 without 50
  addAll(t, {0, 1, 2, 4, 5}); // run 2: 0 .. 5 without 3
  expectCounts(t, {2, 0, 0, 1, 100'000 + 6});
  EXPECT_DOUBLE_EQ(t.per(), 2.0 / 100'006.0);
}

TEST(SequenceTracker, BackwardsJumpWithinTheWindowIsNotARestart) {
  SequenceTracker t;
  addRange(t, 0, 100);
  addRange(t, 0, 5); // behind by less than the window: duplicates, not a new run
  expectCounts(t, {0, 0, 5, 0, 100});
}

TEST(SequenceTracker, TwoRestarts) {
  SequenceTracker t;
  addRange(t, 0, 70'000);
  addRange(t, 0, 80'000);
  addRange(t, 0, 3);
  expectCounts(t, {0, 0, 0, 2, 150'003});
}

TEST(SequenceTracker, LateArrivalJustInsideTheWindowAfterItWrapped) {
  SequenceTracker t;
  addRange(t, 0, 100'000);
  addRange(t, 100'001, 100'000 + kWindow); // 100'000 lost; highest = 100'000 + 65535
  ASSERT_EQ(t.lost(), 1U);
  // 100'000 shares its bit with 34'464, which was received: the bit must have been cleared.
  t.add(100'000);
  expectCounts(t, {0, 1, 0, 0, 100'000 + kWindow});
  t.add(100'000);
  EXPECT_EQ(t.duplicates(), 1U);
}

TEST(SequenceTracker, DuplicateJustInsideTheWindowAfterItWrapped) {
  SequenceTracker t;
  addRange(t, 0, 100'000 + kWindow); // highest = 165'535
  t.add(100'000);                    // behind by kWindow - 1: still known
  expectCounts(t, {0, 0, 1, 0, 100'000 + kWindow});
}

TEST(SequenceTracker, JustOutsideTheWindowIsARestartOnceTheNextNumberFollowsIt) {
  SequenceTracker t;
  addRange(t, 0, 100'001 + kWindow); // highest = 165'536
  t.add(100'000);                    // behind by exactly kWindow: beyond the window
  EXPECT_EQ(t.restarts(), 0U) << "not confirmed yet";
  t.add(100'001);                    // follows the jump: a restart
  EXPECT_EQ(t.restarts(), 1U);
  EXPECT_EQ(t.duplicates(), 0U);
  EXPECT_EQ(t.stale(), 0U);
  EXPECT_EQ(t.lost(), 0U) << "no loss is counted for the jump itself";
  EXPECT_EQ(t.expected(), 100'001 + kWindow + 2);
}

// A single stale datagram just beyond the window (a duplicate delayed by kWindow packets) is
// not a restart: the stream goes on at its old numbers (docs/wire-formats.md §1: lost = numbers never
// received).
TEST(SequenceTracker, StaleDatagramJustOutsideTheWindowDoesNotCauseFalseLoss) {
  SequenceTracker t;
  addRange(t, 0, 100'001 + kWindow); // 0 .. 165'536, nothing lost
  t.add(100'000);                    // one stale duplicate, kWindow behind
  addRange(t, 100'001 + kWindow, 100'001 + kWindow + 10);
  EXPECT_EQ(t.lost(), 0U) << "every number was received";
  EXPECT_EQ(t.restarts(), 0U);
  EXPECT_EQ(t.stale(), 1U);
}

TEST(SequenceTracker, LargeForwardGapClearsTheWholeWindow) {
  SequenceTracker t;
  addRange(t, 0, 11);
  const uint64_t far = 10 + kWindow + 5; // gap >= kWindow
  t.add(far);
  expectCounts(t, {kWindow + 4, 0, 0, 0, far + 1});
  // 10 + kWindow shares its bit with 10 (received before the gap): it must read as not received.
  t.add(10 + kWindow);
  t.add(far - 1);
  expectCounts(t, {kWindow + 2, 2, 0, 0, far + 1});
  t.add(far - 1);
  EXPECT_EQ(t.duplicates(), 1U);
}

TEST(SequenceTracker, ForwardGapJustBelowTheWindowClearsTheSkippedBits) {
  SequenceTracker t;
  addRange(t, 0, 11);
  const uint64_t next = 10 + kWindow; // gap = kWindow - 1: the bit-by-bit path
  t.add(next);
  expectCounts(t, {kWindow - 1, 0, 0, 0, next + 1});
  t.add(kWindow); // shares its bit with 0
  t.add(11);      // the oldest number still in the window
  expectCounts(t, {kWindow - 3, 2, 0, 0, next + 1});
  t.add(10); // kWindow behind: beyond the window, a restart candidate
  t.add(11); // follows it: the restart is confirmed
  EXPECT_EQ(t.restarts(), 1U);
}

TEST(SequenceTracker, HugeForwardGap) {
  SequenceTracker t;
  t.add(0);
  t.add(1'000'000'000'000);
  expectCounts(t, {999'999'999'999, 0, 0, 0, 1'000'000'000'001});
  t.add(1'000'000'000'000 - 1);
  expectCounts(t, {999'999'999'998, 1, 0, 0, 1'000'000'000'001});
}

TEST(SequenceTracker, PerIsLostOverExpected) {
  SequenceTracker t;
  addAll(t, {0, 1, 2, 4, 5, 6, 8, 9}); // 3 and 7 missing of 10
  EXPECT_EQ(t.lost(), 2U);
  EXPECT_EQ(t.expected(), 10U);
  EXPECT_DOUBLE_EQ(t.per(), 0.2);
  t.add(3);
  EXPECT_DOUBLE_EQ(t.per(), 0.1);
  addRange(t, 10, 40); // 1 of 40
  EXPECT_DOUBLE_EQ(t.per(), 0.025);
  t.add(7);
  EXPECT_EQ(t.per(), 0.0);
}

TEST(SequenceTracker, PerAcrossARestartUsesAllRuns) {
  SequenceTracker t;
  addRange(t, 0, 99'999); // 0 .. 99'998
  t.add(100'000);         // 99'999 lost; run 1 expects 100'001
  addRange(t, 0, 10);     // restart
  t.add(12);              // 10, 11 lost; run 2 expects 13
  expectCounts(t, {3, 0, 0, 1, 100'014});
  EXPECT_DOUBLE_EQ(t.per(), 3.0 / 100'014.0);
}

// The Ess rules where they differ from the Exact ones (the table in SequenceTracker.h).
TEST(EssSequenceTracker, LateArrivalsDoNotTakeBackLossAndDoNotExtendTheRun) {
  EssSequenceTracker t;
  t.add(10);
  EXPECT_EQ(t.add(13).lost, 2U);
  const auto late = t.add(11);
  EXPECT_TRUE(late.reordered);
  EXPECT_EQ(late.expected, 0U);
  EXPECT_EQ(t.lost(), 2U) << "not taken back";
  EXPECT_TRUE(t.add(11).duplicate);
  EXPECT_TRUE(t.add(5).reordered) << "before the first: counted, the run stays";
  EXPECT_EQ(t.lost(), 2U);
  EXPECT_EQ(t.expected(), 4U);
  EXPECT_EQ(t.reordered(), 2U);
  EXPECT_EQ(t.duplicates(), 1U);
}

TEST(EssSequenceTracker, ZeroRestartsAtOnceFarBackOnceConfirmed) {
  EssSequenceTracker t;
  t.add(100);
  const auto zero = t.add(0); // within the window, but a sender starts at 0
  EXPECT_TRUE(zero.restarted);
  EXPECT_EQ(zero.expected, 1U);
  t.add(5000);
  const auto back = t.add(5000 - EssSequenceTracker::kWindow);
  EXPECT_FALSE(back.restarted) << "not yet: the next number tells";
  const auto confirmed = t.add(5001 - EssSequenceTracker::kWindow);
  EXPECT_TRUE(confirmed.restarted);
  EXPECT_EQ(confirmed.lost, 0U);
  EXPECT_EQ(t.restarts(), 2U);
  EXPECT_EQ(t.stale(), 0U);
  EXPECT_EQ(t.lost(), 4999U) << "0 -> 5000 only";
}

// Issue 37: one header with sequence number 3e9 among 2000 in order made 1 294 968 296 "lost"
// (a restart at 3e9, then the next number 2^32 - 3e9 ahead of it) and PER 1 for the rest of the
// run. Now it is one stale number and the sequence goes on.
TEST(EssSequenceTracker, OneStrayNumberIsStaleAndLosesNothing) {
  EssSequenceTracker t;
  for (uint32_t seq = 1; seq <= 1000; ++seq) {
    t.add(seq);
  }
  EXPECT_EQ(t.add(3'000'000'000U).expected, 0U);
  for (uint32_t seq = 1001; seq <= 2000; ++seq) {
    const auto r = t.add(seq);
    ASSERT_EQ(r.lost, 0U) << seq;
    ASSERT_EQ(r.stale, seq == 1001) << seq;
  }
  EXPECT_EQ(t.lost(), 0U);
  EXPECT_EQ(t.expected(), 2000U);
  EXPECT_EQ(t.stale(), 1U);
  EXPECT_EQ(t.restarts(), 0U);
  EXPECT_EQ(t.per(), 0.0);
}

TEST(EssSequenceTracker, WindowHoldsAcrossTheWrap) {
  EssSequenceTracker t;
  t.add(0xFFFF'FFF0U);
  const auto across = t.add(0x10); // 0xFFFFFFF1 .. 0xF skipped: 31 numbers
  EXPECT_EQ(across.lost, 31U);
  EXPECT_EQ(across.expected, 32U);
  EXPECT_TRUE(t.add(0xFFFF'FFFFU).reordered);
  EXPECT_TRUE(t.add(0xFFFF'FFFFU).duplicate);
  EXPECT_TRUE(t.add(0xFFFF'FFF0U).duplicate);
  EXPECT_EQ(t.restarts(), 0U);
}

} // namespace
} // namespace efu::udp
