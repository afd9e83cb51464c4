// The simulator's own tests: operator arguments (aclTensor, aclScalar & co.) and operators computing on matching devices.
// (harness: sim_harness.h.)
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flagos/aclnn/aclnnAdds.h"
#include "flagos/aclnn/aclnnCast.h"
#include "flagos/aclnn/aclnnFusedAdamw.h"
#include "flagos/aclnn/aclnnInplaceAdd.h"
#include "flagos/aclnn/aclnnInplaceCopy.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnInplaceZero.h"
#include "sim_harness.h"

namespace {

using namespace fsim_test;

TEST(arguments_are_created_and_destroyed) {
  const int64_t live = stat("live_arguments");
  int64_t dims[] = {2, 3}, strides[] = {3, 1};
  float f = 1.5f;
  int64_t ints[] = {1, 2, 3};
  float floats[] = {0.5f};
  bool bools[] = {true, false};
  aclTensor* t1 = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* t2 = aclCreateTensor(dims, 2, ACL_INT32, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* t3 = aclCreateTensor(dims, 2, ACL_BF16, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclScalar* s1 = aclCreateScalar(&f, ACL_FLOAT);
  aclScalar* s2 = aclCreateScalar(&f, ACL_FLOAT);
  aclScalar* s3 = aclCreateScalar(&f, ACL_FLOAT);
  aclIntArray* ia = aclCreateIntArray(ints, 3);
  aclFloatArray* fa = aclCreateFloatArray(floats, 1);
  aclBoolArray* ba = aclCreateBoolArray(bools, 2);
  CHECK(t1 && t2 && t3 && s1 && s2 && s3 && ia && fa && ba);
  const aclTensor* tensors[] = {t2, t3};
  const aclScalar* scalars[] = {s2, s3};
  aclTensorList* tl = aclCreateTensorList(tensors, 2);
  aclScalarList* sl = aclCreateScalarList(scalars, 2);
  CHECK(tl && sl);
  CHECK_EQ(stat("live_arguments"), live + 11);
  CHECK_EQ(aclDestroyTensorList(tl), ACLNN_SUCCESS);  // destroys t2 and t3 too
  CHECK_EQ(aclDestroyScalarList(sl), ACLNN_SUCCESS);  // destroys s2 and s3 too
  CHECK_EQ(stat("live_arguments"), live + 5);
  aclDestroyTensor(t1);
  aclDestroyScalar(s1);
  aclDestroyIntArray(ia);
  aclDestroyFloatArray(fa);
  aclDestroyBoolArray(ba);
  CHECK_EQ(stat("live_arguments"), live);
  CHECK_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyScalar(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyIntArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyFloatArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyBoolArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyTensorList(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyScalarList(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR);
  CHECK_ERR_HAS("aclDestroyAclOpExecutor", "nullptr");
  CHECK_EQ(stat("live_arguments"), live);
}

// nnopbase's creation checks almost nothing (operators check at phase 1):
// only missing dimension arrays, a missing scalar value and a scalar dtype
// it cannot hold fail.
TEST(creation_accepts_what_nnopbase_accepts) {
  const int64_t live = stat("live_arguments");
  int64_t dims[] = {2, 3}, strides[] = {3, 1}, negative[] = {2, -1};
  float f = 1.5f;
  CHECK(aclCreateTensor(nullptr, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr) == nullptr);
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, nullptr, 1, nullptr) == nullptr);
  CHECK(aclCreateScalar(nullptr, ACL_FLOAT) == nullptr);
  CHECK(aclCreateScalar(&f, static_cast<aclDataType>(55)) == nullptr);
  CHECK_ERR_HAS("aclCreateScalar", "dataType 55");
  CHECK_EQ(stat("live_arguments"), live);

  aclTensor* oddDtype = aclCreateTensor(dims, 2, static_cast<aclDataType>(99), strides, 0, ACL_FORMAT_ND, dims, 2,
                                        nullptr);
  aclTensor* negativeDims = aclCreateTensor(negative, 2, ACL_FLOAT, strides, -4, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* noStrides = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* scalarShape = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, nullptr);
  aclIntArray* emptyInts = aclCreateIntArray(nullptr, 3);  // a null value makes an empty array
  aclTensorList* emptyList = aclCreateTensorList(nullptr, 1);
  CHECK(oddDtype && negativeDims && noStrides && scalarShape && emptyInts && emptyList);
  CHECK_EQ(stat("live_arguments"), live + 6);

  // A null stride means contiguous: a (2, 3) view of a 6-element storage.
  setDevice(0);
  {
    DevTensor storage(0, {6}), copy(0, {2, 3});
    storage.write<float>({0, 1, 2, 3, 4, 5});
    aclTensor* contiguous = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, storage.data());
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), contiguous, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
    CHECK_VALUES(copy.read<float>(), 0, 1, 2, 3, 4, 5);
    // ... and the operators reject at phase 1 what creation let through.
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), negativeDims, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_ERR_HAS("aclnnInplaceCopy", "argument 'src'", "size -1");
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), oddDtype, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_ERR_HAS("aclnnInplaceCopy", "argument 'src'");
    aclDestroyTensor(contiguous);
  }

  for (aclTensor* t : {oddDtype, negativeDims, noStrides, scalarShape}) aclDestroyTensor(t);
  aclDestroyIntArray(emptyInts);
  aclDestroyTensorList(emptyList);
  CHECK_EQ(stat("live_arguments"), live);
  // CANN deletes whatever it is given; the simulator catches a double free.
  aclTensor* once = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  CHECK_EQ(aclDestroyTensor(once), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyTensor(once), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclDestroyTensor", "not a live aclTensor");
}

