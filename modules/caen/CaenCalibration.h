// SPDX-License-Identifier: BSD-2-Clause
// The ESS charge-division calibration of the caen module (efu --calibration FILE): which straw
// of a group a readout is on, and the correction of its position along the straw.
#pragma once

#include <cstddef>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu::caen {

/// The ESS CDCalibration file (modules/caen/README.md, Calibration):
/// {"Calibration": {"instrument": NAME, "groups": G, "groupsize": U, "Parameters": [
///   {"groupindex": i, "intervals": [[lo, hi] x U], "polynomials": [[a, b, c, d] x U]} x G]}}
/// For group i, the straw coordinate s selects the first unit whose interval holds s (ends
/// included, either order); that unit's polynomial corrects the position p:
/// corrected = p - (a + b p + c p^2 + d p^3), clamped to [0, 1].
class CaenCalibration {
public:
  /// Checks the file as the ESS EFU does: instrument equal to `detector`, one entry per group
  /// in index order, U intervals inside [0, 1] that do not overlap (nor touch within 1e-5), U
  /// polynomials of 4 coefficients. Throws sdk::ConfigError naming `source`, the key path (e.g.
  /// Calibration.Parameters[3].intervals[1]) and the value.
  CaenCalibration(const nlohmann::json &calibration, const std::string &source,
                  const std::string &detector);

  /// A calibration of `groups` groups, each with `intervals` and no position correction: what
  /// the ESS EFU's nullcalib.py writes (e.g. lokinullcalib.json: 7 straw intervals [0, 0.143],
  /// [0.144, 0.286], ..., [0.858, 1]).
  static CaenCalibration null(uint32_t groups,
                              std::span<const std::pair<double, double>> intervals);

  static constexpr int kGroupBeyond = -2; ///< unit(): group not in the file
  static constexpr int kOutside = -1;     ///< unit(): s in none of the group's intervals

  /// The unit of straw coordinate `s` in group `group`, or kGroupBeyond / kOutside. The
  /// intervals do not overlap, so the one holding s is the first of the file's order too; it is
  /// found among the group's intervals sorted by their lower ends without a data-dependent
  /// branch per interval (hot path).
  [[nodiscard]] int unit(uint32_t group, double s) const noexcept {
    if (group >= groups_) {
      return kGroupBeyond;
    }
    const size_t first = static_cast<size_t>(group) * unitsPerGroup_;
    const double *lo = sortedLo_.data() + first;
    uint32_t below = 0; // intervals starting at or below s
    for (uint32_t k = 0; k < unitsPerGroup_; ++k) {
      below += s >= lo[k] ? 1U : 0U;
    }
    if (below == 0 || s > sortedHi_[first + below - 1]) {
      return kOutside;
    }
    return sortedUnit_[first + below - 1];
  }

  /// The correction of `p` for (group, unit) before clamping: may leave [0, 1].
  [[nodiscard]] double corrected(uint32_t group, uint32_t unit, double p) const noexcept {
    return corrected(polynomials_[static_cast<size_t>(group) * unitsPerGroup_ + unit], p);
  }

  /// Where `p` lies in (group, unit)'s interval as the file writes it, first end 0, second end
  /// 1 (a reversed interval counts from its upper end): (p - first) / (second - first).
  [[nodiscard]] double withinInterval(uint32_t group, uint32_t unit, double p) const noexcept {
    const Interval &u = intervals_[static_cast<size_t>(group) * unitsPerGroup_ + unit];
    return (p - u.first) / (u.second - u.first);
  }
  /// The inverse of withinInterval(), for generators.
  [[nodiscard]] double fromInterval(uint32_t group, uint32_t unit, double r) const noexcept {
    const Interval &u = intervals_[static_cast<size_t>(group) * unitsPerGroup_ + unit];
    return u.first + r * (u.second - u.first);
  }

  /// The middle of (group, unit)'s interval, for generators.
  [[nodiscard]] double middle(uint32_t group, uint32_t unit) const noexcept {
    const Interval &u = intervals_[static_cast<size_t>(group) * unitsPerGroup_ + unit];
    return 0.5 * (u.lo + u.hi);
  }

