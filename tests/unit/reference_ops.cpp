#include "reference_ops.h"

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "kael/ops.h"

namespace kael_test {

namespace {

using kael::Tensor;
using nlohmann::json;
using Tensors = std::vector<Tensor>;

std::optional<std::int64_t> optional_dim(const json& params) {
    const json& dim = params.at("dim");
    return dim.is_null() ? std::nullopt : std::optional<std::int64_t>(dim.get<std::int64_t>());
}
std::int64_t integer(const json& params, const char* key) {
    return params.at(key).get<std::int64_t>();
}
bool flag(const json& params, const char* key) { return params.at(key).get<bool>(); }
double real(const json& params, const char* key) { return params.at(key).get<double>(); }

template <typename F> ReferenceOp unary(F f) {
    return [f](const Tensors& in, const json&) { return Tensors{f(in.at(0))}; };
}
template <typename F> ReferenceOp binary(F f) {
    return [f](const Tensors& in, const json&) { return Tensors{f(in.at(0), in.at(1))}; };
}
template <typename F> ReferenceOp with_scalar(F f) {
    return [f](const Tensors& in, const json& p) {
        return Tensors{f(in.at(0), real(p, "scalar"))};
    };
}

// sum and mean over everything take no keepdim; the case's keepdim keeps every dimension.
template <typename All, typename Dim> ReferenceOp sum_like(All all, Dim by_dim) {
    return [all, by_dim](const Tensors& in, const json& p) {
        const Tensor& a = in.at(0);
        const auto dim = optional_dim(p);
        if (dim) {
            return Tensors{by_dim(a, *dim, flag(p, "keepdim"))};
        }
        const Tensor total = all(a);
        return Tensors{flag(p, "keepdim") ? total.view(kael::Shape(a.shape().size(), 1)) : total};
    };
}
template <typename F> ReferenceOp reduction(F f) {
    return [f](const Tensors& in, const json& p) {
        return Tensors{f(in.at(0), optional_dim(p), flag(p, "keepdim"))};
    };
}
template <typename F> ReferenceOp deviation(F f) {
    return [f](const Tensors& in, const json& p) {
        return Tensors{f(in.at(0), optional_dim(p), integer(p, "correction"), flag(p, "keepdim"))};
    };
}

kael::Reduction reduction_named(const std::string& name) {
    if (name == "mean") return kael::Reduction::Mean;
    if (name == "sum") return kael::Reduction::Sum;
    if (name == "none") return kael::Reduction::None;
    throw std::invalid_argument("unknown reduction " + name);
}

std::map<std::string, ReferenceOp> make_ops() {
    namespace k = kael;
    std::map<std::string, ReferenceOp> ops{
        {"neg", unary([](const Tensor& a) { return k::neg(a); })},
        {"logical_not", unary([](const Tensor& a) { return k::logical_not(a); })},
        // rounding, division family, classification, math, silu, bitwise
        {"round", unary([](const Tensor& a) { return k::round(a); })},
        {"frac", unary(k::frac)},
#define KAEL_UNARY_REFERENCE(name, OP) {#name, unary(k::name)},
        KAEL_FLOAT_MATH_FUNCTIONS(KAEL_UNARY_REFERENCE)
        KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_UNARY_REFERENCE)
        KAEL_ROUNDING_FUNCTIONS(KAEL_UNARY_REFERENCE)
#define KAEL_CLASSIFY_REFERENCE(name, OP, INTEGERS) KAEL_UNARY_REFERENCE(name, OP)
        KAEL_CLASSIFY_FUNCTIONS(KAEL_CLASSIFY_REFERENCE)
#undef KAEL_CLASSIFY_REFERENCE
#undef KAEL_UNARY_REFERENCE
        {"silu", unary(k::silu)},
        {"bitwise_not", unary(k::bitwise_not)},
        {"fmod", binary(k::fmod)},
        {"remainder", binary(k::remainder)},
        {"floor_divide", binary(k::floor_divide)},
        {"bitwise_and", binary(k::bitwise_and)},
        {"bitwise_or", binary(k::bitwise_or)},
        {"bitwise_xor", binary(k::bitwise_xor)},
        {"bitwise_left_shift", binary(k::bitwise_left_shift)},
        {"bitwise_right_shift", binary(k::bitwise_right_shift)},
        {"norm", unary([](const Tensor& a) { return k::norm(a); })},
        {"gelu", [](const Tensors& in, const json& p) {
             return Tensors{k::gelu(in.at(0), p.at("approximate") == "tanh")};
         }},
#define KAEL_BINARY_REFERENCE(name, ...) \
    {#name, binary([](const Tensor& a, const Tensor& b) { return k::name(a, b); })},
        KAEL_ARITHMETIC_FUNCTIONS(KAEL_BINARY_REFERENCE)
        KAEL_COMPARISON_FUNCTIONS(KAEL_BINARY_REFERENCE)
#undef KAEL_BINARY_REFERENCE
        {"matmul", binary([](const Tensor& a, const Tensor& b) { return k::matmul(a, b); })},
        {"embedding",
         binary([](const Tensor& w, const Tensor& i) { return k::embedding(w, i); })},
        {"add_scalar", with_scalar([](const Tensor& a, double s) { return a + s; })},
        {"sub_scalar", with_scalar([](const Tensor& a, double s) { return a - s; })},
        {"mul_scalar", with_scalar([](const Tensor& a, double s) { return a * s; })},
        {"div_scalar", with_scalar([](const Tensor& a, double s) { return a / s; })},
        {"scalar_add", with_scalar([](const Tensor& a, double s) { return s + a; })},
        {"scalar_mul", with_scalar([](const Tensor& a, double s) { return s * a; })},
    };
    ops["where"] = [](const Tensors& in, const json&) {
        return Tensors{k::where(in.at(0), in.at(1), in.at(2))};
    };
    ops["clamp"] = [](const Tensors& in, const json& p) {
        return Tensors{k::clamp(in.at(0), real(p, "low"), real(p, "high"))};
    };
    ops["masked_fill"] = [](const Tensors& in, const json& p) {
        return Tensors{k::masked_fill(in.at(0), in.at(1), real(p, "value"))};
    };
    ops["sum"] = sum_like([](const Tensor& a) { return k::sum(a); },
                          [](const Tensor& a, std::int64_t d, bool keep) {
                              return k::sum(a, d, keep);
                          });
    ops["mean"] = sum_like([](const Tensor& a) { return k::mean(a); },
                           [](const Tensor& a, std::int64_t d, bool keep) {
                               return k::mean(a, d, keep);
                           });
    using Dim = std::optional<std::int64_t>;
    ops["prod"] = reduction([](const Tensor& a, Dim d, bool keep) { return k::prod(a, d, keep); });
    ops["max"] = reduction([](const Tensor& a, Dim d, bool keep) { return k::max(a, d, keep); });
    ops["min"] = reduction([](const Tensor& a, Dim d, bool keep) { return k::min(a, d, keep); });
    ops["argmax"] =
        reduction([](const Tensor& a, Dim d, bool keep) { return k::argmax(a, d, keep); });
    ops["argmin"] =
        reduction([](const Tensor& a, Dim d, bool keep) { return k::argmin(a, d, keep); });
    ops["all"] = reduction([](const Tensor& a, Dim d, bool keep) { return k::all(a, d, keep); });
    ops["any"] = reduction([](const Tensor& a, Dim d, bool keep) { return k::any(a, d, keep); });
    ops["var"] = deviation([](const Tensor& a, Dim d, std::int64_t c, bool keep) {
        return k::var(a, d, c, keep);
    });
    ops["stddev"] = deviation([](const Tensor& a, Dim d, std::int64_t c, bool keep) {
        return k::stddev(a, d, c, keep);
    });
    ops["logsumexp"] = [](const Tensors& in, const json& p) {
        return Tensors{k::logsumexp(in.at(0), integer(p, "dim"), flag(p, "keepdim"))};
    };
    ops["softmax"] = [](const Tensors& in, const json& p) {
        return Tensors{k::softmax(in.at(0), integer(p, "dim"))};
    };
    ops["log_softmax"] = [](const Tensors& in, const json& p) {
        return Tensors{k::log_softmax(in.at(0), integer(p, "dim"))};
    };
    ops["cross_entropy"] = [](const Tensors& in, const json& p) {
        return Tensors{k::cross_entropy(in.at(0), in.at(1),
                                        reduction_named(p.at("reduction").get<std::string>()))};
    };
    ops["layer_norm"] = [](const Tensors& in, const json& p) {
        const Tensor weight = in.size() > 1 ? in[1] : Tensor();
        const Tensor bias = in.size() > 2 ? in[2] : Tensor();
        return Tensors{k::layer_norm(in.at(0), weight, bias, real(p, "eps"))};
    };
    ops["linear"] = [](const Tensors& in, const json&) {
        return Tensors{k::linear(in.at(0), in.at(1), in.size() > 2 ? in[2] : Tensor())};
    };
    ops["gather"] = [](const Tensors& in, const json& p) {
        return Tensors{k::gather(in.at(0), integer(p, "axis"), in.at(1))};
    };
    ops["index_select"] = [](const Tensors& in, const json& p) {
        return Tensors{k::index_select(in.at(0), integer(p, "axis"), in.at(1))};
    };
    ops["scatter_add"] = [](const Tensors& in, const json& p) {
        // In place on a copy: the input itself is a leaf (or a view of one).
        Tensor out = in.at(0).clone();
        k::scatter_add_(out, integer(p, "axis"), in.at(1), in.at(2));
        return Tensors{out};
    };
    ops["cat"] = [](const Tensors& in, const json& p) {
        return Tensors{k::cat(in, integer(p, "dim"))};
    };
    ops["stack"] = [](const Tensors& in, const json& p) {
        return Tensors{k::stack(in, integer(p, "dim"))};
    };
    ops["sort"] = [](const Tensors& in, const json& p) {
        auto [values, indices] = k::sort(in.at(0), integer(p, "dim"), flag(p, "descending"));
        return Tensors{values, indices};
    };
    ops["topk"] = [](const Tensors& in, const json& p) {
        auto [values, indices] =
            k::topk(in.at(0), integer(p, "k"), integer(p, "dim"), flag(p, "largest"));
        return Tensors{values, indices};
    };
    ops["cumsum"] = [](const Tensors& in, const json& p) {
        return Tensors{k::cumsum(in.at(0), integer(p, "dim"))};
    };
    return ops;
}

}  // namespace

const std::map<std::string, ReferenceOp>& reference_ops() {
    static const std::map<std::string, ReferenceOp> ops = make_ops();
    return ops;
}

}  // namespace kael_test
