// SPDX-License-Identifier: BSD-2-Clause
// efu-dump: consumes Kafka topics and prints ev44, f144, x5f2, ar51 and da00 messages as JSON
// lines or text; draws pictures of them (--image, --tof-histogram, --da00-png).
#include "common/net/PcapWriter.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "efu/tools/dump/Consumer.h"
#include "efu/tools/dump/Da00Chart.h"
#include "efu/tools/dump/Decode.h"
#include "efu/tools/dump/DumpOptions.h"
#include "efu/tools/dump/Format.h"
#include "efu/tools/dump/Image.h"
#include "efu/tools/dump/Report.h"
#include "efu/tools/dump/TofHistogram.h"

#include "common/kafka/RdKafka.h"
#include "common/system/CliExit.h"
#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kExitError = 1;
constexpr int kExitCountNotReached = 2;
constexpr int kPollMs = 100;
constexpr int kMetadataTimeoutMs = 2000;
constexpr int kMetadataSliceMs = 100;
constexpr int64_t kTopicRetryNs = 500 * efu::kNsPerMs;

using efu::tools::DumpOptions;

template <typename T> using KafkaPtr = efu::kafka::RdKafkaPtr<T>;

KafkaPtr<rd_kafka_t> createConsumer(const DumpOptions &options) {
  return efu::tools::createConsumer({options.brokers, "efu-dump", options.settings, nullptr});
}

/// Partition count of `topic`; waits while the topic does not exist (yet) or the broker is
/// unreachable, until a stop signal or `timeoutS` (0 = forever). Returns 0 when giving up.
int waitForPartitions(rd_kafka_t *rk, const std::string &topic, const DumpOptions &options) {
  const int64_t startNs = efu::monotonicNs();
  bool reported = false;
  while (efu::stopSignal() == 0) {
    // Short requests, so that a stop signal is noticed within kMetadataSliceMs; librdkafka keeps
    // connecting in the background, and a broker slower than that is only reported after
    // kMetadataTimeoutMs.
    const auto lookup = efu::tools::lookupPartitions(rk, topic, options.brokers, kMetadataSliceMs);
    if (lookup.err == RD_KAFKA_RESP_ERR__TIMED_OUT &&
        efu::monotonicNs() - startNs < int64_t{kMetadataTimeoutMs} * 1'000'000) {
      continue;
    }
    if (lookup.partitions > 0) {
      return lookup.partitions;
    }
    const std::string &problem = lookup.problem;
    const int64_t waitedNs = efu::monotonicNs() - startNs;
    if (options.timeoutS > 0 &&
        static_cast<double>(waitedNs) >= options.timeoutS * static_cast<double>(efu::kNsPerSec)) {
      spdlog::error("{}; gave up after --timeout {} s", problem, options.timeoutS);
      return 0;
    }
    if (!reported) {
      spdlog::warn("{}; waiting for it (Ctrl-C to stop)", problem);
      reported = true;
    }
    efu::sleepUntilMonotonicNs(efu::monotonicNs() + kTopicRetryNs, efu::stopFlag());
  }
  return 0;
}

/// The --image and --tof-histogram pictures, accumulated from ev44 messages, and the
/// --da00-png charts, from da00 messages: written on request (atomically) and at the end.
class Pictures {
public:
  /// Loads --geometry and checks the histogram options; throws with the option named.
  explicit Pictures(const DumpOptions &options)
      : imagePath_(options.imagePath), tofPath_(options.tofPath),
        da00Prefix_(options.da00Prefix), style_{options.imageScale, options.logScale} {
    if (!imagePath_.empty()) {
      auto geometry =
          efu::tools::loadGeometry(options.geometryPath, options.module, options.moduleDirs);
      efu::tools::checkImageStyle(geometry, style_);
      image_.emplace(std::move(geometry));
      const auto &g = image_->geometry();
      spdlog::info("--image {}: {} geometry {} x {} pixels from {}{}", imagePath_, g.kind, g.width,
                   g.height, options.geometryPath,
                   g.instrument.empty() ? "" : " (" + g.instrument + ")");
    }
    if (!tofPath_.empty()) {
      tof_.emplace(options.tofBins, options.tofMaxNs);
    }
    if (!da00Prefix_.empty()) {
      da00_.emplace();
    }
  }

