// Conformance, attention: scaled_dot_product_attention forward and its gradients on the device
// against cpu, over sizes that reach every kernel path (one tile, ragged tiles, head dims 1 to
// 128, decoding with a few queries, more keys than queries or fewer, an empty batch), causal or
// not, with q, k and v contiguous, split out of one fused projection, or with a last dim copied
// first; and cached_attention over a fixed-capacity cache. In f32, f64, bf16 and f16.
#include <cmath>

#include "conformance.h"
#include "kael/autograd.h"

using namespace conformance;

namespace {

struct Sizes {
    std::int64_t batch, heads, queries, keys, dims;
};

const Sizes kSizes[] = {{2, 3, 16, 16, 64}, {1, 2, 5, 37, 64}, {2, 2, 70, 70, 80},
                        {1, 3, 1, 300, 64}, {2, 1, 9, 9, 1},   {0, 2, 4, 4, 8},
                        {1, 2, 67, 67, 128}, {1, 2, 20, 90, 64}, {1, 1, 12, 5, 16}};

// Attention's outputs may cancel to near zero, so they get an absolute tolerance too: 4e-4 in
// f32, since the gradients (dS = P (dP - D)) cancel and the device sums them in another order
// (an H100 run was 1.1e-4 off on one of 22400 grad_k elements of the 70x70x80 causal case).
const Tolerance kTolerance{4.0, false};

// bf16 and f16 too: the cuda plugin runs them on tensor cores (P and dS rounded to the dtype for
// their products, as FlashAttention does), the cpu plugin in f32 rounded once. Their gradients
// sit many steps apart on any two devices (D = grad_out . out reads the rounded out, and
// dS = P (dP - D) cancels): about 0.04 at magnitude 5 in f16 on an H100, as PyTorch's flash
// kernels. An absolute tolerance of 32 steps of 1 (bf16) or 64 (f16) covers them.
const DType kDTypes[] = {DType::F32, DType::F64, DType::BF16, DType::F16};

Tolerance tolerance_of(DType dtype) {
    switch (dtype) {
        case DType::BF16: return Tolerance{32.0, false};
        case DType::F16: return Tolerance{64.0, false};
        default: return kTolerance;
    }
}

Tensor leaf_of(const Tensor& t) { return t.detach().set_requires_grad(true); }

// out, then the gradients of sum(out * weights) with respect to each leaf.
Tensors with_gradients(const Tensor& out, const Tensor& weights, const Tensors& leaves) {
    kael::sum(out * weights).backward();
    Tensors results{out};
    for (const Tensor& leaf : leaves) {
        results.push_back(leaf.grad());
    }
    return results;
}

}  // namespace

BOOST_AUTO_TEST_CASE(attention_forward_and_backward_separate_tensors) {
    kael::manual_seed(41);
    for (const DType dtype : kDTypes) {
        for (const Sizes& s : kSizes) {
            const Shape q_shape{s.batch, s.heads, s.queries, s.dims};
            const Shape kv_shape{s.batch, s.heads, s.keys, s.dims};
            for (const bool causal : {false, true}) {
                for (const bool transposed_last : {false, true}) {
                    BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", sizes " << s.batch
                                                << "x" << s.heads << "x" << s.queries << "x"
                                                << s.keys << "x" << s.dims << ", causal "
                                                << causal << ", last dim strided "
                                                << transposed_last) {
                        // k's last dim strided: [B, H, D, Tk] memory read transposed.
                        const Operand key =
                            transposed_last
                                ? Operand{values(dtype, {s.batch, s.heads, s.dims, s.keys}, false),
                                          [](const Tensor& t) { return t.transpose(2, 3); }}
                                : Operand{values(dtype, kv_shape, false)};
                        run_and_compare(
                            {{values(dtype, q_shape, false)}, key,
                             {values(dtype, kv_shape, false)}, {values(dtype, q_shape, false)}},
                            [causal](const Tensors& x) {
                                const Tensors leaves{leaf_of(x[0]), leaf_of(x[1]), leaf_of(x[2])};
                                const Tensor out = kael::scaled_dot_product_attention(
                                    leaves[0], leaves[1], leaves[2], causal);
                                return with_gradients(out, x[3], leaves);
                            },
                            tolerance_of(dtype));
                    }
                }
            }
        }
    }
}

