// SPDX-License-Identifier: BSD-2-Clause
// A dummy detector module for the loader tests; compile definitions make it deliberately broken.
#include "common/sdk/Module.h"

#include <iterator>

#if defined(EFU_TEST_MISMATCH_ABI)
#undef EFU_MODULE_ABI_VERSION
#define EFU_MODULE_ABI_VERSION 99
#endif
#if defined(EFU_TEST_MISMATCH_TOOLCHAIN)
#undef EFU_TOOLCHAIN_TAG
#define EFU_TOOLCHAIN_TAG "gcc-0.0/libstdc++-0/c++0/spdlog-0.0/json-0.0"
#endif

namespace {

[[maybe_unused]] const EfuConfigKey kKeys[] = {
    {"increment", efu::sdk::ConfigType::Integer, "1", "Added to dummy.packets per datagram", 1,
     100},
    {"fail", efu::sdk::ConfigType::Boolean, "false", "Refuse to start (tests the error path)", 1,
     0},
};

/// Counts datagrams and bytes, emits one event per datagram, counts its own destruction.
class DummyModule final : public efu::sdk::Module {
public:
  explicit DummyModule(efu::sdk::ModuleContext &ctx)
      : packets_(ctx.counter("dummy.packets")), destroyed_(ctx.counter("dummy.destroyed")),
        events_(ctx.events()), increment_(ctx.config().at("increment").get<int>()) {
    if (ctx.config().at("fail").get<bool>()) {
      throw efu::sdk::ConfigError(ctx.configSource() + ": dummy asked to fail (key 'fail')");
    }
    ctx.setLossCounters(packets_, packets_);
  }
  ~DummyModule() override { destroyed_.add(); }
  DummyModule(const DummyModule &) = delete;
  DummyModule &operator=(const DummyModule &) = delete;

  void process(const efu::sdk::Packet &packet) noexcept override {
    packets_.add(increment_);
    events_.add(packet.rxTimeNs, static_cast<int32_t>(packet.size), 7);
  }

private:
  efu::Counter &packets_;
  efu::Counter &destroyed_;
  efu::sdk::EventSink &events_;
  int increment_;
};

} // namespace

#if defined(EFU_TEST_NO_ENTRY)
extern "C" __attribute__((visibility("default"))) int efu_not_the_entry_point() {
  return 1;
}
#elif defined(EFU_TEST_ABI1)
/// The descriptor as modules built against ABI 1.1 (major, minor, size, ...) exported it.
struct EfuModuleDescriptorAbi1 {
  uint32_t abiMajor;
  uint32_t abiMinor;
  uint32_t structSize;
  const char *toolchain;
  const char *name;
  const char *version;
  const char *description;
  const EfuConfigKey *configKeys;
  uint32_t configKeyCount;
  efu::sdk::Module *(*create)(efu::sdk::ModuleContext *ctx);
  void (*destroy)(efu::sdk::Module *module);
};
// Its type as such a module declared it (that header's struct had today's name; the loader's
// call through its own declaration is then of the same function type).
extern "C" __attribute__((visibility("default"))) const EfuModuleDescriptor *
efu_module_descriptor() {
  static const EfuModuleDescriptorAbi1 descriptor{
      1, 1, sizeof(EfuModuleDescriptorAbi1), EFU_TOOLCHAIN_TAG, "dummy", "0.0.1", "ABI 1.1 dummy",
      kKeys, std::size(kKeys),
      [](efu::sdk::ModuleContext *ctx) -> efu::sdk::Module * { return new DummyModule(*ctx); },
      [](efu::sdk::Module *module) { delete module; }};
  return reinterpret_cast<const EfuModuleDescriptor *>(&descriptor);
}
#else
EFU_MODULE(DummyModule, "dummy", "0.0.1", "dummy module for the loader tests", kKeys,
           std::size(kKeys))
#endif
