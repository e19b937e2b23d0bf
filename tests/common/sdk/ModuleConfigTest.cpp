// SPDX-License-Identifier: BSD-2-Clause
// Module configuration: validation against a descriptor's key table, JSON files, help text.
#include "common/sdk/ModuleConfig.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace efu {
namespace {

namespace fs = std::filesystem;
using sdk::ConfigError;
using sdk::ConfigType;

const EfuConfigKey kKeys[] = {
    {"threshold", ConfigType::Integer, "10", "ADC threshold", 0, 1000},
    {"gain", ConfigType::Number, "1.5", "Gain factor", 0.1, 10},
    {"enabled", ConfigType::Boolean, "true", "Process at all", 1, 0},
    {"label", ConfigType::String, "\"det\"", "A name", 1, 0},
    {"mapping", ConfigType::Array, nullptr, "Hybrid to plane mapping (required)", 1, 0},
    {"extra", ConfigType::Object, "{}", "Free-form settings", 1, 0},
    {"offset", ConfigType::Integer, "0", "Unbounded (minimum > maximum)", 1, 0},
};

EfuModuleDescriptor descriptor(const EfuConfigKey *keys, uint32_t count) {
  return EfuModuleDescriptor{EFU_MODULE_ABI_VERSION,
                             sizeof(EfuModuleDescriptor),
                             EFU_TOOLCHAIN_TAG,
                             "testmod",
                             "2.3.4",
                             "module for config tests",
                             keys,
                             count,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr,
                             nullptr};
}

const EfuModuleDescriptor kModule = descriptor(kKeys, static_cast<uint32_t>(std::size(kKeys)));
const EfuModuleDescriptor kNoKeys = descriptor(nullptr, 0);

nlohmann::json minimal() {
  return {{"mapping", nlohmann::json::array()}};
}

/// The ConfigError message of validating `config`, or "(accepted)".
std::string errorOf(const nlohmann::json &config, const EfuModuleDescriptor &d = kModule) {
  try {
    validateModuleConfig(d, config, "freia.json");
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "(accepted)";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(ModuleConfig, DefaultsAreFilledIn) {
  const auto out = validateModuleConfig(kModule, minimal(), "freia.json");
  EXPECT_EQ(out.at("threshold"), 10);
  EXPECT_TRUE(out.at("threshold").is_number_integer());
  EXPECT_DOUBLE_EQ(out.at("gain").get<double>(), 1.5);
  EXPECT_EQ(out.at("enabled"), true);
  EXPECT_EQ(out.at("label"), "det");
  EXPECT_EQ(out.at("mapping"), nlohmann::json::array());
  EXPECT_EQ(out.at("extra"), nlohmann::json::object());
  EXPECT_EQ(out.at("offset"), 0);
  EXPECT_EQ(out.size(), std::size(kKeys));
}

TEST(ModuleConfig, GivenValuesAreKept) {
  nlohmann::json config = minimal();
  config["threshold"] = 1000;
  config["gain"] = 2; // an integer is a number
  config["label"] = "x";
  config["mapping"] = {1, 2};
  config["extra"] = {{"a", 1}};
  config["offset"] = -123456789;
  const auto out = validateModuleConfig(kModule, config, "freia.json");
  EXPECT_EQ(out.at("threshold"), 1000);
  EXPECT_EQ(out.at("gain"), 2);
  EXPECT_EQ(out.at("label"), "x");
  EXPECT_EQ(out.at("mapping"), nlohmann::json({1, 2}));
  EXPECT_EQ(out.at("extra").at("a"), 1);
  EXPECT_EQ(out.at("offset"), -123456789);
}

TEST(ModuleConfig, UnknownKeyNamesFileKeyAndKnownKeys) {
  nlohmann::json config = minimal();
  config["treshold"] = 5;
  const std::string message = errorOf(config);
  EXPECT_TRUE(contains(message, "freia.json")) << message;
  EXPECT_TRUE(contains(message, "'treshold'")) << message;
  EXPECT_TRUE(contains(message, "'testmod'")) << message;
  EXPECT_TRUE(contains(message, "threshold, gain, enabled")) << message;
}

TEST(ModuleConfig, AnUnknownKeyIsEchoedWithItsControlBytesEscaped) {
  nlohmann::json config = minimal();
  config["thres\x1b[2J\rhold\x7f"] = 5; // would clear the terminal, overwrite the line
  const std::string message = errorOf(config);
  EXPECT_TRUE(contains(message, "unknown key 'thres\\x1b[2J\\x0dhold\\x7f'")) << message;
  for (const char c : message) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << message;
  }
}

TEST(ModuleConfig, AnyKeyIsUnknownToAModuleWithoutKeys) {
  EXPECT_EQ(errorOf(nlohmann::json::object(), kNoKeys), "(accepted)");
  const std::string message = errorOf({{"x", 1}}, kNoKeys);
  EXPECT_TRUE(contains(message, "'x'")) << message;
  EXPECT_TRUE(contains(message, "takes no keys")) << message;
}

TEST(ModuleConfig, WrongTypeNamesKeyAndValue) {
  struct Case {
    const char *key;
    nlohmann::json value;
    const char *shown;
    const char *type;
  };
  const Case cases[] = {
      {"threshold", "ten", "\"ten\"", "integer"},
      {"threshold", 2.5, "2.5", "integer"},
      {"gain", "1.5", "\"1.5\"", "number"},
      {"enabled", 1, "1", "boolean"},
      {"label", 7, "7", "string"},
      {"mapping", {{"a", 1}}, "{\"a\":1}", "array"},
      {"extra", nlohmann::json::array(), "[]", "object"},
  };
  for (const auto &c : cases) {
    nlohmann::json config = minimal();
    config[c.key] = c.value;
    const std::string message = errorOf(config);
    EXPECT_TRUE(contains(message, "freia.json")) << message;
    EXPECT_TRUE(contains(message, std::string("'") + c.key + "'")) << message;
    EXPECT_TRUE(contains(message, c.shown)) << message;
    EXPECT_TRUE(contains(message, c.type)) << message;
  }
}

TEST(ModuleConfig, RangeIsInclusive) {
  for (int threshold : {0, 1000}) {
    nlohmann::json config = minimal();
    config["threshold"] = threshold;
    EXPECT_EQ(errorOf(config), "(accepted)") << threshold;
  }
  for (double gain : {0.1, 10.0}) {
    nlohmann::json config = minimal();
    config["gain"] = gain;
    EXPECT_EQ(errorOf(config), "(accepted)") << gain;
  }
}

TEST(ModuleConfig, OutOfRangeNamesKeyValueAndRange) {
  nlohmann::json config = minimal();
  config["threshold"] = 1001;
  std::string message = errorOf(config);
  EXPECT_TRUE(contains(message, "freia.json")) << message;
  EXPECT_TRUE(contains(message, "'threshold' = 1001")) << message;
  EXPECT_TRUE(contains(message, "[0, 1000]")) << message;

  config["threshold"] = -1;
  message = errorOf(config);
  EXPECT_TRUE(contains(message, "'threshold' = -1")) << message;

  config = minimal();
  config["gain"] = 0.05;
  message = errorOf(config);
  EXPECT_TRUE(contains(message, "'gain' = 0.05")) << message;
  EXPECT_TRUE(contains(message, "[0.1, 10]")) << message;
}

TEST(ModuleConfig, RangeIgnoredWhenMinimumAboveMaximum) {
  nlohmann::json config = minimal();
  config["offset"] = -5'000'000'000;
  EXPECT_EQ(errorOf(config), "(accepted)");
}

TEST(ModuleConfig, RequiredKeyMissingNamesKeyTypeAndHelp) {
  const std::string message = errorOf(nlohmann::json::object());
  EXPECT_TRUE(contains(message, "freia.json")) << message;
  EXPECT_TRUE(contains(message, "'mapping'")) << message;
  EXPECT_TRUE(contains(message, "missing")) << message;
  EXPECT_TRUE(contains(message, "array")) << message;
  EXPECT_TRUE(contains(message, "Hybrid to plane mapping")) << message;
}

TEST(ModuleConfig, TopLevelMustBeAnObject) {
  for (const nlohmann::json &config :
       {nlohmann::json::array(), nlohmann::json(42), nlohmann::json("x"), nlohmann::json()}) {
    const std::string message = errorOf(config);
    EXPECT_TRUE(contains(message, "freia.json")) << message;
    EXPECT_TRUE(contains(message, "must be a JSON object")) << message;
    EXPECT_TRUE(contains(message, config.type_name())) << message;
  }
}

/// A scratch directory unique to this test (tests run in parallel), removed at the end.
class ModuleConfigFile : public ::testing::Test {
protected:
  ModuleConfigFile() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("efu-config-" + std::to_string(::getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  ~ModuleConfigFile() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string &name, const std::string &text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  fs::path dir_;
};

TEST_F(ModuleConfigFile, DeeplyNestedJsonIsRefusedNotACrash) {
  const std::string deep(70000, '[');
  const std::string path = write("deep.json", deep + std::string(70000, ']'));
  try {
    (void)loadModuleConfig(kModule, path);
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // At the bound it is just JSON: the object and 63 arrays make 64 levels.
  const std::string ok = write("ok.json", R"({"mapping": )" + std::string(63, '[') +
                                              std::string(63, ']') + "}");
  EXPECT_NO_THROW((void)loadModuleConfig(kModule, ok));
}

TEST_F(ModuleConfigFile, ValidFileIsLoadedAndCompleted) {
  const std::string path = write("ok.json", R"({"mapping": [1], "threshold": 3})");
  const auto out = loadModuleConfig(kModule, path);
  EXPECT_EQ(out.at("threshold"), 3);
  EXPECT_EQ(out.at("gain"), 1.5);
  EXPECT_EQ(out.at("mapping"), nlohmann::json({1}));
}

TEST_F(ModuleConfigFile, ValidationErrorNamesTheFile) {
  const std::string path = write("typo.json", R"({"mapping": [], "bogus": true})");
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), path + ": unknown key 'bogus'")) << e.what();
  }
}

TEST_F(ModuleConfigFile, InvalidJsonNamesTheFileAndPosition) {
  const std::string path = write("broken.json", "{\"mapping\": [1, 2,\n  \"threshold\" 3}");
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, path)) << message;
    EXPECT_TRUE(contains(message, "not valid JSON")) << message;
    EXPECT_TRUE(contains(message, "line 2")) << message;
  }
}

