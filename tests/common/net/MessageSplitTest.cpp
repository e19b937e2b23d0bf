// SPDX-License-Identifier: BSD-2-Clause
// splitMessage: how many datagrams a received (possibly GRO-coalesced, possibly cut) message holds.
#include "common/net/UdpReceiver.h"

#include <gtest/gtest.h>

namespace efu {
namespace {

void expectSplit(MessageSplit got, uint32_t datagrams, uint32_t bytes, uint32_t truncated) {
  EXPECT_EQ(got.datagrams, datagrams);
  EXPECT_EQ(got.bytes, bytes);
  EXPECT_EQ(got.truncated, truncated);
}

TEST(MessageSplit, APlainDatagramIsOne) {
  expectSplit(splitMessage(1472, 0, false), 1, 1472, 0);
  expectSplit(splitMessage(0, 0, false), 1, 0, 0); // an empty datagram is still a datagram
}

TEST(MessageSplit, EqualSegmentsAreCountedExactly) {
  expectSplit(splitMessage(64 * 1472, 1472, false), 64, 64 * 1472, 0);
  expectSplit(splitMessage(2 * 64, 64, false), 2, 128, 0);
}

TEST(MessageSplit, TheLastSegmentMayBeShorter) {
  expectSplit(splitMessage(10 * 1000 + 300, 1000, false), 11, 10300, 0);
  expectSplit(splitMessage(1000 + 1, 1000, false), 2, 1001, 0);
}

TEST(MessageSplit, ASegmentSizeAtLeastTheMessageIsOneDatagram) {
  expectSplit(splitMessage(1000, 1000, false), 1, 1000, 0);
  expectSplit(splitMessage(700, 1000, false), 1, 700, 0);
}

TEST(MessageSplit, ATruncatedDatagramIsLostWhole) {
  expectSplit(splitMessage(9216, 0, true), 0, 0, 1);
  expectSplit(splitMessage(9216, 9216, true), 0, 0, 1);
}

TEST(MessageSplit, OfATruncatedGroMessageTheWholeSegmentsAreKept) {
  // 65536 bytes fit of a longer message of 1472-byte datagrams: 44 whole, the 45th cut.
  expectSplit(splitMessage(65536, 1472, true), 44, 44 * 1472, 1);
  // The cut falls on a segment boundary: the whole ones are kept, the unseen rest is one loss.
  expectSplit(splitMessage(4 * 1000, 1000, true), 4, 4000, 1);
}

} // namespace
} // namespace efu
