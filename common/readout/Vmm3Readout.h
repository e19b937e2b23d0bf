// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 readout (docs/wire-formats.md §3), shared by the VMM3 families: the 20-byte
// packed layout, field limits and the checks in the ESS EFU's order.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/EssReadout.h"
#include "common/sdk/CalibrationCheck.h"
#include "common/sdk/Module.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace efu::vmm3 {

#pragma pack(push, 1)
/// One VMM3 hit as sent by the front end. Little-endian (host order on x86/arm64).
struct Vmm3Readout {
  uint8_t fiber;     ///< <= 23
  uint8_t fen;       ///< <= 23
  uint16_t length;   ///< bytes of this readout, always sizeof(Vmm3Readout) = 20
  uint32_t timeHigh; ///< seconds since the Unix epoch
  uint32_t timeLow;  ///< 88.0525 MHz ticks, <= readout::kMaxTicksLow
  uint16_t bc;       ///< bunch-crossing counter, <= 4095
  uint16_t otadc;    ///< bit 15: over threshold (informational); bits 0-9: ADC; 10-14 must be 0
  uint8_t geo;       ///< not interpreted
  uint8_t tdc;       ///< fine time within a BC period, 0..255
  uint8_t vmm;       ///< <= 15; vmm / 2 is the VMM pair (hybrid), vmm % 2 the half of its strips
  uint8_t channel;   ///< <= 63
};
#pragma pack(pop)
static_assert(sizeof(Vmm3Readout) == 20, "a VMM3 readout is 20 bytes");

constexpr uint16_t kReadoutBytes = sizeof(Vmm3Readout);
constexpr uint16_t kMaxBc = 4095;
constexpr uint16_t kMaxAdc = 1023;
constexpr uint16_t kOverThresholdBit = 0x8000;
constexpr uint8_t kMaxVmm = 15;
constexpr uint8_t kMaxChannel = 63;
constexpr uint8_t kVmmPairs = (kMaxVmm + 1) / 2;
constexpr uint8_t kChannelsPerVmm = kMaxChannel + 1;

/// The ESS limits on a hybrid's address in a VMM3 instrument file's Config entries (the ESS EFU's
/// common VMM3 configuration, the same for every VMM3 family).
constexpr uint8_t kMaxRing = 10;   ///< ring = fiber / 2; ring 11 is refused
constexpr uint8_t kMaxFen = 13;    ///< FENs 0..13
constexpr uint8_t kMaxHybrid = 10; ///< a Config entry's Hybrid (readouts reach vmm / 2 <= 7)
constexpr size_t kHybridIdLength = 32;

/// The first checks every VMM3 family makes on a valid readout, in the ESS EFU's order — ring =
/// fiber / 2 <= kMaxRing, FEN <= kMaxFen, a Config entry for (ring, FEN, vmm / 2) — as one table
/// load per readout, with the family's own index of what the readout goes to.
class RouteTable {
public:
  /// What operator() gives a readout that fails a check: -1 - the check's place in the order.
  static constexpr int16_t kRingFault = -1, kFenFault = -2, kHybridFault = -3;

  /// routeOf(ring, fen, vmm) -> int: the family's index (0..32767) of a readout with this address
  /// in range, or < 0 when (ring, FEN, vmm / 2) has no Config entry.
  template <class RouteOf> explicit RouteTable(RouteOf &&routeOf) : table_(kKeys) {
    for (uint8_t fiber = 0; fiber <= readout::kMaxFiber; fiber += 2) { // a ring's two fibers
      const auto ring = static_cast<uint8_t>(fiber / 2);
      for (uint8_t fen = 0; fen <= readout::kMaxFen; ++fen) {
        for (uint8_t vmm = 0; vmm <= kMaxVmm; ++vmm) {
          int16_t &to = table_[key(fiber, fen, vmm)];
          if (ring > kMaxRing) {
            to = kRingFault;
          } else if (fen > kMaxFen) {
            to = kFenFault;
          } else {
            const int index = routeOf(ring, fen, vmm);
            to = index < 0 ? kHybridFault : static_cast<int16_t>(index);
          }
        }
      }
    }
  }
  /// True when a family's enum E starts Ring, Fen, Hybrid: then E(-1 - fault) is a fault's.
  template <class E> static constexpr bool faultsLead() noexcept {
    return static_cast<int>(E::Ring) == -1 - kRingFault &&
           static_cast<int>(E::Fen) == -1 - kFenFault &&
           static_cast<int>(E::Hybrid) == -1 - kHybridFault;
  }
  /// The index of a readout that passed checkReadout(), or a fault (< 0).
  [[nodiscard]] int16_t operator()(const Vmm3Readout &r) const noexcept {
    return table_[key(r.fiber, r.fen, r.vmm)];
  }

private:
  // checkReadout() leaves fiber and FEN <= 23 and VMM <= 15: the ring's fibers (fiber without
  // bit 0) and the FEN as they lie in their little-endian word, the VMM below them, which GCC
  // reads as one word load and a mask. The three bits between fiber and FEN are unused: a
  // sparse table (125 KB, a few lines of it used) for fewer instructions than the shifts.
  static_assert(readout::kMaxFiber < 32 && readout::kMaxFen < 32 && kMaxVmm < 16);
  static constexpr size_t kFiberFenMask = 0x1F1E;
  static constexpr size_t kKeys = (kFiberFenMask << 3 | kMaxVmm) + 1;
  static size_t key(uint8_t fiber, uint8_t fen, uint8_t vmm) noexcept {
    return ((size_t{fiber} | size_t{fen} << 8) & kFiberFenMask) << 3 | vmm;
  }
  std::vector<int16_t> table_;
};

