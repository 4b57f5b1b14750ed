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

struct LineSizes {
    std::int64_t outer = 1;
    std::int64_t size = 1;
    std::int64_t inner = 1;
};

// A contiguous shape seen as outer x size x inner around dim (a 0-d tensor is 1 x 1 x 1).
inline LineSizes line_sizes(const Shape& shape, std::int64_t dim) {
    LineSizes sizes;
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
        const std::int64_t extent = shape[static_cast<std::size_t>(d)];
        if (d < dim) {
            sizes.outer *= extent;
        } else if (d == dim) {
            sizes.size = extent;
        } else {
            sizes.inner *= extent;
        }
    }
    return sizes;
}

}  // namespace kael::detail
