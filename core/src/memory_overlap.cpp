#include "memory_overlap.h"

#include <string>

namespace kael::detail {

namespace {

struct ByteExtent {
    std::int64_t first;
    std::int64_t last;  // inclusive
};

ByteExtent extent(const Tensor& t) {
    const std::int64_t item = itemsize(t.dtype());
    std::int64_t low = t.offset();
    std::int64_t high = t.offset();
    for (std::size_t d = 0; d < t.shape().size(); ++d) {
        const std::int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
        (reach < 0 ? low : high) += reach;
    }
    return {low * item, high * item + item - 1};
}

}  // namespace

bool may_overlap(const Tensor& a, const Tensor& b) {
    if (a.impl().storage != b.impl().storage || a.numel() == 0 || b.numel() == 0) {
        return false;
    }
    const ByteExtent x = extent(a);
    const ByteExtent y = extent(b);
    return x.first <= y.last && y.first <= x.last;
}

bool same_elements(const Tensor& out, const Tensor& input) {
    if (out.impl().storage != input.impl().storage || out.offset() != input.offset() ||
        out.dtype() != input.dtype()) {
        return false;
    }
    const std::size_t lead = out.dim() - input.dim();
    for (std::size_t d = 0; d < out.shape().size(); ++d) {
        if (out.shape()[d] == 1) {
            continue;
        }
        // A broadcast input dimension reads one element for many outputs.
        if (d < lead || input.shape()[d - lead] != out.shape()[d] ||
            input.strides()[d - lead] != out.strides()[d]) {
            return false;
        }
    }
    return true;
}

void check_no_internal_overlap(const Tensor& out, const char* op) {
    for (std::size_t d = 0; d < out.shape().size(); ++d) {
        if (out.shape()[d] > 1 && out.strides()[d] == 0) {
            throw ValueError(std::string(op) +
                             ": unsupported operation: more than one element of the written-to "
                             "tensor (shape " + to_string(out.shape()) +
                             ", strides " + to_string(out.strides()) +
                             ") refers to a single memory location; clone() it first");
        }
    }
}

}  // namespace kael::detail
