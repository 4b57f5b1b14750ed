#pragma once
// Division by a divisor fixed before a launch, for kernels that split a flat index into
// coordinates: for 32-bit indices a multiply-high, an add and a shift (Granlund-Montgomery, as
// PyTorch's IntDivider), for 64-bit the hardware's division. Valid in CUDA device code.
#include <cstdint>

#include "kael/kernels/element_math.h"  // KAEL_HD

namespace kael::kernels {

template <typename Unsigned>
struct IntDivider;

// Exact for n and divisor below 2^31 (the magic number then fits 32 bits and n + high cannot
// wrap), which is what kernels with 32-bit indices guarantee.
template <>
struct IntDivider<std::uint32_t> {
    std::uint32_t divisor = 1;
    std::uint32_t magic = 1;
    std::uint32_t shift = 0;

    IntDivider() = default;
    explicit IntDivider(std::uint32_t value) : divisor(value) {
        while (shift < 31 && (std::uint64_t{1} << shift) < value) {
            ++shift;  // shift = ceil(log2(value))
        }
        const std::uint64_t one = 1;
        magic = static_cast<std::uint32_t>(((one << 32) * ((one << shift) - value)) / value + 1);
    }
    [[nodiscard]] KAEL_HD std::uint32_t divide(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
        const std::uint32_t high = __umulhi(n, magic);
#else
        const auto high = static_cast<std::uint32_t>((std::uint64_t{n} * magic) >> 32);
#endif
        return (high + n) >> shift;
    }
};

template <>
struct IntDivider<std::uint64_t> {
    std::uint64_t divisor = 1;

    IntDivider() = default;
    explicit IntDivider(std::uint64_t value) : divisor(value) {}
    [[nodiscard]] KAEL_HD std::uint64_t divide(std::uint64_t n) const { return n / divisor; }
};

}  // namespace kael::kernels
