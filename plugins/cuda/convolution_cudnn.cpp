// The cuda plugin's convolutions (KAEL_EXTENSION_CONVOLUTION) on cuDNN, the library PyTorch's
// CUDA convolutions use. libcudnn.so.9 is dlopen'ed at the first convolution, as cuBLAS is, so
// the plugin never depends on it: without it (or for uneven padding, which cuDNN lacks) a call
// is declined and the core composes the convolution from sliding windows and cuBLAS products.
// 1x1 convolutions of stride 1 go to cuBLAS products instead (convolution_pointwise.h).
// Descriptors and the algorithms cuDNN's heuristics rank first are made once per geometry;
// deterministic algorithms are preferred, so results repeat run to run as the other kernels do.
// Built without cudnn.h (KAEL_CUDA_CUDNN_HEADER 0), the extension is absent.
#if KAEL_CUDA_CUDNN_HEADER
#include "convolution_pointwise.h"
#include "cudnn_loader.h"
#endif

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_context.h"
#include "cuda_kernels.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/plugin_extensions.h"
#include "staging.h"

namespace kael::cuda {

#if KAEL_CUDA_CUDNN_HEADER
namespace {
cudnnDataType_t data_type(kael_dtype dtype) {
    switch (dtype) {
        case KAEL_DTYPE_F64: return CUDNN_DATA_DOUBLE;
        case KAEL_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
        case KAEL_DTYPE_F16: return CUDNN_DATA_HALF;
        default: return CUDNN_DATA_FLOAT;
    }
}

// A geometry's descriptors and chosen algorithms (a 1-d convolution as a 2-d one of height 1:
// cuDNN takes 4-d and 5-d tensors only).
struct Plan {
    cudnnTensorDescriptor_t input = nullptr, output = nullptr;
    cudnnFilterDescriptor_t weight = nullptr;
    cudnnConvolutionDescriptor_t forward_conv = nullptr, data_conv = nullptr, filter_conv = nullptr;
    cudnnConvolutionFwdAlgo_t forward_algo{};
    cudnnConvolutionBwdDataAlgo_t data_algo{};
    cudnnConvolutionBwdFilterAlgo_t filter_algo{};
    std::size_t forward_bytes = 0, data_bytes = 0, filter_bytes = 0;
    bool data_ready = false, filter_ready = false;
    std::mutex mutex;  // the backward algorithms are chosen at their first call

    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() = default;  // descriptors live as long as the process, as the handles
};

std::vector<int> packed_strides(const std::vector<int>& dims) {
    std::vector<int> strides(dims.size(), 1);
    for (std::size_t i = dims.size() - 1; i > 0; --i) {
        strides[i - 1] = strides[i] * dims[i];
    }
    return strides;
}

void set_tensor(cudnnTensorDescriptor_t* descriptor, cudnnDataType_t type,
                const std::vector<int>& dims) {
    KAEL_CUDNN_CHECK(cudnnCreateTensorDescriptor(descriptor));
    const std::vector<int> strides = packed_strides(dims);
    KAEL_CUDNN_CHECK(cudnnSetTensorNdDescriptor(*descriptor, type, static_cast<int>(dims.size()),
                                                dims.data(), strides.data()));
}

// f32 products exactly as f32 unless the caller allows TF32; bf16/f16 on tensor cores.
cudnnMathType_t math_type(kael_dtype dtype, std::int32_t precision) {
    if (dtype == KAEL_DTYPE_F32) {
        return precision == KAEL_MATMUL_PRECISION_HIGHEST ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    }
    return dtype == KAEL_DTYPE_F64 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}

cudnnConvolutionDescriptor_t make_conv(const kael_conv_geometry& g, kael_dtype dtype, int extra,
                                       cudnnMathType_t math) {
    const int spatial = g.spatial + extra;
    std::vector<int> pad(static_cast<std::size_t>(spatial), 0);
    std::vector<int> stride(pad.size(), 1);
    std::vector<int> dilation(pad.size(), 1);
    for (int i = 0; i < g.spatial; ++i) {
        const auto at = static_cast<std::size_t>(i + extra);
        pad[at] = static_cast<int>(g.padding_before[i]);
        stride[at] = static_cast<int>(g.stride[i]);
        dilation[at] = static_cast<int>(g.dilation[i]);
    }
    cudnnConvolutionDescriptor_t conv = nullptr;
    KAEL_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    // bf16/f16 accumulate in f32, f64 in f64, as the matrix products do.
    const cudnnDataType_t compute = dtype == KAEL_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    KAEL_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv, spatial, pad.data(), stride.data(),
                                                     dilation.data(), CUDNN_CROSS_CORRELATION,
                                                     compute));
    KAEL_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, static_cast<int>(g.groups)));
    KAEL_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, math));
    return conv;
}

