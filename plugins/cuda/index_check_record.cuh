#pragma once
// The per-device record of the first bad index a deferred check finds, written by the check
// kernel (index_check.cu) and by a row gather that runs a held check itself (index.cu).
#include <climits>
#include <cstdint>

namespace kael::cuda {

// check < 0 until a check finds a bad index; then that check's id, position and value stay until
// the host reports them. The kernels of one stream run in order, so the first check wins.
struct ErrorRecord {
    unsigned long long position;  // ULLONG_MAX: none in the running check
    long long check;
    long long value;
    unsigned int finished_blocks;  // blocks of the running check done; reset by the last one
    unsigned int reserved;
};
inline constexpr std::size_t kClearedBytes = 3 * sizeof(long long);  // 0xFF: none, check -1

// A check for a kernel to run: where to record, and the check's site id. record null: none.
struct KernelIndexCheck {
    ErrorRecord* record = nullptr;
    long long site = -1;
};

#if defined(__CUDACC__)
// Whether a kernel's check still has to look (no earlier check's error stands); the same for
// every thread of the grid: only the grid's last block writes the record's check.
__device__ inline bool check_pending(const KernelIndexCheck& check) {
    return check.record != nullptr && check.record->check < 0;
}

// Thread 0 of each block of the checking kernel, after the block's positions are in
// block_first (ULLONG_MAX: none): the grid's smallest bad position and its value go into the
// record once the last block is done.
__device__ inline void finish_block_check(const KernelIndexCheck& check,
                                          unsigned long long block_first,
                                          const std::int64_t* indices) {
    ErrorRecord* const record = check.record;
    if (block_first != ULLONG_MAX) {
        atomicMin(&record->position, block_first);
    }
    __threadfence();
    if (atomicAdd(&record->finished_blocks, 1U) == gridDim.x - 1) {
        __threadfence();
        const unsigned long long first = atomicMin(&record->position, ULLONG_MAX);
        if (first != ULLONG_MAX) {
            record->value = indices[first];
            record->check = check.site;
        }
        record->finished_blocks = 0;
    }
}
#endif

}  // namespace kael::cuda
