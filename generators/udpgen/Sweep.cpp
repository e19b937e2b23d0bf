// SPDX-License-Identifier: BSD-2-Clause
// udpgen --sweep: udpmon's "throughput vs spacing" curve, with the receiving efu's counts.
#include "generators/udpgen/Sweep.h"

#include "common/net/ControlClient.h"
#include "common/time/Time.h"
#include "generators/udpgen/UdpSender.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace efu::udpgen {
namespace {

constexpr size_t kMaxSteps = 1000;

struct ReceiverCounts {
  int64_t packets = 0;
  int64_t dropped = 0;
};

ReceiverCounts readReceiver(const std::string &address, uint16_t port) {
  return {controlCounter(address, port, "receive.packets"),
          controlCounter(address, port, "receive.dropped")};
}

} // namespace

std::vector<double> sweepSpacings(const std::string &spec) {
  const auto bad = [&](const std::string &why) {
    return std::invalid_argument("'" + spec + "': " + why +
                                 " (expected FROM:TO:STEP in µs, e.g. 5:100:5)");
  };
  double from = 0.0;
  double to = 0.0;
  double step = 0.0;
  char tail = 0;
  if (std::sscanf(spec.c_str(), "%lf:%lf:%lf%c", &from, &to, &step, &tail) != 3) {
    throw bad("not three numbers");
  }
  if (!std::isfinite(from) || !std::isfinite(to) || !std::isfinite(step) || from <= 0.0 ||
      step <= 0.0) {
    throw bad("FROM and STEP must be greater than 0");
  }
  if (to < from) {
    throw bad("TO is below FROM");
  }
  const double steps = std::floor((to - from) / step + 1e-9) + 1.0;
  if (steps > static_cast<double>(kMaxSteps)) {
    throw bad(fmt::format("{:.0f} steps, at most {}", steps, kMaxSteps));
  }
  std::vector<double> spacings;
  for (size_t i = 0; i < static_cast<size_t>(steps); ++i) {
    spacings.push_back(from + static_cast<double>(i) * step);
  }
  return spacings;
}

double SweepRow::rxMbps(uint32_t sizeBytes) const noexcept {
  return received && seconds > 0.0
             ? static_cast<double>(*received) * sizeBytes * 8.0 / seconds / 1e6
             : 0.0;
}

std::optional<int64_t> SweepRow::lost() const noexcept {
  if (!received) {
    return std::nullopt;
  }
  return static_cast<int64_t>(sent) - *received;
}

std::vector<SweepRow> runSweep(const UdpGenOptions &options, const std::atomic<bool> &stop,
                               const std::function<void(const SweepRow &)> &onRow) {
  const std::vector<double> spacings = sweepSpacings(options.sweep);
  UdpGenOptions first = options;
  first.spacingUs = spacings.front();
  UdpSender sender(first);
  const bool withReceiver = options.cmdPort != 0;
  std::vector<SweepRow> rows;
  uint64_t used = 0;
  SendCounters before;
  for (const double spacing : spacings) {
    if (stop.load(std::memory_order_relaxed)) {
      break;
    }
    const ReceiverCounts rxBefore =
        withReceiver ? readReceiver(options.address, options.cmdPort) : ReceiverCounts{};
    used += options.count;
    sender.nextStep(spacing, used);
    const SendSummary summary = sender.run(stop, {});
    SweepRow row;
    row.spacingUs = spacing;
    row.sent = summary.counters.sent - before.sent;
    row.failed = summary.counters.errors() - before.errors();
    row.seconds = summary.elapsedS;
    row.txMbps = row.seconds > 0.0
                     ? static_cast<double>(summary.counters.bytes - before.bytes) * 8.0 /
                           row.seconds / 1e6
                     : 0.0;
    row.txKpps = row.seconds > 0.0 ? static_cast<double>(row.sent) / row.seconds / 1e3 : 0.0;
    before = summary.counters;
    if (withReceiver) {
      // Until the receiver has counted all that was sent, or nothing new came for 1 s.
      ReceiverCounts rxAfter = readReceiver(options.address, options.cmdPort);
      for (int quiet = 0; quiet < 20 && !stop.load(std::memory_order_relaxed) &&
                          rxAfter.packets - rxBefore.packets < static_cast<int64_t>(row.sent);) {
        sleepUntilMonotonicNs(monotonicNs() + 50 * kNsPerMs, stop);
        const ReceiverCounts now = readReceiver(options.address, options.cmdPort);
        quiet = now.packets == rxAfter.packets ? quiet + 1 : 0;
        rxAfter = now;
      }
      row.received = rxAfter.packets - rxBefore.packets;
      row.dropped = rxAfter.dropped - rxBefore.dropped;
    }
    rows.push_back(row);
    if (onRow) {
      onRow(row);
    }
  }
  return rows;
}

std::string sweepText(const std::vector<SweepRow> &rows, uint32_t sizeBytes) {
  std::string out = fmt::format("{:>10} {:>9} {:>8} {:>10} {:>9} {:>10} {:>9} {:>8} {:>10}\n",
                                "spacing_us", "sent", "failed", "tx_Mb/s", "tx_kpps", "received",
                                "lost", "dropped", "rx_Mb/s");
  for (const SweepRow &row : rows) {
    const auto opt = [](const std::optional<int64_t> &v) {
      return v ? std::to_string(*v) : std::string("-");
    };
    out += fmt::format("{:>10.2f} {:>9} {:>8} {:>10.1f} {:>9.1f} {:>10} {:>9} {:>8} {:>10}\n",
                       row.spacingUs, row.sent, row.failed, row.txMbps, row.txKpps,
                       opt(row.received), opt(row.lost()), opt(row.dropped),
                       row.received ? fmt::format("{:.1f}", row.rxMbps(sizeBytes)) : "-");
  }
  return out;
}

std::string sweepJson(const std::vector<SweepRow> &rows, uint32_t sizeBytes) {
  nlohmann::json steps = nlohmann::json::array();
  for (const SweepRow &row : rows) {
    nlohmann::json step = {{"spacing_us", row.spacingUs}, {"sent", row.sent},
                           {"failed", row.failed},        {"seconds", row.seconds},
                           {"tx_mbps", row.txMbps},       {"tx_kpps", row.txKpps}};
    if (row.received) {
      step["received"] = *row.received;
      step["lost"] = *row.lost();
      step["dropped"] = *row.dropped;
      step["rx_mbps"] = row.rxMbps(sizeBytes);
    }
    steps.push_back(step);
  }
  return nlohmann::json{{"size", sizeBytes}, {"sweep", steps}}.dump();
}

} // namespace efu::udpgen
