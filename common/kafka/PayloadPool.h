// SPDX-License-Identifier: BSD-2-Clause
// Reused copies of large Kafka payloads: no new memory mapped per message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace efu::kafka {

/// Blocks that hold a copy of one large message payload while librdkafka sends it.
///
/// Why: librdkafka's RD_KAFKA_MSG_F_COPY allocates every copy afresh. A copy of 128 KiB or more
/// (an ev44 message of a busy pulse) is mapped on its own by glibc, which efu keeps so (see
/// efu/main.cpp) to hand memory back after a broker outage; each message then costs an mmap, a
/// page fault per 4 KiB and an munmap. At LoKI's link rate that was a third of the Kafka path's
/// cost. Here a message is handed over without F_COPY, pointing into a block that its delivery
/// report gives back for the next message: steady publishing maps and faults in nothing.
///
/// Spare blocks are kept up to `spareLimitBytes`; beyond that a returned block is freed at once,
/// so what buffered a broker outage goes back to the machine when the queue drains. A block is
/// sized with an eighth of headroom so that the next, slightly larger message of the same kind
/// fits it; a spare block serves payloads of half its capacity up to its capacity.
///
/// Thread rules: one thread (the producing thread: take() in produce, give() in the delivery
/// reports that librdkafka serves on it). The destructor frees every block, also those still
/// lent, so destroy the pool after the librdkafka handle that may point into them.
class PayloadPool {
public:
  struct Block;

  /// spareLimitBytes: spare blocks kept at most; minPayloadBytes: the smallest payload the
  /// caller pools (sizes the list of spares once, so give() does not allocate).
  PayloadPool(size_t spareLimitBytes, size_t minPayloadBytes);
  ~PayloadPool();
  PayloadPool(const PayloadPool &) = delete;
  PayloadPool &operator=(const PayloadPool &) = delete;

  /// A block for `bytes` bytes of payload, to be written at data() (lent until give()), or
  /// nullptr when out of memory.
  [[nodiscard]] Block *take(size_t bytes) noexcept;
  /// A block holding a copy of `payload` (lent until give()), or nullptr when out of memory.
  [[nodiscard]] Block *take(std::span<const uint8_t> payload) noexcept;
  /// The payload's bytes (aligned as malloc aligns: at least 8 bytes).
  [[nodiscard]] static uint8_t *data(Block *block) noexcept;
  /// Returns a block from take(): kept as a spare or freed.
  void give(Block *block) noexcept;

  /// Blocks lent and not given back.
  [[nodiscard]] size_t lent() const noexcept { return lent_; }
  /// Blocks kept for reuse, and their bytes.
  [[nodiscard]] size_t spares() const noexcept { return spares_.size(); }
  [[nodiscard]] size_t spareBytes() const noexcept { return spareBytes_; }
  /// Blocks allocated so far (a take() that found no spare).
  [[nodiscard]] uint64_t allocations() const noexcept { return allocations_; }

private:
  size_t spareLimit_;
  size_t spareBytes_ = 0;
  size_t lent_ = 0;
  uint64_t allocations_ = 0;
  Block *lentHead_ = nullptr; ///< every lent block, doubly linked, for the destructor
  std::vector<Block *> spares_;
};

} // namespace efu::kafka
