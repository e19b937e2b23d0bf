// SPDX-License-Identifier: BSD-2-Clause
// Wakes a sleeping consumer when producers publish work: a futex, touched only while it sleeps.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace efu {

/// One consumer sleeps, any number of producers ring. The consumer's protocol:
///
///     const uint32_t ticket = bell.prepareWait();
///     if (workAvailable()) bell.cancelWait(); else bell.wait(ticket, timeoutNs);
///
/// and each producer calls ring() after publishing work (e.g. after SpscRing::commit()).
/// ring() costs one locked read-modify-write while the consumer is awake; it makes a system
/// call only when the consumer is (about to be) asleep. No wake-up is lost: both sides do a
/// read-modify-write on `sleeping_`, so one comes first. If ring()'s does, the consumer's
/// acquires everything published before it and its check sees the work; if the consumer's
/// does, ring() sees the sleeper and moves the ticket the consumer waits on. (RMWs rather than
/// fences: the same guarantee, and ThreadSanitizer understands them.) A wait ends on a ring,
/// on the timeout, or spuriously (callers re-check).
class Doorbell {
public:
  Doorbell() = default;
  Doorbell(const Doorbell &) = delete;
  Doorbell &operator=(const Doorbell &) = delete;

  /// Consumer: announce the intention to sleep; then check for work.
  [[nodiscard]] uint32_t prepareWait() noexcept {
    sleeping_.exchange(1, std::memory_order_acq_rel);
    return ticket_.load(std::memory_order_acquire);
  }
  /// Consumer: work was found after prepareWait().
  void cancelWait() noexcept { sleeping_.store(0, std::memory_order_relaxed); }
  /// Consumer: sleeps until ring() moves the ticket, or timeoutNs passes (<= 0: returns at once).
  void wait(uint32_t ticket, int64_t timeoutNs) noexcept {
    if (timeoutNs > 0) {
      const timespec timeout{static_cast<time_t>(timeoutNs / 1'000'000'000),
                             static_cast<long>(timeoutNs % 1'000'000'000)};
      syscall(SYS_futex, futexWord(), FUTEX_WAIT_PRIVATE, ticket, &timeout, nullptr, 0);
    }
    sleeping_.store(0, std::memory_order_relaxed);
  }

  /// Producer: after publishing work.
  void ring() noexcept {
    if (sleeping_.fetch_add(0, std::memory_order_acq_rel) != 0) {
      ticket_.fetch_add(1, std::memory_order_release);
      syscall(SYS_futex, futexWord(), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
    }
  }

private:
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                    std::atomic<uint32_t>::is_always_lock_free,
                "the futex word is the atomic's storage");
  uint32_t *futexWord() noexcept { return reinterpret_cast<uint32_t *>(&ticket_); }

  alignas(64) std::atomic<uint32_t> ticket_{0};
  alignas(64) std::atomic<uint32_t> sleeping_{0};
};

} // namespace efu
