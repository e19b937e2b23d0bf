// SPDX-License-Identifier: BSD-2-Clause
// Integer division by a divisor known ahead of the readouts, as a multiply and a shift: the
// histogram's bin (TOF / bin width) and the IBM normalisation (ADC / MCASum) of every readout
// otherwise each cost a hardware division.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace efu::cbm {

/// floor(n / d) for every 0 <= n < 2^31 and 1 <= d < 2^31, by the round-up method: with
/// l = ceil(log2 d), s = 31 + l and m = ceil(2^s / d) = (2^s + e) / d (0 <= e < d <= 2^l),
/// n·m / 2^s = n / d + n·e / (d·2^s), and the second term is below n / (d·2^31) < 1 / d, too
/// little to carry n / d past the next integer. n·m stays below 2^63 + 2^31.
class Divider {
public:
  constexpr Divider() noexcept : Divider(1) {}
  constexpr explicit Divider(uint32_t d) noexcept
      : shift_(31U + static_cast<unsigned>(std::bit_width(d - 1U))),
        multiplier_(((uint64_t{1} << shift_) + d - 1U) / d) {}
  [[nodiscard]] constexpr uint32_t operator()(uint32_t n) const noexcept {
    return static_cast<uint32_t>((n * multiplier_) >> shift_);
  }

private:
  unsigned shift_;
  uint64_t multiplier_;
};

/// Dividers by 1..255 (index 0 unused: divides by 1), for the IBM MCASum.
inline constexpr std::array<Divider, 256> kByteDividers = [] {
  std::array<Divider, 256> t{};
  for (uint32_t d = 1; d < 256; ++d) {
    t[d] = Divider(d);
  }
  return t;
}();

} // namespace efu::cbm
