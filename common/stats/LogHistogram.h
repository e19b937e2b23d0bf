// SPDX-License-Identifier: BSD-2-Clause
// A fixed-size histogram of non-negative integers in log-spaced bins (powers of two, 8 sub-bins).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace efu {

/// Counts of uint64 values in bins: 0..15 one bin per value (exact), then each power of two
/// [2^e, 2^(e+1)) split into 8 equal sub-bins (a bin is at most 1/8 of its lower bound wide).
/// 496 bins (4 KiB), all in the object: no allocation, add() is a few instructions.
/// Percentiles are the lower bound of the bin holding them (exact below 16, else at most 12.5 %
/// low); max() is exact. Single writer; copy it to read it elsewhere.
class LogHistogram {
public:
  static constexpr uint32_t kSubBits = 3;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  static constexpr uint32_t kBins = (64 - kSubBits + 1) * kSub;

  /// The bin of a value.
  static constexpr uint32_t binOf(uint64_t v) noexcept {
    if (v < 2 * kSub) {
      return static_cast<uint32_t>(v);
    }
    const auto e = static_cast<uint32_t>(std::bit_width(v) - 1); // >= kSubBits + 1
    const uint64_t sub = (v >> (e - kSubBits)) & (kSub - 1);
    return static_cast<uint32_t>((e - kSubBits + 1) * kSub + sub);
  }
  /// The smallest value of a bin.
  static constexpr uint64_t lowerBound(uint32_t bin) noexcept {
    if (bin < 2 * kSub) {
      return bin;
    }
    const uint32_t k = bin / kSub; // >= 2
    return (kSub + bin % kSub) << (k - 1);
  }

  void add(uint64_t v, uint64_t n = 1) noexcept {
    bins_[binOf(v)] += n;
    count_ += n;
    max_ = v > max_ ? v : max_;
  }
  /// Adds the counts of `other` (an interval's histogram into the running total).
  void merge(const LogHistogram &other) noexcept {
    for (uint32_t i = 0; i < kBins; ++i) {
      bins_[i] += other.bins_[i];
    }
    count_ += other.count_;
    max_ = other.max_ > max_ ? other.max_ : max_;
  }
  void clear() noexcept { *this = LogHistogram{}; }

  [[nodiscard]] uint64_t count() const noexcept { return count_; }
  [[nodiscard]] uint64_t max() const noexcept { return max_; }
  [[nodiscard]] uint64_t bin(uint32_t i) const noexcept { return bins_[i]; }
  /// The lower bound of the bin holding the value with rank ceil(q * count) (q in [0, 1]);
  /// 0 when empty.
  [[nodiscard]] uint64_t percentile(double q) const noexcept {
    if (count_ == 0) {
      return 0;
    }
    auto rank = static_cast<uint64_t>(q * static_cast<double>(count_) + 0.999999);
    rank = rank == 0 ? 1 : rank;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < kBins; ++i) {
      seen += bins_[i];
      if (seen >= rank) {
        return lowerBound(i);
      }
    }
    return max_;
  }

private:
  std::array<uint64_t, kBins> bins_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

} // namespace efu
