// SPDX-License-Identifier: BSD-2-Clause
// For tests that compare the kernel's arrival times (SO_TIMESTAMPNS). Linux turns stamping on
// arrival on for the whole system in deferred work a moment after the first socket asks for it
// (at once when another socket has it on already); until the work has run it stamps a datagram
// when recvmsg reads it, later than datagrams queued after it may be stamped. A test holds a
// receiver of its own with kernel timestamps, waits here until one of its probes came back
// stamped before the read that returned it, and keeps that receiver open while it runs: the
// stamping then stays on for every socket.
#pragma once

#include "common/net/UdpReceiver.h"
#include "common/time/Time.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>

namespace efu::test {

/// A receiver on 127.0.0.1, an ephemeral port, batches of up to 16, with kernel timestamps (for
/// waitForArrivalStamping()).
inline UdpReceiver::Options stampingReceiverOptions() {
  UdpReceiver::Options options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.rcvbufBytes = 1 << 20;
  options.maxBatch = 16;
  options.kernelTimestamps = true;
  return options;
}

/// Sends one-byte probes to `receiver` (which has kernel timestamps on and nothing else queued)
/// until one comes back stamped before its read, for at most ten seconds; false if none did.
inline bool waitForArrivalStamping(UdpReceiver &receiver) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(receiver.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::array<uint8_t, 64> buffer{};
  uint8_t *buffers[1] = {buffer.data()};
  UdpReceiver::Message message{};
  bool on = false;
  const int64_t deadline = monotonicNs() + 10'000'000'000;
  while (!on && monotonicNs() < deadline) {
    const uint8_t probe = 0;
    if (sendto(fd, &probe, 1, 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)) != 1) {
      break;
    }
    const int64_t beforeRead = realtimeNs();
    const UdpReceiver::Batch batch = receiver.receive(buffers, 1, buffer.size(), &message);
    on = batch.received == 1 && message.rxTimeNs != 0 && message.rxTimeNs < beforeRead;
  }
  close(fd);
  return on;
}

} // namespace efu::test
