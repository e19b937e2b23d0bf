// SPDX-License-Identifier: BSD-2-Clause
// createModule with the daemon's context: counters land in the daemon's Stats, destroy goes
// through the module, the instance keeps its library open, a failed start names the module's
// reason (escaped). The dummy modules are built by tests/common/sdk.
#include "efu/DaemonContext.h"

#include "common/sdk/ModuleConfig.h"
#include "common/stats/Stats.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <string>

#ifndef EFU_TEST_MODULE_DIR
#error "EFU_TEST_MODULE_DIR must be defined by the build"
#endif

namespace efu {
namespace {

namespace fs = std::filesystem;

const fs::path kModuleDir = EFU_TEST_MODULE_DIR;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Collects events from the module.
class RecordingSink final : public sdk::EventSink {
public:
  void add(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept override {
    ++count;
    lastPulse = pulseTimeNs;
    lastTof = tofNs;
    lastPixel = pixelId;
  }
  int count = 0;
  int64_t lastPulse = 0;
  int32_t lastTof = 0;
  int32_t lastPixel = 0;
};

class ModuleInstance : public ::testing::Test {
protected:
  ModuleInstance()
      : log_(std::make_shared<spdlog::logger>("loader-test",
                                              std::make_shared<spdlog::sinks::null_sink_mt>())),
        library_(loadModule("dummy", {kModuleDir})) {}

  DaemonContext context(const nlohmann::json &config) {
    return DaemonContext(stats_, *log_, sink_,
                         validateModuleConfig(library_->descriptor(), config, "test.json"),
                         "test.json", 1000);
  }

  Stats stats_;
  RecordingSink sink_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<ModuleLibrary> library_;
};

TEST_F(ModuleInstance, CreateRegistersCountersAndProcesses) {
  DaemonContext ctx = context({{"increment", 3}});
  ModulePtr module = createModule(library_, ctx);
  ASSERT_NE(module, nullptr);
  const Counter *packets = stats_.find("dummy.packets");
  ASSERT_NE(packets, nullptr) << "the module's counter must be in the daemon's Stats";
  EXPECT_NE(stats_.find("dummy.destroyed"), nullptr);
  EXPECT_EQ(ctx.lostCounter(), packets);
  EXPECT_EQ(ctx.error(), "");

  const uint8_t data[12] = {};
  module->process({data, sizeof(data), 0, 1234});
  module->process({data, sizeof(data), 0, 5678});
  EXPECT_EQ(packets->get(), 6);
  EXPECT_EQ(sink_.count, 2);
  EXPECT_EQ(sink_.lastPulse, 5678);
  EXPECT_EQ(sink_.lastTof, 12);
  EXPECT_EQ(sink_.lastPixel, 7);
}

TEST_F(ModuleInstance, DestroyGoesThroughTheModule) {
  DaemonContext ctx = context(nlohmann::json::object());
  ModulePtr module = createModule(library_, ctx);
  const Counter *destroyed = stats_.find("dummy.destroyed");
  ASSERT_NE(destroyed, nullptr);
  EXPECT_EQ(destroyed->get(), 0);
  module.reset();
  EXPECT_EQ(destroyed->get(), 1);
}

TEST_F(ModuleInstance, InstanceKeepsTheLibraryOpen) {
  const fs::path file = library_->path();
  DaemonContext ctx = context(nlohmann::json::object());
  ModulePtr module = createModule(library_, ctx);
  library_.reset(); // only the instance holds the library now
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << "the library must stay loaded while an instance lives";
  if (handle != nullptr) {
    dlclose(handle);
  }
  const uint8_t data[1] = {};
  module->process({data, 1, 0, 0}); // code of the library still mapped
  EXPECT_EQ(stats_.find("dummy.packets")->get(), 1);
  module.reset(); // the last reference: destroy() runs before the library is released
  EXPECT_EQ(stats_.find("dummy.destroyed")->get(), 1);
  // (Whether dlclose() then unmaps it is glibc's choice: STB_GNU_UNIQUE symbols from libstdc++
  // headers make a library non-deletable, so that is not asserted here.)
}

TEST_F(ModuleInstance, ConstructorFailureIsReportedWithTheModulesMessage) {
  DaemonContext ctx = context({{"fail", true}});
  try {
    createModule(library_, ctx);
    FAIL() << "expected ModuleRejected";
  } catch (const ModuleRejected &e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "'dummy' failed to start")) << message;
    EXPECT_TRUE(contains(message, "test.json: dummy asked to fail (key 'fail')")) << message;
  }
}

TEST_F(ModuleInstance, ControlBytesInTheModulesMessageAreShownEscaped) {
  // A module's reason quotes what it was given (here the config's name; in caen, key paths and
  // values from the file): an escape sequence or a carriage return must not reach the terminal.
  DaemonContext ctx(stats_, *log_, sink_,
                    validateModuleConfig(library_->descriptor(), {{"fail", true}}, "x"),
                    "conf\x1b[2J\r.json", 1000);
  try {
    createModule(library_, ctx);
    FAIL() << "expected ModuleRejected";
  } catch (const ModuleRejected &e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "conf\\x1b[2J\\x0d.json: dummy asked to fail")) << message;
    EXPECT_EQ(std::count_if(message.begin(), message.end(),
                            [](char c) { return static_cast<unsigned char>(c) < 0x20; }),
              0)
        << message;
  }
}

TEST_F(ModuleInstance, ConfigOutsideTheKeyTableIsRefusedBeforeCreate) {
  EXPECT_THROW(context({{"increment", 0}}), sdk::ConfigError);
  EXPECT_THROW(context({{"bogus", 1}}), sdk::ConfigError);
  EXPECT_EQ(stats_.size(), 0U) << "no module was created";
}

} // namespace
} // namespace efu
