// SPDX-License-Identifier: BSD-2-Clause
// The ESS CAEN geometries: which readouts an instrument accepts and the pixel it gives each,
// as the ESS EFU does (modules/caen/README.md has the formulas). Inline: they are the hot path.
// The library is built with -ffp-contract=off: positions must round as the ESS EFU's arithmetic
// rounds them, without fused multiply-adds.
#pragma once

#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenReadout.h"

#include <array>
#include <cmath>
#include <cstdint>

namespace efu::caen {

/// One datagram's counts of the readout and geometry stages: kept in registers on the hot path
/// and added to the module's counters once per datagram (CaenCounters). kCaenCounters names
/// each field as the ESS EFU names its counter (docs/counters.md).
struct CaenTally {
  int64_t dataHeaders = 0;      ///< readout headers with fiber, FEN ok
  int64_t readouts = 0;         ///< complete 24-byte readouts
  int64_t headerSize = 0;       ///< 1-3 bytes left over
  int64_t lengthMismatch = 0;   ///< length beyond the datagram
  int64_t ringFen = 0;          ///< fiber or FEN > 23
  int64_t lengthInvalid = 0;    ///< length != 24
  int64_t validation = 0;       ///< one of the next six, or ampl_zero
  int64_t ringMapping = 0;      ///< LoKI, no bank on the ring
  int64_t topology = 0;         ///< LoKI, TBL3HE, FEN not in the topology
  int64_t fen = 0;              ///< BIFROST, CSPEC, FEN > MaxFEN
  int64_t group = 0;            ///< BIFROST, CSPEC, TBL3HE, group > MaxGroup
  int64_t amplitudeLow = 0;     ///< TBL3HE, A or B < MinValidAmplitude
  int64_t amplitudeHigh = 0;    ///< BIFROST, A + B > MaxAmpl
  int64_t pixel = 0;            ///< no pixel (the reasons below, or none)
  int64_t amplitudeZero = 0;    ///< A + B (+ C + D for LoKI) == 0
  int64_t positionInvalid = 0;  ///< BIFROST, TBL3HE, A / (A + B) not in [0, 1]
  int64_t unitInvalid = 0;      ///< BIFROST, TBL3HE, no tube (next two)
  int64_t calibrationGroup = 0; ///< group beyond the calibration
  int64_t outsideTube = 0;      ///< coordinate in no interval
  int64_t positionLow = 0;      ///< corrected position below 0, clamped
  int64_t positionHigh = 0;     ///< corrected position above 1, clamped
  int64_t rowInvalid = 0;       ///< LoKI, straw row beyond the image
  int64_t events = 0;           ///< events handed to the event sink
  bool operator==(const CaenTally &) const = default;
};

/// A tally field, its counter's name, and whether it is a stream counter
/// (ModuleContext::streamCounter): what the readout parser counts before a partition picks
/// its readouts, which every partition of the module counts alike.
struct CaenCounterName {
  int64_t CaenTally::*field;
  const char *name;
  bool stream = false;
};
/// Every field of CaenTally with its counter's name, in the order the counters are registered.
inline constexpr std::array kCaenCounters = {
    CaenCounterName{&CaenTally::dataHeaders, "parser.readout.header.count", true},
    CaenCounterName{&CaenTally::readouts, "parser.readout.count", true},
    CaenCounterName{&CaenTally::headerSize, "parser.readout.error_headersize", true},
    CaenCounterName{&CaenTally::lengthMismatch, "parser.readout.error_datlen_mismatch", true},
    CaenCounterName{&CaenTally::ringFen, "parser.readout.error_ringfen", true},
    CaenCounterName{&CaenTally::lengthInvalid, "parser.readout.error_datlen_invalid", true},
    CaenCounterName{&CaenTally::validation, "geometry.validation_errors"},
    CaenCounterName{&CaenTally::ringMapping, "geometry.ring_mapping_errors"},
    CaenCounterName{&CaenTally::topology, "geometry.topology_errors"},
    CaenCounterName{&CaenTally::fen, "geometry.fen_errors"},
    CaenCounterName{&CaenTally::group, "geometry.group_errors"},
    CaenCounterName{&CaenTally::amplitudeLow, "geometry.ampl_low"},
    CaenCounterName{&CaenTally::amplitudeHigh, "geometry.ampl_high"},
    CaenCounterName{&CaenTally::pixel, "geometry.pixel_errors"},
    CaenCounterName{&CaenTally::amplitudeZero, "geometry.ampl_zero"},
    CaenCounterName{&CaenTally::positionInvalid, "geometry.globalpos_invalid"},
    CaenCounterName{&CaenTally::unitInvalid, "geometry.unitid_invalid"},
    CaenCounterName{&CaenTally::calibrationGroup, "geometry.calib_group_errors"},
    CaenCounterName{&CaenTally::outsideTube, "geometry.outside_tube"},
    CaenCounterName{&CaenTally::positionLow, "geometry.pos_low"},
    CaenCounterName{&CaenTally::positionHigh, "geometry.pos_high"},
    CaenCounterName{&CaenTally::rowInvalid, "geometry.row_invalid"},
    CaenCounterName{&CaenTally::events, "events.count"},
};

/// The ESS null calibration of the instrument (what the ESS EFU's <instrument>nullcalib.json
/// holds): LoKI 7 straws per group, BIFROST 3 tubes, MIRACLES 2, CSPEC and TBL3HE 1.
CaenCalibration nullCalibration(const CaenConfig &config);

/// One instrument's geometry with its calibration. Both checks count the reason of a
/// rejection in the tally, the ESS EFU's way.
class CaenGeometry {
public:
  CaenGeometry(CaenConfig config, CaenCalibration calibration)
      : config_(std::move(config)), calibration_(std::move(calibration)),
        seven_(calibration_.sevenUnits()) {
    initLoki();
  }
  CaenGeometry(const CaenGeometry &) = delete; // seven_ points into calibration_
  CaenGeometry &operator=(const CaenGeometry &) = delete;
  CaenGeometry(CaenGeometry &&other) noexcept
      : config_(std::move(other.config_)), calibration_(std::move(other.calibration_)),
        seven_(calibration_.sevenUnits()), lokiFens_(other.lokiFens_),
        lokiScale_(other.lokiScale_) {}
  CaenGeometry &operator=(CaenGeometry &&) = delete;

