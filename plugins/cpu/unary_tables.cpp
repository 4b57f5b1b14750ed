// bf16/f16 transcendental ops by table: a 16-bit input has 65536 values, so the f32 kernel's
// result for each, rounded once, is a 128 KiB table (L2-resident) and an op is a gather. gelu on
// 2^20 bf16 computed 16 lanes at a time was compute-bound at 0.83 of torch 1.13's speed.
#include "unary_tables.h"

#include <immintrin.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "convert_low_precision.h"
#include "vector_math.h"

namespace kael::cpu {
namespace {

constexpr int64_t kPatterns = int64_t{1} << 16;

// The ops by table, in slot order.
constexpr std::array<kael_element_op, 16> kTabled = {
    KAEL_OP_EXP,   KAEL_OP_LOG,        KAEL_OP_TANH,      KAEL_OP_SIGMOID,
    KAEL_OP_SILU,  KAEL_OP_GELU_EXACT, KAEL_OP_GELU_TANH, KAEL_OP_ERF,
    KAEL_OP_ERFC,  KAEL_OP_SIN,        KAEL_OP_COS,       KAEL_OP_LOG1P,
    KAEL_OP_EXPM1, KAEL_OP_LOG2,       KAEL_OP_LOG10,     KAEL_OP_EXP2};

struct Slot {
    std::once_flag once;
    std::unique_ptr<std::uint16_t[]> table;
    std::atomic<const std::uint16_t*> ready{nullptr};
};

// Two dtypes x kTabled; never freed (the plugin lives as long as the process).
std::array<Slot, 2 * kTabled.size()>& slots() {
    static auto* all = new std::array<Slot, 2 * kTabled.size()>;
    return *all;
}

void build(Slot& slot, kael_element_op op, kael_dtype dtype, UnaryF32 compute) {
    std::vector<std::uint16_t> patterns(kPatterns);
    for (int64_t bits = 0; bits < kPatterns; ++bits) {
        patterns[bits] = static_cast<std::uint16_t>(bits);
    }
    std::vector<float> values(kPatterns);
    convert_contiguous(KAEL_DTYPE_F32, dtype, patterns.data(), values.data(), kPatterns);
    compute(op, values.data(), kPatterns);
    // One more entry: the gather reads 4 bytes at the last index's 2.
    slot.table = std::make_unique<std::uint16_t[]>(kPatterns + 1);
    convert_contiguous(dtype, KAEL_DTYPE_F32, values.data(), slot.table.get(), kPatterns);
    slot.table[kPatterns] = 0;
    slot.ready.store(slot.table.get(), std::memory_order_release);
}

// GCC 12 takes the undefined merge operand inside these intrinsics for an uninitialized variable.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // sanitizer builds say it so
[[gnu::target("avx512f")]] void look_up_avx512(const std::uint16_t* table, const std::uint16_t* x,
                                               std::uint16_t* z, int64_t count) {
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512i index =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
        const __m512i found = _mm512_i32gather_epi32(index, table, 2);  // low 16 bits: the entry
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(z + i), _mm512_cvtepi32_epi16(found));
    }
    for (; i < count; ++i) {
        z[i] = table[x[i]];
    }
}
#pragma GCC diagnostic pop

}  // namespace

const std::uint16_t* unary_table(kael_element_op op, kael_dtype dtype, int64_t count,
                                 UnaryF32 compute) {
    std::size_t index = kTabled.size();
    for (std::size_t k = 0; k < kTabled.size(); ++k) {
        index = kTabled[k] == op ? k : index;
    }
    if (index == kTabled.size() || (dtype != KAEL_DTYPE_BF16 && dtype != KAEL_DTYPE_F16)) {
        return nullptr;
    }
    Slot& slot = slots()[(dtype == KAEL_DTYPE_BF16 ? 0 : kTabled.size()) + index];
    if (const std::uint16_t* table = slot.ready.load(std::memory_order_acquire)) {
        return table;
    }
    if (count < kUnaryTableMin) {
        return nullptr;  // not worth 65536 evaluations yet
    }
    std::call_once(slot.once, [&] { build(slot, op, dtype, compute); });
    return slot.ready.load(std::memory_order_acquire);
}

void look_up(const std::uint16_t* table, const void* in, void* out, int64_t count) {
    const auto* x = static_cast<const std::uint16_t*>(in);
    auto* z = static_cast<std::uint16_t*>(out);
    if (vector_math::chosen_isa() == vector_math::Isa::Avx512) {
        look_up_avx512(table, x, z, count);
        return;
    }
    for (int64_t i = 0; i < count; ++i) {
        z[i] = table[x[i]];
    }
}

}  // namespace kael::cpu
