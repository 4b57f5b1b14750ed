// einsum: the equation parsed into one label list per operand, diagonals taken, labels no one
// needs later summed away, then operands contracted left to right as batched matmuls of
// [batch, left, contracted] x [batch, contracted, right] (permute and reshape around each).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "kael/ops.h"

namespace kael {

namespace {

// A label is a letter, or a code >= 256 for each dim '...' stands for (right-aligned).
using Labels = std::vector<int>;

struct Operand {
    Tensor tensor;
    Labels labels;
};

[[noreturn]] void fail(const std::string& equation, const std::string& why) {
    throw ValueError("einsum(): " + why + " (equation '" + equation + "')");
}

// One term's labels; ellipsis_dims: how many dims '...' covers in this operand (-1: output).
Labels parse_term(const std::string& term, std::int64_t rank, std::int64_t& ellipsis_dims,
                  const std::string& equation) {
    Labels labels;
    bool seen_ellipsis = false;
    std::int64_t letters = 0;
    for (std::size_t i = 0; i < term.size(); ++i) {
        if (std::isalpha(static_cast<unsigned char>(term[i]))) {
            ++letters;
        } else if (term.compare(i, 3, "...") == 0 && !seen_ellipsis) {
            seen_ellipsis = true;
            i += 2;
        } else if (term[i] != ' ') {
            fail(equation, "invalid subscript '" + std::string(1, term[i]) +
                               "': only letters and one '...' per term are allowed");
        }
    }
    if (rank >= 0) {
        if (seen_ellipsis ? letters > rank : letters != rank) {
            fail(equation, "the term '" + term + "' has " + std::to_string(letters) +
                               " subscripts for an operand of " + std::to_string(rank) +
                               " dimensions");
        }
        ellipsis_dims = seen_ellipsis ? rank - letters : 0;
    }
    for (std::size_t i = 0; i < term.size(); ++i) {
        if (std::isalpha(static_cast<unsigned char>(term[i]))) {
            labels.push_back(term[i]);
        } else if (term.compare(i, 3, "...") == 0) {
            for (std::int64_t k = 0; k < ellipsis_dims; ++k) {
                labels.push_back(static_cast<int>(256 + ellipsis_dims - 1 - k));
            }
            i += 2;
        }
    }
    return labels;
}

// Takes the diagonal of each label repeated within one operand (ii -> i).
Operand diagonals(Operand op) {
    for (std::size_t i = 0; i < op.labels.size(); ++i) {
        for (std::size_t j = op.labels.size(); j-- > i + 1;) {
            if (op.labels[j] != op.labels[i]) {
                continue;
            }
            const auto a = static_cast<std::int64_t>(i);
            const auto b = static_cast<std::int64_t>(j);
            const std::int64_t n = op.tensor.size(a);
            Shape mask_shape(op.labels.size(), 1);
            mask_shape[i] = n;
            mask_shape[j] = n;
            const Tensor mask = eye(n, n, op.tensor.dtype(), op.tensor.device()).view(mask_shape);
            op.tensor = sum(op.tensor * mask, b);
            op.labels.erase(op.labels.begin() + b);
        }
    }
    return op;
}

// Sums away the labels of op that neither the output nor another operand still needs.
Operand sum_unneeded(Operand op, const std::map<int, int>& needed) {
    for (std::size_t i = op.labels.size(); i-- > 0;) {
        if (needed.count(op.labels[i]) == 0) {
            op.tensor = sum(op.tensor, static_cast<std::int64_t>(i));
            op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    return op;
}

bool contains(const Labels& labels, int label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// A label's size where one operand has it of size other and another of size 1 (broadcast; a
// size 0 wins over 1 too, so empty operands give empty results).
std::int64_t broadcast_size(std::int64_t size, std::int64_t other) {
    return size == 1 ? other : size;
}

// The sizes of labels, read from the operands that have them (1 where only broadcast).
Shape sizes_of(const Labels& labels, const Operand& a, const Operand& b) {
    Shape sizes;
    for (const int label : labels) {
        std::int64_t size = 1;
        for (const Operand* op : {&a, &b}) {
            const auto at = std::find(op->labels.begin(), op->labels.end(), label);
            if (at != op->labels.end()) {
                size = broadcast_size(size, op->tensor.size(at - op->labels.begin()));
            }
        }
        sizes.push_back(size);
    }
    return sizes;
}

// op's dims in the order of groups, each group merged into one dim (absent labels size 1).
Tensor arranged(const Operand& op, const std::vector<Labels>& groups, const Shape& batch_sizes) {
    Shape order;
    Shape view;
    for (const Labels& group : groups) {
        for (const int label : group) {
            const auto at = std::find(op.labels.begin(), op.labels.end(), label);
            if (at != op.labels.end()) {
                order.push_back(at - op.labels.begin());
            }
        }
    }
    Tensor t = op.tensor.permute(order);
    // Insert size-1 dims for batch labels op lacks, then expand batch dims to their sizes.
    Shape full_shape;
    std::size_t next = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        std::int64_t merged = 1;
        for (std::size_t k = 0; k < groups[g].size(); ++k) {
            const bool present = contains(op.labels, groups[g][k]);
            const std::int64_t size = present ? t.size(static_cast<std::int64_t>(next++)) : 1;
            full_shape.push_back(size);
            merged *= g == 0 ? batch_sizes[k] : size;
        }
        view.push_back(merged);
    }
    Shape batch_expanded = full_shape;
    std::copy(batch_sizes.begin(), batch_sizes.end(), batch_expanded.begin());
    return t.reshape(full_shape).expand(batch_expanded).reshape(view);
}

Operand contract(const Operand& a, const Operand& b, const std::map<int, int>& needed_after) {
    Labels batch;
    Labels left;
    Labels right;
    Labels summed;
    for (const int label : a.labels) {
        const bool in_b = contains(b.labels, label);
        if (!in_b) {
            left.push_back(label);
        } else if (needed_after.count(label) != 0) {
            batch.push_back(label);
        } else {
            summed.push_back(label);
        }
    }
    for (const int label : b.labels) {
        if (!contains(a.labels, label)) {
            right.push_back(label);
        }
    }
    const Shape batch_sizes = sizes_of(batch, a, b);
    const Tensor x = arranged(a, {batch, left, summed}, batch_sizes);
    const Tensor y = arranged(b, {batch, summed, right}, batch_sizes);
    Shape out_shape = batch_sizes;
    for (const Labels* group : {&left, &right}) {
        for (const int label : *group) {
            out_shape.push_back(sizes_of({label}, a, b).front());
        }
    }
    Labels labels = batch;
    labels.insert(labels.end(), left.begin(), left.end());
    labels.insert(labels.end(), right.begin(), right.end());
    return {matmul(x, y).reshape(out_shape), labels};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
    const std::size_t arrow = equation.find("->");
    const std::string inputs = equation.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (const char c : inputs) {
        if (c == ',') {
            terms.emplace_back();
        } else {
            terms.back().push_back(c);
        }
    }
    if (terms.size() != operands.size()) {
        fail(equation, std::to_string(terms.size()) + " terms for " +
                           std::to_string(operands.size()) + " operands");
    }
    std::vector<Operand> ops;
    std::int64_t ellipsis_dims = 0;
    std::map<int, int> counts;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        std::int64_t dims = 0;
        ops.push_back({operands[i], parse_term(terms[i], operands[i].dim(), dims, equation)});
        ellipsis_dims = std::max(ellipsis_dims, dims);
        for (const int label : ops.back().labels) {
            ++counts[label];
        }
    }
    std::map<int, std::int64_t> sizes;
    for (const Operand& op : ops) {
        for (std::size_t d = 0; d < op.labels.size(); ++d) {
            const std::int64_t size = op.tensor.size(static_cast<std::int64_t>(d));
            auto [at, fresh] = sizes.emplace(op.labels[d], size);
            if (!fresh && at->second != size && !(op.labels[d] >= 256 && (size == 1 ||
                                                                          at->second == 1))) {
                fail(equation, "subscript '" +
                                   (op.labels[d] < 256 ? std::string(1, static_cast<char>(
                                                                            op.labels[d]))
                                                       : std::string("...")) +
                                   "' has size " + std::to_string(size) + " for an operand "
                                   "where it was " + std::to_string(at->second) + " before");
            }
            at->second = broadcast_size(at->second, size);
        }
    }
    Labels output;
    if (arrow == std::string::npos) {
        // Implicit output: '...' first, then the letters used exactly once, in order.
        for (std::int64_t k = ellipsis_dims; k-- > 0;) {
            output.push_back(static_cast<int>(256 + k));
        }
        for (const auto& [label, count] : counts) {
            if (label < 256 && count == 1) {
                output.push_back(label);
            }
        }
    } else {
        output = parse_term(equation.substr(arrow + 2), -1, ellipsis_dims, equation);
        for (const int label : output) {
            if (std::count(output.begin(), output.end(), label) > 1) {
                fail(equation, "an output subscript appears more than once");
            }
            if (label < 256 && counts.count(label) == 0) {
                fail(equation, "the output subscript '" + std::string(1, static_cast<char>(label)) +
                                   "' does not appear in any input");
            }
        }
    }
    std::map<int, int> needed;  // labels the output or a later operand still needs
    for (const int label : output) {
        needed[label] = 1;
    }
    for (std::size_t i = 1; i < ops.size(); ++i) {
        for (const int label : ops[i].labels) {
            needed[label] = 1;
        }
    }
    Operand result = sum_unneeded(diagonals(ops.front()), needed);
    for (std::size_t i = 1; i < ops.size(); ++i) {
        std::map<int, int> after;
        for (const int label : output) {
            after[label] = 1;
        }
        for (std::size_t j = i + 1; j < ops.size(); ++j) {
            for (const int label : ops[j].labels) {
                after[label] = 1;
            }
        }
        Operand next = diagonals(ops[i]);
        std::map<int, int> needed_by_next = after;
        for (const int label : result.labels) {
            needed_by_next[label] = 1;
        }
        next = sum_unneeded(next, needed_by_next);
        result = contract(result, next, after);
    }
    Shape order;
    for (const int label : output) {
        const auto at = std::find(result.labels.begin(), result.labels.end(), label);
        if (at == result.labels.end()) {
            // A broadcast '...' dim no operand had: size 1.
            result.tensor = result.tensor.unsqueeze(result.tensor.dim());
            result.labels.push_back(label);
            order.push_back(result.tensor.dim() - 1);
        } else {
            order.push_back(at - result.labels.begin());
        }
    }
    return result.tensor.permute(order).contiguous();
}

}  // namespace kael