  /// Calls f.template operator()<I>() with I = config().instrument.
  template <typename F> decltype(auto) visit(F &&f) const {
    switch (config_.instrument) {
    case Instrument::Loki:
      return f.template operator()<Instrument::Loki>();
    case Instrument::Bifrost:
      return f.template operator()<Instrument::Bifrost>();
    case Instrument::Cspec:
      return f.template operator()<Instrument::Cspec>();
    case Instrument::Miracles:
      return f.template operator()<Instrument::Miracles>();
    case Instrument::Tbl3he:
      break;
    }
    return f.template operator()<Instrument::Tbl3he>();
  }
  /// The ring, FEN, group and amplitude checks that come before the time of flight; a failed
  /// one counts its reason and geometry.validation_errors.
  [[nodiscard]] bool valid(const CaenReadout &r, CaenTally &t) const noexcept {
    return visit([&]<Instrument I>() { return validAs<I>(r, t); });
  }
  /// The pixel of a valid readout (1-based), or 0 with geometry.pixel_errors and its reason.
  [[nodiscard]] uint32_t pixel(const CaenReadout &r, CaenTally &t) const noexcept {
    return visit([&]<Instrument I>() { return pixelAs<I>(r, t); });
  }
  /// valid() and pixel() of a known instrument (config().instrument == I), without a branch on
  /// the instrument: the hot path.
  template <Instrument I>
  [[nodiscard]] bool validAs(const CaenReadout &r, CaenTally &t) const noexcept;
  template <Instrument I>
  [[nodiscard]] uint32_t pixelAs(const CaenReadout &r, CaenTally &t) const noexcept;

