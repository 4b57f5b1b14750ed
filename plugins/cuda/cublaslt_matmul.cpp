#include "cublaslt_matmul.h"

#include <cublasLt.h>  // types and enums only: every function comes from dlsym
#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cublas_loader.h"
#include "cuda_context.h"
#include "kael/kernels/abi_checks.h"
#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/matmul_layout.h"
#include "staging.h"

namespace kael::cuda {
namespace {

struct CublasLt {
    bool usable = false;
    decltype(&cublasLtCreate) create = nullptr;
    decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
    decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
    decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
    decltype(&cublasLtMatmul) matmul = nullptr;
};

CublasLt load() {
    CublasLt lt;
    if (env_is_zero("KAEL_CUDA_CUBLASLT")) {
        return lt;
    }
    const std::string file = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    std::string why;
    void* library = open_cuda_library(file, why);
    if (library == nullptr) {
        return lt;  // cuBLAS alone still serves every product
    }
    std::string missing;
    resolve(library, "cublasLtCreate", lt.create, missing);
    resolve(library, "cublasLtMatmulDescCreate", lt.desc_create, missing);
    resolve(library, "cublasLtMatmulDescSetAttribute", lt.desc_set, missing);
    resolve(library, "cublasLtMatrixLayoutCreate", lt.layout_create, missing);
    resolve(library, "cublasLtMatmulPreferenceCreate", lt.preference_create, missing);
    resolve(library, "cublasLtMatmulPreferenceSetAttribute", lt.preference_set, missing);
    resolve(library, "cublasLtMatmulAlgoGetHeuristic", lt.heuristic, missing);
    resolve(library, "cublasLtMatmul", lt.matmul, missing);
    lt.usable = missing.empty();  // never dlclosed: plans made from it live until exit
    return lt;
}

const CublasLt& cublaslt() {
    static const CublasLt loaded = load();
    return loaded;
}

void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw plugin::StatusError(status == CUBLAS_STATUS_ALLOC_FAILED ? KAEL_STATUS_OUT_OF_MEMORY
                                                                       : KAEL_STATUS_DEVICE_ERROR,
                                  std::string("cuBLASLt error: ") + call + " failed with status " +
                                      std::to_string(static_cast<int>(status)));
    }
}

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // what cuBLAS asks for on Hopper

constexpr int kCandidates = 8;  // the heuristic's first eight: where the fastest was on GPT-2

// One product shape's descriptors and algorithm; found is false when cuBLASLt offered none.
// candidates holds the heuristic's other offers until the first call times them (tuned).
struct Plan {
    bool found = false;
    bool tuned = false;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t b_layout = nullptr;  // cuBLASLt's A: kael's b (column-major view)
    cublasLtMatrixLayout_t a_layout = nullptr;  // cuBLASLt's B: kael's a
    cublasLtMatrixLayout_t out_layout = nullptr;
    cublasLtMatmulAlgo_t algo{};
    std::vector<cublasLtMatmulAlgo_t> candidates;
    std::mutex mutex;  // the bias pointer is an attribute of the shared descriptor
};

// KAEL_CUDA_GEMM_TUNE: 0 keeps the heuristic's first choice, `all` times every shape's
// candidates, and by default only products of at least 2^27 multiply-adds are timed (a few
// milliseconds once per shape, where a better algorithm saves up to 8%).
enum class Tuning { off, large, all };

Tuning tuning() {
    static const Tuning chosen = [] {
        const char* setting = std::getenv("KAEL_CUDA_GEMM_TUNE");
        if (setting != nullptr && std::strcmp(setting, "0") == 0) {
            return Tuning::off;
        }
        if (setting != nullptr && std::strcmp(setting, "all") == 0) {
            return Tuning::all;
        }
        return Tuning::large;
    }();
    return chosen;
}

bool worth_tuning(const kael_matmul_sizes& s) {
    const Tuning chosen = tuning();
    const double multiply_adds =
        static_cast<double>(s.rows) * static_cast<double>(s.columns) * static_cast<double>(s.inner);
    return chosen == Tuning::all || (chosen == Tuning::large && multiply_adds >= 0x1p27);
}

using PlanKey = std::tuple<std::int32_t, int, std::int64_t, std::int64_t, std::int64_t, int, int,
                           bool, std::uint32_t, cublasComputeType_t>;

