// SPDX-License-Identifier: BSD-2-Clause
// The cbm module: beam monitor readouts → ev44 events and da00 histograms.
#include "modules/cbm/CbmModule.h"

#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace efu::cbm {

CbmCounters::CbmCounters(sdk::ModuleContext &ctx)
    : readouts(ctx.streamCounter("parser.readout.count")),
      byType{&ctx.streamCounter("parser.readout.0d"), &ctx.streamCounter("parser.readout.2d"),
             &ctx.streamCounter("parser.readout.ibm")},
      sizeErrors(ctx.streamCounter("parser.readout.errors.size")),
      noData(ctx.streamCounter("parser.readout.errors.no_data")),
      validation(ctx.streamCounter("geometry.validation_errors")),
      pixelErrors(ctx.counter("geometry.pixel_errors")),
      processed(ctx.counter("readouts.processed")), ibm(ctx.counter("events.ibm")),
      event0d(ctx.counter("events.event0d")), event2d(ctx.counter("events.event2d")),
      nposSum(ctx.counter("events.ibm_npos_sum")), events(ctx.counter("events.count")) {
  for (size_t i = 1; i < readoutErrors.size(); ++i) {
    readoutErrors[i] = &ctx.streamCounter(std::string("parser.readout.errors.") +
                                          readoutErrorName(static_cast<ReadoutError>(i)));
  }
  for (size_t i = 0; i < geometryErrors.size(); ++i) {
    geometryErrors[i] = &ctx.streamCounter(geometryErrorCounter(static_cast<GeometryError>(i)));
  }
}

namespace {

/// ConfigError("<file>: Topology[<index>].BinCount = <value>: <what>").
[[noreturn]] void refuseBinCount(sdk::ModuleContext &ctx, size_t index, const std::string &what) {
  sdk::CalibrationCheck(ctx.configSource(), "")
      .fail(fmt::format("Topology[{}].BinCount", index),
            ctx.config().at("Topology").at(index).at("BinCount"), what);
}

/// Before any histogram is allocated: every da00 monitor's message fits its sink, and all
/// histograms together fit CbmModule::kMaxHistogramBytes (issue 37: 200 000 bins were accepted
/// and every message then failed in the producer; 2^31 - 1 bins ended in a bare std::bad_alloc).
void checkHistograms(sdk::ModuleContext &ctx, const CbmConfig &config) {
  uint64_t histogramBytes = 0;
  for (size_t i = 0; i < config.monitors.size(); ++i) {
    const Monitor &m = config.monitors[i];
    if (m.schema != Schema::Da00) {
      continue;
    }
    const uint64_t limit = ctx.dataArrays(m.source).maxMessageBytes();
    if (const uint64_t bytes = TofHistogram::messageBytes(m); bytes > limit) {
      refuseBinCount(ctx, i,
                     fmt::format("its da00 message would take up to {} bytes, more than the {} a "
                                 "message may have (the Kafka producer's message.max.bytes in "
                                 "effect, less its record overhead); at most {} bins fit with "
                                 "this Source and AggregatedFrames {}",
                                 bytes, limit, TofHistogram::maxBins(m, limit),
                                 m.aggregatedFrames));
    }
    histogramBytes += TofHistogram::memoryBytes(m);
    if (histogramBytes > CbmModule::kMaxHistogramBytes) {
      refuseBinCount(ctx, i,
                     fmt::format("the histograms would hold {} bytes with this one (16 per bin), "
                                 "more than the {} (1 GiB) allowed over all monitors",
                                 histogramBytes, CbmModule::kMaxHistogramBytes));
    }
  }
}

/// Topology[index]'s histogram; a machine that cannot hold it is a ConfigError too.
std::unique_ptr<TofHistogram> makeHistogram(sdk::ModuleContext &ctx, const Monitor &m,
                                            size_t index) {
  try {
    return std::make_unique<TofHistogram>(m);
  } catch (const std::bad_alloc &) {
    refuseBinCount(
        ctx, index,
        fmt::format("no memory for its histogram ({} bytes)", TofHistogram::memoryBytes(m)));
  }
}

} // namespace

