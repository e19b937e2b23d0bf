// SPDX-License-Identifier: BSD-2-Clause
// CPU accounting from /proc: per-thread user/system time and machine-wide shares, as counters.
#pragma once

#include "common/stats/Stats.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// CPU time of one thread in clock ticks (jiffies), fields 14 and 15 of /proc/<pid>/task/<tid>/stat.
struct ThreadCpuTicks {
  uint64_t user = 0;
  uint64_t system = 0;
};

/// The aggregate "cpu " line of /proc/stat, in clock ticks summed over all CPUs.
/// (guest time is already included in user/nice, so it is not read.)
struct MachineCpuTicks {
  uint64_t user = 0;
  uint64_t nice = 0;
  uint64_t system = 0;
  uint64_t idle = 0;
  uint64_t iowait = 0;
  uint64_t irq = 0;
  uint64_t softirq = 0;
  uint64_t steal = 0;
  [[nodiscard]] uint64_t total() const noexcept {
    return user + nice + system + idle + iowait + irq + softirq + steal;
  }
};

/// Machine CPU between two /proc/stat samples, in percent of all CPUs (0..100 each;
/// the shares add up to 100). All zero when no tick passed.
struct MachineCpuPercent {
  double user = 0;    ///< user + nice
  double system = 0;
  double idle = 0;
  double iowait = 0;
  double irq = 0;
  double softirq = 0;
  double steal = 0;
  double busy = 0;    ///< 100 - idle - iowait
};

/// Parses the contents of a /proc/<pid>/task/<tid>/stat file. The thread name (field 2) may
/// contain spaces and parentheses, so fields are counted after the last ')'.
/// nullopt when the text is not such a line.
std::optional<ThreadCpuTicks> parseThreadStat(std::string_view text);

/// Parses the aggregate "cpu " line of /proc/stat contents (missing trailing fields of old
/// kernels count as 0). nullopt when there is no such line.
std::optional<MachineCpuTicks> parseMachineStat(std::string_view text);

/// Shares of each state between two samples (`after` taken later than `before`).
MachineCpuPercent machineCpuPercent(const MachineCpuTicks &before,
                                    const MachineCpuTicks &after) noexcept;

/// Samples CPU use once per stats interval and keeps it in counters (integer percent, rounded):
///
///   thread.<name>.cpu_user_pct, thread.<name>.cpu_sys_pct, thread.<name>.cpu_pct (user + sys)
///       percent of ONE core used by that thread since the previous sample (0..100);
///       -1 while the thread's tid is unknown or its stat file cannot be read.
///   machine.cpu.user_pct (user + nice), machine.cpu.sys_pct, machine.cpu.irq_pct,
///   machine.cpu.softirq_pct, machine.cpu.iowait_pct, machine.cpu.steal_pct,
///   machine.cpu.idle_pct, machine.cpu.busy_pct (100 - idle - iowait)
///       percent of ALL CPUs of the machine since the previous sample (0..100).
///
/// The first sample() only sets the baseline; values appear from the second one on.
/// Thread rules: construct, addThread() and sample()/json()/line() from one thread (the main
/// thread); the counters may be read by any thread (Stats rules).
class CpuUsage {
public:
  struct Options {
    std::string procRoot = "/proc"; ///< seam for tests: a folder laid out like /proc
    long ticksPerSec = 0;           ///< 0 = sysconf(_SC_CLK_TCK)
  };

  CpuUsage(Stats &stats, Options options);
  explicit CpuUsage(Stats &stats) : CpuUsage(stats, Options{}) {}
  CpuUsage(const CpuUsage &) = delete;
  CpuUsage &operator=(const CpuUsage &) = delete;

  /// Registers thread.<name>.* counters. `tid` is asked at every sample() and returns the
  /// thread's kernel id (gettid()), or 0 while it is not known yet. Throws StatsError on a bad
  /// or duplicate name. The thread is read from <procRoot>/self/task/<tid>/stat.
  void addThread(std::string_view name, std::function<pid_t()> tid);

  /// Reads /proc and updates the counters. nowNs: CLOCK_MONOTONIC (efu::monotonicNs()).
  void sample(int64_t nowNs);

  /// The latest values as one JSON object, e.g.
  /// {"rx":{"user_pct":3,"sys_pct":41,"pct":44},"machine":{"user_pct":..,"softirq_pct":..}}
  [[nodiscard]] std::string json() const;
  /// The latest values for a log line, e.g. "cpu rx 44% proc 12% | machine busy 61% softirq 30%".
  [[nodiscard]] std::string line() const;

private:
  struct Thread {
    std::string name;
    std::function<pid_t()> tid;
    pid_t sampledTid = 0;
    std::optional<ThreadCpuTicks> last;
    int64_t lastNs = 0;
    Counter *user;
    Counter *system;
    Counter *total;
  };

  void sampleThread(Thread &thread, int64_t nowNs);

  Stats &stats_;
  Options options_;
  std::vector<Thread> threads_;
  std::optional<MachineCpuTicks> lastMachine_;
  Counter &machineUser_;
  Counter &machineSystem_;
  Counter &machineIrq_;
  Counter &machineSoftirq_;
  Counter &machineIowait_;
  Counter &machineSteal_;
  Counter &machineIdle_;
  Counter &machineBusy_;
};

} // namespace efu
