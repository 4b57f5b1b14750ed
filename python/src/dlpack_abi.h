#pragma once
// The DLPack v0.8 ABI (https://github.com/dmlc/dlpack, include/dlpack/dlpack.h), declared here
// because Debian 12 ships no dlpack.h. Layouts must match the upstream header exactly: these
// structs cross library boundaries inside "dltensor" capsules (numpy, PyTorch, CuPy, JAX).
#include <cstddef>
#include <cstdint>

extern "C" {

enum DLDeviceType : std::int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,  // pinned host memory: host-addressable
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
};

struct DLDevice {
    DLDeviceType device_type;
    std::int32_t device_id;
};

enum DLDataTypeCode : std::uint8_t {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
};

struct DLDataType {
    std::uint8_t code;   // a DLDataTypeCode
    std::uint8_t bits;
    std::uint16_t lanes;
};

struct DLTensor {
    void* data;
    DLDevice device;
    std::int32_t ndim;
    DLDataType dtype;
    std::int64_t* shape;
    std::int64_t* strides;  // in elements; null means compact row-major
    std::uint64_t byte_offset;
};

struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);
};

}  // extern "C"

// The upstream layout on LP64 platforms (x86-64, aarch64).
static_assert(sizeof(DLDevice) == 8);
static_assert(sizeof(DLDataType) == 4);
static_assert(offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16);
static_assert(offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24);
static_assert(offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40);
static_assert(sizeof(DLTensor) == 48);
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 && sizeof(DLManagedTensor) == 64);
