// SPDX-License-Identifier: BSD-2-Clause
// The EFU text control protocol: turns one request line into one reply line, without sockets.
#pragma once

#include "common/stats/Stats.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace efu {

/// What the daemon tells the protocol about itself. Callbacks run on the thread that calls
/// ControlProtocol::handle() (the daemon's main thread, through ControlServer::poll()).
struct ControlInfo {
  /// Reply of VERSION_GET: the version, then the build string, as the ESS EFU answers
  /// ("0.1.0 2026-12-01 10:40:00 builder Release-gcc12 1a2b3c4").
  std::string version;
  /// Reply of DETECTOR_INFO_GET: the module name (one word, as ESS tools expect).
  std::string detectorInfo;
  /// Reply of RUNTIMESTATS: a status bitmask (IntervalReport::runtimeStatus()). May be empty.
  std::function<uint32_t()> runtimeStatus;
  /// Reply of RUNTIMESTATS_JSON: one line of JSON figures. May be empty. Should not throw; if
  /// it does, the client gets "Error: <INTERNAL>".
  std::function<std::string()> runtimeStats;
  /// Called by EXIT, which replies "<OK>". It should only request the shutdown (set a flag the
  /// main loop checks); ControlServer writes the reply before that poll() returns whenever the
  /// client's socket has room. May be empty.
  std::function<void()> requestExit;
  /// CALIB_MODE_SET 0|1: raw-data mode off/on (every datagram sampled to ar51); CALIB_MODE_GET
  /// reads it. May be empty (then the mode is refused with BADCMD).
  std::function<void(bool)> setCalibMode;
  std::function<bool()> calibMode;
  /// REPORT_GET <name>: the JSON text of the module's report `name` (sdk::Report), or nullopt
  /// for an unknown name. May be empty (then every name is unknown).
  std::function<std::optional<std::string>(std::string_view)> report;
  /// Shared secret that commands changing the daemon's state (EXIT, CALIB_MODE_SET) need: a
  /// connection sends "AUTH <secret>" first. Empty: no secret is asked for.
  std::string secret;
  /// Refuse every command that changes the daemon's state ("Error: <READONLY>").
  bool readOnly = false;
};

/// What one connection has established: the protocol itself keeps no per-client state.
struct ControlSession {
  bool authenticated = false;
  /// Set by a wrong AUTH: the server sends the reply, then closes the connection.
  bool closeAfterReply = false;
};

/// Stateless parser and dispatcher of the EFU control protocol (docs/control.md).
///
/// A request is one line: a case-sensitive command followed by arguments separated by spaces or
/// tabs; surrounding whitespace and a trailing "\r" are ignored. The reply is one line without
/// its terminating newline (embedded CR/LF from the callbacks are replaced by spaces). Errors:
/// "Error: <BADCMD>" (unknown or empty command), "Error: <BADARGS>" (wrong argument count,
/// non-numeric or out-of-range index, unknown counter name), "Error: <INTERNAL>" (a callback
/// threw), "Error: <READONLY>" (a state-changing command with ControlInfo::readOnly),
/// "Error: <NOAUTH>" (a state-changing command before a successful AUTH when a secret is set),
/// "Error: <BADAUTH>" (a wrong secret; the connection is then closed).
///
/// Ownership: keeps a reference to `stats`, which must outlive the protocol.
/// Thread rules: handle() is called from one thread at a time; it reads counters, which other
/// threads may be writing.
class ControlProtocol {
public:
  static constexpr std::string_view kBadCommand = "Error: <BADCMD>";
  static constexpr std::string_view kBadArguments = "Error: <BADARGS>";
  static constexpr std::string_view kInternalError = "Error: <INTERNAL>";
  static constexpr std::string_view kOk = "<OK>";
  static constexpr std::string_view kReadOnly = "Error: <READONLY>";
  static constexpr std::string_view kNotAuthenticated = "Error: <NOAUTH>";
  static constexpr std::string_view kBadSecret = "Error: <BADAUTH>";

  ControlProtocol(const Stats &stats, ControlInfo info);
  ControlProtocol(const ControlProtocol &) = delete;
  ControlProtocol &operator=(const ControlProtocol &) = delete;

  /// Handles one request line (with or without its "\n") of the connection `session` and
  /// returns the reply line.
  [[nodiscard]] std::string handle(std::string_view line, ControlSession &session);
  /// The same for a one-off request without a connection (tests, tools).
  [[nodiscard]] std::string handle(std::string_view line) {
    ControlSession session;
    return handle(line, session);
  }

  /// True for the commands that change the daemon's state (EXIT, CALIB_MODE_SET): the ones that a secret
  /// protects and read-only mode refuses.
  [[nodiscard]] static bool changesState(std::string_view command) noexcept;

  /// The command names in CMD_GET order (index 1 is the first).
  [[nodiscard]] static std::span<const std::string_view> commands() noexcept;

  /// True if the reply is one of the error replies (starts with "Error: ").
  [[nodiscard]] static bool isError(std::string_view reply) noexcept;

private:
  const Stats &stats_;
  ControlInfo info_;
};

} // namespace efu