// Whether cuDNN can take the geometry: even padding, every size within an int.
bool fits(const kael_conv_geometry& g) {
    const std::int64_t sizes[] = {g.batch, g.in_channels, g.out_channels, g.groups};
    for (const std::int64_t size : sizes) {
        if (size > INT_MAX / 4) {
            return false;
        }
    }
    for (int i = 0; i < g.spatial; ++i) {
        if (g.padding_before[i] != g.padding_after[i] || g.input[i] > INT_MAX / 4 ||
            g.output[i] > INT_MAX / 4) {
            return false;
        }
    }
    // No channels or no batch: the core's composed path writes the bias alone.
    return g.spatial >= 1 && g.spatial <= 3 && g.batch > 0 && g.in_channels > 0;
}

// The algorithm to run from cuDNN's results, fastest first (timed by its Find calls, else
// ranked by its heuristics), of the math allowed: the first deterministic one unless it takes
// over a quarter longer than the fastest (PyTorch takes the fastest, deterministic or not: a
// deterministic weight gradient ran 1x1 convolutions at 2x its time); null if none ran.
template <typename Perf>
const Perf* chosen(const Perf* results, int count, cudnnMathType_t math) {
    const Perf* fastest = nullptr;
    for (int i = 0; i < count; ++i) {
        const Perf& result = results[i];
        const bool exact_only = math == CUDNN_FMA_MATH;
        if (result.status != CUDNN_STATUS_SUCCESS ||
            (exact_only && result.mathType != CUDNN_FMA_MATH &&
             result.mathType != CUDNN_DEFAULT_MATH)) {
            continue;
        }
        fastest = fastest != nullptr ? fastest : &result;
        const bool timed = fastest->time > 0;
        if (result.determinism == CUDNN_DETERMINISTIC &&
            (!timed || result.time <= 1.25F * fastest->time)) {
            return &result;
        }
    }
    return fastest;
}

// cuDNN's results for one pass: its Find call (which times every algorithm once, allocating
// what it needs) at a geometry's first call, its heuristics where Find fails (out of memory).
// Find runs twice and the second's times count: the first run of an algorithm loads its
// kernels' module (lazily, since CUDA 12), and those timings had bf16 3x3 convolutions on an
// H100 choose cuDNN's non-tensor-core implicit GEMM (0.5 ms where torch's took 0.03 ms).
template <typename Perf, typename Find, typename Get>
int algorithm_results(Perf* results, int capacity, Find&& find, Get&& get) {
    int count = 0;
    if (find(capacity, &count, results) == CUDNN_STATUS_SUCCESS && count > 0 &&
        find(capacity, &count, results) == CUDNN_STATUS_SUCCESS && count > 0) {
        return count;
    }
    check_cudnn(get(capacity, &count, results), "cudnnGetConvolution*Algorithm_v7");
    return count;
}

std::shared_ptr<Plan> make_plan(const kael_conv_geometry& g, kael_dtype dtype) {
    auto plan = std::make_shared<Plan>();
    const int extra = g.spatial == 1 ? 1 : 0;
    const cudnnDataType_t type = data_type(dtype);
    std::vector<int> input{static_cast<int>(g.batch), static_cast<int>(g.in_channels)};
    std::vector<int> output{static_cast<int>(g.batch), static_cast<int>(g.out_channels)};
    std::vector<int> weight{static_cast<int>(g.out_channels),
                            static_cast<int>(g.in_channels / g.groups)};
    if (extra != 0) {
        input.push_back(1);
        output.push_back(1);
        weight.push_back(1);
    }
    for (int i = 0; i < g.spatial; ++i) {
        input.push_back(static_cast<int>(g.input[i]));
        output.push_back(static_cast<int>(g.output[i]));
        weight.push_back(static_cast<int>(g.kernel[i]));
    }
    set_tensor(&plan->input, type, input);
    set_tensor(&plan->output, type, output);
    KAEL_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->weight));
    KAEL_CUDNN_CHECK(cudnnSetFilterNdDescriptor(plan->weight, type, CUDNN_TENSOR_NCHW,
                                                static_cast<int>(weight.size()), weight.data()));
    const cudnnMathType_t math = math_type(dtype, g.precision);
    plan->forward_conv = make_conv(g, dtype, extra, math);
    plan->data_conv = make_conv(g, dtype, extra, math);
    plan->filter_conv = make_conv(g, dtype, extra, math);
    cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    count = algorithm_results(
        results, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
        [&](int capacity, int* found, cudnnConvolutionFwdAlgoPerf_t* out) {
            return cudnn().cudnnFindConvolutionForwardAlgorithm(cudnn_handle(), plan->input,
                                                                plan->weight, plan->forward_conv,
                                                                plan->output, capacity, found, out);
        },
        [&](int capacity, int* found, cudnnConvolutionFwdAlgoPerf_t* out) {
            return cudnn().cudnnGetConvolutionForwardAlgorithm_v7(
                cudnn_handle(), plan->input, plan->weight, plan->forward_conv, plan->output,
                capacity, found, out);
        });
    const auto* best = chosen(results, count, math);
    if (best == nullptr) {
        return nullptr;
    }
    plan->forward_algo = best->algo;
    KAEL_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->forward_conv, best->mathType));
    KAEL_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
        cudnn_handle(), plan->input, plan->weight, plan->forward_conv, plan->output,
        plan->forward_algo, &plan->forward_bytes));
    return plan;
}