// Decoding over more keys than one block takes (kSplitKeys, 1024 on the cuda plugin): the keys
// split over blocks and merged, with head dims past 64 (four dims a lane). A case of its own, so
// the cases above keep their random values.
BOOST_AUTO_TEST_CASE(attention_decoding_over_split_keys) {
    kael::manual_seed(47);
    for (const DType dtype : kDTypes) {
        for (const bool causal : {false, true}) {
            BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", causal " << causal) {
                run_and_compare(
                    {{values(dtype, {1, 2, 3, 96}, false)},
                     {values(dtype, {1, 2, 2100, 96}, false)},
                     {values(dtype, {1, 2, 2100, 96}, false)}},
                    [causal](const Tensors& x) {
                        return Tensors{
                            kael::scaled_dot_product_attention(x[0], x[1], x[2], causal)};
                    },
                    tolerance_of(dtype));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(attention_heads_split_from_one_projection) {
    kael::manual_seed(42);
    for (const DType dtype : kDTypes) {
        for (const Sizes& s : kSizes) {
            if (s.queries != s.keys) {
                continue;
            }
            const std::int64_t channels = s.heads * s.dims;
            const auto split = [s, channels](const Tensor& fused, std::int64_t part) {
                return fused.slice(2, part * channels, (part + 1) * channels)
                    .reshape({s.batch, s.queries, s.heads, s.dims})
                    .transpose(1, 2);
            };
            for (const bool causal : {false, true}) {
                BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", tokens " << s.queries
                                            << ", dims " << s.dims << ", causal " << causal) {
                    run_and_compare(
                        {{values(dtype, {s.batch, s.queries, 3 * channels}, false)},
                         {values(dtype, {s.batch, s.heads, s.queries, s.dims}, false)}},
                        [&](const Tensors& x) {
                            const Tensor fused = leaf_of(x[0]);
                            const Tensor out = kael::scaled_dot_product_attention(
                                split(fused, 0), split(fused, 1), split(fused, 2), causal);
                            return with_gradients(out, x[1], {fused});
                        },
                        tolerance_of(dtype));
                }
            }
        }
    }
}

namespace {

// A cache laid out as GPT's: keys and values interleaved in one [2, capacity, 2C] buffer of
// kHeads heads of kDims, batch 0 filled to 150 and batch 1 to 77, NaN past them.
constexpr std::int64_t kHeads = 2;
constexpr std::int64_t kDims = 64;
constexpr std::int64_t kCapacity = 200;
constexpr std::int64_t kChannels = kHeads * kDims;

Tensor joint_cache(DType dtype) {
    Tensor joint = values(dtype, {2, kCapacity, 2 * kChannels}, false);
    joint.select(0, 0).slice(0, 150, kCapacity).copy_(kael::full({}, NAN, dtype));
    joint.select(0, 1).slice(0, 77, kCapacity).copy_(kael::full({}, NAN, dtype));
    return joint;
}

Tensor cache_lengths() {
    return kael::tensor(std::vector<std::int64_t>{150, 77}, {2});
}

// The keys (which 0) or values (1) of the joint cache as [2, H, capacity, D].
Tensor cache_part(const Tensor& joint, std::int64_t which) {
    return joint.as_strided({2, kHeads, kCapacity, kDims},
                            {kCapacity * 2 * kChannels, kDims, 2 * kChannels, 1},
                            joint.offset() + which * kChannels);
}

// Every dtype x 1, 4 (the decoding kernel) and 70 queries (the tiled one) x causal or not.
template <typename Check>
void over_cache_calls(const Check& check) {
    for (const DType dtype : kDTypes) {
        for (const std::int64_t queries : {1, 4, 70}) {
            for (const bool causal : {false, true}) {
                BOOST_TEST_CONTEXT("dtype " << dtype_name(dtype) << ", queries " << queries
                                            << ", causal " << causal) {
                    check(dtype, queries, causal);
                }
            }
        }
    }
}

}  // namespace

// cached_attention over a fixed-capacity cache laid out as GPT's, with batches filled to
// different lengths and NaN past them: the decoding path (few queries) and the tiled one.
BOOST_AUTO_TEST_CASE(cached_attention_over_a_joint_cache) {
    kael::manual_seed(43);
    over_cache_calls([](DType dtype, std::int64_t queries, bool causal) {
        run_and_compare(
            {{values(dtype, {2, kHeads, queries, kDims}, false)},
             {joint_cache(dtype)},
             {cache_lengths()}},
            [&](const Tensors& x) {
                const kael::NoGradGuard no_grad;
                return Tensors{kael::cached_attention(x[0], cache_part(x[1], 0),
                                                      cache_part(x[1], 1), x[2], causal)};
            },
            tolerance_of(dtype));
    });
}

// cached_attention_appending: the queries' own keys and values stored into the cache at each
// batch's last filled slots, then attended over (the decoding kernel where the device fuses
// the store; stores and cached_attention otherwise): the output and the filled slots.
BOOST_AUTO_TEST_CASE(cached_attention_appending_into_a_joint_cache) {
    kael::manual_seed(67);
    over_cache_calls([](DType dtype, std::int64_t queries, bool causal) {
        // The new keys and values as views of one projection [B, Tq, 3C].
        const auto projected = [=](const Tensor& qkv, std::int64_t which) {
            return qkv.slice(2, which * kChannels, (which + 1) * kChannels)
                .reshape({2, queries, kHeads, kDims})
                .transpose(1, 2);
        };
        run_and_compare(
            {{joint_cache(dtype)},
             {cache_lengths()},
             {values(dtype, {2, queries, 3 * kChannels}, false)}},
            [&](const Tensors& x) {
                const kael::NoGradGuard no_grad;
                const Tensor out = kael::cached_attention_appending(
                    projected(x[2], 0), cache_part(x[0], 0), cache_part(x[0], 1),
                    projected(x[2], 1), projected(x[2], 2), x[1], causal);
                return Tensors{out, x[0].select(0, 0).slice(0, 0, 150).clone(),
                               x[0].select(0, 1).slice(0, 0, 77).clone()};
            },
            tolerance_of(dtype));
    });
}
