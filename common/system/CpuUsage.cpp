// SPDX-License-Identifier: BSD-2-Clause
// CPU accounting from /proc: per-thread user/system time and machine-wide shares, as counters.
#include "common/system/CpuUsage.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace efu {
namespace {

/// Next whitespace-separated word of `text` from `pos`; empty at the end.
std::string_view nextWord(std::string_view text, size_t &pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) {
    ++pos;
  }
  const size_t start = pos;
  while (pos < text.size() && text[pos] != ' ' && text[pos] != '\t' && text[pos] != '\n') {
    ++pos;
  }
  return text.substr(start, pos - start);
}

bool toU64(std::string_view word, uint64_t &out) {
  if (word.empty()) {
    return false;
  }
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && end == word.data() + word.size();
}

std::optional<std::string> readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int64_t roundPct(double pct) { return static_cast<int64_t>(std::lround(pct)); }

} // namespace

std::optional<ThreadCpuTicks> parseThreadStat(std::string_view text) {
  // "<pid> (<comm>) <state> <ppid> ..." : utime and stime are fields 14 and 15 (1-based), i.e.
  // the 12th and 13th words after the closing parenthesis of comm.
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos || text.find('(') == std::string_view::npos) {
    return std::nullopt;
  }
  size_t pos = close + 1;
  ThreadCpuTicks ticks;
  for (int field = 3; field <= 15; ++field) {
    const std::string_view word = nextWord(text, pos);
    if (word.empty()) {
      return std::nullopt;
    }
    if (field == 14 && !toU64(word, ticks.user)) {
      return std::nullopt;
    }
    if (field == 15 && !toU64(word, ticks.system)) {
      return std::nullopt;
    }
  }
  return ticks;
}

std::optional<MachineCpuTicks> parseMachineStat(std::string_view text) {
  size_t lineStart = 0;
  while (lineStart < text.size()) {
    size_t lineEnd = text.find('\n', lineStart);
    if (lineEnd == std::string_view::npos) {
      lineEnd = text.size();
    }
    const std::string_view line = text.substr(lineStart, lineEnd - lineStart);
    lineStart = lineEnd + 1;
    size_t pos = 0;
    if (nextWord(line, pos) != "cpu") {
      continue; // "cpu0" etc. are per-CPU lines; only the aggregate is wanted
    }
    MachineCpuTicks ticks;
    uint64_t *const fields[] = {&ticks.user,   &ticks.nice, &ticks.system,  &ticks.idle,
                                &ticks.iowait, &ticks.irq,  &ticks.softirq, &ticks.steal};
    int parsed = 0;
    for (uint64_t *field : fields) {
      const std::string_view word = nextWord(line, pos);
      if (word.empty()) {
        break;
      }
      if (!toU64(word, *field)) {
        return std::nullopt;
      }
      ++parsed;
    }
    if (parsed < 4) { // user nice system idle exist on every kernel
      return std::nullopt;
    }
    return ticks;
  }
  return std::nullopt;
}

MachineCpuPercent machineCpuPercent(const MachineCpuTicks &before,
                                    const MachineCpuTicks &after) noexcept {
  // Counters only grow, but a wrapped or reset source must not produce huge shares.
  auto delta = [](uint64_t a, uint64_t b) { return b >= a ? static_cast<double>(b - a) : 0.0; };
  const double user = delta(before.user, after.user) + delta(before.nice, after.nice);
  const double system = delta(before.system, after.system);
  const double idle = delta(before.idle, after.idle);
  const double iowait = delta(before.iowait, after.iowait);
  const double irq = delta(before.irq, after.irq);
  const double softirq = delta(before.softirq, after.softirq);
  const double steal = delta(before.steal, after.steal);
  const double total = user + system + idle + iowait + irq + softirq + steal;
  MachineCpuPercent pct;
  if (total <= 0) {
    return pct;
  }
  const double scale = 100.0 / total;
  pct.user = user * scale;
  pct.system = system * scale;
  pct.idle = idle * scale;
  pct.iowait = iowait * scale;
  pct.irq = irq * scale;
  pct.softirq = softirq * scale;
  pct.steal = steal * scale;
  pct.busy = 100.0 - pct.idle - pct.iowait;
  return pct;
}

CpuUsage::CpuUsage(Stats &stats, Options options)
    : stats_(stats), options_(std::move(options)),
      machineUser_(stats.add("machine.cpu.user_pct", CounterKind::Gauge)),
      machineSystem_(stats.add("machine.cpu.sys_pct", CounterKind::Gauge)),
      machineIrq_(stats.add("machine.cpu.irq_pct", CounterKind::Gauge)),
      machineSoftirq_(stats.add("machine.cpu.softirq_pct", CounterKind::Gauge)),
      machineIowait_(stats.add("machine.cpu.iowait_pct", CounterKind::Gauge)),
      machineSteal_(stats.add("machine.cpu.steal_pct", CounterKind::Gauge)),
      machineIdle_(stats.add("machine.cpu.idle_pct", CounterKind::Gauge)),
      machineBusy_(stats.add("machine.cpu.busy_pct", CounterKind::Gauge)) {
  if (options_.ticksPerSec <= 0) {
    options_.ticksPerSec = sysconf(_SC_CLK_TCK);
  }
  if (options_.ticksPerSec <= 0) {
    options_.ticksPerSec = 100; // USER_HZ on every Linux architecture
  }
}

