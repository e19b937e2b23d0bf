// SPDX-License-Identifier: BSD-2-Clause
// The module SDK: everything a detector module sees of the daemon, and its versioned C entry point.
#pragma once

#include "common/stats/Counter.h"

#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <spdlog/version.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

/// One number for the whole module ABI: bump it on any change of the types in this header
/// (descriptor, Packet, the classes and their virtual functions). The loader accepts only a
/// module with efu's number, descriptor size and toolchain tag: modules are rebuilt per efu
/// release, never loaded across an ABI change (docs/modules.md, Compatibility).
/// 1 had a major/minor pair (1.0, 1.1); 2 replaced it by this number; 3 added reports,
/// calibrations and event sources; 4 added data arrays (da00) and named truth sources; 5 added
/// ImageGeometry::firstPixel; 6 readout sources without ESS headers and with pulse datagrams of
/// their own (Timepix3); 7 DataArraySink::publish() says whether the message was taken, and
/// maxMessageBytes() how large one may be; the module's default ev44 source name
/// (EfuModuleDescriptor::sourceName); 8 partitions: several instances of one module on several
/// processing threads (ModuleContext::partition(), partitions(), streamCounter();
/// EfuModuleDescriptor::partitionKey, threadsKey).
#define EFU_MODULE_ABI_VERSION 8

#define EFU_STRINGIFY_(x) #x
#define EFU_STRINGIFY(x) EFU_STRINGIFY_(x)

/// Compiler, C++ library, C++ standard and the versions of the C++ libraries whose types cross
/// the module boundary. A module built with a different tag is refused by the loader.
#define EFU_TOOLCHAIN_TAG                                                                          \
  "gcc-" EFU_STRINGIFY(__GNUC__) "." EFU_STRINGIFY(__GNUC_MINOR__) "/libstdc++-" EFU_STRINGIFY(    \
      __GLIBCXX__) "/c++" EFU_STRINGIFY(__cplusplus) "/spdlog-" EFU_STRINGIFY(SPDLOG_VER_MAJOR) "." \
      EFU_STRINGIFY(SPDLOG_VER_MINOR) "/json-" EFU_STRINGIFY(NLOHMANN_JSON_VERSION_MAJOR) "."      \
      EFU_STRINGIFY(NLOHMANN_JSON_VERSION_MINOR)

/// Name of the single symbol a module exports.
#define EFU_MODULE_ENTRY_SYMBOL "efu_module_descriptor"

