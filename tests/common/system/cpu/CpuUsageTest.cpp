// SPDX-License-Identifier: BSD-2-Clause
// Tests of CpuUsage: /proc/<pid>/task/<tid>/stat and /proc/stat parsing, shares, counters.
#include "common/system/CpuUsage.h"

#include "common/time/Time.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace efu {
namespace {

namespace fs = std::filesystem;

// A real line from a kernel 6.x, thread name "efu-rx".
constexpr const char *kTaskStat =
    "4242 (efu-rx) R 4240 4240 100 34816 4240 4194368 120 0 0 0 250 1375 0 0 20 0 3 0 5000 "
    "900000000 3000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 "
    "0 0\n";

std::string machineStat(uint64_t user, uint64_t nice, uint64_t system, uint64_t idle,
                        uint64_t iowait, uint64_t irq, uint64_t softirq, uint64_t steal) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  return "cpu  " + n(user) + " " + n(nice) + " " + n(system) + " " + n(idle) + " " + n(iowait) +
         " " + n(irq) + " " + n(softirq) + " " + n(steal) + " 0 0\n" +
         "cpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\nctxt 999\n";
}

TEST(ParseThreadStat, ReadsUtimeAndStime) {
  const auto ticks = parseThreadStat(kTaskStat);
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->user, 250u);
  EXPECT_EQ(ticks->system, 1375u);
}

TEST(ParseThreadStat, NameWithSpacesAndParentheses) {
  const auto ticks = parseThreadStat(
      "77 (a b) (c)) S 1 1 1 0 -1 4194304 10 0 0 0 7 9 0 0 20 0 1 0 100 0 0\n");
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->user, 7u);
  EXPECT_EQ(ticks->system, 9u);
}

TEST(ParseThreadStat, RejectsTruncatedOrGarbage) {
  EXPECT_FALSE(parseThreadStat("").has_value());
  EXPECT_FALSE(parseThreadStat("77 (x) S 1 1 1 0 -1 4194304 10 0 0 0 7").has_value());
  EXPECT_FALSE(parseThreadStat("77 (x) S 1 1 1 0 -1 4194304 10 0 0 0 7x 9 0").has_value());
  EXPECT_FALSE(parseThreadStat("no parentheses here 1 2 3 4 5 6 7 8 9 10 11 12 13").has_value());
}

TEST(ParseMachineStat, ReadsAggregateLineOnly) {
  const auto ticks = parseMachineStat(machineStat(10, 1, 20, 300, 4, 5, 60, 7));
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->user, 10u);
  EXPECT_EQ(ticks->nice, 1u);
  EXPECT_EQ(ticks->system, 20u);
  EXPECT_EQ(ticks->idle, 300u);
  EXPECT_EQ(ticks->iowait, 4u);
  EXPECT_EQ(ticks->irq, 5u);
  EXPECT_EQ(ticks->softirq, 60u);
  EXPECT_EQ(ticks->steal, 7u);
  EXPECT_EQ(ticks->total(), 407u);
}

TEST(ParseMachineStat, OldKernelWithFourFieldsAndMissingLine) {
  const auto ticks = parseMachineStat("cpu 1 2 3 4\n");
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->idle, 4u);
  EXPECT_EQ(ticks->softirq, 0u);
  EXPECT_FALSE(parseMachineStat("cpu0 1 2 3 4 5 6 7 8\n").has_value());
  EXPECT_FALSE(parseMachineStat("cpu 1 2\n").has_value());
  EXPECT_FALSE(parseMachineStat("cpu 1 2 x 4\n").has_value());
}

TEST(MachineCpuPercent, SharesOfTheDelta) {
  const auto before = *parseMachineStat(machineStat(100, 0, 100, 1000, 0, 0, 0, 0));
  // +200 ticks: user 30 (20 + nice 10), system 40, idle 80, iowait 20, softirq 30
  const auto after = *parseMachineStat(machineStat(120, 10, 140, 1080, 20, 0, 30, 0));
  const MachineCpuPercent pct = machineCpuPercent(before, after);
  EXPECT_DOUBLE_EQ(pct.user, 15.0);
  EXPECT_DOUBLE_EQ(pct.system, 20.0);
  EXPECT_DOUBLE_EQ(pct.idle, 40.0);
  EXPECT_DOUBLE_EQ(pct.iowait, 10.0);
  EXPECT_DOUBLE_EQ(pct.softirq, 15.0);
  EXPECT_DOUBLE_EQ(pct.busy, 50.0);
  const MachineCpuPercent none = machineCpuPercent(after, after);
  EXPECT_DOUBLE_EQ(none.busy, 0.0);
  const MachineCpuPercent backwards = machineCpuPercent(after, before);
  EXPECT_DOUBLE_EQ(backwards.busy, 0.0);
}

/// A fake /proc: <root>/stat and <root>/self/task/<tid>/stat, rewritten between samples.
class FakeProc : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("efu-cpu-usage-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "self" / "task" / "4242");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path &path, const std::string &text) {
    std::ofstream out(root_ / path, std::ios::trunc);
    out << text;
  }
  void writeThread(uint64_t user, uint64_t system) {
    write(fs::path("self") / "task" / "4242" / "stat",
          "4242 (efu-rx) R 1 1 1 0 -1 4194368 0 0 0 0 " + std::to_string(user) + " " +
              std::to_string(system) + " 0 0 20 0 1 0 5 0 0\n");
  }
  int64_t value(const Stats &stats, const char *name) {
    const Counter *counter = stats.find(name);
    EXPECT_NE(counter, nullptr) << name;
    return counter == nullptr ? -999 : counter->get();
  }

  fs::path root_;
};