const kael_conv_geometry& checked(const kael_conv_geometry* geometry) {
    if (geometry == nullptr || geometry->struct_size < sizeof(kael_conv_geometry)) {
        plugin::invalid("convolution geometry is null or from an older ABI");
    }
    return *geometry;
}

// The plan of a geometry, made at its first call; null when cuDNN declines it.
std::shared_ptr<Plan> plan_for(const kael_conv_geometry* geometry, kael_dtype dtype) {
    static_cast<void>(checked(geometry));
    if (!cudnn().unavailable.empty()) {
        plugin::unsupported("cuDNN is not available: " + cudnn().unavailable);
    }
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64 && dtype != KAEL_DTYPE_BF16 &&
        dtype != KAEL_DTYPE_F16) {
        plugin::unsupported("cuDNN convolutions take float dtypes only");
    }
    if (!fits(*geometry)) {
        plugin::unsupported("cuDNN takes even padding and int sizes only");
    }
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<Plan>> plans;
    std::string key(reinterpret_cast<const char*>(geometry), sizeof(kael_conv_geometry));
    key += std::to_string(dtype) + "@" + std::to_string(current_device());
    const std::lock_guard lock(mutex);
    auto found = plans.find(key);
    if (found == plans.end()) {
        found = plans.emplace(key, make_plan(*geometry, dtype)).first;
    }
    if (found->second == nullptr) {
        plugin::unsupported("cuDNN found no algorithm for this convolution");
    }
    return found->second;
}

// cuDNN's scaling factors: double for f64 data, float otherwise.
struct Scale {
    double wide;
    float narrow;
    [[nodiscard]] const void* of(kael_dtype dtype) const {
        return dtype == KAEL_DTYPE_F64 ? static_cast<const void*>(&wide) : &narrow;
    }
};
constexpr Scale kOne{1.0, 1.0f};
constexpr Scale kZero{0.0, 0.0f};

kael_status forward(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                    const void* input, const void* weight, const void* bias, void* output) {
    return plugin::guarded("cuda.convolution_forward", [&] {
        use_device(device);
        if (pointwise(checked(geometry), dtype)) {
            pointwise_forward(dtype, *geometry, input, weight, output);
            if (bias != nullptr) {
                add_bias(device, dtype, *geometry, output, bias);
            }
            return;
        }
        const std::shared_ptr<Plan> plan = plan_for(geometry, dtype);
        const Scratch scratch(plan->forward_bytes);
        KAEL_CUDNN_CHECK(cudnnConvolutionForward(
            cudnn_handle(), kOne.of(dtype), plan->input, input, plan->weight, weight,
            plan->forward_conv, plan->forward_algo, scratch.get(), plan->forward_bytes,
            kZero.of(dtype), plan->output, output));
        if (bias != nullptr) {
            add_bias(device, dtype, *geometry, output, bias);
        }
    });
}