TEST_F(ModuleConfigFile, ANumberBeyondADoubleNamesFileKeyAndLine) {
  // Was "[json.exception.out_of_range.406] number overflow parsing '1e400'", naming nothing.
  const std::string path =
      write("overflow.json", "{\"mapping\": [1, 2],\n \"extra\": {\"gain\": 1e400}}");
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_EQ(std::string(e.what()), path + ": line 2, column 24, at 'extra.gain': number 1e400 "
                                            "is out of range (beyond a double)");
  }
}

TEST_F(ModuleConfigFile, ADuplicateKeyIsRefusedNamingFileAndKey) {
  // nlohmann keeps the last value silently: threshold 900 would have run, not 3.
  const std::string path =
      write("twice.json", "{\"mapping\": [],\n \"threshold\": 3,\n \"threshold\": 900}");
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_EQ(std::string(e.what()), path + ": line 3, column 12, at 'threshold': key "
                                            "'threshold' appears twice in the same object");
  }
  // Nested objects too, with the key path.
  const std::string nested =
      write("nested.json", R"({"mapping": [], "extra": {"a": {"b": 1, "b": 1}}})");
  try {
    loadModuleConfig(kModule, nested);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), nested + ": line 1, column ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "at 'extra.a.b': key 'b' appears twice")) << e.what();
  }
}

