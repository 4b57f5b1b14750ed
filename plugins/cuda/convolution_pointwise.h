#pragma once
// 1x1 convolutions (stride 1, no padding, one group) as cuBLAS products over the batch, ahead
// of cuDNN in the convolution extension (convolution_cudnn.cpp): per sample the layer is
// weight [OC, IC] x input [IC, positions], which needs no layout change in NCHW. Also the bias
// steps both paths share.
#include <cstdint>

#include "kael/plugin_api.h"
#include "kael/plugin_extensions.h"

namespace kael::cuda {

// Shared by the cuDNN and cuBLAS paths.
// output[n, c, p] += bias[c] through this plugin's own elementwise kernel (cuDNN's AddTensor
// lacks bfloat16).
void add_bias(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g, void* output,
              const void* bias);
// grad_bias[c] = the sum of grad_output[n, c, p] over n and p, by the per-channel sums.
void bias_gradient(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g,
                   const void* grad_output, void* grad_bias);

// Whether the geometry is such a convolution and cuBLAS takes it (KAEL_CUDA_CONV_GEMM=0 leaves
// every convolution to cuDNN).
bool pointwise(const kael_conv_geometry& g, kael_dtype dtype);

// output [N, OC, P] = weight x input[n] for each sample (no bias).
void pointwise_forward(kael_dtype dtype, const kael_conv_geometry& g, const void* input,
                       const void* weight, void* output);

// grad_input [N, IC, P] = weight^T x grad_output[n].
void pointwise_backward_input(kael_dtype dtype, const kael_conv_geometry& g,
                              const void* grad_output, const void* weight, void* grad_input);

// grad_weight [OC, IC] = the sum over n of grad_output[n] x input[n]^T, each sample's product
// kept in f32 (f64) and the samples added in it, rounded once; false, having done nothing,
// where the per-sample products would outweigh the operands (few positions, a large weight) or
// need more than 256 MiB: cuDNN then takes it.
bool pointwise_backward_weight(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g,
                               const void* grad_output, const void* input, void* grad_weight);

}  // namespace kael::cuda
