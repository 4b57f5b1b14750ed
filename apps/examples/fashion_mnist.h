#pragma once
// Fashion-MNIST from the IDX files Debian's dataset-fashion-mnist installs (gzip-compressed).
#include <cstdint>
#include <string>

#include "kael/nn.h"
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

// The fraction of data's images model classifies right, in eval mode and batches of 1000, the
// images reshaped to image_shape per batch ({-1, 784} as stored; {-1, 1, 28, 28} for a CNN).
double test_accuracy(nn::Module& model, const Dataset& data, const Device& device,
                     const Shape& image_shape);

}  // namespace kael::examples
