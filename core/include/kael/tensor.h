#pragma once
// Tensor: a handle to a shared TensorImpl (shape, strides, offset, dtype) over a Storage that
// lives on one device. Copies of a Tensor share the impl; views share the storage.
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kael/device.h"
#include "kael/dtype.h"
#include "kael/error.h"

namespace kael {

using Shape = std::vector<std::int64_t>;

// Most dimensions a tensor may have (PyTorch allows 64 too); deeper shapes are a ValueError, so no
// recursion over dimensions (printing, nested lists) can exhaust the stack.
inline constexpr std::int64_t kMaxRank = 64;

namespace detail {
class Backend;
}

struct AutogradMeta;  // kael/autograd.h
class Node;

// Raw bytes on one device, allocated and released through the device's plugin.
class Storage {
public:
    Storage(std::int64_t nbytes, Device device);
    // Adopts memory allocated elsewhere (zero-copy import, e.g. DLPack): release runs instead of
    // the plugin's free when the storage dies. Throws (without calling release) when no plugin
    // serves device.
    Storage(void* data, std::int64_t nbytes, Device device, std::function<void()> release);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    // Moves the bytes to device in place, so every tensor over this storage sees the move.
    void move_to(const Device& device);

    // Device address; only the device's plugin may dereference it unless the device is cpu.
    [[nodiscard]] void* data() const { return data_; }
    [[nodiscard]] std::int64_t nbytes() const { return nbytes_; }
    [[nodiscard]] const Device& device() const { return device_; }
    [[nodiscard]] const detail::Backend& backend() const { return *backend_; }
    // Counts writes into this storage (every kernel output, so every in-place op on any view):
    // autograd compares it with the version a saved tensor had, as PyTorch's version counter.
    [[nodiscard]] std::uint64_t version() const { return version_.load(); }
    void bump_version() { version_.fetch_add(1); }
    // Page-locked host memory from a device plugin (KAEL_EXTENSION_HOST_MEMORY): pin_memory().
    [[nodiscard]] bool pinned() const { return pinned_; }
    void mark_pinned() { pinned_ = true; }

private:
    void* data_ = nullptr;
    std::int64_t nbytes_ = 0;
    Device device_;
    const detail::Backend* backend_ = nullptr;
    std::function<void()> external_release_;  // set for adopted memory only
    std::atomic<std::uint64_t> version_{0};
    bool pinned_ = false;
};

struct TensorImpl {
    std::shared_ptr<Storage> storage;
    Shape shape;
    Shape strides;             // in elements
    std::int64_t offset = 0;   // in elements
    DType dtype = DType::F32;
    // Gradient state; null for tensors that never took part in autograd.
    std::shared_ptr<AutogradMeta> autograd;
    // For a view, the tensor (not itself a view) whose storage it shares; in-place writes
    // through the view rewrite that tensor's gradient history.
    std::shared_ptr<TensorImpl> view_base;
    // For a view, its base's AutogradMeta::history when the view was made (or last rebased): a
    // later in-place op on the base makes the view's own history stale (autograd rebases it).
    std::uint64_t base_history = 0;
};

class Tensor {
public:
    Tensor() = default;
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

    [[nodiscard]] bool defined() const { return impl_ != nullptr; }
    [[nodiscard]] const Shape& shape() const { return impl().shape; }
    [[nodiscard]] const Shape& strides() const { return impl().strides; }
    [[nodiscard]] std::int64_t offset() const { return impl().offset; }
    [[nodiscard]] std::int64_t dim() const { return static_cast<std::int64_t>(shape().size()); }
    [[nodiscard]] std::int64_t size(std::int64_t dim) const;
    [[nodiscard]] std::int64_t numel() const;
    [[nodiscard]] DType dtype() const { return impl().dtype; }
    [[nodiscard]] const Device& device() const { return impl().storage->device(); }
    [[nodiscard]] std::int64_t nbytes() const { return numel() * itemsize(dtype()); }
    [[nodiscard]] bool is_contiguous() const;
    [[nodiscard]] bool same_impl(const Tensor& other) const { return impl_ == other.impl_; }
    // Inline (every accessor passes here); an undefined tensor throws ValueError.
    [[nodiscard]] TensorImpl& impl() const {
        if (impl_ == nullptr) [[unlikely]] {
            throw_undefined();
        }
        return *impl_;
    }
    [[nodiscard]] const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

    // Address of the first element on any device. On a non-cpu device only the plugin may
    // dereference it.
    [[nodiscard]] void* device_data() const;
    // Host accessors: throw on a device tensor ("... call cpu() first").
    template <typename T> [[nodiscard]] T* data_ptr() const;
    void check_on_host() const;
    // Copies to the host when needed; one element only.
    template <typename T> [[nodiscard]] T item() const;
    [[nodiscard]] double item_double() const;
    // All elements in logical order, converted to T, copied to the host when needed.
    template <typename T> [[nodiscard]] std::vector<T> to_vector() const;

    // Views: share storage.
    [[nodiscard]] Tensor view(const Shape& shape) const;
    [[nodiscard]] Tensor reshape(const Shape& shape) const;  // copies when no view exists
    [[nodiscard]] Tensor flatten() const { return reshape({-1}); }
    [[nodiscard]] Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
    [[nodiscard]] Tensor T() const;
    [[nodiscard]] Tensor permute(const Shape& order) const;
    [[nodiscard]] Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t stop,
                               std::int64_t step = 1) const;
    [[nodiscard]] Tensor select(std::int64_t dim, std::int64_t index) const;
    [[nodiscard]] Tensor unsqueeze(std::int64_t dim) const;
    [[nodiscard]] Tensor squeeze(std::int64_t dim) const;
    [[nodiscard]] Tensor squeeze() const;
    [[nodiscard]] Tensor expand(const Shape& shape) const;
    [[nodiscard]] Tensor as_strided(const Shape& shape, const Shape& strides,
                                    std::int64_t offset) const;

