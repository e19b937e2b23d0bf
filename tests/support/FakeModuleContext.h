// SPDX-License-Identifier: BSD-2-Clause
// An in-memory sdk::ModuleContext for unit tests and benchmarks of modules and readout parsers.
#pragma once

#include "common/sdk/Module.h"

#include <spdlog/sinks/ringbuffer_sink.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace efu::readout {

/// One event as a module emitted it.
struct RecordedEvent {
  int64_t pulseTimeNs;
  int32_t tofNs;
  int32_t pixelId;
  friend bool operator==(const RecordedEvent &, const RecordedEvent &) = default;
  friend std::ostream &operator<<(std::ostream &out, const RecordedEvent &e) {
    return out << "(pulse " << e.pulseTimeNs << ", tof " << e.tofNs << ", pixel " << e.pixelId
               << ")";
  }
};

/// `events` ordered by pulse, time of flight and pixel: a module's events and a truth compare
/// as multisets (a module may publish a datagram's events in another order).
inline std::vector<RecordedEvent> sortedEvents(std::vector<RecordedEvent> events) {
  std::sort(events.begin(), events.end(), [](const RecordedEvent &a, const RecordedEvent &b) {
    return std::tie(a.pulseTimeNs, a.tofNs, a.pixelId) <
           std::tie(b.pulseTimeNs, b.tofNs, b.pixelId);
  });
  return events;
}

/// Records events in a vector (reserve() it before a benchmark, or set `keep` false to only
/// count them). Not for production: it allocates.
class RecordingEventSink final : public sdk::EventSink {
public:
  void add(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept override {
    ++count;
    if (keep) {
      events.push_back({pulseTimeNs, tofNs, pixelId});
    }
  }
  std::vector<RecordedEvent> events;
  uint64_t count = 0;
  bool keep = true;
};

/// One data array as a module published it (copied).
struct RecordedArray {
  int64_t timestampNs = 0;
  struct Variable {
    std::string name;
    std::string unit;
    std::vector<std::string> axes;
    std::vector<int64_t> shape;
    sdk::DataType type = sdk::DataType::None;
    std::vector<uint8_t> data;
    /// The data as elements of T (T must match `type`).
    template <class T> [[nodiscard]] std::vector<T> as() const {
      std::vector<T> out(data.size() / sizeof(T));
      std::memcpy(out.data(), data.data(), out.size() * sizeof(T));
      return out;
    }
  };
  std::vector<Variable> variables;
  /// The variable called `name`; throws when there is none.
  [[nodiscard]] const Variable &at(const std::string &name) const {
    for (const Variable &v : variables) {
      if (v.name == name) {
        return v;
      }
    }
    throw std::out_of_range("no variable " + name);
  }
};

/// Records data arrays in a vector (set `keep` false to only count them). Not for production:
/// it allocates. `maxBytes` is what it says as maxMessageBytes() (set it before the module is
/// constructed); with `refuse` set, publish() refuses every array (as a producer refusing it
/// for good) and records nothing.
class RecordingDataArraySink final : public sdk::DataArraySink {
public:
  bool publish(int64_t timestampNs,
               std::span<const sdk::DataVariable> variables) noexcept override {
    if (refuse) {
      ++refused;
      return false;
    }
    ++count;
    if (!keep) {
      return true;
    }
    RecordedArray a;
    a.timestampNs = timestampNs;
    for (const sdk::DataVariable &v : variables) {
      RecordedArray::Variable r;
      r.name = v.name;
      r.unit = v.unit;
      for (const std::string_view axis : v.axes) {
        r.axes.emplace_back(axis);
      }
      r.shape.assign(v.shape.begin(), v.shape.end());
      r.type = v.type;
      r.data.assign(v.data.begin(), v.data.end());
      a.variables.push_back(std::move(r));
    }
    arrays.push_back(std::move(a));
    return true;
  }
  [[nodiscard]] size_t maxMessageBytes() const noexcept override { return maxBytes; }
  std::vector<RecordedArray> arrays;
  uint64_t count = 0;
  uint64_t refused = 0;
  bool keep = true;
  bool refuse = false;
  /// efu's own limit with its default options: message.max.bytes 1016896 less 36 bytes.
  size_t maxBytes = 1'016'860;
};

/// Test double of the daemon's ModuleContext: counters by name, a logger that keeps its last 100
/// lines (logged()), a recording sink.
class FakeModuleContext final : public sdk::ModuleContext {
public:
  explicit FakeModuleContext(nlohmann::json config = nlohmann::json::object(),
                             std::string source = "test.json")
      : config_(std::move(config)), source_(std::move(source)),
        logLines_(std::make_shared<spdlog::sinks::ringbuffer_sink_st>(100)),
        logger_("fake", logLines_) {}

