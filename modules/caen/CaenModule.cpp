// SPDX-License-Identifier: BSD-2-Clause
// The caen module's readout loop, in the order of the ESS EFU's CAEN pipeline: readout header
// checks, ring and FEN, time of flight, pixel.
#include "modules/caen/CaenModule.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace efu::caen {

CaenCounters::CaenCounters(sdk::ModuleContext &ctx) {
  for (size_t i = 0; i < kCaenCounters.size(); ++i) {
    counters_[i] = kCaenCounters[i].stream ? &ctx.streamCounter(kCaenCounters[i].name)
                                           : &ctx.counter(kCaenCounters[i].name);
  }
}

void CaenCounters::add(const CaenTally &t) noexcept {
  for (size_t i = 0; i < kCaenCounters.size(); ++i) {
    if (const int64_t n = t.*kCaenCounters[i].field; n != 0) {
      counters_[i]->add(n);
    }
  }
}

namespace {
CaenGeometry geometryOf(sdk::ModuleContext &ctx) {
  CaenConfig config(ctx.config(), ctx.configSource());
  if (ctx.calibration().is_null()) {
    CaenCalibration null = nullCalibration(config);
    ctx.log().warn("caen: no --calibration: the ESS null calibration of {} groups of {} (what "
                   "calibrations/caen/{}nullcalib.json holds)",
                   null.groups(), null.unitsPerGroup(), config.detector);
    return {std::move(config), std::move(null)};
  }
  CaenCalibration calibration(ctx.calibration(), ctx.calibrationSource(), config.detector);
  return {std::move(config), std::move(calibration)};
}
} // namespace

CaenModule::CaenModule(sdk::ModuleContext &ctx)
    : geometry_(geometryOf(ctx)), partition_(ctx.partition()), partitions_(ctx.partitions()),
      headerCounters_(ctx), tofCounters_(ctx), counters_(ctx),
      parser_(headerCounters_, readout::DetectorTypes{config().detectorType},
              config().maxPulseGapNs),
      tof_(tofCounters_, config().maxTofNs) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  const CaenConfig &c = config();
  const CaenCalibration &calibration = geometry_.calibration();
  switch (c.instrument) {
  case Instrument::Loki:
    for (uint32_t ring = 0; ring < LokiGeometry::kRings; ++ring) {
      const int32_t bank = c.loki.rings[ring].bank;
      sinks_.push_back(bank < 0 || c.bankSources.empty()
                           ? &ctx.events()
                           : &ctx.events(c.bankSources[static_cast<size_t>(bank)]));
    }
    break;
  case Instrument::Bifrost:
    // The ESS EFU's source names, one per triplet: "arc=A;triplet=T". Only triplets that can
    // give a pixel (inside the image and the calibration) get one.
    for (uint32_t slot = 0; slot < 12 * CaenGeometry::kBifrostTripletsPerRing; ++slot) {
      const uint32_t ring = slot / CaenGeometry::kBifrostTripletsPerRing;
      const uint32_t tube = slot % CaenGeometry::kBifrostTripletsPerRing;
      const bool reachable =
          slot < calibration.groups() &&
          uint64_t{ring} * c.resolution + (tube % 3) * CaenGeometry::kTubePixels <
              kBifrostImage.width;
      sinks_.push_back(
          reachable ? &ctx.events(fmt::format("arc={};triplet={}", tube / 3, tube % 3 + ring * 3))
                    : &ctx.events());
    }
    break;
  case Instrument::Tbl3he:
    for (uint32_t bank = 0; bank < Tbl3heTopology::kBanks; ++bank) {
      sinks_.push_back(&ctx.events(fmt::format("bank{}", bank)));
    }
    break;
  case Instrument::Cspec:
  case Instrument::Miracles:
    sinks_.push_back(&ctx.events());
    break;
  }
  ctx.log().info("caen: {} (type 0x{:02x}): image {} x {}, max tof {} ns, max pulse gap {} ns; "
                 "calibration {}: {} groups of {}",
                 c.detector, c.detectorType, c.imageWidth(), c.imageHeight(), c.maxTofNs,
                 c.maxPulseGapNs,
                 ctx.calibration().is_null() ? std::string("(null)") : ctx.calibrationSource(),
                 calibration.groups(), calibration.unitsPerGroup());
  if (c.instrument == Instrument::Loki && calibration.groups() < c.loki.totalGroups) {
    ctx.log().warn("caen: the calibration has {} groups, the geometry {}: readouts of groups "
                   "{} and above are rejected (geometry.calib_group_errors)",
                   calibration.groups(), c.loki.totalGroups, calibration.groups());
  }
}

template <Instrument I> size_t CaenModule::sourceSlot(const CaenReadout &r) const noexcept {
  if constexpr (I == Instrument::Loki) {
    return r.fiber / 2U;
  } else if constexpr (I == Instrument::Bifrost) { // a pixel implies group <= 14
    return (r.fiber / 2U) * CaenGeometry::kBifrostTripletsPerRing + r.group;
  } else if constexpr (I == Instrument::Tbl3he) {
    return static_cast<size_t>(config().tbl3he.bank[r.fiber / 2U][r.fen]);
  } else {
    return 0;
  }
}

void CaenModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  CaenTally t;
  readout::TofTally tof;
  geometry_.visit([&]<Instrument I>() {
    if constexpr (I == Instrument::Loki) {
      lokiReadouts(h, t, tof);
    } else {
      readouts<I>(h, t, tof);
    }
  });
  tof_.add(tof);
  counters_.add(t);
}

