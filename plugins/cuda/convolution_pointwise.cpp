#include "convolution_pointwise.h"

#include <climits>

#include "cublas_loader.h"
#include "cuda_context.h"
#include "cuda_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce_finished.h"
#include "staging.h"

namespace kael::cuda {
namespace {

// The per-sample products of a weight gradient live in scratch until they are added: beyond
// this the call is left to cuDNN, which needs none.
constexpr std::int64_t kMostScratchBytes = std::int64_t{256} << 20;

kael_matmul_sizes product(const kael_conv_geometry& g, std::int64_t rows, std::int64_t inner,
                          std::int64_t columns) {
    kael_matmul_sizes s{};
    s.struct_size = sizeof(s);
    s.batches = g.batch;
    s.rows = rows;
    s.inner = inner;
    s.columns = columns;
    s.precision = g.precision;
    return s;
}

void zero(void* target, std::int64_t bytes) {
    if (bytes > 0) {
        KAEL_CUDA_CHECK(
            cudaMemsetAsync(target, 0, static_cast<std::size_t>(bytes), launch_stream()));
    }
}

// Output positions per channel (the output's spatial sizes multiplied).
std::int64_t positions(const kael_conv_geometry& g) {
    std::int64_t total = 1;
    for (int i = 0; i < g.spatial; ++i) {
        total *= g.output[i];
    }
    return total;
}

// target[i] = source[i] (count f32 sums) rounded once to dtype, by this plugin's convert.
void narrow_into(std::int32_t device, kael_dtype dtype, void* target, const void* source,
                 std::int64_t count) {
    kael_element_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.dims = 1;
    layout.operands = 2;
    layout.shape[0] = count;
    layout.count = count;
    layout.strides[0][0] = kernels::dtype_size(dtype);
    layout.strides[1][0] = kernels::dtype_size(KAEL_DTYPE_F32);
    layout.base[0] = target;
    layout.base[1] = const_cast<void*>(source);
    kernels::tasks::throw_on_failure(convert(device, dtype, KAEL_DTYPE_F32, &layout));
}

}  // namespace

// output[n, c, p] += bias[c] through this plugin's own elementwise kernel: cuDNN's AddTensor
// lacks bfloat16.
void add_bias(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g, void* output,
              const void* bias) {
    const std::int64_t size = kernels::dtype_size(dtype);
    const std::int64_t spatial = positions(g);
    kael_element_layout layout{};
    layout.struct_size = sizeof(layout);
    layout.dims = 3;
    layout.operands = 3;
    layout.shape[0] = g.batch;
    layout.shape[1] = g.out_channels;
    layout.shape[2] = spatial;
    layout.count = g.batch * g.out_channels * spatial;
    const std::int64_t dense[] = {g.out_channels * spatial * size, spatial * size, size};
    for (int d = 0; d < 3; ++d) {
        layout.strides[0][d] = dense[d];
        layout.strides[1][d] = dense[d];
        layout.strides[2][d] = d == 1 ? size : 0;
    }
    layout.base[0] = output;
    layout.base[1] = output;
    layout.base[2] = const_cast<void*>(bias);
    kael_element_params params{};
    params.struct_size = sizeof(params);
    kernels::tasks::throw_on_failure(
        elementwise(device, KAEL_OP_PLUS, dtype, dtype, &layout, &params));
}

// grad_bias[c] = the sum of grad_output[n, c, p] over n and p: one pass of this plugin's
// per-channel sums (channels.cu; deterministic), which add bf16/f16 in f32, rounded once by
// convert. Their second sums (of grad times grad less a zero mean) are discarded.
void bias_gradient(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g,
                   const void* grad_output, void* grad_bias) {
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    const kael_dtype stat = low ? KAEL_DTYPE_F32 : dtype;
    const std::int64_t stat_bytes = g.out_channels * kernels::dtype_size(stat);
    const Scratch zero_mean(static_cast<std::size_t>(stat_bytes));
    const Scratch discarded(static_cast<std::size_t>(stat_bytes));
    const Scratch sums(static_cast<std::size_t>(low ? stat_bytes : 0));
    zero(zero_mean.get(), stat_bytes);
    kernels::tasks::throw_on_failure(channels()->backward_sums(
        device, dtype, g.batch, g.out_channels, positions(g), grad_output, grad_output,
        zero_mean.get(), low ? sums.get() : grad_bias, discarded.get()));
    if (low) {
        narrow_into(device, dtype, grad_bias, sums.get(), g.out_channels);
    }
}

bool pointwise(const kael_conv_geometry& g, kael_dtype dtype) {
    static const bool declined = env_is_zero("KAEL_CUDA_CONV_GEMM");
    if (declined || g.groups != 1 || g.spatial < 1 || g.spatial > 3 ||
        !cublas_unavailable_reason().empty()) {
        return false;
    }
    for (int i = 0; i < g.spatial; ++i) {
        if (g.kernel[i] != 1 || g.stride[i] != 1 || g.padding_before[i] != 0 ||
            g.padding_after[i] != 0 || g.output[i] != g.input[i]) {
            return false;
        }
    }
    const std::int64_t sizes[] = {g.batch, g.in_channels, g.out_channels, positions(g)};
    for (const std::int64_t size : sizes) {
        if (size < 0 || size > INT_MAX) {
            return false;
        }
    }
    return dtype == KAEL_DTYPE_F32 || dtype == KAEL_DTYPE_F64 || dtype == KAEL_DTYPE_BF16 ||
           dtype == KAEL_DTYPE_F16;
}

void pointwise_forward(kael_dtype dtype, const kael_conv_geometry& g, const void* input,
                       const void* weight, void* output) {
    const std::int64_t p = positions(g);
    if (g.batch == 0 || g.out_channels == 0 || p == 0) {
        return;
    }
    if (g.in_channels == 0) {  // an empty sum
        return zero(output, g.batch * g.out_channels * p * kernels::dtype_size(dtype));
    }
    kael_matmul_sizes s = product(g, g.out_channels, g.in_channels, p);
    s.a_batch_stride = 0;  // every sample meets the same weight
    s.b_batch_stride = g.in_channels * p;
    cublas_matmul(dtype, weight, input, output, s);
}

void pointwise_backward_input(kael_dtype dtype, const kael_conv_geometry& g,
                              const void* grad_output, const void* weight, void* grad_input) {
    const std::int64_t p = positions(g);
    if (g.batch == 0 || g.in_channels == 0 || p == 0) {
        return;
    }
    if (g.out_channels == 0) {
        return zero(grad_input, g.batch * g.in_channels * p * kernels::dtype_size(dtype));
    }
    kael_matmul_sizes s = product(g, g.in_channels, g.out_channels, p);
    s.a_transposed = 1;  // weight is stored [OC, IC]
    s.a_batch_stride = 0;
    s.b_batch_stride = g.out_channels * p;
    cublas_matmul(dtype, weight, grad_output, grad_input, s);
}

bool pointwise_backward_weight(std::int32_t device, kael_dtype dtype, const kael_conv_geometry& g,
                               const void* grad_output, const void* input, void* grad_weight) {
    const std::int64_t p = positions(g);
    const std::int64_t weights = g.out_channels * g.in_channels;
    if (weights == 0) {
        return true;
    }
    if (g.batch == 0 || p == 0) {
        zero(grad_weight, weights * kernels::dtype_size(dtype));
        return true;
    }
    kael_matmul_sizes s = product(g, g.out_channels, p, g.in_channels);
    s.b_transposed = 1;  // input[n] is stored [IC, P]
    s.a_batch_stride = g.out_channels * p;
    s.b_batch_stride = g.in_channels * p;
    if (g.batch == 1) {  // one product, summed in f32 and rounded once by cuBLAS itself
        cublas_matmul(dtype, grad_output, input, grad_weight, s);
        return true;
    }
    const kael_dtype wide = dtype == KAEL_DTYPE_F64 ? KAEL_DTYPE_F64 : KAEL_DTYPE_F32;
    const std::int64_t wide_bytes = kernels::dtype_size(wide);
    // The partial products are written and read once: worth it where that is less traffic than
    // the operands themselves (ResNet's 1x1 layers at 56x56 and 28x28), not where the positions
    // are few and the weight large (512 -> 2048 at 7x7: 256 MiB of partials for 8 MiB of data).
    const std::int64_t partial_bytes = g.batch * weights * wide_bytes;
    const std::int64_t operand_bytes =
        g.batch * (g.in_channels + g.out_channels) * p * kernels::dtype_size(dtype);
    if (partial_bytes > kMostScratchBytes || partial_bytes > operand_bytes) {
        return false;
    }
    const Scratch partials(static_cast<std::size_t>(partial_bytes));
    cublas_matmul_wide(dtype, grad_output, input, partials.get(), s);
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    const Scratch sums(static_cast<std::size_t>(low ? weights * wide_bytes : 0));
    // The samples' products added in f32 (f64) by the plugin's column sums: deterministic.
    kernels::tasks::throw_on_failure(reduce_dims(device, KAEL_REDUCE_SUM, wide, wide,
                                                 low ? sums.get() : grad_weight, partials.get(), 1,
                                                 g.batch, weights));
    if (low) {
        narrow_into(device, dtype, grad_weight, sums.get(), weights);
    }
    return true;
}

}  // namespace kael::cuda