  [[nodiscard]] bool active() const { return image_ || tof_ || da00_; }
  [[nodiscard]] bool wantsEv44() const { return image_ || tof_; }
  [[nodiscard]] bool wantsDa00() const { return da00_.has_value(); }

  /// A da00 message: its signal is summed into its source's chart, or why not is logged (once
  /// per source and reason).
  void addDa00(const nlohmann::json &da00, const std::string &where) {
    const std::string why = da00_->add(da00);
    if (why.empty()) {
      changed_ = true;
    } else if (da00Warned_.insert(da00.value("source_name", "") + "\n" + why).second) {
      spdlog::warn("--da00-png: {} not drawn: {} (said once per source and reason)", where, why);
    }
  }

  void add(const nlohmann::json &ev44) {
    if (image_) {
      for (const auto &pixel : ev44.at("pixel_id")) {
        image_->add(pixel.get<int64_t>());
      }
    }
    if (tof_) {
      for (const auto &tof : ev44.at("time_of_flight")) {
        tof_->add(tof.get<int64_t>());
      }
    }
    changed_ = true;
  }

  /// Writes the pictures if anything arrived since the last write (or `always`); throws
  /// efu::tools::ImageError.
  void write(bool always) {
    if (!changed_ && !always) {
      return;
    }
    if (image_) {
      efu::tools::writePng(efu::tools::renderCounts(*image_, style_), imagePath_);
    }
    if (tof_) {
      efu::tools::writePng(efu::tools::renderTofChart(tof_->result()), tofPath_);
    }
    changed_ = false;
    if (da00_) {
      // One chart that cannot be written (a full disk, a bad prefix) keeps none of the others
      // from being written; the failures are then thrown together.
      std::string failed;
      size_t failures = 0;
      for (const auto &[source, series] : da00_->series()) {
        try {
          efu::tools::writePng(efu::tools::renderDa00Chart(series),
                               efu::tools::da00PngPath(da00Prefix_, source));
        } catch (const efu::tools::ImageError &e) {
          failed += (failures++ == 0 ? "" : "; ") + std::string(e.what());
        }
      }
      if (failures > 0) {
        changed_ = true; // tried again at the next write
        throw efu::tools::ImageError(fmt::format("--da00-png: {} of {} charts not written: {}",
                                                 failures, da00_->series().size(), failed));
      }
    }
  }

  /// The end-of-run lines on stderr: what each picture shows.
  void report() const {
    if (image_) {
      const auto &g = image_->geometry();
      std::fprintf(stderr,
                   "image: %s, %u x %u pixels (%s), %llu events, max %llu per pixel%s, "
                   "%llu pixel ids outside %llu..%llu\n",
                   imagePath_.c_str(), g.width, g.height, g.kind.c_str(),
                   static_cast<unsigned long long>(image_->inRange()),
                   static_cast<unsigned long long>(image_->maxCount()),
                   style_.logScale ? " (log colour scale)" : "",
                   static_cast<unsigned long long>(image_->outOfRange()),
                   static_cast<unsigned long long>(g.firstPixel),
                   static_cast<unsigned long long>(g.lastPixel()));
    }
    if (tof_) {
      const auto bins = tof_->result();
      uint64_t maxBin = 0;
      for (const auto count : bins.bins) {
        maxBin = std::max(maxBin, count);
      }
      std::fprintf(
          stderr,
          "tof histogram: %s, %zu bins over [0, %llu) ns, max %llu per bin, %llu events "
          "binned, %llu negative, %llu at or above --tof-max-ns\n",
          tofPath_.c_str(), bins.bins.size(), static_cast<unsigned long long>(bins.rangeNs),
          static_cast<unsigned long long>(maxBin), static_cast<unsigned long long>(tof_->binned()),
          static_cast<unsigned long long>(tof_->negative()),
          static_cast<unsigned long long>(tof_->aboveRange()));
    }
    if (da00_) {
      if (da00_->series().empty()) {
        std::fprintf(stderr, "da00: no histogram drawn (no da00 message with a signal)\n");
      }
      for (const auto &[source, series] : da00_->series()) {
        int64_t maxSum = 0;
        for (const int64_t sum : series.sums) {
          maxSum = std::max(maxSum, sum);
        }
        std::fprintf(stderr,
                     "da00: %s, source '%s': %llu messages summed (%llu skipped), %zu bins of "
                     "'signal' over '%s' [%g, %g] %s, max %lld per bin\n",
                     efu::tools::da00PngPath(da00Prefix_, source).c_str(), source.c_str(),
                     static_cast<unsigned long long>(series.messages),
                     static_cast<unsigned long long>(series.skipped), series.sums.size(),
                     series.axis.c_str(), series.edges.front(), series.edges.back(),
                     series.axisUnit.c_str(), static_cast<long long>(maxSum));
      }
    }
  }

private:
  std::string imagePath_;
  std::string tofPath_;
  std::string da00Prefix_;
  efu::tools::ImageStyle style_;
  std::optional<efu::tools::PixelCounts> image_;
  std::optional<efu::tools::TofHistogram> tof_;
  std::optional<efu::tools::Da00Histograms> da00_;
  std::set<std::string> da00Warned_;
  bool changed_ = false;
};

