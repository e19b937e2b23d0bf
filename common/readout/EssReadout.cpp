// SPDX-License-Identifier: BSD-2-Clause
// Counter registration for the ESS header parser and the TOF calculator.
#include "common/readout/EssReadout.h"

namespace efu::readout {
HeaderCounters::HeaderCounters(sdk::ModuleContext &ctx)
    : ok(ctx.streamCounter("parser.essheader.ok")),
      heartbeats(ctx.streamCounter("parser.essheader.heartbeats")),
      prevAfterPulse(ctx.streamCounter("parser.essheader.prev_after_pulse")),
      seqLost(ctx.streamCounter("parser.essheader.seq.lost")),
      seqExpected(ctx.streamCounter("parser.essheader.seq.expected")),
      seqReordered(ctx.streamCounter("parser.essheader.seq.reordered")),
      seqRestarts(ctx.streamCounter("parser.essheader.seq.restarts")),
      seqStale(ctx.streamCounter("parser.essheader.seq.stale")) {
  errors[0] = &ok; // never incremented through error(); keeps every slot non-null
  for (size_t i = 1; i < errors.size(); ++i) {
    const auto kind = static_cast<HeaderError>(i);
    errors[i] = &ctx.streamCounter(std::string("parser.essheader.errors.") + headerErrorName(kind));
  }
  for (size_t q = 0; q < queuePackets.size(); ++q) {
    const char digits[] = {static_cast<char>('0' + q / 10), static_cast<char>('0' + q % 10), '\0'};
    queuePackets[q] = &ctx.streamCounter(std::string("parser.essheader.oq.") + digits + ".packets");
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
