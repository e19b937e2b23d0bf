// SPDX-License-Identifier: BSD-2-Clause
#include "modules/example/ExampleSource.h"
#include "modules/example/ExampleModule.h"

#include <cstring>

namespace efu::example {

ExampleSource::ExampleSource(const nlohmann::json &config, const std::string &configSource,
                             uint64_t /*seed: the example draws nothing of its own*/) {
  const ExampleConfig c(config, configSource);
  detectorType_ = c.detectorType;
  width_ = c.width;
  height_ = c.height;
}

size_t ExampleSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                                  sdk::TruthSink &truth) {
  if (out.size() < sizeof(ExampleReadout) || n.x >= width_ || n.y >= height_) {
    return 0;
  }
  const ExampleReadout r{n.eventTime.high, n.eventTime.low, static_cast<uint16_t>(n.x),
                         static_cast<uint16_t>(n.y)};
  std::memcpy(out.data(), &r, sizeof(r));
  ++readouts_;
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs,
            static_cast<int32_t>(n.y * width_ + n.x + 1));
  return sizeof(r);
}

} // namespace efu::example