// aclnnInplaceFillScalar with a scalar of each dtype reads the value right.
TEST(scalars_keep_their_dtype) {
  setDevice(0);
  DevTensor t(0, {1});
  auto fill = [&](aclDataType dtype, const void* value) {
    aclScalar* s = aclCreateScalar(const_cast<void*>(value), dtype);
    CHECK(s != nullptr);
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(t.get(), s, &ws, &e), ACLNN_SUCCESS);
    aclDestroyScalar(s);  // values are read at phase 1
    CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
    return t.read<float>()[0];
  };
  float f32 = 2.5f;
  double f64 = -2.5;
  uint16_t f16 = 0x4100, bf16 = 0x4020;  // 2.5
  int8_t i8 = -3;
  int16_t i16 = -300;
  int32_t i32 = 70000;
  int64_t i64 = int64_t{1} << 40;
  uint8_t u8 = 200;
  bool b = true;
  CHECK_EQ(fill(ACL_FLOAT, &f32), 2.5f);
  CHECK_EQ(fill(ACL_DOUBLE, &f64), -2.5f);
  CHECK_EQ(fill(ACL_FLOAT16, &f16), 2.5f);
  CHECK_EQ(fill(ACL_BF16, &bf16), 2.5f);
  CHECK_EQ(fill(ACL_INT8, &i8), -3.0f);
  CHECK_EQ(fill(ACL_INT16, &i16), -300.0f);
  CHECK_EQ(fill(ACL_INT32, &i32), 70000.0f);
  CHECK_EQ(fill(ACL_INT64, &i64), 1099511627776.0f);
  CHECK_EQ(fill(ACL_UINT8, &u8), 200.0f);
  CHECK_EQ(fill(ACL_BOOL, &b), 1.0f);
}

// ---- operators on matching devices ----------------------------------------------------

TEST(add_computes_with_broadcast) {
  setDevice(1);
  fsimResetStats();
  DevTensor self(1, {2, 3}), other(1, {3}), out(1, {2, 3});
  self.write<float>({0, 1, 2, 3, 4, 5});
  other.write<float>({10, 20, 30});
  CHECK_EQ(add(self, other, 2.0f, out), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 20, 41, 62, 23, 44, 65);
  CHECK_EQ(stat("launches", "1"), 1);
  CHECK_EQ(stat("op_launches", "aclnnAdd"), 1);

  DevTensor a(1, {3}, ACL_INT32), b(1, {3}, ACL_INT32), c(1, {3}, ACL_INT32);
  a.write<int32_t>({1, 2, 3});
  b.write<int32_t>({100, 200, 300});
  int64_t three = 3;
  std::unique_ptr<aclScalar, decltype(&aclDestroyScalar)> alpha(aclCreateScalar(&three, ACL_INT64), &aclDestroyScalar);
  CHECK_EQ(add(a, b, alpha.get(), c), ACLNN_SUCCESS);
  CHECK_VALUES(c.read<int32_t>(), 301, 602, 903);
  CHECK_EQ(add(a, b, 1.5f, c), ACL_ERROR_RT_AICORE_EXCEPTION);  // ATen refuses a float alpha for ints, when it runs
  CHECK_ERR_HAS("aclnnAdd: kernel failed", "alpha");
}

