// SPDX-License-Identifier: BSD-2-Clause
// The ESS charge-division calibration: checks, the correction and its numerical inverse.
#include "modules/caen/CaenCalibration.h"

#include "common/sdk/CalibrationCheck.h"

#include <algorithm>
#include <cmath>

namespace efu::caen {

CaenCalibration::CaenCalibration(const nlohmann::json &calibration, const std::string &source,
                                 const CaenConfig &config)
    : pixelsPerTube_(config.pixelsPerTube) {
  const sdk::CalibrationCheck check(source);
  if (!calibration.is_object()) {
    check.fail("(top level)", calibration, "expected an object with key 'Calibration'");
  }
  const nlohmann::json &root = check.member(calibration, "(top level)", "Calibration");
  if (!root.is_object()) {
    check.fail("Calibration", root, "expected an object");
  }
  check.instrument(check.member(root, "Calibration", "instrument"), "Calibration.instrument",
                   config.instrument);
  const int64_t groups = check.integer(check.member(root, "Calibration", "groups"),
                                       "Calibration.groups");
  if (groups != config.tubes()) {
    check.fail("Calibration.groups", root["groups"],
               "expected one group per tube: " + std::to_string(config.tubes()) + " (banks x " +
                   "tubes_per_bank)");
  }
  const int64_t units = check.integer(check.member(root, "Calibration", "groupsize"),
                                      "Calibration.groupsize");
  if (units < 1 || units > config.pixelsPerTube) {
    check.fail("Calibration.groupsize", root["groupsize"],
               "expected 1.." + std::to_string(config.pixelsPerTube) + " (pixels_per_tube)");
  }
  unitsPerTube_ = static_cast<uint32_t>(units);
  const nlohmann::json &parameters = check.array(
      check.member(root, "Calibration", "Parameters"), "Calibration.Parameters",
      static_cast<size_t>(groups));
  units_.reserve(static_cast<size_t>(groups * units));
  for (size_t g = 0; g < parameters.size(); ++g) {
    const std::string path = "Calibration.Parameters[" + std::to_string(g) + "]";
    const nlohmann::json &group = parameters[g];
    if (!group.is_object()) {
      check.fail(path, group, "expected an object");
    }
    const nlohmann::json &index = check.member(group, path, "groupindex");
    if (check.integer(index, path + ".groupindex") != static_cast<int64_t>(g)) {
      check.fail(path + ".groupindex", index, "expected " + std::to_string(g));
    }
    const nlohmann::json &intervals =
        check.array(check.member(group, path, "intervals"), path + ".intervals", unitsPerTube_);
    const nlohmann::json &polynomials = check.array(check.member(group, path, "polynomials"),
                                                    path + ".polynomials", unitsPerTube_);
    for (size_t u = 0; u < unitsPerTube_; ++u) {
      const std::string ipath = path + ".intervals[" + std::to_string(u) + "]";
      const nlohmann::json &interval = check.array(intervals[u], ipath, 2);
      Unit unit;
      unit.lo = check.number(interval[0], ipath + "[0]");
      unit.hi = check.number(interval[1], ipath + "[1]");
      if (!(0.0 <= unit.lo && unit.lo < unit.hi && unit.hi <= 1.0)) {
        check.fail(ipath, interval, "expected [lo, hi] with 0 <= lo < hi <= 1");
      }
      if (u > 0 && unit.lo < units_.back().hi) {
        check.fail(ipath, interval,
                   "intervals must ascend without overlap: the previous one ends at " +
                       nlohmann::json(units_.back().hi).dump());
      }
      const std::string ppath = path + ".polynomials[" + std::to_string(u) + "]";
      const nlohmann::json &poly = polynomials[u];
      if (!poly.is_array() || poly.size() != 4) {
        check.fail(ppath, poly, "expected 4 coefficients [a, b, c, d]");
      }
      unit.a = check.number(poly[0], ppath + "[0]");
      unit.b = check.number(poly[1], ppath + "[1]");
      unit.c = check.number(poly[2], ppath + "[2]");
      unit.d = check.number(poly[3], ppath + "[3]");
      units_.push_back(unit);
    }
  }
}

const CaenCalibration::Unit *CaenCalibration::unit(uint32_t tube, double p) const noexcept {
  const Unit *first = units_.data() + static_cast<size_t>(tube) * unitsPerTube_;
  const Unit *last = first + unitsPerTube_;
  // Intervals ascend: the first whose end is >= p is the only candidate (touching intervals:
  // the lower one wins, as in the ESS EFU).
  const Unit *u = std::lower_bound(first, last, p,
                                   [](const Unit &unit, double pos) { return unit.hi < pos; });
  return u != last && u->lo <= p ? u : nullptr;
}

bool CaenCalibration::position(uint32_t tube, int32_t a, int32_t b, uint32_t &pos) const noexcept {
  const auto sum = static_cast<double>(a + b);
  const double p = b / sum;
  const Unit *u = unit(tube, p);
  if (u == nullptr) {
    return false;
  }
  // In pixel units; b * N / sum is computed as positionIndex() does (exact floor), so a zero
  // polynomial gives the uncalibrated pixel.
  const double n = pixelsPerTube_;
  const double x = std::clamp(b * n / sum - u->delta(p) * n, 0.0, n);
  pos = std::min(static_cast<uint32_t>(x), pixelsPerTube_ - 1);
  return true;
}

int32_t CaenCalibration::amplitudeB(uint32_t tube, uint32_t pos, int32_t sum) const noexcept {
  const double target = (pos + 0.5) / pixelsPerTube_;
  const Unit *first = units_.data() + static_cast<size_t>(tube) * unitsPerTube_;
  for (const Unit *u = first; u != first + unitsPerTube_; ++u) {
    // Bisection for p - delta(p) = target on [lo, hi], where it changes sign.
    auto f = [u, target](double p) { return p - u->delta(p) - target; };
    double lo = u->lo, hi = u->hi;
    double flo = f(lo);
    const double fhi = f(hi);
    if ((flo > 0) == (fhi > 0) && flo != 0) {
      continue;
    }
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (lo + hi);
      const double fmid = f(mid);
      if ((fmid > 0) == (flo > 0)) {
        lo = mid;
        flo = fmid;
      } else {
        hi = mid;
      }
    }
    // B is an integer: try the nearest few and keep one the module decodes to pos.
    const auto b0 = static_cast<int32_t>(std::lround(0.5 * (lo + hi) * sum));
    for (const int32_t step : {0, 1, -1, 2, -2, 3, -3}) {
      const int32_t b = b0 + step;
      uint32_t got = 0;
      if (b >= 0 && b <= sum && position(tube, sum - b, b, got) && got == pos) {
        return b;
      }
    }
  }
  return -1;
}

} // namespace efu::caen
