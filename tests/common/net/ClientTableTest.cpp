// SPDX-License-Identifier: BSD-2-Clause
// ClientTable: the rule the control port and /metrics share (the quietest makes room, the idle
// are closed), on descriptors of its own.
#include "common/net/ClientTable.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/eventfd.h>

#include <vector>

namespace efu {
namespace {

struct Client {
  int fd = -1;
  int64_t lastActiveNs = 0;
  bool dead = false;
  int tag = 0;
};

bool isOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(ClientTable, TheQuietestMakesRoomForANewcomer) {
  ClientTable<Client> table(3, 0);
  std::vector<int> fds;
  bool evicted = false;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(::eventfd(0, EFD_CLOEXEC));
    table.admit(fds.back(), 100 + i, [](const Client &) { FAIL() << "room was left"; }, evicted)
        .tag = i;
    EXPECT_FALSE(evicted);
  }
  table.clients()[0].lastActiveNs = 500; // the first spoke since: the second is quietest now
  int toldGoodbye = -1;
  fds.push_back(::eventfd(0, EFD_CLOEXEC));
  Client &newcomer = table.admit(
      fds.back(), 600, [&](const Client &quietest) { toldGoodbye = quietest.tag; }, evicted);
  newcomer.tag = 3;
  EXPECT_TRUE(evicted);
  EXPECT_EQ(toldGoodbye, 1);
  EXPECT_FALSE(isOpen(fds[1])) << "the evicted client's descriptor is closed";
  ASSERT_EQ(table.size(), 3U);
  std::vector<int> tags;
  for (const Client &c : table.clients()) {
    tags.push_back(c.tag);
  }
  EXPECT_EQ(tags, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(table.clients().back().lastActiveNs, 600);
}

TEST(ClientTable, IdleClientsAreHandedOverAndSweptDeadOnesClosed) {
  ClientTable<Client> table(8, 1000); // 1 s
  bool evicted = false;
  const int quiet = ::eventfd(0, EFD_CLOEXEC);
  const int busy = ::eventfd(0, EFD_CLOEXEC);
  table.admit(quiet, 0, [](const Client &) {}, evicted);
  table.admit(busy, 0, [](const Client &) {}, evicted);
  table.clients()[1].lastActiveNs = 600'000'000;
  EXPECT_EQ(table.expireIdle(999'999'999, [](Client &c) { c.dead = true; }), 0U);
  EXPECT_EQ(table.expireIdle(1'000'000'000, [](Client &c) { c.dead = true; }), 1U);
  EXPECT_EQ(table.expireIdle(1'000'000'000, [](Client &c) { c.dead = true; }), 0U)
      << "a client marked dead is not handed over again";
  table.sweep();
  ASSERT_EQ(table.size(), 1U);
  EXPECT_EQ(table.clients()[0].fd, busy);
  EXPECT_FALSE(isOpen(quiet));
  EXPECT_TRUE(isOpen(busy));
  ClientTable<Client> never(8, 0);
  never.admit(::eventfd(0, EFD_CLOEXEC), 0, [](const Client &) {}, evicted);
  EXPECT_EQ(never.expireIdle(INT64_MAX, [](Client &c) { c.dead = true; }), 0U);
}

} // namespace
} // namespace efu
