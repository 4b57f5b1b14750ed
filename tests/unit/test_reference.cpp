// Every op against numpy: tests/reference/reference_data.json, written by
// tests/reference/generate_reference.py, holds per case the inputs (a base array and a view
// recipe), the outputs and the gradients of sum(output * weight). Each case runs on cpu and is
// checked against those values, then on every other device and checked against cpu.
#define BOOST_TEST_MODULE reference
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/registry.h"
#include "reference_ops.h"

using kael::Device;
using kael::DType;
using kael::Shape;
using kael::Tensor;
using nlohmann::json;

namespace {

struct Document {
    json data;
    std::string error;  // why the file could not be read; empty when it was
};

const Document& document() {
    static const Document loaded = [] {
        Document result;
        try {
            std::ifstream file(KAEL_REFERENCE_DATA);
            if (!file) {
                throw std::runtime_error("cannot open " + std::string(KAEL_REFERENCE_DATA));
            }
            result.data = json::parse(file);
        } catch (const std::exception& error) {
            result.error = error.what();
        }
        return result;
    }();
    return loaded;
}

const json& case_named(const std::string& name) {
    for (const json& entry : document().data.at("cases")) {
        if (entry.at("name") == name) {
            return entry;
        }
    }
    throw std::runtime_error("no case " + name);
}

std::vector<std::string> case_names() {
    std::vector<std::string> names;
    if (document().error.empty()) {
        for (const json& entry : document().data.at("cases")) {
            names.push_back(entry.at("name").get<std::string>());
        }
    }
    return names;
}

// Expected values in logical order, from the data file or from a cpu result.
struct Values {
    DType dtype = DType::F64;
    Shape shape;
    std::vector<double> reals;
    std::vector<std::int64_t> integers;  // i64 and bool
};

double real_from(const json& value) {
    if (value.is_string()) {
        const std::string text = value.get<std::string>();
        const double infinity = std::numeric_limits<double>::infinity();
        if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (text == "inf") return infinity;
        if (text == "-inf") return -infinity;
        throw std::runtime_error("bad number " + text);
    }
    return value.get<double>();
}

Values values_from(const json& spec) {
    Values out;
    out.dtype = kael::parse_dtype(spec.at("dtype").get<std::string>());
    out.shape = spec.at("shape").get<Shape>();
    for (const json& value : spec.at("values")) {
        if (kael::is_floating(out.dtype)) {
            out.reals.push_back(real_from(value));
        } else if (out.dtype == DType::Bool) {
            out.integers.push_back(value.get<bool>() ? 1 : 0);
        } else {
            out.integers.push_back(value.get<std::int64_t>());
        }
    }
    return out;
}

Values values_from(const Tensor& tensor) {
    Values out{tensor.dtype(), tensor.shape(), {}, {}};
    if (kael::is_floating(tensor.dtype())) {
        out.reals = tensor.to_vector<double>();
    } else {
        out.integers = tensor.to_vector<std::int64_t>();
    }
    return out;
}

Tensor tensor_from(const Values& values, const Device& device) {
    const Shape flat{static_cast<std::int64_t>(std::max(values.reals.size(),
                                                        values.integers.size()))};
    Tensor out;
    if (kael::is_floating(values.dtype)) {
        // f32 values are written exactly as f64, so the conversion does not round.
        out = kael::tensor(values.reals, flat).to(values.dtype);
    } else if (values.dtype == DType::I64) {
        out = kael::tensor(values.integers, flat);
    } else {
        out = kael::tensor_bool(std::vector<bool>(values.integers.begin(), values.integers.end()),
                                flat);
    }
    return out.reshape(values.shape).to(device);
}

Tensor apply_view(Tensor tensor, const json& recipe) {
    for (const json& step : recipe) {
        const std::string kind = step.at(0).get<std::string>();
        if (kind == "transpose") {
            tensor = tensor.transpose(step.at(1).get<std::int64_t>(),
                                      step.at(2).get<std::int64_t>());
        } else if (kind == "permute") {
            tensor = tensor.permute(step.at(1).get<Shape>());
        } else if (kind == "slice") {
            tensor = tensor.slice(step.at(1).get<std::int64_t>(), step.at(2).get<std::int64_t>(),
                                  step.at(3).get<std::int64_t>(), step.at(4).get<std::int64_t>());
        } else if (kind == "expand") {
            tensor = tensor.expand(step.at(1).get<Shape>());
        } else {
            throw std::runtime_error("unknown view step " + kind);
        }
    }
    return tensor;
}

// Outputs and the gradient of every input that asks for one (undefined otherwise).
struct Run {
    std::vector<Tensor> outputs;
    std::vector<Tensor> grads;
};

Run run_case(const json& entry, const Device& device) {
    std::vector<Tensor> bases;
    std::vector<Tensor> inputs;
    for (const json& spec : entry.at("inputs")) {
        Tensor base = tensor_from(values_from(spec), device);
        if (spec.at("grad").get<bool>()) {
            base.set_requires_grad(true);
        }
        bases.push_back(base);
        inputs.push_back(apply_view(base, spec.at("view")));
        BOOST_TEST_REQUIRE((inputs.back().device() == device));
    }
    Run run;
    const auto& ops = kael_test::reference_ops();
    const auto op = ops.find(entry.at("op").get<std::string>());
    BOOST_TEST_REQUIRE((op != ops.end()), "no kael call for op " << entry.at("op"));
    run.outputs = op->second(inputs, entry.at("params"));
    if (!entry.at("weight").is_null()) {
        const Tensor weight = tensor_from(values_from(entry.at("weight")), device);
        for (const Tensor& out : run.outputs) {
            if (kael::is_floating(out.dtype())) {
                kael::sum(out * weight).backward();
                break;
            }
        }
    }
    for (const Tensor& base : bases) {
        run.grads.push_back(base.requires_grad() ? base.grad() : Tensor());
    }
    return run;
}

// NaN equals NaN, infinities must match, integers and bools exactly.
void check_values(const Tensor& actual, const Values& expected, const std::string& what) {
    BOOST_TEST_CONTEXT(what) {
        BOOST_TEST_REQUIRE(actual.defined(), "no tensor");
        BOOST_TEST(kael::to_string(actual.dtype()) == kael::to_string(expected.dtype));
        BOOST_TEST_REQUIRE(kael::to_string(actual.shape()) == kael::to_string(expected.shape));
        const Values got = values_from(actual.to(expected.dtype));
        if (!kael::is_floating(expected.dtype)) {
            BOOST_TEST(got.integers == expected.integers, boost::test_tools::per_element());
            return;
        }
        const bool f32 = expected.dtype == DType::F32;
        const double rtol = f32 ? 1e-5 : 1e-10;
        const double atol = f32 ? 1e-6 : 1e-10;
        int reported = 0;
        for (std::size_t i = 0; i < expected.reals.size(); ++i) {
            const double a = got.reals[i];
            const double e = expected.reals[i];
            const bool ok = std::isnan(e)   ? std::isnan(a)
                            : std::isinf(e) ? a == e
                                            : std::abs(a - e) <= atol + rtol * std::abs(e);
            if (!ok && reported++ < 4) {
                BOOST_ERROR("element " << i << ": " << std::setprecision(17) << a
                                       << " instead of " << e);
            }
        }
        BOOST_TEST(reported == 0, reported << " elements differ");
    }
}

void check_against_reference(const json& entry, const Run& run) {
    const json& outputs = entry.at("outputs");
    BOOST_TEST_REQUIRE(run.outputs.size() == outputs.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        check_values(run.outputs[k], values_from(outputs[k]), "output " + std::to_string(k));
    }
    const json& grads = entry.at("grads");
    for (std::size_t k = 0; k < grads.size(); ++k) {
        if (grads[k].is_null()) {
            continue;
        }
        const Values expected = values_from(grads[k]);
        const std::string what = "gradient of input " + std::to_string(k);
        if (!run.grads[k].defined() && expected.reals.empty()) {
            continue;  // an input without elements may get no gradient at all
        }
        check_values(run.grads[k], expected, what);
    }
}

void check_against_cpu(const Run& device_run, const Run& cpu_run) {
    for (std::size_t k = 0; k < cpu_run.outputs.size(); ++k) {
        check_values(device_run.outputs.at(k).cpu(), values_from(cpu_run.outputs[k]),
                     "output " + std::to_string(k));
    }
    for (std::size_t k = 0; k < cpu_run.grads.size(); ++k) {
        if (cpu_run.grads[k].defined()) {
            check_values(device_run.grads.at(k).defined() ? device_run.grads[k].cpu() : Tensor(),
                         values_from(cpu_run.grads[k]), "gradient of input " + std::to_string(k));
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(data_file_covers_every_op) {
    BOOST_TEST_REQUIRE(document().error.empty(), document().error);
    const json& header = document().data.at("header");
    BOOST_TEST(header.at("numpy").get<std::string>().size() > 0U);
    BOOST_TEST(header.at("seed").is_number_integer());
    std::set<std::string> used;
    for (const json& entry : document().data.at("cases")) {
        used.insert(entry.at("op").get<std::string>());
    }
    for (const auto& [name, op] : kael_test::reference_ops()) {
        BOOST_TEST(used.count(name) == 1U, "no reference case for " << name);
    }
    BOOST_TEST(case_names().size() >= 300U);
}

BOOST_DATA_TEST_CASE(matches_numpy, boost::unit_test::data::make(case_names()), name) {
    const json& entry = case_named(name);
    std::string where = "cpu";
    try {
        const Run cpu_run = run_case(entry, kael::kCPU);
        check_against_reference(entry, cpu_run);
        for (const kael::DeviceInfo& info : kael::devices()) {
            if (info.device.is_cpu()) {
                continue;
            }
            where = info.device.str();
            BOOST_TEST_MESSAGE(name << ": comparing " << where << " with cpu");
            BOOST_TEST_CONTEXT("on " << where << " against cpu") {
                check_against_cpu(run_case(entry, info.device), cpu_run);
            }
        }
    } catch (const std::exception& error) {
        // Named here: an escaping exception would be reported without the case.
        BOOST_ERROR(name << " on " << where << " threw: " << error.what());
    }
}
