// SPDX-License-Identifier: BSD-2-Clause
// Counter registration for the ESS header parser and the TOF calculator.
#include "common/readout/EssReadout.h"

namespace efu::readout {
HeaderCounters::HeaderCounters(sdk::ModuleContext &ctx)
    : ok(ctx.counter("parser.essheader.ok")),
      heartbeats(ctx.counter("parser.essheader.heartbeats")),
      prevAfterPulse(ctx.counter("parser.essheader.prev_after_pulse")),
      seqLost(ctx.counter("parser.essheader.seq.lost")),
      seqExpected(ctx.counter("parser.essheader.seq.expected")),
      seqReordered(ctx.counter("parser.essheader.seq.reordered")),
      seqRestarts(ctx.counter("parser.essheader.seq.restarts")),
      seqStale(ctx.counter("parser.essheader.seq.stale")) {
  errors[0] = &ok; // never incremented through error(); keeps every slot non-null
  for (size_t i = 1; i < errors.size(); ++i) {
    const auto kind = static_cast<HeaderError>(i);
    errors[i] = &ctx.counter(std::string("parser.essheader.errors.") + headerErrorName(kind));
  }
  for (size_t q = 0; q < queuePackets.size(); ++q) {
    const char digits[] = {static_cast<char>('0' + q / 10), static_cast<char>('0' + q % 10), '\0'};
    queuePackets[q] = &ctx.counter(std::string("parser.essheader.oq.") + digits + ".packets");
  }
}

TofCounters::TofCounters(sdk::ModuleContext &ctx)
    : ok(ctx.counter("events.timestamp.tof.count")),
      negative(ctx.counter("events.timestamp.tof.negative")),
      tooLarge(ctx.counter("events.timestamp.tof.high")),
      prevOk(ctx.counter("events.timestamp.prevtof.count")),
      prevNegative(ctx.counter("events.timestamp.prevtof.negative")),
      prevTooLarge(ctx.counter("events.timestamp.prevtof.high")) {}

} // namespace efu::readout
