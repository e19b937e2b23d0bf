// SPDX-License-Identifier: BSD-2-Clause
// ControlProtocol: every command with good and bad arguments, without sockets.
#include "efu/control/ControlProtocol.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace efu {
namespace {

constexpr std::string_view kBadCmd = "Error: <BADCMD>";
constexpr std::string_view kBadArgs = "Error: <BADARGS>";

class ControlProtocolTest : public ::testing::Test {
protected:
  ControlProtocolTest() {
    stats_.add("receive.packets").set(42);
    stats_.add("receive.bytes").set(1000);
    stats_.add("processing.packets").set(-7);
  }

  ControlInfo info() {
    ControlInfo info;
    info.version = "0.1.0 test";
    info.detectorInfo = "udp 1.0 packet accounting";
    info.runtimeStats = [] { return std::string("uptime_s 12 rx_mbps 3.5"); };
    info.requestExit = [this] { ++exitRequests_; };
    return info;
  }

  Stats stats_;
  int exitRequests_ = 0;
};

TEST_F(ControlProtocolTest, VersionGet) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("VERSION_GET"), "VERSION_GET 0.1.0 test");
  EXPECT_EQ(protocol.handle("VERSION_GET\n"), "VERSION_GET 0.1.0 test");
  EXPECT_EQ(protocol.handle("VERSION_GET\r\n"), "VERSION_GET 0.1.0 test");
  EXPECT_EQ(protocol.handle("  \tVERSION_GET  \r"), "VERSION_GET 0.1.0 test");
  EXPECT_EQ(protocol.handle("VERSION_GET 1"), kBadArgs);
}

TEST_F(ControlProtocolTest, CommandsAreCaseSensitiveAndWhole) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("version_get"), kBadCmd);
  EXPECT_EQ(protocol.handle("VERSION_GETX"), kBadCmd);
  EXPECT_EQ(protocol.handle("VERSION"), kBadCmd);
  EXPECT_EQ(protocol.handle("NOSUCHCMD 1 2"), kBadCmd);
}

TEST_F(ControlProtocolTest, EmptyLineIsBadCommand) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle(""), kBadCmd);
  EXPECT_EQ(protocol.handle("\r\n"), kBadCmd);
  EXPECT_EQ(protocol.handle(" \t "), kBadCmd);
}

TEST_F(ControlProtocolTest, DetectorInfoGet) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("DETECTOR_INFO_GET"), "DETECTOR_INFO_GET udp 1.0 packet accounting");
  EXPECT_EQ(protocol.handle("DETECTOR_INFO_GET x"), kBadArgs);
}

TEST_F(ControlProtocolTest, StatGetCount) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("STAT_GET_COUNT"), "STAT_GET_COUNT 3");
  stats_.add("late.counter");
  EXPECT_EQ(protocol.handle("STAT_GET_COUNT"), "STAT_GET_COUNT 4");
  EXPECT_EQ(protocol.handle("STAT_GET_COUNT 1"), kBadArgs);
}

TEST_F(ControlProtocolTest, StatGetIsOneBasedAndLive) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("STAT_GET 1"), "STAT_GET receive.packets 42");
  EXPECT_EQ(protocol.handle("STAT_GET 2"), "STAT_GET receive.bytes 1000");
  EXPECT_EQ(protocol.handle("STAT_GET 3"), "STAT_GET processing.packets -7");
  EXPECT_EQ(protocol.handle("  STAT_GET \t 01 \r\n"), "STAT_GET receive.packets 42");
  stats_.add("late.counter").set(5);
  EXPECT_EQ(protocol.handle("STAT_GET 4"), "STAT_GET late.counter 5");
}

TEST_F(ControlProtocolTest, StatGetRejectsBadIndices) {
  ControlProtocol protocol(stats_, info());
  for (const char *line :
       {"STAT_GET", "STAT_GET 0", "STAT_GET 4", "STAT_GET -1", "STAT_GET +1", "STAT_GET abc",
        "STAT_GET 1x", "STAT_GET 1.0", "STAT_GET 0x1", "STAT_GET 18446744073709551617",
        "STAT_GET 99999999999999999999999999", "STAT_GET 1 2", "STAT_GET receive.packets"}) {
    EXPECT_EQ(protocol.handle(line), kBadArgs) << line;
  }
}

