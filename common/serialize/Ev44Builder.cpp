// SPDX-License-Identifier: BSD-2-Clause
// Reusable ev44 builder: the flatbuffer written front to back in one fixed layout.
#include "common/serialize/Ev44Builder.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace efu::serialize {

namespace {

static_assert(std::endian::native == std::endian::little, "flatbuffers are little-endian");

// Root offset, file identifier, table, vtable, vector length prefixes and alignment padding.
constexpr size_t kEv44OverheadBytes = 256;

// The fixed part (offsets from the start of the message):
//   0  u32 offset of the table (24)            4  file identifier "ev44"
//   8  vtable: u16 its size (16), u16 the table's size (36), then per field slot 0..5 the
//      field's offset within the table: source_name 16, message_id 8, reference_time 20,
//      reference_time_index 24, time_of_flight 28, pixel_id 32
//  24  table: i32 table - vtable (16), 4 bytes padding, i64 message_id (8-aligned), then the
//      u32 offsets (from the field to the target) of the five strings and vectors
//  60  source_name: u32 length, the bytes, a NUL, padding to 4 (and to 8 + 4: the next
//      vector's int64 elements are 8-aligned), then reference_time, reference_time_index,
//      time_of_flight, pixel_id: each a u32 length and the elements.
constexpr uint32_t kTable = 24;
constexpr uint32_t kVtable = 8;
constexpr uint16_t kVtableBytes = 16;
constexpr uint16_t kTableBytes = 36;
constexpr uint16_t kFieldOffset[6] = {16, 8, 20, 24, 28, 32}; // by field slot
constexpr uint32_t kSource = kTable + kTableBytes;

struct Layout {
  size_t times;   // reference_time's length prefix
  size_t indices; // reference_time_index's
  size_t tofs;    // time_of_flight's
  size_t pixels;  // pixel_id's
  size_t end;     // the message's size
};

Layout layoutOf(size_t sourceBytes, size_t pulses, size_t events) noexcept {
  Layout l{};
  l.times = (kSource + 4 + sourceBytes + 1 + 3) / 4 * 4;
  if (l.times % 8 == 0) {
    l.times += 4; // the elements after the 4-byte length start 8-aligned
  }
  l.indices = l.times + 4 + 8 * pulses;
  l.tofs = l.indices + 4 + 4 * pulses;
  l.pixels = l.tofs + 4 + 4 * events;
  l.end = l.pixels + 4 + 4 * events;
  return l;
}

void put16(uint8_t *out, size_t at, uint16_t value) noexcept {
  std::memcpy(out + at, &value, sizeof value);
}
void put32(uint8_t *out, size_t at, uint32_t value) noexcept {
  std::memcpy(out + at, &value, sizeof value);
}
/// The offset field of table slot `slot` pointing at `target`.
void putOffset(uint8_t *out, int slot, size_t target) noexcept {
  const size_t field = kTable + kFieldOffset[slot];
  put32(out, field, static_cast<uint32_t>(target - field));
}
/// A vector: its length, then `count` elements of `elementBytes` from `elements`.
void putVector(uint8_t *out, size_t at, const void *elements, size_t count,
               size_t elementBytes) noexcept {
  put32(out, at, static_cast<uint32_t>(count));
  if (count > 0) {
    std::memcpy(out + at + 4, elements, count * elementBytes);
  }
}

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
    : maxEvents_(maxEvents), maxPulses_(maxPulses == 0 ? maxEvents : maxPulses) {
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
}

void Ev44Builder::setSource(std::string sourceName) {
  source_ = std::move(sourceName);
}

size_t Ev44Builder::messageBytes() const noexcept {
  return layoutOf(source_.size(), pulses_, events_).end;
}

void Ev44Builder::finishInto(int64_t messageId, std::span<uint8_t> out) noexcept {
  const Layout l = layoutOf(source_.size(), pulses_, events_);
  uint8_t *m = out.data();
  put32(m, 0, kTable);
  std::memcpy(m + 4, "ev44", 4);
  put16(m, kVtable, kVtableBytes);
  put16(m, kVtable + 2, kTableBytes);
  for (int slot = 0; slot < 6; ++slot) {
    put16(m, kVtable + 4 + 2 * slot, kFieldOffset[slot]);
  }
  put32(m, kTable, kTable - kVtable); // a table finds its vtable at table - this
  put32(m, kTable + 4, 0);
  std::memcpy(m + kTable + kFieldOffset[1], &messageId, sizeof messageId);
  putOffset(m, 0, kSource);
  putOffset(m, 2, l.times);
  putOffset(m, 3, l.indices);
  putOffset(m, 4, l.tofs);
  putOffset(m, 5, l.pixels);
  putVector(m, kSource, source_.data(), source_.size(), 1);
  // The NUL and the padding up to reference_time, so no byte of the message is left unset.
  std::memset(m + kSource + 4 + source_.size(), 0, l.times - (kSource + 4 + source_.size()));
  putVector(m, l.times, referenceTime_.get(), pulses_, sizeof(int64_t));
  putVector(m, l.indices, referenceIndex_.get(), pulses_, sizeof(int32_t));
  putVector(m, l.tofs, timeOfFlight_.get(), events_, sizeof(int32_t));
  putVector(m, l.pixels, pixelId_.get(), events_, sizeof(int32_t));
  events_ = 0;
  pulses_ = 0;
}

} // namespace efu::serialize
