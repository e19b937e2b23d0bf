// SPDX-License-Identifier: BSD-2-Clause
// The caen module's readout loop, in the order of the ESS EFU's CAEN pipeline: readout header
// checks, ring and FEN, time of flight, pixel.
#include "modules/caen/CaenModule.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace efu::caen {

CaenCounters::CaenCounters(sdk::ModuleContext &ctx)
    : dataHeaders(ctx.counter("parser.readout.header.count")),
      readouts(ctx.counter("parser.readout.count")),
      headerSize(ctx.counter("parser.readout.error_headersize")),
      lengthMismatch(ctx.counter("parser.readout.error_datlen_mismatch")),
      ringFen(ctx.counter("parser.readout.error_ringfen")),
      lengthInvalid(ctx.counter("parser.readout.error_datlen_invalid")),
      validation(ctx.counter("geometry.validation_errors")),
      ringMapping(ctx.counter("geometry.ring_mapping_errors")),
      topology(ctx.counter("geometry.topology_errors")),
      pixel(ctx.counter("geometry.pixel_errors")),
      amplitudeZero(ctx.counter("geometry.ampl_zero")),
      positionInvalid(ctx.counter("geometry.globalpos_invalid")),
      calibrationGroup(ctx.counter("geometry.calib_group_errors")),
      outsideTube(ctx.counter("geometry.outside_tube")),
      positionLow(ctx.counter("geometry.pos_low")),
      positionHigh(ctx.counter("geometry.pos_high")),
      rowInvalid(ctx.counter("geometry.row_invalid")), events(ctx.counter("events.count")) {}

namespace {
inline void addIf(Counter &c, int64_t n) noexcept {
  if (n != 0) {
    c.add(n);
  }
}

CaenCalibration calibrationOf(sdk::ModuleContext &ctx, const CaenConfig &config) {
  if (ctx.calibration().is_null()) {
    ctx.log().warn("caen: no --calibration: the ESS null calibration of {} groups (what "
                   "calibrations/caen/lokinullcalib.json holds for LokiFull.json)",
                   config.loki.totalGroups);
    return CaenCalibration::null(config.loki.totalGroups);
  }
  return CaenCalibration(ctx.calibration(), ctx.calibrationSource(), config.detector);
}
} // namespace

void CaenTally::addTo(CaenCounters &c) const noexcept {
  addIf(c.dataHeaders, dataHeaders);
  addIf(c.readouts, readouts);
  addIf(c.headerSize, headerSize);
  addIf(c.lengthMismatch, lengthMismatch);
  addIf(c.ringFen, ringFen);
  addIf(c.lengthInvalid, lengthInvalid);
  addIf(c.validation, validation);
  addIf(c.ringMapping, ringMapping);
  addIf(c.topology, topology);
  addIf(c.pixel, pixel);
  addIf(c.amplitudeZero, amplitudeZero);
  addIf(c.positionInvalid, positionInvalid);
  addIf(c.calibrationGroup, calibrationGroup);
  addIf(c.outsideTube, outsideTube);
  addIf(c.positionLow, positionLow);
  addIf(c.positionHigh, positionHigh);
  addIf(c.rowInvalid, rowInvalid);
  addIf(c.events, events);
}

uint32_t lokiPixel(const CaenConfig &config, const CaenCalibration &calibration,
                   const CaenReadout &r, CaenTally &t) noexcept {
  const uint32_t ring = r.fiber / 2U;
  const LokiGeometry &g = config.loki;
  const uint32_t group = g.globalGroup(ring, r.fen, r.group);
  // The firmware swaps A with B and C with D: the straw coordinate is (B + D) / sum, the
  // position along it (A + B) / sum (ESS LoKI ICD, as the ESS EFU reads it).
  const int32_t sum = r.ampA + r.ampB + r.ampC + r.ampD;
  if (sum == 0) {
    ++t.amplitudeZero;
    ++t.pixel;
    return 0;
  }
  const double position = static_cast<double>(r.ampA + r.ampB) / sum;
  if (position < 0.0 || position > 1.0) {
    ++t.positionInvalid;
    ++t.pixel;
    return 0;
  }
  const double straw = static_cast<double>(r.ampB + r.ampD) / sum;
  const int unit = calibration.unit(group, straw);
  if (unit < 0) {
    ++(unit == CaenCalibration::kGroupBeyond ? t.calibrationGroup : t.outsideTube);
    ++t.pixel;
    return 0;
  }
  double corrected = calibration.corrected(group, static_cast<uint32_t>(unit), position);
  if (corrected < 0.0) {
    ++t.positionLow;
    corrected = 0.0;
  } else if (corrected > 1.0) {
    ++t.positionHigh;
    corrected = 1.0;
  }
  // std::round (halves away from zero) for a value in [0, Resolution - 1], without the libm
  // call: the fraction of a non-negative double below 2^52 is exact.
  const double scaled = corrected * (config.resolution - 1);
  const auto whole = static_cast<uint32_t>(scaled);
  const uint32_t x = whole + (scaled - whole >= 0.5 ? 1U : 0U);
  const uint32_t row = g.row(ring, r.fen, r.group, static_cast<uint32_t>(unit));
  const uint32_t pixel = config.pixel(x, row);
  if (pixel == 0) {
    ++t.rowInvalid;
    ++t.pixel;
  }
  return pixel;
}