TEST_F(ModuleConfigFile, EmptyFileIsInvalidJson) {
  const std::string path = write("empty.json", "");
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), "not valid JSON")) << e.what();
  }
}

TEST_F(ModuleConfigFile, MissingFileIsNamed) {
  const std::string path = (dir_ / "absent.json").string();
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), path + ": cannot open: No such file")) << e.what();
  }
}

TEST_F(ModuleConfigFile, AFileLargerThanAnyConfigIsRefusedUnread) {
  const std::string path = (dir_ / "huge.json").string();
  {
    std::ofstream out(path);
    out << "{}";
  }
  std::filesystem::resize_file(path, (64 << 20) + 1); // sparse: no disk used
  try {
    loadModuleConfig(kModule, path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), path + ": 67108865 bytes, more than the 64 MiB")) << e.what();
  }
}

TEST(ModuleConfig, NoFileMeansDefaults) {
  const EfuConfigKey optional[] = {
      {"threshold", ConfigType::Integer, "10", "ADC threshold", 0, 99}};
  const auto d = descriptor(optional, 1);
  EXPECT_EQ(loadModuleConfig(d, ""), nlohmann::json({{"threshold", 10}}));
  try {
    loadModuleConfig(kModule, ""); // "mapping" is required
    FAIL() << "expected ConfigError";
  } catch (const ConfigError &e) {
    EXPECT_TRUE(contains(e.what(), "(defaults)")) << e.what();
    EXPECT_TRUE(contains(e.what(), "'mapping'")) << e.what();
  }
}

