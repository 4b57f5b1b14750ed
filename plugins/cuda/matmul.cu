// matmul: cuBLAS for f32/f64 when it loads (KAEL_CUDA_MATMUL=cublas|tile|auto picks per call),
// else kael's tile kernel: 128 x 128 output tiles in shared memory, 8 x 8 per thread, the next
// depth slice loaded into registers while the current one is multiplied. i64 runs the shared
// MatmulTiles task, which cuBLAS cannot do. Single products go through cuBLASLt with the bias
// in its epilogue (cublaslt_matmul.cpp); otherwise matmul_bias is cuBLAS with beta = 1 over out
// filled with the broadcast bias; the tile kernel and the task add the bias as they store. One
// f32 row against a transposed weight (a decoding step's linear layers) is gemv.cu's kernel.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <typeinfo>

#include "cublas_loader.h"
#include "cublaslt_matmul.h"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "gemv.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/matmul.h"

namespace kael::cuda {
namespace {

namespace tasks = kernels::tasks;

constexpr int kTile = 128;         // output rows and columns per block
constexpr int kDepth = 8;          // inner elements per shared-memory slice
constexpr int kPad = 4;            // keeps the transposing shared-memory stores free of conflicts
constexpr int kTileThreads = 256;  // 16 x 16 threads, each 8 x 8 outputs
constexpr std::int64_t kMaxGridY = 65535;

template <typename T>
struct alignas(4 * sizeof(T)) Quad {
    T values[4];
};

// One depth slice of op(a) (kTile rows) and op(b) (kTile columns), four elements per thread,
// read with the unit stride of each stored layout and zero outside the matrices.
template <typename T, bool kATransposed, bool kBTransposed>
struct SliceLoader {
    const T* a;
    const T* b;
    std::int64_t rows;
    std::int64_t inner;
    std::int64_t columns;
    std::int64_t first_row;
    std::int64_t first_column;

    __device__ void load(std::int64_t depth, int thread, T (&a_part)[4], T (&b_part)[4]) const {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            // a: thread covers (row, k) pairs; 2 threads per row or 32 threads per k.
            const std::int64_t row =
                first_row + (kATransposed ? (thread % 32) * 4 + i : thread / 2);
            const std::int64_t k = depth + (kATransposed ? thread / 32 : (thread % 2) * 4 + i);
            a_part[i] =
                row < rows && k < inner ? a[kATransposed ? k * rows + row : row * inner + k] : T(0);
            const std::int64_t column =
                first_column + (kBTransposed ? thread / 2 : (thread % 32) * 4 + i);
            const std::int64_t b_k = depth + (kBTransposed ? (thread % 2) * 4 + i : thread / 32);
            b_part[i] = column < columns && b_k < inner
                            ? b[kBTransposed ? column * inner + b_k : b_k * columns + column]
                            : T(0);
        }
    }
};

template <typename T, bool kATransposed, bool kBTransposed>
__device__ void store_slice(int thread, const T (&a_part)[4], const T (&b_part)[4],
                            T (&a_slice)[kDepth][kTile + kPad],
                            T (&b_slice)[kDepth][kTile + kPad]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (kATransposed) {
            a_slice[thread / 32][(thread % 32) * 4 + i] = a_part[i];
        } else {
            a_slice[(thread % 2) * 4 + i][thread / 2] = a_part[i];
        }
        if (kBTransposed) {
            b_slice[(thread % 2) * 4 + i][thread / 2] = b_part[i];
        } else {
            b_slice[thread / 32][(thread % 32) * 4 + i] = b_part[i];
        }
    }
}

