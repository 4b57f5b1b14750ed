#define BOOST_TEST_MODULE attention
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <optional>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/random.h"

using kael::DType;
using kael::Shape;
using kael::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// softmax(q k^T * scale + mask) v with the causal mask aligned at the end, from basic ops.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                std::optional<double> scale = std::nullopt) {
    const std::int64_t queries = q.size(2);
    const std::int64_t keys = k.size(2);
    const double factor = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    Tensor scores = kael::matmul(q, k.transpose(-2, -1)) * factor;
    if (causal) {
        const Tensor rows =
            kael::arange_int(keys - queries, keys, 1, DType::I64, q.device()).unsqueeze(1);
        const Tensor columns = kael::arange_int(0, keys, 1, DType::I64, q.device()).unsqueeze(0);
        scores = kael::masked_fill(scores, kael::gt(columns, rows), -INFINITY);
    }
    return kael::matmul(kael::softmax(scores, -1), v);
}

// Every element within tolerance; NaN only where the reference has NaN.
void check_close(const Tensor& got, const Tensor& want, double tolerance) {
    BOOST_REQUIRE(got.shape() == want.shape());
    const std::vector<double> a = got.to_vector<double>();
    const std::vector<double> b = want.to_vector<double>();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
        if (!both_nan && !(std::abs(a[i] - b[i]) <= tolerance * (1 + std::abs(b[i])))) {
            ++bad;
        }
    }
    BOOST_TEST(bad == 0U, bad << " of " << a.size() << " elements differ");
}

struct Sizes {
    std::int64_t batch, heads, queries, keys, dims;
};

const Sizes kSizes[] = {{2, 3, 5, 5, 8},  {1, 2, 3, 7, 4},  {2, 1, 4, 4, 1},
                        {1, 2, 6, 3, 80}, {1, 1, 1, 9, 16}, {2, 2, 17, 17, 64}};

Tensor leaf(const Shape& shape, DType dtype = DType::F64) {
    return kael::randn(shape, dtype).set_requires_grad(true);
}

}  // namespace