CbmModule::CbmModule(sdk::ModuleContext &ctx)
    : config_(parseCbmConfig(ctx.config(), ctx.configSource())), headerCounters_(ctx),
      parser_(headerCounters_, {config_.detectorType()}, config_.maxPulseTimeDiffNs),
      tofCounters_(ctx), tof_(tofCounters_, config_.maxTofNs), counters_(ctx),
      partition_(ctx.partition()), partitions_(ctx.partitions()),
      outputs_(config_.monitors.size()) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  checkHistograms(ctx, config_);
  for (size_t i = 0; i < config_.monitors.size(); ++i) {
    const Monitor &m = config_.monitors[i];
    Output &out = outputs_[i];
    if (m.schema == Schema::Ev44) {
      out.events = &ctx.events(m.source);
    } else {
      out.arrays = &ctx.dataArrays(m.source);
      const std::string prefix = "serialize." + counterSegment(m.source) + ".";
      out.produceCalled = &ctx.counter(prefix + "produce_called");
      out.producePulse = &ctx.counter(prefix + "produce_triggered_reftime");
      out.beforeOffset = &ctx.counter(prefix + "tof_before_offset_dropped");
      out.overMax = &ctx.counter(prefix + "tof_over_max_dropped");
      out.histograms = &ctx.counter(prefix + "histograms");
      out.refused = &ctx.counter(prefix + "histograms_refused");
      if (mine(i)) { // another partition holds the histograms of its monitors
        out.histogram = makeHistogram(ctx, m, i);
        histogramOutputs_.push_back(i);
      }
    }
    ctx.log().info("cbm: Topology[{}] FEN {} Channel {}: {} '{}' to {}{}", i, m.fen, m.channel,
                   typeName(m.type), m.source, m.schema == Schema::Ev44 ? "ev44" : "da00",
                   m.type == MonitorType::Ibm && m.schema == Schema::Da00
                       ? fmt::format(" ({} bins of {} ns, {} pulse(s) per message, {})", m.binCount,
                                     m.binWidth(), m.aggregatedFrames,
                                     m.aggregation == Aggregation::Sum ? "sum" : "average")
                       : std::string());
  }
  targets_.resize(config_.monitors.size());
  for (size_t i = 0; i < config_.monitors.size(); ++i) {
    const Monitor &m = config_.monitors[i];
    Target &t = targets_[i];
    t.type = static_cast<uint8_t>(m.type);
    t.mine = mine(i);
    t.ibm = m.type == MonitorType::Ibm ? ~uint32_t{0} : 0;
    t.pixelError = m.type == MonitorType::Event0D && m.pixelOffset == 0 ? 1 : 0;
    const bool is2D = m.type == MonitorType::Event2D;
    t.xLimit = is2D ? m.width : 65536;
    t.yLimit = is2D ? m.height : 65536;
    t.xScale = is2D ? 1 : 0;
    t.yScale = is2D ? m.width : 0;
    t.base = static_cast<uint32_t>(m.pixelOffset) + (is2D ? 1 : 0);
    t.out = &outputs_[i];
    t.histogram = outputs_[i].histogram != nullptr ? 1 : 0;
  }
  for (size_t type = 0; type < badType_.size(); ++type) {
    CbmReadout r{};
    r.length = kReadoutBytes;
    r.type = static_cast<uint8_t>(type);
    badType_[type] = checkReadout(r, config_.beer) == ReadoutError::Type;
  }
  for (uint8_t fiber = 0; fiber <= kMaxFiber; ++fiber) {
    for (uint8_t fen = 0; fen <= kMaxFen; ++fen) {
      const auto ring = static_cast<uint8_t>(fiber / 2);
      const GeometryError g = ring > config_.maxRing        ? GeometryError::Ring
                              : ring != config_.monitorRing ? GeometryError::MonitorRing
                              : fen > config_.maxFenId      ? GeometryError::Fen
                                                            : GeometryError::Count_;
      fiberFen_[size_t{fiber} * (kMaxFen + 1) + fen] =
          g == GeometryError::Count_ ? 0 : static_cast<uint8_t>(static_cast<uint8_t>(g) + 1);
    }
  }
  if (config_.beer) {
    ctx.log().info("cbm: {}: BEER: detector type 0x50, EVENT_2D readouts only", ctx.configSource());
  }
  if (config_.maxTofWrapped) {
    ctx.log().warn("cbm: {}: MaxTOFNS is beyond 32 bits; read modulo 2^32 as the ESS EFU reads "
                   "it: {} ns",
                   ctx.configSource(), config_.maxTofNs);
  }
  if (config_.maxPulseWrapped) {
    ctx.log().warn("cbm: {}: MaxPulseTimeDiffNS is beyond 32 bits; read modulo 2^32 as the ESS "
                   "EFU reads it: {} ns",
                   ctx.configSource(), config_.maxPulseTimeDiffNs);
  }
}

