// On the GPU machine: for the f32 GEMMs of one GPT-2 small training step (4096 tokens),
// row-major as kael issues them, how fast cublasSgemm, cuBLASLt's first heuristic choice and
// the best of its candidates are; then whether cuBLASLt has f32 algorithms for the epilogues a
// training step could fold in (bias gradients, GELU with its pre-activation, GELU's gradient,
// a residual as C), and what they cost beside the plain product; last, the vocabulary GEMMs with
// the 50257-wide operand's row stride padded (logits in a wider buffer). A measurement, not a
// test. Last, each linear's two backward GEMMs (dX, dW) one after the other and on two streams
// at once (fork and join by events), as a backward pass could issue them.
//   nvcc -O2 -std=c++20 -arch=sm_90 scripts/cuda/gemm_candidates.cu -lcublas -lcublasLt -o gc &&
//   ./gc
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                  \
    do {                                                                             \
        if (int status_ = static_cast<int>(call); status_ != 0) {                    \
            std::printf("%s failed with %d at line %d\n", #call, status_, __LINE__); \
            std::exit(1);                                                            \
        }                                                                            \
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

struct Buffers {
    float *a, *b, *c, *d, *aux, *bias;
    void* workspace;
    size_t workspace_bytes = size_t{64} << 20;
};

struct Timing {
    int found = 0;
    float first = 0, best = 0;
    int best_index = -1;
};

// Column-major out^T[n, m] = op(b)^T[n, k] op(a)^T[k, m], as kael's cuBLAS calls, with the
// given epilogue; beta 1 reads C (a residual), else C is not read.
Timing time_lt(cublasLtHandle_t lt, const Shape& s, Buffers& buffers, cublasLtEpilogue_t epilogue,
               bool residual) {
    cublasOperation_t b_op = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t a_op = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = s.b_transposed ? s.k : s.n, lda = s.a_transposed ? s.m : s.k;
    cublasLtMatmulDesc_t desc;
    CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &b_op, sizeof b_op));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &a_op, sizeof a_op));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof epilogue));
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &buffers.bias,
                                             sizeof buffers.bias));
        const cudaDataType_t f32 = CUDA_R_32F;
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &f32,
                                             sizeof f32));
    }
    if (epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
        const int64_t ld = s.n;
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                             &buffers.aux, sizeof buffers.aux));
        CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld,
                                             sizeof ld));
    }
    cublasLtMatrixLayout_t b_layout, a_layout, out_layout;
    CHECK(cublasLtMatrixLayoutCreate(&b_layout, CUDA_R_32F, s.b_transposed ? s.k : s.n,
                                     s.b_transposed ? s.n : s.k, ldb));
    CHECK(cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_32F, s.a_transposed ? s.m : s.k,
                                     s.a_transposed ? s.k : s.m, lda));
    CHECK(cublasLtMatrixLayoutCreate(&out_layout, CUDA_R_32F, s.n, s.m, s.n));
    cublasLtMatmulPreference_t preference;
    CHECK(cublasLtMatmulPreferenceCreate(&preference));
    CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &buffers.workspace_bytes,
                                               sizeof buffers.workspace_bytes));
    cublasLtMatmulHeuristicResult_t results[32];
    Timing timing;
    if (cublasLtMatmulAlgoGetHeuristic(lt, desc, b_layout, a_layout, out_layout, out_layout,
                                       preference, 32, results, &timing.found) != 0) {
        timing.found = 0;
    }
    const float one = 1, zero = 0;
    timing.best = 1e9F;
    for (int i = 0; i < timing.found; ++i) {
        const float time = milliseconds([&] {
            cublasLtMatmul(lt, desc, &one, buffers.b, b_layout, buffers.a, a_layout,
                           residual ? &one : &zero, buffers.c, out_layout, buffers.d, out_layout,
                           &results[i].algo, buffers.workspace, buffers.workspace_bytes, nullptr);
        });
        if (cudaGetLastError() != cudaSuccess) continue;
        if (i == 0) timing.first = time;
        if (time < timing.best) timing.best = time, timing.best_index = i;
    }
    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatrixLayoutDestroy(b_layout);
    cublasLtMatrixLayoutDestroy(a_layout);
    cublasLtMatrixLayoutDestroy(out_layout);
    cublasLtMatmulDescDestroy(desc);
    return timing;
}

