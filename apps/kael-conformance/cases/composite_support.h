#pragma once
// Tables of one-input composite ops (ops_shape.h), run in every dtype over composite_views().
#include <optional>
#include <string>
#include <tuple>

#include "conformance.h"
#include "kael/ops.h"

namespace conformance {

struct CompositeCase {
    std::string name;
    std::function<Tensors(const Tensor&)> op;
    Tolerance tolerance{};
};

// Each case in each dtype over each composite view of values make(dtype, base shape).
inline void run_composite_cases(const std::vector<CompositeCase>& cases,
                                const std::function<Tensor(DType, const Shape&)>& make) {
    for (const DType dtype : kAllDTypes) {
        for (const View& view : composite_views()) {
            const Operand input{make(dtype, view.base), view.view};
            for (const CompositeCase& c : cases) {
                BOOST_TEST_CONTEXT("op " << c.name << ", dtype " << dtype_name(dtype) << ", view "
                                         << view.name) {
                    run_and_compare(
                        {input}, [&](const Tensors& x) { return c.op(x[0]); }, c.tolerance);
                }
            }
        }
    }
}

}  // namespace conformance
