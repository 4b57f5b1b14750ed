#pragma once
// Helpers of the nn, optim and gpt tests.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kael/registry.h"
#include "kael/tensor.h"

template <typename A, typename B>
void check_close(const std::vector<A>& actual, const std::vector<B>& expected, double atol,
                 double rtol = 0) {
    BOOST_REQUIRE_EQUAL(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double a = static_cast<double>(actual[i]);
        const double e = static_cast<double>(expected[i]);
        if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
            BOOST_ERROR("element " << i << ": " << a << " differs from " << e);
            return;
        }
    }
}

// cpu, and cuda:0 where a plugin serves it (the emulated one does without a GPU).
inline std::vector<kael::Device> test_devices() {
    std::vector<kael::Device> devices{kael::kCPU};
    if (kael::is_available(kael::Device("cuda:0"))) {
        devices.emplace_back("cuda:0");
    }
    return devices;
}

inline std::vector<double> v(const kael::Tensor& t) { return t.to_vector<double>(); }

// A file under the temporary folder, removed when the test ends.
struct TempFile {
    std::filesystem::path path;
    explicit TempFile(const std::string& stem)
        : path(std::filesystem::temp_directory_path() /
               (stem + "_" + std::to_string(std::random_device{}()) + ".kael")) {}
    ~TempFile() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

