// SPDX-License-Identifier: BSD-2-Clause
// Module loader: descriptor checks, refusal of mismatched dummy modules, search, instruments.
// (Creating instances with the daemon's context: tests/efu/DaemonContextTest.cpp.)
#include "common/sdk/ModuleLoader.h"

#include "common/sdk/ModuleConfig.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef EFU_TEST_MODULE_DIR
#error "EFU_TEST_MODULE_DIR must be defined by the build"
#endif

namespace efu {
namespace {

namespace fs = std::filesystem;

const fs::path kModuleDir = EFU_TEST_MODULE_DIR;
const std::string kOurAbi = std::to_string(EFU_MODULE_ABI_VERSION);
constexpr const char *kFakeToolchain = "gcc-0.0/libstdc++-0/c++0/spdlog-0.0/json-0.0";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// ---- checkDescriptor on hand-built descriptors ----

sdk::Module *createNothing(sdk::ModuleContext *) {
  return nullptr;
}
void destroyNothing(sdk::Module *) {}

EfuModuleDescriptor goodDescriptor() {
  return EfuModuleDescriptor{EFU_MODULE_ABI_VERSION,
                             sizeof(EfuModuleDescriptor),
                             EFU_TOOLCHAIN_TAG,
                             "handmade",
                             "1.0",
                             "hand-built descriptor",
                             nullptr,
                             0,
                             createNothing,
                             destroyNothing,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr};
}

// The default ev44 source_name (issue 38 item 1): what the module declares for the config (the
// ESS EFU's name), else the instrument; a module's refusal is a ConfigError with its reason.
TEST(DefaultSourceName, TheModulesOwnElseTheInstrument) {
  const nlohmann::json config = {{"Detector", "MAGIC"}};
  EfuModuleDescriptor d = goodDescriptor();
  EXPECT_EQ(defaultSourceName(d, config, "m.json", "loki"), "loki");
  d.sourceName = [](const nlohmann::json *c, const char *, std::string *out, std::string *) {
    *out = c->at("Detector") == "MAGIC" ? "magic" : "";
    return true;
  };
  EXPECT_EQ(defaultSourceName(d, config, "m.json", "dream"), "magic");
  EXPECT_EQ(defaultSourceName(d, nlohmann::json{{"Detector", "x"}}, "m.json", "dream"), "dream")
      << "an empty name is no name";
  d.sourceName = [](const nlohmann::json *, const char *file, std::string *, std::string *error) {
    *error = std::string(file) + ": Detector = \"x\": refused";
    return false;
  };
  try {
    (void)defaultSourceName(d, config, "m.json", "dream");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError &e) {
    EXPECT_EQ(std::string(e.what()), "m.json: Detector = \"x\": refused");
  }
}

TEST(CheckDescriptor, AcceptsAMatchingDescriptor) {
  EXPECT_EQ(checkDescriptor(goodDescriptor()), "");
}

TEST(CheckDescriptor, RefusesAnyOtherAbiNamingBothNumbers) {
  // Rebuild per release: neither a newer nor an older ABI is loaded (docs/modules.md).
  for (uint32_t abi : {uint32_t{EFU_MODULE_ABI_VERSION + 1}, uint32_t{EFU_MODULE_ABI_VERSION - 1},
                       uint32_t{99}, uint32_t{0}}) {
    auto d = goodDescriptor();
    d.abiVersion = abi;
    const std::string message = checkDescriptor(d);
    EXPECT_TRUE(contains(message, "module ABI " + std::to_string(abi) +
                                      " is not efu's module ABI " + kOurAbi))
        << message;
    EXPECT_TRUE(contains(message, "rebuild")) << message;
  }
}

TEST(CheckDescriptor, RefusesAnyOtherDescriptorSizeNamingBothSizes) {
  for (uint32_t size : {uint32_t{sizeof(EfuModuleDescriptor) - sizeof(void *)},
                        uint32_t{sizeof(EfuModuleDescriptor) + sizeof(void *)}}) {
    auto d = goodDescriptor();
    d.structSize = size;
    const std::string message = checkDescriptor(d);
    EXPECT_TRUE(contains(message, "descriptor is " + std::to_string(size) + " bytes")) << message;
    EXPECT_TRUE(contains(message, "expects " + std::to_string(sizeof(EfuModuleDescriptor))))
        << message;
  }
}

TEST(CheckDescriptor, RefusesADifferentToolchainNamingBothTags) {
  auto d = goodDescriptor();
  d.toolchain = kFakeToolchain;
  const std::string message = checkDescriptor(d);
  EXPECT_TRUE(contains(message, std::string("'") + kFakeToolchain + "'")) << message;
  EXPECT_TRUE(contains(message, std::string("'") + EFU_TOOLCHAIN_TAG + "'")) << message;
  EXPECT_TRUE(contains(message, "rebuild")) << message;
}

TEST(CheckDescriptor, RefusesAMissingToolchain) {
  auto d = goodDescriptor();
  d.toolchain = nullptr;
  const std::string message = checkDescriptor(d);
  EXPECT_TRUE(contains(message, "(none)")) << message;
  EXPECT_TRUE(contains(message, EFU_TOOLCHAIN_TAG)) << message;
}

TEST(CheckDescriptor, RefusesMissingNameOrFunctions) {
  auto noName = goodDescriptor();
  noName.name = nullptr;
  EXPECT_NE(checkDescriptor(noName), "");
  auto noCreate = goodDescriptor();
  noCreate.create = nullptr;
  EXPECT_NE(checkDescriptor(noCreate), "");
  auto noDestroy = goodDescriptor();
  noDestroy.destroy = nullptr;
  EXPECT_NE(checkDescriptor(noDestroy), "");
}

TEST(CheckDescriptor, ToolchainTagNamesCompilerLibraryAndStandard) {
  const std::string tag = EFU_TOOLCHAIN_TAG;
  EXPECT_TRUE(tag.starts_with("gcc-")) << tag;
  EXPECT_TRUE(contains(tag, "/libstdc++-")) << tag;
  EXPECT_TRUE(contains(tag, "/c++2020")) << tag;
  EXPECT_TRUE(contains(tag, "/spdlog-")) << tag;
  EXPECT_TRUE(contains(tag, "/json-")) << tag;
}

// ---- search path and names ----

TEST(ModuleSearch, FileNameAndSearchOrder) {
  EXPECT_EQ(moduleFileName("udp"), "efu-module-udp.so");
  const auto dirs = moduleSearchPath({"/first", "/second"});
  ASSERT_GE(dirs.size(), 3U);
  EXPECT_EQ(dirs[0], fs::path("/first"));
  EXPECT_EQ(dirs[1], fs::path("/second"));
  EXPECT_EQ(dirs.back().filename(), "modules") << "the build tree comes last";
}

TEST(ModuleSearch, InstallDirIsFoundRelativeToTheExecutable) {
  // <prefix>/bin/efu looks in <prefix>/lib/efu/modules whatever the prefix (cmake --install
  // --prefix, the .deb's /usr); no directory of the configure step is compiled in.
  const fs::path exeDir = fs::read_symlink("/proc/self/exe").parent_path();
  const auto dirs = moduleSearchPath({});
  ASSERT_EQ(dirs.size(), 2U);
  EXPECT_EQ(dirs[0], (exeDir / EFU_MODULE_DIR_FROM_BINDIR).lexically_normal());
  // A program inside the build tree (this test) also finds the tree's modules, wherever it sits.
  EXPECT_EQ(dirs[1], fs::path(EFU_BUILD_DIR) / "modules");
}

TEST(ModuleSearch, ListsTheDummyModulesSorted) {
  const auto names = listModules({kModuleDir, "/nonexistent-efu-dir"});
  EXPECT_EQ(names, (std::vector<std::string>{"dummy", "dummy_abi1", "dummy_abi99", "dummy_noentry",
                                             "dummy_toolchain"}));
}

TEST(ModuleSearch, UnknownModuleListsWhatWasFoundAndWhere) {
  const fs::path missing = "/nonexistent-efu-dir";
  try {
    loadModule("nosuch", {missing, kModuleDir});
    FAIL() << "expected ModuleNotFound";
  } catch (const ModuleNotFound &e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "'nosuch'")) << message;
    EXPECT_TRUE(contains(message, "efu-module-nosuch.so")) << message;
    EXPECT_TRUE(contains(message, missing.string())) << message;
    EXPECT_TRUE(contains(message, kModuleDir.string())) << message;
    EXPECT_TRUE(contains(message, "dummy, dummy_abi1, dummy_abi99, dummy_noentry, dummy_toolchain"))
        << message;
    EXPECT_TRUE(contains(message, "--module-path")) << message;
  }
}

