// SPDX-License-Identifier: BSD-2-Clause
// Packet-level accounting of a sequence-numbered stream: loss, late arrivals, duplicates, restarts.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace efu {

/// Where the udp module's and the ESS header's accounting differ (the table below).
enum class SequenceRules {
  Exact, ///< udpgen's numbers (modules/udp): late arrivals take back their loss
  Ess,   ///< ESS readout headers (common/readout), as the ESS EFU counts them
};

/// Accounting of one stream of numbers that count up by one per datagram. `Seq` is the width
/// (arithmetic modulo 2^bits: a 32-bit sequence wraps without loss); a bit per number remembers
/// the last `Window` numbers up to the highest seen. A number, compared with the highest so far:
///
/// | the number                           | Exact                             | Ess            |
/// |--------------------------------------|-----------------------------------|----------------|
/// | is the first one                     | starts a run: expected += 1       | same           |
/// | is ahead by d (<= half the space)    | lost += d - 1, expected += d      | same           |
/// | is behind by < Window, received      | duplicates += 1                   | same           |
/// | is behind by < Window, not received  | reordered += 1, lost -= 1         | reordered += 1 |
/// | ... and before the run's first       | reordered += 1, the run grows (1) | reordered += 1 |
/// | is 0, not ahead                      | as any other number               | restart        |
/// | is behind by >= Window               | restart if confirmed (2)          | same           |
///
/// (1) The run starts there: lost and expected grow by the numbers in between.
/// (2) When the next number follows it (is nearer to it than to the old highest); else
///     stale += 1.
///
/// A restart (a sender started afresh) starts a new run at the number: restarts += 1,
/// expected += 1, no loss for the jump, the earlier runs' counts stay. A jump back beyond the
/// window is confirmed by the next number, so a restart shows one datagram late, and a single
/// stray number (a datagram delayed beyond the window, or a corrupt one: an ESS header with
/// sequence number 3e9 among small ones) is only `stale` and leaves the run as it was, instead
/// of starting a run that the next number would leave with billions "lost". Ess alone restarts
/// at once at 0, even within the window (a sender starting again). PER = lost / expected.
/// Single-threaded; no allocation.
template <typename Seq, uint64_t Window, SequenceRules Rules> class SequenceTracker {
  static_assert(std::is_unsigned_v<Seq> && sizeof(Seq) >= 4, "uint32_t or uint64_t numbers");
  static constexpr Seq kHalf = Seq{1} << (std::numeric_limits<Seq>::digits - 1);
  static_assert(Window >= 64 && std::has_single_bit(Window) && Window <= kHalf,
                "a power of two of at least 64, at most half the number space");

public:
  static constexpr uint64_t kWindow = Window;

  /// What one number did (the counters' growth).
  struct Result {
    uint64_t lost = 0;      ///< numbers it skipped (late arrivals take back nothing here)
    uint64_t expected = 0;  ///< growth of expected()
    bool reordered = false; ///< a late arrival, not received before
    bool duplicate = false;
    bool restarted = false; ///< a restart (Exact: the one this number confirmed)
    bool stale = false;     ///< the previous number was stale (a jump back it did not confirm)
  };

  Result add(Seq seq) noexcept {
    const Counts before = counts_;
    track(seq);
    return {counts_.skipped - before.skipped,      counts_.expected - before.expected,
            counts_.reordered != before.reordered, counts_.duplicates != before.duplicates,
            counts_.restarts != before.restarts,   counts_.stale != before.stale};
  }

  /// Numbers never received (Exact: net of late arrivals), summed over runs.
  [[nodiscard]] uint64_t lost() const noexcept {
    return Rules == SequenceRules::Exact ? counts_.skipped - counts_.recovered : counts_.skipped;
  }
  [[nodiscard]] uint64_t expected() const noexcept { return counts_.expected; }
  /// The highest number so far (0 before the first): a late arrival's distance is highest - seq.
  [[nodiscard]] Seq highest() const noexcept { return highest_; }
  [[nodiscard]] uint64_t reordered() const noexcept { return counts_.reordered; }
  [[nodiscard]] uint64_t duplicates() const noexcept { return counts_.duplicates; }
  [[nodiscard]] uint64_t restarts() const noexcept { return counts_.restarts; }
  [[nodiscard]] uint64_t stale() const noexcept { return counts_.stale; }
  /// Packet error ratio: lost / expected (0 before the first number).
  [[nodiscard]] double per() const noexcept {
    return counts_.expected == 0
               ? 0.0
               : static_cast<double>(lost()) / static_cast<double>(counts_.expected);
  }

private:
  struct Counts {
    uint64_t skipped = 0;   ///< numbers jumped over (lost before late arrivals)
    uint64_t recovered = 0; ///< late arrivals into a gap of the run
    uint64_t expected = 0;
    uint64_t reordered = 0;
    uint64_t duplicates = 0;
    uint64_t restarts = 0;
    uint64_t stale = 0;
  };

  void track(Seq seq) noexcept {
    if (!started_) {
      startRun(seq);
      return;
    }
    if (restartPending_) {
      restartPending_ = false;
      const Seq fromCandidate = seq - candidate_;
      const Seq candidateToHighest = highest_ - candidate_;
      if (fromCandidate != 0 && fromCandidate < candidateToHighest &&
          fromCandidate < candidateToHighest - fromCandidate) {
        ++counts_.restarts;
        startRun(candidate_);
      } else {
        ++counts_.stale;
      }
    }
    const Seq ahead = seq - highest_;
    if (ahead != 0 && ahead <= kHalf) {
      advance(seq, ahead);
      return;
    }
    const Seq behind = highest_ - seq;
    if (Rules == SequenceRules::Ess && seq == 0) {
      ++counts_.restarts;
      startRun(seq);
      return;
    }
    if (behind >= Window) {
      restartPending_ = true;
      candidate_ = seq;
      return;
    }
    if (behind > span_) { // before the first number of the run
      ++counts_.reordered;
      if constexpr (Rules == SequenceRules::Exact) {
        counts_.skipped += behind - span_ - 1;
        counts_.expected += behind - span_;
        for (Seq n = seq + 1; n != static_cast<Seq>(highest_ - span_); ++n) {
          clear(n);
        }
        span_ = behind;
      }
      set(seq);
      return;
    }
    if (test(seq)) {
      ++counts_.duplicates;
      return;
    }
    set(seq);
    ++counts_.reordered;
    ++counts_.recovered; // it was counted when the gap opened
  }

  void advance(Seq seq, Seq ahead) noexcept {
    const Seq gap = ahead - 1;
    counts_.skipped += gap;
    counts_.expected += ahead;
    if (gap >= Window) {
      bits_.fill(0);
    } else {
      for (Seq n = highest_ + 1; n != seq; ++n) {
        clear(n);
      }
    }
    set(seq);
    highest_ = seq;
    span_ = ahead >= Window - span_ ? Window : span_ + ahead;
  }

  void startRun(Seq seq) noexcept {
    bits_.fill(0);
    highest_ = seq;
    span_ = 0;
    set(seq);
    ++counts_.expected;
    started_ = true;
  }

  [[nodiscard]] bool test(Seq seq) const noexcept {
    return (bits_[(seq % Window) / 64] >> (seq % 64)) & 1U;
  }
  void set(Seq seq) noexcept { bits_[(seq % Window) / 64] |= uint64_t{1} << (seq % 64); }
  void clear(Seq seq) noexcept { bits_[(seq % Window) / 64] &= ~(uint64_t{1} << (seq % 64)); }

  Counts counts_;
  bool started_ = false;
  bool restartPending_ = false;
  Seq highest_ = 0;
  Seq candidate_ = 0; ///< the number beyond the window that the next one may confirm
  uint64_t span_ = 0; ///< highest - first of the run, at most Window
  std::array<uint64_t, Window / 64> bits_{}; ///< bit (n % Window) set: n was received
};

/// udpgen's datagram numbers (modules/udp; docs/wire-formats.md §1).
using UdpSequenceTracker = SequenceTracker<uint64_t, 65536, SequenceRules::Exact>;
/// One output queue's ESS readout header sequence (common/readout; docs/wire-formats.md §2).
using EssSequenceTracker = SequenceTracker<uint32_t, 1024, SequenceRules::Ess>;

} // namespace efu
