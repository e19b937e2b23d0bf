// SPDX-License-Identifier: BSD-2-Clause
#include "modules/perfgen/PerfgenConfig.h"

#include <cmath>

namespace efu::perfgen {

PerfgenConfig::PerfgenConfig(const nlohmann::json &config, const std::string &source)
    : width(config.at("image_width").get<uint32_t>()),
      height(config.at("image_height").get<uint32_t>()),
      eventsPerBatch(config.at("events_per_batch").get<uint32_t>()),
      milliBatchesPerSecond(static_cast<uint64_t>(
          std::llround(config.at("batches_per_second").get<double>() * 1000))),
      maxEventsPerTick(config.at("max_events_per_tick").get<uint64_t>()) {
  // The key table keeps each value in its range (batches_per_second >= 0.001: at least 1 here);
  // what it cannot say is a rule between two keys.
  if (maxEventsPerTick < eventsPerBatch) {
    throw sdk::ConfigError(source +
                           ": key 'max_events_per_tick' = " + std::to_string(maxEventsPerTick) +
                           " is below 'events_per_batch' = " + std::to_string(eventsPerBatch) +
                           ": a tick makes whole batches");
  }
}

} // namespace efu::perfgen