TEST(ModuleSearch, UnknownModuleWithNothingFoundSaysNone) {
  try {
    loadModule("nosuch", {"/nonexistent-efu-dir"});
    FAIL() << "expected ModuleNotFound";
  } catch (const ModuleNotFound &e) {
    EXPECT_TRUE(contains(e.what(), "(none)")) << e.what();
  }
}

TEST(Instruments, AnEssInstrumentSelectsTheModuleThatServesIt) {
  for (const char *name : {"loki", "bifrost", "cspec", "miracles", "tbl3he"}) {
    EXPECT_EQ(moduleOf(name), "caen") << name;
  }
  EXPECT_EQ(moduleOf("caen"), "caen");
  EXPECT_EQ(moduleOf("nosuch"), "nosuch");
  // An instrument name looks for its module's file, and says so when it is missing.
  try {
    loadModule("loki", {kModuleDir});
    FAIL() << "expected ModuleNotFound";
  } catch (const ModuleNotFound &e) {
    EXPECT_TRUE(contains(e.what(), "efu-module-caen.so")) << e.what();
    EXPECT_TRUE(contains(e.what(), "instruments: loki, bifrost, cspec, miracles, tbl3he"))
        << e.what();
  }
}

TEST(Instruments, TheConfigsDetectorMustNameTheInstrument) {
  const auto config = [](const char *detector) {
    return nlohmann::json{{"Detector", detector}, {"Resolution", 300}};
  };
  EXPECT_NO_THROW(checkInstrument("bifrost", config("bifrost"), "b.json"));
  EXPECT_NO_THROW(checkInstrument("loki", config("LoKI"), "l.json"));  // as ESS spells it
  EXPECT_NO_THROW(checkInstrument("caen", config("cspec"), "c.json")); // a module: any
  EXPECT_NO_THROW(checkInstrument("loki", nlohmann::json::object(), "(defaults)"));
  try {
    checkInstrument("loki", config("bifrost"), "b.json");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), "b.json: Detector = \"bifrost\": -d loki serves loki"))
        << e.what();
  }
}

