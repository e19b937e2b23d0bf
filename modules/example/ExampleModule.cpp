// SPDX-License-Identifier: BSD-2-Clause
#include "modules/example/ExampleModule.h"

#include <cstring>

namespace efu::example {

ExampleConfig::ExampleConfig(const nlohmann::json &config, const std::string &source)
    : detectorType(config.at("detector_type").get<uint8_t>()),
      width(config.at("width").get<uint32_t>()), height(config.at("height").get<uint32_t>()),
      maxTofNs(config.at("max_tof_ns").get<int64_t>()) {
  (void)source; // every check is in the key table; a module with cross-key rules names it here
}

ExampleCounters::ExampleCounters(sdk::ModuleContext &ctx)
    : readouts(ctx.counter("readouts.count")), size(ctx.counter("readouts.errors.size")),
      position(ctx.counter("readouts.errors.position")), events(ctx.counter("events.count")) {}

ExampleModule::ExampleModule(sdk::ModuleContext &ctx)
    : config_(ctx.config(), ctx.configSource()), events_(ctx.events()), headerCounters_(ctx),
      tofCounters_(ctx), counters_(ctx),
      parser_(headerCounters_, readout::DetectorTypes{config_.detectorType}),
      tof_(tofCounters_, config_.maxTofNs) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
}

void ExampleModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h; // 1. the ESS header: checked, counted, sequence-tracked by the SDK
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  while (left >= sizeof(ExampleReadout)) { // 2. the readouts: count every refusal by reason
    ExampleReadout r;
    std::memcpy(&r, p, sizeof(r)); // unaligned-safe
    p += sizeof(r);
    left -= sizeof(r);
    counters_.readouts.add();
    if (r.x >= config_.width || r.y >= config_.height) {
      counters_.position.add();
      continue;
    }
    readout::Tof tof; // 3. time of flight against the pulse (or the previous pulse)
    if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, tof)) {
      continue; // counted by the TofCalculator
    }
    events_.add(tof.pulseTimeNs, tof.tofNs, static_cast<int32_t>(r.y * config_.width + r.x + 1));
    counters_.events.add();
  }
  if (left != 0) {
    counters_.size.add(); // a readout cut short: counted, never guessed
  }
}

} // namespace efu::example
