// SPDX-License-Identifier: BSD-2-Clause
// A valid ESS VMM3 readout for the tests of the VMM3 families (vmm3, nmx, trex).
#pragma once

#include "common/readout/Vmm3Readout.h"

#include <cstdint>

namespace efu::vmm3::test {

/// A valid readout (every field within its limits): fiber 2 * ring, time (high, low), raw
/// OTADC `otadc`, fine time `tdc`.
inline Vmm3Readout readout(uint8_t ring, uint8_t fen, uint8_t vmm, uint8_t channel, uint16_t otadc,
                           uint32_t high, uint32_t low, uint8_t tdc = 0) {
  Vmm3Readout r{};
  r.fiber = static_cast<uint8_t>(2 * ring);
  r.fen = fen;
  r.length = kReadoutBytes;
  r.timeHigh = high;
  r.timeLow = low;
  r.bc = 0;
  r.otadc = otadc;
  r.geo = 0;
  r.tdc = tdc;
  r.vmm = vmm;
  r.channel = channel;
  return r;
}

} // namespace efu::vmm3::test
