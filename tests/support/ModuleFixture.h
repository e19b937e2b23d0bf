// SPDX-License-Identifier: BSD-2-Clause
// A module under test in-process: a FakeModuleContext from a configuration (and calibration), the
// module built on it as the daemon builds it, datagrams in, counters and events out. The module
// tests of the ESS families derive their fixtures from it.
#pragma once

#include "tests/support/EssDatagram.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace efu::readout::test {

template <class Module> class ModuleFixture : public ::testing::Test {
protected:
  /// (Re)builds the module on `config` from file `source`, with `calibration` (null: none).
  void create(const nlohmann::json &config, const std::string &source,
              const nlohmann::json &calibration = nullptr) {
    module_.reset();
    ctx_ = std::make_unique<FakeModuleContext>(config, source);
    if (!calibration.is_null()) {
      ctx_->setCalibration(calibration, "calib.json");
    }
    module_ = std::make_unique<Module>(*ctx_);
  }
  void process(EssDatagram &d) { module_->process(d.packet()); }
  [[nodiscard]] int64_t stat(const std::string &name) const { return ctx_->value(name); }
  [[nodiscard]] const std::vector<RecordedEvent> &events() const { return ctx_->sink.events; }
  /// Every counter that moved, the ESS header's (parser.essheader.*) left out.
  [[nodiscard]] std::map<std::string, int64_t> moved() const {
    std::map<std::string, int64_t> out;
    for (const auto &[name, value] : ctx_->snapshot()) {
      if (value != 0 && name.rfind("parser.essheader.", 0) != 0) {
        out[name] = value;
      }
    }
    return out;
  }

  std::unique_ptr<FakeModuleContext> ctx_;
  std::unique_ptr<Module> module_;
};

} // namespace efu::readout::test
