// Conformance of the variance reduction behind var and std: every reduce layout, each dim and
// all dims, several corrections (one >= n), with and without NaN/inf specials, f32 and f64, on
// the device against cpu. Whether the plugin ran it or left it to cpu is the report's to say.
#include <optional>

#include "conformance.h"

using namespace conformance;

BOOST_AUTO_TEST_CASE(var_and_std_every_layout_dim_correction_and_special) {
    kael::manual_seed(41);
    for (const DType dtype : {DType::F32, DType::F64}) {
        for (const bool specials : {false, true}) {
            for (const Layout& layout : reduce_layouts()) {
                const Operand input{values(dtype, layout.base(0), specials),
                                    [&layout](const Tensor& t) { return layout.view(t, 0); }};
                const auto rank = static_cast<std::int64_t>(layout.view(input.base, 0).dim());
                std::vector<std::optional<std::int64_t>> dims = {std::nullopt};
                for (std::int64_t d = -1; d < std::max<std::int64_t>(rank, 1); ++d) {
                    dims.emplace_back(d);
                }
                for (const std::optional<std::int64_t> dim : dims) {
                    for (const std::int64_t correction : {0, 1, 5}) {
                        for (const bool keepdim : {false, true}) {
                            BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", layout "
                                                        << layout.name << ", specials " << specials
                                                        << ", dim " << (dim ? *dim : 99)
                                                        << ", correction " << correction
                                                        << ", keepdim " << keepdim) {
                                run_and_compare(
                                    {input},
                                    [&](const Tensors& x) {
                                        return Tensors{
                                            kael::var(x[0], dim, correction, keepdim),
                                            kael::stddev(x[0], dim, correction, keepdim)};
                                    },
                                    {1.0, false});
                            }
                        }
                    }
                }
            }
        }
    }
}
