// SPDX-License-Identifier: BSD-2-Clause
// The tools' UDP sockets: one error text per failure, a bound socket receiving what a connected
// one sends on loopback, ownership moving with the object.
#include "common/net/UdpSocket.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace efu::net {
namespace {

std::string errorOf(void (*f)()) {
  try {
    f();
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "";
}

uint16_t portOf(const UdpSocket &s) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  EXPECT_EQ(getsockname(s.fd(), reinterpret_cast<sockaddr *>(&a), &len), 0);
  return ntohs(a.sin_port);
}

TEST(UdpSocket, BadAddressesAreNamed) {
  EXPECT_EQ(errorOf([] { (void)ipv4Address("localhost", 9000); }), "bad IPv4 address 'localhost'");
  EXPECT_EQ(errorOf([] { (void)UdpSocket::connectedTo("127.0.0.300", 9000); }),
            "bad IPv4 address '127.0.0.300'");
  EXPECT_EQ(errorOf([] { (void)UdpSocket::boundTo("::1", 9000); }), "bad IPv4 address '::1'");
}

TEST(UdpSocket, ABoundSocketReceivesWhatAConnectedOneSends) {
  const UdpSocket rx = UdpSocket::boundTo("127.0.0.1", 0);
  const uint16_t port = portOf(rx);
  ASSERT_NE(port, 0);
  const UdpSocket tx = UdpSocket::connectedTo("127.0.0.1", port, 1 << 20);
  EXPECT_GE(tx.sndbufBytes(), 4096); // granted something (capped by wmem_max, doubled)
  const char msg[] = "neutron";
  ASSERT_EQ(send(tx.fd(), msg, sizeof(msg), 0), static_cast<ssize_t>(sizeof(msg)));
  char got[16] = {};
  ASSERT_EQ(recv(rx.fd(), got, sizeof(got), 0), static_cast<ssize_t>(sizeof(msg)));
  EXPECT_STREQ(got, "neutron");
}

TEST(UdpSocket, BindingATakenPortSaysWhichAndWhy) {
  const UdpSocket first = UdpSocket::boundTo("127.0.0.1", 0);
  const uint16_t port = portOf(first);
  try {
    (void)UdpSocket::boundTo("127.0.0.1", port);
    FAIL() << "bound twice";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()), "cannot bind UDP socket to 127.0.0.1:" + std::to_string(port) +
                                         ": Address already in use");
  }
}

TEST(UdpSocket, OwnershipMovesAndTheSocketClosesOnce) {
  UdpSocket a = UdpSocket::boundTo("127.0.0.1", 0);
  const int fd = a.fd();
  UdpSocket b = std::move(a);
  EXPECT_EQ(a.fd(), -1); // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(b.fd(), fd);
  b = UdpSocket();
  EXPECT_EQ(b.fd(), -1);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1); // closed
}

} // namespace
} // namespace efu::net
