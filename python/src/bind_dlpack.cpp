// DLPack, zero-copy both ways: Tensor.__dlpack__ / __dlpack_device__ export a "dltensor"
// capsule that keeps the kael storage alive; kael.from_dlpack wraps another library's memory in
// a kael storage that calls the producer's deleter instead of freeing it.
#include "bind_common.h"
#include "docs_functions.h"
#include "dlpack_abi.h"
#include "kael/registry.h"

namespace kael::python {

namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// The DLPack device type comes from the serving plugin's declaration: a plugin whose memory no
// DLPack consumer could use (the emulated plugin's host memory posing as a GPU's) declares none.
DLDevice dl_device_of(const Device& device) {
    const int type = dlpack_device_type(device);
    if (type == 0) {
        std::string plugin;
        for (const DeviceInfo& info : devices()) {
            if (info.device == device) plugin = info.plugin;
        }
        throw py::type_error("DLPack export is not possible on " + device.str() + ": its plugin '" +
                             plugin + "' declares no DLPack memory type; use .cpu() first");
    }
    return {static_cast<DLDeviceType>(type), type == kDLCPU ? 0 : device.index};
}

// The kael device serving DLPack memory (type, id), or a TypeError saying none does.
Device device_of_dl(int type, int id) {
    if (type == kDLCUDAHost) type = kDLCPU;  // pinned host memory reads as host memory
    if (std::optional<Device> device = device_for_dlpack(type, type == kDLCPU ? 0 : id)) {
        return *device;
    }
    throw py::type_error("kael.from_dlpack: no loaded plugin serves memory of DLPack device "
                         "type " + std::to_string(type) + " (see kael-info for each plugin's "
                         "dlpack_device_type)");
}

DLDataType dl_dtype_of(DType dtype) {
    switch (dtype) {
        case DType::F32: return {kDLFloat, 32, 1};
        case DType::F64: return {kDLFloat, 64, 1};
        case DType::I64: return {kDLInt, 64, 1};
        case DType::BF16: return {kDLBfloat, 16, 1};
        case DType::F16: return {kDLFloat, 16, 1};
        case DType::I32: return {kDLInt, 32, 1};
        case DType::I16: return {kDLInt, 16, 1};
        case DType::I8: return {kDLInt, 8, 1};
        case DType::U8: return {kDLUInt, 8, 1};
        default: return {kDLBool, 8, 1};
    }
}

DType dtype_of_dl(const DLDataType& type) {
    if (type.lanes == 1) {
        if (type.code == kDLFloat && type.bits == 32) return DType::F32;
        if (type.code == kDLFloat && type.bits == 64) return DType::F64;
        if (type.code == kDLInt && type.bits == 64) return DType::I64;
        if (type.code == kDLInt && type.bits == 32) return DType::I32;
        if (type.code == kDLInt && type.bits == 16) return DType::I16;
        if (type.code == kDLInt && type.bits == 8) return DType::I8;
        if (type.code == kDLUInt && type.bits == 8) return DType::U8;
        if (type.code == kDLBool && type.bits == 8) return DType::Bool;
        if (type.code == kDLBfloat && type.bits == 16) return DType::BF16;
        if (type.code == kDLFloat && type.bits == 16) return DType::F16;
    }
    throw py::type_error("kael has no dtype for DLPack type (code " + std::to_string(type.code) +
                         ", bits " + std::to_string(type.bits) + ", lanes " +
                         std::to_string(type.lanes) + "); kael dtypes are float32, float64, "
                         "bfloat16, float16, int64, int32, int16, int8, uint8 and bool: convert on the producer's side "
                         "first");
}

// Owns what an exported DLManagedTensor points into; freed by the consumer through deleter.
struct ExportContext {
    Tensor tensor;  // keeps the storage alive
    Shape shape;
    Shape strides;
    DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); }

// Runs when a capsule dies: a consumer that took the tensor renamed it and owns it now.
void destroy_capsule(PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, kUsedCapsuleName)) return;
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);  // may run while an exception is in flight
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    if (managed != nullptr) {
        managed->deleter(managed);
    } else {
        PyErr_WriteUnraisable(capsule);
    }
    PyErr_Restore(type, value, traceback);
}

