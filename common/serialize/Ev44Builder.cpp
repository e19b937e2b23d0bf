// SPDX-License-Identifier: BSD-2-Clause
// Reusable ev44 builder.
#include "common/serialize/Ev44Builder.h"

#include "schemas/ev44_generated.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace efu::serialize {

namespace {
// Root offset, file identifier, table, vtable, vector length prefixes and alignment padding.
constexpr size_t kEv44OverheadBytes = 256;
} // namespace

size_t Ev44Builder::maxMessageBytes(size_t maxEvents, size_t maxPulses,
                                    size_t sourceNameBytes) noexcept {
  if (maxPulses == 0) {
    maxPulses = maxEvents;
  }
  return maxEvents * (sizeof(int32_t) + sizeof(int32_t)) +
         maxPulses * (sizeof(int64_t) + sizeof(int32_t)) + sourceNameBytes + kEv44OverheadBytes;
}

Ev44Builder::Ev44Builder(size_t maxEvents, size_t maxPulses)
    : maxEvents_(maxEvents), maxPulses_(maxPulses == 0 ? maxEvents : maxPulses), fbb_(1024) {
  if (maxEvents_ == 0 || maxEvents_ > static_cast<size_t>(INT32_MAX)) {
    throw std::invalid_argument("ev44: events per message must be in 1.." +
                                std::to_string(INT32_MAX) + ", got " + std::to_string(maxEvents));
  }
  if (maxPulses_ > maxEvents_) {
    throw std::invalid_argument("ev44: pulses per message (" + std::to_string(maxPulses_) +
                                ") cannot exceed events per message (" +
                                std::to_string(maxEvents_) + ")");
  }
  referenceTime_ = std::make_unique<int64_t[]>(maxPulses_);
  referenceIndex_ = std::make_unique<int32_t[]>(maxPulses_);
  timeOfFlight_ = std::make_unique<int32_t[]>(maxEvents_);
  pixelId_ = std::make_unique<int32_t[]>(maxEvents_);
  reserveBuffer();
}

void Ev44Builder::reserveBuffer() {
  flatbuffers::FlatBufferBuilder sized(maxMessageBytes(maxEvents_, maxPulses_, source_.size()) +
                                       1024);
  // message_id 0 is written too, so every field is present for layout-reading consumers.
  sized.ForceDefaults(true);
  fbb_.Swap(sized);
  // flatbuffers allocates lazily: serialise one empty message now so finish() never allocates.
  const size_t events = events_;
  const size_t pulses = pulses_;
  events_ = 0;
  pulses_ = 0;
  (void)finish(0);
  fbb_.Clear();
  events_ = events;
  pulses_ = pulses;
}

void Ev44Builder::setSource(std::string sourceName) {
  source_ = std::move(sourceName);
  // The buffer must cover the worst case including the new source name.
  reserveBuffer();
}

std::span<const uint8_t> Ev44Builder::finish(int64_t messageId) noexcept {
  fbb_.Clear();
  // Children are written back to front before the table that refers to them.
  const auto pixels = fbb_.CreateVector(pixelId_.get(), events_);
  const auto tofs = fbb_.CreateVector(timeOfFlight_.get(), events_);
  const auto indices = fbb_.CreateVector(referenceIndex_.get(), pulses_);
  const auto times = fbb_.CreateVector(referenceTime_.get(), pulses_);
  const auto source = fbb_.CreateString(source_);
  fb::Event44MessageBuilder message(fbb_);
  message.add_source_name(source);
  message.add_message_id(messageId);
  message.add_reference_time(times);
  message.add_reference_time_index(indices);
  message.add_time_of_flight(tofs);
  message.add_pixel_id(pixels);
  fbb_.Finish(message.Finish(), fb::Event44MessageIdentifier());
  events_ = 0;
  pulses_ = 0;
  return {fbb_.GetBufferPointer(), fbb_.GetSize()};
}

} // namespace efu::serialize
