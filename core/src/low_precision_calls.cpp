// How a kernel call with bfloat16, float16 or narrow integer operands runs where the plugin does
// not compute in them (kernel_run.h): in f32 or i64 on the same device, over wide twins.
#include <algorithm>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kernel_calls.h"
#include "kernel_run.h"
#include "tensor_internal.h"

namespace kael::detail {

std::uint32_t stored_dtype_flags(std::span<const Tensor> outputs, std::span<const Tensor> inputs) {
    std::uint32_t flags = 0;
    const auto add = [&](const Tensor& t) {
        if (is_low_precision(t.dtype())) {
            flags |= KAEL_DTYPE_FLAG_LOW_PRECISION;
        } else if (is_narrow_int(t.dtype())) {
            flags |= KAEL_DTYPE_FLAG_NARROW_INT;
        }
    };
    std::for_each(outputs.begin(), outputs.end(), add);
    std::for_each(inputs.begin(), inputs.end(), add);
    return flags;
}

bool has_dtype_flags(const kael_plugin* table, std::uint32_t flags) {
    return KAEL_HAS_FIELD(table, dtype_flags) && (table->dtype_flags & flags) == flags;
}

bool computes_low_precision(const kael_plugin* table) {
    return has_dtype_flags(table, KAEL_DTYPE_FLAG_LOW_PRECISION);
}

// A twin in t's compute dtype with t's shape and strides (a layout the core built from t's
// strides, such as gather's, fits it too), holding t's values when keep_values (outputs too,
// unless the slot writes them whole: a kernel may read them).
Tensor twin_of(const Tensor& t, bool keep_values) {
    Tensor twin = empty_with_strides(t.shape(), t.strides(), compute_dtype(t.dtype()), t.device());
    if (keep_values) {
        convert(twin, t);
    }
    return twin;
}

std::vector<Tensor> widened(std::span<const Tensor> tensors, bool keep_values) {
    const NoGradGuard no_grad;
    std::vector<Tensor> twins(tensors.begin(), tensors.end());
    for (std::size_t i = 0; i < twins.size(); ++i) {
        if (compute_dtype(twins[i].dtype()) == twins[i].dtype()) {
            continue;
        }
        // One twin per tensor passed twice (a + a): the same view of the same storage.
        const auto same = [&](std::size_t j) {
            return tensors[j].impl_ptr() == tensors[i].impl_ptr();
        };
        std::size_t j = 0;
        while (j < i && !same(j)) {
            ++j;
        }
        twins[i] = j < i ? twins[j] : twin_of(tensors[i], keep_values);
    }
    return twins;
}

void narrow_into(std::span<const Tensor> outputs, std::span<const Tensor> twins) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (compute_dtype(outputs[i].dtype()) != outputs[i].dtype()) {
            convert(outputs[i], twins[i]);
        }
    }
}

DType as_called(DType dtype, std::span<const Tensor> operands) {
    if (compute_dtype(dtype) == dtype) {
        return dtype;
    }
    const bool present = std::any_of(operands.begin(), operands.end(),
                                     [dtype](const Tensor& t) { return t.dtype() == dtype; });
    return present ? dtype : compute_dtype(dtype);
}

}  // namespace kael::detail
