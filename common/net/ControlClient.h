// SPDX-License-Identifier: BSD-2-Clause
// A client of efu's control port (docs/control.md): command lines in, reply lines out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// Most bytes controlExchange() takes as the reply to one exchange (all its reply lines
/// together, line ends included): far more than any reply efu sends (the largest, REPORT_GET's
/// JSON documents, are kilobytes), far less than would hurt the tool's memory. A port that
/// answers more, or answers without end, gets a ControlError, not unbounded memory.
constexpr size_t kMaxControlReplyBytes = size_t{16} << 20;

/// The control port could not be reached, did not answer in time, or answered more than
/// kMaxControlReplyBytes; the message names the address and what failed.
class ControlError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Sends `commands` (one line each) over one TCP connection to efu's control port at
/// address:port and returns one reply line per command, in order, without the line end.
/// Waits at most `timeoutMs` for the connection and for each part of the reply (and returns
/// within 100 ms of a stop signal, common/system/StopSignals.h, with a ControlError), and takes
/// at most `maxReplyBytes` of the reply.
[[nodiscard]] std::vector<std::string>
controlExchange(const std::string &address, uint16_t port, const std::vector<std::string> &commands,
                int timeoutMs = 2000, size_t maxReplyBytes = kMaxControlReplyBytes);

/// The value of counter `name` (STAT_GET_NAME); ControlError if the reply is not one.
[[nodiscard]] int64_t controlCounter(const std::string &address, uint16_t port,
                                     const std::string &name);

/// The reply of one exchange as it arrives, for controlExchange(): collects received bytes up
/// to a bound and counts line ends in the new bytes only (each byte is looked at once, however
/// many pieces the reply comes in).
class ControlReply {
public:
  ControlReply(size_t expectedLines, size_t maxBytes) : expected_(expectedLines), max_(maxBytes) {}

  /// Takes received bytes; false (and nothing taken) when they would make the reply longer
  /// than maxBytes.
  [[nodiscard]] bool append(std::string_view bytes);
  /// Every expected line has its line end.
  [[nodiscard]] bool complete() const noexcept { return lineEnds_ >= expected_; }
  /// The expected lines without their line ends ("\n" or "\r\n"); valid once complete().
  [[nodiscard]] std::vector<std::string> lines() const;
  [[nodiscard]] size_t size() const noexcept { return text_.size(); }
  /// Bytes searched for line ends so far (tests: equals size(), never more).
  [[nodiscard]] size_t bytesScanned() const noexcept { return scanned_; }

private:
  size_t expected_;
  size_t max_;
  std::string text_;
  size_t scanned_ = 0;
  size_t lineEnds_ = 0;
};

} // namespace efu
