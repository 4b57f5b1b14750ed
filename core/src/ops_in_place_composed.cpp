// PyTorch's in-place forms of existing ops, and lerp/addcmul/addcdiv: each computes its result
// with the out-of-place ops, then writes it through write_into (castable result, no leaf that
// requires grad, autograd recorded), or through scatter_add_/index_put_/masked_fill_.
#include <cmath>
#include <map>
#include <string>

#include "autograd/record.h"
#include "dims.h"
#include "in_place.h"
#include "kael/ops.h"

namespace kael {

namespace {

// The target's current value as an operand: a copy while autograd records, since the
// backward of the op computing the new value may save it and the write would invalidate it.
Tensor operand_of(const Tensor& target) {
    return is_grad_enabled() && target.requires_grad() ? target.clone() : target;
}

Tensor& assign(Tensor& target, const Tensor& result, const char* op) {
    detail::check_castable(result.dtype(), target, op);
    return detail::write_into(target, result, op);
}

Tensor scaled(const Tensor& b, double alpha, const char* op) {
    if (alpha == 1) {
        return b;
    }
    if (!is_floating(b.dtype()) && alpha != std::trunc(alpha)) {
        throw TypeError(std::string(op) + ": for integral input tensors, argument alpha must "
                        "not be a floating point number");
    }
    return b * scalar_tensor(alpha, b.dtype(), b.device());
}

// Index tensor for scatter-style ops: index [k] placed along dim of shape, 1 elsewhere.
Tensor along(const Tensor& index, std::int64_t dim, std::int64_t rank) {
    Shape shape(static_cast<std::size_t>(std::max<std::int64_t>(rank, 1)), 1);
    shape[static_cast<std::size_t>(dim)] = index.numel();
    return index.reshape(shape);
}

void check_index(const Tensor& index, std::int64_t size, const char* op) {
    if (index.dtype() != DType::I64) {
        throw TypeError(std::string(op) + ": index must be int64, got " +
                        to_string(index.dtype()));
    }
    if (index.numel() > 0 && (min(index).item<std::int64_t>() < 0 ||
                              max(index).item<std::int64_t>() >= size)) {
        throw IndexError(std::string(op) + ": index out of range for a dimension of size " +
                         std::to_string(size));
    }
}

}  // namespace

Tensor& add_(Tensor& a, const Tensor& b, double alpha, const char* op) {
    return add_(a, scaled(b, alpha, op), op);
}
Tensor& sub_(Tensor& a, const Tensor& b, double alpha, const char* op) {
    return sub_(a, scaled(b, alpha, op), op);
}

Tensor& pow_(Tensor& a, const Tensor& exponent) {
    return assign(a, pow(operand_of(a), exponent), "pow_");
}

Tensor& unary_(Tensor& a, const std::string& name) {
    using Unary = Tensor (*)(const Tensor&);
    static const std::map<std::string, Unary> functions = {
        {"neg_", &neg},   {"abs_", &abs},         {"exp_", &exp},   {"log_", &log},
        {"sqrt_", &sqrt}, {"sigmoid_", &sigmoid}, {"tanh_", &tanh}, {"relu_", &relu}};
    const auto found = functions.find(name);
    if (found == functions.end()) {
        throw ValueError("unary_: no in-place op named '" + name + "'");
    }
    return assign(a, found->second(operand_of(a)), found->first.c_str());
}

Tensor& clamp_(Tensor& a, const Tensor& min, const Tensor& max) {
    if (!min.defined() && !max.defined()) {
        throw ValueError("clamp_: at least one of min or max must not be None");
    }
    Tensor result = operand_of(a);
    result = min.defined() ? maximum(result, min) : result;
    result = max.defined() ? minimum(result, max) : result;
    return assign(a, result, "clamp_");
}

Tensor& index_add_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& source,
                   double alpha) {
    dim = detail::wrapped_dim(a, dim, "index_add_");
    if (index.dim() > 1) {
        throw ValueError("index_add_: index must be 1-d, got shape " + to_string(index.shape()));
    }
    const Tensor values = a.dim() == 0 ? source.reshape({1}) : source;
    check_index(index, a.dim() == 0 ? 1 : a.size(dim), "index_add_");
    if (values.dim() != std::max<std::int64_t>(a.dim(), 1) ||
        values.size(dim) != index.numel()) {
        throw ValueError("index_add_: source of shape " + to_string(source.shape()) +
                         " does not fit index of " + std::to_string(index.numel()) +
                         " entries along dim " + std::to_string(dim) + " of " +
                         to_string(a.shape()));
    }
    const Tensor positions = along(index, dim, a.dim()).expand(values.shape()).contiguous();
    Tensor target = a.dim() == 0 ? a.view({1}) : a;
    scatter_add_(target, dim, positions, scaled(values, alpha, "index_add_"));
    return a;
}

