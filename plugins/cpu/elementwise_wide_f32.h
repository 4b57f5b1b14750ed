#pragma once
// The f32 elementwise loops the cpu plugin also compiles for AVX-512 and AVX2, for
// elementwise.cpp: which functors may take them, and the loop over contiguous runs whose inputs
// are contiguous or one repeated value each.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_functions.h"
#include "vector_math.h"

namespace kael::cpu::wide_f32 {

// The f32 functors whose contiguous loop is also compiled for AVX-512 and AVX2 (elementwise.cpp's
// baseline is SSE2): one IEEE operation or a select each, so no ISA can contract or reorder them.
template <typename F>
inline constexpr bool kWideF32 = false;
template <>
inline constexpr bool kWideF32<kernels::Plus<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Minus<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Multiply<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Divide<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Negate<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Identity<float>> = true;
// Selects, exact at every width: relu's baseline loop ran at 0.53 of PyTorch's speed at 2^21.
template <>
inline constexpr bool kWideF32<kernels::Relu<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::ReluBackward<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Maximum<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Minimum<float>> = true;
// Correctly rounded at every width (IEEE sqrt and division, exact rounding to an integer and
// sign bits): at baseline floor was a libm call an element and sqrt kept errno's check, about
// 0.1-0.25 of PyTorch's speed.
template <>
inline constexpr bool kWideF32<kernels::Abs<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Square<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Sqrt<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Rsqrt<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Reciprocal<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Floor<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Ceil<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Trunc<float>> = true;
template <>
inline constexpr bool kWideF32<kernels::Sign<float>> = true;  // compares and selects

// The f32 compares, logical ops and classifications, writing bool bytes: exact at every width.
// At baseline, logical_and ran a 131k-element run at 0.59 of PyTorch's speed.
template <typename F>
inline constexpr bool kWideF32ToBool = false;
#define KAEL_WIDE_F32_TO_BOOL(Functor) \
    template <>                        \
    inline constexpr bool kWideF32ToBool<kernels::Functor<float>> = true;
KAEL_WIDE_F32_TO_BOOL(Equal)
KAEL_WIDE_F32_TO_BOOL(NotEqual)
KAEL_WIDE_F32_TO_BOOL(Less)
KAEL_WIDE_F32_TO_BOOL(LessEqual)
KAEL_WIDE_F32_TO_BOOL(Greater)
KAEL_WIDE_F32_TO_BOOL(GreaterEqual)
KAEL_WIDE_F32_TO_BOOL(LogicalAnd)
KAEL_WIDE_F32_TO_BOOL(LogicalOr)
KAEL_WIDE_F32_TO_BOOL(IsNan)
KAEL_WIDE_F32_TO_BOOL(IsInf)
KAEL_WIDE_F32_TO_BOOL(IsFinite)
KAEL_WIDE_F32_TO_BOOL(IsPosInf)
KAEL_WIDE_F32_TO_BOOL(IsNegInf)
#undef KAEL_WIDE_F32_TO_BOOL

// repeated[k]: input k is one value for the whole run (a scalar or a broadcast dim, x - m with
// m = x.amax(-1, keepdim=True)). The test is loop-invariant, so GCC's unswitching gives each
// combination its own vector loop; spelling the value out in a buffer first cost x - m of a
// 128-wide row 0.35 of PyTorch's speed.
// `rows` such runs, the next starting `outer` bytes on (a repeated input's value read per row).
template <typename F, size_t... Input>
[[gnu::always_inline]] inline void contiguous_f32(std::byte* const* pointers, int64_t count,
                                                  int64_t rows, const int64_t* outer,
                                                  const F& function, const bool* repeated) {
    using Result = std::conditional_t<kWideF32ToBool<F>, std::uint8_t, float>;  // bool: 0 or 1
    const bool repeats[] = {repeated[Input]...};
    for (int64_t row = 0; row < rows; ++row) {
        auto* const out = reinterpret_cast<Result*>(pointers[0] + row * outer[0]);
        const float* const in[] = {
            reinterpret_cast<const float*>(pointers[Input + 1] + row * outer[Input + 1])...};
        const float values[] = {*in[Input]...};
        for (int64_t i = 0; i < count; ++i) {
            out[i] =
                static_cast<Result>(function((repeats[Input] ? values[Input] : in[Input][i])...));
        }
    }
}

template <typename F, size_t... Input>
[[gnu::target("avx512f")]] void contiguous_f32_avx512(std::byte* const* pointers, int64_t count,
                                                      int64_t rows, const int64_t* outer,
                                                      const F& function, const bool* repeated) {
    contiguous_f32<F, Input...>(pointers, count, rows, outer, function, repeated);
}

template <typename F, size_t... Input>
[[gnu::target("avx2")]] void contiguous_f32_avx2(std::byte* const* pointers, int64_t count,
                                                 int64_t rows, const int64_t* outer,
                                                 const F& function, const bool* repeated) {
    contiguous_f32<F, Input...>(pointers, count, rows, outer, function, repeated);
}

// Whether the runs went through a wide loop.
template <typename F, size_t... Input>
bool contiguous_f32_wide(std::byte* const* pointers, int64_t count, int64_t rows,
                         const int64_t* outer, const F& function, const bool* repeated) {
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512:
            contiguous_f32_avx512<F, Input...>(pointers, count, rows, outer, function, repeated);
            return true;
        case vector_math::Isa::Avx2:
            contiguous_f32_avx2<F, Input...>(pointers, count, rows, outer, function, repeated);
            return true;
        default: return false;
    }
}

}  // namespace kael::cpu::wide_f32
