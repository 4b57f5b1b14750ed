// The cpu plugin's f32 sequence paths (sort_f32.h): a stable LSD radix sort of rows, and the
// 16-element screen that lets top-k skip blocks no element of which enters its heap.
#include "sort_f32.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int kDigitBits = 11;
constexpr int kPasses = 3;  // 33 bits cover the 32-bit keys
constexpr std::uint32_t kBuckets = 1U << kDigitBits;

// An unsigned key in sorts_before's order: numbers ascending with -0 equal to +0, then every
// NaN equal to each other; inverted for descending order.
std::uint32_t order_key(float value, bool descending) {
    std::uint32_t bits = 0;
    if (value != value) {
        bits = 0xFFFFFFFFU;
    } else {
        value = value == 0.0F ? 0.0F : value;  // -0 ties with +0
        std::memcpy(&bits, &value, sizeof bits);
        bits = (bits & 0x80000000U) != 0 ? ~bits : bits | 0x80000000U;
    }
    return descending ? ~bits : bits;
}

std::uint32_t digit(std::uint64_t entry, int pass) {
    return static_cast<std::uint32_t>(entry >> (32 + pass * kDigitBits)) & (kBuckets - 1);
}

}  // namespace

void radix_sort_row_f32(float* values, std::int64_t* indices, const float* row, std::int64_t size,
                        bool descending, std::vector<std::uint64_t>& scratch) {
    scratch.resize(static_cast<std::size_t>(2 * size));
    std::uint64_t* from = scratch.data();
    std::uint64_t* to = from + size;
    std::vector<std::uint32_t> counts(kPasses * kBuckets, 0);
    for (std::int64_t i = 0; i < size; ++i) {
        from[i] =
            std::uint64_t{order_key(row[i], descending)} << 32 | static_cast<std::uint32_t>(i);
        for (int pass = 0; pass < kPasses; ++pass) {
            ++counts[pass * kBuckets + digit(from[i], pass)];
        }
    }
    for (int pass = 0; pass < kPasses; ++pass) {
        std::uint32_t* const count = counts.data() + pass * kBuckets;
        if (count[digit(from[0], pass)] == static_cast<std::uint32_t>(size)) {
            continue;  // one bucket holds the row: this digit orders nothing
        }
        std::uint32_t start = 0;
        for (std::uint32_t bucket = 0; bucket < kBuckets; ++bucket) {
            const std::uint32_t n = count[bucket];
            count[bucket] = start;
            start += n;
        }
        for (std::int64_t i = 0; i < size; ++i) {  // in order: equal digits stay in order
            to[count[digit(from[i], pass)]++] = from[i];
        }
        std::swap(from, to);
    }
    for (std::int64_t i = 0; i < size; ++i) {
        const auto position = static_cast<std::int64_t>(from[i] & 0xFFFFFFFFU);
        values[i] = row[position];
        indices[i] = position;
    }
}

namespace {

bool may_beat_baseline(const float* x, float threshold, bool largest) {
    for (int i = 0; i < kScreenBlock; ++i) {
        if (largest ? !(x[i] <= threshold) : x[i] < threshold) {
            return true;
        }
    }
    return false;
}

[[gnu::target("avx512f")]] bool may_beat_avx512(const float* x, float threshold, bool largest) {
    const __m512 value = _mm512_loadu_ps(x);
    const __m512 limit = _mm512_set1_ps(threshold);
    // Largest: above the threshold or NaN; smallest: below it.
    const __mmask16 mask = largest ? _mm512_cmp_ps_mask(value, limit, _CMP_NLE_UQ)
                                   : _mm512_cmp_ps_mask(value, limit, _CMP_LT_OQ);
    return mask != 0;
}

[[gnu::target("avx2")]] bool may_beat_avx2(const float* x, float threshold, bool largest) {
    const __m256 limit = _mm256_set1_ps(threshold);
    int mask = 0;
    for (int half = 0; half < 2; ++half) {
        const __m256 value = _mm256_loadu_ps(x + 8 * half);
        mask |= _mm256_movemask_ps(largest ? _mm256_cmp_ps(value, limit, _CMP_NLE_UQ)
                                           : _mm256_cmp_ps(value, limit, _CMP_LT_OQ));
    }
    return mask != 0;
}

}  // namespace

BlockScreen block_screen_f32() {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512: return may_beat_avx512;
        case vector_math::Isa::Avx2: return may_beat_avx2;
        default: return may_beat_baseline;
    }
}

}  // namespace kael::cpu