kael_status backward_input(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                           const void* grad_output, const void* weight, void* grad_input) {
    return plugin::guarded("cuda.convolution_backward_input", [&] {
        use_device(device);
        if (pointwise(checked(geometry), dtype)) {
            return pointwise_backward_input(dtype, *geometry, grad_output, weight, grad_input);
        }
        const std::shared_ptr<Plan> plan = plan_for(geometry, dtype);
        const std::lock_guard lock(plan->mutex);
        if (!plan->data_ready) {
            cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
            int count = 0;
            count = algorithm_results(
                results, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                [&](int capacity, int* found, cudnnConvolutionBwdDataAlgoPerf_t* out) {
                    return cudnn().cudnnFindConvolutionBackwardDataAlgorithm(
                        cudnn_handle(), plan->weight, plan->output, plan->data_conv, plan->input,
                        capacity, found, out);
                },
                [&](int capacity, int* found, cudnnConvolutionBwdDataAlgoPerf_t* out) {
                    return cudnn().cudnnGetConvolutionBackwardDataAlgorithm_v7(
                        cudnn_handle(), plan->weight, plan->output, plan->data_conv, plan->input,
                        capacity, found, out);
                });
            const auto* best = chosen(results, count, math_type(dtype, geometry->precision));
            if (best == nullptr) {
                plugin::unsupported("cuDNN found no algorithm for this convolution's gradient");
            }
            plan->data_algo = best->algo;
            KAEL_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->data_conv, best->mathType));
            KAEL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
                cudnn_handle(), plan->weight, plan->output, plan->data_conv, plan->input,
                plan->data_algo, &plan->data_bytes));
            plan->data_ready = true;
        }
        const Scratch scratch(plan->data_bytes);
        KAEL_CUDNN_CHECK(cudnnConvolutionBackwardData(
            cudnn_handle(), kOne.of(dtype), plan->weight, weight, plan->output, grad_output,
            plan->data_conv, plan->data_algo, scratch.get(), plan->data_bytes, kZero.of(dtype),
            plan->input, grad_input));
    });
}

kael_status backward_weight(int32_t device, kael_dtype dtype, const kael_conv_geometry* geometry,
                            const void* grad_output, const void* input, void* grad_weight,
                            void* grad_bias) {
    return plugin::guarded("cuda.convolution_backward_weight", [&] {
        use_device(device);
        if (pointwise(checked(geometry), dtype) &&
            pointwise_backward_weight(device, dtype, *geometry, grad_output, input, grad_weight)) {
            if (grad_bias != nullptr) {
                bias_gradient(device, dtype, *geometry, grad_output, grad_bias);
            }
            return;
        }
        const std::shared_ptr<Plan> plan = plan_for(geometry, dtype);
        const std::lock_guard lock(plan->mutex);
        if (!plan->filter_ready) {
            cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
            int count = 0;
            count = algorithm_results(
                results, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                [&](int capacity, int* found, cudnnConvolutionBwdFilterAlgoPerf_t* out) {
                    return cudnn().cudnnFindConvolutionBackwardFilterAlgorithm(
                        cudnn_handle(), plan->input, plan->output, plan->filter_conv, plan->weight,
                        capacity, found, out);
                },
                [&](int capacity, int* found, cudnnConvolutionBwdFilterAlgoPerf_t* out) {
                    return cudnn().cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                        cudnn_handle(), plan->input, plan->output, plan->filter_conv, plan->weight,
                        capacity, found, out);
                });
            const auto* best = chosen(results, count, math_type(dtype, geometry->precision));
            if (best == nullptr) {
                plugin::unsupported("cuDNN found no algorithm for this convolution's gradient");
            }
            plan->filter_algo = best->algo;
            KAEL_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->filter_conv, best->mathType));
            KAEL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                cudnn_handle(), plan->input, plan->output, plan->filter_conv, plan->weight,
                plan->filter_algo, &plan->filter_bytes));
            plan->filter_ready = true;
        }
        const Scratch scratch(plan->filter_bytes);
        KAEL_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
            cudnn_handle(), kOne.of(dtype), plan->input, input, plan->output, grad_output,
            plan->filter_conv, plan->filter_algo, scratch.get(), plan->filter_bytes,
            kZero.of(dtype), plan->weight, grad_weight));
        if (grad_bias != nullptr) {
            bias_gradient(device, dtype, *geometry, grad_output, grad_bias);
        }
    });
}

}  // namespace

std::string convolution_description() {
    return "cuDNN (libcudnn.so.9 dlopen'ed at the first convolution, else composed by the core)";
}

// Asking for the extension loads cuDNN; without it the extension is absent and the core
// composes every convolution.
const kael_convolution* convolution() {
    if (!cudnn().unavailable.empty()) {
        return nullptr;
    }
    static const kael_convolution table = {sizeof(kael_convolution), cudnn().library.c_str(),
                                           forward, backward_input, backward_weight};
    return &table;
}

std::string cudnn_unavailable_reason() {
    return cudnn().unavailable;
}

#else
std::string convolution_description() {
    return "composed by the core (built without cudnn.h)";
}
const kael_convolution* convolution() {
    return nullptr;
}
std::string cudnn_unavailable_reason() {
    return "built without cudnn.h";
}
#endif

}  // namespace kael::cuda
