// SPDX-License-Identifier: BSD-2-Clause
// End to end for ESS NMX: readoutgen --truth → efu -d nmx (the ESS files nmx.json and
// nmx_split.json, unchanged) → efu-broker → efu-dump; every event comes back with the ESS uTPC
// pixel id and time of flight of the truth, and nothing else comes back.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>

namespace efu::testkit {
namespace {

TEST(NmxEndToEnd, EachEssNmxFileMatchesGroundTruth) {
  EndToEnd e2e("nmx");
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/nmx/configs/";
  // The label is the --instrument (the topic's prefix), so the two runs keep apart.
  for (const std::string label : {"nmx", "nmx_split"}) {
    const std::string config = configs + label + ".json";
    EndToEnd::Run run;
    ASSERT_NO_FATAL_FAILURE(e2e.start(run, label,
                                      {"-d", "nmx", "--instrument", label, "-f", config},
                                      {"-d", "nmx", "-f", config, "-n", "4000", "--eps", "100000",
                                       "--events-per-pulse", "1000", "--pattern", "uniform"}));
    // Neutrons too close to the previous one of their panel are not drawn; most are.
    ASSERT_GE(run.truthEvents, 2000) << label;
    // Every datagram's header accepted: readoutgen keeps to the file's MaxPulseTimeNS.
    EXPECT_EQ(run.counter("parser.essheader.errors.timehigh"), 0) << label;
    EXPECT_EQ(run.counter("cluster.no_coincidence"), 0) << label;
    EXPECT_EQ(run.counter("geometry.validation_errors"), 0) << label;
    // Under the ESS EFU's source name, "nmx" (src/modules/nmx/NMXBase.cpp), whatever the
    // instrument name.
    ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, label + "_detector", "nmx"));
  }
}

} // namespace
} // namespace efu::testkit