/// Reads the address a Config entry gives its hybrid into h.ring, h.fen, h.hybrid and
/// h.hybridId: "Ring" 0..kMaxRing, "FEN" 0..kMaxFen, "Hybrid" 0..kMaxHybrid, "HybridId" of
/// kHybridIdLength characters. A missing or bad value is a ConfigError naming `path`.key.
template <class Hybrid>
void readHybridAddress(const nlohmann::json &entry, const std::string &path,
                       const sdk::CalibrationCheck &check, Hybrid &h) {
  h.ring = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "Ring"), path + ".Ring", 0, kMaxRing));
  h.fen = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "FEN"), path + ".FEN", 0, kMaxFen));
  h.hybrid = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "Hybrid"), path + ".Hybrid", 0, kMaxHybrid));
  const nlohmann::json &id = check.member(entry, path, "HybridId");
  h.hybridId = check.string(id, path + ".HybridId");
  if (h.hybridId.size() != kHybridIdLength) {
    check.fail(path + ".HybridId", id,
               "expected " + std::to_string(kHybridIdLength) + " characters");
  }
}

/// The Config hybrid that entry `entry` of a VMM3 calibration file's Calibrations names by its
/// HybridId (`idJson`, at `path`.HybridId): its index in `hybrids`. `claimed[h]` is the entry
/// that named hybrid h so far (-1: none; one per hybrid), updated here. A HybridId no Config
/// entry of `configSource` has, or one an earlier entry named, is a ConfigError naming it.
template <class Hybrid>
size_t claimHybrid(const std::vector<Hybrid> &hybrids, const nlohmann::json &idJson,
                   const std::string &path, const std::string &configSource,
                   const sdk::CalibrationCheck &check, std::vector<int> &claimed, size_t entry) {
  const std::string &id = check.string(idJson, path + ".HybridId");
  size_t hybrid = 0;
  while (hybrid < hybrids.size() && hybrids[hybrid].hybridId != id) {
    ++hybrid;
  }
  if (hybrid == hybrids.size()) {
    check.fail(path + ".HybridId", idJson,
               "no Config entry of " + configSource + " has this HybridId");
  }
  if (claimed[hybrid] >= 0) {
    check.fail(path + ".HybridId", idJson,
               "Calibrations[" + std::to_string(claimed[hybrid]) + "] has it too");
  }
  claimed[hybrid] = static_cast<int>(entry);
  return hybrid;
}

/// Why a readout was refused (or Ok), in the order the ESS EFU checks. One counter per value
/// except Ok: readouts.error_<readoutErrorName()>, the ESS EFU's names.
enum class ReadoutError : uint8_t {
  Ok = 0,
  Fiber,      ///< fiber > 23
  Fen,        ///< FEN > 23
  DataLength, ///< length field != 20
  TimeFrac,   ///< time low > 88 052 499 ticks
  Bc,         ///< BC > 4095
  Adc,        ///< bits 0-14 of OTADC > 1023
  Vmm,        ///< VMM > 15
  Channel,    ///< channel > 63
  Count_
};
static_assert(static_cast<int>(ReadoutError::TimeFrac) ==
                  static_cast<int>(readout::CommonReadoutError::TimeFrac),
              "the common checks come first, in readout::CommonReadoutError's order");

/// Stable lowercase name of an error kind (the last part of its counter name).
constexpr const char *readoutErrorName(ReadoutError e) noexcept {
  switch (e) {
  case ReadoutError::Ok:
  case ReadoutError::Fiber:
  case ReadoutError::Fen:
  case ReadoutError::DataLength:
  case ReadoutError::TimeFrac:
    return readout::commonReadoutErrorName(static_cast<readout::CommonReadoutError>(e));
  case ReadoutError::Bc:
    return "bc";
  case ReadoutError::Adc:
    return "adc";
  case ReadoutError::Vmm:
    return "vmm";
  case ReadoutError::Channel:
    return "channel";
  case ReadoutError::Count_:
    break;
  }
  return "?";
}