// Thread (x, y) of 16 x 16 owns rows {4y..4y+3, 64+4y..64+4y+3} and the same columns with x:
// the two halves keep the 16-byte shared-memory reads of a warp free of bank conflicts. f32
// asks for two blocks per multiprocessor (at most 128 registers) to hide latency.
template <typename T, bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kTileThreads, sizeof(T) == 4 ? 2 : 1)
    matmul_tiles(const T* a, const T* b, const T* bias, T* out, kael_matmul_sizes s) {
    __shared__ alignas(16) T a_slices[2][kDepth][kTile + kPad];
    __shared__ alignas(16) T b_slices[2][kDepth][kTile + kPad];
    const int thread = static_cast<int>(threadIdx.x);
    const int x = thread % 16;
    const int y = thread / 16;
    const std::int64_t first_row = static_cast<std::int64_t>(blockIdx.y) * kTile;
    const std::int64_t first_column = static_cast<std::int64_t>(blockIdx.x) * kTile;
    const std::int64_t slices = (s.inner + kDepth - 1) / kDepth;
    for (std::int64_t batch = blockIdx.z; batch < s.batches; batch += gridDim.z) {
        const SliceLoader<T, kATransposed, kBTransposed> loader{a + batch * s.a_batch_stride,
                                                                b + batch * s.b_batch_stride,
                                                                s.rows,
                                                                s.inner,
                                                                s.columns,
                                                                first_row,
                                                                first_column};
        T a_part[4];
        T b_part[4];
        loader.load(0, thread, a_part, b_part);
        store_slice<T, kATransposed, kBTransposed>(thread, a_part, b_part, a_slices[0],
                                                   b_slices[0]);
        __syncthreads();
        T sums[8][8] = {};
        for (std::int64_t slice = 0; slice < slices; ++slice) {
            const int current = static_cast<int>(slice & 1);
            if (slice + 1 < slices) {
                loader.load((slice + 1) * kDepth, thread, a_part, b_part);
            }
#pragma unroll
            for (int k = 0; k < kDepth; ++k) {
                const Quad<T> a_low =
                    *reinterpret_cast<const Quad<T>*>(&a_slices[current][k][4 * y]);
                const Quad<T> a_high =
                    *reinterpret_cast<const Quad<T>*>(&a_slices[current][k][64 + 4 * y]);
                const Quad<T> b_low =
                    *reinterpret_cast<const Quad<T>*>(&b_slices[current][k][4 * x]);
                const Quad<T> b_high =
                    *reinterpret_cast<const Quad<T>*>(&b_slices[current][k][64 + 4 * x]);
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const T a_value = i < 4 ? a_low.values[i] : a_high.values[i - 4];
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        const T b_value = j < 4 ? b_low.values[j] : b_high.values[j - 4];
                        sums[i][j] += a_value * b_value;
                    }
                }
            }
            if (slice + 1 < slices) {
                store_slice<T, kATransposed, kBTransposed>(
                    thread, a_part, b_part, a_slices[current ^ 1], b_slices[current ^ 1]);
            }
            __syncthreads();  // the slice just read is the next one written
        }
        T* const out_matrix = out + batch * s.rows * s.columns;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const std::int64_t row = first_row + (i < 4 ? 4 * y + i : 64 + 4 * y + i - 4);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const std::int64_t column = first_column + (j < 4 ? 4 * x + j : 64 + 4 * x + j - 4);
                if (row < s.rows && column < s.columns) {
                    out_matrix[row * s.columns + column] =
                        bias != nullptr ? sums[i][j] + bias[column] : sums[i][j];
                }
            }
        }
    }
}

template <typename T, bool kATransposed, bool kBTransposed>
void launch_tiles(const void* a, const void* b, const void* bias, void* out,
                  const kael_matmul_sizes& s) {
    const dim3 grid(static_cast<unsigned>((s.columns + kTile - 1) / kTile),
                    static_cast<unsigned>((s.rows + kTile - 1) / kTile),
                    static_cast<unsigned>(tasks::min_of(s.batches, kMaxGridY)));
    matmul_tiles<T, kATransposed, kBTransposed><<<grid, kTileThreads, 0, launch_stream()>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(bias),
        static_cast<T*>(out), s);
    check_launch(typeid(Quad<T>), __FILE__, __LINE__);
}

