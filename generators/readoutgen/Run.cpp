// SPDX-License-Identifier: BSD-2-Clause
#include "generators/readoutgen/Run.h"

#include "common/net/LineRate.h"
#include "common/net/PcapWriter.h"
#include "common/sdk/CalibrationCheck.h"
#include "common/system/BoundedJson.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "generators/readoutgen/Generator.h"
#include "generators/readoutgen/Pattern.h"
#include "generators/readoutgen/Sources.h"
#include "generators/readoutgen/TruthCsv.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace efu::readoutgen {
namespace {

/// Sends each datagram; with a capture, also writes the ones the socket took (--pcap-out),
/// stamped with the time they were sent.
class CapturingSink final : public DatagramSink {
public:
  CapturingSink(DatagramSink &inner, PcapWriter *pcap) : inner_(inner), pcap_(pcap) {}
  bool send(std::span<const uint8_t> datagram) override {
    if (!inner_.send(datagram)) {
      return false;
    }
    if (pcap_ != nullptr && pcap_->write(datagram, realtimeNs())) {
      ++captured_;
    }
    return true;
  }
  [[nodiscard]] int lastErrno() const noexcept override { return inner_.lastErrno(); }
  [[nodiscard]] uint64_t captured() const noexcept { return captured_; }

private:
  DatagramSink &inner_;
  PcapWriter *pcap_;
  uint64_t captured_ = 0;
};

/// The line that says what this run sends, where and how fast.
void logStart(const GeneratorOptions &o, const Generator &gen) {
  spdlog::info("{} ({}) to {}:{}: image {} x {}, pattern {}, {} events/pulse at {} Hz, tof {}, "
               "datagrams <= {} B, {} queue(s), count {}, duration {}, {}",
               o.detector, o.configPath, o.address, o.port, gen.source().imageWidth(),
               gen.source().imageHeight(), o.maskPath.empty() ? o.pattern : o.maskPath,
               gen.eventsPerPulse(), o.pulseHz, o.tof.empty() ? "uniform over the period" : o.tof,
               o.sizeBytes, o.queues,
               o.count > 0 ? std::to_string(o.count) : std::string("unlimited"),
               o.durationS > 0 ? fmt::format("{} s", o.durationS) : std::string("unlimited"),
               o.rateEventsPerS > 0 || o.bitsPerS > 0
                   ? fmt::format("paced at {} events/s, {}", o.rateEventsPerS,
                                 o.bitsPerS > 0 ? formatBitRate(o.bitsPerS) : "no bit limit")
                   : std::string("unpaced"));
}

/// About once a second: the rates since the previous line and the totals so far.
std::function<void(const GeneratorSummary &)> progressLog() {
  return [last = GeneratorSummary{}](const GeneratorSummary &s) mutable {
    const double dt = s.elapsedS - last.elapsedS;
    spdlog::info("{:8.3f} M events/s {:9.1f} Mb/s  events {}  datagrams {}  injected {}  "
                 "altered {}  send errors {}",
                 dt > 0 ? static_cast<double>(s.events - last.events) / dt / 1e6 : 0.0,
                 dt > 0 ? static_cast<double>(s.bytes - last.bytes) * 8 / dt / 1e6 : 0.0, s.events,
                 s.datagrams, s.injected, s.altered, s.sendErrors.total());
    last = s;
  };
}

} // namespace

std::optional<int64_t> maxPulseGapNs(const nlohmann::json &config) {
  if (!config.is_object()) {
    return std::nullopt;
  }
  if (const auto it = config.find("MaxPulseTimeNS");
      it != config.end() && it->is_number_integer()) {
    return it->get<int64_t>();
  }
  if (const auto it = config.find("MaxPulseTimeDiffNS");
      it != config.end() && it->is_number_unsigned()) {
    bool wrapped = false;
    return sdk::essUint32(*it, wrapped);
  }
  return std::nullopt;
}

void run(ReadoutgenOptions options) {
  GeneratorOptions &o = options.generator;
  setupLogging("readoutgen", "info", "");
  installStopSignals();
  if (!options.bitRate.empty()) {
    o.bitsPerS = parseBitRate(options.bitRate);
  }
  const nlohmann::json config = readJsonFile(o.configPath);
  if (const auto gap = maxPulseGapNs(config)) {
    o.maxPulseGapNs = *gap;
  }
  const nlohmann::json calibration =
      o.calibrationPath.empty() ? nlohmann::json() : readJsonFile(o.calibrationPath);
  auto source = makeSource(o.detector, config, o.configPath, o.seed, o.moduleDirs, calibration,
                           o.calibrationPath);
  const uint32_t w = source->imageWidth();
  const uint32_t h = source->imageHeight();
  Pattern pattern =
      o.maskPath.empty() ? Pattern(o.pattern, w, h) : Pattern(readPgm(o.maskPath), w, h);
  UdpDatagramSink udp(o.address, o.port);
  std::optional<PcapWriter> pcap;
  if (!o.pcapOutPath.empty()) {
    pcap.emplace(o.pcapOutPath, o.port, o.port);
  }
  CapturingSink sink(udp, pcap ? &*pcap : nullptr);
  Generator gen(o, std::move(source), std::move(pattern), sink);
  std::optional<TruthCsvWriter> truth;
  if (!o.truthPath.empty()) {
    truth.emplace(o.truthPath, gen.source().namesSources());
    gen.onTruth([&truth](const TruthEvent &e) { truth->write(e); });
  }
  logStart(o, gen);
  const GeneratorSummary summary = gen.run(
      stopFlag(), o.quiet ? std::function<void(const GeneratorSummary &)>() : progressLog());
  if (truth) {
    truth->close();
  }
  if (gen.alterationsOwed() > 0) {
    spdlog::warn("--inject-errors prev_after_pulse: {} not sent: the run had too few valid "
                 "datagrams (one in every --inject-every carries one)",
                 gen.alterationsOwed());
  }
  if (pcap) {
    pcap.reset(); // closes the file: errors throw here, naming it
    spdlog::info("wrote {} datagrams to {}", sink.captured(), o.pcapOutPath);
  }
  spdlog::default_logger()->flush();
  std::fputs(summaryText(summary).c_str(), stderr);
  if (o.json) {
    std::printf("%s\n", summaryJson(summary).c_str());
    std::fflush(stdout);
  }
}

} // namespace efu::readoutgen
