// SPDX-License-Identifier: BSD-2-Clause
// efu-view's message-id tracker: out-of-order partitions are no loss, missing ids are.
#include "efu/tools/view/MessageIds.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

using efu::tools::view::MessageIds;

namespace {
MessageIds after(std::initializer_list<int64_t> ids) {
  MessageIds tracker;
  for (const int64_t id : ids) {
    tracker.add(id);
  }
  return tracker;
}
} // namespace

TEST(MessageIds, FourPartitionsReadSideBySideLoseNothing) {
  // Ids 0..99 dealt round-robin to 4 partitions, read one partition's batch of 5 after another.
  MessageIds tracker;
  for (int64_t block = 0; block < 100; block += 20) {
    for (int64_t partition = 0; partition < 4; ++partition) {
      for (int64_t i = block + partition; i < block + 20; i += 4) {
        tracker.add(i);
      }
    }
  }
  EXPECT_EQ(tracker.missing(), 0U);
  EXPECT_EQ(tracker.duplicates(), 0U);
  EXPECT_EQ(tracker.restarts(), 0U);
}

TEST(MessageIds, AnIdThatNeverComesIsMissingALateOneIsNot) {
  EXPECT_EQ(after({5, 7}).missing(), 1U);
  EXPECT_EQ(after({5, 7, 6}).missing(), 0U);
  EXPECT_EQ(after({7, 5}).missing(), 1U); // the run began at 5 at the latest
  EXPECT_EQ(after({7, 5, 6}).missing(), 0U);
  EXPECT_EQ(after({0, 1000}).missing(), 999U);
}

TEST(MessageIds, DuplicatesAreCountedOnce) {
  const auto tracker = after({1, 2, 2, 3, 1});
  EXPECT_EQ(tracker.duplicates(), 2U);
  EXPECT_EQ(tracker.missing(), 0U);
}

TEST(MessageIds, AFarJumpForwardForgetsTheWindowAndCountsTheGap) {
  const int64_t far = 3 * MessageIds::kWindow;
  const auto tracker = after({0, 1, far, far + 1, far - 1});
  EXPECT_EQ(tracker.missing(), static_cast<uint64_t>(far - 3));
  EXPECT_EQ(tracker.duplicates(), 0U); // far - 1 was not taken for a seen id of the old window
}

TEST(MessageIds, AProducerRestartStartsANewRunAndKeepsWhatTheOldOneMissed) {
  const int64_t last = MessageIds::kWindow + 10;
  const auto tracker = after({0, 2, last, 0, 1, 2});
  EXPECT_EQ(tracker.restarts(), 1U);
  EXPECT_EQ(tracker.missing(), static_cast<uint64_t>(last - 2)); // old run: 1, 3 .. last-1
  EXPECT_EQ(tracker.duplicates(), 0U);
}
