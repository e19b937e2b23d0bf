// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS Multi-Blade instruments: readoutgen --truth → efu -d <instrument> (the
// ESS file, with its ESS calibration where ESS ships one) → efu-broker → efu-dump; every event
// comes back with the ESS pixel id and time of flight of the truth, and nothing else comes back.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>

namespace efu::testkit {
namespace {

TEST(Vmm3EndToEnd, EachEssMultiBladeInstrumentMatchesGroundTruth) {
  EndToEnd e2e("vmm3");
  struct Instrument {
    std::string name, config, calibration;
  };
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/";
  const std::string calibrations = std::string(EFU_SOURCE_DIR) + "/modules/vmm3/calibrations/";
  for (const Instrument &i :
       std::vector<Instrument>{{"freia", "freia.json", "calib.json"},
                               {"estia", "estia_config.json", "estia_calib.json"},
                               {"amor", "amor.json", ""},
                               {"tblmb", "tblmb.json", ""}}) {
    const std::string config = configs + i.config;
    std::vector<std::string> efuArgs{"-d", i.name, "-f", config};
    std::vector<std::string> generatorArgs{"-d",    i.name,      "-f",
                                           config,  "-n",        "4000",
                                           "--eps", "100000",    "--events-per-pulse",
                                           "1000",  "--pattern", "uniform"};
    if (!i.calibration.empty()) {
      for (auto *args : {&efuArgs, &generatorArgs}) {
        args->insert(args->end(), {"--calibration", calibrations + i.calibration});
      }
    }
    EndToEnd::Run run;
    ASSERT_NO_FATAL_FAILURE(e2e.start(run, i.name, efuArgs, generatorArgs));
    // Neutrons where no cassette is, or too close to the previous one of their cassette, are
    // not drawn; most are.
    ASSERT_GE(run.truthEvents, 2000) << i.name;
    // Every datagram's header accepted: readoutgen keeps to the file's MaxPulseTimeNS.
    EXPECT_EQ(run.counter("parser.essheader.errors.timehigh"), 0) << i.name;
    EXPECT_EQ(run.counter("cluster.no_coincidence"), 0) << i.name;
    EXPECT_EQ(run.counter("geometry.validation_errors"), 0) << i.name;
    // Under the ESS EFU's source name for every Multi-Blade instrument (its
    // src/modules/freia/FreiaBase.h FlatBufferSource "multiblade").
    ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, i.name + "_detector", "multiblade"));
  }
}

} // namespace
} // namespace efu::testkit
