#pragma once
// Cross-backend conformance: every op of the plugin ABI computed on the device under test and on
// cpu from the same host inputs, then compared. Ops are described in tables (name, dtypes,
// operand roles, a lambda) and run over layouts. The cases are Boost.Test cases of the
// kael-conformance program (main.cpp), which picks the device.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kael/ops.h"
#include "kael/registry.h"

namespace conformance {

using kael::DType;
using kael::Shape;
using kael::Tensor;
using Tensors = std::vector<Tensor>;

// The device under test; set once by main before any case runs.
[[nodiscard]] const kael::Device& device();
void set_device(const kael::Device& device);
[[nodiscard]] std::string dtype_name(DType dtype);

// Device-vs-cpu comparisons made so far (run_and_compare and compare_factory calls), and how
// many of them compared errors (both sides threw).
struct Comparisons {
    std::int64_t total = 0;
    std::int64_t of_errors = 0;
};
[[nodiscard]] Comparisons comparisons();

// Device result vs cpu result: rtol f32_rtol (f32) or 1e-10 (f64), plus rtol * scale absolute
// (for sums whose result may cancel to near zero). Zero signs must agree when zero_sign is set.
struct Tolerance {
    double scale = 0;
    bool zero_sign = true;
    double f32_rtol = 1e-4;
};

// For products (matmul, linear): {scale, no zero signs}, and with --matmul-precision high or
// medium (TF32 inputs, a 2^-11 step each) an f32 rtol of 2^-9.
[[nodiscard]] Tolerance matmul_tolerance(double scale);

// A host tensor the op reads through a view: the cpu run reads view(clone of base), the device
// run view(base copied to the device), so both see the same strides and the same values.
struct Operand {
    Tensor base;
    std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};

// A view on top of a base, built by a lambda; also the base shape it needs.
struct View {
    std::string name;
    Shape base;
    std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};

using Op = std::function<Tensors(const Tensors&)>;
using Factory = std::function<Tensors(const kael::Device&)>;

// Runs op on both sides and compares every output and every input afterwards, or that both
// throw the same error type. Each call counts as one check.
void run_and_compare(const std::vector<Operand>& operands, const Op& op,
                     const Tolerance& tolerance = {});
// The same for ops that take no tensor: make is called with the device, then with cpu.
void compare_factory(const Factory& make, const Tolerance& tolerance = {});
void expect_same(const Tensor& on_device, const Tensor& on_cpu, const Tolerance& tolerance = {});

// Seeded host values of dtype: floats are randn * 3, i64 in [-20, 20), bool half true. With
// specials, one element in seven is replaced, in turn, by NaN, inf, -inf, -0.0, 0.0, 0.5, 1e30
// (floats) or by INT64_MAX, INT64_MIN, -1, 0, INT64_MAX - 1, 2^40 (i64).
[[nodiscard]] Tensor values(DType dtype, const Shape& shape, bool specials = true);

// How the operands of an op are laid out: the base shape of operand i and the view over it.
struct Layout {
    std::string name;
    std::function<Shape(std::size_t)> base;
    std::function<Tensor(const Tensor&, std::size_t)> view;
};
// Logical shape {4, 6} (or others): contiguous, transposed, strided, broadcast, permuted_3d,
// permuted_strided_3d, scalar, empty, large_transposed, mixed (each operand a different kind, one
// implicitly broadcast from rank 1), implicit_scalar (a 0-d partner), implicit_outer ({4, 1}
// with {6}); then one or two per path of the cuda elementwise kernels:
// odd_contiguous, misaligned_flat, row_broadcast(_odd), row_slices, misaligned_rows,
// half_transposed, batched_transposed. KAEL_CUDA_INDEX32_LIMIT=0 sends them all to the cuda
// plugin's 64-bit kernels instead.
[[nodiscard]] const std::vector<Layout>& element_layouts();
// Logical shape {3, 4, 5}: contiguous, transposed, strided, broadcast, permuted,
// permuted_strided, wide ({2, 3, 300}), empty, scalar; then long_rows ({3, 12289}, transposed).
[[nodiscard]] const std::vector<Layout>& reduce_layouts();
// Views of logical shape {3, 4} for the composite ops (ops_shape.h, ops_reduce.h): contiguous, transposed,
// strided, broadcast; then permuted_3d ({2, 3, 4}), vector ({5}), empty ({0, 4}) and scalar.
[[nodiscard]] const std::vector<View>& composite_views();
// base read through operand `operand`'s view of layout (which must outlive the Operand).
[[nodiscard]] Operand laid_out(const Layout& layout, Tensor base, std::size_t operand = 0);

// Every dtype, bfloat16 and float16 included: devices compute those in f32 and round once
// (kernel_run.h), so their results agree to a step of the dtype (expect_same).
inline const std::vector<DType> kAllDTypes = {DType::F32,  DType::F64, DType::I64,
                                              DType::Bool, DType::BF16, DType::F16};
inline const std::vector<DType> kNumeric = {DType::F32, DType::F64, DType::I64, DType::BF16,
                                            DType::F16};

}  // namespace conformance
