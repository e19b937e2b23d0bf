// SPDX-License-Identifier: BSD-2-Clause
// UdpReceiver on a real loopback socket: batches, sources and per-datagram kernel timestamps.
#include "common/net/UdpReceiver.h"
#include "common/time/Time.h"
#include "tests/support/ArrivalStamping.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>

namespace efu {
namespace {

/// Sends `count` datagrams of 32 bytes to 127.0.0.1:port, byte 0 = the datagram's index.
void sendDatagrams(uint16_t port, int count) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < count; ++i) {
    std::array<uint8_t, 32> payload{};
    payload[0] = static_cast<uint8_t>(i);
    ASSERT_EQ(sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr *>(&to),
                     sizeof(to)),
              static_cast<ssize_t>(payload.size()));
  }
  close(fd);
}

struct Received {
  int count = 0;
  std::array<UdpReceiver::Message, 16> messages{};
  std::array<std::array<uint8_t, 64>, 16> data{};
};

/// Receives until `expected` messages have come (each call returns what is queued).
Received receiveAll(UdpReceiver &receiver, int expected) {
  Received got;
  std::array<uint8_t *, 16> buffers{};
  for (int attempt = 0; attempt < 100 && got.count < expected; ++attempt) {
    for (size_t i = 0; i < buffers.size(); ++i) {
      buffers[i] = got.data[i].data();
    }
    const auto free = static_cast<unsigned>(expected - got.count);
    const UdpReceiver::Batch batch =
        receiver.receive(&buffers[got.count], free, 64, &got.messages[got.count]);
    EXPECT_GE(batch.received, 0);
    got.count += batch.received;
  }
  return got;
}

/// 127.0.0.1, an ephemeral port, batches of up to 16.
UdpReceiver::Options loopbackOptions(bool kernelTimestamps) {
  UdpReceiver::Options options = test::stampingReceiverOptions();
  options.kernelTimestamps = kernelTimestamps;
  return options;
}

TEST(UdpReceiver, KernelTimestampsGiveEachDatagramItsOwnArrivalTime) {
  UdpReceiver receiver(loopbackOptions(true));
  ASSERT_TRUE(test::waitForArrivalStamping(receiver));
  const int64_t before = realtimeNs();
  sendDatagrams(receiver.port(), 8);
  const Received got = receiveAll(receiver, 8);
  // The kernel may stamp a loopback datagram in softirq after sendto has returned, so the only
  // reading certain to come after every stamp is one taken once all of them were received.
  const int64_t received = realtimeNs();
  ASSERT_EQ(got.count, 8);
  for (int i = 0; i < got.count; ++i) {
    EXPECT_EQ(got.data[i][0], i);
    EXPECT_EQ(got.messages[i].size, 32U);
    EXPECT_EQ(got.messages[i].sourceIp, INADDR_LOOPBACK);
    EXPECT_GE(got.messages[i].rxTimeNs, before) << i;
    EXPECT_LE(got.messages[i].rxTimeNs, received) << i;
    if (i > 0) {
      EXPECT_GE(got.messages[i].rxTimeNs, got.messages[i - 1].rxTimeNs) << i;
    }
  }
  // Stamped one by one as they arrived, not once for the whole batch: eight sendto calls take
  // microseconds, far more than the clock's nanosecond resolution.
  EXPECT_GT(got.messages[7].rxTimeNs, got.messages[0].rxTimeNs);
}

TEST(UdpReceiver, WithoutKernelTimestampsTheTimeIsLeftToTheCaller) {
  UdpReceiver receiver(loopbackOptions(false));
  sendDatagrams(receiver.port(), 3);
  const Received got = receiveAll(receiver, 3);
  ASSERT_EQ(got.count, 3);
  for (int i = 0; i < got.count; ++i) {
    EXPECT_EQ(got.messages[i].rxTimeNs, 0) << i;
  }
}

} // namespace
} // namespace efu