  [[nodiscard]] const CaenConfig &config() const noexcept { return config_; }
  [[nodiscard]] const CaenCalibration &calibration() const noexcept { return calibration_; }

  /// LoKI in steps, for a loop that takes a block of readouts through the steps in turn (the
  /// readouts of a block are independent, so the processor overlaps their long chains of
  /// dependent steps); lokiPixel() is the five in a row.
  /// 1. The ring check of validAs<Loki>() (ring_mapping_errors, topology_errors counted) and
  ///    the readout's calibration group (LokiGeometry::globalGroup), from one table entry.
  [[nodiscard]] bool lokiValid(const CaenReadout &r, CaenTally &t) const noexcept {
    uint32_t group = 0;
    return lokiValid(r, t, group);
  }
  [[nodiscard]] bool lokiValid(const CaenReadout &r, CaenTally &t, uint32_t &group) const noexcept;
  [[nodiscard]] uint32_t lokiGroup(const CaenReadout &r) const noexcept {
    const LokiFen &f = lokiFens_[r.fiber / 2U][r.fen];
    return static_cast<uint32_t>(f.base) + (r.group % LokiGeometry::kLayers) * f.groupsN +
           r.group / LokiGeometry::kLayers;
  }
  /// 2. The position along the straw (A + B) / sum and the straw coordinate (B + D) / sum of
  ///    ab = A + B, bd = B + D, sum = A + B + C + D != 0 (the firmware swaps A with B and C with
  ///    D: ESS LoKI ICD, as the ESS EFU reads it), in one two-lane division: each lane is the
  ///    IEEE division of its own, the same double as (double)ab / sum and (double)bd / sum.
  struct LokiQuotients {
    double position, straw;
  };
  [[nodiscard]] static LokiQuotients lokiQuotients(int32_t ab, int32_t bd, int32_t sum) noexcept {
    using V = double __attribute__((vector_size(16)));
    const double d = sum;
    const V q = V{static_cast<double>(ab), static_cast<double>(bd)} / V{d, d};
    return {q[0], q[1]};
  }
  /// 3. The straw (unit) of a readout of the group: -1 with the reason counted for a position
  ///    outside [0, 1], a group beyond the calibration or a coordinate in none of its intervals.
  [[nodiscard]] int lokiUnit(uint32_t group, LokiQuotients q, CaenTally &t) const noexcept;
  /// 4. The unit's polynomial correction of the position, clamped to [0, 1] (pos_low,
  ///    pos_high counted).
  [[nodiscard]] double lokiCorrected(uint32_t group, int unit, double position,
                                     CaenTally &t) const noexcept;
  /// 5. The pixel of a corrected position: rounded to Resolution along the straw's row; 0 with
  ///    row_invalid and pixel_errors when the row is not in the image.
  [[nodiscard]] uint32_t lokiPixelAt(uint32_t group, int unit, double corrected,
                                     CaenTally &t) const noexcept;

  /// BIFROST: tubes (triplets) per ring, the calibration group of (ring, group) is
  /// ring x 15 + group; the ESS EFU publishes each triplet under a source name of its own.
  static constexpr uint32_t kBifrostTripletsPerRing = 15;
  /// CSPEC: groups (tube columns) per ring.
  static constexpr uint32_t kCspecGroupsPerRing = 24;
  /// BIFROST and TBL3HE: pixels along a tube.
  static constexpr uint32_t kTubePixels = 100;