  Counter &counter(std::string_view name) override {
    auto [it, inserted] = counters_.try_emplace(std::string(name), nullptr);
    if (!inserted) {
      throw std::invalid_argument("duplicate counter " + std::string(name));
    }
    it->second = std::make_unique<Counter>();
    return *it->second;
  }
  Counter &gauge(std::string_view name) override {
    Counter &added = counter(name);
    gauges_.insert(std::string(name));
    return added;
  }
  spdlog::logger &log() override { return logger_; }
  /// The log lines (of the last 100) that contain `text`.
  [[nodiscard]] std::vector<std::string> logged(std::string_view text) const {
    std::vector<std::string> found;
    for (const std::string &line : logLines_->last_formatted()) {
      if (line.find(text) != std::string::npos) {
        found.push_back(line);
      }
    }
    return found;
  }
  sdk::EventSink &events(std::string_view sourceName) override {
    if (sourceName.empty()) {
      throw std::invalid_argument("an event source needs a name");
    }
    return sources[std::string(sourceName)];
  }
  /// The sinks of events(name), by name.
  std::map<std::string, RecordingEventSink> sources;
  sdk::DataArraySink &dataArrays(std::string_view sourceName) override {
    if (sourceName.empty()) {
      throw std::invalid_argument("a data array source needs a name");
    }
    return arrays[std::string(sourceName)];
  }
  /// The sinks of dataArrays(name), by name.
  std::map<std::string, RecordingDataArraySink> arrays;
  sdk::EventSink &events() override { return eventSink != nullptr ? *eventSink : sink; }
  [[nodiscard]] const nlohmann::json &config() const override { return config_; }
  [[nodiscard]] const std::string &configSource() const override { return source_; }
  [[nodiscard]] uint32_t statsIntervalMs() const override { return 1000; }
  [[nodiscard]] const nlohmann::json &calibration() const override { return calibration_; }
  [[nodiscard]] const std::string &calibrationSource() const override { return calibrationSource_; }
  /// What calibration() returns (null = none, the default).
  void setCalibration(nlohmann::json calibration, std::string source = "calib.json") {
    calibration_ = std::move(calibration);
    calibrationSource_ = std::move(source);
  }
  void setLossCounters(const Counter &lost, const Counter &expected) override {
    lost_ = &lost;
    expected_ = &expected;
  }
  void setError(std::string_view message) override { error = std::string(message); }
  sdk::Report &report(std::string_view name) override {
    auto [it, inserted] = reports_.try_emplace(std::string(name), nullptr);
    if (!inserted) {
      throw std::invalid_argument("duplicate report " + std::string(name));
    }
    it->second = std::make_unique<sdk::Report>();
    return *it->second;
  }
  /// The text last published to a registered report; throws for an unknown name.
  [[nodiscard]] std::string reportText(const std::string &name) const {
    return reports_.at(name)->read();
  }

  /// Value of a registered counter; throws for an unknown name (catches typos in tests).
  [[nodiscard]] int64_t value(const std::string &name) const {
    auto it = counters_.find(name);
    if (it == counters_.end()) {
      throw std::out_of_range("no counter " + name);
    }
    return it->second->get();
  }
  [[nodiscard]] bool has(const std::string &name) const { return counters_.contains(name); }
  /// Whether `name` was registered with gauge().
  [[nodiscard]] bool isGauge(const std::string &name) const { return gauges_.contains(name); }
  /// All counters with their values, sorted by name.
  [[nodiscard]] std::map<std::string, int64_t> snapshot() const {
    std::map<std::string, int64_t> out;
    for (const auto &[k, v] : counters_) {
      out[k] = v->get();
    }
    return out;
  }
  /// Makes this context partition `index` of `count` (before the module is constructed).
  void setPartition(unsigned index, unsigned count) {
    partition_ = index;
    partitions_ = count;
  }
  [[nodiscard]] unsigned partition() const override { return partition_; }
  [[nodiscard]] unsigned partitions() const override { return partitions_; }
  /// As the daemon: partition 0 registers it, the others get an unpublished counter.
  Counter &streamCounter(std::string_view name) override {
    if (partition_ == 0) {
      return counter(name);
    }
    return unpublished_.emplace_back();
  }
  [[nodiscard]] const Counter *lossLost() const { return lost_; }
  [[nodiscard]] const Counter *lossExpected() const { return expected_; }

  RecordingEventSink sink;
  /// When set (before the module is constructed), events() returns it instead of `sink`.
  sdk::EventSink *eventSink = nullptr;
  std::string error;

private:
  nlohmann::json config_;
  std::string source_;
  nlohmann::json calibration_;
  std::string calibrationSource_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_st> logLines_;
  spdlog::logger logger_;
  std::map<std::string, std::unique_ptr<Counter>> counters_;
  std::set<std::string> gauges_;
  std::map<std::string, std::unique_ptr<sdk::Report>> reports_;
  const Counter *lost_ = nullptr;
  const Counter *expected_ = nullptr;
  unsigned partition_ = 0;
  unsigned partitions_ = 1;
  std::deque<Counter> unpublished_;
};

/// The default ev44 source_name module M declares for `config` (what EFU_MODULE puts in the
/// descriptor's sourceName, which the daemon asks when --source-name gives none); "" when M
/// declares none. Throws sdk::ConfigError with the module's reason for a refused config.
template <class M>
std::string declaredSourceName(const nlohmann::json &config, const std::string &configSource) {
  const auto hook = sdk::detail::sourceNameHook<M>();
  if (hook == nullptr) {
    return {};
  }
  std::string name;
  std::string error;
  if (!hook(&config, configSource.c_str(), &name, &error)) {
    throw sdk::ConfigError(error);
  }
  return name;
}

} // namespace efu::readout
