// SPDX-License-Identifier: BSD-2-Clause
// The example module (docs/modules.md): the smallest complete detector module, and the template
// of `scripts/new-module`. ESS readout datagrams whose readouts are (time, x, y) on a
// width x height grid become events with pixel = y * width + x + 1.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/example/ExampleSource.h"

#include <cstdint>
#include <string>

namespace efu::example {

/// The configuration keys (validated by the daemon and the tools before the module sees them).
inline constexpr EfuConfigKey kExampleKeys[] = {
    {"detector_type", sdk::ConfigType::Integer, "16", "ESS detector type in the readout header",
     0, 255},
    {"width", sdk::ConfigType::Integer, "32", "Grid columns (x < width)", 1, 4096},
    {"height", sdk::ConfigType::Integer, "32", "Grid rows (y < height)", 1, 4096},
    {"max_tof_ns", sdk::ConfigType::Integer, "1000000000",
     "Largest time of flight accepted, in ns", 0, 2147483647},
};

/// The parsed configuration.
struct ExampleConfig {
  ExampleConfig(const nlohmann::json &config, const std::string &source);
  uint8_t detectorType;
  uint32_t width;
  uint32_t height;
  int64_t maxTofNs;
};

/// The module's own counters (docs/counters.md, section example), registered once, here.
struct ExampleCounters {
  explicit ExampleCounters(sdk::ModuleContext &ctx);
  Counter &readouts;  ///< readouts.count: readouts looked at
  Counter &size;      ///< readouts.errors.size: trailing bytes shorter than a readout
  Counter &position;  ///< readouts.errors.position: x >= width or y >= height
  Counter &events;    ///< events.count: readouts that became events
};

/// One instance per daemon; process() runs on the processing thread.
class ExampleModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration it cannot use.
  explicit ExampleModule(sdk::ModuleContext &ctx);

  void process(const sdk::Packet &packet) noexcept override;

  /// Self-description: the picture efu-dump --image draws, and readoutgen's encoder.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const ExampleConfig c(config, source);
    return {c.width, c.height};
  }
  using Source = ExampleSource;

private:
  const ExampleConfig config_;
  sdk::EventSink &events_;
  readout::HeaderCounters headerCounters_;
  readout::TofCounters tofCounters_;
  ExampleCounters counters_;
  readout::EssReadoutParser parser_;
  readout::TofCalculator tof_;
};

} // namespace efu::example