BOOST_AUTO_TEST_CASE(matches_the_composed_formula) {
    kael::manual_seed(3);
    for (const DType dtype : {DType::F32, DType::F64}) {
        const double tolerance = dtype == DType::F32 ? 1e-5 : 1e-12;
        for (const Sizes& s : kSizes) {
            const Tensor q = kael::randn({s.batch, s.heads, s.queries, s.dims}, dtype);
            const Tensor k = kael::randn({s.batch, s.heads, s.keys, s.dims}, dtype);
            const Tensor v = kael::randn({s.batch, s.heads, s.keys, s.dims}, dtype);
            for (const bool causal : {false, true}) {
                BOOST_TEST_CONTEXT("dtype " << kael::to_string(dtype) << ", queries " << s.queries
                                            << ", keys " << s.keys << ", dims " << s.dims
                                            << ", causal " << causal) {
                    const Tensor out = kael::scaled_dot_product_attention(q, k, v, causal);
                    BOOST_TEST((out.dtype() == dtype));
                    check_close(out, composed(q, k, v, causal), tolerance);
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(scale_and_the_output_layout) {
    kael::manual_seed(4);
    const Tensor q = kael::randn({2, 3, 4, 8}, DType::F64);
    const Tensor k = kael::randn({2, 3, 6, 8}, DType::F64);
    const Tensor v = kael::randn({2, 3, 6, 8}, DType::F64);
    check_close(kael::scaled_dot_product_attention(q, k, v, false, 0.3),
                composed(q, k, v, false, 0.3), 1e-12);
    // [B, H, T, D] over [B, T, H, D] memory: merging the heads back is free.
    const Tensor out = kael::scaled_dot_product_attention(q, k, v, true);
    BOOST_TEST((out.shape() == Shape{2, 3, 4, 8}));
    BOOST_TEST(out.transpose(1, 2).is_contiguous());
}

BOOST_AUTO_TEST_CASE(reads_heads_split_from_one_projection) {
    kael::manual_seed(5);
    const std::int64_t batch = 2, steps = 5, heads = 2, dims = 4, channels = heads * dims;
    const Tensor qkv = kael::randn({batch, steps, 3 * channels}, DType::F64);
    const auto split = [&](const Tensor& fused, std::int64_t part) {
        return fused.slice(2, part * channels, (part + 1) * channels)
            .reshape({batch, steps, heads, dims})
            .transpose(1, 2);
    };
    for (const bool causal : {false, true}) {
        const Tensor q = split(qkv, 0);
        const Tensor k = split(qkv, 1);
        const Tensor v = split(qkv, 2);
        BOOST_TEST(!q.is_contiguous());
        check_close(kael::scaled_dot_product_attention(q, k, v, causal),
                    composed(q.contiguous(), k.contiguous(), v.contiguous(), causal), 1e-12);
        // A view whose last dim is not contiguous is copied first.
        const Tensor kt = k.transpose(2, 3).contiguous().transpose(2, 3);
        check_close(kael::scaled_dot_product_attention(q, kt, v.expand(v.shape()), causal),
                    composed(q, k, v, causal), 1e-12);
    }
    // Gradients flow back through the views into the projection.
    const Tensor fused = leaf({1, 3, 3 * channels});
    BOOST_TEST(kael::autograd::gradcheck(
        [&](const Inputs& in) {
            const auto part = [&](std::int64_t i) {
                return in[0].slice(2, i * channels, (i + 1) * channels)
                    .reshape({1, 3, heads, dims})
                    .transpose(1, 2);
            };
            return kael::scaled_dot_product_attention(part(0), part(1), part(2), true);
        },
        {fused}));
    // The same through split, whose backward takes attention's one dq/dk/dv buffer as the
    // projection's gradient without a copy; it must equal the sliced version's.
    const auto through_split = [&](const Inputs& in) {
        const std::vector<Tensor> parts = kael::split(in[0], channels, 2);
        const auto heads_of = [&](const Tensor& part) {
            return part.reshape({1, 3, heads, dims}).transpose(1, 2);
        };
        return kael::scaled_dot_product_attention(heads_of(parts[0]), heads_of(parts[1]),
                                                  heads_of(parts[2]), true);
    };
    BOOST_TEST(kael::autograd::gradcheck(through_split, {fused}));
    const Tensor seed = kael::randn({1, heads, 3, dims}, DType::F64);
    through_split({fused}).backward(seed);
    const Tensor split_grad = fused.grad();
    fused.set_grad(Tensor());
    const auto sliced = [&](std::int64_t i) {
        return fused.slice(2, i * channels, (i + 1) * channels)
            .reshape({1, 3, heads, dims})
            .transpose(1, 2);
    };
    kael::scaled_dot_product_attention(sliced(0), sliced(1), sliced(2), true).backward(seed);
    check_close(split_grad, fused.grad(), 1e-12);
    // One tensor as query, key and value: three gradients summed into it.
    BOOST_TEST(kael::autograd::gradcheck(
        [](const Inputs& in) { return kael::scaled_dot_product_attention(in[0], in[0], in[0]); },
        {leaf({1, 2, 3, 4})}));
}

BOOST_AUTO_TEST_CASE(gradcheck_query_key_value) {
    kael::manual_seed(6);
    const Sizes cases[] = {{1, 2, 3, 3, 4}, {2, 1, 2, 5, 3}, {1, 1, 4, 2, 2}, {1, 1, 3, 3, 1}};
    for (const Sizes& s : cases) {
        for (const bool causal : {false, true}) {
            BOOST_TEST_CONTEXT("queries " << s.queries << ", keys " << s.keys << ", causal "
                                          << causal) {
                const Tensor q = leaf({s.batch, s.heads, s.queries, s.dims});
                const Tensor k = leaf({s.batch, s.heads, s.keys, s.dims});
                const Tensor v = leaf({s.batch, s.heads, s.keys, s.dims});
                // With more queries than keys the first see none (NaN); leave them out.
                const std::int64_t first = causal ? std::max<std::int64_t>(s.queries - s.keys, 0)
                                                  : 0;
                BOOST_TEST(kael::autograd::gradcheck(
                    [&](const Inputs& in) {
                        return kael::scaled_dot_product_attention(in[0], in[1], in[2], causal)
                            .slice(2, first, s.queries);
                    },
                    {q, k, v}));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(gradients_match_the_composed_formula) {
    kael::manual_seed(8);
    for (const DType dtype : {DType::F32, DType::F64}) {
        const double tolerance = dtype == DType::F32 ? 1e-4 : 1e-11;
        for (const bool causal : {false, true}) {
            const Tensor weights = kael::randn({2, 2, 6, 8}, dtype);
            std::vector<Tensor> fused;
            std::vector<Tensor> reference;
            for (const bool use_fused : {true, false}) {
                kael::manual_seed(9);
                const Tensor q = leaf({2, 2, 6, 8}, dtype);
                const Tensor k = leaf({2, 2, 9, 8}, dtype);
                const Tensor v = leaf({2, 2, 9, 8}, dtype);
                const Tensor out = use_fused ? kael::scaled_dot_product_attention(q, k, v, causal)
                                             : composed(q, k, v, causal);
                kael::sum(out * weights).backward();
                std::vector<Tensor>& grads = use_fused ? fused : reference;
                grads = {q.grad(), k.grad(), v.grad()};
            }
            for (std::size_t i = 0; i < 3; ++i) {
                check_close(fused[i], reference[i], tolerance);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(empty_inputs) {
    const Tensor q = leaf({0, 2, 3, 4});
    const Tensor k = leaf({0, 2, 5, 4});
    Tensor out = kael::scaled_dot_product_attention(q, k, k, true);
    BOOST_TEST((out.shape() == Shape{0, 2, 3, 4}));
    kael::sum(out).backward();
    BOOST_TEST((q.grad().shape() == Shape{0, 2, 3, 4}));
    // No queries: the keys and values get zero gradients.
    const Tensor none = leaf({1, 2, 0, 4});
    const Tensor keys = leaf({1, 2, 5, 4});
    out = kael::scaled_dot_product_attention(none, keys, keys);
    BOOST_TEST((out.shape() == Shape{1, 2, 0, 4}));
    kael::sum(out).backward();
    BOOST_TEST(kael::sum(kael::abs(keys.grad())).item<double>() == 0.0);
}

BOOST_AUTO_TEST_CASE(queries_that_see_no_key_give_nan) {
    const Tensor q = kael::randn({1, 1, 4, 2});
    const Tensor k = kael::randn({1, 1, 2, 2});
    const std::vector<float> out = kael::scaled_dot_product_attention(q, k, k, true).to_vector<float>();
    // Aligned at the end: queries 0 and 1 see nothing, 2 sees key 0, 3 sees both.
    BOOST_TEST(std::isnan(out[0]));
    BOOST_TEST(std::isnan(out[3]));
    BOOST_TEST(!std::isnan(out[4]));
    BOOST_TEST(!std::isnan(out[7]));
}

BOOST_AUTO_TEST_CASE(typed_errors_name_the_op) {
    const Tensor q = kael::randn({1, 2, 3, 4});
    const auto message_of = [](const std::function<void()>& call) {
        try {
            call();
        } catch (const kael::Error& error) {
            return std::string(error.what());
        }
        return std::string("no error");
    };
    const auto attend = [](const Tensor& a, const Tensor& b, const Tensor& c,
                           std::optional<double> scale = std::nullopt) {
        (void)kael::scaled_dot_product_attention(a, b, c, false, scale);
    };
    BOOST_CHECK_THROW(attend(q.to(DType::I64), q.to(DType::I64), q.to(DType::I64)),
                      kael::TypeError);
    BOOST_CHECK_THROW(attend(q, q.to(DType::F64), q), kael::TypeError);
    BOOST_CHECK_THROW(attend(q.reshape({2, 3, 4}), q, q), kael::ValueError);
    BOOST_CHECK_THROW(attend(q, kael::randn({1, 2, 3, 5}), q), kael::ValueError);
    BOOST_CHECK_THROW(attend(q, q, kael::randn({1, 2, 4, 4})), kael::ValueError);
    BOOST_CHECK_THROW(attend(q, kael::randn({1, 2, 0, 4}), kael::randn({1, 2, 0, 4})),
                      kael::ValueError);
    BOOST_CHECK_THROW(attend(q, q, q, std::numeric_limits<double>::infinity()), kael::ValueError);
    const std::string message = message_of([&] { attend(q, kael::randn({2, 2, 3, 4}), q); });
    BOOST_TEST(message.find("scaled_dot_product_attention") != std::string::npos, message);
}

// cached_attention reads only each batch's filled keys: it equals scaled_dot_product_attention
// on those keys alone, whatever the slots past them hold (NaN here).
BOOST_AUTO_TEST_CASE(cached_attention_reads_only_the_filled_keys) {
    kael::manual_seed(17);
    for (const DType dtype : {DType::F32, DType::F64}) {
        for (const std::int64_t queries : {1, 3}) {
            for (const bool causal : {false, true}) {
                BOOST_TEST_CONTEXT("queries " << queries << ", causal " << causal) {
                    const std::vector<std::int64_t> filled{5, 3};
                    const Tensor q = kael::randn({2, 2, queries, 4}, dtype);
                    Tensor k = kael::randn({2, 2, 8, 4}, dtype);
                    Tensor v = kael::randn({2, 2, 8, 4}, dtype);
                    for (std::int64_t b = 0; b < 2; ++b) {
                        k.select(0, b).slice(1, filled[b], 8).copy_(kael::full({}, NAN, dtype));
                        v.select(0, b).slice(1, filled[b], 8).copy_(kael::full({}, NAN, dtype));
                    }
                    const Tensor out =
                        kael::cached_attention(q, k, v, kael::tensor(filled, {2}), causal);
                    BOOST_TEST(out.shape() == (Shape{2, 2, queries, 4}));
                    for (std::int64_t b = 0; b < 2; ++b) {
                        const auto part = [&](const Tensor& t) {
                            return t.slice(0, b, b + 1).slice(2, 0, filled[b]);
                        };
                        const Tensor expected = kael::scaled_dot_product_attention(
                            q.slice(0, b, b + 1), part(k), part(v), causal);
                        BOOST_TEST(kael::allclose(out.slice(0, b, b + 1), expected, 1e-5, 1e-6),
                                   "batch " << b);
                    }
                }
            }
        }
    }
    // No filled key: NaN, as a query that sees no key in scaled_dot_product_attention.
    const Tensor q = kael::randn({1, 1, 1, 2});
    const Tensor k = kael::randn({1, 1, 4, 2});
    const std::vector<float> none =
        kael::cached_attention(q, k, k, kael::tensor(std::vector<std::int64_t>{0}, {1}))
            .to_vector<float>();
    BOOST_TEST(std::isnan(none[0]));
}

BOOST_AUTO_TEST_CASE(cached_attention_refuses_bad_lengths_and_grad) {
    const Tensor q = kael::randn({2, 1, 1, 4});
    const Tensor k = kael::randn({2, 1, 6, 4});
    const auto lengths = [](std::vector<std::int64_t> values) {
        const auto count = static_cast<std::int64_t>(values.size());
        return kael::tensor(values, {count});
    };
    BOOST_CHECK_THROW((void)kael::cached_attention(q, k, k, lengths({7, 1})), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::cached_attention(q, k, k, lengths({-1, 1})), kael::IndexError);
    BOOST_CHECK_THROW((void)kael::cached_attention(q, k, k, lengths({1})), kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cached_attention(q, k, k, lengths({1, 2}).to(DType::F32)),
                      kael::ValueError);
    BOOST_CHECK_THROW((void)kael::cached_attention(q, k, k, Tensor()), kael::ValueError);
    const Tensor leaf = q.detach().set_requires_grad(true);
    BOOST_CHECK_THROW((void)kael::cached_attention(leaf, k, k, lengths({6, 6})), kael::ValueError);
    {
        const kael::NoGradGuard no_grad;
        BOOST_TEST(kael::allclose(kael::cached_attention(leaf, k, k, lengths({6, 6}), false),
                                  kael::scaled_dot_product_attention(q, k, k)));
    }
    try {
        (void)kael::cached_attention(q, k.to(DType::F64), k, lengths({1, 1}));
        BOOST_FAIL("no error");
    } catch (const kael::TypeError& error) {
        BOOST_TEST(std::string(error.what()).find("cached_attention") != std::string::npos);
    }
}

// cached_attention_appending stores the new keys and values at each batch's last filled slots,
// then attends: the same as storing them by hand and calling cached_attention; bad lengths
// (fewer than the queries, or past the capacity) and a new key of another shape are errors
// naming the op, and nothing is stored then.
BOOST_AUTO_TEST_CASE(cached_attention_appending_stores_then_attends) {
    kael::manual_seed(71);
    const kael::NoGradGuard no_grad;
    for (const std::int64_t queries : {1, 2}) {
        BOOST_TEST_CONTEXT("queries " << queries) {
            const std::vector<std::int64_t> filled{5, 3};
            const Tensor lengths = kael::tensor(filled, {2});
            const Tensor q = kael::randn({2, 2, queries, 4});
            const Tensor new_k = kael::randn({2, 2, queries, 4});
            const Tensor new_v = kael::randn({2, 2, queries, 4});
            Tensor k = kael::randn({2, 2, 8, 4});
            Tensor v = kael::randn({2, 2, 8, 4});
            Tensor k_by_hand = k.clone();
            Tensor v_by_hand = v.clone();
            for (std::int64_t b = 0; b < 2; ++b) {
                const std::int64_t first = filled[b] - queries;
                k_by_hand.select(0, b).slice(1, first, filled[b]).copy_(new_k.select(0, b));
                v_by_hand.select(0, b).slice(1, first, filled[b]).copy_(new_v.select(0, b));
            }
            const Tensor out = kael::cached_attention_appending(q, k, v, new_k, new_v, lengths);
            BOOST_TEST(kael::allclose(k, k_by_hand, 0.0, 0.0));
            BOOST_TEST(kael::allclose(v, v_by_hand, 0.0, 0.0));
            BOOST_TEST(kael::allclose(out, kael::cached_attention(q, k_by_hand, v_by_hand, lengths),
                                      1e-6, 1e-7));
        }
    }
    const Tensor q = kael::randn({1, 1, 2, 4});
    Tensor k = kael::zeros({1, 1, 6, 4});
    const auto call = [&](std::int64_t length, const Tensor& new_k) {
        return kael::cached_attention_appending(
            q, k, k.clone(), new_k, q, kael::tensor(std::vector<std::int64_t>{length}, {1}));
    };
    BOOST_CHECK_THROW((void)call(1, q), kael::IndexError);  // fewer filled slots than queries
    BOOST_CHECK_THROW((void)call(7, q), kael::IndexError);  // past the capacity
    try {
        (void)call(4, kael::randn({1, 1, 3, 4}));
        BOOST_FAIL("no error");
    } catch (const kael::ValueError& error) {
        BOOST_TEST(std::string(error.what()).find("cached_attention_appending") !=
                   std::string::npos);
    }
    BOOST_TEST(kael::allclose(k, kael::zeros({1, 1, 6, 4}), 0.0, 0.0));
}