/// Prints decoded messages and counts everything; ev44 events also go to the pictures.
class Printer {
public:
  Printer(const DumpOptions &options, Pictures &pictures)
      : text_(options.format == "text"), pictures_(pictures) {
    if (!options.pcapPath.empty()) {
      pcap_.emplace(options.pcapPath, options.pcapPort, options.pcapPort);
    }
  }

  void handle(const rd_kafka_message_t &msg) {
    const auto *payload = static_cast<const uint8_t *>(msg.payload);
    const std::span<const uint8_t> buffer(payload, payload == nullptr ? 0 : msg.len);
    const std::string topic = rd_kafka_topic_name(msg.rkt);
    ++counts_.messages;
    counts_.bytes += buffer.size();
    std::string error;
    auto decoded = efu::tools::decodeMessage(buffer, error);
    if (!decoded) {
      if (efu::tools::isKnownIdentifier(efu::tools::fileIdentifier(buffer))) {
        ++counts_.undecodable;
      } else {
        ++counts_.unknown;
      }
      spdlog::warn("skipped {}[{}]@{}: {}", topic, msg.partition, msg.offset, error);
      return;
    }
    ++counts_.decoded;
    counts_.events += decoded->value("event_count", uint64_t{0});
    if (pictures_.wantsEv44() && decoded->at("kind") == "ev44") {
      pictures_.add(*decoded);
    }
    if (pictures_.wantsDa00() && decoded->at("kind") == "da00") {
      pictures_.addDa00(*decoded, topic + "[" + std::to_string(msg.partition) + "]@" +
                                      std::to_string(msg.offset));
    }
    if (pcap_ && decoded->at("kind") == "ar51") {
      // Capture time: the Kafka message timestamp (when efu sampled it).
      rd_kafka_timestamp_type_t type{};
      const int64_t ms = rd_kafka_message_timestamp(&msg, &type);
      if (!pcap_->write(efu::tools::ar51Datagram(*decoded), ms > 0 ? ms * 1'000'000 : 0)) {
        spdlog::warn("{}[{}]@{}: ar51 datagram too large for a pcap UDP packet", topic,
                     msg.partition, msg.offset);
      }
    }
    (*decoded)["topic"] = topic;
    (*decoded)["partition"] = msg.partition;
    (*decoded)["offset"] = msg.offset;
    const std::string line =
        text_ ? efu::tools::formatText(*decoded) : efu::tools::formatJsonLine(*decoded);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

  const efu::tools::DumpCounts &counts() const { return counts_; }

private:
  bool text_;
  Pictures &pictures_;
  std::optional<efu::PcapWriter> pcap_;
  efu::tools::DumpCounts counts_;
};

int run(const DumpOptions &options, Pictures &pictures) {
  auto rk = createConsumer(options);
  KafkaPtr<rd_kafka_topic_partition_list_t> assignment(
      rd_kafka_topic_partition_list_new(static_cast<int>(options.topics.size())));
  const int64_t startOffset =
      options.from == "beginning" ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
  for (const auto &topic : options.topics) {
    const int partitions = waitForPartitions(rk.get(), topic, options);
    if (partitions == 0) {
      return efu::stopSignal() != 0 ? 0 : kExitError;
    }
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset = startOffset;
    }
    spdlog::info("consuming {} ({} partition{}) from the {}", topic, partitions,
                 partitions == 1 ? "" : "s", options.from);
  }
  if (const auto err = rd_kafka_assign(rk.get(), assignment.get()); err) {
    spdlog::error("cannot assign partitions: {}", rd_kafka_err2str(err));
    return kExitError;
  }

