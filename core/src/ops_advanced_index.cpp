// Advanced indexing (index, index_put_), numpy's and PyTorch's rules. Every selected element's
// row-major offset into self is computed with tensor ops on self's device (the sum of
// index * stride over the indexed dimensions, plus arange * stride for the others); reads then
// gather from, and writes scatter into, a flat view. Only bounds and counts come to the host.
#include <string>

#include "autograd/record.h"
#include "dims.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "in_place.h"
#include "kernel_calls.h"
#include "memory_overlap.h"
#include "ops_index_internal.h"

namespace kael {

namespace {

// One index tensor of the list: the dimensions of self it consumes and, for every element it
// selects, that element's offset (row-major, in elements) along those dimensions.
struct AdvancedIndex {
    std::int64_t first_dim = 0;
    std::int64_t dims = 0;
    Tensor offsets;
};

struct IndexPlan {
    Shape shape;     // the result's shape
    Tensor offsets;  // i64 of that shape: each result element's row-major offset into self
};

Tensor integer_scalar(std::int64_t value, const Device& device) {
    return full_int({}, value, DType::I64, device);
}

std::int64_t product(const Shape& shape, std::size_t from = 0) {
    std::int64_t total = 1;
    for (std::size_t d = from; d < shape.size(); ++d) total *= shape[d];
    return total;
}

// Row-major positions of mask's true elements, i64 [count], found on the device: each true
// element's running count is its slot in the result; false elements all go to a spare slot.
Tensor true_positions(const Tensor& mask) {
    const NoGradGuard no_grad;
    const Device device = mask.device();
    const Tensor flat = mask.reshape({-1});
    const std::int64_t count = sum(flat).item<std::int64_t>();
    const Tensor slot = where(flat, cumsum(flat, 0) - 1.0, integer_scalar(count, device));
    const Tensor position = arange_int(0, flat.numel(), 1, DType::I64, device);
    Tensor positions = zeros({count + 1}, DType::I64, device);
    detail::scatter_add_unchecked(positions, 0, slot,
                                  where(flat, position, integer_scalar(0, device)));
    return positions.slice(0, 0, count);
}

AdvancedIndex advanced_index(const Tensor& self, const Tensor& entry, std::int64_t dim,
                             std::int64_t position, const char* op) {
    // As PyTorch 2: i64 and i32 positions, bool masks, and u8 read as a (deprecated) mask.
    const DType dtype = entry.dtype();
    if (dtype != DType::I64 && dtype != DType::I32 && dtype != DType::Bool && dtype != DType::U8) {
        throw IndexError(std::string(op) +
                         ": tensors used as indices must be i64, i32, u8 or bool, got " +
                         to_string(dtype) + " at index " + std::to_string(position));
    }
    if (entry.device() != self.device() && entry.device() != kCPU) {
        detail::check_same_device({self, entry}, op);
    }
    const NoGradGuard no_grad;
    const Tensor index = entry.to(self.device())
                             .to(dtype == DType::U8 ? DType::Bool
                                 : dtype == DType::I32 ? DType::I64
                                                       : dtype);
    const Shape& shape = self.shape();
    if (index.dtype() == DType::Bool) {
        const auto first = shape.begin() + dim;
        if (!std::equal(index.shape().begin(), index.shape().end(), first)) {
            throw IndexError(std::string(op) + ": the shape of the mask " +
                             to_string(index.shape()) + " at index " + std::to_string(position) +
                             " does not match the shape of the indexed tensor " + to_string(shape) +
                             " at dimension " + std::to_string(dim));
        }
        // A mask over dims [dim, dim + k) steps by the stride of its last dimension.
        const std::size_t end = static_cast<std::size_t>(dim + index.dim());
        const std::int64_t step = product(shape, end);
        return {dim, index.dim(), mul(true_positions(index), integer_scalar(step, index.device()))};
    }
    const std::int64_t size = shape[static_cast<std::size_t>(dim)];
    detail::check_index_range(index, size, dim, true, op);
    // Wrapped on the device: the check above may not have run yet, so no host value is known.
    const Tensor wrapped = where(lt(index, integer_scalar(0, index.device())),
                                 add(index, integer_scalar(size, index.device())), index);
    const std::int64_t stride = product(shape, static_cast<std::size_t>(dim) + 1);
    return {dim, 1, mul(wrapped, integer_scalar(stride, index.device()))};
}

Shape broadcast_index_shapes(const std::vector<AdvancedIndex>& advanced, const char* op) {
    Shape shape;
    try {
        for (const AdvancedIndex& entry : advanced) {
            shape = broadcast_shapes(shape, entry.offsets.shape(), op);
        }
    } catch (const ValueError&) {
        std::string shapes;
        for (const AdvancedIndex& entry : advanced) {
            shapes += (shapes.empty() ? "" : ", ") + to_string(entry.offsets.shape());
        }
        throw IndexError(std::string(op) +
                         ": shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " +
                         shapes);
    }
    return shape;
}

// The index tensors of the list, in order, each with the dimensions of self it consumes.
std::vector<AdvancedIndex> advanced_indices(const Tensor& self, const std::vector<Tensor>& indices,
                                            const char* op) {
    std::vector<AdvancedIndex> advanced;
    std::int64_t dim = 0;
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const Tensor& entry = indices[i];
        const bool mask = entry.defined() && entry.dtype() == DType::Bool;
        const std::int64_t dims = mask ? entry.dim() : 1;
        if (dim + dims > self.dim()) {
            throw IndexError(std::string(op) + ": too many indices for a tensor of dimension " +
                             std::to_string(self.dim()));
        }
        if (entry.defined()) {
            advanced.push_back(advanced_index(self, entry, dim, static_cast<std::int64_t>(i), op));
        }
        dim += dims;
    }
    return advanced;
}

IndexPlan plan_index(const Tensor& self, const std::vector<Tensor>& indices, const char* op) {
    const Device device = self.device();
    const std::vector<AdvancedIndex> advanced = advanced_indices(self, indices, op);
    std::vector<bool> consumed(static_cast<std::size_t>(self.dim()), false);
    for (const AdvancedIndex& entry : advanced) {
        for (std::int64_t d = entry.first_dim; d < entry.first_dim + entry.dims; ++d) {
            consumed[static_cast<std::size_t>(d)] = true;
        }
    }
    const Shape selected = broadcast_index_shapes(advanced, op);
    // Adjacent index tensors put their dimensions where they stand; separated ones, first.
    bool adjacent = true;
    for (std::size_t i = 1; i < advanced.size(); ++i) {
        adjacent =
            adjacent && advanced[i].first_dim == advanced[i - 1].first_dim + advanced[i - 1].dims;
    }
    std::vector<std::int64_t> kept;  // self's dimensions that no index tensor consumes
    std::int64_t before = 0;         // how many of them come before the selected dimensions
    for (std::int64_t d = 0; d < self.dim(); ++d) {
        if (consumed[static_cast<std::size_t>(d)]) continue;
        kept.push_back(d);
        if (adjacent && !advanced.empty() && d < advanced.front().first_dim) ++before;
    }
    IndexPlan plan;
    plan.shape.assign(kept.size() + selected.size(), 1);
    const auto place = [&](std::size_t position, std::int64_t size) {
        Shape shape(plan.shape.size(), 1);
        shape[position] = size;
        return shape;
    };
    Shape selected_view(plan.shape.size(), 1);
    std::copy(selected.begin(), selected.end(), selected_view.begin() + before);
    Tensor offsets = integer_scalar(0, device);
    const NoGradGuard no_grad;
    for (const AdvancedIndex& entry : advanced) offsets = offsets + entry.offsets;
    offsets = offsets.expand(selected).reshape(selected_view);
    std::copy(selected.begin(), selected.end(), plan.shape.begin() + before);
    for (std::size_t k = 0; k < kept.size(); ++k) {
        const std::size_t position = k < static_cast<std::size_t>(before) ? k : k + selected.size();
        const std::int64_t size = self.shape()[static_cast<std::size_t>(kept[k])];
        const std::int64_t stride = product(self.shape(), static_cast<std::size_t>(kept[k]) + 1);
        plan.shape[position] = size;
        const Tensor steps = arange_int(0, size, 1, DType::I64, device);
        offsets =
            offsets + mul(steps, integer_scalar(stride, device)).reshape(place(position, size));
    }
    plan.offsets = offsets.expand(plan.shape).contiguous();
    return plan;
}

Tensor additive_identity(DType dtype, const Device& device) {
    // -0.0 leaves every float unchanged (0.0 would turn -0.0 into 0.0); 0 / false otherwise.
    return scalar_tensor(-0.0, dtype, device);
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
    const IndexPlan plan = plan_index(self, indices, "index");
    const Tensor flat = self.contiguous().reshape({-1});
    return detail::gather_unchecked(flat, 0, plan.offsets.reshape({-1})).reshape(plan.shape);
}

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate) {
    // A 0-d value may come from the host, as a Python number does in PyTorch.
    if (values.dim() != 0 || values.device() != kCPU) {
        detail::check_same_device({self, values}, "index_put_");
    }
    detail::check_no_internal_overlap(self, "index_put_");
    autograd::check_in_place(self, "index_put_");
    const IndexPlan plan = plan_index(self, indices, "index_put_");
    bool fits = true;
    try {
        fits = broadcast_shapes(values.shape(), plan.shape, "index_put_") == plan.shape;
    } catch (const ValueError&) {
        fits = false;
    }
    if (!fits) {
        throw ValueError("index_put_: shape mismatch: value tensor of shape " +
                         to_string(values.shape()) +
                         " cannot be broadcast to indexing result "
                         "of shape " +
                         to_string(plan.shape));
    }
    const std::int64_t count = product(plan.shape);
    if (count == 0) {
        return self;
    }
    const Device device = self.device();
    Tensor positions = plan.offsets.reshape({-1});
    Tensor source = values.to(device).to(self.dtype()).expand(plan.shape).reshape({-1});
    const Tensor identity = additive_identity(self.dtype(), device);
    if (!accumulate) {
        // Of repeated positions only the last (sort is stable) is written: one value wins.
        const auto [sorted, order] = sort(positions, 0);
        const Tensor last_of_run =
            cat({ne(sorted.slice(0, 0, count - 1), sorted.slice(0, 1, count)),
                 tensor_bool({true}, {1}, device)});
        source = where(last_of_run, detail::gather_unchecked(source, 0, order), identity);
        positions = sorted;
    }
    Tensor buffer = full({self.numel()}, -0.0, self.dtype(), device);
    detail::scatter_add_unchecked(buffer, 0, positions, source);
    const Tensor scattered = buffer.reshape(self.shape());
    Tensor updated;
    if (accumulate) {
        updated = self.dtype() == DType::Bool ? logical_or(self, scattered) : self + scattered;
    } else {
        Tensor written = zeros({self.numel()}, DType::Bool, device);
        {
            const NoGradGuard no_grad;
            detail::scatter_add_unchecked(written, 0, positions,
                                          ones({count}, DType::Bool, device));
        }
        updated = where(written.reshape(self.shape()), scattered, self);
    }
    detail::write_into(self, updated, "index_put_");
    return self;
}

}  // namespace kael
