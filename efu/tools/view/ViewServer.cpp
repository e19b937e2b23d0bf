// SPDX-License-Identifier: BSD-2-Clause
// efu-view's HTTP server: routes, request checks and the answers' encodings.
#include "efu/tools/view/ViewServer.h"

#include "common/net/TcpListener.h"
#include "common/time/Time.h"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace efu::tools::view {

std::string_view contentTypeFor(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "application/javascript; charset=utf-8"},
      {".mjs", "application/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
      {".woff2", "font/woff2"},
  };
  for (const auto &[extension, type] : kTypes) {
    if (name.size() > extension.size() && name.ends_with(extension)) {
      return type;
    }
  }
  return "application/octet-stream";
}

std::string httpExposure(const std::string &address, uint16_t port) {
  if (isLoopback(address)) {
    return {};
  }
  return "the page at http://" + endpoint(address, port) +
         "/ serves without authentication on a non-loopback address: anyone who reaches it sees "
         "the data and can reset, pause and gate the accumulation; keep --http-address on "
         "127.0.0.1 (use an SSH tunnel) or firewall the port";
}

namespace {

using nlohmann::json;

void noStore(httplib::Response &res) {
  res.set_header("Cache-Control", "no-store");
}

void sendJson(httplib::Response &res, const json &body, int status = 200) {
  res.status = status;
  noStore(res);
  // Names come from Kafka messages: bytes that are not UTF-8 are replaced, not thrown about.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void sendError(httplib::Response &res, int status, const std::string &text) {
  sendJson(res, json{{"error", text}}, status);
}

/// A whole decimal number that fits T, or nullopt.
template <typename T> std::optional<T> parseNumber(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

/// A JSON number that is a whole value within T's range, or nullopt (a fraction is refused).
template <typename T> std::optional<T> wholeNumber(const json &value) {
  if (value.is_number_unsigned() && std::in_range<T>(value.get<uint64_t>())) {
    return static_cast<T>(value.get<uint64_t>());
  }
  if (value.is_number_integer() && std::in_range<T>(value.get<int64_t>())) {
    return static_cast<T>(value.get<int64_t>());
  }
  return std::nullopt;
}

/// The body as a JSON object, or why not (for a 400).
std::optional<json> bodyObject(const httplib::Request &req, std::string &error) {
  auto body = json::parse(req.body, nullptr, false);
  if (body.is_discarded()) {
    error = "the body is not JSON";
    return std::nullopt;
  }
  if (!body.is_object()) {
    error = "the body must be a JSON object";
    return std::nullopt;
  }
  return body;
}

/// The route of a file: "/NAME" as a regular expression (route patterns are) that matches NAME
/// literally.
std::string assetRoute(std::string_view text) {
  std::string out = "/";
  for (const char c : text) {
    if (std::string_view(R"(\^$.|?*+()[]{})").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

} // namespace

struct ViewServer::Impl {
  Impl(ViewState &s, ServerOptions o, std::span<const EmbeddedFile> a)
      : state(s), options(std::move(o)), assets(a) {}

  void routes();
  void getState(httplib::Response &res) const;
  void getImage(const httplib::Request &req, httplib::Response &res) const;
  void getTof(const httplib::Request &req, httplib::Response &res) const;
  void postControl(const httplib::Request &req, httplib::Response &res);
  void postRoi(const httplib::Request &req, httplib::Response &res);
  void deleteRoi(const httplib::Request &req, httplib::Response &res);
  void postGate(const httplib::Request &req, httplib::Response &res);

  ViewState &state;
  ServerOptions options;
  std::span<const EmbeddedFile> assets;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> finished{false}; ///< the thread left cpp-httplib's accept loop
};

void ViewServer::Impl::routes() {
  for (const EmbeddedFile &asset : assets) {
    const auto serve = [&asset](const httplib::Request &, httplib::Response &res) {
      noStore(res);
      res.set_content(std::string(asset.bytes), std::string(contentTypeFor(asset.name)));
    };
    server.Get(assetRoute(asset.name), serve);
    if (asset.name == "index.html") {
      server.Get("/", serve);
    }
  }
  server.Get("/api/state",
             [this](const httplib::Request &, httplib::Response &res) { getState(res); });
  server.Get("/api/image",
             [this](const httplib::Request &req, httplib::Response &res) { getImage(req, res); });
  server.Get("/api/tof",
             [this](const httplib::Request &req, httplib::Response &res) { getTof(req, res); });
  server.Post("/api/control", [this](const httplib::Request &req, httplib::Response &res) {
    postControl(req, res);
  });
  server.Post("/api/roi",
              [this](const httplib::Request &req, httplib::Response &res) { postRoi(req, res); });
  server.Delete("/api/roi", [this](const httplib::Request &req, httplib::Response &res) {
    deleteRoi(req, res);
  });
  server.Post("/api/gate",
              [this](const httplib::Request &req, httplib::Response &res) { postGate(req, res); });
  // Every error without a body of its own (no route, a body too long, a malformed request)
  // gets one in JSON, so that the page can show it.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        std::string text;
        switch (res.status) {
        case 404:
          text = "not found: " + req.method + " " + req.path;
          break;
        case 413:
          text = "request body larger than " + std::to_string(options.maxBodyBytes) + " bytes";
          break;
        default:
          text = "HTTP " + std::to_string(res.status) + " for " + req.method + " " + req.path;
        }
        sendJson(res, json{{"error", text}}, res.status);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request &req, httplib::Response &res, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception &e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("{} {}: {}", req.method, req.path, what);
        sendError(res, 500, "internal error: " + what);
      });
}

void ViewServer::Impl::getState(httplib::Response &res) const {
  sendJson(res, state.state(realtimeNs()));
}

void ViewServer::Impl::getImage(const httplib::Request &req, httplib::Response &res) const {
  if (!req.has_param("source")) {
    sendError(res, 400, "source=NAME is required");
    return;
  }
  const std::string source = req.get_param_value("source");
  const std::string gatedText = req.has_param("gated") ? req.get_param_value("gated") : "0";
  if (gatedText != "0" && gatedText != "1") {
    sendError(res, 400, "gated must be 0 or 1, got '" + gatedText + "'");
    return;
  }
  const bool gated = gatedText == "1";
  const std::string format = req.has_param("format") ? req.get_param_value("format") : "binary";
  if (format != "binary" && format != "json") {
    sendError(res, 400, "format must be binary or json, got '" + format + "'");
    return;
  }
  const auto image = state.image(source, gated);
  if (!image) {
    sendError(res, 404,
              gated ? "no gated image of source '" + source +
                          "' (unknown source, no --geometry, or no time-of-flight gate)"
                    : "no image of source '" + source + "' (unknown source, or no --geometry)");
    return;
  }
  if (format == "json") {
    sendJson(res, json{{"width", image->width},
                       {"height", image->height},
                       {"first_pixel", image->firstPixel},
                       {"max", image->max},
                       {"since_ns", image->sinceNs},
                       {"counts", image->counts}});
    return;
  }
  // width * height little-endian uint32, saturated.
  std::string bytes(image->counts.size() * 4, '\0');
  for (size_t i = 0; i < image->counts.size(); ++i) {
    const auto v = static_cast<uint32_t>(
        std::min<uint64_t>(image->counts[i], std::numeric_limits<uint32_t>::max()));
    bytes[4 * i] = static_cast<char>(v & 0xff);
    bytes[4 * i + 1] = static_cast<char>((v >> 8) & 0xff);
    bytes[4 * i + 2] = static_cast<char>((v >> 16) & 0xff);
    bytes[4 * i + 3] = static_cast<char>((v >> 24) & 0xff);
  }
  noStore(res);
  res.set_header("X-Width", std::to_string(image->width));
  res.set_header("X-Height", std::to_string(image->height));
  res.set_header("X-First-Pixel", std::to_string(image->firstPixel));
  res.set_header("X-Max", std::to_string(image->max));
  res.set_header("X-Since-Ns", std::to_string(image->sinceNs));
  res.set_content(std::move(bytes), "application/octet-stream");
}

void ViewServer::Impl::getTof(const httplib::Request &req, httplib::Response &res) const {
  if (!req.has_param("source")) {
    sendError(res, 400, "source=NAME is required");
    return;
  }
  const std::string source = req.get_param_value("source");
  std::optional<uint32_t> roi;
  if (req.has_param("roi")) {
    const std::string text = req.get_param_value("roi");
    roi = parseNumber<uint32_t>(text);
    if (!roi) {
      sendError(res, 400, "roi must be a region id (a whole number), got '" + text + "'");
      return;
    }
  }
  const auto tof = state.tof(source, roi);
  if (!tof) {
    sendError(res, 404,
              roi ? "no region " + std::to_string(*roi) + " of source '" + source + "'"
                  : "no time-of-flight spectrum of source '" + source + "' (unknown source)");
    return;
  }
  sendJson(res, json{{"bin_ns", tof->binNs},
                     {"max_ns", tof->maxNs},
                     {"negative", tof->negative},
                     {"above_range", tof->aboveRange},
                     {"since_ns", tof->sinceNs},
                     {"bins", tof->bins}});
}

void ViewServer::Impl::postControl(const httplib::Request &req, httplib::Response &res) {
  std::string error;
  const auto body = bodyObject(req, error);
  if (!body) {
    sendError(res, 400, error);
    return;
  }
  const json action = body->value("action", json());
  if (!action.is_string()) {
    sendError(res, 400, "\"action\" must be one of \"reset\", \"pause\", \"resume\", \"window\"");
    return;
  }
  const auto name = action.get<std::string>();
  const int64_t nowNs = realtimeNs();
  if (name == "reset") {
    state.reset(nowNs);
  } else if (name == "pause" || name == "resume") {
    state.setPaused(name == "pause", nowNs);
  } else if (name == "window") {
    const json seconds = body->value("seconds", json());
    if (!seconds.is_number()) {
      sendError(res, 400, "\"window\" needs \"seconds\": a number (0, or 1..3600)");
      return;
    }
    error = state.setWindow(seconds.get<double>(), nowNs);
  } else {
    sendError(res, 400,
              "unknown action '" + name +
                  "' (one of \"reset\", \"pause\", \"resume\", \"window\")");
    return;
  }
  if (!error.empty()) {
    sendError(res, 400, error);
    return;
  }
  sendJson(res, json{{"ok", true}});
}

void ViewServer::Impl::postRoi(const httplib::Request &req, httplib::Response &res) {
  std::string error;
  const auto body = bodyObject(req, error);
  if (!body) {
    sendError(res, 400, error);
    return;
  }
  const json source = body->value("source", json());
  if (!source.is_string()) {
    sendError(res, 400, "\"source\" must be the name of an image's source");
    return;
  }
  uint32_t corners[4] = {};
  const char *names[4] = {"x0", "y0", "x1", "y1"};
  for (int i = 0; i < 4; ++i) {
    const auto value = wholeNumber<uint32_t>(body->value(names[i], json()));
    if (!value) {
      sendError(res, 400,
                std::string("\"") + names[i] +
                    "\" must be a pixel coordinate (a whole "
                    "number, 0 or more)");
      return;
    }
    corners[i] = *value;
  }
  uint32_t id = 0;
  error = state.addRoi(source.get<std::string>(),
                       Rect{corners[0], corners[1], corners[2], corners[3]}, realtimeNs(), id);
  if (!error.empty()) {
    sendError(res, 400, error);
    return;
  }
  sendJson(res, json{{"id", id}});
}

void ViewServer::Impl::deleteRoi(const httplib::Request &req, httplib::Response &res) {
  const std::string text = req.has_param("id") ? req.get_param_value("id") : "";
  const auto id = parseNumber<uint32_t>(text);
  if (!id) {
    sendError(res, 400, "id must be a region id (a whole number), got '" + text + "'");
    return;
  }
  const std::string error = state.removeRoi(*id);
  if (!error.empty()) {
    sendError(res, 404, error);
    return;
  }
  sendJson(res, json{{"ok", true}});
}

void ViewServer::Impl::postGate(const httplib::Request &req, httplib::Response &res) {
  std::string error;
  const auto body = bodyObject(req, error);
  if (!body) {
    sendError(res, 400, error);
    return;
  }
  std::optional<std::pair<int64_t, int64_t>> window;
  if (!body->empty()) {
    const auto min = wholeNumber<int64_t>(body->value("tof_min_ns", json()));
    const auto max = wholeNumber<int64_t>(body->value("tof_max_ns", json()));
    if (!min || !max) {
      sendError(res, 400,
                "a gate needs \"tof_min_ns\" and \"tof_max_ns\" (whole ns); {} clears it");
      return;
    }
    window.emplace(*min, *max);
  }
  error = state.setGate(window, realtimeNs());
  if (!error.empty()) {
    sendError(res, 400, error);
    return;
  }
  sendJson(res, json{{"ok", true}});
}

ViewServer::ViewServer(ViewState &state, ServerOptions options, std::span<const EmbeddedFile> assets)
    : impl_(std::make_unique<Impl>(state, std::move(options), assets)) {
  auto &server = impl_->server;
  const auto &o = impl_->options;
  const size_t threads = o.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(o.maxBodyBytes);
  server.set_read_timeout(o.timeoutS, 0);
  server.set_write_timeout(o.timeoutS, 0);
  server.set_keep_alive_max_count(o.keepAliveRequests);
  server.set_keep_alive_timeout(o.keepAliveS);
  // cpp-httplib sets SO_REUSEPORT, with which a second server binds a port in use and shares
  // it; SO_REUSEADDR only, as efu's own listeners (TcpListener).
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl_->routes();
  int bound = -1;
  if (o.port == 0) {
    bound = server.bind_to_any_port(o.address);
  } else if (server.bind_to_port(o.address, o.port)) {
    bound = o.port;
  }
  if (bound <= 0) {
    // cpp-httplib does not say why; a listener of our own does.
    std::string why = "cannot bind " + endpoint(o.address, o.port);
    try {
      TcpListener probe("efu-view", o.address, o.port, 1);
    } catch (const std::runtime_error &e) {
      why = e.what();
    }
    throw std::runtime_error("--http-address " + o.address + " --http-port " +
                             std::to_string(o.port) + ": " + why);
  }
  port_ = static_cast<uint16_t>(bound);
}

ViewServer::~ViewServer() {
  stop();
}

void ViewServer::start() {
  impl_->thread = std::thread([this] {
    if (!impl_->server.listen_after_bind()) {
      spdlog::error("the HTTP server stopped with an error");
    }
    impl_->finished = true;
  });
  // Serving once the thread is in cpp-httplib's accept loop (a connection made earlier waits in
  // the backlog, which is fine; but a stop() before it would be lost, see stop()).
  while (!impl_->server.is_running() && !impl_->finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ViewServer::stop() {
  if (!impl_->thread.joinable()) {
    return;
  }
  // cpp-httplib's stop() does nothing until its thread has entered the accept loop: asked again
  // until the thread ends.
  while (!impl_->finished) {
    impl_->server.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->thread.join();
}

} // namespace efu::tools::view
