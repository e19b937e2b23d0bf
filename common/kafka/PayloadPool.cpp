// SPDX-License-Identifier: BSD-2-Clause
// Reused copies of large Kafka payloads.
#include "common/kafka/PayloadPool.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace efu::kafka {

struct PayloadPool::Block {
  Block *prev;
  Block *next;
  size_t capacity; ///< payload bytes this block holds; the bytes follow the header
};

namespace {
constexpr size_t kPage = 4096;
constexpr size_t kHeader = (sizeof(PayloadPool::Block) + 63) / 64 * 64; // the payload aligned

size_t capacityFor(size_t bytes) noexcept {
  const size_t wanted = bytes + bytes / 8 + kHeader;
  return (wanted + kPage - 1) / kPage * kPage - kHeader;
}
} // namespace

PayloadPool::PayloadPool(size_t spareLimitBytes, size_t minPayloadBytes)
    : spareLimit_(spareLimitBytes) {
  spares_.reserve(spareLimitBytes / (minPayloadBytes == 0 ? 1 : minPayloadBytes) + 1);
}

PayloadPool::~PayloadPool() {
  for (Block *b : spares_) {
    std::free(b);
  }
  while (lentHead_ != nullptr) {
    Block *next = lentHead_->next;
    std::free(lentHead_);
    lentHead_ = next;
  }
}

uint8_t *PayloadPool::data(Block *block) noexcept {
  return reinterpret_cast<uint8_t *>(block) + kHeader;
}

PayloadPool::Block *PayloadPool::take(std::span<const uint8_t> payload) noexcept {
  Block *block = take(payload.size());
  if (block != nullptr) {
    std::memcpy(data(block), payload.data(), payload.size());
  }
  return block;
}

PayloadPool::Block *PayloadPool::take(size_t size) noexcept {
  Block *block = nullptr;
  // The most recently returned fitting spare (its pages are the likeliest still in cache).
  for (size_t i = spares_.size(); i-- > 0;) {
    Block *s = spares_[i];
    if (s->capacity >= size && s->capacity / 2 <= size) {
      block = s;
      spares_[i] = spares_.back();
      spares_.pop_back();
      spareBytes_ -= s->capacity;
      break;
    }
  }
  if (block == nullptr) {
    const size_t capacity = capacityFor(size);
    void *memory = std::malloc(kHeader + capacity);
    if (memory == nullptr) {
      return nullptr;
    }
    block = new (memory) Block{nullptr, nullptr, capacity};
    ++allocations_;
  }
  block->prev = nullptr;
  block->next = lentHead_;
  if (lentHead_ != nullptr) {
    lentHead_->prev = block;
  }
  lentHead_ = block;
  ++lent_;
  return block;
}

void PayloadPool::give(Block *block) noexcept {
  if (block->prev != nullptr) {
    block->prev->next = block->next;
  } else {
    lentHead_ = block->next;
  }
  if (block->next != nullptr) {
    block->next->prev = block->prev;
  }
  --lent_;
  if (spareBytes_ + block->capacity <= spareLimit_) {
    try {
      spares_.push_back(block);
      spareBytes_ += block->capacity;
      return;
    } catch (...) {
      // no room to remember it: free it below
    }
  }
  std::free(block);
}

} // namespace efu::kafka
