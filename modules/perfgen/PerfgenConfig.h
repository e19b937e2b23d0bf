// SPDX-License-Identifier: BSD-2-Clause
// perfgen's configuration keys and the configuration parsed from them.
#pragma once

#include "common/sdk/Module.h"

#include <cstdint>
#include <string>

namespace efu::perfgen {

/// The configuration keys (validated by the daemon and the tools before the module sees them).
/// The image keys are not called width/height: efu-dump, asked without --det, must not find two
/// modules (example's grid and this one) that take the same file.
inline constexpr EfuConfigKey kPerfgenKeys[] = {
    {"image_width", sdk::ConfigType::Integer, "64",
     "Test image columns: pixel = y * image_width + x + 1", 1, 4096},
    {"image_height", sdk::ConfigType::Integer, "64", "Test image rows (y = 0 is the top row)", 1,
     4096},
    {"events_per_batch", sdk::ConfigType::Integer, "500",
     "Events per batch: one reference time, times of flight 0, 1, ..., N-1 ns", 1, 1000000},
    {"batches_per_second", sdk::ConfigType::Number, "14",
     "Batches per second of wall clock, exact on average (resolution 0.001)", 0.001, 1000000},
    {"max_events_per_tick", sdk::ConfigType::Integer, "1000000",
     "Most events one processing tick makes (at least events_per_batch); batches due beyond it "
     "are skipped and counted in perfgen.skipped_batches",
     1, 100000000},
};

/// The parsed configuration.
struct PerfgenConfig {
  /// Throws sdk::ConfigError (naming `source`, the keys and the values) when max_events_per_tick
  /// is below events_per_batch: a tick makes whole batches.
  PerfgenConfig(const nlohmann::json &config, const std::string &source);
  uint32_t width;
  uint32_t height;
  uint32_t eventsPerBatch;
  uint64_t milliBatchesPerSecond; ///< batches_per_second x 1000, rounded
  uint64_t maxEventsPerTick;
  /// Whole batches one tick may make (>= 1).
  [[nodiscard]] uint64_t maxBatchesPerTick() const noexcept {
    return maxEventsPerTick / eventsPerBatch;
  }
};

} // namespace efu::perfgen
