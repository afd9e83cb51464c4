// The part of CANN's C API that torch_fl uses: the ACL runtime (libascendcl),
// the ACLNN argument API (libnnopbase) and the status codes of both.
//
// Project code reaches Ascend only through this header. Without
// FLAGOS_WITH_CANN it declares the subset itself, with CANN's names,
// prototypes and enum values, and the simulator (csrc/sim) implements it.
// With FLAGOS_WITH_CANN it includes CANN's own headers instead, so the same
// backend sources build against a real CANN install.
#pragma once

#ifdef FLAGOS_WITH_CANN
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#else

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- status codes -------------------------------------------------------
typedef int aclError;
typedef int32_t aclnnStatus;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_FAILURE = 500003;

static const int ACLNN_SUCCESS = 0;
static const int ACLNN_ERR_PARAM_NULLPTR = 161001;
static const int ACLNN_ERR_PARAM_INVALID = 161002;
static const int ACLNN_ERR_RUNTIME_ERROR = 361001;
static const int ACLNN_ERR_INNER = 561000;

// ---- handles ------------------------------------------------------------
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef void* aclrtContext;

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;
typedef struct aclOpExecutor aclOpExecutor;

// ---- enums (their values are part of the ABI) ---------------------------
typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27,
} aclDataType;

typedef enum {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NCL = 47,
} aclFormat;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

// ---- runtime (libascendcl) ----------------------------------------------
aclError aclInit(const char* configPath);
aclError aclFinalize(void);
const char* aclGetRecentErrMsg(void);

aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtSynchronizeDevice(void);

aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);

aclError aclrtCreateEvent(aclrtEvent* event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId,
                                  int32_t peerDeviceId);
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);

// ---- operator arguments and executors (libnnopbase) ---------------------
// Strides and offset are in elements; tensorData is the device address of
// the storage start, not of the first element.
aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum,
                           aclDataType dataType, const int64_t* stride, int64_t offset,
                           aclFormat format, const int64_t* storageDims,
                           uint64_t storageDimsNum, void* tensorData);
aclScalar* aclCreateScalar(void* value, aclDataType dataType);
aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size);
aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size);
aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size);
aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size);
aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size);

aclnnStatus aclDestroyTensor(const aclTensor* tensor);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);
aclnnStatus aclDestroyIntArray(const aclIntArray* array);
aclnnStatus aclDestroyFloatArray(const aclFloatArray* array);
aclnnStatus aclDestroyBoolArray(const aclBoolArray* array);
aclnnStatus aclDestroyTensorList(const aclTensorList* array);
aclnnStatus aclDestroyScalarList(const aclScalarList* array);

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);
// index counts the executor's input (or output) tensors in argument order.
aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index,
                                  aclTensor* tensor, void* addr);
aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index,
                                   aclTensor* tensor, void* addr);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // FLAGOS_WITH_CANN
