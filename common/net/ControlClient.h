// SPDX-License-Identifier: BSD-2-Clause
// A client of efu's control port (docs/control.md): command lines in, reply lines out.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {

/// The control port could not be reached or did not answer in time; the message names the
/// address and what failed.
class ControlError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Sends `commands` (one line each) over one TCP connection to efu's control port at
/// address:port and returns one reply line per command, in order, without the line end.
/// Waits at most `timeoutMs` for each part of the reply.
[[nodiscard]] std::vector<std::string> controlExchange(const std::string &address, uint16_t port,
                                                       const std::vector<std::string> &commands,
                                                       int timeoutMs = 2000);

/// The value of counter `name` (STAT_GET_NAME); ControlError if the reply is not one.
[[nodiscard]] int64_t controlCounter(const std::string &address, uint16_t port,
                                     const std::string &name);

} // namespace efu
