#pragma once
// Dimension arguments: negative values count from the end; a 0-d tensor accepts 0 and -1.
#include <string>

#include "kael/tensor.h"

namespace kael::detail {

inline std::int64_t wrapped_dim(const Tensor& a, std::int64_t dim, const char* op) {
    const std::int64_t rank = std::max<std::int64_t>(a.dim(), 1);
    if (dim < -rank || dim >= rank) {
        throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) +
                         " is out of range for shape " + to_string(a.shape()));
    }
    return dim < 0 ? dim + rank : dim;
}

}  // namespace kael::detail
