// SPDX-License-Identifier: BSD-2-Clause
// perfgen: a detector without input. At a set rate of the wall clock it makes batches of events
// that walk a test image, for testing the Kafka side and its consumers without any readout
// hardware (the ESS EFU's perfgen; modules/perfgen/README.md says where they differ).
#pragma once

#include "common/sdk/Module.h"
#include "modules/perfgen/PerfgenConfig.h"
#include "modules/perfgen/PerfgenImage.h"
#include "modules/perfgen/PerfgenSchedule.h"

#include <string>

namespace efu::perfgen {

/// The module's counters (docs/counters.md, section perfgen), registered once, here.
struct PerfgenCounters {
  explicit PerfgenCounters(sdk::ModuleContext &ctx);
  Counter &datagrams;      ///< readouts.count: datagrams on the data port, ignored
  Counter &events;         ///< events.count: events made
  Counter &udder;          ///< events.udder: the same, under the ESS perfgen's name
  Counter &batches;        ///< perfgen.batches: batches made
  Counter &skippedBatches; ///< perfgen.skipped_batches: due, but beyond a tick's bound
  Counter &skippedEvents;  ///< perfgen.skipped_events: their events
  Counter &clockRestarts;  ///< perfgen.clock_restarts: the wall clock went back
};

/// One instance per daemon; tick() makes the events on the processing thread.
class PerfgenModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration it cannot use.
  explicit PerfgenModule(sdk::ModuleContext &ctx);

  /// perfgen reads nothing: a datagram that reaches the data port is counted and ignored.
  void process(const sdk::Packet &packet) noexcept override;
  /// Makes the batches that have fallen due by nowNs (at most max_events_per_tick events).
  void tick(int64_t nowNs) noexcept override;

  /// Self-description: the picture efu-dump --image draws.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const PerfgenConfig c(config, source);
    return {c.width, c.height};
  }

private:
  const PerfgenConfig config_;
  sdk::EventSink &events_;
  PerfgenCounters counters_;
  PixelWalk walk_;
  BatchSchedule schedule_;
};

} // namespace efu::perfgen