    // Copies.
    [[nodiscard]] Tensor contiguous() const;
    [[nodiscard]] Tensor clone() const;
    [[nodiscard]] Tensor to(DType dtype) const;
    // Same device returns this same handle; otherwise a contiguous copy on the target.
    [[nodiscard]] Tensor to(const Device& device) const;
    [[nodiscard]] Tensor cuda(int index = 0) const { return to(Device("cuda", index)); }
    [[nodiscard]] Tensor cpu() const { return to(kCPU); }
    // Moves this tensor's storage to device in place: every handle to it and every view of it
    // (an optimizer's, a module's) sees the new device. The gradient, when defined, moves too.
    Tensor& move_to_(const Device& device);
    // A copy in page-locked host memory from the plugin serving device (by default cuda:0),
    // which that device copies to and from at full speed (KAEL_EXTENSION_HOST_MEMORY); the
    // tensor itself when already pinned. DeviceError for a tensor not on cpu, or where no
    // plugin serving device offers such memory.
    [[nodiscard]] Tensor pin_memory() const;
    [[nodiscard]] Tensor pin_memory(const Device& device) const;
    // Whether the storage is page-locked host memory (pin_memory()).
    [[nodiscard]] bool is_pinned() const;
    // This tensor becomes data's elements (sharing data's storage, shape and dtype) for every
    // handle to it, as PyTorch's `t.data = data`: its autograd state stays, a defined gradient
    // is converted to the new dtype. Views made before keep the old elements.
    void set_data(const Tensor& data);
    // Writes other (broadcast, converted) into this tensor's elements. other may overlap this
    // tensor (it is read first, as if copied); this tensor may not be expanded (ValueError).
    Tensor& copy_(const Tensor& other);
    Tensor& fill_(double value);
    // Fills with a one-element tensor's value, every bit of an int64 kept.
    Tensor& fill_(const Tensor& value);

    [[nodiscard]] std::string str() const;

    // Autograd (kael/autograd.h). Only leaves with a floating dtype may set requires_grad.
    [[nodiscard]] bool requires_grad() const;
    Tensor set_requires_grad(bool requires_grad) const;  // returns this tensor
    [[nodiscard]] bool is_leaf() const;
    // Accumulated gradient of a leaf; undefined before the first backward.
    [[nodiscard]] Tensor grad() const;
    void set_grad(const Tensor& grad) const;  // an undefined tensor clears it
    void zero_grad() const;                   // fills a defined gradient with zeros
    [[nodiscard]] std::shared_ptr<Node> grad_fn() const;
    // Same storage and view, no gradient history.
    [[nodiscard]] Tensor detach() const;
    // Gradients of this tensor with respect to every leaf that requires grad, added to their
    // grad(). gradient defaults to ones for a one-element tensor.
    void backward(const std::optional<Tensor>& gradient = std::nullopt,
                  bool retain_graph = false) const;

private:
    [[noreturn]] static void throw_undefined();
    std::shared_ptr<TensorImpl> impl_;
};

// Factories. Shapes with a zero dimension are valid and allocate nothing.
[[nodiscard]] Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = kCPU);
[[nodiscard]] Tensor full(const Shape& shape, double value, DType dtype = DType::F32,
                          Device device = kCPU);
// Integer fill values keep every bit (values above 2^53 included).
[[nodiscard]] Tensor full_int(const Shape& shape, std::int64_t value, DType dtype = DType::I64,
                              Device device = kCPU);
// Values start + i * step below stop. Non-finite bounds, a zero step or more elements than memory
// can hold are a ValueError or OutOfMemoryError naming arange.
[[nodiscard]] Tensor arange(double start, double stop, double step = 1,
                            DType dtype = DType::F32, Device device = kCPU);
// The same in integers, exact for every int64 bound (PyTorch's arange of ints is int64).
[[nodiscard]] Tensor arange_int(std::int64_t start, std::int64_t stop, std::int64_t step = 1,
                                DType dtype = DType::I64, Device device = kCPU);
// A tensor over memory kael did not allocate, which device's plugin must be able to address:
// strides in elements (non-negative), deleter runs once the last view of it is gone. On a throw
// (bad shape or strides, no plugin for device) deleter is not called and the caller keeps the
// memory.
[[nodiscard]] Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype,
                               Device device, std::function<void()> deleter);
[[nodiscard]] Tensor scalar_tensor(double value, DType dtype, Device device = kCPU);
// Tensors from host values; shape defaults to {values.size()}.
[[nodiscard]] Tensor tensor(const std::vector<float>& values, Shape shape = {},
                            Device device = kCPU);
[[nodiscard]] Tensor tensor(const std::vector<double>& values, Shape shape = {},
                            Device device = kCPU);
[[nodiscard]] Tensor tensor(const std::vector<std::int64_t>& values, Shape shape = {},
                            Device device = kCPU);
[[nodiscard]] Tensor tensor_bool(const std::vector<bool>& values, Shape shape = {},
                                 Device device = kCPU);

[[nodiscard]] std::string to_string(const Shape& shape);
std::ostream& operator<<(std::ostream& stream, const Tensor& tensor);

}  // namespace kael