  /// MIRACLES' position along a tube pair (the ESS EFU's arithmetic, float and double as it
  /// has them); -1 for A + B = 0.
  [[nodiscard]] int miraclesPosition(int a, int b) const noexcept;

private:
  [[nodiscard]] uint32_t lokiPixel(const CaenReadout &r, CaenTally &t) const noexcept;
  [[nodiscard]] uint32_t bifrostPixel(const CaenReadout &r, CaenTally &t) const noexcept;
  [[nodiscard]] uint32_t cspecPixel(const CaenReadout &r) const noexcept;
  [[nodiscard]] uint32_t miraclesPixel(const CaenReadout &r) const noexcept;
  [[nodiscard]] uint32_t tbl3hePixel(const CaenReadout &r, CaenTally &t) const noexcept;
  /// BIFROST and TBL3HE: the tube (unit) of calibration group `group` that position
  /// A / (A + B) lies in, and that position; false, the reason counted, when A / (A + B) is not
  /// a position or lies in no tube.
  [[nodiscard]] bool tube(uint32_t group, const CaenReadout &r, CaenTally &t, uint32_t &unit,
                          double &position) const noexcept;
  /// LoKI and TBL3HE: a corrected position clamped to [0, 1], a clamp counted.
  static double clamped(double p, CaenTally &t) noexcept;

  /// What LoKI needs of a (ring, FEN), flattened: base = YOffset / 7 + (FENOffset + FEN) x 2
  /// of the ring's bank, or kNoBank / kNoFen.
  struct LokiFen {
    int32_t base = kNoBank;
    uint32_t groupsN = 0;
  };
  static constexpr int32_t kNoBank = -1;
  static constexpr int32_t kNoFen = -2;
  void initLoki() noexcept;

  CaenConfig config_;
  CaenCalibration calibration_;
  const CaenCalibration::SevenUnits *seven_ = nullptr; ///< calibration_.sevenUnits()
  std::array<std::array<LokiFen, readout::kMaxFen + 1>, LokiGeometry::kRings> lokiFens_{};
  double lokiScale_ = 0; ///< Resolution - 1 (as the uint32 it is), the x of position 1
};

namespace detail {
inline bool reject(int64_t &reason, CaenTally &t) noexcept {
  ++reason;
  ++t.validation;
  return false;
}
/// x (an int of the ESS arithmetic) as the ESS logical geometry takes it: a uint32, so a
/// negative coordinate lies outside every image.
inline uint32_t coordinate(int64_t v) noexcept {
  return static_cast<uint32_t>(v);
}
/// Truncation of a double to int as the ESS EFU's conversions do, with NaN and values beyond
/// int (a zero-width interval) mapped outside every image.
inline int64_t truncated(double v) noexcept {
  return v > -2147483648.0 && v < 2147483648.0 ? static_cast<int64_t>(static_cast<int>(v))
                                               : int64_t{-1};
}
} // namespace detail

inline bool CaenGeometry::lokiValid(const CaenReadout &r, CaenTally &t,
                                    uint32_t &group) const noexcept {
  // fiber and FEN <= 23: the readout parser stops larger ones
  const LokiFen &f = lokiFens_[r.fiber / 2U][r.fen];
  if (f.base < 0) {
    return detail::reject(f.base == kNoBank ? t.ringMapping : t.topology, t);
  }
  group = static_cast<uint32_t>(f.base) + (r.group % LokiGeometry::kLayers) * f.groupsN +
          r.group / LokiGeometry::kLayers;
  return true;
}

template <Instrument I>
inline bool CaenGeometry::validAs(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t ring = r.fiber / 2U; // <= 11: the readout parser stops fibers above 23
  const int sum = r.ampA + r.ampB;
  if constexpr (I == Instrument::Loki) {
    return lokiValid(r, t);
  } else if constexpr (I == Instrument::Bifrost) {
    if (r.fen > config_.maxFen) {
      return detail::reject(t.fen, t);
    }
    if (r.group > config_.maxGroup) {
      return detail::reject(t.group, t);
    }
    if (sum == 0) {
      return detail::reject(t.amplitudeZero, t);
    }
    return sum <= config_.maxAmplitude || detail::reject(t.amplitudeHigh, t);
  } else if constexpr (I == Instrument::Cspec) {
    if (r.fen > config_.maxFen) {
      return detail::reject(t.fen, t);
    }
    return r.group <= config_.maxGroup || detail::reject(t.group, t);
  } else if constexpr (I == Instrument::Miracles) {
    return sum != 0 || detail::reject(t.amplitudeZero, t);
  } else {
    if (r.group > config_.maxGroup) {
      return detail::reject(t.group, t);
    }
    if (config_.tbl3he.bank[ring][r.fen] < 0) {
      return detail::reject(t.topology, t);
    }
    if (r.ampA < config_.minAmplitude || r.ampB < config_.minAmplitude) {
      return detail::reject(t.amplitudeLow, t);
    }
    return sum != 0 || detail::reject(t.amplitudeZero, t);
  }
}

template <Instrument I>
inline uint32_t CaenGeometry::pixelAs(const CaenReadout &r, CaenTally &t) const noexcept {
  if constexpr (I == Instrument::Loki) {
    return lokiPixel(r, t); // counts its own
  } else {
    uint32_t p = 0;
    if constexpr (I == Instrument::Bifrost) {
      p = bifrostPixel(r, t);
    } else if constexpr (I == Instrument::Cspec) {
      p = cspecPixel(r);
    } else if constexpr (I == Instrument::Miracles) {
      p = miraclesPixel(r);
    } else {
      p = tbl3hePixel(r, t);
    }
    t.pixel += p == 0 ? 1 : 0;
    return p;
  }
}

inline uint32_t CaenGeometry::lokiPixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t group = lokiGroup(r);
  const int32_t sum = r.ampA + r.ampB + r.ampC + r.ampD;
  if (sum == 0) {
    ++t.amplitudeZero;
    ++t.pixel;
    return 0;
  }
  const LokiQuotients q = lokiQuotients(r.ampA + r.ampB, r.ampB + r.ampD, sum);
  const int unit = lokiUnit(group, q, t);
  if (unit < 0) {
    return 0;
  }
  return lokiPixelAt(group, unit, lokiCorrected(group, unit, q.position, t), t);
}

