#include <cmath>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>

#include "conformance.h"

namespace conformance {

namespace {

std::int64_t g_checks = 0;
std::int64_t g_error_checks = 0;

// The error kind of the exception in flight, with its message.
std::string current_error() {
    try {
        throw;
    } catch (const kael::OutOfMemoryError& e) {
        return std::string("OutOfMemoryError: ") + e.what();
    } catch (const kael::IndexError& e) {
        return std::string("IndexError: ") + e.what();
    } catch (const kael::TypeError& e) {
        return std::string("TypeError: ") + e.what();
    } catch (const kael::ValueError& e) {
        return std::string("ValueError: ") + e.what();
    } catch (const kael::DeviceError& e) {
        return std::string("DeviceError: ") + e.what();
    } catch (const kael::Error& e) {
        return std::string("Error: ") + e.what();
    } catch (const std::exception& e) {
        return std::string("std::exception: ") + e.what();
    }
}

std::string kind_of(const std::string& error) {
    return error.substr(0, error.find(':'));
}

bool close(double got, double want, double rtol, double atol, bool zero_sign) {
    if (std::isnan(got) || std::isnan(want)) {
        return std::isnan(got) && std::isnan(want);
    }
    if (std::isinf(got) || std::isinf(want)) {
        return got == want;
    }
    if (zero_sign && got == 0 && want == 0) {
        return std::signbit(got) == std::signbit(want);
    }
    return std::abs(got - want) <= rtol * std::abs(want) + atol;
}

template <typename T, typename Same>
void compare_elements(const Tensor& on_device, const Tensor& on_cpu, Same same) {
    const std::vector<T> got = on_device.cpu().to_vector<T>();
    const std::vector<T> want = on_cpu.to_vector<T>();
    std::ostringstream first;
    first << std::setprecision(17);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (!same(got[i], want[i])) {
            if (++mismatches <= 4) {
                first << " [" << i << "] device " << +got[i] << " cpu " << +want[i] << ";";
            }
        }
    }
    BOOST_CHECK_MESSAGE(mismatches == 0, mismatches << " of " << want.size()
                                                    << " elements differ (flat index, logical "
                                                       "order):"
                                                    << first.str());
}

Tensor flat(std::vector<double> numbers, const Shape& shape) {
    const auto count = static_cast<std::int64_t>(numbers.size());
    return kael::tensor(numbers, {count}).reshape(shape);
}

Tensor flat(std::vector<std::int64_t> numbers, const Shape& shape) {
    const auto count = static_cast<std::int64_t>(numbers.size());
    return kael::tensor(numbers, {count}).reshape(shape);
}

}  // namespace

const kael::Device& device() {
    static const kael::Device chosen = [] {
        const char* name = std::getenv("KAEL_TEST_DEVICE");
        const std::string text = name != nullptr && *name != '\0' ? name : "cuda";
        try {
            return kael::Device(text);
        } catch (const kael::ValueError&) {  // no plugin declares the type: setup() says so
            return kael::Device(text.substr(0, text.find(':')), 0);
        }
    }();
    return chosen;
}

std::string dtype_name(DType dtype) {
    return kael::to_string(dtype);
}

void expect_same(const Tensor& on_device, const Tensor& on_cpu, const Tolerance& tolerance) {
    BOOST_CHECK_MESSAGE(on_device.device() == device(), "result lives on "
                                                            << on_device.device().str() << ", not "
                                                            << device().str());
    BOOST_CHECK_MESSAGE(on_device.shape() == on_cpu.shape(),
                        "shape " << kael::to_string(on_device.shape()) << " on the device, "
                                 << kael::to_string(on_cpu.shape()) << " on cpu");
    BOOST_CHECK_MESSAGE(on_device.dtype() == on_cpu.dtype(),
                        "dtype " << dtype_name(on_device.dtype()) << " on the device, "
                                 << dtype_name(on_cpu.dtype()) << " on cpu");
    if (on_device.shape() != on_cpu.shape() || on_device.dtype() != on_cpu.dtype()) {
        return;
    }
    switch (on_cpu.dtype()) {
        case DType::F32:
        case DType::F64: {
            const double rtol = on_cpu.dtype() == DType::F32 ? 1e-4 : 1e-10;
            compare_elements<double>(on_device, on_cpu, [&](double got, double want) {
                return close(got, want, rtol, rtol * tolerance.scale, tolerance.zero_sign);
            });
            break;
        }
        case DType::I64:
            compare_elements<std::int64_t>(on_device, on_cpu,
                                           [](std::int64_t a, std::int64_t b) { return a == b; });
            break;
        case DType::Bool:
            compare_elements<bool>(on_device, on_cpu, [](bool a, bool b) { return a == b; });
            break;
    }
}