template <typename T>
void tile_matmul(const void* a, const void* b, const void* bias, void* out,
                 const kael_matmul_sizes& s) {
    if (s.a_transposed != 0) {
        return s.b_transposed != 0 ? launch_tiles<T, true, true>(a, b, bias, out, s)
                                   : launch_tiles<T, true, false>(a, b, bias, out, s);
    }
    return s.b_transposed != 0 ? launch_tiles<T, false, true>(a, b, bias, out, s)
                               : launch_tiles<T, false, false>(a, b, bias, out, s);
}

// The shared MatmulTiles task: i64, and float products too tall for the tile kernel's grid.
template <typename T>
void task_matmul(const void* a, const void* b, const void* bias, void* out,
                 const kael_matmul_sizes& s) {
    const std::int64_t tiles = s.batches * tasks::ceil_div(s.rows, tasks::kMatmulTile) *
                               tasks::ceil_div(s.columns, tasks::kMatmulTile);
    Launcher::for_each(tiles, tasks::MatmulTiles<T>{static_cast<const T*>(a),
                                                    static_cast<const T*>(b), static_cast<T*>(out),
                                                    s, static_cast<const T*>(bias)});
}

// out[r][c] = bias[c] for every row of every batch: a block per row, the bias read from cache.
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    fill_bias_rows(T* __restrict__ out, const T* __restrict__ bias, std::int64_t rows,
                   std::int64_t columns) {
    for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        T* const target = out + row * columns;
        for (std::int64_t column = threadIdx.x; column < columns; column += blockDim.x) {
            target[column] = bias[column];
        }
    }
}

template <typename T>
void fill_bias(const void* bias, void* out, const kael_matmul_sizes& s) {
    const std::int64_t rows = s.batches * s.rows;
    const int blocks = grid_blocks(reinterpret_cast<const void*>(&fill_bias_rows<T>), rows);
    fill_bias_rows<T><<<blocks, kThreadsPerBlock, 0, launch_stream()>>>(
        static_cast<T*>(out), static_cast<const T*>(bias), rows, s.columns);
    check_launch(typeid(T), __FILE__, __LINE__);
}

// KAEL_CUDA_MATMUL, read on every call: "tile", "cublas" (an error when cuBLAS does not load),
// or unset/"auto" (cuBLAS when it loads).
bool use_cublas(kael_dtype dtype, const kael_matmul_sizes& s) {
    const char* setting = std::getenv("KAEL_CUDA_MATMUL");
    const std::string choice = setting != nullptr ? setting : "";
    if (choice == "tile") {
        return false;
    }
    if (!choice.empty() && choice != "cublas" && choice != "auto") {
        plugin::invalid("KAEL_CUDA_MATMUL=" + choice + ": expected cublas, tile or auto");
    }
    const std::string& unavailable = cublas_unavailable_reason();
    if (choice == "cublas" && !unavailable.empty()) {
        throw plugin::StatusError(
            KAEL_STATUS_DEVICE_ERROR,
            "KAEL_CUDA_MATMUL=cublas, but cuBLAS did not load: " + unavailable);
    }
    return unavailable.empty() && cublas_fits(dtype, s);
}