  [[nodiscard]] uint32_t groups() const noexcept { return groups_; }
  [[nodiscard]] uint32_t unitsPerGroup() const noexcept { return unitsPerGroup_; }

  /// 32 bytes a unit: delta = a + b p + c p^2 + d p^3.
  struct Polynomial {
    double a = 0, b = 0, c = 0, d = 0;
  };
  /// A group of seven units (LoKI's straws) in the layout of the LoKI hot path: one 384-byte row
  /// of six cache lines. The first two lines find the unit: the intervals' lower ends in
  /// ascending order (lo[0..6]; they do not overlap, so the upper ends ascend with them), the
  /// upper end of the k-th of them as upper[k + 1] (upper[0] = -inf: no interval), and the
  /// file's index of the k-th as unitOf[k + 1], stored in lo's eighth lane. The polynomials in
  /// the file's order.
  struct alignas(64) SevenUnits {
    double lo[7];
    uint8_t unitOf[8];
    double upper[8];
    Polynomial polynomial[7];
  };
  static_assert(sizeof(SevenUnits) == 384, "six cache lines a group");
  static_assert(offsetof(SevenUnits, unitOf) == 56 && offsetof(SevenUnits, upper) == 64);

  /// The groups as SevenUnits rows (groups() of them), or nullptr when the calibration does not
  /// have 7 units a group.
  [[nodiscard]] const SevenUnits *sevenUnits() const noexcept {
    return seven_.empty() ? nullptr : seven_.data();
  }

  /// unit() for a group of sevenUnits(), the same search without a branch (hot path): the
  /// last interval starting at or below s, if it holds s, or kOutside.
  [[nodiscard]] static int sevenUnit(const SevenUnits &g, double s) noexcept;

  /// corrected() with a unit's polynomial: p - (a + p (b + p (c + p d))), the arithmetic and
  /// order of the ESS EFU's, so the result is the same to the bit.
  [[nodiscard]] static double corrected(const Polynomial &u, double p) noexcept {
    return p - (u.a + p * (u.b + p * (u.c + p * u.d)));
  }

private:
  CaenCalibration() = default;
  struct Interval {
    double lo = 0, hi = 0;        ///< lo <= hi
    double first = 0, second = 0; ///< as the file writes it
  };
  uint32_t groups_ = 0;
  uint32_t unitsPerGroup_ = 0;
  std::vector<Interval> intervals_;     ///< group-major, in the file's order
  std::vector<Polynomial> polynomials_; ///< the same order
  /// Per group, the intervals sorted by lower end: ends and the unit (file index) of each.
  std::vector<double> sortedLo_, sortedHi_;
  std::vector<int> sortedUnit_;
  /// sevenUnits(): empty unless 7 units a group.
  std::vector<SevenUnits> seven_;
  void sortIntervals();
  void buildSevenUnits();
};

inline int CaenCalibration::sevenUnit(const SevenUnits &g, double s) noexcept {
  // k = how many intervals start at or below s (the lower ends ascend, so their lanes are the
  // first k); the k-th of them holds s when s <= its upper end. upper[0] = -inf: k = 0 is none.
#if defined(__SSE2__)
  const __m128d sv = _mm_set1_pd(s);
  // s >= lo as "not s < lo": the same for numbers (no NaN reaches here). Lane 7 holds unitOf:
  // its bit is cleared.
  const int below = _mm_movemask_pd(_mm_cmpge_pd(sv, _mm_load_pd(&g.lo[0]))) |
                    _mm_movemask_pd(_mm_cmpge_pd(sv, _mm_load_pd(&g.lo[2]))) << 2 |
                    _mm_movemask_pd(_mm_cmpge_pd(sv, _mm_load_pd(&g.lo[4]))) << 4 |
                    (_mm_movemask_pd(_mm_cmpge_pd(sv, _mm_load_sd(&g.lo[6]))) & 1) << 6;
  const auto k = static_cast<unsigned>(__builtin_ctz(~static_cast<unsigned>(below)));
#else
  unsigned k = 0;
  for (int i = 0; i < 7; ++i) {
    k += s >= g.lo[i] ? 1U : 0U;
  }
#endif
  return s <= g.upper[k] ? g.unitOf[k] : kOutside;
}

} // namespace efu::caen
