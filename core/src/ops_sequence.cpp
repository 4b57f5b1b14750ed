// sort / argsort / topk / cumsum: the dimension is moved last and made contiguous, then one
// kernel call handles every row; results are views back in the input's dimension order.
#include <algorithm>
#include <string>

#include "dims.h"
#include "autograd/record.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

using detail::wrapped_dim;

namespace {

std::int64_t row_count(const Tensor& rows_last) {
    const std::int64_t length = rows_last.size(-1);
    return length == 0 ? 0 : rows_last.numel() / length;
}

// Rows-last results viewed back in a's dimension order. With grad, the values are gathered from
// a again, which gives them gather's gradient.
std::pair<Tensor, Tensor> in_input_order(const Tensor& a, std::int64_t d, const Tensor& values,
                                         const Tensor& indices) {
    if (a.requires_grad() && is_grad_enabled()) {
        return {gather(a, d, indices.transpose(d, -1)), indices.transpose(d, -1)};
    }
    return {values.transpose(d, -1), indices.transpose(d, -1)};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& a, std::int64_t dim, bool descending) {
    const std::int64_t d = wrapped_dim(a, dim, "sort");
    if (a.dim() == 0) {
        const auto [values, indices] = sort(a.unsqueeze(0), 0, descending);
        return {values.squeeze(0), indices.squeeze(0)};
    }
    const Tensor input = a.transpose(d, -1).contiguous();
    Tensor values = empty(input.shape(), a.dtype(), a.device());
    Tensor indices = empty(input.shape(), DType::I64, a.device());
    detail::sort(values, indices, input, input.size(-1), row_count(input), descending);
    return in_input_order(a, d, values, indices);
}

Tensor argsort(const Tensor& a, std::int64_t dim, bool descending) {
    return sort(a, dim, descending).second;
}

std::pair<Tensor, Tensor> topk(const Tensor& a, std::int64_t k, std::int64_t dim, bool largest) {
    const std::int64_t d = wrapped_dim(a, dim, "topk");
    const std::int64_t size = a.dim() == 0 ? 1 : a.shape()[d];
    if (k < 0 || k > size) {
        throw ValueError("topk: k = " + std::to_string(k) + " is out of range for dimension " +
                         std::to_string(d) + " of shape " + to_string(a.shape()));
    }
    if (a.dim() == 0) {
        const auto [values, indices] = topk(a.unsqueeze(0), k, 0, largest);
        return {values.squeeze(0), indices.squeeze(0)};
    }
    const Tensor input = a.transpose(d, -1).contiguous();
    Shape shape = input.shape();
    shape.back() = k;
    Tensor values = empty(shape, a.dtype(), a.device());
    Tensor indices = empty(shape, DType::I64, a.device());
    detail::topk(values, indices, input, input.size(-1), row_count(input), k, largest);
    return in_input_order(a, d, values, indices);
}

Tensor cumsum(const Tensor& a, std::int64_t dim) {
    if (const auto cast = autocast::full({a})) {
        const autocast::Applied applied;
        return cumsum((*cast)[0], dim);
    }
    const std::int64_t d = wrapped_dim(a, dim, "cumsum");
    if (a.dim() == 0) {
        return cumsum(a.unsqueeze(0), 0).squeeze(0);
    }
    const autograd::Recording recording({a});
    const DType out_dtype = is_floating(a.dtype()) ? a.dtype() : DType::I64;
    Tensor result;
    if (detail::has_scan(a)) {  // along d where it lies: no transposed copies, a contiguous out
        result = detail::scanned(KAEL_REDUCE_SUM, a, d);
    } else {
        const Tensor input = a.transpose(d, -1).contiguous();
        const Tensor out = empty(input.shape(), out_dtype, a.device());
        detail::cumsum(out, input, input.size(-1), row_count(input));
        result = out.transpose(d, -1);
    }
    // The gradient of an inclusive prefix sum is the reversed prefix sum of the gradient.
    return recording.finish(result, "CumsumBackward", [d](const Tensor& g) {
        return std::vector<Tensor>{sum(g, d, true) - cumsum(g, d) + g};
    });
}

}  // namespace kael