TEST(ModuleConfig, HelpListsEveryKeyWithTypeDefaultRangeAndHelp) {
  const std::string help = formatModuleHelp(kModule);
  EXPECT_TRUE(contains(help, "Module testmod 2.3.4: module for config tests")) << help;
  for (const auto &key : kKeys) {
    EXPECT_TRUE(contains(help, key.key)) << key.key << "\n" << help;
    EXPECT_TRUE(contains(help, key.help)) << key.help << "\n" << help;
  }
  EXPECT_TRUE(contains(help, "default 10, range [0, 1000]")) << help;
  EXPECT_TRUE(contains(help, "default 1.5, range [0.1, 10]")) << help;
  EXPECT_TRUE(contains(help, "default \"det\"")) << help;
  EXPECT_TRUE(contains(help, "default (required)")) << help;
  EXPECT_FALSE(contains(help, "range [1, 0]")) << help;
  for (const char *type : {"integer", "number", "boolean", "string", "array", "object"}) {
    EXPECT_TRUE(contains(help, type)) << type << "\n" << help;
  }
}

TEST(ModuleConfig, HelpForAModuleWithoutKeys) {
  const std::string help = formatModuleHelp(kNoKeys);
  EXPECT_TRUE(contains(help, "Module testmod 2.3.4")) << help;
  EXPECT_TRUE(contains(help, "takes no configuration keys")) << help;
  EXPECT_TRUE(contains(help, "this module cannot be split: --proc-threads 1")) << help;
}

TEST(ModuleConfig, HelpSaysHowAModuleIsSplitOverProcessingThreads) {
  EfuModuleDescriptor split = kModule;
  split.partitionKey = "event builder (ring, FEN)";
  std::string help = formatModuleHelp(split);
  EXPECT_TRUE(contains(help, "Processing threads (--proc-threads N): one partition each, by "
                             "event builder (ring, FEN)"))
      << help;
  split.threadsKey = "ParallelThreads";
  help = formatModuleHelp(split);
  EXPECT_TRUE(contains(help, "(--proc-threads N, or the key ParallelThreads)")) << help;
}

} // namespace
} // namespace efu