TEST(Instruments, MultiBladeFilesNameTheInstrumentByItsGeometry) {
  // The ESS Multi-Blade files all say "Detector": "Freia"; InstrumentGeometry tells them apart,
  // and TBLMB's files use AMOR's geometry.
  const auto config = [](const char *geometry) {
    return nlohmann::json{{"Detector", "Freia"}, {"InstrumentGeometry", geometry}};
  };
  EXPECT_EQ(moduleOf("freia"), "vmm3");
  EXPECT_EQ(moduleOf("tblmb"), "vmm3");
  EXPECT_NO_THROW(checkInstrument("freia", config("Freia"), "f.json"));
  EXPECT_NO_THROW(checkInstrument("amor", config("AMOR"), "a.json"));
  EXPECT_NO_THROW(checkInstrument("tblmb", config("AMOR"), "t.json"));
  EXPECT_NO_THROW(checkInstrument("estia", config("Estia"), "e.json"));
  EXPECT_NO_THROW(checkInstrument("vmm3", config("Estia"), "e.json")); // a module: any
  try {
    checkInstrument("freia", config("Estia"), "e.json");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), "e.json: InstrumentGeometry = \"Estia\": -d freia serves freia"))
        << e.what();
  }
  EXPECT_THROW(checkInstrument("tblmb", config("TBLMB"), "t.json"), sdk::ConfigError);
}

TEST(Instruments, BeerIsTheCbmModuleWithABeerFile) {
  // The ESS beam monitor files say "Detector": "CBM"; BEER's (beer_base_test.json) "BEER".
  const auto config = [](const char *detector) {
    return nlohmann::json{{"Detector", detector}, {"MaxFENId", 1}};
  };
  EXPECT_EQ(moduleOf("beer"), "cbm");
  EXPECT_NO_THROW(checkInstrument("beer", config("BEER"), "b.json"));
  EXPECT_NO_THROW(checkInstrument("cbm", config("BEER"), "b.json")); // the module: either
  EXPECT_NO_THROW(checkInstrument("cbm", config("CBM"), "c.json"));
  try {
    checkInstrument("beer", config("CBM"), "cbmtest.json");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), "cbmtest.json: Detector = \"CBM\": -d beer serves beer; use "
                                   "-d cbm"))
        << e.what();
  }
}

TEST(Instruments, TheListNamesEachModulesInstruments) {
  const std::string list = describeModules({kModuleDir});
  EXPECT_TRUE(contains(list, "dummy\n")) << list;
  EXPECT_FALSE(contains(list, "ESS instruments")) << list; // no caen among the dummies
  EXPECT_TRUE(contains(describeModules({"/nonexistent-efu-dir"}), "no modules found in"));
}

