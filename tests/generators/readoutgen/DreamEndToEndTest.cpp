// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS CDT instruments: readoutgen --truth → efu -d dream / -d magic /
// -d heimdal (the ESS files, unchanged) → efu-broker → efu-dump; every event comes back with the
// ESS pixel id and time of flight of the truth, and nothing else comes back. Real binaries on
// loopback.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>

namespace efu::testkit {
namespace {

TEST(DreamEndToEnd, DreamMagicAndHeimdalMatchGroundTruth) {
  EndToEnd e2e("dream");
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/";
  struct Instrument {
    std::string name, file;
  };
  for (const Instrument &i : std::vector<Instrument>{{"dream", "DreamInst.json"},
                                                     {"magic", "MagicInst.json"},
                                                     {"heimdal", "HeimdalInst.json"}}) {
    const std::string config = configs + i.file;
    EndToEnd::Run run;
    ASSERT_NO_FATAL_FAILURE(e2e.start(
        run, i.name, {"-d", i.name, "-f", config},
        {"-d", i.name, "-f", config, "-n", "30000", "--eps", "200000", "--pattern", "uniform"}));
    ASSERT_EQ(run.truthEvents, 30000) << i.name;
    EXPECT_EQ(run.counter("readouts.count"), run.truthEvents) << i.name;
    EXPECT_EQ(run.counter("parser.essheader.errors.timehigh"), 0) << i.name;
    EXPECT_EQ(run.counter("geometry.pixel_errors"), 0) << i.name;
    EXPECT_EQ(run.counter("geometry.validation_errors"), 0) << i.name;
    ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, i.name + "_detector"));
  }
}

} // namespace
} // namespace efu::testkit
