// Printing reads a host copy; it is the only place the core formats element values.
#include <functional>
#include <iomanip>
#include <sstream>

#include "kael/tensor.h"

namespace kael {

namespace {

void print_level(std::ostringstream& stream, const std::vector<double>& values, const Shape& shape,
                 std::size_t dim, std::size_t& position, DType dtype) {
    if (dim == shape.size()) {
        const double value = values[position++];
        if (dtype == DType::Bool) {
            stream << (value != 0 ? "True" : "False");
        } else if (dtype == DType::I64) {
            stream << static_cast<std::int64_t>(value);
        } else {
            stream << std::setprecision(6) << value;
        }
        return;
    }
    stream << "[";
    for (std::int64_t i = 0; i < shape[dim]; ++i) {
        if (i > 0) {
            stream << ", ";
        }
        print_level(stream, values, shape, dim + 1, position, dtype);
    }
    stream << "]";
}

}  // namespace

std::string Tensor::str() const {
    std::ostringstream stream;
    stream << "tensor(";
    if (dtype() == DType::I64) {
        // Exact digits for large integers.
        const std::vector<std::int64_t> values = to_vector<std::int64_t>();
        std::vector<double> unused(values.size());
        std::ostringstream inner;
        std::size_t position = 0;
        std::function<void(std::size_t)> level = [&](std::size_t d) {
            if (d == shape().size()) {
                inner << values[position++];
                return;
            }
            inner << "[";
            for (std::int64_t i = 0; i < shape()[d]; ++i) {
                inner << (i > 0 ? ", " : "");
                level(d + 1);
            }
            inner << "]";
        };
        level(0);
        stream << inner.str();
    } else {
        const std::vector<double> values = to_vector<double>();
        std::size_t position = 0;
        print_level(stream, values, shape(), 0, position, dtype());
    }
    stream << ", dtype=" << to_string(dtype());
    if (!device().is_cpu()) {
        stream << ", device='" << device().str() << "'";
    }
    stream << ")";
    return stream.str();
}

std::ostream& operator<<(std::ostream& stream, const Tensor& tensor) {
    return stream << tensor.str();
}

}  // namespace kael
