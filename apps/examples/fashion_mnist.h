#pragma once
// Fashion-MNIST from the IDX files Debian's dataset-fashion-mnist installs (gzip-compressed).
#include <cstdint>
#include <string>

#include "kael/tensor.h"

namespace kael::examples {

struct Dataset {
    Tensor images;  // [N, 784] f32 in [0, 1]
    Tensor labels;  // [N] i64 in 0..9
};

inline const char* kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";

// split is "train" or "t10k". Throws kael::ValueError naming the file when it is missing or
// malformed (install the Debian package dataset-fashion-mnist).
Dataset load_fashion_mnist(const std::string& folder, const std::string& split);

}  // namespace kael::examples
