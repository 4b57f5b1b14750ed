// gradcheck: the Jacobian from backward against central finite differences. A test utility,
// so it reads values on the host.
#include <cmath>
#include <limits>
#include <sstream>

#include "kael/autograd.h"
#include "kael/ops.h"

namespace kael::autograd {

namespace {

using Function = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor from_values(const std::vector<double>& values, const Tensor& like) {
    return tensor(values).reshape(like.shape()).to(like.device());
}

// Output values with input `which` replaced.
std::vector<double> evaluate(const Function& function, std::vector<Tensor> inputs,
                             std::size_t which, const Tensor& replacement) {
    const NoGradGuard no_grad;
    inputs[which] = replacement;
    return function(inputs).to_vector<double>();
}

struct Mismatch {
    double excess = 0;  // how far beyond the tolerance
    std::string where;
};

}  // namespace

bool gradcheck(const Function& function, const std::vector<Tensor>& inputs, double eps,
               double atol, double rtol, bool raise_on_failure) {
    std::vector<Tensor> leaves;
    bool any_checked = false;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].dtype() != DType::F64) {
            throw TypeError("gradcheck: inputs must be f64, input " + std::to_string(k) +
                            " is " + to_string(inputs[k].dtype()));
        }
        Tensor leaf;
        {
            const NoGradGuard no_grad;
            leaf = inputs[k].detach().clone();
        }
        leaf.set_requires_grad(inputs[k].requires_grad());
        any_checked = any_checked || inputs[k].requires_grad();
        leaves.push_back(leaf);
    }
    if (!any_checked) {
        throw ValueError("gradcheck: no input requires grad");
    }
    const Tensor output = function(leaves);
    if (!output.requires_grad()) {
        throw ValueError("gradcheck: the function's output does not require grad");
    }
    const auto outputs = static_cast<std::size_t>(output.numel());

    // analytic[k][j][i]: d output_j / d input_k element i, one backward per output element.
    std::vector<std::vector<std::vector<double>>> analytic(leaves.size());
    for (std::size_t j = 0; j < outputs; ++j) {
        std::vector<double> seed(outputs, 0.0);
        seed[j] = 1.0;
        output.backward(from_values(seed, output).to(output.dtype()), true);
        for (std::size_t k = 0; k < leaves.size(); ++k) {
            if (!leaves[k].requires_grad()) {
                continue;
            }
            const Tensor grad = leaves[k].grad();
            analytic[k].push_back(grad.defined() ? grad.to_vector<double>()
                                                 : std::vector<double>(
                                                       static_cast<std::size_t>(
                                                           leaves[k].numel()), 0.0));
            leaves[k].set_grad(Tensor());
        }
    }

    Mismatch worst;
    for (std::size_t k = 0; k < leaves.size(); ++k) {
        if (!leaves[k].requires_grad()) {
            continue;
        }
        std::vector<double> values = leaves[k].to_vector<double>();
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double original = values[i];
            values[i] = original + eps;
            const std::vector<double> plus =
                evaluate(function, leaves, k, from_values(values, leaves[k]));
            values[i] = original - eps;
            const std::vector<double> minus =
                evaluate(function, leaves, k, from_values(values, leaves[k]));
            values[i] = original;
            for (std::size_t j = 0; j < outputs; ++j) {
                const double numeric = (plus[j] - minus[j]) / (2 * eps);
                const double computed = analytic[k][j][i];
                const double excess =
                    std::abs(computed - numeric) - (atol + rtol * std::abs(numeric));
                if (excess > worst.excess || std::isnan(computed) != std::isnan(numeric)) {
                    std::ostringstream text;
                    text << "input " << k << " element " << i << ", output element " << j
                         << ": backward gives " << computed << ", finite differences give "
                         << numeric;
                    const double infinity = std::numeric_limits<double>::infinity();
                    worst = {std::isnan(excess) ? infinity : excess, text.str()};
                }
            }
        }
    }
    if (worst.excess > 0) {
        if (raise_on_failure) {
            throw ValueError("gradcheck: gradients differ; worst at " + worst.where);
        }
        return false;
    }
    return true;
}

}  // namespace kael::autograd
