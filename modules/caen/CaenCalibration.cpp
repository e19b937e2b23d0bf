// SPDX-License-Identifier: BSD-2-Clause
// The ESS charge-division calibration: the file's checks.
#include "modules/caen/CaenCalibration.h"

#include "common/sdk/CalibrationCheck.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace efu::caen {

namespace {
/// Two intervals closer than this count as overlapping (the ESS EFU's tolerance).
constexpr double kOverlapTolerance = 1e-5;
} // namespace

CaenCalibration::CaenCalibration(const nlohmann::json &calibration, const std::string &source,
                                 const std::string &detector) {
  const sdk::CalibrationCheck check(source);
  const nlohmann::json &root = check.member(calibration, "(top level)", "Calibration");
  if (!root.is_object()) {
    check.fail("Calibration", root, "expected an object");
  }
  const nlohmann::json &instrument = check.member(root, "Calibration", "instrument");
  if (check.string(instrument, "Calibration.instrument") != detector) {
    check.fail("Calibration.instrument", instrument,
               "the configuration's Detector is '" + detector + "'");
  }
  const int64_t groups =
      check.integer(check.member(root, "Calibration", "groups"), "Calibration.groups");
  if (groups < 1 || groups > (1 << 20)) {
    check.fail("Calibration.groups", root["groups"], "expected 1..1048576");
  }
  const int64_t units =
      check.integer(check.member(root, "Calibration", "groupsize"), "Calibration.groupsize");
  if (units < 1 || units > 64) {
    check.fail("Calibration.groupsize", root["groupsize"], "expected 1..64");
  }
  groups_ = static_cast<uint32_t>(groups);
  unitsPerGroup_ = static_cast<uint32_t>(units);
  const nlohmann::json &parameters = check.array(check.member(root, "Calibration", "Parameters"),
                                                 "Calibration.Parameters", groups_);
  intervals_.reserve(static_cast<size_t>(groups_) * unitsPerGroup_);
  polynomials_.reserve(static_cast<size_t>(groups_) * unitsPerGroup_);
  std::vector<std::pair<double, double>> sorted;
  for (size_t g = 0; g < parameters.size(); ++g) {
    const std::string path = "Calibration.Parameters[" + std::to_string(g) + "]";
    const nlohmann::json &group = parameters[g];
    const nlohmann::json &index = check.member(group, path, "groupindex");
    if (check.integer(index, path + ".groupindex") != static_cast<int64_t>(g)) {
      check.fail(path + ".groupindex", index, "expected " + std::to_string(g));
    }
    const nlohmann::json &intervals =
        check.array(check.member(group, path, "intervals"), path + ".intervals", unitsPerGroup_);
    const nlohmann::json &polynomials = check.array(check.member(group, path, "polynomials"),
                                                    path + ".polynomials", unitsPerGroup_);
    sorted.clear();
    for (size_t u = 0; u < unitsPerGroup_; ++u) {
      const std::string ipath = path + ".intervals[" + std::to_string(u) + "]";
      const nlohmann::json &interval = check.array(intervals[u], ipath, 2);
      Interval unit;
      unit.lo = check.number(interval[0], ipath + "[0]");
      unit.hi = check.number(interval[1], ipath + "[1]");
      if (!(unit.lo >= 0.0 && unit.lo <= 1.0 && unit.hi >= 0.0 && unit.hi <= 1.0)) {
        check.fail(ipath, interval, "both ends must lie in [0, 1]");
      }
      unit.first = unit.lo;
      unit.second = unit.hi;
      if (unit.hi < unit.lo) {
        std::swap(unit.lo, unit.hi);
      }
      sorted.emplace_back(unit.lo, unit.hi);
      const std::string ppath = path + ".polynomials[" + std::to_string(u) + "]";
      const nlohmann::json &poly = check.array(polynomials[u], ppath, 4);
      intervals_.push_back(unit);
      polynomials_.push_back(
          {check.number(poly[0], ppath + "[0]"), check.number(poly[1], ppath + "[1]"),
           check.number(poly[2], ppath + "[2]"), check.number(poly[3], ppath + "[3]")});
    }
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i - 1].second - sorted[i].first > -kOverlapTolerance) {
        check.fail(path + ".intervals", intervals,
                   "intervals overlap or touch (they must be more than 1e-5 apart)");
      }
    }
  }
  sortIntervals();
}

void CaenCalibration::sortIntervals() {
  const size_t n = intervals_.size();
  sortedLo_.resize(n);
  sortedHi_.resize(n);
  sortedUnit_.resize(n);
  std::vector<int> order(unitsPerGroup_);
  for (size_t first = 0; first < n; first += unitsPerGroup_) {
    for (uint32_t u = 0; u < unitsPerGroup_; ++u) {
      order[u] = static_cast<int>(u);
    }
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return intervals_[first + a].lo < intervals_[first + b].lo; });
    for (uint32_t k = 0; k < unitsPerGroup_; ++k) {
      const Interval &u = intervals_[first + order[k]];
      sortedLo_[first + k] = u.lo;
      sortedHi_[first + k] = u.hi;
      sortedUnit_[first + k] = order[k];
    }
  }
  buildSevenUnits();
}

void CaenCalibration::buildSevenUnits() {
  seven_.clear();
  if (unitsPerGroup_ != 7) {
    return;
  }
  seven_.resize(groups_);
  for (uint32_t g = 0; g < groups_; ++g) {
    SevenUnits &row = seven_[g];
    row.upper[0] = -std::numeric_limits<double>::infinity();
    row.unitOf[0] = 0;
    for (uint32_t k = 0; k < 7; ++k) { // the k-th interval by lower end; unit k of the file
      const size_t i = static_cast<size_t>(g) * 7 + k;
      row.lo[k] = sortedLo_[i];
      row.upper[k + 1] = sortedHi_[i];
      row.unitOf[k + 1] = static_cast<uint8_t>(sortedUnit_[i]);
      row.polynomial[k] = polynomials_[i];
    }
  }
}

CaenCalibration CaenCalibration::null(uint32_t groups,
                                      std::span<const std::pair<double, double>> intervals) {
  CaenCalibration c;
  c.groups_ = groups;
  c.unitsPerGroup_ = static_cast<uint32_t>(intervals.size());
  c.intervals_.reserve(static_cast<size_t>(groups) * intervals.size());
  c.polynomials_.assign(static_cast<size_t>(groups) * intervals.size(), Polynomial{});
  for (uint32_t g = 0; g < groups; ++g) {
    for (const auto &[lo, hi] : intervals) {
      Interval u;
      u.lo = u.first = lo;
      u.hi = u.second = hi;
      c.intervals_.push_back(u);
    }
  }
  c.sortIntervals();
  return c;
}

} // namespace efu::caen