/// Checks every field limit of a readout, in the order of the ReadoutError enum. Pure; hot path.
/// The caller has checked that the payload is a whole number of readouts.
constexpr ReadoutError checkReadout(const Vmm3Readout &r) noexcept {
  if (const auto e = readout::checkCommonFields(r); e != readout::CommonReadoutError::Ok) {
    return static_cast<ReadoutError>(e);
  }
  if (r.bc > kMaxBc) {
    return ReadoutError::Bc;
  }
  if ((r.otadc & ~kOverThresholdBit) > kMaxAdc) {
    return ReadoutError::Adc;
  }
  if (r.vmm > kMaxVmm) {
    return ReadoutError::Vmm;
  }
  if (r.channel > kMaxChannel) {
    return ReadoutError::Channel;
  }
  return ReadoutError::Ok;
}

/// The ADC value (bits 0-9) of a validated readout.
constexpr uint16_t adcOf(const Vmm3Readout &r) noexcept {
  return r.otadc & kMaxAdc;
}

/// The counters of the ESS VMM3 readout parser, under the ESS EFU's names (docs/counters.md),
/// registered by every VMM3 family's module in its constructor as stream counters (every
/// partition parses every readout; partition 0 counts them):
///   readouts.count          readouts of payloads that are a whole number of readouts
///   readouts.error_size     payloads that are not (datagrams; the whole datagram is dropped)
///   readouts.error_<kind>   one per ReadoutError (readoutErrorName())
///   readouts.data           valid readouts with GEO bit 7 clear
///   readouts.bccalib        valid readouts with GEO bit 7 set
///   readouts.over_threshold valid readouts with OTADC bit 15 set
struct ParserCounters {
  explicit ParserCounters(sdk::ModuleContext &ctx)
      : readouts(ctx.streamCounter("readouts.count")),
        sizeErrors(ctx.streamCounter("readouts.error_size")),
        data(ctx.streamCounter("readouts.data")), calib(ctx.streamCounter("readouts.bccalib")),
        overThreshold(ctx.streamCounter("readouts.over_threshold")) {
    for (size_t i = 1; i < errors.size(); ++i) {
      errors[i] = &ctx.streamCounter(std::string("readouts.error_") +
                               readoutErrorName(static_cast<ReadoutError>(i)));
    }
  }
  Counter &readouts;
  Counter &sizeErrors;
  Counter &data;
  Counter &calib;
  Counter &overThreshold;
  std::array<Counter *, static_cast<size_t>(ReadoutError::Count_)> errors{}; ///< [Ok] unused
};

/// Walks a datagram's payload as the ESS VMM3 parser does and calls `onValid(const
/// Vmm3Readout &)` for each readout that passes checkReadout(), in order. A payload that is not
/// a whole number of readouts counts readouts.error_size and nothing else: returns false. The
/// counts are kept in registers and added once. Hot path; `onValid` is inlined.
template <class OnValid>
bool forEachReadout(const uint8_t *payload, size_t bytes, ParserCounters &counters,
                    OnValid &&onValid) noexcept {
  if (bytes % kReadoutBytes != 0) {
    counters.sizeErrors.add();
    return false;
  }
  const size_t count = bytes / kReadoutBytes;
  std::array<int64_t, static_cast<size_t>(ReadoutError::Count_)> errors{};
  int64_t calib = 0; // sums of the GEO bit 7 and OTADC bit 15 themselves: shifted down once
  int64_t over = 0;
  const uint8_t *const end = payload + count * kReadoutBytes;
  for (const uint8_t *p = payload; p != end; p += kReadoutBytes) {
    Vmm3Readout r;
    std::memcpy(&r, p, kReadoutBytes);
    const ReadoutError e = checkReadout(r);
    if (e != ReadoutError::Ok) {
      ++errors[static_cast<size_t>(e)];
      continue;
    }
    over += r.otadc & kOverThresholdBit;
    calib += r.geo & 0x80;
    onValid(r);
  }
  calib >>= 7;
  over >>= 15;
  int64_t bad = 0;
  for (size_t i = 1; i < errors.size(); ++i) {
    if (errors[i] != 0) {
      counters.errors[i]->add(errors[i]);
      bad += errors[i];
    }
  }
  counters.readouts.add(static_cast<int64_t>(count));
  counters.data.add(static_cast<int64_t>(count) - bad - calib);
  counters.calib.add(calib);
  counters.overThreshold.add(over);
  return true;
}

} // namespace efu::vmm3
