// SPDX-License-Identifier: BSD-2-Clause
// The dream module: CDT readouts → one event each, with the ESS EFU's pixel ids and rejections.
#include "modules/dream/DreamModule.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace efu::dream {

namespace {

/// The ESS EFU's time-of-flight limit for CDT (its default: the largest 32-bit TOF).
constexpr int64_t kMaxTofNs = INT32_MAX;

/// The prefix the ESS EFU gives a part's own counters, or nullptr for parts without any.
const char *partPrefix(PartType t) noexcept {
  switch (t) {
  case PartType::BwEndCap:
    return "bwec";
  case PartType::FwEndCap:
    return "fwec";
  case PartType::HR:
    return "hr";
  case PartType::SANS:
    return "sans";
  case PartType::PADetector:
    return "padetector";
  default:
    return nullptr;
  }
}

} // namespace

DreamCounters::DreamCounters(sdk::ModuleContext &ctx, const DreamConfig &config)
    : readouts(ctx.streamCounter("readouts.count")), headers(ctx.streamCounter("readouts.headers")),
      errBuffer(ctx.streamCounter("readouts.error_buffer")),
      errDatalen(ctx.streamCounter("readouts.error_datalen")),
      errFiber(ctx.streamCounter("readouts.error_fiber")),
      errFen(ctx.streamCounter("readouts.error_fen")),
      fenErrors(ctx.counter("geometry.fen_errors")),
      configErrors(ctx.counter("geometry.config_errors")),
      validation(ctx.counter("geometry.validation_errors")),
      pixelErrors(ctx.counter("geometry.pixel_errors")), events(ctx.counter("events.count")) {
  for (size_t t = 0; t < kPartTypes; ++t) {
    const auto type = static_cast<PartType>(t);
    const char *prefix = partPrefix(type);
    // The ESS EFU has the PA counters whenever it serves MAGIC, the others for the parts in
    // the file.
    const bool present =
        type == PartType::PADetector ? config.instrument == Instrument::Magic : config.hasType[t];
    if (prefix == nullptr || !present) {
      continue;
    }
    const std::string p = std::string(prefix) + ".geometry.";
    auto &slots = part[t];
    switch (type) {
    case PartType::BwEndCap:
    case PartType::FwEndCap:
      slots[static_cast<size_t>(Reject::Sector)] = &ctx.counter(p + "max_sector_errors");
      slots[static_cast<size_t>(Reject::Sumo)] = &ctx.counter(p + "sumo_id_errors");
      slots[static_cast<size_t>(Reject::Cassette)] = &ctx.counter(p + "cassette_id_errors");
      break;
    case PartType::HR:
    case PartType::SANS:
      slots[static_cast<size_t>(Reject::Index)] = &ctx.counter(p + "index_errors");
      break;
    case PartType::PADetector:
      slots[static_cast<size_t>(Reject::Sector)] = &ctx.counter(p + "max_sector_errors");
      slots[static_cast<size_t>(Reject::Cassette)] = &ctx.counter(p + "cassette_id_errors");
      break;
    default:
      break;
    }
  }
}

