// SPDX-License-Identifier: BSD-2-Clause
// The ESS CAEN geometries: which readouts an instrument accepts and the pixel it gives each,
// as the ESS EFU does (modules/caen/README.md has the formulas).
#pragma once

#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenReadout.h"

#include <cstdint>

namespace efu::caen {

struct CaenCounters;

/// Per-datagram tallies of the readout and geometry counters (added once per datagram, hot
/// path); the names are in CaenCounters.
struct CaenTally {
  int64_t dataHeaders = 0, readouts = 0, headerSize = 0, lengthMismatch = 0, ringFen = 0,
          lengthInvalid = 0, validation = 0, ringMapping = 0, topology = 0, fen = 0, group = 0,
          amplitudeLow = 0, amplitudeHigh = 0, pixel = 0, amplitudeZero = 0,
          positionInvalid = 0, unitInvalid = 0, calibrationGroup = 0, outsideTube = 0,
          positionLow = 0, positionHigh = 0, rowInvalid = 0, events = 0;
  void addTo(CaenCounters &c) const noexcept;
};

/// The ESS null calibration of the instrument (what the ESS EFU's <instrument>nullcalib.json
/// holds): LoKI 7 straws per group, BIFROST 3 tubes, MIRACLES 2, CSPEC and TBL3HE 1.
CaenCalibration nullCalibration(const CaenConfig &config);

/// One instrument's geometry with its calibration. Both checks count the reason of a
/// rejection in the tally, the ESS EFU's way.
class CaenGeometry {
public:
  CaenGeometry(CaenConfig config, CaenCalibration calibration)
      : config_(std::move(config)), calibration_(std::move(calibration)) {}

  /// The ring, FEN, group and amplitude checks that come before the time of flight; a failed
  /// one counts its reason and geometry.validation_errors.
  [[nodiscard]] bool valid(const CaenReadout &r, CaenTally &t) const noexcept;
  /// The pixel of a valid readout (1-based), or 0 with geometry.pixel_errors and its reason.
  [[nodiscard]] uint32_t pixel(const CaenReadout &r, CaenTally &t) const noexcept;

  [[nodiscard]] const CaenConfig &config() const noexcept { return config_; }
  [[nodiscard]] const CaenCalibration &calibration() const noexcept { return calibration_; }

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
  /// BIFROST and TBL3HE: the unit of position A / (A + B) in `group`, or -1 (counted).
  [[nodiscard]] int tubeUnit(uint32_t group, double position, CaenTally &t) const noexcept;

  CaenConfig config_;
  CaenCalibration calibration_;
};

} // namespace efu::caen
