#pragma once
// Device scratch for one call, and the pitched copies that stage a matrix through it (a library
// that wants padded rows, as cuBLASLt's tensor-core kernels do: cublaslt_matmul.cpp).
#include <cstddef>
#include <cstdint>

#include "cuda_context.h"
#include "kael/plugin_api.h"

namespace kael::cuda {

// Device scratch for one call, freed in stream order after it (kept with the graph while this
// thread records one).
class Scratch {
public:
    explicit Scratch(std::size_t bytes)
        : block_(bytes > 0 ? device_malloc(static_cast<std::int64_t>(bytes)) : nullptr) {}
    ~Scratch() { device_free(block_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    [[nodiscard]] void* get() const { return block_; }

private:
    void* block_;
};

// Copies a rows x columns matrix between two row pitches (in elements) on the launch stream,
// through the elementwise copy kernels (elementwise.cu).
void copy_matrix(kael_dtype dtype, void* target, std::int64_t target_leading, const void* source,
                 std::int64_t source_leading, std::int64_t rows, std::int64_t columns);

}  // namespace kael::cuda
