// The random-number generator of a flagos device: a (seed, offset) pair, as
// ACLNN's random operators take it (aclnnInplaceUniform(selfRef, from, to,
// seed, offset), ...). Each device has its own default generator
// (hooks.cc getDefaultGenerator), so drawing on one device never moves
// another's stream, and two devices seeded alike draw alike.
//
// A random kernel takes the generator of its tensor's device (or the one the
// caller passed), and under the generator's mutex reads the seed and
// advances the offset by the number of values it draws (philox_engine_inputs).
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/TensorImpl.h>

#include <cstdint>
#include <utility>

namespace flagos {

class FlagosGeneratorImpl final : public c10::GeneratorImpl {
 public:
  FlagosGeneratorImpl(c10::DeviceIndex device, uint64_t seed);
  ~FlagosGeneratorImpl() override = default;

  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    offset_ = 0;
  }
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  // State: 16 bytes (uint8 CPU tensor), the seed then the offset.
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // The (seed, offset) of the next `increment` values; advances the offset.
  // The caller holds mutex_.
  std::pair<uint64_t, uint64_t> philox_engine_inputs(uint64_t increment) {
    const uint64_t offset = offset_;
    offset_ += increment;
    return {seed_, offset};
  }

 private:
  FlagosGeneratorImpl* clone_impl() const override;

  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The default generator of `device` (-1: the current device).
const at::Generator& default_generator(c10::DeviceIndex device);

}  // namespace flagos
