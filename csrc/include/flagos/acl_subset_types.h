// The types, enum values and status codes of the CANN subset torch_fl uses,
// with CANN's names and values (the values are part of the ABI). Included by
// acl_api.h when building on the simulator; with FLAGOS_WITH_CANN, CANN's own
// headers define all of this. CI compares every value with CANN's headers
// (tests/cann).
#pragma once

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
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_RT_FAILURE = 500003;

// The runtime's codes (CANN: error_codes/rt_error_codes.h, as macros).
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
static const int ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_NO_DEVICE = 207004;
static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
static const int ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
// What a synchronize reports for a kernel that failed on the device.
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;

static const int ACLNN_SUCCESS = 0;
static const int ACLNN_ERR_PARAM_NULLPTR = 161001;
static const int ACLNN_ERR_PARAM_INVALID = 161002;
static const int ACLNN_ERR_RUNTIME_ERROR = 361001;
static const int ACLNN_ERR_INNER = 561000;
static const int ACLNN_ERR_INNER_NULLPTR = 561103;

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
  ACL_COMPLEX32 = 33,
  // 8-bit floats: CANN 8.x declares them, but its operators take them on
  // Ascend 950 only (aclnnCast's and aclnnInplaceCopy's docs), not on the
  // simulated 910B3.
  ACL_HIFLOAT8 = 34,
  ACL_FLOAT8_E5M2 = 35,
  ACL_FLOAT8_E4M3FN = 36,
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
  ACL_MEMCPY_DEFAULT = 4,                 // the direction follows from the pointers
  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,   // host to device through a staging buffer
  ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,  // declared, but aclrtMemcpy* reject it
  ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7,  // declared, but aclrtMemcpy* reject it
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
  ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
  ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
} aclrtMemMallocPolicy;

// The memory kinds aclrtGetMemInfo reports on.
typedef enum aclrtMemAttr {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9,
  ACL_HBM_MEM_HUGE1G = 10,
  ACL_HBM_MEM_P2P_HUGE1G = 11,
  ACL_MEM_NORMAL = 12,
  ACL_MEM_HUGE = 13,
  ACL_MEM_HUGE1G = 14,
  ACL_MEM_P2P_NORMAL = 15,
  ACL_MEM_P2P_HUGE = 16,
  ACL_MEM_P2P_HUGE1G = 17,
} aclrtMemAttr;

// Device attributes for aclrtGetDeviceInfo (CANN's deprecated aliases left out).
typedef enum {
  ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
  ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
  ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
  ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
  ACL_DEV_ATTR_WARP_SIZE = 202,
  ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
  ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
  ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
  ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
  ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
  ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
  ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
  ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
  ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
  ACL_DEV_ATTR_SMP_ID = 401,
  ACL_DEV_ATTR_PHY_CHIP_ID = 402,
  ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
  ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
  ACL_DEV_ATTR_SUPER_POD_ID = 405,
  ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
  ACL_DEV_ATTR_MAINBOARD_ID = 407,
  ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
  ACL_DEV_ATTR_IS_VIRTUAL = 501,
  ACL_DEV_ATTR_NPU_ARCH = 601,
} aclrtDevAttr;

typedef enum aclrtEventStatus {
  ACL_EVENT_STATUS_COMPLETE = 0,
  ACL_EVENT_STATUS_NOT_READY = 1,
  ACL_EVENT_STATUS_RESERVED = 2,
} aclrtEventStatus;

typedef enum aclrtStreamStatus {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF,
} aclrtStreamStatus;

// Flags of aclrtCreateEventWithFlag (CANN: macros in acl_rt.h).
static const uint32_t ACL_EVENT_SYNC = 0x00000001U;
static const uint32_t ACL_EVENT_CAPTURE_STREAM_PROGRESS = 0x00000002U;
static const uint32_t ACL_EVENT_TIME_LINE = 0x00000008U;
static const uint32_t ACL_EVENT_DEVICE_USE_ONLY = 0x00000010U;
static const uint32_t ACL_EVENT_EXTERNAL = 0x00000020U;
static const uint32_t ACL_EVENT_IPC = 0x00000040U;

#ifdef __cplusplus
}  // extern "C"
#endif