inline int CaenGeometry::lokiUnit(uint32_t group, LokiQuotients q, CaenTally &t) const noexcept {
  if (q.position < 0.0 || q.position > 1.0) {
    ++t.pixel; // the ESS EFU's LoKI geometry counts no reason of its own here
    return -1;
  }
  const int unit = seven_ != nullptr && group < calibration_.groups()
                       ? CaenCalibration::sevenUnit(seven_[group], q.straw)
                       : calibration_.unit(group, q.straw);
  if (unit < 0) {
    ++(unit == CaenCalibration::kGroupBeyond ? t.calibrationGroup : t.outsideTube);
    ++t.pixel;
    return -1;
  }
  return unit;
}

inline double CaenGeometry::lokiCorrected(uint32_t group, int unit, double position,
                                          CaenTally &t) const noexcept {
  const auto u = static_cast<uint32_t>(unit);
  return clamped(seven_ != nullptr
                     ? CaenCalibration::corrected(seven_[group].polynomial[u], position)
                     : calibration_.corrected(group, u, position),
                 t);
}

inline uint32_t CaenGeometry::lokiPixelAt(uint32_t group, int unit, double corrected,
                                          CaenTally &t) const noexcept {
  // std::round (halves away from zero) for a value in [0, Resolution - 1], without the libm
  // call: the fraction of a non-negative double below 2^52 is exact.
  const double scaled = corrected * lokiScale_;
  const auto whole = static_cast<uint32_t>(scaled);
  const uint32_t x = whole + (scaled - whole >= 0.5 ? 1U : 0U);
  // LokiGeometry::row(): YOffset is a multiple of 7, so the row is 7 x group + unit.
  const uint32_t row = group * LokiGeometry::kUnitsPerGroup + static_cast<uint32_t>(unit);
  const uint32_t pixel = config_.pixel(x, row);
  if (pixel == 0) {
    ++t.rowInvalid;
    ++t.pixel;
  }
  return pixel;
}

inline bool CaenGeometry::tube(uint32_t group, const CaenReadout &r, CaenTally &t, uint32_t &unit,
                               double &position) const noexcept {
  position = 1.0 * r.ampA / (r.ampA + r.ampB); // A + B != 0: valid()
  if (position < 0.0 || position > 1.0) {
    ++t.positionInvalid;
    return false;
  }
  const int u = calibration_.unit(group, position);
  if (u < 0) {
    ++(u == CaenCalibration::kGroupBeyond ? t.calibrationGroup : t.outsideTube);
    ++t.unitInvalid;
    return false;
  }
  unit = static_cast<uint32_t>(u);
  return true;
}