namespace efu::sdk {

/// One received datagram. `data` points into a ring slot and is valid only during process().
struct Packet {
  const uint8_t *data;
  uint32_t size;      ///< bytes of UDP payload
  /// Rx queue (SO_REUSEPORT socket) it came in on, 0..queues-1 (ABI 1.1; was padding in 1.0).
  /// The kernel keeps one source on one queue, so per-source order holds; datagrams of
  /// different queues interleave in no defined order.
  uint32_t queue;
  int64_t rxTimeNs;   ///< CLOCK_REALTIME ns: the kernel's arrival time of this datagram with
                      ///< `efu --rx-timestamps kernel`, else when the rx thread received the
                      ///< recvmmsg batch holding it (shared by the batch)
  // ABI 1.1 appended: who sent it (e.g. to account per readout board or per generator).
  uint32_t sourceIp = 0;   ///< IPv4 address, host byte order
  uint16_t sourcePort = 0; ///< UDP port, host byte order
};
static_assert(sizeof(Packet) == 32, "Packet's layout is part of the module ABI");

/// Where modules put neutron events. Called on the processing thread only.
class EventSink {
public:
  virtual ~EventSink() = default;
  /// pulseTimeNs: reference (pulse) time, ns since the Unix epoch; tofNs: ns after the pulse.
  virtual void add(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept = 0;
};

/// Element type of a data array variable: the numbering of the ESS streaming-data-types da00
/// schema's da00_dtype (written to the wire as is).
enum class DataType : int8_t {
  None = 0,
  Int8 = 1,
  UInt8 = 2,
  Int16 = 3,
  UInt16 = 4,
  Int32 = 5,
  UInt32 = 6,
  Int64 = 7,
  UInt64 = 8,
  Float32 = 9,
  Float64 = 10,
  CString = 11,
};

/// One variable of a data array (da00_Variable): a named, typed array with its unit, the names
/// of its axes and its shape. Every view must stay valid during the publish() call only.
struct DataVariable {
  std::string_view name;                  ///< e.g. "signal", "frame_time"
  std::string_view unit;                  ///< "" = none written
  std::span<const std::string_view> axes; ///< one name per dimension
  std::span<const int64_t> shape;         ///< elements per dimension (C order)
  DataType type = DataType::None;
  std::span<const uint8_t> data; ///< the elements' bytes, little-endian, C order
};

/// Where a module puts data arrays (ABI 4): histograms and other arrays that are not events,
/// published as da00 messages on the events topic with the sink's source name. Called on the
/// processing thread only.
class DataArraySink {
public:
  virtual ~DataArraySink() = default;
  /// One message: the array's time (ns since the Unix epoch) and its variables, copied before
  /// it returns. May block on Kafka back-pressure as events do; never throws. Returns true when
  /// the producer took the message (ABI 7; its delivery may still fail later, counted in
  /// kafka.failed), false when it was refused: larger than maxMessageBytes(), a variable whose
  /// data do not fill its shape, or refused by the producer for good. With --no-kafka the
  /// arrays are discarded and publish() returns true.
  virtual bool publish(int64_t timestampNs, std::span<const DataVariable> variables) noexcept = 0;
  // Appended with ABI 7:
  /// The largest serialised da00 message (bytes) the producer takes: message.max.bytes in effect
  /// (efu's default, --kafka-config, -X) less librdkafka's per-record overhead; with --no-kafka
  /// the same figure for the same options. A module refuses at start a configuration whose
  /// messages could not be sent (ConfigError naming the key).
  [[nodiscard]] virtual size_t maxMessageBytes() const noexcept = 0;
};

/// Thrown by a module's constructor for a configuration it cannot use; say key and value.
class ConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A named JSON document a module shows on demand (ABI 3): the control command
/// `REPORT_GET <name>` answers with the text last published (docs/control.md), "{}" before the
/// first. For what does not fit counters: whole histograms, lists of positions. publish()
/// copies under a lock: call it from tick() or flush(), never from process().
class Report {
public:
  void publish(std::string json) {
    const std::lock_guard lock(mutex_);
    text_ = std::move(json);
  }
  [[nodiscard]] std::string read() const {
    const std::lock_guard lock(mutex_);
    return text_;
  }

private:
  mutable std::mutex mutex_;
  std::string text_ = "{}";
};

/// The narrow view of the daemon a module gets. Valid for the module's whole life.
class ModuleContext {
public:
  virtual ~ModuleContext() = default;
  /// Registers a counter (dotted lowercase name, e.g. "udp.seq.lost"); published as
  /// efu.<service>.<name>. Call from the constructor only. Throws on a bad or duplicate name.
  virtual Counter &counter(std::string_view name) = 0;
  /// The daemon's logger. Never log above trace level from process().
  virtual spdlog::logger &log() = 0;
  /// The default source's events: ev44 source_name `--source-name`, else the module's own
  /// default (`static std::string sourceName(config, configSource)`, ABI 7), else the instrument.
  virtual EventSink &events() = 0;
  /// The module's configuration: validated against the descriptor's key table, defaults filled in.
  [[nodiscard]] virtual const nlohmann::json &config() const = 0;
  /// Where the configuration came from ("freia.json" or "(defaults)"), for error messages.
  [[nodiscard]] virtual const std::string &configSource() const = 0;
  [[nodiscard]] virtual uint32_t statsIntervalMs() const = 0;
  /// Declares the module's sequence-based loss: `lost` datagrams of `expected` (both counters of
  /// this module). The daemon shows them, and PER = lost / expected, in its interval line.
  virtual void setLossCounters(const Counter &lost, const Counter &expected) = 0;
  /// Used by EFU_MODULE's create() to report why construction failed.
  virtual void setError(std::string_view message) = 0;
  // Appended with ABI 2:
  /// Registers a gauge: like counter(), for a value that may go down (a last-interval figure,
  /// a level, a count net of corrections). Monitoring then treats a fall as a value, not as a
  /// restart (Prometheus `gauge` instead of `counter`). Same rules as counter().
  virtual Counter &gauge(std::string_view name) = 0;
  // Appended with ABI 3:
  /// The calibration given with `--calibration FILE` (JSON as read, bounded like configs), or
  /// null when none was given. A module that reads it declares
  /// `static constexpr bool kAcceptsCalibration = true;` and checks it in its constructor
  /// (ConfigError naming calibrationSource(), the key path and the value); EFU_MODULE refuses
  /// a calibration for a module that does not declare it.
  [[nodiscard]] virtual const nlohmann::json &calibration() const = 0;
  /// The calibration's file name ("" when none), for error messages.
  [[nodiscard]] virtual const std::string &calibrationSource() const = 0;
  /// Registers a report (dotted lowercase name, e.g. "udp.histograms"), read by REPORT_GET.
  /// Call from the constructor only. Throws on a duplicate name.
  virtual Report &report(std::string_view name) = 0;
  /// Events of a source of their own: ev44 messages on the same topic whose source_name is
  /// `sourceName` (a detector whose banks or panels consumers want apart). Each source keeps
  /// its own messages (one pulse per message, the same limits as events()); events() stays the
  /// default source. Call from the constructor only; the same name gives the same sink.
  /// Throws std::invalid_argument for an empty name.
  virtual EventSink &events(std::string_view sourceName) = 0;
  // Appended with ABI 4:
  /// Data arrays of a source (da00 messages on the events topic whose source_name is
  /// `sourceName`, e.g. a beam monitor's histogram per pulse). Call from the constructor only;
  /// the same name gives the same sink. Throws std::invalid_argument for an empty name.
  virtual DataArraySink &dataArrays(std::string_view sourceName) = 0;
  // Appended with ABI 8 (docs/modules.md, "Partitions"):
  /// Which of partitions() instances this is, 0..partitions()-1. With `efu --proc-threads N`
  /// (N > 1, only for a module that declares kPartitionKey) the daemon creates N instances, one
  /// per processing thread, and hands every one of them every datagram, in the same order. Each
  /// instance does the work of the readouts its key gives to its partition and skips the
  /// others'; what the stream as a whole carries (headers, sequence numbers, pulse times) each
  /// instance follows, and counts with streamCounter(). 0 of 1 without --proc-threads.
  [[nodiscard]] virtual unsigned partition() const = 0;
  [[nodiscard]] virtual unsigned partitions() const = 0;
  /// A counter of what every partition sees alike (datagrams, ESS headers, readouts parsed,
  /// pulses): partition 0's is published under `name`; the other partitions get a counter of
  /// their own that is never published, so the published value counts the stream once. Same
  /// rules as counter(). With one partition it is counter(name).
  /// counter() and gauge() in a partition register a part of the published value: every
  /// partition registers the same names, and readers see the sum of the parts.
  virtual Counter &streamCounter(std::string_view name) = 0;
};

/// A detector module instance. The framework owns the threads; a module never starts any.
class Module {
public:
  virtual ~Module() = default;
  /// Processing thread: one call per datagram. No allocation, no logging, no exceptions: count.
  virtual void process(const Packet &packet) noexcept = 0;
  /// Processing thread, at least every 10 ms (also when idle): time-based work such as
  /// closing clusters or finishing an interval. nowNs is CLOCK_REALTIME.
  virtual void tick(int64_t nowNs) noexcept { (void)nowNs; }
  /// Processing thread, once at shutdown after the ring has been drained.
  virtual void flush() noexcept {}
};

/// The 2-D picture of a detector's pixels (efu-dump --image): pixel ids are row-major from
/// firstPixel, pixel = firstPixel + y * width + x, with y = 0 the top row (a part of a detector
/// whose ids start after another part's: firstPixel = its first id). A module that provides it
/// declares `static sdk::ImageGeometry imageGeometry(const nlohmann::json &config,
/// const std::string &configSource)` (config already validated; throws ConfigError).
struct ImageGeometry {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t firstPixel = 1; ///< (module ABI 5)
};

class ReadoutSource; // common/sdk/ReadoutSource.h: the module's encoder for readoutgen

enum class ConfigType : uint32_t { Integer = 0, Number = 1, Boolean = 2, String = 3, Array = 4, Object = 5 };

} // namespace efu::sdk

extern "C" {

/// One configuration key a module accepts. Keys not in the table are refused by the daemon.
struct EfuConfigKey {
  const char *key;
  efu::sdk::ConfigType type;
  const char *defaultJson; ///< JSON text of the default ("10", "\"x\"", "[]"); nullptr = required
  const char *help;
  double minimum; ///< for Integer/Number; ignored when minimum > maximum
  double maximum;
};

/// What a module exports (through EFU_MODULE_ENTRY_SYMBOL). The first field stays the ABI
/// number in every version, so any efu can read it and refuse what it cannot load.
struct EfuModuleDescriptor {
  uint32_t abiVersion; ///< EFU_MODULE_ABI_VERSION as the module saw it
  uint32_t structSize; ///< sizeof(EfuModuleDescriptor) as the module saw it
  const char *toolchain;
  const char *name;
  const char *version;
  const char *description;
  const EfuConfigKey *configKeys;
  uint32_t configKeyCount;
  /// Returns nullptr after ctx->setError() when construction fails.
  efu::sdk::Module *(*create)(efu::sdk::ModuleContext *ctx);
  void (*destroy)(efu::sdk::Module *module);
  /// What the module tells the tools about itself; nullptr when it does not provide it. Both
  /// take the configuration validated against configKeys and return false after filling
  /// *error when the module refuses it.
  /// The detector image of a configuration (efu-dump --image): CLASS::imageGeometry().
  bool (*geometry)(const nlohmann::json *config, const char *configSource,
                   efu::sdk::ImageGeometry *out, std::string *error);
  /// A readout encoder for readoutgen (CLASS::Source), released with destroySource.
  /// `calibration` is the JSON of readoutgen --calibration (nullptr or null JSON when none) and
  /// `calibrationSource` its file name (may be nullptr).
  efu::sdk::ReadoutSource *(*createSource)(const nlohmann::json *config, const char *configSource,
                                           uint64_t seed, const nlohmann::json *calibration,
                                           const char *calibrationSource, std::string *error);
  void (*destroySource)(efu::sdk::ReadoutSource *source);
  // Appended with ABI 7:
  /// The ev44 source_name of events() when `--source-name` does not give one: CLASS::sourceName()
  /// (the ESS EFU's name for the instrument's events, e.g. "caen"); nullptr: the instrument name.
  bool (*sourceName)(const nlohmann::json *config, const char *configSource, std::string *out,
                     std::string *error);
  // Appended with ABI 8:
  /// What decides which partition does a readout's work, in words for --help-module and errors
  /// (CLASS::kPartitionKey, e.g. "event builder: (ring, FEN)"); nullptr: the module cannot be
  /// split and efu refuses --proc-threads above 1 for it.
  const char *partitionKey;
  /// A configuration key (Integer) that sets the processing threads as --proc-threads does
  /// (CLASS::kThreadsKey, e.g. the ESS timepix3 file's "ParallelThreads"); nullptr: none.
  const char *threadsKey;
};

} // extern "C"

static_assert(sizeof(EfuModuleDescriptor) == 120,
              "the descriptor's layout is part of the module ABI: bump EFU_MODULE_ABI_VERSION");

namespace efu::sdk::detail {

/// Runs `f`, turning an exception into `false` and its text in *error (exceptions do not cross
/// the module boundary).
template <class F> bool guarded(std::string *error, F &&f) noexcept {
  try {
    f();
    return true;
  } catch (const std::exception &e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown exception from the module";
  }
  return false;
}

template <class M>
concept HasGeometry = requires(const nlohmann::json &c, const std::string &s) {
  { M::imageGeometry(c, s) } -> std::same_as<ImageGeometry>;
};

template <class M>
concept HasSourceName = requires(const nlohmann::json &c, const std::string &s) {
  { M::sourceName(c, s) } -> std::convertible_to<std::string>;
};

template <class M>
concept HasSource = requires(const nlohmann::json &c, const std::string &s, uint64_t seed) {
  typename M::Source;
  new typename M::Source(c, s, seed);
};

/// A source that applies a calibration: constructible from (config, configSource, seed,
/// calibration, calibrationSource).
template <class S>
concept CalibratedSource =
    requires(const nlohmann::json &c, const std::string &s, uint64_t seed) { new S(c, s, seed, c, s); };

/// A module that reads ModuleContext::calibration() (declares kAcceptsCalibration = true).
template <class M>
concept AcceptsCalibration = requires { requires M::kAcceptsCalibration; };

/// The message for a calibration given to a module or source that takes none.
inline std::string noCalibration(const char *module, const std::string &file) {
  return file + ": module '" + module + "' takes no calibration (--calibration)";
}

/// A module that can run as several partitions declares
/// `static constexpr const char *kPartitionKey = "...";` (what decides a readout's partition).
template <class M>
concept HasPartitionKey = requires { { M::kPartitionKey } -> std::convertible_to<const char *>; };
/// A module whose configuration sets its processing threads declares
/// `static constexpr const char *kThreadsKey = "ParallelThreads";`.
template <class M>
concept HasThreadsKey = requires { { M::kThreadsKey } -> std::convertible_to<const char *>; };

template <class M> constexpr const char *partitionKeyOf() {
  if constexpr (HasPartitionKey<M>) {
    return M::kPartitionKey;
  } else {
    return nullptr;
  }
}
template <class M> constexpr const char *threadsKeyOf() {
  if constexpr (HasThreadsKey<M>) {
    static_assert(HasPartitionKey<M>, "a threads key needs kPartitionKey");
    return M::kThreadsKey;
  } else {
    return nullptr;
  }
}

template <class M> constexpr auto geometryHook() {
  using Hook = bool (*)(const nlohmann::json *, const char *, ImageGeometry *, std::string *);
  if constexpr (HasGeometry<M>) {
    return static_cast<Hook>([](const nlohmann::json *config, const char *source,
                                ImageGeometry *out, std::string *error) {
      return guarded(error, [&] { *out = M::imageGeometry(*config, source); });
    });
  } else {
    return static_cast<Hook>(nullptr);
  }
}

template <class M> constexpr auto sourceNameHook() {
  using Hook = bool (*)(const nlohmann::json *, const char *, std::string *, std::string *);
  if constexpr (HasSourceName<M>) {
    return static_cast<Hook>([](const nlohmann::json *config, const char *source,
                                std::string *out, std::string *error) {
      return guarded(error, [&] { *out = M::sourceName(*config, source); });
    });
  } else {
    return static_cast<Hook>(nullptr);
  }
}

template <class M> constexpr auto createSourceHook() {
  using Hook = ReadoutSource *(*)(const nlohmann::json *, const char *, uint64_t,
                                  const nlohmann::json *, const char *, std::string *);
  if constexpr (HasSource<M>) {
    return static_cast<Hook>([](const nlohmann::json *config, const char *source, uint64_t seed,
                                const nlohmann::json *calibration, const char *calibrationSource,
                                std::string *error) -> ReadoutSource * {
      using S = typename M::Source;
      ReadoutSource *made = nullptr;
      guarded(error, [&] {
        const bool calibrated = calibration != nullptr && !calibration->is_null();
        const std::string file = calibrationSource != nullptr ? calibrationSource : "";
        if constexpr (CalibratedSource<S>) {
          made = new S(*config, source, seed, calibrated ? *calibration : nlohmann::json(), file);
        } else {
          if (calibrated) {
            throw ConfigError(file +
                              ": this module's readout source takes no calibration (--calibration)");
          }
          made = new S(*config, source, seed);
        }
      });
      return made;
    });
  } else {
    return static_cast<Hook>(nullptr);
  }
}

template <class M> constexpr auto destroySourceHook() {
  using Hook = void (*)(ReadoutSource *);
  if constexpr (HasSource<M>) {
    return static_cast<Hook>([](ReadoutSource *source) {
      delete static_cast<typename M::Source *>(source);
    });
  } else {
    return static_cast<Hook>(nullptr);
  }
}

} // namespace efu::sdk::detail

/// Defines the module's entry point. CLASS must have a constructor CLASS(efu::sdk::ModuleContext&);
/// it may describe itself with `static sdk::ImageGeometry imageGeometry(config, configSource)`,
/// `static std::string sourceName(config, configSource)` (its default ev44 source_name)
/// and `using Source = <a ReadoutSource constructible from (config, configSource, seed)>;`;
/// `static constexpr const char *kPartitionKey` when it can run as partitions (ABI 8) and
/// `kThreadsKey` when a configuration key sets their number.
/// The last arguments are the key table and its length (`kKeys, std::size(kKeys)`), or
/// EFU_NO_CONFIG_KEYS.
#define EFU_MODULE(CLASS, NAME, VERSION, DESCRIPTION, ...)                                        \
  extern "C" __attribute__((visibility("default"))) const EfuModuleDescriptor *                    \
  efu_module_descriptor() {                                                                        \
    static const EfuModuleDescriptor descriptor{                                                   \
        EFU_MODULE_ABI_VERSION,                                                                    \
        sizeof(EfuModuleDescriptor),                                                               \
        EFU_TOOLCHAIN_TAG,                                                                         \
        NAME,                                                                                      \
        VERSION,                                                                                   \
        DESCRIPTION,                                                                               \
        __VA_ARGS__,                                                                               \
        [](efu::sdk::ModuleContext *ctx) -> efu::sdk::Module * {                                   \
          try {                                                                                    \
            if constexpr (!efu::sdk::detail::AcceptsCalibration<CLASS>) {                          \
              if (!ctx->calibration().is_null()) {                                                 \
                ctx->setError(efu::sdk::detail::noCalibration(NAME, ctx->calibrationSource()));    \
                return nullptr;                                                                    \
              }                                                                                    \
            }                                                                                      \
            return new CLASS(*ctx);                                                                \
          } catch (const std::exception &e) {                                                      \
            ctx->setError(e.what());                                                               \
          } catch (...) {                                                                          \
            ctx->setError("unknown exception from the module constructor");                        \
          }                                                                                        \
          return nullptr;                                                                          \
        },                                                                                         \
        [](efu::sdk::Module *module) { delete module; },                                           \
        efu::sdk::detail::geometryHook<CLASS>(),                                                   \
        efu::sdk::detail::createSourceHook<CLASS>(),                                               \
        efu::sdk::detail::destroySourceHook<CLASS>(),                                              \
        efu::sdk::detail::sourceNameHook<CLASS>(),                                                 \
        efu::sdk::detail::partitionKeyOf<CLASS>(),                                                 \
        efu::sdk::detail::threadsKeyOf<CLASS>()};                                                  \
    return &descriptor;                                                                            \
  }

#define EFU_NO_CONFIG_KEYS nullptr, 0
