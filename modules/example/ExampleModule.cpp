// SPDX-License-Identifier: BSD-2-Clause
// The smallest useful module: datagrams of (pixel, tof) pairs become events. See docs/modules.md.
#include "common/sdk/Module.h"

#include <cstring>
#include <iterator>

namespace efu::example {

/// Configuration keys: validated by the daemon before the constructor runs.
const EfuConfigKey kKeys[] = {
    {"max_pixel", sdk::ConfigType::Integer, "1024", "Largest valid pixel id", 1, 2147483647},
    {"max_tof_ns", sdk::ConfigType::Integer, "71428571",
     "Largest valid time of flight in ns (default: one 14 Hz pulse period)", 0, 2147483647},
};

namespace {

/// Wire format: a sequence of little-endian {u32 pixel, u32 tofNs} pairs.
struct Pair {
  uint32_t pixel;
  uint32_t tofNs;
};
static_assert(sizeof(Pair) == 8);

class ExampleModule final : public sdk::Module {
public:
  explicit ExampleModule(sdk::ModuleContext &ctx)
      : events_(ctx.events()), maxPixel_(ctx.config().at("max_pixel").get<uint32_t>()),
        maxTofNs_(ctx.config().at("max_tof_ns").get<uint32_t>()),
        readouts_(ctx.counter("readouts.count")), accepted_(ctx.counter("events.count")),
        badSize_(ctx.counter("readouts.errors.size")),
        badPixel_(ctx.counter("readouts.errors.pixel")),
        badTof_(ctx.counter("readouts.errors.tof")) {}

  void process(const sdk::Packet &packet) noexcept override {
    if (packet.size % sizeof(Pair) != 0) {
      badSize_.add(); // a whole datagram rejected: count it, never guess
      return;
    }
    readouts_.add(packet.size / sizeof(Pair));
    for (uint32_t offset = 0; offset < packet.size; offset += sizeof(Pair)) {
      Pair pair;
      std::memcpy(&pair, packet.data + offset, sizeof(pair)); // unaligned-safe
      if (pair.pixel == 0 || pair.pixel > maxPixel_) {
        badPixel_.add();
      } else if (pair.tofNs > maxTofNs_) {
        badTof_.add();
      } else {
        // The receive time stands in for the pulse time a real readout would carry.
        events_.add(packet.rxTimeNs, static_cast<int32_t>(pair.tofNs),
                    static_cast<int32_t>(pair.pixel));
        accepted_.add();
      }
    }
  }

private:
  sdk::EventSink &events_;
  const uint32_t maxPixel_;
  const uint32_t maxTofNs_;
  Counter &readouts_;
  Counter &accepted_;
  Counter &badSize_;
  Counter &badPixel_;
  Counter &badTof_;
};

} // namespace
} // namespace efu::example

EFU_MODULE(efu::example::ExampleModule, "example", "1.0.0",
           "Minimal example: datagrams of (u32 pixel, u32 tof ns) pairs become events",
           efu::example::kKeys,
           std::size(efu::example::kKeys))