TEST_F(FakeProc, ThreadAndMachinePercentages) {
  Stats stats;
  CpuUsage cpu(stats, {root_.string(), 100});
  cpu.addThread("rx", [] { return pid_t{4242}; });
  writeThread(1000, 2000);
  write("stat", machineStat(0, 0, 0, 0, 0, 0, 0, 0));
  cpu.sample(10 * kNsPerSec);
  // Baseline only: threads unknown until a second sample, machine still zero.
  EXPECT_EQ(value(stats, "thread.rx.cpu_pct"), -1);
  EXPECT_EQ(value(stats, "machine.cpu.busy_pct"), 0);

  // 2 s later: +30 user ticks, +120 system ticks at 100 Hz = 15 % user, 60 % sys of one core.
  writeThread(1030, 2120);
  write("stat", machineStat(50, 0, 100, 200, 0, 10, 40, 0)); // 400 ticks
  cpu.sample(12 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.rx.cpu_user_pct"), 15);
  EXPECT_EQ(value(stats, "thread.rx.cpu_sys_pct"), 60);
  EXPECT_EQ(value(stats, "thread.rx.cpu_pct"), 75);
  EXPECT_EQ(value(stats, "machine.cpu.user_pct"), 13); // 12.5 rounds away from zero
  EXPECT_EQ(value(stats, "machine.cpu.sys_pct"), 25);
  EXPECT_EQ(value(stats, "machine.cpu.irq_pct"), 3); // 2.5
  EXPECT_EQ(value(stats, "machine.cpu.softirq_pct"), 10);
  EXPECT_EQ(value(stats, "machine.cpu.idle_pct"), 50);
  EXPECT_EQ(value(stats, "machine.cpu.busy_pct"), 50);
  EXPECT_EQ(cpu.json(), R"({"rx":{"user_pct":15,"sys_pct":60,"pct":75},"machine":{"user_pct":13,)"
                        R"("sys_pct":25,"irq_pct":3,"softirq_pct":10,"iowait_pct":0,)"
                        R"("steal_pct":0,"idle_pct":50,"busy_pct":50}})");
  EXPECT_EQ(cpu.line(), "cpu rx 75% | machine busy 50% softirq 10%");
}

TEST_F(FakeProc, ClampsToOneCoreAndHandlesVanishingThread) {
  Stats stats;
  CpuUsage cpu(stats, {root_.string(), 100});
  cpu.addThread("proc", [] { return pid_t{4242}; });
  writeThread(0, 0);
  write("stat", machineStat(0, 0, 0, 0, 0, 0, 0, 0));
  cpu.sample(kNsPerSec);
  writeThread(150, 0); // 1.5 s of CPU in 1 s: tick granularity, clamp to 100
  cpu.sample(2 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.proc.cpu_user_pct"), 100);
  EXPECT_EQ(value(stats, "thread.proc.cpu_pct"), 100);
  fs::remove(root_ / "self" / "task" / "4242" / "stat");
  cpu.sample(3 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.proc.cpu_pct"), -1);
  // It comes back: a fresh baseline first, then values again.
  writeThread(500, 0);
  cpu.sample(4 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.proc.cpu_pct"), -1);
  writeThread(520, 10);
  cpu.sample(5 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.proc.cpu_user_pct"), 20);
  EXPECT_EQ(value(stats, "thread.proc.cpu_sys_pct"), 10);
}

TEST_F(FakeProc, UnknownTidUntilPublished) {
  Stats stats;
  CpuUsage cpu(stats, {root_.string(), 100});
  std::atomic<pid_t> tid{0};
  cpu.addThread("rx", [&tid] { return tid.load(); });
  writeThread(0, 0);
  cpu.sample(kNsPerSec);
  cpu.sample(2 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.rx.cpu_pct"), -1);
  tid = 4242;
  cpu.sample(3 * kNsPerSec);
  writeThread(10, 0);
  cpu.sample(4 * kNsPerSec);
  EXPECT_EQ(value(stats, "thread.rx.cpu_pct"), 10);
  EXPECT_THROW(cpu.addThread("rx", [] { return pid_t{1}; }), StatsError);
}

TEST(CpuUsageReal, BusyThreadShowsUpAgainstRealProc) {
  Stats stats;
  CpuUsage cpu(stats);
  std::atomic<pid_t> tid{0};
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    volatile uint64_t sink = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      sink = sink + 1;
    }
  });
  cpu.addThread("spin", [&tid] { return tid.load(); });
  while (tid.load() == 0) {
    std::this_thread::yield();
  }
  cpu.sample(monotonicNs());
  // Windows of 400 ms until one shows the spinner above 10 % of a core (at most 25): on a busy
  // 2-core CI machine one window may give it less; an idle thread shows 0 in every window.
  int64_t shown = 0;
  for (int window = 0; window < 25 && shown <= 10; ++window) {
    const int64_t endNs = monotonicNs() + 400 * kNsPerMs;
    while (monotonicNs() < endNs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cpu.sample(monotonicNs());
    shown = stats.find("thread.spin.cpu_pct")->get();
  }
  stop = true;
  spinner.join();
  EXPECT_GT(shown, 10);
  EXPECT_LE(shown, 100);
  EXPECT_GT(stats.find("machine.cpu.busy_pct")->get(), 0);
}

} // namespace
} // namespace efu
