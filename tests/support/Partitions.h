// SPDX-License-Identifier: BSD-2-Clause
// A module run as N partitions in-process (docs/modules.md, "Partitions"): N instances on N
// FakeModuleContexts, each given every datagram in order, as the daemon's processing threads
// are; their events merged and their counters summed as the daemon publishes them. The tests of
// each splittable module compare N = 2 and 4 with N = 1 through expectPartitionsAgree(), most of
// them on a stream of the module's datagrams with readouts broken on the way (faultyReplay()).
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
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

/// The readout (a packed struct) at byte `at` of a datagram, and writing one back there.
template <class Readout> Readout readoutAt(const std::vector<uint8_t> &bytes, size_t at) {
  Readout r;
  std::memcpy(&r, bytes.data() + at, sizeof(r));
  return r;
}
template <class Readout>
void writeReadoutAt(std::vector<uint8_t> &bytes, size_t at, const Readout &r) {
  std::memcpy(bytes.data() + at, &r, sizeof(r));
}

/// Changes every whole readout of a datagram (after its version-0 header) by `change(readout)`.
template <class Readout, class Change>
void forEachReadout(std::vector<uint8_t> &bytes, Change change) {
  for (size_t at = headerBytes(0); at + sizeof(Readout) <= bytes.size(); at += sizeof(Readout)) {
    Readout r = readoutAt<Readout>(bytes, at);
    change(r);
    writeReadoutAt(bytes, at, r);
  }
}

/// Every readout of a datagram `seconds` later, `r` (read from it before) too: their events come
/// beyond the time of flight.
template <class Readout> void allLater(Readout &r, std::vector<uint8_t> &bytes, uint32_t seconds) {
  const auto later = [seconds](Readout &x) { x.timeHigh += seconds; };
  forEachReadout<Readout>(bytes, later);
  later(r);
}

/// Puts the header's sequence number 64 up or down (the parser counts the datagrams lost).
inline void shiftSequence(std::vector<uint8_t> &bytes) {
  bytes[offsetof(EssHeaderV0, seqNum)] ^= 0x40;
}

/// How faultyReplay() breaks the readout `r` it chose in the datagram `bytes` (and writes back
/// after); a fault may change the datagram's other bytes too (allLater(), shiftSequence()).
template <class Readout> using Fault = std::function<void(Readout &r, std::vector<uint8_t> &bytes)>;

/// The module's datagrams `encoded` (encodePulses()) as the partition tests replay them: received
/// 1 ms apart, and datagram 5k + 2, if it has more than 10 readouts, with its readout
/// (7 (5k + 2)) % readouts broken by faults[k % 8]. So the module's refusals come on both sides
/// of the partition filter while most readouts still make events. The fault gets the readout as
/// read before it: one that changes every readout of the datagram changes `r` too (allLater()).
template <class Readout>
std::vector<ReplayDatagram> faultyReplay(const std::vector<std::vector<uint8_t>> &encoded,
                                         const std::array<Fault<Readout>, 8> &faults) {
  const size_t header = headerBytes(0);
  std::vector<ReplayDatagram> out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    ReplayDatagram d{encoded[i], 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000};
    const size_t readouts = (d.bytes.size() - header) / sizeof(Readout);
    if (i % 5 == 2 && readouts > 10) {
      const size_t at = header + ((i * 7) % readouts) * sizeof(Readout);
      Readout r = readoutAt<Readout>(d.bytes, at);
      faults.at((i / 5) % 8)(r, d.bytes);
      writeReadoutAt(d.bytes, at, r);
    }
    out.push_back(std::move(d));
  }
  return out;
}

/// The faults of the vmm3 and nmx partition tests, by turns: every readout of the datagram two
/// seconds later (beyond the time of flight); ring 11, FEN 20, a VMM of no hybrid; `fourth`, the
/// module's own (a readout its geometry refuses); the parser's refusals (channel 70, a length
/// that is not 20); the sequence number 64 off.
inline std::array<Fault<vmm3::Vmm3Readout>, 8> vmm3Faults(Fault<vmm3::Vmm3Readout> fourth) {
  return {
      [](auto &r, auto &bytes) { allLater(r, bytes, 2); },
      [](auto &r, auto &) { r.fiber = 22; },
      [](auto &r, auto &) { r.fen = 20; },
      [](auto &r, auto &) { r.vmm = 14; },
      std::move(fourth),
      [](auto &r, auto &) { r.channel = 70; },
      [](auto &r, auto &) { r.length = 19; },
      [](auto &, auto &bytes) { shiftSequence(bytes); },
  };
}

/// The counters vmm3Faults() moves in vmm3 and nmx alike: one for each fault but the fourth.
inline constexpr std::array<const char *, 7> kVmm3FaultCounters{
    "events.timestamp.tof.high",      "geometry.ring_errors",   "geometry.fen_errors",
    "geometry.hybrid_mapping_errors", "readouts.error_channel", "readouts.error_datalen",
    "parser.essheader.seq.lost"};

/// Inserts `bytes` before datagram `at` of a replay, received at that datagram's time.
inline void insertAt(std::vector<ReplayDatagram> &out, size_t at, std::vector<uint8_t> bytes) {
  const int64_t rx = out.at(at).rxTimeNs;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), ReplayDatagram{std::move(bytes), rx});
}

/// A datagram as another detector type (its type XOR `flip`): the ESS header refuses it.
inline std::vector<uint8_t> otherType(std::vector<uint8_t> bytes, uint8_t flip) {
  bytes[offsetof(EssHeaderV0, detectorType)] ^= flip;
  return bytes;
}

/// A datagram with one byte more than its whole readouts (its header's length too).
inline std::vector<uint8_t> ragged(std::vector<uint8_t> bytes) {
  bytes.push_back(0);
  setTotalLength(bytes.data(), static_cast<uint16_t>(bytes.size()));
  return bytes;
}

/// A datagram's header alone (its length that of the header): a datagram without readouts.
inline std::vector<uint8_t> headerOnly(const std::vector<uint8_t> &bytes) {
  std::vector<uint8_t> header(bytes.begin(), bytes.begin() + headerBytes(0));
  setTotalLength(header.data(), static_cast<uint16_t>(header.size()));
  return header;
}

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

/// Expects each of the counters `names` to have moved in `r`: the broken readouts reached the
/// checks they were broken for.
inline void expectMoved(const PartitionedResult &r, std::span<const char *const> names) {
  for (const char *name : names) {
    EXPECT_GT(r.counters.at(name), 0) << name;
  }
}
inline void expectMoved(const PartitionedResult &r, std::initializer_list<const char *> names) {
  expectMoved(r, std::span(names.begin(), names.size()));
}

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

/// Expects the events per partition of a 2-partition run (eventsPerPartition()) to add up to
/// `total`, more than a quarter of them in each partition: the work spread.
inline void expectSpread(const std::vector<size_t> &per, size_t total) {
  ASSERT_EQ(per.size(), 2U);
  EXPECT_GT(per[0], total / 4);
  EXPECT_GT(per[1], total / 4);
  EXPECT_EQ(per[0] + per[1], total);
}

} // namespace efu::readout::test
