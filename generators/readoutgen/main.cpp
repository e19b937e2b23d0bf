// SPDX-License-Identifier: BSD-2-Clause
// readoutgen: ESS readout datagrams (header + detector readouts) with ground truth, paced.
#include "common/net/LineRate.h"
#include "common/net/PcapWriter.h"
#include "common/system/BoundedJson.h"
#include "common/system/CliAliases.h"
#include "common/system/CliChecks.h"
#include "common/system/CliExit.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "generators/readoutgen/Generator.h"
#include "generators/readoutgen/Pattern.h"
#include "generators/readoutgen/Sources.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>

namespace {

/// Sends each datagram; with a capture, also writes the ones the socket took (--pcap-out),
/// stamped with the time they were sent.
class CapturingSink final : public efu::readoutgen::DatagramSink {
public:
  CapturingSink(efu::readoutgen::DatagramSink &inner, efu::PcapWriter *pcap)
      : inner_(inner), pcap_(pcap) {}
  bool send(std::span<const uint8_t> datagram) override {
    if (!inner_.send(datagram)) {
      return false;
    }
    if (pcap_ != nullptr && pcap_->write(datagram, efu::realtimeNs())) {
      ++captured_;
    }
    return true;
  }
  [[nodiscard]] uint64_t captured() const noexcept { return captured_; }

private:
  efu::readoutgen::DatagramSink &inner_;
  efu::PcapWriter *pcap_;
  uint64_t captured_ = 0;
};

} // namespace