// The largest power of two up to 256 that divides address: cuBLASLt's heuristic otherwise
// assumes 256-byte aligned operands, and a view at an odd offset would get a kernel that
// faults on it.
std::uint32_t alignment_of(const void* address) {
    std::uint32_t alignment = 256;
    while (alignment > 1 && reinterpret_cast<std::uintptr_t>(address) % alignment != 0) {
        alignment /= 2;
    }
    return alignment;
}

// What cuBLASLt is given: the product's sizes (inner and columns possibly padded) and the leading
// dimensions (elements) of its A (kael's b), B (kael's a) and D (out), the operands' own or those
// of scratch copies.
struct Leadings {
    std::int64_t b;
    std::int64_t a;
    std::int64_t out;
};

struct Staging {
    kael_matmul_sizes sizes;
    Leadings leadings;
    bool b = false;  // copied into scratch
    bool a = false;
    bool out = false;
};

bool padding_declined() {
    static const bool declined = env_is_zero("KAEL_CUDA_GEMM_PAD");
    return declined;
}

// cuBLASLt's tensor-core kernels need the contiguous extents and leading dimensions of whole 16
// bytes: an operand of odd width, as GPT-2's 50257 logits, gets the old align-1 kernels at a fifth
// of their speed, and padding only the rows' pitch is not enough where the odd extent is the inner
// one or out's columns (measured on an H100). So, as torch.compile's pad_mm does, a product with
// at least 256 multiply-adds per copied element pads inner and columns with zeros to whole 16
// bytes in scratch copies whose rows are 128-byte aligned, and copies out's own columns back
// (KAEL_CUDA_GEMM_PAD=0 declines). With a residual (C) out is never staged: its columns stay.
Staging staging_for(kael_dtype dtype, const kael_matmul_sizes& s, bool residual) {
    const kernels::StoredMatrix b = kernels::stored_b(s);
    const kernels::StoredMatrix a = kernels::stored_a(s);
    const Staging own{s, {b.leading, a.leading, s.columns}};
    const std::int64_t size = kernels::dtype_size(dtype);
    const bool tensor_cores =
        dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16 ||
        (dtype == KAEL_DTYPE_F32 && kernels::matmul_precision(s) != KAEL_MATMUL_PRECISION_HIGHEST);
    const auto misaligned = [&](std::int64_t extent) { return extent * size % 16 != 0; };
    if (!tensor_cores || padding_declined() || (residual && misaligned(s.columns)) ||
        !(misaligned(b.leading) || misaligned(a.leading) || misaligned(s.columns))) {
        return own;
    }
    const std::int64_t granule = 16 / size;
    const auto whole = [&](std::int64_t extent) {
        return (extent + granule - 1) / granule * granule;
    };
    Staging staged = own;
    // inner is padded where an operand stores it contiguously (zeros add nothing to the sums)
    if (s.a_transposed == 0 || s.b_transposed != 0) {
        staged.sizes.inner = whole(s.inner);
    }
    staged.sizes.columns = whole(s.columns);
    const kernels::StoredMatrix padded_b = kernels::stored_b(staged.sizes);
    const kernels::StoredMatrix padded_a = kernels::stored_a(staged.sizes);
    const std::int64_t unit = 128 / size;
    const auto pitch = [&](std::int64_t leading) { return (leading + unit - 1) / unit * unit; };
    const auto changed = [&](const kernels::StoredMatrix& from, const kernels::StoredMatrix& to) {
        return misaligned(from.leading) || from.leading != to.leading ||
               from.stored_rows != to.stored_rows;
    };
    double copied = 0;
    staged.b = changed(b, padded_b);
    staged.a = changed(a, padded_a);
    staged.out = staged.sizes.columns != s.columns;
    if (staged.b) {
        staged.leadings.b = pitch(padded_b.leading);
        copied += static_cast<double>(b.stored_rows * b.leading);
    }
    if (staged.a) {
        staged.leadings.a = pitch(padded_a.leading);
        copied += static_cast<double>(a.stored_rows * a.leading);
    }
    if (staged.out) {
        staged.leadings.out = pitch(staged.sizes.columns);
        copied += static_cast<double>(s.rows * s.columns);
    }
    const double multiply_adds =
        static_cast<double>(s.rows) * static_cast<double>(s.columns) * static_cast<double>(s.inner);
    if (multiply_adds < 0x1p27 || multiply_adds < 256 * copied) {
        return own;
    }
    return staged;
}