inline double CaenGeometry::clamped(double p, CaenTally &t) noexcept {
  if (p < 0.0) {
    ++t.positionLow;
    return 0.0;
  }
  if (p > 1.0) {
    ++t.positionHigh;
    return 1.0;
  }
  return p;
}

inline uint32_t CaenGeometry::bifrostPixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const int64_t ring = r.fiber / 2U;
  const int64_t group = r.group;
  const auto calibrationGroup = static_cast<uint32_t>(ring * kBifrostTripletsPerRing + group);
  uint32_t unit = 0;
  double position = 0;
  if (!tube(calibrationGroup, r, t, unit, position)) {
    return 0;
  }
  // The position inside the tube's interval, truncated to one of 100 pixels; no polynomial
  // correction (the ESS EFU's BIFROST geometry applies none).
  const double along = calibration_.withinInterval(calibrationGroup, unit, position);
  const int64_t x = ring * config_.resolution + (group % 3) * kTubePixels +
                    detail::truncated(along * (kTubePixels - 1));
  const int64_t y = (group / 3) * 3 + unit;
  return config_.pixel(detail::coordinate(x), detail::coordinate(y));
}

inline uint32_t CaenGeometry::cspecPixel(const CaenReadout &r) const noexcept {
  const int ring = r.fiber / 2U;
  const int resolution = static_cast<int>(config_.resolution);
  const int sum = r.ampA + r.ampB;
  // Integer arithmetic, truncating toward zero, as the ESS EFU computes it.
  const int y = sum == 0 ? -1 : ((resolution - 1) * r.ampA) / sum;
  const int x = ring * resolution + (r.group % static_cast<int>(kCspecGroupsPerRing)) *
                                        (resolution / static_cast<int>(kCspecGroupsPerRing));
  return config_.pixel(detail::coordinate(x), detail::coordinate(y));
}

inline int CaenGeometry::miraclesPosition(int a, int b) const noexcept {
  if (a + b == 0) {
    return -1;
  }
  const int half = static_cast<int>(config_.resolution) / 2;
  const auto pos = static_cast<float>(1.0 * a / (a + b));
  if (a >= b) { // tube A: counted from the far end, rounded
    return static_cast<int>(std::round(half - 1 - (pos - 0.5) * 2 * (half - 1)));
  }
  const float along = pos * 2 * (half - 1); // tube B: single precision, truncated
  return static_cast<int>(along);
}

inline uint32_t CaenGeometry::miraclesPixel(const CaenReadout &r) const noexcept {
  const int ring = r.fiber / 2U;
  const int half = static_cast<int>(config_.resolution) / 2;
  const int x = 2 * r.group + (ring == 1 || ring == 3 ? 24 : 0) + (r.ampA >= r.ampB ? 0 : 1);
  const int y = (ring == 2 || ring == 3 ? half : 0) + miraclesPosition(r.ampA, r.ampB);
  return config_.pixel(detail::coordinate(x), detail::coordinate(y));
}

inline uint32_t CaenGeometry::tbl3hePixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t ring = r.fiber / 2U;
  const auto bank = static_cast<uint32_t>(config_.tbl3he.bank[ring][r.fen]); // >= 0: valid()
  const uint32_t group = bank * 4 + r.group;
  uint32_t unit = 0;
  double position = 0;
  if (!tube(group, r, t, unit, position)) {
    return 0;
  }
  const double corrected = clamped(
      calibration_.corrected(group, unit, calibration_.withinInterval(group, unit, position)), t);
  const int64_t x = detail::truncated(corrected * (kTubePixels - 1)); // NaN: a zero-width interval
  return config_.pixel(detail::coordinate(x), group);
}

} // namespace efu::caen