void CbmModule::publish(Output &out) noexcept {
  out.produceCalled->add(1);
  if (out.histogram->take()) {
    const auto variables = out.histogram->variables();
    // Published is what the producer took (issue 37: messages it refused as too large were
    // counted here as well as in kafka.failed).
    if (out.arrays->publish(out.histogram->timestampNs(), variables)) {
      out.histograms->add(1);
    } else {
      out.refused->add(1);
    }
  }
}

void CbmModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h)) {
    return;
  }
  // Every valid header moves the histograms to its pulse, readouts or not (as the ESS EFU);
  // every partition reads every header and moves its own.
  for (const size_t i : histogramOutputs_) {
    Output &out = outputs_[i];
    if (out.histogram->completes(h.pulseTimeNs)) {
      publish(out);
      out.producePulse->add(1);
    }
    out.histogram->advance(h.pulseTimeNs);
  }
  if (h.payloadBytes == 0) {
    counters_.noData.add(1);
    return;
  }
  if (h.payloadBytes % kReadoutBytes != 0) {
    counters_.sizeErrors.add(1);
    return;
  }
  const size_t count = h.payloadBytes / kReadoutBytes;
  std::array<int64_t, static_cast<size_t>(ReadoutError::Count_)> readoutErrors{};
  std::array<int64_t, static_cast<size_t>(GeometryError::Count_)> geometryErrors{};
  std::array<int64_t, 3> byType{};
  int64_t pixelErrors = 0;
  int64_t processed = 0;
  std::array<int64_t, 3> eventsByType{}; // events.event0d, event2d, ibm, by type - 1
  int64_t npos = 0;
  readout::TofTally tofTally;
  // Locals: the sinks' virtual calls would make the compiler reload the members per readout.
  const bool normalizeIbm = config_.normalizeIbm;
  const Target *targets = targets_.data();
  const int16_t *slots = config_.slots.data();
  // Blocks of readouts in two passes: the first checks them and stages each entry for its
  // monitor's kind, the second hands the staged entries to the ev44 sinks and to the
  // histograms. The kinds come mixed, and a branch per readout on the kind would be
  // mispredicted about half of the time; the staging writes every entry to both lists and
  // advances one of them.
  struct Staged {
    Output *out;
    int64_t pulseTimeNs;
    int32_t tofNs;
    int32_t value;
  };
  constexpr size_t kBlock = 128;
  Staged toEvents[kBlock];
  Staged toHistograms[kBlock];
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t last = std::min(count, first + kBlock);
    size_t nEvents = 0;
    size_t nHistograms = 0;
    for (size_t i = first; i < last; ++i) {
      CbmReadout r;
      std::memcpy(&r, h.payload + i * kReadoutBytes, kReadoutBytes);
      // checkReadout(), its type check by table.
      if (const auto e = readout::checkCommonFields(r); e != readout::CommonReadoutError::Ok) {
        ++readoutErrors[static_cast<size_t>(e)];
        continue;
      }
      if (badType_[r.type]) {
        ++readoutErrors[static_cast<size_t>(ReadoutError::Type)];
        continue;
      }
      ++byType[r.type - 1];
      // checkGeometry() in its order, by tables.
      if (const uint8_t g = fiberFen_[size_t{r.fiber} * (kMaxFen + 1) + r.fen]; g != 0) {
        ++geometryErrors[g - 1U];
        continue;
      }
      const int16_t slot = slots[size_t{r.fen} * 256 + r.channel];
      if (slot < 0) {
        ++geometryErrors[static_cast<size_t>(GeometryError::Topology)];
        continue;
      }
      const Target &target = targets[static_cast<size_t>(slot)];
      if (r.type != target.type) {
        ++geometryErrors[static_cast<size_t>(GeometryError::Type)];
        continue;
      }
      const uint32_t x = r.x();
      const uint32_t y = r.y();
      if (x >= target.xLimit) {
        ++geometryErrors[static_cast<size_t>(GeometryError::XPos)];
        continue;
      }
      if (y >= target.yLimit) {
        ++geometryErrors[static_cast<size_t>(GeometryError::YPos)];
        continue;
      }
      if (!target.mine) {
        continue;
      }
      readout::Tof t;
      if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, t, tofTally)) {
        continue;
      }
      // The ev44 pixel or what the histogram adds, computed for every type and selected.
      const uint32_t linear = y * target.yScale + x * target.xScale + target.base;
      const uint32_t ibmAdc = ibmValueFast(r, normalizeIbm);
      const auto value = static_cast<int32_t>((ibmAdc & target.ibm) | (linear & ~target.ibm));
      pixelErrors += target.pixelError;
      ++processed;
      // Counted as an event here; a histogram that drops the entry takes it back below.
      // r.type is the entry's type, 1..3.
      ++eventsByType[r.type - 1];
      npos += static_cast<uint32_t>(value) & target.ibm;
      const Staged staged{target.out, t.pulseTimeNs, t.tofNs, value};
      const size_t toHistogram = target.histogram; // arithmetic: GCC would branch on a bool
      toEvents[nEvents] = staged;
      toHistograms[nHistograms] = staged;
      nEvents += toHistogram ^ 1U;
      nHistograms += toHistogram;
    }
    // Each monitor's entries in the datagram's order.
    for (size_t j = 0; j < nEvents; ++j) {
      const Staged &s = toEvents[j];
      s.out->events->add(s.pulseTimeNs, s.tofNs, s.value);
    }
    for (size_t j = 0; j < nHistograms; ++j) {
      const Staged &s = toHistograms[j];
      // Only what a bin holds is an event: an entry the histogram drops is counted there alone
      // (issue 37: 10 000 readouts past the last bin were also 10 000 events.ibm).
      const TofHistogram::Added added = s.out->histogram->add(s.tofNs, s.value);
      if (added != TofHistogram::Added::Binned) [[unlikely]] {
        (added == TofHistogram::Added::BeforeOffset ? s.out->beforeOffset : s.out->overMax)->add(1);
        // Histograms are IBM monitors' alone (CbmConfig), whose ibm mask is all ones.
        --eventsByType[static_cast<size_t>(MonitorType::Ibm) - 1];
        npos -= static_cast<uint32_t>(s.value);
      }
    }
  }
  tof_.add(tofTally);
  const int64_t event0d = eventsByType[static_cast<size_t>(MonitorType::Event0D) - 1];
  const int64_t event2d = eventsByType[static_cast<size_t>(MonitorType::Event2D) - 1];
  const int64_t ibm = eventsByType[static_cast<size_t>(MonitorType::Ibm) - 1];
  counters_.readouts.add(static_cast<int64_t>(count));
  for (size_t i = 1; i < readoutErrors.size(); ++i) {
    if (readoutErrors[i] != 0) {
      counters_.readoutErrors[i]->add(readoutErrors[i]);
    }
  }
  int64_t invalid = 0;
  for (size_t i = 0; i < geometryErrors.size(); ++i) {
    if (geometryErrors[i] != 0) {
      counters_.geometryErrors[i]->add(geometryErrors[i]);
      invalid += geometryErrors[i];
    }
  }
  for (size_t i = 0; i < byType.size(); ++i) {
    if (byType[i] != 0) {
      counters_.byType[i]->add(byType[i]);
    }
  }
  counters_.validation.add(invalid);
  counters_.pixelErrors.add(pixelErrors);
  counters_.processed.add(processed);
  counters_.ibm.add(ibm);
  counters_.event0d.add(event0d);
  counters_.event2d.add(event2d);
  counters_.nposSum.add(npos);
  counters_.events.add(ibm + event0d + event2d);
}

void CbmModule::flush() noexcept {
  for (const size_t i : histogramOutputs_) {
    Output &out = outputs_[i];
    if (out.histogram->lastFrame()) {
      publish(out);
    }
  }
}

} // namespace efu::cbm
