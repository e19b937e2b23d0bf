// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 readout (docs/wire-formats.md §3), shared by the VMM3 families: the 20-byte
// packed layout, field limits and the checks in the ESS EFU's order.
#pragma once

#include "common/readout/EssHeader.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

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

/// Stable lowercase name of an error kind (the last part of its counter name).
constexpr const char *readoutErrorName(ReadoutError e) noexcept {
  switch (e) {
  case ReadoutError::Ok:
    return "ok";
  case ReadoutError::Fiber:
    return "fiber";
  case ReadoutError::Fen:
    return "fen";
  case ReadoutError::DataLength:
    return "datalen";
  case ReadoutError::TimeFrac:
    return "timefrac";
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
  if (r.fiber > readout::kMaxFiber) {
    return ReadoutError::Fiber;
  }
  if (r.fen > readout::kMaxFen) {
    return ReadoutError::Fen;
  }
  if (r.length != kReadoutBytes) {
    return ReadoutError::DataLength;
  }
  if (r.timeLow > readout::kMaxTicksLow) {
    return ReadoutError::TimeFrac;
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

} // namespace efu::vmm3