// out = a x b (+ bias broadcast over rows when bias is not null).
void multiply(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
              const kael_matmul_sizes& s) {
    if (s.inner == 0) {  // an empty sum: cuBLAS is never called with an empty matrix
        if (bias == nullptr) {
            KAEL_CUDA_CHECK(cudaMemsetAsync(
                out, 0,
                static_cast<size_t>(s.batches * s.rows * s.columns * kernels::dtype_size(dtype)),
                launch_stream()));
            return;
        }
        if (kernels::dtype_size(dtype) == 2) {  // bf16, f16: copied as bits
            return fill_bias<std::uint16_t>(bias, out, s);
        }
        kernels::with_dtype(dtype, [&](auto tag) {
            using T = kernels::TagType<decltype(tag)>;
            if constexpr (!kernels::is_bool_v<T>) {
                fill_bias<T>(bias, out, s);
            }
        });
        return;
    }
    if (dtype == KAEL_DTYPE_I64) {
        return task_matmul<std::int64_t>(a, b, bias, out, s);
    }
    if (gemv(dtype, a, b, bias, out, s)) {
        return;
    }
    const bool low = dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16;
    if (use_cublas(dtype, s)) {
        if (cublaslt_matmul(dtype, a, b, bias, out, s)) {
            return;
        }
        if (bias != nullptr) {  // copied as bits: a low-precision bias is two bytes an element
            dtype == KAEL_DTYPE_F32 ? fill_bias<float>(bias, out, s)
            : low                   ? fill_bias<std::uint16_t>(bias, out, s)
                                    : fill_bias<double>(bias, out, s);
        }
        return cublas_matmul(dtype, a, b, out, s, bias != nullptr);
    }
    if (low) {  // the tile kernel has no tensor-core path: the core multiplies f32 twins
        plugin::unsupported("matmul of bfloat16 or float16 without cuBLAS");
    }
    const bool grid_fits = tasks::ceil_div(s.rows, kTile) <= kMaxGridY;
    if (dtype == KAEL_DTYPE_F32) {
        return grid_fits ? tile_matmul<float>(a, b, bias, out, s)
                         : task_matmul<float>(a, b, bias, out, s);
    }
    return grid_fits ? tile_matmul<double>(a, b, bias, out, s)
                     : task_matmul<double>(a, b, bias, out, s);
}

}  // namespace

kael_status matmul(int32_t device, kael_dtype dtype, const void* a, const void* b, void* out,
                   const kael_matmul_sizes* sizes) {
    return plugin::guarded("cuda.matmul", [&] {
        use_device(device);
        if (kernels::check_matmul_call(dtype, a, b, out, sizes, true)) {
            multiply(dtype, a, b, nullptr, out, *sizes);
        }
    });
}

kael_status matmul_epilogue(int32_t device, kael_dtype dtype, const void* a, const void* b,
                            const void* bias, const void* residual, void* out,
                            const kael_matmul_sizes* sizes, int32_t activation) {
    return plugin::guarded("cuda.matmul_epilogue", [&] {
        use_device(device);
        if (activation != KAEL_ACTIVATION_NONE && activation != KAEL_ACTIVATION_GELU_TANH) {
            plugin::invalid("matmul_epilogue: unknown activation " + std::to_string(activation));
        }
        if (activation != KAEL_ACTIVATION_NONE && dtype == KAEL_DTYPE_I64) {
            plugin::unsupported("matmul_epilogue: an activation of i64");
        }
        if (!kernels::check_matmul_call(dtype, a, b, out, sizes, true)) {
            return;
        }
        if (sizes->inner > 0 && gemv(dtype, a, b, bias, out, *sizes, residual, activation)) {
            return;
        }
        // A residual without an activation rides in cuBLASLt's epilogue (a recurrent layer's
        // backward adds one to every step's product); an activation comes before the residual.
        if (residual != nullptr && activation == KAEL_ACTIVATION_NONE && sizes->inner > 0 &&
            dtype != KAEL_DTYPE_I64 && use_cublas(dtype, *sizes) &&
            cublaslt_matmul(dtype, a, b, bias, out, *sizes, residual)) {
            return;
        }
        multiply(dtype, a, b, bias, out, *sizes);
        apply_epilogue(dtype, out, residual, sizes->batches * sizes->rows * sizes->columns,
                       activation);
    });
}

kael_status matmul_bias(int32_t device, kael_dtype dtype, const void* a, const void* b,
                        const void* bias, void* out, const kael_matmul_sizes* sizes) {
    return plugin::guarded("cuda.matmul_bias", [&] {
        use_device(device);
        if (kernels::check_matmul_call(dtype, a, b, out, sizes, true)) {
            if (bias == nullptr) {
                plugin::invalid("matmul_bias: null bias");
            }
            multiply(dtype, a, b, bias, out, *sizes);
        }
    });
}

}  // namespace kael::cuda
