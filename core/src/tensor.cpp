#include "kael/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "autograd/record.h"
#include "tensor_internal.h"
#include "kael/tensor_iterator.h"
#include "in_place.h"
#include "kael/device_graph.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

using detail::contiguous_strides;
using detail::product;
using detail::recorded;
using detail::shape_has_zero;
using detail::with_view;
using detail::wrap_dim;

namespace {

Tensor from_host(const void* values, std::int64_t count, Shape shape, DType dtype,
                 const Device& device) {
    if (shape.empty()) {
        shape = {count};
    }
    if (product(shape) != count) {
        throw ValueError("tensor: " + std::to_string(count) + " values do not fill shape " +
                         to_string(shape));
    }
    Tensor host = empty(shape, dtype, kCPU);
    if (count > 0) {
        std::memcpy(host.device_data(), values, static_cast<std::size_t>(host.nbytes()));
    }
    return host.to(device);
}

}  // namespace

std::string to_string(const Shape& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
    }
    return text + "]";
}

void Tensor::throw_undefined() { throw ValueError("use of an undefined tensor"); }

std::int64_t Tensor::size(std::int64_t d) const {
    return shape()[detail::wrap_existing_dim(d, dim(), "size")];
}
std::int64_t Tensor::numel() const { return product(shape()); }

bool Tensor::is_contiguous() const {
    // An empty tensor is contiguous whatever its strides (as in PyTorch); checking first also
    // keeps the running product below from overflowing on its huge other dims.
    if (detail::shape_has_zero(shape())) {
        return true;
    }
    std::int64_t expected = 1;
    for (std::size_t i = shape().size(); i-- > 0;) {
        if (shape()[i] == 1) {
            continue;
        }
        if (strides()[i] != expected) {
            return false;
        }
        expected *= shape()[i];
    }
    return true;
}

void* Tensor::device_data() const {
    auto* base = static_cast<std::byte*>(impl().storage->data());
    return base == nullptr ? nullptr : base + offset() * itemsize(dtype());
}

void Tensor::check_on_host() const {
    if (!device().is_cpu()) {
        throw DeviceError(
            "this operation reads tensor memory directly, which is not possible on device " +
            device().str() + "; call cpu() first");
    }
}

