// SPDX-License-Identifier: BSD-2-Clause
// Counter registration for the ESS header parser and the TOF calculator.
#include "common/readout/EssReadout.h"

namespace efu::readout {
namespace {

std::string name(std::string_view prefix, std::string_view rest) {
  std::string out(prefix);
  out += '.';
  out += rest;
  return out;
}

} // namespace

HeaderCounters::HeaderCounters(sdk::ModuleContext &ctx, std::string_view prefix)
    : ok(ctx.counter(name(prefix, "header.ok"))),
      heartbeats(ctx.counter(name(prefix, "header.heartbeats"))),
      seqLost(ctx.counter(name(prefix, "seq.lost"))),
      seqExpected(ctx.counter(name(prefix, "seq.expected"))),
      seqReordered(ctx.counter(name(prefix, "seq.reordered"))),
      seqRestarts(ctx.counter(name(prefix, "seq.restarts"))) {
  errors[0] = &ok; // never incremented through error(); keeps every slot non-null
  for (size_t i = 1; i < errors.size(); ++i) {
    const auto kind = static_cast<HeaderError>(i);
    errors[i] = &ctx.counter(name(prefix, std::string("header.errors.") + headerErrorName(kind)));
  }
  for (size_t q = 0; q < queuePackets.size(); ++q) {
    const char digits[] = {static_cast<char>('0' + q / 10), static_cast<char>('0' + q % 10), '\0'};
    queuePackets[q] = &ctx.counter(name(prefix, std::string("queue.") + digits + ".packets"));
  }
}

TofCounters::TofCounters(sdk::ModuleContext &ctx, std::string_view prefix)
    : ok(ctx.counter(name(prefix, "tof.ok"))), prevPulse(ctx.counter(name(prefix, "tof.prev_pulse"))),
      negative(ctx.counter(name(prefix, "tof.errors.negative"))),
      tooLarge(ctx.counter(name(prefix, "tof.errors.too_large"))) {}

} // namespace efu::readout