namespace {
/// The next readout of a datagram with the ESS EFU's readout header checks, counted in `t`:
/// true with `r` filled and the readout consumed, false when the datagram ends here (nothing
/// left, or a readout header that cannot be trusted ends it, as in the ESS EFU's parser).
inline bool nextReadout(const uint8_t *&p, size_t &left, CaenReadout &r, CaenTally &t) noexcept {
  if (left == 0) {
    return false;
  }
  if (left >= sizeof(r)) {
    std::memcpy(&r, p, sizeof(r));
  } else {
    if (left < sizeof(readout::DataBlockHeader)) {
      ++t.headerSize;
      return false;
    }
    r = CaenReadout{};
    std::memcpy(&r, p, left);
  }
  if (r.length > left) {
    ++t.lengthMismatch;
    return false;
  }
  if (r.fiber > readout::kMaxFiber || r.fen > readout::kMaxFen) {
    ++t.ringFen;
    return false;
  }
  if (r.length != sizeof(CaenReadout)) {
    ++t.dataHeaders;
    ++t.lengthInvalid;
    return false;
  }
  p += sizeof(r);
  left -= sizeof(r);
  return true; // dataHeaders and readouts: counted by the caller, once per datagram
}
} // namespace

template <Instrument I>
void CaenModule::readouts(const readout::EssHeader &h, CaenTally &t,
                          readout::TofTally &tofTally) noexcept {
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  int64_t n = 0;
  int64_t events = 0;
  CaenReadout r;
  while (nextReadout(p, left, r, t)) {
    ++n;
    if (!mine(r)) {
      continue;
    }
    if (!geometry_.validAs<I>(r, t)) {
      continue;
    }
    readout::Tof tof;
    if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, tof, tofTally)) {
      continue;
    }
    const uint32_t pixel = geometry_.pixelAs<I>(r, t);
    if (pixel == 0) {
      continue;
    }
    sinks_[sourceSlot<I>(r)]->add(tof.pulseTimeNs, tof.tofNs, static_cast<int32_t>(pixel));
    ++events;
  }
  t.dataHeaders += n;
  t.readouts += n;
  t.events += events;
}

void CaenModule::lokiReadouts(const readout::EssHeader &h, CaenTally &t,
                              readout::TofTally &tofTally) noexcept {
  // Blocks of up to kBlock of this partition's readouts; those that pass the ring, TOF and
  // zero-sum checks are taken through the geometry's steps in three loops: gather, locate (the
  // two divisions, the straw), finish (the polynomial, the rounding, the event). Events leave in
  // the datagram's order.
  constexpr size_t kBlock = 64;
  struct Block {
    uint32_t group[kBlock];
    int32_t ab[kBlock], bd[kBlock], sum[kBlock];
    int32_t tof[kBlock];
    uint8_t ring[kBlock];
    bool previous[kBlock]; ///< TOF measured from the previous pulse
    double position[kBlock];
    int unit[kBlock]; ///< -1: no pixel
  } b;
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  int64_t n = 0;
  int64_t events = 0;
  int64_t zeroSums = 0;
  readout::TofTally tofs; // in registers, not through the reference
  bool more = true;
  CaenReadout own[kBlock];
  while (more) {
    // This partition's next readouts, taken without a branch on the partition: with several
    // partitions it changes at random from readout to readout, and a mispredicted branch costs
    // more than copying every readout.
    size_t m = 0;
    CaenReadout next;
    while (m < kBlock && (more = nextReadout(p, left, next, t))) {
      ++n;
      own[m] = next;
      m += mine(next) ? 1 : 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < m; ++i) {
      const CaenReadout &r = own[i];
      uint32_t group = 0;
      if (!geometry_.lokiValid(r, t, group)) {
        continue;
      }
      readout::Tof tof;
      if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, tof, tofs)) {
        continue;
      }
      const int32_t sum = r.ampA + r.ampB + r.ampC + r.ampD;
      if (sum == 0) {
        ++zeroSums;
        continue;
      }
      b.group[k] = group;
      b.ab[k] = r.ampA + r.ampB;
      b.bd[k] = r.ampB + r.ampD;
      b.sum[k] = sum;
      b.tof[k] = tof.tofNs;
      b.ring[k] = static_cast<uint8_t>(r.fiber / 2U);
      b.previous[k] = tof.pulseTimeNs != h.pulseTimeNs;
      ++k;
    }
    for (size_t i = 0; i < k; ++i) {
      const CaenGeometry::LokiQuotients q = CaenGeometry::lokiQuotients(b.ab[i], b.bd[i], b.sum[i]);
      b.position[i] = q.position;
      b.unit[i] = geometry_.lokiUnit(b.group[i], q, t);
    }
    for (size_t i = 0; i < k; ++i) {
      if (b.unit[i] < 0) {
        continue;
      }
      const double corrected = geometry_.lokiCorrected(b.group[i], b.unit[i], b.position[i], t);
      const uint32_t pixel = geometry_.lokiPixelAt(b.group[i], b.unit[i], corrected, t);
      if (pixel == 0) {
        continue;
      }
      sinks_[b.ring[i]]->add(b.previous[i] ? h.prevPulseTimeNs : h.pulseTimeNs, b.tof[i],
                             static_cast<int32_t>(pixel));
      ++events;
    }
  }
  t.dataHeaders += n;
  t.readouts += n;
  t.events += events;
  t.amplitudeZero += zeroSums;
  t.pixel += zeroSums;
  tofTally.ok += tofs.ok;
  tofTally.negative += tofs.negative;
  tofTally.tooLarge += tofs.tooLarge;
  tofTally.prevOk += tofs.prevOk;
  tofTally.prevNegative += tofs.prevNegative;
  tofTally.prevTooLarge += tofs.prevTooLarge;
}

} // namespace efu::caen
