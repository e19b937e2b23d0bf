// SPDX-License-Identifier: BSD-2-Clause
// Raw readout sampling to ar51.
#include "common/kafka/RawSampler.h"

#include "common/serialize/Ar51.h"

#include <algorithm>

namespace efu::kafka {

RawSampler::RawSampler(Producer &producer, std::string topic, std::string sourceName,
                       uint32_t every, uint32_t consecutive, Stats &stats)
    : producer_(producer), topic_(std::move(topic)), sourceName_(std::move(sourceName)),
      every_(every), consecutive_(every == 0 ? 0 : std::clamp<uint32_t>(consecutive, 1, every)),
      fbb_(16 * 1024), messages_(stats.add("kafka.ar51.messages")),
      dropped_(stats.add("kafka.ar51.dropped")) {}

void RawSampler::send(std::span<const uint8_t> datagram) noexcept {
  try {
    const auto bytes = serialize::buildAr51(fbb_, sourceName_, messageId_, datagram);
    // message_id advances for dropped samples too: a consumer sees the gap.
    ++messageId_;
    if (producer_.tryProduce(topic_, bytes, 0)) {
      messages_.add();
    } else {
      dropped_.add();
    }
  } catch (...) {
    dropped_.add(); // the builder could not grow: out of memory
  }
}

} // namespace efu::kafka
