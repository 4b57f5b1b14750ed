#pragma once
// The ops of tests/reference/reference_data.json by name, as kael calls.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kael/tensor.h"

namespace kael_test {

// Inputs in the order the case lists them, parameters as the case writes them; returns the
// outputs in the case's order.
using ReferenceOp = std::function<std::vector<kael::Tensor>(const std::vector<kael::Tensor>&,
                                                            const nlohmann::json&)>;

[[nodiscard]] const std::map<std::string, ReferenceOp>& reference_ops();

}  // namespace kael_test
