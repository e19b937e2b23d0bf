// SPDX-License-Identifier: BSD-2-Clause
// The daemon's implementation of the module SDK context, and creating a module instance with it.
#pragma once

#include "common/sdk/Module.h"
#include "common/sdk/ModuleLoader.h"
#include "common/stats/Stats.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace efu {

/// What the daemon lends a module. Counters are registered as given (the publisher prefixes
/// efu.<service>.). Owned by main; outlives the module instance.
class DaemonContext final : public sdk::ModuleContext {
public:
  DaemonContext(Stats &stats, spdlog::logger &log, sdk::EventSink &events, nlohmann::json config,
                std::string configSource, uint32_t statsIntervalMs,
                nlohmann::json calibration = nullptr, std::string calibrationSource = {})
      : stats_(stats), log_(log), events_(events), config_(std::move(config)),
        configSource_(std::move(configSource)), statsIntervalMs_(statsIntervalMs),
        calibration_(std::move(calibration)), calibrationSource_(std::move(calibrationSource)) {}

  /// Partition `index` of `count` (efu --proc-threads): partition 0 registers counters and
  /// reports; a further partition's counters are parts of partition 0's (Stats::addPart), its
  /// stream counters and reports are its own and never published. Before the module is created.
  void setPartition(unsigned index, unsigned count) noexcept {
    partition_ = index;
    partitions_ = count;
  }
  Counter &counter(std::string_view name) override {
    return partition_ == 0 ? stats_.add(name) : stats_.addPart(name);
  }
  Counter &gauge(std::string_view name) override {
    return partition_ == 0 ? stats_.add(name, CounterKind::Gauge) : stats_.addPart(name);
  }
  [[nodiscard]] unsigned partition() const override { return partition_; }
  [[nodiscard]] unsigned partitions() const override { return partitions_; }
  Counter &streamCounter(std::string_view name) override {
    if (partition_ == 0) {
      return counter(name);
    }
    if (!Stats::validName(name)) {
      throw StatsError("invalid counter name '" + std::string(name) + "'");
    }
    return unpublished_.emplace_back();
  }
  spdlog::logger &log() override { return log_; }
  sdk::EventSink &events() override { return events_; }
  sdk::EventSink &events(std::string_view sourceName) override {
    if (sourceName.empty()) {
      throw std::invalid_argument("an event source needs a name");
    }
    return sources_ ? sources_(std::string(sourceName)) : events_;
  }
  /// Where events(name) goes: the Kafka output's sink of that source (unset: the default sink,
  /// as with --no-kafka, where events are only counted).
  void setEventSources(std::function<sdk::EventSink &(const std::string &)> sources) {
    sources_ = std::move(sources);
  }
  sdk::DataArraySink &dataArrays(std::string_view sourceName) override {
    if (sourceName.empty()) {
      throw std::invalid_argument("a data array source needs a name");
    }
    return arrays_ ? arrays_(std::string(sourceName)) : noArrays_;
  }
  /// Where dataArrays(name) goes: the Kafka output's da00 sink of that source (unset: arrays
  /// are discarded, as with --no-kafka).
  void setDataArraySources(std::function<sdk::DataArraySink &(const std::string &)> sources) {
    arrays_ = std::move(sources);
  }
  /// What the sink of discarded arrays (no setDataArraySources: --no-kafka, efu --check) says
  /// as its maxMessageBytes(): kafka::maxPayloadBytes() of efu's options, so a configuration
  /// is refused alike with and without Kafka. 0 (every array refused) until set.
  void setDiscardedArrayLimit(size_t bytes) noexcept { noArrays_.maxBytes = bytes; }
  [[nodiscard]] const nlohmann::json &config() const override { return config_; }
  [[nodiscard]] const std::string &configSource() const override { return configSource_; }
  [[nodiscard]] uint32_t statsIntervalMs() const override { return statsIntervalMs_; }
  [[nodiscard]] const nlohmann::json &calibration() const override { return calibration_; }
  [[nodiscard]] const std::string &calibrationSource() const override {
    return calibrationSource_;
  }
  void setLossCounters(const Counter &lost, const Counter &expected) override {
    if (partition_ != 0) {
      return; // sequence loss is the stream's: partition 0's stream counters say it
    }
    lost_ = &lost;
    expected_ = &expected;
  }
  void setError(std::string_view message) override { error_ = message; }
  /// A further partition's reports are its own: REPORT_GET answers with partition 0's.
  sdk::Report &report(std::string_view name) override {
    auto [it, inserted] = reports_.try_emplace(std::string(name));
    if (!inserted) {
      throw std::invalid_argument("duplicate report " + std::string(name));
    }
    it->second = std::make_unique<sdk::Report>();
    return *it->second;
  }
  /// The report registered as `name`, or nullptr. Reports are registered before the control
  /// server starts, so the map does not change while it is read.
  [[nodiscard]] const sdk::Report *findReport(std::string_view name) const {
    auto it = reports_.find(name);
    return it == reports_.end() ? nullptr : it->second.get();
  }

  [[nodiscard]] const std::string &error() const noexcept { return error_; }
  [[nodiscard]] const Counter *lostCounter() const noexcept { return lost_; }
  [[nodiscard]] const Counter *expectedCounter() const noexcept { return expected_; }

private:
  /// With --no-kafka: data arrays go nowhere (the module's own counters still count them).
  class NoDataArrays final : public sdk::DataArraySink {
  public:
    bool publish(int64_t, std::span<const sdk::DataVariable>) noexcept override { return true; }
    [[nodiscard]] size_t maxMessageBytes() const noexcept override { return maxBytes; }
    size_t maxBytes = 0;
  };

  Stats &stats_;
  spdlog::logger &log_;
  sdk::EventSink &events_;
  nlohmann::json config_;
  std::string configSource_;
  uint32_t statsIntervalMs_;
  std::function<sdk::EventSink &(const std::string &)> sources_;
  std::function<sdk::DataArraySink &(const std::string &)> arrays_;
  NoDataArrays noArrays_;
  nlohmann::json calibration_;
  std::string calibrationSource_;
  const Counter *lost_ = nullptr;
  const Counter *expected_ = nullptr;
  std::string error_;
  std::map<std::string, std::unique_ptr<sdk::Report>, std::less<>> reports_;
  unsigned partition_ = 0;
  unsigned partitions_ = 1;
  std::deque<Counter> unpublished_; ///< a further partition's stream counters
};

/// Creates an instance of the module in `library` with `context`. Throws ModuleRejected with the
/// module's own reason (context.error(), control bytes escaped) when it fails to start.
ModulePtr createModule(const std::shared_ptr<ModuleLibrary> &library, DaemonContext &context);

} // namespace efu
