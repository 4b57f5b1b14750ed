// The layouts the conformance cases run each op over (conformance.h says what each one is).
#include "conformance.h"

namespace conformance {

const std::vector<Layout>& element_layouts() {
    static const std::vector<Layout> layouts = [] {
        const auto same = [](const Tensor& t, std::size_t) { return t; };
        const auto transposed_view = [](const Tensor& t, std::size_t) { return t.T(); };
        const auto strided_view = [](const Tensor& t, std::size_t) {
            return t.slice(0, 1, 8, 2).slice(1, 0, 12, 2);
        };
        std::vector<Layout> all;
        all.push_back({"contiguous", [](std::size_t) { return Shape{4, 6}; }, same});
        all.push_back({"transposed", [](std::size_t) { return Shape{6, 4}; }, transposed_view});
        all.push_back({"strided", [](std::size_t) { return Shape{8, 13}; }, strided_view});
        all.push_back({"broadcast",
                       [](std::size_t i) {
                           return i % 2 == 0 ? Shape{1, 6} : Shape{4, 1};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.expand({4, 6});
                       }});
        all.push_back({"permuted_3d",
                       [](std::size_t) {
                           return Shape{4, 2, 3};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.permute({1, 2, 0});
                       }});
        // Strided in one dimension and permuted: no dimension coalesces away.
        all.push_back({"permuted_strided_3d",
                       [](std::size_t) {
                           return Shape{4, 3, 7};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.slice(2, 0, 7, 2).permute({1, 2, 0});
                       }});
        all.push_back({"scalar", [](std::size_t) { return Shape{}; }, same});
        all.push_back({"empty", [](std::size_t) { return Shape{0, 6}; }, same});
        all.push_back({"large_transposed",
                       [](std::size_t) {
                           return Shape{257, 300};
                       },
                       transposed_view});
        // Each operand a different kind; the third is broadcast implicitly from rank 1.
        all.push_back({"mixed",
                       [](std::size_t i) {
                           const Shape shapes[] = {{6, 4}, {8, 13}, {6}, {1, 6}};
                           return shapes[i % 4];
                       },
                       [=](const Tensor& t, std::size_t i) {
                           switch (i % 4) {
                               case 0: return transposed_view(t, i);
                               case 1: return strided_view(t, i);
                               case 2: return t;
                               default: return t.expand({4, 6});
                           }
                       }});
        const auto shape_of = [](Shape shape) { return [shape](std::size_t) { return shape; }; };
        const auto alternate = [](Shape even, Shape odd) {
            return [even, odd](std::size_t i) { return i % 2 == 0 ? even : odd; };
        };
        // Operands the op broadcasts itself: against a 0-d tensor, and a column against a row.
        all.push_back({"implicit_scalar", alternate({4, 6}, {}), same});
        all.push_back({"implicit_outer", alternate({4, 1}, {6}), same});
        // Layouts for each path of a device's elementwise kernels (plugins/cuda/elementwise.cu):
        // sizes that are no multiple of a pack (8) or a tile (32), and views that defeat each
        // fast path so the next one must be right too.
        all.push_back({"odd_contiguous", shape_of({5, 7}), same});  // packs and a tail of 3
        all.push_back({"misaligned_flat", shape_of({37}), [](const Tensor& t, std::size_t) {
                           return t.slice(0, 1, 36);  // starts at element 1: no aligned pack
                       }});
        // Rows of a contiguous operand beside one row vector broadcast down (a + bias).
        all.push_back({"row_broadcast", alternate({9, 12}, {12}), [](const Tensor& t, std::size_t) {
                           return t.expand({9, 12});
                       }});
        all.push_back(
            {"row_broadcast_odd", alternate({9, 13}, {13}), [](const Tensor& t, std::size_t) {
                 return t.expand({9, 13});
             }});
        // Contiguous rows apart by more than their length, aligned to a pack, then not.
        all.push_back({"row_slices", shape_of({6, 16}),
                       [](const Tensor& t, std::size_t) { return t.slice(1, 4, 16); }});
        all.push_back({"misaligned_rows", shape_of({6, 17}),
                       [](const Tensor& t, std::size_t) { return t.slice(1, 1, 13); }});
        // Operands that disagree on the innermost dim (a + a.T), in partial tiles, and with a
        // batch dim that does not merge away.
        all.push_back({"half_transposed", alternate({40, 33}, {33, 40}),
                       [](const Tensor& t, std::size_t i) { return i % 2 == 0 ? t.T() : t; }});
        all.push_back(
            {"batched_transposed", shape_of({2, 40, 36}), [](const Tensor& t, std::size_t) {
                 return t.permute({0, 2, 1});
             }});
        return all;
    }();
    return layouts;
}

const std::vector<Layout>& reduce_layouts() {
    static const std::vector<Layout> layouts = [] {
        const auto same = [](const Tensor& t, std::size_t) { return t; };
        std::vector<Layout> all;
        all.push_back({"contiguous", [](std::size_t) { return Shape{3, 4, 5}; }, same});
        all.push_back({"transposed",
                       [](std::size_t) {
                           return Shape{5, 4, 3};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.permute({2, 1, 0});
                       }});
        all.push_back(
            {"strided",
             [](std::size_t) {
                 return Shape{6, 4, 10};
             },
             [](const Tensor& t, std::size_t) { return t.slice(0, 0, 6, 2).slice(2, 1, 10, 2); }});
        all.push_back({"broadcast",
                       [](std::size_t) {
                           return Shape{3, 1, 5};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.expand({3, 4, 5});
                       }});
        // A permutation of a dense block (read where it lies) and one with gaps (copied first).
        all.push_back({"permuted",
                       [](std::size_t) {
                           return Shape{4, 5, 3};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.permute({2, 0, 1});
                       }});
        all.push_back({"permuted_strided",
                       [](std::size_t) {
                           return Shape{4, 10, 3};
                       },
                       [](const Tensor& t, std::size_t) {
                           return t.slice(1, 0, 10, 2).permute({2, 0, 1});
                       }});
        // Rows wider than one 256-column device tile.
        all.push_back({"wide", [](std::size_t) { return Shape{2, 3, 300}; }, same});
        all.push_back({"empty", [](std::size_t) { return Shape{3, 0, 5}; }, same});
        all.push_back({"scalar", [](std::size_t) { return Shape{}; }, same});
        // Rows longer than three 4096-element device blocks, more than 2^15 elements in all (the
        // cpu plugin's threshold for threads).
        all.push_back({"long_rows",
                       [](std::size_t) {
                           return Shape{12289, 3};
                       },
                       [](const Tensor& t, std::size_t) { return t.T(); }});
        return all;
    }();
    return layouts;
}

const std::vector<View>& composite_views() {
    static const std::vector<View> views = {
        {"contiguous", {3, 4}},
        {"transposed", {4, 3}, [](const Tensor& t) { return t.T(); }},
        {"strided", {6, 9}, [](const Tensor& t) { return t.slice(0, 0, 6, 2).slice(1, 1, 9, 2); }},
        {"broadcast", {1, 4}, [](const Tensor& t) { return t.expand({3, 4}); }},
        {"permuted_3d", {4, 2, 3}, [](const Tensor& t) { return t.permute({1, 2, 0}); }},
        {"vector", {5}},
        {"empty", {0, 4}},
        {"scalar", {}},
    };
    return views;
}

Operand laid_out(const Layout& layout, Tensor base, std::size_t operand) {
    return {std::move(base),
            [&layout, operand](const Tensor& t) { return layout.view(t, operand); }};
}

}  // namespace conformance