  Printer printer(options, pictures);
  const auto idleLimitNs = static_cast<int64_t>(options.timeoutS * efu::kNsPerSec);
  const auto pictureEveryNs = static_cast<int64_t>(options.imageEveryS * efu::kNsPerSec);
  int64_t lastPictureNs = efu::monotonicNs();
  int64_t lastMessageNs = efu::monotonicNs();
  int64_t firstMessageNs = 0;
  bool idleTimeout = false;
  std::string lastError;
  while (efu::stopSignal() == 0) {
    KafkaPtr<rd_kafka_message_t> msg(rd_kafka_consumer_poll(rk.get(), kPollMs));
    const int64_t nowNs = efu::monotonicNs();
    if (pictureEveryNs > 0 && nowNs - lastPictureNs >= pictureEveryNs) {
      lastPictureNs = nowNs;
      try {
        pictures.write(false);
      } catch (const efu::tools::ImageError &e) {
        spdlog::warn("--image-every: {}", e.what());
      }
    }
    if (!msg || msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (msg) {
        std::string error = rd_kafka_message_errstr(msg.get());
        if (error != lastError) {
          spdlog::warn("consumer: {}", error);
          lastError = std::move(error);
        }
      }
      if (idleLimitNs > 0 && nowNs - lastMessageNs >= idleLimitNs) {
        idleTimeout = true;
        break;
      }
      continue;
    }
    lastError.clear();
    if (printer.counts().messages == 0) {
      firstMessageNs = nowNs;
    }
    lastMessageNs = nowNs;
    printer.handle(*msg);
    if (options.count != 0 && printer.counts().messages >= options.count) {
      break;
    }
  }

  if (efu::stopSignal() != 0) {
    spdlog::info("stopping on signal {}", efu::stopSignal());
  } else if (idleTimeout) {
    spdlog::info("no message for {} s (--timeout); stopping", options.timeoutS);
  }
  const auto &counts = printer.counts();
  if (options.summary) {
    const double spanS =
        static_cast<double>(lastMessageNs - firstMessageNs) / static_cast<double>(efu::kNsPerSec);
    std::fprintf(stderr, "%s\n", efu::tools::formatSummary(counts, spanS).c_str());
  }
  rd_kafka_consumer_close(rk.get());
  if (idleTimeout && options.count != 0 && counts.messages < options.count) {
    spdlog::error("got {} of the {} messages asked for with -n/--count", counts.messages,
                  options.count);
    return kExitCountNotReached;
  }
  return 0;
}

/// The Kafka run with its pictures: written and described at the end, whatever stopped the run.
int dump(const DumpOptions &options) {
  Pictures pictures(options);
  int code = run(options, pictures);
  if (pictures.active()) {
    try {
      pictures.write(true);
      pictures.report();
    } catch (const efu::tools::ImageError &e) {
      std::fprintf(stderr, "efu-dump: %s\n", e.what());
      code = kExitError;
    }
  }
  return code;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "efu-dump: consume Kafka topics and print ev44, f144, x5f2, ar51 and da00 messages.\n"
      "Output goes to stdout (one message per line); problems, skipped messages and\n"
      "the --summary go to stderr. Exit status: 0 done, 1 error, 2 --count not\n"
      "reached before --timeout."};
  DumpOptions options;
  efu::tools::addDumpOptions(app, options);
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  try {
    efu::setupLogging("efu-dump", options.logLevel, "");
    if (!options.report.empty()) {
      efu::tools::showReport(options.cmdAddress, options.cmdPort, options.report,
                             options.reportPng);
      return 0;
    }
    if (options.topics.empty()) {
      std::fprintf(stderr, "efu-dump: -t/--topic is required (or --report NAME)\n");
      return kExitError;
    }
    efu::installStopSignals();
    return dump(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "efu-dump: %s\n", e.what());
    return kExitError;
  }
}
