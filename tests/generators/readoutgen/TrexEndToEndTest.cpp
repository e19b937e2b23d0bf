// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS Multi-Grid instruments: readoutgen --truth → efu -d trex / -d let (the
// ESS files) → efu-broker → efu-dump; every event comes back with the ESS pixel id and time of
// flight of the truth, and nothing else comes back. efu is stopped with SIGTERM before the
// topic is read: what still waits in the event builders is formed by the shutdown flush.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>

namespace efu::testkit {
namespace {

TEST(TrexEndToEnd, TrexAndLetMatchGroundTruth) {
  EndToEnd e2e("trex");
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/trex/configs/";
  // LET has two event builders: a neutron too close to the last one of both is refused and
  // readoutgen retries its time for ever, so LET gets fewer neutrons per pulse (readoutgen is
  // seeded: the run is the same every time).
  struct Instrument {
    std::string name, count, perPulse;
  };
  for (const Instrument &i :
       std::vector<Instrument>{{"trex", "4000", "1000"}, {"let", "1000", "50"}}) {
    const std::string config = configs + i.name + ".json";
    EndToEnd::Run run;
    ASSERT_NO_FATAL_FAILURE(e2e.start(run, i.name, {"-d", i.name, "-f", config},
                                      {"-d", i.name, "-f", config, "-n", i.count, "--eps", "100000",
                                       "--events-per-pulse", i.perPulse, "--pattern", "uniform"}));
    // Each neutron is formed in its own datagram (TrexSource's trailing groups), so all are
    // published while efu runs; only trailing groups wait for the shutdown flush.
    ASSERT_EQ(run.truthEvents, std::stoll(i.count)) << i.name;
    EXPECT_EQ(run.counter("parser.essheader.errors.timehigh"), 0) << i.name;
    EXPECT_EQ(run.counter("cluster.no_coincidence"), 0) << i.name;
    EXPECT_EQ(run.counter("events.pixel_errors"), 0) << i.name;
    EXPECT_EQ(run.counter("cluster.matched_clusters"), run.truthEvents) << i.name;
    // Under the ESS EFU's source name, "trex" for TREX and LET (src/modules/trex/TREXBase.cpp).
    ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, i.name + "_detector", "trex"));
  }
}

// Issue 40: TREX as two partitions (--proc-threads 2, by event builder): the same events as the
// truth (so as one thread), the same counters, one gap-free message id sequence.
TEST(TrexEndToEnd, TwoProcessingThreadsGiveTheTruthExactly) {
  EndToEnd e2e("trex-partitions");
  const std::string config = std::string(EFU_SOURCE_DIR) + "/modules/trex/configs/trex.json";
  EndToEnd::Run run;
  ASSERT_NO_FATAL_FAILURE(e2e.start(run, "trex", {"-d", "trex", "-f", config, "--proc-threads", "2"},
                                    {"-d", "trex", "-f", config, "-n", "4000", "--eps", "100000",
                                     "--events-per-pulse", "1000", "--pattern", "uniform"}));
  ASSERT_EQ(run.truthEvents, 4000);
  EXPECT_NE(run.efu->output().find("2 processing threads (--proc-threads 2)"), std::string::npos)
      << run.efu->output();
  EXPECT_EQ(run.counter("cluster.matched_clusters"), run.truthEvents);
  EXPECT_EQ(run.counter("cluster.no_coincidence"), 0);
  EXPECT_EQ(run.counter("parser.essheader.ok"), run.counter("receive.packets"))
      << "header counters count the stream once";
  ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, "trex_detector", "trex"));
}

} // namespace
} // namespace efu::testkit