TEST(adds_and_inplace_add_compute) {
  setDevice(2);
  DevTensor self(2, {3}), out(2, {3}), other(2, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  ScalarPtr five = floatScalar(5), half = floatScalar(0.5f);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddsGetWorkspaceSize(self.get(), five.get(), half.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdds, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 3.5f, 4.5f, 5.5f);
  CHECK_EQ(aclnnInplaceAddGetWorkspaceSize(self.get(), other.get(), five.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(self.read<float>(), 6, 7, 8);
}

TEST(cast_converts) {
  setDevice(0);
  DevTensor self(0, {3}), toInt(0, {3}, ACL_INT32), toHalf(0, {3}, ACL_FLOAT16);
  self.write<float>({1.5f, -2.25f, 3.0f});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_INT32, toInt.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(toInt.read<int32_t>(), 1, -2, 3);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, toHalf.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(toHalf.read<uint16_t>(), 0x3E00, 0xC080, 0x4200);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, toInt.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "'out'", "'dtype'");
}

TEST(inplace_copy_handles_strides_offsets_and_dtypes) {
  setDevice(3);
  DevTensor storage(3, {2, 3}), dst(3, {3, 2}), ints(3, {3}, ACL_INT32), floats(3, {3});
  storage.write<float>({0, 1, 2, 3, 4, 5});
  aclTensor* transposed = storage.view({3, 2}, {1, 3}, 0);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(dst.get(), transposed, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(transposed);
  CHECK_VALUES(dst.read<float>(), 0, 3, 1, 4, 2, 5);

  aclTensor* row1 = storage.view({3}, {1}, 3);  // offset 3 elements: the second row
  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(floats.get(), row1, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(row1);
  CHECK_VALUES(floats.read<float>(), 3, 4, 5);

  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(ints.get(), floats.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(ints.read<int32_t>(), 3, 4, 5);
}

TEST(fill_and_zero_touch_only_the_view) {
  setDevice(1);
  DevTensor t(1, {6});
  t.write<float>({9, 9, 9, 9, 9, 9});
  aclTensor* everyOther = t.view({3}, {2}, 1);  // elements 1, 3, 5
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(everyOther, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceZero, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(t.read<float>(), 9, 0, 9, 0, 9, 0);
  ScalarPtr seven = floatScalar(7);
  CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(everyOther, seven.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(everyOther);
  CHECK_VALUES(t.read<float>(), 9, 7, 9, 7, 9, 7);

  DevTensor longs(1, {2}, ACL_INT64);
  CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(longs.get(), seven.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(longs.read<int64_t>(), 7, 7);
}

// aclnnFusedAdamw: an absent maxExpAvgSqsRef without amsgrad; CANN's
// refusals (amsgrad without it, a negative lr, lists of other lengths); a
// step; found_inf == 1, read when the kernel runs, writes nothing.
TEST(fused_adamw_steps_checks_and_skips_on_found_inf) {
  setDevice(2);
  DevTensor param(2, {2}), grad(2, {2}), m(2, {2}), v(2, {2}), step(2, {1}), inf(2, {1});
  param.write<float>({1, -1});
  grad.write<float>({0.5f, -0.5f});
  m.write<float>({0, 0});
  v.write<float>({0, 0});
  step.write<float>({1});
  using ListPtr = std::unique_ptr<aclTensorList, decltype(&aclDestroyTensorList)>;
  auto list = [](std::initializer_list<const DevTensor*> tensors) {
    std::vector<const aclTensor*> views;
    for (const DevTensor* t : tensors) views.push_back(t->view({static_cast<int64_t>(t->numel())}, {1}, 0));
    return ListPtr(aclCreateTensorList(views.data(), views.size()), &aclDestroyTensorList);
  };
  ListPtr params = list({&param}), grads = list({&grad}), ms = list({&m}), vs = list({&v}), steps = list({&step});
  ListPtr twoGrads = list({&grad, &grad});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  auto phase1 = [&](const aclTensorList* g, const aclTensor* foundInf, double lr, bool amsgrad) {
    return aclnnFusedAdamwGetWorkspaceSize(params.get(), g, ms.get(), vs.get(), nullptr, steps.get(), nullptr,
                                           foundInf, lr, 0.9, 0.999, 0.0, 1e-8, amsgrad, false, &ws, &e);
  };
  CHECK_EQ(phase1(grads.get(), nullptr, 0.1, true), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnFusedAdamw", "amsgrad");
  CHECK_EQ(phase1(grads.get(), nullptr, -0.1, false), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnFusedAdamw", "lr");
  CHECK_EQ(phase1(twoGrads.get(), nullptr, 0.1, false), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnFusedAdamw", "as many tensors");

  inf.write<float>({1});
  CHECK_EQ(phase1(grads.get(), inf.get(), 0.1, false), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnFusedAdamw, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(param.read<float>(), 1, -1);
  CHECK_VALUES(m.read<float>(), 0, 0);

  // Adam's first step moves each element by lr against its gradient's sign.
  inf.write<float>({0});
  CHECK_EQ(phase1(grads.get(), inf.get(), 0.1, false), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnFusedAdamw, ws, e), ACLNN_SUCCESS);
  const std::vector<float> stepped = param.read<float>();
  CHECK(std::fabs(stepped[0] - 0.9f) < 1e-5f && std::fabs(stepped[1] + 0.9f) < 1e-5f);
  CHECK_VALUES(grad.read<float>(), 0.5f, -0.5f);  // an input: not written
}

}  // namespace