/// A scratch directory unique to this test, removed at the end.
class ScratchDir : public ::testing::Test {
protected:
  ScratchDir() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("efu-loader-" + std::to_string(::getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  ~ScratchDir() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(ScratchDir, FirstDirectoryWins) {
  // A broken module of the same name earlier on the path shadows the good one.
  fs::copy_file(kModuleDir / "efu-module-dummy_toolchain.so", dir_ / "efu-module-dummy.so");
  EXPECT_THROW(loadModule("dummy", {dir_, kModuleDir}), ModuleRejected);
  const auto library = loadModule("dummy", {kModuleDir, dir_});
  EXPECT_EQ(library->path(), kModuleDir / "efu-module-dummy.so");
  EXPECT_EQ(listModules({dir_, kModuleDir}).size(), 5U) << "a name is listed once";
}

TEST_F(ScratchDir, FileThatIsNotASharedObjectIsRejected) {
  std::ofstream(dir_ / "efu-module-garbage.so") << "not an ELF file\n";
  try {
    loadModule("garbage", {dir_});
    FAIL() << "expected ModuleRejected";
  } catch (const ModuleRejected &e) {
    EXPECT_TRUE(contains(e.what(), "cannot load module")) << e.what();
    EXPECT_TRUE(contains(e.what(), (dir_ / "efu-module-garbage.so").string())) << e.what();
  }
}

// ---- real dummy modules ----

std::string rejection(const std::string &name) {
  try {
    loadModule(name, {kModuleDir});
  } catch (const ModuleRejected &e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(ModuleLoader, RefusesModuleWithAnotherAbi) {
  const std::string message = rejection("dummy_abi99");
  EXPECT_TRUE(contains(message, "refusing module")) << message;
  EXPECT_TRUE(contains(message, (kModuleDir / "efu-module-dummy_abi99.so").string())) << message;
  EXPECT_TRUE(contains(message, "module ABI 99 is not efu's module ABI " + kOurAbi)) << message;
  EXPECT_TRUE(contains(message, "rebuild")) << message;
}

TEST(ModuleLoader, RefusesAModuleOfTheOldMajorMinorAbi) {
  // dummy_abi1 exports the descriptor exactly as a module built against ABI 1.1 did, with the
  // same toolchain: efu reads the first field as the ABI number and refuses it.
  const std::string message = rejection("dummy_abi1");
  EXPECT_TRUE(contains(message, "module ABI 1 is not efu's module ABI " + kOurAbi)) << message;
  EXPECT_TRUE(contains(message, "rebuild")) << message;
}

TEST(ModuleLoader, RefusesModuleWithAnotherToolchain) {
  const std::string message = rejection("dummy_toolchain");
  EXPECT_TRUE(contains(message, (kModuleDir / "efu-module-dummy_toolchain.so").string()))
      << message;
  EXPECT_TRUE(contains(message, kFakeToolchain)) << message;
  EXPECT_TRUE(contains(message, EFU_TOOLCHAIN_TAG)) << message;
}

TEST(ModuleLoader, RefusesLibraryWithoutTheEntrySymbol) {
  const std::string message = rejection("dummy_noentry");
  EXPECT_TRUE(contains(message, "does not export " EFU_MODULE_ENTRY_SYMBOL)) << message;
  EXPECT_TRUE(contains(message, "EFU_MODULE")) << message;
}

TEST(ModuleLoader, LoadsTheGoodDummy) {
  const auto library = loadModule("dummy", {"/nonexistent-efu-dir", kModuleDir});
  ASSERT_NE(library, nullptr);
  EXPECT_EQ(library->path(), kModuleDir / "efu-module-dummy.so");
  EXPECT_EQ(fs::path(EFU_TEST_MODULE_FILE), library->path());
  const EfuModuleDescriptor &d = library->descriptor();
  EXPECT_STREQ(d.name, "dummy");
  EXPECT_STREQ(d.version, "0.0.1");
  EXPECT_EQ(d.abiVersion, static_cast<uint32_t>(EFU_MODULE_ABI_VERSION));
  EXPECT_EQ(d.structSize, sizeof(EfuModuleDescriptor));
  ASSERT_EQ(d.configKeyCount, 2U);
  EXPECT_STREQ(d.configKeys[0].key, "increment");
  EXPECT_TRUE(contains(formatModuleHelp(d), "increment")) << formatModuleHelp(d);
}

} // namespace
} // namespace efu
