// SPDX-License-Identifier: BSD-2-Clause
#include "modules/perfgen/PerfgenModule.h"

namespace efu::perfgen {
namespace {

/// The daemon ticks a module about this often (and at least this often; efu/Runtime.cpp).
constexpr uint64_t kTicksPerSecond = 100;

} // namespace

PerfgenCounters::PerfgenCounters(sdk::ModuleContext &ctx)
    : datagrams(ctx.counter("readouts.count")), events(ctx.counter("events.count")),
      udder(ctx.counter("events.udder")), batches(ctx.counter("perfgen.batches")),
      skippedBatches(ctx.counter("perfgen.skipped_batches")),
      skippedEvents(ctx.counter("perfgen.skipped_events")),
      clockRestarts(ctx.counter("perfgen.clock_restarts")) {}

PerfgenModule::PerfgenModule(sdk::ModuleContext &ctx)
    : config_(ctx.config(), ctx.configSource()), events_(ctx.events()), counters_(ctx),
      walk_(config_.width, config_.height),
      schedule_(config_.milliBatchesPerSecond, config_.maxBatchesPerTick()) {
  const double rate = static_cast<double>(config_.milliBatchesPerSecond) / 1000;
  ctx.log().info("perfgen: {} batches/s of {} events ({} events/s), a {} x {} test image of {} "
                 "lit pixels, at most {} batches per tick",
                 rate, config_.eventsPerBatch, rate * config_.eventsPerBatch, config_.width,
                 config_.height, walk_.litPixels(), config_.maxBatchesPerTick());
  // Batches falling due in one 10-ms tick beyond the bound are skipped in every tick: say so now.
  const uint64_t perTick = config_.milliBatchesPerSecond / (1000 * kTicksPerSecond);
  if (perTick > config_.maxBatchesPerTick()) {
    ctx.log().warn("perfgen: about {} batches fall due per 10-ms tick, more than "
                   "max_events_per_tick = {} lets one tick make ({}): the rest are skipped "
                   "(perfgen.skipped_batches); raise max_events_per_tick for this rate",
                   perTick, config_.maxEventsPerTick, config_.maxBatchesPerTick());
  }
}

void PerfgenModule::process(const sdk::Packet &packet) noexcept {
  (void)packet;
  counters_.datagrams.add();
}

void PerfgenModule::tick(int64_t nowNs) noexcept {
  const BatchSchedule::Step step = schedule_.advance(nowNs);
  if (step.restarted) {
    counters_.clockRestarts.add();
  }
  if (step.skipped > 0) {
    counters_.skippedBatches.add(static_cast<int64_t>(step.skipped));
    counters_.skippedEvents.add(static_cast<int64_t>(step.skipped * config_.eventsPerBatch));
  }
  for (uint64_t k = step.first; k < step.first + step.count; ++k) {
    // One reference time per batch, its due time: distinct per batch (rate <= 1e6/s), so the
    // event sink's one-pulse-per-message rule makes each batch a message of its own.
    const int64_t referenceNs = schedule_.dueNs(k);
    for (uint32_t tof = 0; tof < config_.eventsPerBatch; ++tof) {
      events_.add(referenceNs, static_cast<int32_t>(tof), walk_.next());
    }
  }
  const auto made = static_cast<int64_t>(step.count);
  counters_.batches.add(made);
  counters_.events.add(made * config_.eventsPerBatch);
  counters_.udder.add(made * config_.eventsPerBatch);
}

} // namespace efu::perfgen
