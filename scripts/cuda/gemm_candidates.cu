// On the GPU machine: how much faster than cublasSgemm's own choice the best of cuBLASLt's
// heuristic candidates is, for the f32 GEMMs of one GPT-2 small training step (4096 tokens),
// row-major as kael issues them. A measurement, not a test.
//   nvcc -O2 -std=c++20 -arch=sm_90 scripts/cuda/gemm_candidates.cu -lcublas -lcublasLt -o gc && ./gc
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                              \
    do {                                                                         \
        if (int status_ = static_cast<int>(call); status_ != 0) {                \
            std::printf("%s failed with %d at line %d\n", #call, status_, __LINE__); \
            std::exit(1);                                                        \
        }                                                                        \
    } while (0)

struct Shape {
    const char* name;
    int m, n, k;  // row-major out[m, n] = op(a)[m, k] op(b)[k, n]
    bool a_transposed, b_transposed;
    int per_step;  // how often one step runs it
};

template <typename Run>
float milliseconds(Run&& run) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int i = 0; i < 2; ++i) run();
    cudaEventRecord(start);
    for (int i = 0; i < 5; ++i) run();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return ms / 5;
}

int main() {
    const int M = 4096;
    const std::vector<Shape> shapes = {
        {"qkv fwd", M, 2304, 768, false, true, 12},   {"proj fwd", M, 768, 768, false, true, 12},
        {"fc fwd", M, 3072, 768, false, true, 12},    {"fc2 fwd", M, 768, 3072, false, true, 12},
        {"head fwd", M, 50257, 768, false, true, 1},  {"qkv dX", M, 768, 2304, false, false, 12},
        {"proj dX", M, 768, 768, false, false, 12},   {"fc dX", M, 768, 3072, false, false, 12},
        {"fc2 dX", M, 3072, 768, false, false, 12},   {"head dX", M, 768, 50257, false, false, 1},
        {"qkv dW", 2304, 768, M, true, false, 12},    {"proj dW", 768, 768, M, true, false, 12},
        {"fc dW", 3072, 768, M, true, false, 12},     {"fc2 dW", 768, 3072, M, true, false, 12},
        {"head dW", 50257, 768, M, true, false, 1}};
    const size_t elements = size_t{50257} * 4096;
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, elements * 4));
    CHECK(cudaMalloc(&b, elements * 4));
    CHECK(cudaMalloc(&c, elements * 4));
    CHECK(cudaMemset(a, 0, elements * 4));
    CHECK(cudaMemset(b, 0, elements * 4));
    size_t workspace_bytes = size_t{64} << 20;
    void* workspace;
    CHECK(cudaMalloc(&workspace, workspace_bytes));
    cublasHandle_t handle;
    CHECK(cublasCreate(&handle));
    cublasLtHandle_t lt;
    CHECK(cublasLtCreate(&lt));
    double sgemm_total = 0, best_total = 0;
    for (const Shape& s : shapes) {
        // Column-major out^T[n, m] = op(b)^T[n, k] op(a)^T[k, m], as kael's cuBLAS calls.
        cublasOperation_t b_op = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasOperation_t a_op = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int ldb = s.b_transposed ? s.k : s.n, lda = s.a_transposed ? s.m : s.k;
        const float one = 1, zero = 0;
        const float sgemm = milliseconds([&] {
            cublasSgemm(handle, b_op, a_op, s.n, s.m, s.k, &one, b, ldb, a, lda, &zero, c, s.n);
        });
        cublasLtMatmulDesc_t desc;
        CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &b_op, sizeof b_op));
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &a_op, sizeof a_op));
        cublasLtMatrixLayout_t b_layout, a_layout, out_layout;
        CHECK(cublasLtMatrixLayoutCreate(&b_layout, CUDA_R_32F, s.b_transposed ? s.k : s.n,
                                         s.b_transposed ? s.n : s.k, ldb));
        CHECK(cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_32F, s.a_transposed ? s.m : s.k,
                                         s.a_transposed ? s.k : s.m, lda));
        CHECK(cublasLtMatrixLayoutCreate(&out_layout, CUDA_R_32F, s.n, s.m, s.n));
        cublasLtMatmulPreference_t preference;
        CHECK(cublasLtMatmulPreferenceCreate(&preference));
        CHECK(cublasLtMatmulPreferenceSetAttribute(
            preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
            sizeof workspace_bytes));
        cublasLtMatmulHeuristicResult_t results[32];
        int found = 0;
        CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, b_layout, a_layout, out_layout, out_layout,
                                             preference, 32, results, &found));
        float best = 1e9F, first = 0;
        int best_index = -1;
        for (int i = 0; i < found; ++i) {
            const float time = milliseconds([&] {
                cublasLtMatmul(lt, desc, &one, b, b_layout, a, a_layout, &zero, c, out_layout, c,
                               out_layout, &results[i].algo, workspace, workspace_bytes, nullptr);
            });
            if (cudaGetLastError() != cudaSuccess) continue;
            if (i == 0) first = time;
            if (time < best) best = time, best_index = i;
        }
        std::printf("%-9s m %6d n %6d k %6d  sgemm %8.1f us  lt#0 %8.1f us  best lt#%d of %d "
                    "%8.1f us  gain %.3f\n",
                    s.name, s.m, s.n, s.k, sgemm * 1e3, first * 1e3, best_index, found,
                    best * 1e3, sgemm / best);
        sgemm_total += s.per_step * sgemm;
        best_total += s.per_step * (best < sgemm ? best : sgemm);
    }
    std::printf("one step's GEMMs: cublasSgemm %.2f ms, best candidates %.2f ms\n", sgemm_total,
                best_total);
}
