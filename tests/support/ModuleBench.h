// SPDX-License-Identifier: BSD-2-Clause
// The loop of a module benchmark: datagrams through Module::process() in a cycle, readouts/s.
#pragma once

#include "common/readout/EssHeader.h"
#include "tests/support/SourceDatagrams.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace efu::readout::test {

/// One datagram of `datagrams` per iteration, in a cycle. Items (and the "readouts/s" counter)
/// are readouts: each datagram's payload after its ESS header over `readoutBytes`. Returns the
/// full passes over `datagrams`, for checking that every encoded neutron became an event.
template <typename Module>
int64_t processInCycle(benchmark::State &state, Module &module,
                       const std::vector<std::vector<uint8_t>> &datagrams, size_t readoutBytes) {
  size_t i = 0;
  int64_t readouts = 0;
  int64_t passes = 0;
  for (auto _ : state) {
    const std::vector<uint8_t> &d = datagrams[i];
    module.process(packetOf(d));
    readouts += static_cast<int64_t>((d.size() - headerBytes(0)) / readoutBytes);
    if (++i == datagrams.size()) {
      i = 0;
      ++passes;
    }
  }
  state.SetItemsProcessed(readouts);
  state.counters["readouts/s"] =
      benchmark::Counter(static_cast<double>(readouts), benchmark::Counter::kIsRate);
  state.counters["readouts/datagram"] =
      static_cast<double>(readouts) / static_cast<double>(state.iterations());
  return passes;
}

} // namespace efu::readout::test