TEST_F(ControlProtocolTest, StatGetOnEmptyRegistry) {
  Stats empty;
  ControlProtocol protocol(empty, info());
  EXPECT_EQ(protocol.handle("STAT_GET_COUNT"), "STAT_GET_COUNT 0");
  EXPECT_EQ(protocol.handle("STAT_GET 1"), kBadArgs);
}

TEST_F(ControlProtocolTest, StatGetName) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("STAT_GET_NAME receive.bytes"), "STAT_GET_NAME receive.bytes 1000");
  EXPECT_EQ(protocol.handle("STAT_GET_NAME processing.packets\r\n"), "STAT_GET_NAME processing.packets -7");
  EXPECT_EQ(protocol.handle("STAT_GET_NAME no.such"), kBadArgs);
  EXPECT_EQ(protocol.handle("STAT_GET_NAME RX.BYTES"), kBadArgs);
  EXPECT_EQ(protocol.handle("STAT_GET_NAME"), kBadArgs);
  EXPECT_EQ(protocol.handle("STAT_GET_NAME receive.bytes receive.packets"), kBadArgs);
}

TEST_F(ControlProtocolTest, ReportGetAnswersTheNamedReportOnOneLine) {
  ControlInfo withReport = info();
  withReport.report = [](std::string_view name) -> std::optional<std::string> {
    return name == "udp.histograms" ? std::optional<std::string>("{\"a\":\n1}") : std::nullopt;
  };
  ControlProtocol protocol(stats_, std::move(withReport));
  EXPECT_EQ(protocol.handle("REPORT_GET udp.histograms"), "REPORT_GET udp.histograms {\"a\": 1}");
  EXPECT_EQ(protocol.handle("REPORT_GET no.such"), kBadArgs);
  EXPECT_EQ(protocol.handle("REPORT_GET"), kBadArgs);
  EXPECT_EQ(protocol.handle("REPORT_GET a b"), kBadArgs);
  ControlProtocol without(stats_, info());
  EXPECT_EQ(without.handle("REPORT_GET udp.histograms"), kBadArgs);
}

TEST_F(ControlProtocolTest, CmdGetCountAndCmdGetListEveryCommand) {
  ControlProtocol protocol(stats_, info());
  const auto commands = ControlProtocol::commands();
  ASSERT_EQ(commands.size(), 14U);
  EXPECT_EQ(protocol.handle("CMD_GET_COUNT"), "CMD_GET_COUNT 14");
  EXPECT_EQ(protocol.handle("CMD_GET_COUNT 1"), kBadArgs);
  for (size_t i = 1; i <= commands.size(); ++i) {
    EXPECT_EQ(protocol.handle("CMD_GET " + std::to_string(i)),
              "CMD_GET " + std::string(commands[i - 1]));
  }
  EXPECT_EQ(protocol.handle("CMD_GET 1"), "CMD_GET VERSION_GET");
  EXPECT_EQ(protocol.handle("CMD_GET 9"), "CMD_GET EXIT");
  EXPECT_EQ(protocol.handle("CMD_GET 10"), "CMD_GET AUTH");
  for (const char *line : {"CMD_GET", "CMD_GET 0", "CMD_GET 15", "CMD_GET -1", "CMD_GET x",
                           "CMD_GET 4294967306", "CMD_GET 1 1"}) {
    EXPECT_EQ(protocol.handle(line), kBadArgs) << line;
  }
}

TEST_F(ControlProtocolTest, EveryListedCommandIsUnderstood) {
  ControlInfo all = info();
  all.setCalibMode = [](bool) {};
  all.calibMode = [] { return false; };
  ControlProtocol protocol(stats_, all);
  for (const std::string_view command : ControlProtocol::commands()) {
    EXPECT_NE(protocol.handle(command), kBadCmd) << command;
  }
}