py::capsule export_tensor(const Tensor& tensor, py::handle stream, const py::kwargs& options) {
    const DLDevice device = dl_device_of(tensor.device());
    const bool copy = options.contains("copy") && !options["copy"].is_none() &&
                      options["copy"].cast<bool>();
    if (options.contains("dl_device") && !options["dl_device"].is_none()) {
        const auto wanted = options["dl_device"].cast<std::pair<int, int>>();
        if (wanted.first != device.device_type || wanted.second != device.device_id) {
            throw py::buffer_error("__dlpack__: exporting to another device is not supported");
        }
    }
    // kael's device work is ordered on the device's legacy default stream; waiting for it
    // makes the data ready for whatever stream the consumer uses (-1: consumer opts out).
    const bool opted_out = !stream.is_none() && stream.cast<std::int64_t>() == -1;
    if (!tensor.device().is_cpu() && !opted_out) synchronize(tensor.device());

    auto context = std::make_unique<ExportContext>();
    context->tensor = copy ? tensor.detach().clone() : tensor.detach();
    context->shape = context->tensor.shape();
    context->strides = context->tensor.strides();
    DLTensor& view = context->managed.dl_tensor;
    view.data = context->tensor.device_data();
    view.device = device;
    view.ndim = static_cast<std::int32_t>(context->shape.size());
    view.dtype = dl_dtype_of(tensor.dtype());
    view.shape = context->shape.data();
    view.strides = context->strides.data();
    view.byte_offset = 0;  // data points at the first element, as PyTorch exports it
    context->managed.manager_ctx = context.get();
    context->managed.deleter = &delete_export;
    PyObject* capsule = PyCapsule_New(&context->managed, kCapsuleName, &destroy_capsule);
    if (capsule == nullptr) throw py::error_already_set();
    context.release();  // owned by the capsule (or its consumer) from here
    return py::reinterpret_steal<py::capsule>(capsule);
}

// Hands the memory back to its producer; producers' deleters may need the GIL (numpy's does).
void release_import(DLManagedTensor* managed) {
    if (managed->deleter == nullptr || !Py_IsInitialized()) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    managed->deleter(managed);
    PyGILState_Release(state);
}

Tensor wrap_import(DLManagedTensor* managed) {
    const DLTensor& view = managed->dl_tensor;
    const Device device = device_of_dl(view.device.device_type, view.device.device_id);
    const DType dtype = dtype_of_dl(view.dtype);
    const Shape shape(view.shape, view.shape + view.ndim);
    Shape strides(shape.size(), 1);
    if (view.strides != nullptr) {
        strides.assign(view.strides, view.strides + view.ndim);
    } else {
        for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    }
    void* data = static_cast<std::byte*>(view.data) + view.byte_offset;
    return from_blob(data, shape, strides, dtype, device,
                     [managed]() { release_import(managed); });
}

Tensor import_object(const py::object& source) {
    py::object capsule = source;
    if (!PyCapsule_CheckExact(source.ptr())) {
        if (!py::hasattr(source, "__dlpack__")) {
            throw py::type_error("kael.from_dlpack: expected an object with __dlpack__ or a "
                                 "'dltensor' capsule, got " +
                                 std::string(py::str(py::type::of(source).attr("__name__"))));
        }
        auto device = std::make_pair(static_cast<int>(kDLCPU), 0);
        if (py::hasattr(source, "__dlpack_device__")) {
            device = source.attr("__dlpack_device__")().cast<std::pair<int, int>>();
        }
        const Device kael_device = device_of_dl(device.first, device.second);
        require_device(kael_device);
        if (device.first == kDLCUDA) {
            // Stream 1 is CUDA's legacy default stream, the one kael's device work runs on.
            capsule = source.attr("__dlpack__")(py::arg("stream") = 1);
        } else {
            capsule = source.attr("__dlpack__")();
        }
    }
    auto* managed =
        static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
    if (managed == nullptr) throw py::error_already_set();  // consumed before, or not DLPack
    PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);   // kael owns the tensor from here
    try {
        return wrap_import(managed);
    } catch (...) {
        release_import(managed);
        throw;
    }
}

}  // namespace

void bind_dlpack(py::module_& module) {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(module.attr("Tensor"));
    cls.def("__dlpack__", &export_tensor, py::arg("stream") = py::none(),
            "A DLPack capsule sharing this tensor's memory; also takes the array API's "
            "max_version, dl_device and copy keywords")
        .def("__dlpack_device__", [](const Tensor& t) {
            const DLDevice device = dl_device_of(t.device());
            return std::make_pair(static_cast<int>(device.device_type), device.device_id);
        });
    module.def("from_dlpack", &import_object, py::arg("source"),
               docs::by_name("from_dlpack"));
}

}  // namespace kael::python
