// SPDX-License-Identifier: BSD-2-Clause
// efu-view's HTTP server (cpp-httplib): the embedded page and the JSON API of docs/tools.md.
#pragma once

#include "efu/tools/view/ViewState.h"
#include "efu/tools/view/EmbeddedFiles.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace efu::tools::view {

/// Where and how the server listens; the bounds keep a browser (or anything else that connects)
/// from making it grow.
struct ServerOptions {
  std::string address = "127.0.0.1"; ///< numeric IPv4 or IPv6
  uint16_t port = 8600;              ///< 0: the kernel picks one (see ViewServer::port())
  size_t threads = 8;         ///< requests served at once (cpp-httplib's thread pool, fixed size)
  size_t maxBodyBytes = 4096; ///< a longer POST body gets 413
  int timeoutS = 5;           ///< to read a request, and to write a response
  size_t keepAliveRequests = 100; ///< requests on one connection before it is closed
  int keepAliveS = 2; ///< an idle keep-alive connection (it holds a thread) closes after this
};

/// Serves `assets` (/ is index.html) and the API on `state`: GET /api/state, /api/image,
/// /api/tof; POST /api/control, /api/roi, /api/gate; DELETE /api/roi. JSON answers carry
/// Cache-Control: no-store; errors are {"error": "..."} with 400 (a bad request: the text says
/// what), 404 (an unknown path, source, region or gate) or 413 (a body over maxBodyBytes).
/// Ownership: `state` must outlive the server.
class ViewServer {
public:
  /// Binds; throws std::runtime_error naming --http-address/--http-port and the reason when it
  /// cannot (a port in use is refused: no SO_REUSEPORT).
  ViewServer(ViewState &state, ServerOptions options, std::span<const EmbeddedFile> assets);
  /// Stops serving and joins the threads.
  ~ViewServer();
  ViewServer(const ViewServer &) = delete;
  ViewServer &operator=(const ViewServer &) = delete;

  /// The bound port (the kernel's choice when the options asked for 0).
  [[nodiscard]] uint16_t port() const noexcept { return port_; }
  /// Serves on a thread of its own until stop().
  void start();
  void stop();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

/// "" when `address` is on loopback, else the warning to give (who can reach the page and what
/// they can do).
std::string httpExposure(const std::string &address, uint16_t port);

} // namespace efu::tools::view