// cublasSgemm for s with the row strides given (0: the packed one).
float sgemm_ms(cublasHandle_t handle, const Shape& s, const Buffers& buffers, int lda, int ldb,
               int ldc) {
    cublasOperation_t b_op = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t a_op = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (ldb == 0) ldb = s.b_transposed ? s.k : s.n;
    if (lda == 0) lda = s.a_transposed ? s.m : s.k;
    if (ldc == 0) ldc = s.n;
    const float one = 1, zero = 0;
    return milliseconds([&] {
        cublasSgemm(handle, b_op, a_op, s.n, s.m, s.k, &one, buffers.b, ldb, buffers.a, lda, &zero,
                    buffers.c, ldc);
    });
}

// The GEMM of s on handle's stream into out, row strides packed.
void sgemm_into(cublasHandle_t handle, const Shape& s, const float* a, const float* b,
                float* out) {
    cublasOperation_t b_op = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t a_op = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = s.b_transposed ? s.k : s.n, lda = s.a_transposed ? s.m : s.k;
    const float one = 1, zero = 0;
    cublasSgemm(handle, b_op, a_op, s.n, s.m, s.k, &one, b, ldb, a, lda, &zero, out, s.n);
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
    const size_t elements = size_t{50304} * 4096;
    Buffers buffers;
    for (float** buffer : {&buffers.a, &buffers.b, &buffers.c, &buffers.d, &buffers.aux}) {
        CHECK(cudaMalloc(buffer, elements * 4));
        CHECK(cudaMemset(*buffer, 0, elements * 4));
    }
    CHECK(cudaMalloc(&buffers.bias, 65536 * 4));
    CHECK(cudaMalloc(&buffers.workspace, buffers.workspace_bytes));
    cublasHandle_t handle;
    CHECK(cublasCreate(&handle));
    cublasLtHandle_t lt;
    CHECK(cublasLtCreate(&lt));
    double sgemm_total = 0, first_total = 0, best_total = 0;
    for (const Shape& s : shapes) {
        cublasOperation_t b_op = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasOperation_t a_op = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int ldb = s.b_transposed ? s.k : s.n, lda = s.a_transposed ? s.m : s.k;
        const float one = 1, zero = 0;
        const float sgemm = milliseconds([&] {
            cublasSgemm(handle, b_op, a_op, s.n, s.m, s.k, &one, buffers.b, ldb, buffers.a, lda,
                        &zero, buffers.c, s.n);
        });
        const Timing lt_plain = time_lt(lt, s, buffers, CUBLASLT_EPILOGUE_DEFAULT, false);
        std::printf(
            "%-9s m %6d n %6d k %6d  sgemm %8.1f us  lt#0 %8.1f us  best lt#%d of %d "
            "%8.1f us  gain over lt#0 %.3f\n",
            s.name, s.m, s.n, s.k, sgemm * 1e3, lt_plain.first * 1e3, lt_plain.best_index,
            lt_plain.found, lt_plain.best * 1e3, lt_plain.first / lt_plain.best);
        sgemm_total += s.per_step * sgemm;
        first_total += s.per_step * lt_plain.first;
        best_total += s.per_step * lt_plain.best;
    }
    std::printf(
        "one step's GEMMs: cublasSgemm %.2f ms, cuBLASLt first choice %.2f ms, best "
        "candidates %.2f ms\n",
        sgemm_total, first_total, best_total);
    struct Probe {
        int shape;
        cublasLtEpilogue_t epilogue;
        bool residual;
        const char* what;
    };
    const Probe probes[] = {
        {2, CUBLASLT_EPILOGUE_BIAS, false, "fc fwd + bias"},
        {2, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, false, "fc fwd + bias, gelu, aux"},
        {1, CUBLASLT_EPILOGUE_BIAS, true, "proj fwd + bias + residual C"},
        {3, CUBLASLT_EPILOGUE_BIAS, true, "fc2 fwd + bias + residual C"},
        {8, CUBLASLT_EPILOGUE_DGELU_BGRAD, false, "fc2 dX, dgelu + bias grad"},
        {10, CUBLASLT_EPILOGUE_BGRADB, false, "qkv dW + bias grad"},
        {11, CUBLASLT_EPILOGUE_BGRADB, false, "proj dW + bias grad"},
        {12, CUBLASLT_EPILOGUE_BGRADB, false, "fc dW + bias grad"},
        {13, CUBLASLT_EPILOGUE_BGRADB, false, "fc2 dW + bias grad"},
        {10, CUBLASLT_EPILOGUE_BGRADA, false, "qkv dW + bias grad A"},
    };
    for (const Probe& probe : probes) {
        const Shape& s = shapes[probe.shape];
        const Timing plain = time_lt(lt, s, buffers, CUBLASLT_EPILOGUE_DEFAULT, false);
        const Timing fused = time_lt(lt, s, buffers, probe.epilogue, probe.residual);
        std::printf(
            "%-32s %2d algorithms  #0 %8.1f us  best #%d %8.1f us  (plain #0 %8.1f, best "
            "%8.1f us)\n",
            probe.what, fused.found, fused.first * 1e3, fused.best_index, fused.best * 1e3,
            plain.first * 1e3, plain.best * 1e3);
    }
    // The vocabulary GEMMs: the operand 50257 wide (logits or their gradient) with its row
    // stride rounded up to a multiple of pad, and with the vocabulary itself padded to 50304.
    for (const int index : {4, 9, 14}) {
        const Shape& s = shapes[index];
        std::printf("%-9s packed %8.1f us", s.name, sgemm_ms(handle, s, buffers, 0, 0, 0) * 1e3);
        for (const int pad : {4, 32, 64}) {
            const int ld = (50257 + pad - 1) / pad * pad;
            const float ms = index == 4    ? sgemm_ms(handle, s, buffers, 0, 0, ld)
                             : index == 9  ? sgemm_ms(handle, s, buffers, ld, 0, 0)
                                           : sgemm_ms(handle, s, buffers, ld, 0, 0);
            std::printf("  ld %d %8.1f us", ld, ms * 1e3);
        }
        Shape wide = s;
        (index == 4 ? wide.n : index == 9 ? wide.k : wide.m) = 50304;
        std::printf("  vocab 50304 %8.1f us\n", sgemm_ms(handle, wide, buffers, 0, 0, 0) * 1e3);
    }
    cudaStream_t side;
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cublasHandle_t side_handle;
    CHECK(cublasCreate(&side_handle));
    CHECK(cublasSetStream(side_handle, side));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    double serial_total = 0, paired_total = 0;
    for (const int dx : {5, 6, 7, 8, 9}) {
        const Shape& x = shapes[dx];
        const Shape& w = shapes[dx + 5];
        const float serial = milliseconds([&] {
            sgemm_into(handle, x, buffers.a, buffers.b, buffers.c);
            sgemm_into(handle, w, buffers.a, buffers.b, buffers.d);
        });
        const float paired = milliseconds([&] {
            cudaEventRecord(fork, nullptr);
            cudaStreamWaitEvent(side, fork, 0);
            sgemm_into(side_handle, w, buffers.a, buffers.b, buffers.d);
            sgemm_into(handle, x, buffers.a, buffers.b, buffers.c);
            cudaEventRecord(join, side);
            cudaStreamWaitEvent(nullptr, join, 0);
        });
        std::printf("%-9s + %-9s one stream %8.1f us  two streams %8.1f us  gain %.3f\n", x.name,
                    w.name, serial * 1e3, paired * 1e3, serial / paired);
        serial_total += x.per_step * serial;
        paired_total += x.per_step * paired;
    }
    std::printf("one step's backward GEMMs: one stream %.2f ms, two streams %.2f ms\n",
                serial_total, paired_total);
}