template <typename T> T* Tensor::data_ptr() const {
    check_on_host();
    if (dtype() != dtype_of_v<T>) {
        throw TypeError("data_ptr: tensor has dtype " + to_string(dtype()) + ", asked for " +
                        to_string(dtype_of_v<T>));
    }
    return static_cast<T*>(device_data());
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template std::int64_t* Tensor::data_ptr<std::int64_t>() const;
template bool* Tensor::data_ptr<bool>() const;

template <typename T> std::vector<T> Tensor::to_vector() const {
    const Tensor host = to(kCPU).to(dtype_of_v<T>).contiguous();
    std::vector<T> values(static_cast<std::size_t>(host.numel()));
    if constexpr (std::is_same_v<T, bool>) {
        const auto* bytes = static_cast<const std::uint8_t*>(host.device_data());
        for (std::size_t i = 0; i < values.size(); ++i) {
            values[i] = bytes[i] != 0;
        }
    } else if (!values.empty()) {
        std::memcpy(values.data(), host.device_data(), values.size() * sizeof(T));
    }
    return values;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

template <typename T> T Tensor::item() const {
    if (numel() != 1) {
        throw ValueError("item: expected a tensor with one element, got shape " +
                         to_string(shape()));
    }
    return to_vector<T>().front();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template std::int64_t Tensor::item<std::int64_t>() const;
template bool Tensor::item<bool>() const;

double Tensor::item_double() const { return item<double>(); }

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
    Tensor out = empty(shape(), dtype(), device());
    detail::convert(out, *this);
    return recorded(*this, out, "CloneBackward", [](const Tensor& grad) { return grad; });
}

Tensor Tensor::to(DType target) const {
    if (target == dtype()) {
        return *this;
    }
    Tensor out = empty(shape(), target, device());
    detail::convert(out, *this);
    return recorded(*this, out, "ToDTypeBackward",
                    [source = dtype()](const Tensor& grad) { return grad.to(source); });
}

Tensor Tensor::to(const Device& target) const {
    if (target == device()) {
        return *this;
    }
    Tensor out = empty(shape(), dtype(), target);
    {
        const NoGradGuard no_grad;
        const Tensor source = contiguous();
        detail::transfer(out.device_data(), target, source.device_data(), source.device(),
                         nbytes());
    }
    return recorded(*this, out, "ToDeviceBackward",
                    [source = device()](const Tensor& grad) { return grad.to(source); });
}

Tensor& Tensor::move_to_(const Device& target) {
    if (target == device()) {
        return *this;
    }
    impl().storage->move_to(target);
    const Tensor grad = this->grad();
    if (grad.defined() && grad.device() != target) {
        set_grad(grad.to(target));
    }
    return *this;
}

void Tensor::set_data(const Tensor& data) {
    if (!data.defined()) {
        throw ValueError("set_data: the new data is an undefined tensor");
    }
    if (&data.impl() == &impl()) {
        return;
    }
    const Tensor grad = this->grad();
    TensorImpl& target = impl();
    target.storage = data.impl().storage;
    target.shape = data.shape();
    target.strides = data.strides();
    target.offset = data.offset();
    target.dtype = data.dtype();
    if (grad.defined() && (grad.dtype() != data.dtype() || grad.shape() != data.shape())) {
        const NoGradGuard no_grad;
        set_grad(grad.shape() == data.shape() ? grad.to(data.dtype()) : Tensor());
    }
}

Tensor& Tensor::copy_(const Tensor& other) { return detail::write_into(*this, other, "copy_"); }

Tensor& Tensor::fill_(double value) {
    if (!is_floating(dtype())) {
        static_cast<void>(detail::integer_of(value, dtype(), "fill_"));  // names fill_
    }
    return detail::write_into(*this, scalar_tensor(value, dtype(), device()), "fill_");
}

Tensor& Tensor::fill_(const Tensor& value) {
    if (value.numel() != 1) {
        throw ValueError("fill_: expected a value with one element, got shape " +
                         to_string(value.shape()));
    }
    return detail::write_into(*this, value.reshape({}), "fill_");
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
    detail::check_shape(shape, "empty");
    auto impl = std::make_shared<TensorImpl>();
    std::int64_t bytes = shape_has_zero(shape) ? 0 : itemsize(dtype);
    for (const std::int64_t size : shape) {
        if (__builtin_mul_overflow(bytes, size, &bytes)) {
            throw OutOfMemoryError("empty: shape " + to_string(shape) + " of " + to_string(dtype) +
                                   " needs more than 2^63 bytes");
        }
    }
    impl->storage = std::make_shared<Storage>(bytes, device);
    impl->shape = shape;
    impl->strides = contiguous_strides(shape);
    impl->dtype = dtype;
    return Tensor(std::move(impl));
}

Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype,
                 Device device, std::function<void()> deleter) {
    if (shape.size() != strides.size()) {
        throw ValueError("from_blob: shape " + to_string(shape) + " and strides " +
                         to_string(strides) + " differ in rank");
    }
    detail::check_rank(shape, "from_blob");
    for (const std::int64_t size : shape) {
        if (size >= 0) {
            continue;
        }
        throw ValueError("from_blob: negative size in shape " + to_string(shape));
    }
    static_cast<void>(detail::checked_numel(shape, "from_blob"));
    // Elements spanned by the view, so the storage knows its extent.
    std::int64_t extent = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0 || strides[i] < 0) {
            throw ValueError("from_blob: negative size or stride (shape " + to_string(shape) +
                             ", strides " + to_string(strides) + ")");
        }
        extent += shape[i] == 0 ? 0 : (shape[i] - 1) * strides[i];
    }
    if (product(shape) == 0) {
        extent = 0;
    }
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::make_shared<Storage>(data, extent * itemsize(dtype), device,
                                              std::move(deleter));
    impl->shape = shape;
    impl->strides = strides;
    impl->dtype = dtype;
    return Tensor(std::move(impl));
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
    Tensor out = empty(shape, dtype, device);
    if (is_floating(dtype)) {
        detail::fill(out, detail::real_params(value));
    } else {
        detail::fill(out, detail::integer_params(detail::integer_of(value, dtype, "full")));
    }
    return out;
}

Tensor full_int(const Shape& shape, std::int64_t value, DType dtype, Device device) {
    Tensor out = empty(shape, dtype, device);
    detail::fill(out, is_floating(dtype) ? detail::real_params(static_cast<double>(value))
                                         : detail::integer_params(value));
    return out;
}

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1, dtype, device); }

Tensor scalar_tensor(double value, DType dtype, Device device) {
    return full({}, value, dtype, device);
}

