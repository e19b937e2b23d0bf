// SPDX-License-Identifier: BSD-2-Clause
// Unit tests of efu-broker's --topic NAME[:PARTITIONS] parser.
#include "efu/tools/broker/TopicSpec.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using efu::tools::parseTopicSpec;

TEST(BrokerTopicSpec, NameAlone) {
  const auto spec = parseTopicSpec("udp_detector");
  EXPECT_EQ(spec.name, "udp_detector");
  EXPECT_EQ(spec.partitions, 1);
}

TEST(BrokerTopicSpec, NameAndPartitions) {
  const auto spec = parseTopicSpec("a.b-c:12");
  EXPECT_EQ(spec.name, "a.b-c");
  EXPECT_EQ(spec.partitions, 12);
}

TEST(BrokerTopicSpec, BadValuesAreNamedInTheError) {
  const std::vector<std::string> bads = {"",      ":3",   "t:",     "t:0",
                                         "t:x",   "t:3x", "t:1001", "a b",
                                         "t/x:2", ".",    "..",     std::string(250, 'a')};
  for (const auto &bad : bads) {
    try {
      parseTopicSpec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

} // namespace
