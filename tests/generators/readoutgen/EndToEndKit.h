// SPDX-License-Identifier: BSD-2-Clause
// Shared by the readoutgen end-to-end tests: readoutgen's truth CSV and efu-dump's ev44 lines as
// multisets of (pulse ns, tof ns, pixel).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace efu::testkit {

namespace fs = std::filesystem;
using Event = std::tuple<int64_t, int64_t, int64_t>; // pulse ns, tof ns, pixel

inline std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

inline std::map<Event, int64_t> readTruth(const fs::path &p) {
  std::map<Event, int64_t> out;
  const auto ls = lines(readFile(p));
  EXPECT_FALSE(ls.empty());
  EXPECT_EQ(ls.at(0), "pulse_time_ns,tof_ns,pixel_id");
  for (size_t i = 1; i < ls.size(); ++i) {
    long long pulse = 0, tof = 0, pixel = 0;
    EXPECT_EQ(std::sscanf(ls[i].c_str(), "%lld,%lld,%lld", &pulse, &tof, &pixel), 3) << ls[i];
    ++out[{pulse, tof, pixel}];
  }
  return out;
}

/// The events of efu-dump's JSON lines (ev44 only), expanded with their reference times; with
/// `source`, only those of messages from that source. With `firstPulseOnly`, every event of a
/// message gets its first reference time, as just-bin-it's ev44 reader does (correct only when
/// messages hold one pulse each).
inline std::map<Event, int64_t> dumpedEvents(const std::string &output, int64_t &total,
                                             bool firstPulseOnly = false,
                                             const std::string &source = "") {
  std::map<Event, int64_t> out;
  total = 0;
  for (const auto &l : lines(output)) {
    if (l.empty() || l[0] != '{') {
      continue;
    }
    const auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.contains("time_of_flight") || !j.contains("pixel_id") ||
        (!source.empty() && j.value("source_name", "") != source)) {
      continue;
    }
    const auto &ref = j.at("reference_time");
    const auto &idx = j.at("reference_time_index");
    const auto &tof = j.at("time_of_flight");
    const auto &pix = j.at("pixel_id");
    size_t r = 0;
    for (size_t i = 0; i < tof.size(); ++i) {
      while (!firstPulseOnly && r + 1 < idx.size() && idx[r + 1].get<size_t>() <= i) {
        ++r;
      }
      ++out[{ref[r].get<int64_t>(), tof[i].get<int64_t>(), pix[i].get<int64_t>()}];
      ++total;
    }
  }
  return out;
}

} // namespace efu::testkit
