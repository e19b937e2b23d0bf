// SPDX-License-Identifier: BSD-2-Clause
// Stats registry: names, duplicates, order, lookup, snapshots, and one writer with a reader.
#include "common/stats/Stats.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace efu {
namespace {

/// "c<i>" (built with append: GCC 12 warns falsely on "c" + std::string, -Wrestrict).
std::string counterName(size_t i) {
  std::string name = "c";
  name += std::to_string(i);
  return name;
}

TEST(Stats, ValidNames) {
  for (const char *name : {"rx", "receive.packets", "readouts.errors.size", "kernel.udp.rcvbuf_errors",
                           "main.uptime_s", "a1.b2.c3", "_", "x.0"}) {
    EXPECT_TRUE(Stats::validName(name)) << name;
  }
}

TEST(Stats, InvalidNames) {
  for (const char *name :
       {"", ".", "rx.", ".rx", "rx..packets", "Rx.packets", "rx.Packets", "rx packets",
        "rx-packets", "rx/packets", "efu.udp.lost!", "r\xc3\xa9"}) {
    EXPECT_FALSE(Stats::validName(name)) << "'" << name << "'";
  }
}

TEST(Stats, AddRejectsInvalidNameWithAMessageNamingIt) {
  Stats stats;
  try {
    stats.add("Rx.Packets");
    FAIL() << "expected StatsError";
  } catch (const StatsError &e) {
    EXPECT_NE(std::string(e.what()).find("'Rx.Packets'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stats.add(""), StatsError);
  EXPECT_THROW(stats.add("a..b"), StatsError);
  EXPECT_EQ(stats.size(), 0U) << "a rejected name must not be registered";
}

TEST(Stats, DuplicateNameThrowsAndKeepsTheFirst) {
  Stats stats;
  Counter &first = stats.add("receive.packets");
  first.set(5);
  try {
    stats.add("receive.packets");
    FAIL() << "expected StatsError";
  } catch (const StatsError &e) {
    EXPECT_NE(std::string(e.what()).find("receive.packets"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stats.size(), 1U);
  EXPECT_EQ(stats.value(0), 5);
  EXPECT_EQ(stats.find("receive.packets"), &first);
}

TEST(Stats, IndexFollowsRegistrationOrder) {
  Stats stats;
  const std::vector<std::string> names{"zeta", "alpha", "receive.packets", "beta.gamma"};
  for (size_t i = 0; i < names.size(); ++i) {
    stats.add(names[i]).set(static_cast<int64_t>(i) * 10);
  }
  ASSERT_EQ(stats.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(stats.name(i), names[i]);
    EXPECT_EQ(stats.value(i), static_cast<int64_t>(i) * 10);
  }
  EXPECT_THROW((void)stats.name(names.size()), std::out_of_range);
  EXPECT_THROW((void)stats.value(names.size()), std::out_of_range);
}

TEST(Stats, FindReturnsTheRegisteredCounterOrNull) {
  Stats stats;
  Counter &packets = stats.add("receive.packets");
  Counter &bytes = stats.add("receive.bytes");
  EXPECT_EQ(stats.find("receive.packets"), &packets);
  EXPECT_EQ(stats.find("receive.bytes"), &bytes);
  EXPECT_EQ(stats.find("rx"), nullptr);
  EXPECT_EQ(stats.find("receive.packets.x"), nullptr);
  EXPECT_EQ(stats.find(""), nullptr);
}

TEST(Stats, ReferencesStayValidAsTheRegistryGrows) {
  Stats stats;
  Counter &first = stats.add("first");
  first.set(-3);
  std::vector<Counter *> all{&first};
  for (int i = 0; i < 1000; ++i) {
    all.push_back(&stats.add(counterName(static_cast<size_t>(i))));
  }
  first.add(4);
  EXPECT_EQ(stats.value(0), 1);
  EXPECT_EQ(stats.find("first"), &first);
  EXPECT_EQ(stats.find("c999"), all.back());
}

TEST(Stats, SnapshotListsNamesAndValuesInOrder) {
  Stats stats;
  EXPECT_TRUE(stats.snapshot().empty());
  stats.add("receive.packets").set(42);
  stats.add("receive.bytes").set(1000);
  Counter &proc = stats.add("processing.packets");
  proc.set(-7);
  const auto snap = stats.snapshot();
  ASSERT_EQ(snap.size(), 3U);
  EXPECT_EQ(snap[0].name, "receive.packets");
  EXPECT_EQ(snap[0].value, 42);
  EXPECT_EQ(snap[1].name, "receive.bytes");
  EXPECT_EQ(snap[1].value, 1000);
  EXPECT_EQ(snap[2].name, "processing.packets");
  EXPECT_EQ(snap[2].value, -7);
  proc.add(10);
  EXPECT_EQ(snap[2].value, -7) << "a snapshot is a copy";
  EXPECT_EQ(stats.snapshot()[2].value, 3);
}

TEST(Stats, KindIsGivenAtRegistrationAndCounterByDefault) {
  Stats stats;
  stats.add("rx.packets");
  stats.add("process.rss_bytes", CounterKind::Gauge);
  stats.add("rx.bytes", CounterKind::Counter);
  EXPECT_EQ(stats.kind(0), CounterKind::Counter);
  EXPECT_EQ(stats.kind(1), CounterKind::Gauge);
  EXPECT_EQ(stats.kind(2), CounterKind::Counter);
  EXPECT_THROW((void)stats.kind(3), std::out_of_range);
  const auto snap = stats.snapshot();
  ASSERT_EQ(snap.size(), 3U);
  EXPECT_EQ(snap[0].kind, CounterKind::Counter);
  EXPECT_EQ(snap[1].kind, CounterKind::Gauge);
  EXPECT_THROW(stats.add("process.rss_bytes", CounterKind::Counter), StatsError)
      << "one name, one registration, whatever the kind";
}

TEST(Counter, AddAndSet) {
  Counter counter;
  EXPECT_EQ(counter.get(), 0);
  counter.add();
  counter.add(41);
  EXPECT_EQ(counter.get(), 42);
  counter.add(-50);
  EXPECT_EQ(counter.get(), -8);
  counter.set(1'000'000'000'000);
  EXPECT_EQ(counter.get(), 1'000'000'000'000);
  EXPECT_EQ(alignof(Counter), 64U);
}

TEST(Stats, OneWriterAndOneReaderConcurrently) {
  Stats stats;
  Counter &packets = stats.add("receive.packets");
  Counter &gauge = stats.add("ring.fill");
  constexpr int64_t kWrites = 1'000'000;
  std::atomic<bool> done{false};
  int64_t nonMonotonic = 0;
  int64_t lastSeen = 0;

  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      const int64_t now = stats.value(0);
      nonMonotonic += now < lastSeen ? 1 : 0;
      lastSeen = now;
      const auto snap = stats.snapshot();
      nonMonotonic += snap[0].value < now ? 1 : 0;
      nonMonotonic += snap[1].value < 0 || snap[1].value > 100 ? 1 : 0;
    }
  });
  for (int64_t i = 0; i < kWrites; ++i) {
    packets.add();
    gauge.set(i % 101);
  }
  done.store(true, std::memory_order_release);
  reader.join();

  EXPECT_EQ(nonMonotonic, 0);
  EXPECT_EQ(stats.value(0), kWrites);
  EXPECT_EQ(stats.find("receive.packets")->get(), kWrites);
  EXPECT_EQ(stats.value(1), (kWrites - 1) % 101);
}

TEST(Stats, RegisteringWhileAnotherThreadReads) {
  Stats stats;
  constexpr int kCounters = 2000;
  std::atomic<bool> done{false};
  size_t mismatches = 0;

  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      const auto snap = stats.snapshot();
      for (size_t i = 0; i < snap.size(); ++i) {
        mismatches += snap[i].name != counterName(i) ? 1 : 0;
      }
    }
  });
  for (int i = 0; i < kCounters; ++i) {
    stats.add(counterName(static_cast<size_t>(i))).set(i);
  }
  done.store(true, std::memory_order_release);
  reader.join();

