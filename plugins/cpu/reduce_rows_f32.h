#pragma once
// f32 row folds written once with 64-byte GCC vectors (reduce_rows_f32.inc) and compiled three
// times, for the baseline, AVX2 and AVX-512: the lanes and their merge order are the same in all
// three, so results do not depend on the CPU. Each takes row[0, count), count >= kMinCount.
#include <cstdint>

namespace kael::cpu::rows_f32 {

inline constexpr std::int64_t kMinCount = 64;

struct Position {
    float value;
    std::int64_t index;
};

struct Table {
    float (*max)(const float* row, std::int64_t count);  // the first NaN if there is one
    float (*min)(const float* row, std::int64_t count);
    double (*sum)(const float* row, std::int64_t count);  // in double, 32 lanes
    double (*prod)(const float* row, std::int64_t count);
    double (*squares)(const float* row, std::int64_t count);  // the sum of x^2, as sum
    Position (*argmax)(const float* row, std::int64_t count);  // first NaN, else first best
    Position (*argmin)(const float* row, std::int64_t count);
};

// The table for the ISA vector_math::chosen_isa() picked.
const Table& table();

// Defined by each ISA's file.
extern const Table kBaseline;
extern const Table kAvx2;
extern const Table kAvx512;

}  // namespace kael::cpu::rows_f32