namespace {

std::string number(double value) {
    std::ostringstream text;
    text.precision(17);
    text << value;
    return text.str();
}

// A host tensor of count elements for arange, whose allocation failures name arange.
Tensor arange_buffer(std::int64_t count, DType dtype) {
    try {
        return empty({count}, dtype, kCPU);
    } catch (const OutOfMemoryError& error) {
        throw OutOfMemoryError("arange: " + std::to_string(count) + " elements of " +
                               to_string(dtype) + " do not fit in memory (" + error.what() + ")");
    }
}

// arange's values made on the device itself (index from a cumulative sum of ones, then
// start + index * step in the same arithmetic as the host loops), for a device graph recording,
// where the host buffer could not be copied in.
Tensor arange_recorded(std::int64_t count, double start, double step, DType wide, DType dtype,
                       const Device& device) {
    const NoGradGuard no_grad;
    const Tensor index = cumsum(ones({count}, wide, device), 0) - scalar_tensor(1, wide, device);
    const Tensor values = index * scalar_tensor(step, wide, device) +
                          scalar_tensor(start, wide, device);
    return values.to(dtype);
}

}  // namespace

Tensor arange(double start, double stop, double step, DType dtype, Device device) {
    if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
        throw ValueError("arange: start, stop and step must be finite, got " + number(start) +
                         ", " + number(stop) + ", " + number(step));
    }
    if (step == 0) {
        throw ValueError("arange: step must not be zero");
    }
    const double span = std::ceil((stop - start) / step);
    // 2^62 elements of one byte already exceed any memory; beyond it the count overflows.
    if (!(span < 0x1p62)) {
        throw ValueError("arange: the range [" + number(start) + ", " + number(stop) +
                         ") with step " + number(step) + " has too many elements");
    }
    const auto count = static_cast<std::int64_t>(std::max(0.0, span));
    if (recording_device_graph() && count > 0) {
        return arange_recorded(count, start, step, DType::F64, dtype, device);
    }
    Tensor values = arange_buffer(count, DType::F64);
    auto* data = values.data_ptr<double>();
    for (std::int64_t i = 0; i < count; ++i) {
        data[i] = start + static_cast<double>(i) * step;
    }
    return values.to(dtype).to(device);
}

Tensor arange_int(std::int64_t start, std::int64_t stop, std::int64_t step, DType dtype,
                  Device device) {
    if (step == 0) {
        throw ValueError("arange: step must not be zero");
    }
    // Unsigned 64-bit distances hold every int64 span exactly; elements wrap back into range.
    const bool up = step > 0;
    const std::uint64_t span = up ? (stop > start ? static_cast<std::uint64_t>(stop) -
                                                        static_cast<std::uint64_t>(start)
                                                  : 0)
                                  : (start > stop ? static_cast<std::uint64_t>(start) -
                                                        static_cast<std::uint64_t>(stop)
                                                  : 0);
    const std::uint64_t stride = up ? static_cast<std::uint64_t>(step)
                                    : 0 - static_cast<std::uint64_t>(step);
    const std::uint64_t count = span / stride + (span % stride != 0 ? 1 : 0);
    if (count >= (std::uint64_t{1} << 62)) {
        throw ValueError("arange: the range [" + std::to_string(start) + ", " +
                         std::to_string(stop) + ") with step " + std::to_string(step) +
                         " has too many elements");
    }
    if (recording_device_graph() && count > 0 && count < (std::uint64_t{1} << 53) &&
        std::abs(start) < (std::int64_t{1} << 53) && std::abs(step) < (std::int64_t{1} << 53)) {
        return arange_recorded(static_cast<std::int64_t>(count), static_cast<double>(start),
                               static_cast<double>(step), DType::I64, dtype, device);
    }
    Tensor values = arange_buffer(static_cast<std::int64_t>(count), DType::I64);
    auto* data = values.data_ptr<std::int64_t>();
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t offset = i * stride;
        data[i] = static_cast<std::int64_t>(up ? static_cast<std::uint64_t>(start) + offset
                                               : static_cast<std::uint64_t>(start) - offset);
    }
    return values.to(dtype).to(device);
}

Tensor tensor(const std::vector<float>& values, Shape shape, Device device) {
    return from_host(values.data(), static_cast<std::int64_t>(values.size()), std::move(shape),
                     DType::F32, device);
}
Tensor tensor(const std::vector<double>& values, Shape shape, Device device) {
    return from_host(values.data(), static_cast<std::int64_t>(values.size()), std::move(shape),
                     DType::F64, device);
}
Tensor tensor(const std::vector<std::int64_t>& values, Shape shape, Device device) {
    return from_host(values.data(), static_cast<std::int64_t>(values.size()), std::move(shape),
                     DType::I64, device);
}
Tensor tensor_bool(const std::vector<bool>& values, Shape shape, Device device) {
    std::vector<std::uint8_t> bytes(values.begin(), values.end());
    return from_host(bytes.data(), static_cast<std::int64_t>(bytes.size()), std::move(shape),
                     DType::Bool, device);
}

}  // namespace kael
