// SPDX-License-Identifier: BSD-2-Clause
// efu-view's time-of-flight bins: the bin width, and a division by it without a divide
// instruction (the ev44 loop bins tens of millions of events a second).
#pragma once

#include <bit>
#include <cstdint>

namespace efu::tools::view {

/// Width of one of `bins` bins over [0, maxNs): rounded up, so that `bins` bins cover the range
/// (the last may reach beyond maxNs; events at or beyond maxNs are counted as above the range).
constexpr int64_t tofBinWidth(int64_t maxNs, uint32_t bins) noexcept {
  return bins == 0 || maxNs <= 0 ? 1 : (maxNs + bins - 1) / bins;
}

/// floor(t / divisor) for every t in [0, 2^31) (an ev44 time_of_flight that is not negative),
/// as one multiplication and one shift: with l = ceil(log2(divisor)) and
/// m = floor(2^(31 + l) / divisor) + 1, t * m / 2^(31 + l) = t / divisor + e with
/// 0 <= e < t / 2^(31 + l) < 2^-l <= 1 / divisor, too little to reach the next integer.
/// t * m < 2^31 * (2^32 + 1) fits in 64 bits. Divisors of 2^31 and more give 0.
class TofDivider {
public:
  constexpr explicit TofDivider(int64_t divisor) noexcept {
    if (divisor >= (int64_t{1} << 31)) {
      return; // every t < 2^31 is below it: multiplier 0
    }
    const auto d = static_cast<uint64_t>(divisor < 1 ? 1 : divisor);
    const int l = std::bit_width(d - 1); // ceil(log2(d)); 0 for d = 1
    shift_ = 31 + l;
    multiplier_ = (uint64_t{1} << shift_) / d + 1;
  }
  [[nodiscard]] constexpr uint32_t operator()(int32_t t) const noexcept {
    return static_cast<uint32_t>((static_cast<uint64_t>(t) * multiplier_) >> shift_);
  }

private:
  uint64_t multiplier_ = 0;
  int shift_ = 0;
};

} // namespace efu::tools::view
