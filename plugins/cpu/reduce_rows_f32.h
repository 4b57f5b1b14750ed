#pragma once
// f32 row folds written once with GCC vectors (reduce_rows_f32.inc) and compiled three times,
// for the baseline, AVX2 and AVX-512, each with vectors as wide as its registers: sums keep the
// same 32 lanes and merge order in all three, so results do not depend on the CPU. Each takes
// row[0, count), count >= kMinCount.
#include <cstdint>

namespace kael::cpu::rows_f32 {

inline constexpr std::int64_t kMinCount = 64;

struct Position {
    float value;
    std::int64_t index;
};

// What fold_rows computes per row, and writes: floats for all but the positions (int64).
enum class Op { kMax, kMin, kSum, kProd, kNorm2, kArgmax, kArgmin };

struct Table {
    float (*max)(const float* row, std::int64_t count);  // the first NaN if there is one
    float (*min)(const float* row, std::int64_t count);
    double (*sum)(const float* row, std::int64_t count);  // in double, 32 lanes
    double (*prod)(const float* row, std::int64_t count);
    double (*squares)(const float* row, std::int64_t count);   // the sum of x^2, as sum
    Position (*argmax)(const float* row, std::int64_t count);  // first NaN, else first best
    Position (*argmin)(const float* row, std::int64_t count);
    // rows contiguous rows of count elements: out[r] = op's result for row r, finished as the
    // shared reducers finish (a sum rounded once to f32, a norm's root taken in double). One call
    // for many short rows, so a row pays for no dispatch.
    void (*fold_rows)(Op op, const float* data, std::int64_t count, std::int64_t rows, void* out);
    // Columns j < width of rows [begin, end) of slab (rows inner apart; begin a multiple of
    // 64), each folded into states[j] (double) as the shared fold_strided folds it: kSum, kProd
    // (paired terms) and kNorm2 (its sum of squares, in row order) only.
    void (*fold_columns)(Op op, const float* slab, std::int64_t inner, std::int64_t begin,
                         std::int64_t end, std::int64_t width, double* states);
    // rows runs of inner values, stride apart, into 8 lanes of sums and products
    // (tasks/channels.h's SharedChannelFold): d = value - center and g = grads' value (d when
    // grads is null), the sums of g and g * d, in 32 double lanes on every ISA (a value's lane
    // its place in its run mod 32) added onto lane k % 8 in order.
    void (*channel_fold)(const float* values, const float* grads, double center, std::int64_t rows,
                         std::int64_t inner, std::int64_t stride, double* sums, double* products);
};

// The table for the ISA vector_math::chosen_isa() picked.
const Table& table();

// Defined by each ISA's file.
extern const Table kBaseline;
extern const Table kAvx2;
extern const Table kAvx512;

}  // namespace kael::cpu::rows_f32
