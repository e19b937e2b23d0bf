// SPDX-License-Identifier: BSD-2-Clause
// Messages of a further processing thread, handed to the real producer's thread.
#include "common/kafka/ForwardingProducer.h"

#include "common/time/Time.h"

#include <sched.h>
#include <time.h>

#include <cstring>
#include <new>

namespace efu::kafka {

namespace {
/// A full ring: yield this often, then nap (the ring empties at the owner's next tick, <= 10 ms).
constexpr int kYieldsBeforeNap = 16;
constexpr int64_t kFullNapNs = 50 * kNsPerUs;
} // namespace

ForwardingProducer::ForwardingProducer(size_t slots, size_t maxPayloadBytes)
    : ring_(slots), maxPayloadBytes_(maxPayloadBytes) {
  for (size_t i = 0; i < slots; ++i) {
    ring_.producerSlot(i).topic.reserve(256); // topic names are short: no allocation later
  }
}

ForwardingProducer::Slot *ForwardingProducer::claim(std::string_view topic, size_t bytes,
                                                    int64_t timestampMs, bool wait) noexcept {
  for (int round = 0; ring_.reserve(1) == 0; ++round) {
    if (!wait) {
      return nullptr;
    }
    if (round == 0) {
      fullWaits_.fetch_add(1, std::memory_order_relaxed);
    }
    if (round < kYieldsBeforeNap) {
      sched_yield();
    } else {
      const timespec nap{0, kFullNapNs};
      nanosleep(&nap, nullptr);
    }
  }
  Slot &slot = ring_.producerSlot(0);
  try {
    slot.topic.assign(topic);
    slot.words.resize((bytes + 7) / 8);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
  slot.bytes = bytes;
  slot.timestampMs = timestampMs;
  return &slot;
}

bool ForwardingProducer::put(std::string_view topic, std::span<const uint8_t> payload,
                             int64_t timestampMs, bool wait) noexcept {
  Slot *slot = claim(topic, payload.size(), timestampMs, wait);
  if (slot == nullptr) {
    return false;
  }
  std::memcpy(slot->words.data(), payload.data(), payload.size());
  ring_.commit(1);
  return maxPayloadBytes_ == 0 || payload.size() <= maxPayloadBytes_;
}

bool ForwardingProducer::produce(std::string_view topic, std::span<const uint8_t> payload,
                                 int64_t timestampMs) noexcept {
  return put(topic, payload, timestampMs, true);
}

bool ForwardingProducer::tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                                    int64_t timestampMs) noexcept {
  return put(topic, payload, timestampMs, false);
}

bool ForwardingProducer::produceWritten(std::string_view topic, size_t bytes, PayloadWriter write,
                                        void *context, int64_t timestampMs) noexcept {
  Slot *slot = claim(topic, bytes, timestampMs, true);
  if (slot == nullptr) {
    return false;
  }
  write(context, {reinterpret_cast<uint8_t *>(slot->words.data()), bytes});
  ring_.commit(1);
  return maxPayloadBytes_ == 0 || bytes <= maxPayloadBytes_;
}

int ForwardingProducer::flush(int) { return static_cast<int>(ring_.sizeApprox()); }

size_t ForwardingProducer::forwardTo(Producer &to) noexcept {
  size_t forwarded = 0;
  while (const size_t n = ring_.available(64)) {
    for (size_t i = 0; i < n; ++i) {
      const Slot &slot = ring_.consumerSlot(i);
      (void)to.produce(slot.topic,
                       {reinterpret_cast<const uint8_t *>(slot.words.data()), slot.bytes},
                       slot.timestampMs);
    }
    ring_.release(n);
    forwarded += n;
  }
  return forwarded;
}

} // namespace efu::kafka
