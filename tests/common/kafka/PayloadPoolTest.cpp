// SPDX-License-Identifier: BSD-2-Clause
// PayloadPool: copies, reuse, the spare limit, and freeing what is still lent.
#include "common/kafka/PayloadPool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using efu::kafka::PayloadPool;

constexpr size_t kKiB = 1024;

std::vector<uint8_t> payloadOf(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<uint8_t>(seed + i * 7);
  }
  return bytes;
}

TEST(PayloadPool, CopiesThePayload) {
  PayloadPool pool(8 * 1024 * kKiB, 64 * kKiB);
  const auto payload = payloadOf(100 * kKiB, 3);
  PayloadPool::Block *block = pool.take(payload);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(std::memcmp(PayloadPool::data(block), payload.data(), payload.size()), 0);
  EXPECT_EQ(pool.lent(), 1u);
  pool.give(block);
  EXPECT_EQ(pool.lent(), 0u);
  EXPECT_EQ(pool.spares(), 1u);
}

TEST(PayloadPool, ReusesAReturnedBlockForALikeOrSlightlyLargerPayload) {
  PayloadPool pool(8 * 1024 * kKiB, 64 * kKiB);
  PayloadPool::Block *first = pool.take(payloadOf(160 * kKiB, 1));
  pool.give(first);
  // An eighth of headroom: a message of the same pulse size, a little larger, fits.
  const auto larger = payloadOf(170 * kKiB, 2);
  PayloadPool::Block *second = pool.take(larger);
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool.allocations(), 1u);
  EXPECT_EQ(std::memcmp(PayloadPool::data(second), larger.data(), larger.size()), 0);
  EXPECT_EQ(pool.spares(), 0u);
  EXPECT_EQ(pool.spareBytes(), 0u);
  pool.give(second);
}

TEST(PayloadPool, ASpareServesPayloadsFromHalfItsCapacityUp) {
  PayloadPool pool(8 * 1024 * kKiB, 64 * kKiB);
  pool.give(pool.take(payloadOf(400 * kKiB, 1)));
  PayloadPool::Block *small = pool.take(payloadOf(100 * kKiB, 2)); // not the 450-kB block
  EXPECT_EQ(pool.allocations(), 2u);
  EXPECT_EQ(pool.spares(), 1u);
  PayloadPool::Block *half = pool.take(payloadOf(300 * kKiB, 3)); // the 450-kB block
  EXPECT_EQ(pool.allocations(), 2u);
  EXPECT_EQ(pool.spares(), 0u);
  PayloadPool::Block *tooLarge = pool.take(payloadOf(500 * kKiB, 4));
  EXPECT_EQ(pool.allocations(), 3u);
  pool.give(small);
  pool.give(half);
  pool.give(tooLarge);
  EXPECT_EQ(pool.spares(), 3u);
}

TEST(PayloadPool, FreesWhatExceedsTheSpareLimit) {
  // Room for about two 100-kB blocks: an outage's worth of blocks goes back to the machine.
  PayloadPool pool(250 * kKiB, 64 * kKiB);
  std::vector<PayloadPool::Block *> lent;
  for (uint8_t i = 0; i < 10; ++i) {
    lent.push_back(pool.take(payloadOf(100 * kKiB, i)));
  }
  EXPECT_EQ(pool.lent(), 10u);
  for (PayloadPool::Block *b : lent) {
    pool.give(b);
  }
  EXPECT_EQ(pool.lent(), 0u);
  EXPECT_EQ(pool.spares(), 2u);
  EXPECT_LE(pool.spareBytes(), 250 * kKiB);
}

TEST(PayloadPool, DestructorFreesBlocksStillLent) {
  // Under ASan/LeakSanitizer a block left lent at destruction would be reported as a leak.
  PayloadPool pool(8 * 1024 * kKiB, 64 * kKiB);
  PayloadPool::Block *a = pool.take(payloadOf(64 * kKiB, 1));
  PayloadPool::Block *b = pool.take(payloadOf(65 * kKiB, 2));
  PayloadPool::Block *c = pool.take(payloadOf(66 * kKiB, 3));
  pool.give(b); // unlinks from the middle of the lent list
  EXPECT_EQ(pool.lent(), 2u);
  (void)a;
  (void)c;
}

} // namespace