CaenModule::CaenModule(sdk::ModuleContext &ctx)
    : config_(ctx.config(), ctx.configSource()),
      calibration_(calibrationOf(ctx, config_)), headerCounters_(ctx), tofCounters_(ctx),
      counters_(ctx),
      parser_(headerCounters_, readout::DetectorTypes{config_.detectorType},
              config_.maxPulseGapNs),
      tof_(tofCounters_, config_.maxTofNs) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  const LokiGeometry &g = config_.loki;
  for (uint32_t ring = 0; ring < LokiGeometry::kRings; ++ring) {
    const int32_t bank = g.rings[ring].bank;
    ringEvents_[ring] = bank < 0 || config_.bankSources.empty()
                            ? &ctx.events()
                            : &ctx.events(config_.bankSources[static_cast<size_t>(bank)]);
  }
  ctx.log().info("caen: {} (type 0x{:02x}): {} groups of 7 straws, image {} x {}, max tof {} ns, "
                 "max pulse gap {} ns; calibration {}: {} groups of {}",
                 config_.detector, config_.detectorType, g.totalGroups, config_.imageWidth(),
                 config_.imageHeight(), config_.maxTofNs, config_.maxPulseGapNs,
                 ctx.calibration().is_null() ? std::string("(null)") : ctx.calibrationSource(),
                 calibration_.groups(), calibration_.unitsPerGroup());
  if (calibration_.groups() < g.totalGroups) {
    ctx.log().warn("caen: the calibration has {} groups, the geometry {}: readouts of groups "
                   "{} and above are rejected (geometry.calib_group_errors)",
                   calibration_.groups(), g.totalGroups, calibration_.groups());
  }
}

void CaenModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  CaenTally t;
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  const LokiGeometry &g = config_.loki;
  // A readout header that cannot be trusted ends the datagram, as in the ESS EFU's parser.
  while (left > 0) {
    if (left < sizeof(readout::DataBlockHeader)) {
      ++t.headerSize;
      break;
    }
    CaenReadout r{};
    std::memcpy(&r, p, std::min(left, sizeof(r)));
    if (r.length > left) {
      ++t.lengthMismatch;
      break;
    }
    if (r.fiber > readout::kMaxFiber || r.fen > readout::kMaxFen) {
      ++t.ringFen;
      break;
    }
    ++t.dataHeaders;
    if (r.length != sizeof(CaenReadout)) {
      ++t.lengthInvalid;
      break;
    }
    p += sizeof(r);
    left -= sizeof(r);
    ++t.readouts;
    const uint32_t ring = r.fiber / 2U;
    const LokiGeometry::Ring &rc = g.rings[ring];
    if (rc.bank < 0 || r.fen >= rc.fens) {
      ++(rc.bank < 0 ? t.ringMapping : t.topology);
      ++t.validation;
      continue;
    }
    readout::Tof tof;
    if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, tof)) {
      continue;
    }
    const uint32_t pixel = lokiPixel(config_, calibration_, r, t);
    if (pixel == 0) {
      continue;
    }
    ringEvents_[ring]->add(tof.pulseTimeNs, tof.tofNs, static_cast<int32_t>(pixel));
    ++t.events;
  }
  t.addTo(counters_);
}

} // namespace efu::caen