namespace {

// Results past the first `outputs` are named as the op's inputs, read back after the op.
void compare_runs(const std::function<Tensors()>& on_device, const std::function<Tensors()>& on_cpu,
                  const Tolerance& tolerance, const std::size_t* outputs = nullptr) {
    ++g_checks;
    Tensors device_results;
    Tensors cpu_results;
    std::string device_error;
    std::string cpu_error;
    try {
        cpu_results = on_cpu();
    } catch (...) {
        cpu_error = current_error();
    }
    try {
        device_results = on_device();
    } catch (...) {
        device_error = current_error();
    }
    if (!cpu_error.empty() || !device_error.empty()) {
        ++g_error_checks;
        BOOST_CHECK_MESSAGE(
            kind_of(device_error) == kind_of(cpu_error),
            "errors differ; cpu: '" << cpu_error << "'; device: '" << device_error << "'");
        return;
    }
    BOOST_TEST_REQUIRE(device_results.size() == cpu_results.size());
    for (std::size_t i = 0; i < cpu_results.size(); ++i) {
        const bool input = outputs != nullptr && i >= *outputs;
        BOOST_TEST_CONTEXT((input ? "input " : "output ")
                           << (input ? i - *outputs : i) << (input ? " after the op" : "")) {
            expect_same(device_results[i], cpu_results[i], tolerance);
        }
    }
}

}  // namespace

void compare_factory(const Factory& make, const Tolerance& tolerance) {
    compare_runs([&] { return make(device()); }, [&] { return make(kael::kCPU); }, tolerance);
}

void run_and_compare(const std::vector<Operand>& operands, const Op& op,
                     const Tolerance& tolerance) {
    Tensors device_inputs;
    Tensors cpu_inputs;
    for (const Operand& operand : operands) {
        device_inputs.push_back(operand.view(operand.base.to(device())));
        cpu_inputs.push_back(operand.view(operand.base.clone()));
    }
    // The inputs are compared afterwards too: an op must not write where it only reads, and an
    // in-place op must write the same values on both sides.
    std::size_t outputs = 0;
    const auto with_inputs = [&](const Tensors& inputs) {
        Tensors results = op(inputs);
        outputs = results.size();
        results.insert(results.end(), inputs.begin(), inputs.end());
        return results;
    };
    compare_runs([&] { return with_inputs(device_inputs); },
                 [&] { return with_inputs(cpu_inputs); }, tolerance, &outputs);
}

Tensor values(DType dtype, const Shape& shape, bool specials) {
    if (dtype == DType::Bool) {
        return kael::bernoulli_mask(shape, 0.5);
    }
    constexpr std::size_t kEvery = 7;
    if (dtype == DType::I64) {
        std::vector<std::int64_t> numbers = kael::randint(-20, 20, shape).to_vector<std::int64_t>();
        const std::int64_t top = std::numeric_limits<std::int64_t>::max();
        const std::int64_t bottom = std::numeric_limits<std::int64_t>::min();
        const std::vector<std::int64_t> special = {top, bottom,  -1,
                                                   0,   top - 1, std::int64_t{1} << 40};
        for (std::size_t i = 3; specials && i < numbers.size(); i += kEvery) {
            numbers[i] = special[(i / kEvery) % special.size()];
        }
        return flat(numbers, shape);
    }
    std::vector<double> numbers = (kael::randn(shape, DType::F64) * 3.0).to_vector<double>();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> special = {std::nan(""), inf, -inf, -0.0, 0.0, 0.5, 1e30};
    for (std::size_t i = 3; specials && i < numbers.size(); i += kEvery) {
        numbers[i] = special[(i / kEvery) % special.size()];
    }
    return flat(numbers, shape).to(dtype);
}

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
        // Layouts for each path of a device's elementwise kernels (plugins/cuda/elementwise.cu):
        // sizes that are no multiple of a pack (8) or a tile (32), and views that defeat each
        // fast path so the next one must be right too.
        const auto shape_of = [](Shape shape) { return [shape](std::size_t) { return shape; }; };
        const auto alternate = [](Shape even, Shape odd) {
            return [even, odd](std::size_t i) { return i % 2 == 0 ? even : odd; };
        };
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

// Fails the whole run up front when nothing serves the device; reports what served it at the end.
struct Conformance {
    void setup() {
        BOOST_TEST_REQUIRE(kael::is_available(device()),
                           "no plugin serves " << device().str()
                                               << "; the device suite cannot pass without a "
                                                  "device");
        kael::reset_fallback_counts();
    }
    void teardown() {
        for (const kael::DeviceInfo& info : kael::devices()) {
            if (info.device == device()) {
                BOOST_TEST_MESSAGE("conformance: " << g_checks << " op x dtype x layout checks ("
                                                   << g_error_checks << " of them error parity) on "
                                                   << device().str() << " served by plugin '"
                                                   << info.plugin << "' (" << info.name << ")");
            }
        }
        const auto counts = kael::fallback_counts();
        if (counts.empty()) {
            BOOST_TEST_MESSAGE("host fallback: none");
        }
        for (const auto& [slot, count] : counts) {
            BOOST_TEST_MESSAGE("host fallback " << slot << ": " << count);
        }
    }
};

BOOST_TEST_GLOBAL_FIXTURE(Conformance);

}  // namespace conformance