TEST_F(ControlProtocolTest, RuntimeStats) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("RUNTIMESTATS_JSON"), "RUNTIMESTATS_JSON uptime_s 12 rx_mbps 3.5");
  EXPECT_EQ(protocol.handle("RUNTIMESTATS_JSON now"), kBadArgs);
  EXPECT_EQ(protocol.handle("RUNTIMESTATS now"), kBadArgs);
  // The ESS form: one unsigned number (a status bitmask), which ESS tools parse as an integer.
  EXPECT_EQ(protocol.handle("RUNTIMESTATS"), "RUNTIMESTATS 0") << "no status callback: 0";
  ControlInfo withStatus = info();
  withStatus.runtimeStatus = [] { return 5U; };
  EXPECT_EQ(ControlProtocol(stats_, withStatus).handle("RUNTIMESTATS"), "RUNTIMESTATS 5");
}

TEST_F(ControlProtocolTest, RuntimeStatsWithoutCallbackOrFailing) {
  ControlInfo none = info();
  none.runtimeStats = nullptr;
  ControlProtocol withoutCallback(stats_, none);
  EXPECT_EQ(withoutCallback.handle("RUNTIMESTATS_JSON"), "RUNTIMESTATS_JSON");

  ControlInfo throwing = info();
  throwing.runtimeStats = []() -> std::string { throw std::runtime_error("boom"); };
  ControlProtocol failing(stats_, throwing);
  EXPECT_EQ(failing.handle("RUNTIMESTATS_JSON"), "Error: <INTERNAL>");
  EXPECT_EQ(failing.handle("VERSION_GET"), "VERSION_GET 0.1.0 test");
}

TEST_F(ControlProtocolTest, RepliesStayOnOneLine) {
  ControlInfo multi = info();
  multi.detectorInfo = "udp\nsecond line\r";
  multi.runtimeStats = [] { return std::string("a 1\nb 2"); };
  ControlProtocol protocol(stats_, multi);
  EXPECT_EQ(protocol.handle("DETECTOR_INFO_GET"), "DETECTOR_INFO_GET udp second line ");
  EXPECT_EQ(protocol.handle("RUNTIMESTATS_JSON"), "RUNTIMESTATS_JSON a 1 b 2");
}

TEST_F(ControlProtocolTest, ExitRepliesOkAndRequestsExit) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("EXIT now"), kBadArgs);
  EXPECT_EQ(protocol.handle("exit"), kBadCmd);
  EXPECT_EQ(exitRequests_, 0);
  EXPECT_EQ(protocol.handle("EXIT\r\n"), "<OK>");
  EXPECT_EQ(exitRequests_, 1);
}

TEST_F(ControlProtocolTest, ExitWithoutCallbackStillReplies) {
  ControlInfo none = info();
  none.requestExit = nullptr;
  ControlProtocol protocol(stats_, none);
  EXPECT_EQ(protocol.handle("EXIT"), "<OK>");
}

TEST_F(ControlProtocolTest, ASecretGuardsExitPerSession) {
  ControlInfo guarded = info();
  guarded.secret = "s3cret";
  ControlProtocol protocol(stats_, guarded);
  ControlSession session;
  EXPECT_EQ(protocol.handle("EXIT", session), "Error: <NOAUTH>");
  EXPECT_EQ(protocol.handle("VERSION_GET", session), "VERSION_GET 0.1.0 test") << "reads stay open";
  EXPECT_EQ(protocol.handle("AUTH", session), kBadArgs);
  EXPECT_FALSE(session.closeAfterReply);
  EXPECT_EQ(exitRequests_, 0);

  ControlSession guesser;
  for (const char *wrong : {"AUTH s3cre", "AUTH s3cret!", "AUTH S3CRET", "AUTH x"}) {
    guesser = {};
    EXPECT_EQ(protocol.handle(wrong, guesser), "Error: <BADAUTH>") << wrong;
    EXPECT_TRUE(guesser.closeAfterReply) << wrong;
    EXPECT_FALSE(guesser.authenticated) << wrong;
  }
  EXPECT_EQ(protocol.handle("EXIT", guesser), "Error: <NOAUTH>");

  EXPECT_EQ(protocol.handle("AUTH s3cret", session), "<OK>");
  EXPECT_EQ(protocol.handle("EXIT", session), "<OK>");
  EXPECT_EQ(exitRequests_, 1);
  ControlSession other; // authentication belongs to one connection
  EXPECT_EQ(protocol.handle("EXIT", other), "Error: <NOAUTH>");
  EXPECT_EQ(exitRequests_, 1);
}