int main(int argc, char **argv) {
  using namespace efu;
  using namespace efu::readoutgen;

  CLI::App app{"readoutgen: ESS readout datagrams (docs/wire-formats.md §2-4) for a detector module, "
               "driven by the module's instrument JSON, with optional ground truth (--truth)."};
  GeneratorOptions o;
  std::string bitRate;
  auto *detectorOption = app.add_option("-d,--det", o.detector,
                                        "Detector module whose readouts to generate (any module "
                                        "that describes its readout source; see --help-modules)")
                             ->capture_default_str();
  auto *configOption =
      app.add_option("-f,--config", o.configPath, "Instrument JSON (the module's --config file)")
          ->required()
          ->check(efu::cli::kRegularFile);
  app.add_option("--calibration", o.calibrationPath,
                 "Calibration JSON as given to efu --calibration: readouts are written so that the "
                 "calibrated module recovers the drawn pixels (caen)")
      ->check(efu::cli::kRegularFile);
  auto *addressOption =
      app.add_option("-i,--dip", o.address, "Destination IPv4 address")->capture_default_str();
  app.add_option("--module-path", o.moduleDirs,
                 "Directories searched first for efu-module-NAME.so (as efu --module-path)");
  bool listModules = false;
  app.add_flag("--help-modules", listModules, "List the modules readoutgen can generate for");
  app.add_option("-p,--port", o.port, "Destination UDP port")->capture_default_str();
  app.add_option("-n,--count", o.count, "Events to send (0 = unlimited)")->capture_default_str();
  auto *stopAfterOption =
      app.add_option("--stopafter", o.durationS, "Seconds to run (0 = unlimited)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  auto *epsOption =
      app.add_option("--eps", o.rateEventsPerS, "Events per second (0 = as fast as possible)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  app.add_option("--bitrate", bitRate,
                 "Datagram bytes per second as a bit rate, e.g. 500M, 2G (with --eps: the "
                 "slower of the two)");
  app.add_option("-s,--size", o.sizeBytes, "Largest datagram, bytes (header + readouts)")
      ->capture_default_str();
  app.add_option("--pulse-hz", o.pulseHz, "Pulse frequency")->capture_default_str();
  app.add_option("--events-per-pulse", o.eventsPerPulse,
                 "Events per pulse (0 = eps / pulse-hz when --eps is set, else 1000)")
      ->capture_default_str();
  app.add_option("--tof", o.tof,
                 "TOF distribution: uniform:MIN_MS:MAX_MS or gauss:MEAN_MS:SIGMA_MS (default: "
                 "uniform over one pulse period)");
  app.add_option("--pattern", o.pattern, "Test pattern: " + Pattern::builtinNames())
      ->capture_default_str();
  app.add_option("--mask", o.maskPath, "PGM mask (P2/P5): neutrons on pixels brighter than "
                                       "half maxval; overrides --pattern")
      ->check(efu::cli::kRegularFile);
  app.add_option("--queues", o.queues, "Output queues used round-robin (1..12)")
      ->capture_default_str();
  app.add_option("--header-version", o.headerVersion, "ESS header version (0: 30 B, 1: 32 B)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Random seed")->capture_default_str();
  app.add_option("--truth", o.truthPath,
                 "Write ground truth as CSV: pulse_time_ns,tof_ns,pixel_id (one line per event)");
  app.add_option("--pcap-out", o.pcapOutPath,
                 "Also write every datagram sent to this pcap file (Ethernet/IPv4/UDP, "
                 "stamped with the send time; replay it with udpgen --pcap)");
  app.add_option("--inject-errors", o.inject,
                 "Malformed datagrams to mix in, KIND:N (repeatable; kinds: cookie, version, "
                 "padding, length, truncated, short, queue, type, pulse_fraction, "
                 "prev_pulse_fraction, prev_after_pulse, timing, time_status, even_fibre_sync, "
                 "odd_fibre_sync)")
      ->delimiter(',');
  app.add_option("--inject-every", o.injectEvery,
                 "One malformed datagram after every this many valid ones")
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "No progress lines");
  app.add_flag("--json", o.json, "Print the summary as one JSON line on stdout");
  // Spellings before the option vocabulary of docs/tools.md.
  efu::cli::addDeprecatedAlias(app, "--detector", detectorOption);
  efu::cli::addDeprecatedAlias(app, "-c", configOption);
  efu::cli::addDeprecatedAlias(app, "-a,--address", addressOption);
  efu::cli::addDeprecatedAlias(app, "--duration", stopAfterOption);
  efu::cli::addDeprecatedAlias(app, "-r,--rate", epsOption);
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  if (listModules) {
    std::printf("modules with a readout source: %s\n", sourceNames(o.moduleDirs).c_str());
    return 0;
  }

  try {
    setupLogging("readoutgen", "info", "");
    installStopSignals();
    if (!bitRate.empty()) {
      o.bitsPerS = parseBitRate(bitRate);
    }
    const nlohmann::json config = readJsonFile(o.configPath);
    if (config.is_object() && config.contains("MaxPulseTimeNS") &&
        config["MaxPulseTimeNS"].is_number_integer()) {
      // An ESS instrument file's limit on pulse - previous pulse: headers keep to it.
      o.maxPulseGapNs = config["MaxPulseTimeNS"].get<int64_t>();
    } else if (config.is_object() && config.contains("MaxPulseTimeDiffNS") &&
               config["MaxPulseTimeDiffNS"].is_number_unsigned()) {
      // The same limit under its CBM and CDT name, read modulo 2^32 as the ESS EFU reads it.
      o.maxPulseGapNs =
          static_cast<int64_t>(config["MaxPulseTimeDiffNS"].get<uint64_t>() & 0xFFFFFFFFU);
    }
    const nlohmann::json calibration =
        o.calibrationPath.empty() ? nlohmann::json() : readJsonFile(o.calibrationPath);
    auto source = makeSource(o.detector, config, o.configPath, o.seed, o.moduleDirs, calibration,
                             o.calibrationPath);
    const uint32_t w = source->imageWidth();
    const uint32_t h = source->imageHeight();
    Pattern pattern = o.maskPath.empty() ? Pattern(o.pattern, w, h)
                                         : Pattern(readPgm(o.maskPath), w, h);
    UdpDatagramSink udp(o.address, o.port);
    std::optional<PcapWriter> pcap;
    if (!o.pcapOutPath.empty()) {
      pcap.emplace(o.pcapOutPath, o.port, o.port);
    }
    CapturingSink sink(udp, pcap ? &*pcap : nullptr);
    Generator gen(o, std::move(source), std::move(pattern), sink);

    std::FILE *truth = nullptr;
    if (!o.truthPath.empty()) {
      truth = std::fopen(o.truthPath.c_str(), "w");
      if (truth == nullptr) {
        throw std::runtime_error("cannot write --truth file '" + o.truthPath + "'");
      }
      // A source with named outputs (cbm: one per monitor) adds their names as a fourth column.
      const bool named = gen.source().namesSources();
      std::fputs(named ? "pulse_time_ns,tof_ns,pixel_id,source\n" : "pulse_time_ns,tof_ns,pixel_id\n",
                 truth);
      gen.onTruth([truth, named](const TruthEvent &e) {
        if (named) {
          std::fprintf(truth, "%lld,%lld,%d,%.*s\n", static_cast<long long>(e.pulseTimeNs),
                       static_cast<long long>(e.tofNs), e.pixelId,
                       static_cast<int>(e.source.size()), e.source.data());
        } else {
          std::fprintf(truth, "%lld,%lld,%d\n", static_cast<long long>(e.pulseTimeNs),
                       static_cast<long long>(e.tofNs), e.pixelId);
        }
      });
    }
    spdlog::info("{} ({}) to {}:{}: image {} x {}, pattern {}, {} events/pulse at {} Hz, tof {}, "
                 "datagrams <= {} B, {} queue(s), count {}, duration {}, {}",
                 o.detector, o.configPath, o.address, o.port, w, h,
                 o.maskPath.empty() ? o.pattern : o.maskPath, gen.eventsPerPulse(), o.pulseHz,
                 o.tof.empty() ? "uniform over the period" : o.tof, o.sizeBytes, o.queues,
                 o.count > 0 ? std::to_string(o.count) : std::string("unlimited"),
                 o.durationS > 0 ? fmt::format("{} s", o.durationS) : std::string("unlimited"),
                 o.rateEventsPerS > 0 || o.bitsPerS > 0
                     ? fmt::format("paced at {} events/s, {}", o.rateEventsPerS,
                                   o.bitsPerS > 0 ? formatBitRate(o.bitsPerS) : "no bit limit")
                     : std::string("unpaced"));
    std::function<void(const GeneratorSummary &)> progress;
    GeneratorSummary last;
    if (!o.quiet) {
      progress = [&last](const GeneratorSummary &s) {
        const double dt = s.elapsedS - last.elapsedS;
        spdlog::info("{:8.3f} M events/s {:9.1f} Mb/s  events {}  datagrams {}  injected {}  "
                     "send errors {}",
                     dt > 0 ? static_cast<double>(s.events - last.events) / dt / 1e6 : 0.0,
                     dt > 0 ? static_cast<double>(s.bytes - last.bytes) * 8 / dt / 1e6 : 0.0,
                     s.events, s.datagrams, s.injected, s.sendErrors);
        last = s;
      };
    }
    const GeneratorSummary summary = gen.run(stopFlag(), progress);
    if (truth != nullptr && std::fclose(truth) != 0) {
      throw std::runtime_error("error writing --truth file '" + o.truthPath + "'");
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
  } catch (const std::exception &e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