std::string DreamModule::sourceName(const nlohmann::json &config, const std::string &source) {
  std::string name = instrumentName(parseDreamConfig(config, source).instrument);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

DreamModule::DreamModule(sdk::ModuleContext &ctx)
    : config_(parseDreamConfig(ctx.config(), ctx.configSource())), headerCounters_(ctx),
      parser_(headerCounters_, {detectorType(config_.instrument)}, config_.maxPulseTimeDiffNs),
      tofCounters_(ctx), tof_(tofCounters_, kMaxTofNs), counters_(ctx, config_),
      events_(ctx.events()), hr_(config_, PartType::HR), sans_(config_, PartType::SANS),
      partition_(ctx.partition()), partitions_(ctx.partitions()) {
  for (uint8_t fiber = 0; fiber <= kMaxFiber; ++fiber) {
    for (uint8_t fen = 0; fen <= kMaxReadoutFen; ++fen) {
      CdtReadout r;
      r.fiber = fiber;
      r.fen = fen;
      Route &route = routes_[size_t{fiber} * (kMaxReadoutFen + 1) + fen];
      const Reject v = validate(config_, r);
      if (!mine(r)) {
        route.what = kOther;
      } else if (v != Reject::None) {
        route.what = v == Reject::Fen ? kFenError : kConfigError;
      } else {
        route.slot = static_cast<uint8_t>(slotOf(fiber / 2, fen));
        route.what = static_cast<uint8_t>(config_.parts[route.slot].type);
        byType_[route.what].resize(kMaxReadouts);
      }
    }
  }
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  std::string parts;
  for (size_t t = 0; t < kPartTypes; ++t) {
    if (config_.hasType[t]) {
      parts.append(parts.empty() ? "" : ", ").append(partTypeName(static_cast<PartType>(t)));
    }
  }
  ctx.log().info("dream: {} ({}), {} (ring, FEN) entries; one event per readout",
                 instrumentName(config_.instrument), parts, config_.slotsInOrder.size());
  for (const uint8_t slot : config_.slotsInOrder) {
    const uint8_t ring = slot / (kMaxFen + 1);
    const uint8_t fen = slot % (kMaxFen + 1);
    if (ring >= kMaxRing || fen >= kMaxFen) {
      ctx.log().warn("dream: {}: the entry for Ring {} FEN {} is accepted, but its readouts are "
                     "rejected (geometry.config_errors), as the ESS EFU rejects ring 11 and "
                     "FEN 11",
                     ctx.configSource(), ring, fen);
    }
  }
  if (config_.maxPulseWrapped) {
    ctx.log().warn("dream: {}: MaxPulseTimeDiffNS is beyond 32 bits; read modulo 2^32 as the "
                   "ESS EFU reads it: {} ns",
                   ctx.configSource(), config_.maxPulseTimeDiffNs);
  }
}

void DreamModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  int64_t readouts = 0, headers = 0, fen = 0, config = 0, pixel = 0, events = 0;
  std::array<std::array<int64_t, kRejects>, kPartTypes> partTally{};
  readout::TofTally tofTally;
  std::array<uint16_t, kPartTypes> counts{};
  // Local copies: the byte stores of the staging may alias the vectors' own pointers.
  std::array<Staged *, kPartTypes> staging{};
  for (size_t t = 0; t < kPartTypes; ++t) {
    staging[t] = byType_[t].data();
  }
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  // The ESS parser: a readout with a bad length, fiber or FEN ends the datagram's readouts.
  while (left != 0) {
    if (left < 4) {
      counters_.errBuffer.add(1);
      break;
    }
    uint16_t length = 0;
    std::memcpy(&length, p + 2, sizeof(length));
    if (left < length) {
      counters_.errBuffer.add(1);
      break;
    }
    if (p[0] > kMaxFiber) {
      counters_.errFiber.add(1);
      break;
    }
    if (p[1] > kMaxReadoutFen) {
      counters_.errFen.add(1);
      break;
    }
    ++headers;
    if (length != kReadoutBytes) {
      counters_.errDatalen.add(1);
      break;
    }
    ++readouts;
    CdtReadout r;
    std::memcpy(&r, p, kReadoutBytes);
    p += kReadoutBytes;
    left -= kReadoutBytes;
    const Route route = routes_[size_t{r.fiber} * (kMaxReadoutFen + 1) + r.fen];
    if (route.what >= kOther) {
      fen += route.what == kFenError ? 1 : 0;
      config += route.what == kConfigError ? 1 : 0;
      continue;
    }
    readout::Tof t;
    if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, t, tofTally)) {
      continue;
    }
    // The pixel comes in a second pass, part type by part type: a loop per type keeps the
    // branches of one part's rules predictable where a mixed datagram would mispredict them.
    staging[route.what][counts[route.what]++] =
        Staged{r, t.tofNs, route.slot, t.pulseTimeNs != h.pulseTimeNs};
  }
  for (size_t type = 0; type < kPartTypes; ++type) {
    if (counts[type] == 0) {
      continue;
    }
    withPartType(static_cast<PartType>(type), [&]<PartType T>() {
      const Staged *staged = staging[type];
      for (uint16_t k = 0; k < counts[type]; ++k) {
        const Staged &s = staged[k];
        Reject why = Reject::None;
        uint32_t id = 0;
        if constexpr (T == PartType::HR || T == PartType::SANS) {
          id = (T == PartType::HR ? hr_ : sans_).pixel(s.r, s.slot, why);
        } else {
          id = pixelOfType<T>(config_.parts[s.slot], s.r, why);
        }
        if (id == 0) {
          ++pixel;
          ++partTally[type][static_cast<size_t>(why)];
          continue;
        }
        events_.add(s.previous ? h.prevPulseTimeNs : h.pulseTimeNs, s.tofNs,
                    static_cast<int32_t>(id));
        ++events;
      }
    });
  }
  counters_.readouts.add(readouts);
  counters_.headers.add(headers);
  counters_.fenErrors.add(fen);
  counters_.configErrors.add(config);
  counters_.validation.add(fen + config);
  counters_.pixelErrors.add(pixel);
  counters_.events.add(events);
  tof_.add(tofTally);
  if (pixel != 0) {
    for (size_t t = 0; t < kPartTypes; ++t) {
      for (size_t w = 0; w < kRejects; ++w) {
        if (partTally[t][w] != 0 && counters_.part[t][w] != nullptr) {
          counters_.part[t][w]->add(partTally[t][w]);
        }
      }
    }
  }
}

} // namespace efu::dream