TEST_F(ControlProtocolTest, ReadOnlyRefusesExitEvenAfterAuth) {
  ControlInfo readOnly = info();
  readOnly.readOnly = true;
  readOnly.secret = "s3cret";
  ControlProtocol protocol(stats_, readOnly);
  ControlSession session;
  EXPECT_EQ(protocol.handle("AUTH s3cret", session), "<OK>");
  EXPECT_EQ(protocol.handle("EXIT", session), "Error: <READONLY>");
  EXPECT_EQ(protocol.handle("STAT_GET_NAME receive.packets", session), "STAT_GET_NAME receive.packets 42");
  EXPECT_EQ(exitRequests_, 0);
  EXPECT_TRUE(ControlProtocol::changesState("EXIT"));
  EXPECT_FALSE(ControlProtocol::changesState("STAT_GET"));
}

TEST_F(ControlProtocolTest, CalibModeAsTheEssEfuAnswersIt) {
  bool mode = false;
  ControlInfo withMode = info();
  withMode.setCalibMode = [&mode](bool on) { mode = on; };
  withMode.calibMode = [&mode] { return mode; };
  ControlProtocol protocol(stats_, withMode);
  EXPECT_EQ(protocol.handle("CALIB_MODE_GET"), "CALIB_MODE_GET 0");
  EXPECT_EQ(protocol.handle("CALIB_MODE_SET 1"), "<OK>");
  EXPECT_TRUE(mode);
  EXPECT_EQ(protocol.handle("CALIB_MODE_GET"), "CALIB_MODE_GET 1");
  EXPECT_EQ(protocol.handle("CALIB_MODE_SET 0"), "<OK>");
  EXPECT_FALSE(mode);
  for (const char *bad : {"CALIB_MODE_SET", "CALIB_MODE_SET 2", "CALIB_MODE_SET on",
                          "CALIB_MODE_SET 1 1", "CALIB_MODE_GET 1"}) {
    EXPECT_EQ(protocol.handle(bad), kBadArgs) << bad;
  }
  EXPECT_TRUE(ControlProtocol::changesState("CALIB_MODE_SET"));
  ControlInfo readOnly = withMode;
  readOnly.readOnly = true;
  ControlProtocol guarded(stats_, readOnly);
  EXPECT_EQ(guarded.handle("CALIB_MODE_SET 1"), "Error: <READONLY>");
  EXPECT_FALSE(mode);
  EXPECT_EQ(ControlProtocol(stats_, info()).handle("CALIB_MODE_GET"), "CALIB_MODE_GET 0")
      << "no raw-data mode without Kafka: off, as efustatus.py expects an answer";
  EXPECT_EQ(ControlProtocol(stats_, info()).handle("CALIB_MODE_SET 1"), kBadCmd);
}

TEST_F(ControlProtocolTest, AuthWithoutASecretIsAccepted) {
  ControlProtocol protocol(stats_, info());
  EXPECT_EQ(protocol.handle("AUTH anything"), "<OK>");
  EXPECT_EQ(protocol.handle("EXIT"), "<OK>");
}

TEST(ControlProtocolErrors, IsError) {
  EXPECT_TRUE(ControlProtocol::isError("Error: <BADCMD>"));
  EXPECT_TRUE(ControlProtocol::isError(ControlProtocol::kBadArguments));
  EXPECT_FALSE(ControlProtocol::isError("<OK>"));
  EXPECT_FALSE(ControlProtocol::isError("STAT_GET_NAME Error: 1"));
}

} // namespace
} // namespace efu