// A stored matrix copied into scratch of `leading` elements a row and target.stored_rows rows,
// the rest zero: pads of inner must add nothing, and no pad is left uninitialised.
void stage_matrix(kael_dtype dtype, void* scratch, std::int64_t leading,
                  const kernels::StoredMatrix& target, const void* source,
                  const kernels::StoredMatrix& from) {
    const auto size = static_cast<std::size_t>(kernels::dtype_size(dtype));
    const auto u = [](std::int64_t value) { return static_cast<std::size_t>(value); };
    if (leading > from.leading) {  // the columns past the source's, in its rows
        KAEL_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(scratch) + u(from.leading) * size,
                                          u(leading) * size, 0, u(leading - from.leading) * size,
                                          u(from.stored_rows), launch_stream()));
    }
    if (target.stored_rows > from.stored_rows) {  // whole rows past the source's
        KAEL_CUDA_CHECK(cudaMemsetAsync(
            static_cast<char*>(scratch) + u(from.stored_rows) * u(leading) * size, 0,
            u(target.stored_rows - from.stored_rows) * u(leading) * size, launch_stream()));
    }
    copy_matrix(dtype, scratch, leading, source, from.leading, from.stored_rows, from.leading);
}

struct DeviceState {
    cublasLtHandle_t handle = nullptr;
    void* workspace = nullptr;
};

