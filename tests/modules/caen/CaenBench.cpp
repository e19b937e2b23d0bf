// SPDX-License-Identifier: BSD-2-Clause
// caen readout throughput per core, per ESS instrument (target: >= 20 M readouts/s).
#include "common/kafka/Ev44Sink.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"
#include "tests/support/SourceDatagrams.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <random>
#include <vector>

namespace {

using namespace efu;

/// `count` full 8972-byte datagrams (373 readouts each) of valid readouts on random pixels,
/// encoded by readoutgen's CaenSource for the instrument file with its null calibration.
std::vector<std::vector<uint8_t>> makeDatagrams(caen::CaenSource &source, int count) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<uint8_t>> out;
  const caen::CaenConfig &cfg = source.config();
  readout::test::TruthCount truth;
  readout::test::DatagramPacker packer(source, truth);
  const readout::EssTime pulse{1'700'000'000, 1000};
  packer.setPulse(pulse, {1'699'999'999, 82'000'000});
  for (int i = 0; i < count; ++i) {
    while (packer.hasRoom()) {
      const auto x = static_cast<uint32_t>(rng() % cfg.imageWidth());
      const auto y = static_cast<uint32_t>(rng() % cfg.imageHeight());
      const uint64_t index = 2 * (rng() % 7); // never a noise readout's turn
      const auto tofNs = static_cast<int64_t>(rng() % 71'000'000);
      packer.add(readout::test::neutronAt(x, y, pulse, tofNs, index));
    }
    out.push_back(packer.take());
  }
  return out;
}

/// Takes each message as KafkaProducer does a large one: written once into a reused block (its
/// PayloadPool). What librdkafka then does with it runs on its own threads, not measured here.
class BlockProducer final : public kafka::Producer {
public:
  bool produce(std::string_view topic, std::span<const uint8_t> payload,
               int64_t timestampMs) noexcept override {
    return produceWritten(
        topic, payload.size(),
        [](void *from, std::span<uint8_t> out) noexcept {
          std::memcpy(out.data(), from, out.size());
        },
        const_cast<uint8_t *>(payload.data()), timestampMs);
  }
  bool produceWritten(std::string_view, size_t bytes, PayloadWriter write, void *context,
                      int64_t) noexcept override {
    if (bytes > block_.size() * 8) {
      block_.resize((bytes + 7) / 8); // the first messages only
    }
    write(context, std::span<uint8_t>(reinterpret_cast<uint8_t *>(block_.data()), bytes));
    benchmark::DoNotOptimize(block_.data());
    return true;
  }
  bool tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                  int64_t timestampMs) noexcept override {
    return produce(topic, payload, timestampMs);
  }
  void poll() noexcept override {}
  int flush(int) override { return 0; }

private:
  std::vector<uint64_t> block_;
};

/// Full datagrams of one ESS instrument file through CaenModule::process(). By default the sink
/// only counts (one virtual call per event, as the daemon's sink with --no-kafka), so this
/// measures the module, not vector growth; with `ev44` the events go into efu's ev44 sink with
/// its defaults (50000 events, one pulse per message) and a BlockProducer: what publishing
/// adds to the processing thread.
void processInstrument(benchmark::State &state, const std::string &config,
                       const std::string &calibration, bool ev44 = false) {
  readout::FakeModuleContext ctx(caen::test::shipped(config), config);
  ctx.setCalibration(caen::test::shippedCalibration(calibration), calibration);
  ctx.sink.keep = false;
  BlockProducer producer;
  Stats kafkaStats;
  kafka::Ev44Sink ev44Sink(producer, "loki_detector", "loki", 50000, 200, kafkaStats);
  if (ev44) {
    ctx.eventSink = &ev44Sink;
  }
  caen::CaenModule module(ctx); // registers its sources

  for (auto &[name, sink] : ctx.sources) {
    sink.keep = false;
  }
  caen::CaenSource source(caen::test::shipped(config), config, 1,
                          caen::test::shippedCalibration(calibration), calibration);
  const auto datagrams = makeDatagrams(source, static_cast<int>(state.range(0)));
  size_t i = 0;
  int64_t readouts = 0;
  for (auto _ : state) {
    const auto &d = datagrams[i];
    i = i + 1 == datagrams.size() ? 0 : i + 1;
    module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    readouts += static_cast<int64_t>((d.size() - 30) / 24);
  }
  state.SetItemsProcessed(readouts);
  state.counters["readouts/s"] =
      benchmark::Counter(static_cast<double>(readouts), benchmark::Counter::kIsRate);
  state.counters["distinct"] = static_cast<double>(datagrams.size());
  if (ctx.value("events.count") != readouts) {
    state.SkipWithError("not every readout became an event");
  }
  ev44Sink.flush();
  if (ev44 && kafkaStats.find("kafka.ev44.events")->get() != readouts) {
    state.SkipWithError("not every event reached an ev44 message");
  }
}

/// LoKI (LokiFull.json, lokinullcalib.json): the figure docs/benchmarks tracks.
void BM_CaenProcessNullSink(benchmark::State &state) {
  processInstrument(state, "LokiFull.json", "lokinullcalib.json");
}

/// LoKI into the ev44 sink: the ratio to BM_CaenProcessNullSink is Kafka's share of the
/// processing core.
void BM_CaenProcessEv44Sink(benchmark::State &state) {
  processInstrument(state, "LokiFull.json", "lokinullcalib.json", true);
}

/// LoKI as `partitions` partitions on as many threads (--proc-threads), every one given every
/// datagram: the aggregate readouts/s, to compare with one partition.
void BM_CaenPartitions(benchmark::State &state) {
  const auto partitions = static_cast<unsigned>(state.range(0));
  const nlohmann::json config = caen::test::shipped("LokiFull.json");
  const nlohmann::json calibration = caen::test::shippedCalibration("lokinullcalib.json");
  caen::CaenSource source(config, "LokiFull.json", 1, calibration, "lokinullcalib.json");
  readout::test::processPartitioned<caen::CaenModule>(
      state, partitions, config, "LokiFull.json",
      makeDatagrams(source, readout::test::kDistinctDatagrams), sizeof(caen::CaenReadout), true,
      calibration);
}

} // namespace

BENCHMARK(BM_CaenPartitions)->Arg(1)->Arg(2)->UseManualTime();
using readout::test::withCycles;
BENCHMARK(BM_CaenProcessNullSink)->Apply(withCycles);
BENCHMARK(BM_CaenProcessEv44Sink)->Apply(withCycles);
BENCHMARK_CAPTURE(processInstrument, bifrost, std::string("bifrost.json"),
                  std::string("bifrostllbcalib.json"))
    ->Apply(withCycles);
BENCHMARK_CAPTURE(processInstrument, cspec, std::string("cspec.json"),
                  std::string("cspecnullcalib.json"))
    ->Apply(withCycles);
BENCHMARK_CAPTURE(processInstrument, miracles, std::string("miracles.json"),
                  std::string("miraclesnullcalib.json"))
    ->Apply(withCycles);
BENCHMARK_CAPTURE(processInstrument, tbl3he, std::string("tbl3he.json"),
                  std::string("tbl3henullcalib.json"))
    ->Apply(withCycles);
BENCHMARK_MAIN();
