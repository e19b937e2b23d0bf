// SPDX-License-Identifier: BSD-2-Clause
// A module run as N partitions in-process (docs/modules.md, "Partitions"): N instances on N
// FakeModuleContexts, each given every datagram in order, as the daemon's processing threads
// are; their events merged and their counters summed as the daemon publishes them. The tests of
// each splittable module compare N = 2 and 4 with N = 1 through expectPartitionsAgree().
#pragma once

#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace efu::readout::test {

/// One datagram to replay (owns its bytes).
struct ReplayDatagram {
  std::vector<uint8_t> bytes;
  int64_t rxTimeNs = 0;
  uint32_t queue = 0;
  uint32_t sourceIp = 0;
  uint16_t sourcePort = 0;
};

/// What a run produced: events per source (the default source under "") sorted as multisets,
/// and every published counter summed over the partitions.
struct PartitionedResult {
  std::map<std::string, std::vector<RecordedEvent>> events;
  std::map<std::string, int64_t> counters;
  size_t eventCount() const {
    size_t n = 0;
    for (const auto &[source, list] : events) {
      n += list.size();
    }
    return n;
  }
};

template <class Module> class PartitionedModule {
public:
  PartitionedModule(unsigned partitions, const nlohmann::json &config, const std::string &source,
                    const nlohmann::json &calibration = nullptr) {
    for (unsigned p = 0; p < partitions; ++p) {
      contexts_.push_back(std::make_unique<FakeModuleContext>(config, source));
      contexts_.back()->setPartition(p, partitions);
      if (!calibration.is_null()) {
        contexts_.back()->setCalibration(calibration, "calib.json");
      }
    }
    for (auto &ctx : contexts_) {
      modules_.push_back(std::make_unique<Module>(*ctx));
    }
  }
  void process(const ReplayDatagram &d) {
    const sdk::Packet packet{d.bytes.data(), static_cast<uint32_t>(d.bytes.size()), d.queue,
                             d.rxTimeNs, d.sourceIp, d.sourcePort};
    for (auto &m : modules_) {
      m->process(packet);
    }
  }
  void tick(int64_t nowNs) {
    for (auto &m : modules_) {
      m->tick(nowNs);
    }
  }
  void flush() {
    for (auto &m : modules_) {
      m->flush();
    }
  }
  [[nodiscard]] PartitionedResult result() const {
    PartitionedResult r;
    for (const auto &ctx : contexts_) {
      auto &def = r.events[""];
      def.insert(def.end(), ctx->sink.events.begin(), ctx->sink.events.end());
      for (const auto &[name, sink] : ctx->sources) {
        auto &list = r.events[name];
        list.insert(list.end(), sink.events.begin(), sink.events.end());
      }
      for (const auto &[name, value] : ctx->snapshot()) {
        r.counters[name] += value;
      }
    }
    for (auto &[source, list] : r.events) {
      list = sortedEvents(std::move(list));
    }
    return r;
  }
  [[nodiscard]] FakeModuleContext &context(unsigned p) { return *contexts_.at(p); }
  [[nodiscard]] Module &module(unsigned p) { return *modules_.at(p); }

private:
  std::vector<std::unique_ptr<FakeModuleContext>> contexts_;
  std::vector<std::unique_ptr<Module>> modules_;
};

/// Replays `datagrams` (a tick every `tickEvery` datagrams, at the datagram's time, then a flush)
/// through the module as 1 partition and as each of `counts`, and expects the same events per
/// source and the same counter sums. Returns the one-partition result (assert on it too: that it
/// formed events at all, and that the work spread over the partitions).
template <class Module>
PartitionedResult expectPartitionsAgree(const nlohmann::json &config, const std::string &source,
                                        const std::vector<ReplayDatagram> &datagrams,
                                        std::vector<unsigned> counts = {2, 4},
                                        const nlohmann::json &calibration = nullptr,
                                        size_t tickEvery = 16) {
  auto run = [&](unsigned n) {
    PartitionedModule<Module> m(n, config, source, calibration);
    for (size_t i = 0; i < datagrams.size(); ++i) {
      m.process(datagrams[i]);
      if (tickEvery != 0 && (i + 1) % tickEvery == 0) {
        m.tick(datagrams[i].rxTimeNs);
      }
    }
    m.flush();
    return m.result();
  };
  const PartitionedResult one = run(1);
  for (const unsigned n : counts) {
    const PartitionedResult many = run(n);
    EXPECT_EQ(many.counters, one.counters) << n << " partitions";
    EXPECT_EQ(many.events.size(), one.events.size()) << n << " partitions";
    for (const auto &[name, list] : one.events) {
      auto it = many.events.find(name);
      if (it == many.events.end()) {
        ADD_FAILURE() << n << " partitions: no source '" << name << "'";
        continue;
      }
      EXPECT_EQ(it->second.size(), list.size()) << n << " partitions, source '" << name << "'";
      EXPECT_TRUE(it->second == list) << n << " partitions, source '" << name << "'";
    }
  }
  return one;
}

/// How many of the events each partition of an `n`-partition run formed (to show the work spread).
template <class Module>
std::vector<size_t> eventsPerPartition(unsigned n, const nlohmann::json &config,
                                       const std::string &source,
                                       const std::vector<ReplayDatagram> &datagrams,
                                       const nlohmann::json &calibration = nullptr) {
  PartitionedModule<Module> m(n, config, source, calibration);
  for (const ReplayDatagram &d : datagrams) {
    m.process(d);
  }
  m.flush();
  std::vector<size_t> out;
  for (unsigned p = 0; p < n; ++p) {
    size_t count = m.context(p).sink.events.size();
    for (const auto &[name, sink] : m.context(p).sources) {
      count += sink.events.size();
    }
    out.push_back(count);
  }
  return out;
}

} // namespace efu::readout::test