Tensor& index_fill_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& value) {
    dim = detail::wrapped_dim(a, dim, "index_fill_");
    const std::int64_t size = a.dim() == 0 ? 1 : a.size(dim);
    check_index(index, size, "index_fill_");
    Tensor chosen = zeros({size}, DType::Bool, a.device());
    index_put_(chosen, {index.reshape({-1})}, full({}, 1, DType::Bool, a.device()));
    const Tensor mask = a.dim() == 0 ? chosen.reshape({}) : along(chosen, dim, a.dim());
    return masked_fill_(a, mask, value.to(a.device()));
}

Tensor& scatter_(Tensor& a, std::int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce) {
    if (!reduce.empty() && reduce != "add") {
        throw ValueError("scatter_: reduce must be None or 'add', got '" + reduce + "'");
    }
    dim = detail::wrapped_dim(a, dim, "scatter_");
    if (index.dim() != a.dim()) {
        throw ValueError("scatter_: index of shape " + to_string(index.shape()) +
                         " must have as many dims as self " + to_string(a.shape()));
    }
    if (a.dim() == 0) {
        Tensor target = a.view({1});
        scatter_(target, 0, index.reshape({1}), src.reshape({-1}), reduce);
        return a;
    }
    check_index(index, a.size(dim), "scatter_");
    // Element (i, j) of index names position (index[i][j], j) for dim 0: coordinates per dim.
    std::vector<Tensor> coordinates;
    for (std::int64_t d = 0; d < a.dim(); ++d) {
        coordinates.push_back(d == dim ? index
                                       : along(arange_int(0, index.size(d), 1, DType::I64,
                                                          a.device()),
                                               d, a.dim()));
    }
    Tensor values = src;
    if (src.dim() != 0) {
        for (std::int64_t d = 0; d < a.dim(); ++d) {
            values = values.slice(d, 0, index.size(d));
        }
    }
    return index_put_(a, coordinates, values.to(a.dtype()), reduce == "add");
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
    // Measured from the nearer end, as PyTorch, so weight 1 gives end exactly.
    const Tensor difference = end - start;
    const Tensor half = full({}, 0.5, weight.dtype(), weight.device());
    const Tensor one = full({}, 1, weight.dtype(), weight.device());
    return where(lt(weight, half), start + weight * difference,
                 end - difference * (one - weight));
}

Tensor& lerp_(Tensor& start, const Tensor& end, const Tensor& weight) {
    return assign(start, lerp(operand_of(start), end, weight), "lerp_");
}

Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, double value) {
    return a + scaled(t1 * t2, value, "addcmul");
}
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, double value) {
    if (!is_floating(t1.dtype()) && !is_floating(t2.dtype())) {
        throw TypeError("addcdiv: integer division of tensors is not supported, use floats");
    }
    return a + scaled(t1 / t2, value, "addcdiv");
}
Tensor& addcmul_(Tensor& a, const Tensor& t1, const Tensor& t2, double value) {
    return assign(a, addcmul(operand_of(a), t1, t2, value), "addcmul_");
}
Tensor& addcdiv_(Tensor& a, const Tensor& t1, const Tensor& t2, double value) {
    return assign(a, addcdiv(operand_of(a), t1, t2, value), "addcdiv_");
}

}  // namespace kael