// Row-major out = op(a) op(b) is column-major out^T = op(b)^T op(a)^T, as in cublas_loader.cpp.
void make_plan(Plan& plan, const DeviceState& state, kael_dtype dtype, const kael_matmul_sizes& s,
               bool with_bias, const std::uint32_t (&alignments)[3], const Leadings& leadings) {
    // s: the sizes cuBLASLt multiplies (staging_for's, padded where operands were staged)
    const CublasLt& lt = cublaslt();
    const cudaDataType_t type = cuda_data_type(dtype);
    // Scales (alpha, beta) are f64 for f64 and f32 for the rest, which accumulate in f32.
    check(lt.desc_create(&plan.desc, compute_type(dtype, kernels::matmul_precision(s)),
                         dtype == KAEL_DTYPE_F64 ? CUDA_R_64F : CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    const cublasOperation_t b_op = s.b_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t a_op = s.a_transposed != 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(lt.desc_set(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &b_op, sizeof b_op), "TRANSA");
    check(lt.desc_set(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &a_op, sizeof a_op), "TRANSB");
    if (with_bias) {
        const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        check(lt.desc_set(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
              "EPILOGUE");
    }
    const auto u = [](std::int64_t value) { return static_cast<std::uint64_t>(value); };
    // Column-major layouts of the same bytes: a stored row is a column, leading elements long.
    const kernels::StoredMatrix stored_b = kernels::stored_b(s);
    const kernels::StoredMatrix stored_a = kernels::stored_a(s);
    check(lt.layout_create(&plan.b_layout, type, u(stored_b.leading), u(stored_b.stored_rows),
                           leadings.b),
          "cublasLtMatrixLayoutCreate");
    check(lt.layout_create(&plan.a_layout, type, u(stored_a.leading), u(stored_a.stored_rows),
                           leadings.a),
          "cublasLtMatrixLayoutCreate");
    check(lt.layout_create(&plan.out_layout, type, u(s.columns), u(s.rows), leadings.out),
          "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t preference = nullptr;
    check(lt.preference_create(&preference), "cublasLtMatmulPreferenceCreate");
    const std::size_t workspace = state.workspace != nullptr ? kWorkspaceBytes : 0;
    check(lt.preference_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                            sizeof workspace),
          "MAX_WORKSPACE_BYTES");
    const cublasLtMatmulPreferenceAttributes_t aligned[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    const std::uint32_t values[] = {alignments[0], alignments[1], alignments[2], alignments[2]};
    for (int i = 0; i < 4; ++i) {
        check(lt.preference_set(preference, aligned[i], &values[i], sizeof values[i]),
              "MIN_ALIGNMENT");
    }
    if (dtype == KAEL_DTYPE_BF16 || dtype == KAEL_DTYPE_F16) {
        // Split-K partial sums in f32, never rounded to bf16/f16 between the parts (measured on
        // an H100: an 8x16x4 bf16 product was 1.4 half-steps off its f32 result).
        const std::uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
        check(lt.preference_set(preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                sizeof schemes),
              "REDUCTION_SCHEME_MASK");
    }
    cublasLtMatmulHeuristicResult_t results[kCandidates]{};
    int returned = 0;
    const int wanted = worth_tuning(s) ? kCandidates : 1;
    const cublasStatus_t status =
        lt.heuristic(state.handle, plan.desc, plan.b_layout, plan.a_layout, plan.out_layout,
                     plan.out_layout, preference, wanted, results, &returned);
    // The preference is a few bytes kept with the process's plans rather than destroyed.
    plan.found = status == CUBLAS_STATUS_SUCCESS && returned > 0;
    plan.algo = results[0].algo;
    for (int i = 1; plan.found && i < returned; ++i) {
        if (results[i].state == CUBLAS_STATUS_SUCCESS) {
            plan.candidates.push_back(results[i].algo);
        }
    }
    plan.tuned = plan.candidates.empty();
}

struct Operands {
    const void* alpha;
    const void* beta;
    const void* a;
    const void* b;
    void* out;
    const void* c;  // out = alpha * a x b + beta * c (c is out where beta is 0)
};

cublasStatus_t run(const Plan& plan, const DeviceState& state, const Operands& o,
                   const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
    return cublaslt().matmul(state.handle, plan.desc, o.alpha, o.b, plan.b_layout, o.a,
                             plan.a_layout, o.beta, o.c, plan.out_layout, o.out, plan.out_layout,
                             &algo, state.workspace, kWorkspaceBytes, stream);
}

// Times the first choice and each candidate (one warm-up run, then two timed) and keeps the
// fastest, as PyTorch's TunableOp does. out is overwritten each run (beta is 0), so the call's
// own run after this leaves the right product. Never while a graph is recorded: timing syncs.
void tune(Plan& plan, const DeviceState& state, const Operands& o) {
    if (recording_graph()) {
        return;  // a later eager call tunes; the graph keeps the first choice
    }
    const cudaStream_t stream = launch_stream();
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    KAEL_CUDA_CHECK(cudaEventCreate(&start));
    KAEL_CUDA_CHECK(cudaEventCreate(&stop));
    float best_ms = 0;
    cublasLtMatmulAlgo_t best = plan.algo;
    std::vector<cublasLtMatmulAlgo_t> tried{plan.algo};
    tried.insert(tried.end(), plan.candidates.begin(), plan.candidates.end());
    for (std::size_t i = 0; i < tried.size(); ++i) {
        if (run(plan, state, o, tried[i], stream) != CUBLAS_STATUS_SUCCESS) {
            continue;  // an offer that does not run here is simply not chosen
        }
        KAEL_CUDA_CHECK(cudaEventRecord(start, stream));
        bool ran = true;
        for (int rep = 0; rep < 2 && ran; ++rep) {
            ran = run(plan, state, o, tried[i], stream) == CUBLAS_STATUS_SUCCESS;
        }
        KAEL_CUDA_CHECK(cudaEventRecord(stop, stream));
        KAEL_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        KAEL_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (ran && (i == 0 || ms < best_ms)) {
            best_ms = ms;
            best = tried[i];
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    plan.algo = best;
    plan.candidates.clear();
    plan.tuned = true;
}

}  // namespace

bool cublaslt_matmul(kael_dtype dtype, const void* a, const void* b, const void* bias, void* out,
                     const kael_matmul_sizes& s, const void* residual) {
    const CublasLt& lt = cublaslt();
    if (!lt.usable || s.batches != 1 || s.inner <= 0 || !cublas_fits(dtype, s)) {
        return false;
    }
    // A residual is C with beta 1; it must not be out (tuning runs the product several times)
    // and must be aligned at least as out, whose alignment picks the algorithm.
    if (residual != nullptr && (residual == out || alignment_of(residual) < alignment_of(out))) {
        return false;
    }
    static std::mutex mutex;
    static std::map<std::int32_t, DeviceState> devices;
    static std::map<PlanKey, Plan> plans;
    const std::int32_t device = current_device();
    const bool with_bias = bias != nullptr;
    if (with_bias && alignment_of(bias) < 16) {
        return false;  // the epilogue reads the bias in 16-byte units
    }
    // Operands of odd widths go through zero-padded scratch (staging_for).
    const Staging staging = staging_for(dtype, s, residual != nullptr);
    const kael_matmul_sizes& padded = staging.sizes;
    const Leadings& leadings = staging.leadings;
    const kernels::StoredMatrix stored_b = kernels::stored_b(s);
    const kernels::StoredMatrix stored_a = kernels::stored_a(s);
    const kernels::StoredMatrix padded_b = kernels::stored_b(padded);
    const kernels::StoredMatrix padded_a = kernels::stored_a(padded);
    const std::int64_t size = kernels::dtype_size(dtype);
    const auto bytes = [&](bool staged, std::int64_t rows, std::int64_t leading) {
        return static_cast<std::size_t>(staged ? rows * leading * size : 0);
    };
    const Scratch staged_b(bytes(staging.b, padded_b.stored_rows, leadings.b));
    const Scratch staged_a(bytes(staging.a, padded_a.stored_rows, leadings.a));
    const Scratch staged_out(bytes(staging.out, s.rows, leadings.out));
    // The bias epilogue reads padded.columns values: a padded product's bias is copied, zeros
    // after.
    const bool bias_padded = with_bias && padded.columns != s.columns;
    const Scratch staged_bias(bytes(bias_padded, 1, padded.columns));
    const void* const b_used = staging.b ? staged_b.get() : b;
    const void* const a_used = staging.a ? staged_a.get() : a;
    void* const out_used = staging.out ? staged_out.get() : out;
    const void* const bias_used = bias_padded ? staged_bias.get() : bias;
    // Alignments of cuBLASLt's A (kael's b), B (kael's a) and C = D (out).
    const std::uint32_t alignments[3] = {alignment_of(b_used), alignment_of(a_used),
                                         alignment_of(out_used)};
    const std::uint32_t alignment_key = alignments[0] | alignments[1] << 9U | alignments[2] << 18U |
                                        (residual != nullptr ? 1U : 0U) << 27U;
    Plan* plan = nullptr;
    DeviceState state;
    {
        const std::lock_guard lock(mutex);
        DeviceState& held = devices[device];
        if (held.handle == nullptr) {
            check(lt.create(&held.handle), "cublasLtCreate");
            held.workspace = device_malloc(static_cast<std::int64_t>(kWorkspaceBytes));
        }
        state = held;
        const PlanKey key{device,         static_cast<int>(dtype),
                          s.rows,         s.columns,
                          s.inner,        s.a_transposed,
                          s.b_transposed, with_bias,
                          alignment_key,  compute_type(dtype, kernels::matmul_precision(s))};
        auto found = plans.find(key);
        if (found == plans.end()) {
            found = plans.try_emplace(key).first;
            make_plan(found->second, state, dtype, padded, with_bias, alignments, leadings);
        }
        plan = &found->second;
    }
    if (!plan->found) {
        return false;
    }
    const double one64 = 1;
    const double zero64 = 0;
    const float one32 = 1;
    const float zero32 = 0;
    const bool f32 = dtype != KAEL_DTYPE_F64;
    const std::lock_guard lock(plan->mutex);
    if (with_bias) {
        check(lt.desc_set(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_used,
                          sizeof bias_used),
              "BIAS_POINTER");
    }
    const void* one = f32 ? static_cast<const void*>(&one32) : &one64;
    const void* zero = f32 ? static_cast<const void*>(&zero32) : &zero64;
    if (staging.b) {
        stage_matrix(dtype, staged_b.get(), leadings.b, padded_b, b, stored_b);
    }
    if (staging.a) {
        stage_matrix(dtype, staged_a.get(), leadings.a, padded_a, a, stored_a);
    }
    if (bias_padded) {  // the bias, then zeros in the padded columns
        const auto length = static_cast<std::size_t>(s.columns * size);
        KAEL_CUDA_CHECK(cudaMemcpyAsync(staged_bias.get(), bias, length, cudaMemcpyDeviceToDevice,
                                        launch_stream()));
        KAEL_CUDA_CHECK(cudaMemsetAsync(
            static_cast<char*>(staged_bias.get()) + length, 0,
            static_cast<std::size_t>((padded.columns - s.columns) * size), launch_stream()));
    }
    const Operands operands{one,      residual != nullptr ? one : zero,         a_used, b_used,
                            out_used, residual != nullptr ? residual : out_used};
    if (!plan->tuned) {
        tune(*plan, state, operands);
    }
    check(run(*plan, state, operands, plan->algo, launch_stream()), "cublasLtMatmul");
    if (staging.out) {
        copy_matrix(dtype, out, s.columns, out_used, leadings.out, s.rows, s.columns);
    }
    return true;
}

}  // namespace kael::cuda