  EXPECT_EQ(mismatches, 0U);
  ASSERT_EQ(stats.size(), static_cast<size_t>(kCounters));
  EXPECT_EQ(stats.value(kCounters - 1), kCounters - 1);
}

} // namespace
} // namespace efu

namespace efu {
namespace {

// A module's further partitions (efu --proc-threads) register the same names as parts: readers
// see the sum, each part keeps its own writer, a part's own value stays its own.
TEST(StatsParts, ReadersSeeTheSumOfACounterAndItsParts) {
  Stats stats;
  Counter &head = stats.add("events.count");
  Counter &second = stats.addPart("events.count");
  Counter &third = stats.addPart("events.count");
  head.add(1);
  second.add(10);
  third.add(100);
  EXPECT_EQ(head.get(), 111);
  EXPECT_EQ(second.get(), 10) << "a part reads its own value";
  EXPECT_EQ(stats.find("events.count")->get(), 111);
  EXPECT_EQ(stats.value(0), 111);
  ASSERT_EQ(stats.snapshot().size(), 1U) << "parts are not listed";
  EXPECT_EQ(stats.snapshot()[0].value, 111);
  EXPECT_THROW(stats.addPart("events.other"), StatsError);
}

TEST(StatsParts, PartsWrittenByTheirOwnThreadsAddUpExactly) {
  Stats stats;
  std::vector<Counter *> parts{&stats.add("x.count", CounterKind::Gauge)};
  for (int p = 1; p < 4; ++p) {
    parts.push_back(&stats.addPart("x.count"));
  }
  constexpr int kWrites = 100000;
  std::vector<std::thread> writers;
  for (Counter *c : parts) {
    writers.emplace_back([c] {
      for (int i = 0; i < kWrites; ++i) {
        c->add(1);
      }
    });
  }
  int64_t last = 0;
  while (last < 4 * kWrites) {
    const int64_t now = stats.find("x.count")->get();
    ASSERT_GE(now, last) << "a sum of growing parts never goes back";
    last = now;
    if (now == 4 * kWrites) {
      break;
    }
    std::this_thread::yield();
  }
  for (std::thread &t : writers) {
    t.join();
  }
  EXPECT_EQ(stats.find("x.count")->get(), 4 * kWrites);
  EXPECT_EQ(stats.kind(0), CounterKind::Gauge);
}

} // namespace
} // namespace efu