void CpuUsage::addThread(std::string_view name, std::function<pid_t()> tid) {
  const std::string prefix = "thread." + std::string(name);
  Thread thread{std::string(name), std::move(tid), 0, std::nullopt, 0, nullptr, nullptr, nullptr};
  thread.user = &stats_.add(prefix + ".cpu_user_pct", CounterKind::Gauge);
  thread.system = &stats_.add(prefix + ".cpu_sys_pct", CounterKind::Gauge);
  thread.total = &stats_.add(prefix + ".cpu_pct", CounterKind::Gauge);
  thread.user->set(-1);
  thread.system->set(-1);
  thread.total->set(-1);
  threads_.push_back(std::move(thread));
}

void CpuUsage::sampleThread(Thread &thread, int64_t nowNs) {
  const pid_t tid = thread.tid ? thread.tid() : 0;
  if (tid != thread.sampledTid) { // first sight, or the thread was restarted: new baseline
    thread.sampledTid = tid;
    thread.last.reset();
  }
  std::optional<ThreadCpuTicks> ticks;
  if (tid > 0) {
    const auto text =
        readFile(options_.procRoot + "/self/task/" + std::to_string(tid) + "/stat");
    if (text) {
      ticks = parseThreadStat(*text);
    }
  }
  if (!ticks) {
    thread.last.reset();
    thread.user->set(-1);
    thread.system->set(-1);
    thread.total->set(-1);
    return;
  }
  if (thread.last && nowNs > thread.lastNs) {
    const double ticksPerSec = static_cast<double>(options_.ticksPerSec);
    const double seconds = static_cast<double>(nowNs - thread.lastNs) / 1e9;
    auto pct = [&](uint64_t before, uint64_t after) {
      const double used = after >= before ? static_cast<double>(after - before) : 0.0;
      return std::min(100.0, used / ticksPerSec / seconds * 100.0);
    };
    const double user = pct(thread.last->user, ticks->user);
    const double system = pct(thread.last->system, ticks->system);
    thread.user->set(roundPct(user));
    thread.system->set(roundPct(system));
    thread.total->set(roundPct(std::min(100.0, user + system)));
  }
  thread.last = ticks;
  thread.lastNs = nowNs;
}

void CpuUsage::sample(int64_t nowNs) {
  for (Thread &thread : threads_) {
    sampleThread(thread, nowNs);
  }
  const auto text = readFile(options_.procRoot + "/stat");
  const auto machine = text ? parseMachineStat(*text) : std::nullopt;
  if (!machine) {
    return;
  }
  if (lastMachine_) {
    const MachineCpuPercent pct = machineCpuPercent(*lastMachine_, *machine);
    machineUser_.set(roundPct(pct.user));
    machineSystem_.set(roundPct(pct.system));
    machineIrq_.set(roundPct(pct.irq));
    machineSoftirq_.set(roundPct(pct.softirq));
    machineIowait_.set(roundPct(pct.iowait));
    machineSteal_.set(roundPct(pct.steal));
    machineIdle_.set(roundPct(pct.idle));
    machineBusy_.set(roundPct(pct.busy));
  }
  lastMachine_ = machine;
}

std::string CpuUsage::json() const {
  std::string out = "{";
  for (const Thread &thread : threads_) {
    out += "\"" + thread.name + "\":{\"user_pct\":" + std::to_string(thread.user->get()) +
           ",\"sys_pct\":" + std::to_string(thread.system->get()) +
           ",\"pct\":" + std::to_string(thread.total->get()) + "},";
  }
  out += "\"machine\":{\"user_pct\":" + std::to_string(machineUser_.get()) +
         ",\"sys_pct\":" + std::to_string(machineSystem_.get()) +
         ",\"irq_pct\":" + std::to_string(machineIrq_.get()) +
         ",\"softirq_pct\":" + std::to_string(machineSoftirq_.get()) +
         ",\"iowait_pct\":" + std::to_string(machineIowait_.get()) +
         ",\"steal_pct\":" + std::to_string(machineSteal_.get()) +
         ",\"idle_pct\":" + std::to_string(machineIdle_.get()) +
         ",\"busy_pct\":" + std::to_string(machineBusy_.get()) + "}}";
  return out;
}

std::string CpuUsage::line() const {
  std::string out = "cpu";
  for (const Thread &thread : threads_) {
    const int64_t total = thread.total->get();
    out += " " + thread.name + " " + (total < 0 ? std::string("?") : std::to_string(total)) + "%";
  }
  out += " | machine busy " + std::to_string(machineBusy_.get()) + "% softirq " +
         std::to_string(machineSoftirq_.get()) + "%";
  return out;
}

} // namespace efu
