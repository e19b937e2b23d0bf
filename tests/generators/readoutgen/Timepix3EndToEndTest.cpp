// SPDX-License-Identifier: BSD-2-Clause
// End to end for ODIN's Timepix3 camera: readoutgen -d odin --truth (an EVR datagram per pulse,
// camera datagrams of TDC and pixel words, no ESS headers) → efu -d odin (module timepix3, the
// ESS file) → efu-broker → efu-dump; every event comes back with the pixel id and time of flight
// of the truth, and nothing else comes back. The run starts 0.3 s before the camera's pixel
// clock wraps, so some pulses' pixels are timed across the wrap.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace efu::testkit {
namespace {

/// The ESS file with the pairing window widened (below) and ParallelThreads as given.
std::string odinConfig(EndToEnd &e2e, int parallelThreads) {
  nlohmann::json config;
  std::ifstream(std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json") >> config;
  config["EvrTdcPairWindowNS"] = 10'000'000'000LL;
  config["ParallelThreads"] = parallelThreads;
  const std::string path =
      (e2e.dir() / ("timepix3-" + std::to_string(parallelThreads) + ".json")).string();
  std::ofstream(path) << config.dump(2);
  return path;
}

// Issue 40: the ESS file's ParallelThreads 2 runs two processing threads, each clustering every
// second camera datagram: the events are the truth exactly (as with one), the counters too.
TEST(Timepix3EndToEnd, ParallelThreadsTwoGivesTheTruthExactly) {
  EndToEnd e2e("timepix3-partitions");
  const std::string configPath = odinConfig(e2e, 2);
  EndToEnd::Run run;
  ASSERT_NO_FATAL_FAILURE(e2e.start(run, "odin", {"-d", "odin", "-f", configPath},
                                    {"-d", "odin", "-f", configPath, "-n", "6000", "--eps", "50000",
                                     "--events-per-pulse", "500", "--pattern", "uniform"}));
  ASSERT_EQ(run.truthEvents, 6000);
  EXPECT_NE(run.efu->output().find("2 processing threads (ParallelThreads 2 in"),
            std::string::npos)
      << run.efu->output();
  EXPECT_EQ(run.counter("readouts.pixel_readout_count"), 9 * run.truthEvents);
  EXPECT_EQ(run.counter("readouts.evr.evr_readout_count"), 12);
  EXPECT_EQ(run.counter("readouts.tdc.tdc1rising_readout_count"), 12);
  EXPECT_EQ(run.counter("handlers.pixelevent.no_global_time_error"), 0);
  ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, "odin_detector", "timepix3"));
}

TEST(Timepix3EndToEnd, OdinMatchesGroundTruth) {
  EndToEnd e2e("timepix3");
  // The ESS file, with the EVR/TDC pairing window widened from the ESS's 20 ms to 10 s: the
  // pairing is by arrival time, and a sender or receiver stalled for 20 ms between a pulse's
  // EVR datagram and its first camera datagram must not make the run fail. (A wide window also
  // pairs a pulse's EVR with the previous pulse's TDC, harmlessly: that pulse's TDC follows
  // before any of its pixels.)
  nlohmann::json config;
  std::ifstream(std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json") >> config;
  config["EvrTdcPairWindowNS"] = 10'000'000'000LL;
  const std::string configPath = (e2e.dir() / "timepix3.json").string();
  std::ofstream(configPath) << config.dump(2);

  EndToEnd::Run run;
  ASSERT_NO_FATAL_FAILURE(e2e.start(run, "odin", {"-d", "odin", "-f", configPath},
                                    {"-d", "odin", "-f", configPath, "-n", "6000", "--eps", "50000",
                                     "--events-per-pulse", "500", "--pattern", "uniform"}));
  ASSERT_EQ(run.truthEvents, 6000);
  EXPECT_EQ(run.counter("readouts.pixel_readout_count"), 9 * run.truthEvents);
  EXPECT_EQ(run.counter("readouts.evr.evr_readout_count"), 12); // 6000 / 500 pulses
  EXPECT_EQ(run.counter("readouts.tdc.tdc1rising_readout_count"), 12);
  EXPECT_EQ(run.counter("handlers.timeingevent.miss_tdc_count"), 0);
  EXPECT_EQ(run.counter("handlers.pixelevent.no_global_time_error"), 0);
  EXPECT_EQ(run.counter("handlers.pixelevent.cluster_size_to_small"), 0);
  EXPECT_EQ(run.counter("handlers.pixelevent.event_time_next_pulse_count"), 0);
  EXPECT_EQ(run.counter("events.pixel_errors"), 0);
  // Under the ESS EFU's source name, "timepix3" (src/modules/timepix3/Timepix3Base.cpp), not
  // the instrument's.
  ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, "odin_detector", "timepix3"));
}

} // namespace
} // namespace efu::testkit
