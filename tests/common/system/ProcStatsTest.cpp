// SPDX-License-Identifier: BSD-2-Clause
// readSnmpUdp on files with the /proc/net/snmp layout, through its path seam.
#include "common/system/ProcStats.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace efu {
namespace {

namespace fs = std::filesystem;

/// A file unique to this test (tests run in parallel), removed at the end.
class ProcStatsTest : public ::testing::Test {
protected:
  ProcStatsTest() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (fs::temp_directory_path() /
             ("efu-snmp-" + std::to_string(::getpid()) + "-" + info->name()))
                .string();
  }
  ~ProcStatsTest() override {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  void write(const std::string &text) {
    std::ofstream out(path_);
    out << text;
  }

  std::string path_;
};

// As on Linux 6.x: the Udp: and UdpLite: blocks share the column names.
constexpr const char *kSnmp =
    "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams\n"
    "Ip: 1 64 123456 0 0 0\n"
    "Icmp: InMsgs InErrors InCsumErrors\n"
    "Icmp: 10 0 0\n"
    "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens\n"
    "Tcp: 1 200 120000 -1 77\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "Udp: 9876543210 6 7 890 42 11 0 3 5\n"
    "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "UdpLite: 1 2 3 4 5 6 7 8 9\n";

TEST_F(ProcStatsTest, ReadsEachUdpField) {
  write(kSnmp);
  EXPECT_EQ(readSnmpUdp("InDatagrams", path_), 9'876'543'210);
  EXPECT_EQ(readSnmpUdp("NoPorts", path_), 6);
  EXPECT_EQ(readSnmpUdp("InErrors", path_), 7);
  EXPECT_EQ(readSnmpUdp("RcvbufErrors", path_), 42);
  EXPECT_EQ(readSnmpUdp("SndbufErrors", path_), 11);
  EXPECT_EQ(readSnmpUdp("MemErrors", path_), 5);
}

TEST_F(ProcStatsTest, OtherProtocolsAreNotConfusedWithUdp) {
  write(kSnmp);
  EXPECT_EQ(readSnmpUdp("InReceives", path_), -1);  // an Ip: field
  EXPECT_EQ(readSnmpUdp("ActiveOpens", path_), -1); // a Tcp: field
}

TEST_F(ProcStatsTest, MissingFieldIsMinusOne) {
  write(kSnmp);
  EXPECT_EQ(readSnmpUdp("NoSuchField", path_), -1);
  EXPECT_EQ(readSnmpUdp("", path_), -1);
  EXPECT_EQ(readSnmpUdp("rcvbuferrors", path_), -1);
}

TEST_F(ProcStatsTest, MissingFileIsMinusOne) {
  EXPECT_EQ(readSnmpUdp("RcvbufErrors", path_ + ".does-not-exist"), -1);
}

TEST_F(ProcStatsTest, HeaderWithoutValuesIsMinusOne) {
  write("Udp: InDatagrams RcvbufErrors\n");
  EXPECT_EQ(readSnmpUdp("RcvbufErrors", path_), -1);
}

TEST_F(ProcStatsTest, ShortValueLineIsMinusOne) {
  write("Udp: InDatagrams NoPorts RcvbufErrors\nUdp: 1 2\n");
  EXPECT_EQ(readSnmpUdp("NoPorts", path_), 2);
  EXPECT_EQ(readSnmpUdp("RcvbufErrors", path_), -1);
}

TEST_F(ProcStatsTest, NonNumericValueIsMinusOne) {
  write("Udp: InDatagrams RcvbufErrors\nUdp: 1 lots\n");
  EXPECT_EQ(readSnmpUdp("InDatagrams", path_), 1);
  EXPECT_EQ(readSnmpUdp("RcvbufErrors", path_), -1);
}

TEST_F(ProcStatsTest, EmptyFileIsMinusOne) {
  write("");
  EXPECT_EQ(readSnmpUdp("InDatagrams", path_), -1);
}

TEST(ProcStats, RealProcNetSnmpHasUdpCounters) {
  if (!fs::exists("/proc/net/snmp")) {
    GTEST_SKIP() << "no /proc/net/snmp here";
  }
  EXPECT_GE(readSnmpUdp("InDatagrams"), 0);
  EXPECT_GE(readSnmpUdp("RcvbufErrors"), 0);
}

TEST(ProcSelf, ResidentBytesGrowWithTouchedMemory) {
  const int64_t before = residentBytes();
  ASSERT_GT(before, 0);
  std::vector<char> block(64 << 20, 1); // 64 MiB, every page written
  const int64_t after = residentBytes();
  EXPECT_GE(after - before, int64_t{60} << 20) << before << " -> " << after;
  EXPECT_EQ(block[12345], 1);
}

TEST(ProcSelf, OpenFileDescriptorsCountsEachOpenFile) {
  const int64_t before = openFileDescriptors();
  ASSERT_GE(before, 3); // stdin, stdout, stderr
  const int fd = ::dup(1);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(openFileDescriptors(), before + 1);
  ::close(fd);
  EXPECT_EQ(openFileDescriptors(), before);
}

} // namespace
} // namespace efu
