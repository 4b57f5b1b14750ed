#include <cmath>
#include <cstring>
#include <fstream>

#include "kael/autograd.h"
#include "kael/nn.h"

namespace kael::nn {

namespace {

constexpr char kMagic[8] = {'K', 'A', 'E', 'L', 'P', 'R', 'M', '1'};

Tensor uniform(const Shape& shape, double bound, const Device& device) {
    const NoGradGuard guard;
    return ((rand(shape) * 2.0 - 1.0) * bound).to(device);
}

template <typename T> void write_value(std::ofstream& out, T value) {
    out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T> T read_value(std::ifstream& in, const std::string& path) {
    T value{};
    if (!in.read(reinterpret_cast<char*>(&value), sizeof(T))) {
        throw ValueError("load: " + path + " is truncated");
    }
    return value;
}

}  // namespace

Tensor Module::forward(const Tensor&) {
    throw TypeError("this module has no single-tensor forward");
}

Tensor& Module::register_parameter(const std::string& name, const Tensor& value) {
    parameters_.emplace_back(name, value.detach().set_requires_grad(true));
    return parameters_.back().second;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
    std::vector<std::pair<std::string, Tensor>> result = parameters_;
    for (const auto& [prefix, child] : children_) {
        for (const auto& [name, parameter] : child->named_parameters()) {
            result.emplace_back(prefix + "." + name, parameter);
        }
    }
    return result;
}

std::vector<Tensor> Module::parameters() const {
    std::vector<Tensor> result;
    for (const auto& named : named_parameters()) {
        result.push_back(named.second);
    }
    return result;
}

std::int64_t Module::parameter_count() const {
    std::int64_t count = 0;
    for (const Tensor& parameter : parameters()) {
        count += parameter.numel();
    }
    return count;
}

void Module::zero_grad() {
    for (const Tensor& parameter : parameters()) {
        parameter.set_grad(Tensor());
    }
}

void Module::to(const Device& device) {
    const NoGradGuard guard;
    for (Tensor& parameter : parameters()) {
        parameter.move_to_(device);
    }
}

void Module::train(bool training) {
    training_ = training;
    for (const auto& child : children_) {
        child.second->train(training);
    }
}

void Module::save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    if (!out) {
        throw ValueError("save: cannot write " + path);
    }
    const auto named = named_parameters();
    out.write(kMagic, sizeof(kMagic));
    write_value<std::uint64_t>(out, named.size());
    for (const auto& [name, parameter] : named) {
        write_value<std::uint64_t>(out, name.size());
        out.write(name.data(), static_cast<std::streamsize>(name.size()));
        write_value<std::int32_t>(out, static_cast<std::int32_t>(parameter.dtype()));
        write_value<std::uint64_t>(out, parameter.shape().size());
        for (const std::int64_t size : parameter.shape()) {
            write_value<std::int64_t>(out, size);
        }
        const Tensor host = parameter.detach().cpu().contiguous();
        out.write(static_cast<const char*>(host.device_data()),
                  static_cast<std::streamsize>(host.nbytes()));
    }
    if (!out) {
        throw ValueError("save: writing " + path + " failed");
    }
}

void Module::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw ValueError("load: cannot read " + path);
    }
    char magic[sizeof(kMagic)];
    if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
        throw ValueError("load: " + path + " is not a kael parameter file");
    }
    const auto named = named_parameters();
    const auto count = read_value<std::uint64_t>(in, path);
    if (count != named.size()) {
        throw ValueError("load: " + path + " holds " + std::to_string(count) +
                         " parameters, the module has " + std::to_string(named.size()));
    }
    std::vector<Tensor> values;
    for (const auto& [name, parameter] : named) {
        const auto length = read_value<std::uint64_t>(in, path);
        if (length > 4096) {
            throw ValueError("load: " + path + " is corrupt (a name of " + std::to_string(length) +
                             " bytes)");
        }
        std::string stored(length, '\0');
        in.read(stored.data(), static_cast<std::streamsize>(length));
        const auto dtype = static_cast<DType>(read_value<std::int32_t>(in, path));
        const auto rank = read_value<std::uint64_t>(in, path);
        if (rank > 64) {
            throw ValueError("load: " + path + " is corrupt (a tensor of rank " +
                             std::to_string(rank) + ")");
        }
        Shape shape(rank);
        for (std::int64_t& size : shape) {
            size = read_value<std::int64_t>(in, path);
        }
        if (stored != name || dtype != parameter.dtype() || shape != parameter.shape()) {
            throw ValueError("load: " + path + " has '" + stored + "' " + to_string(shape) + " " +
                             to_string(dtype) + " where the module has '" + name + "' " +
                             to_string(parameter.shape()) + " " + to_string(parameter.dtype()));
        }
        Tensor host = empty(shape, dtype);
        if (!in.read(static_cast<char*>(host.device_data()),
                     static_cast<std::streamsize>(host.nbytes()))) {
            throw ValueError("load: " + path + " is truncated");
        }
        values.push_back(host);
    }
    const NoGradGuard guard;  // nothing is changed until the whole file has been read
    for (std::size_t i = 0; i < named.size(); ++i) {
        Tensor target = named[i].second;
        target.copy_(values[i].to(target.device()));
    }
}

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias,
               Device device) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(std::max<std::int64_t>(in_features, 1)));
    weight = register_parameter("weight", uniform({out_features, in_features}, bound, device));
    if (with_bias) {
        bias = register_parameter("bias", uniform({out_features}, bound, device));
    }
}

Tensor Linear::forward(const Tensor& input) { return linear(input, weight, bias); }

Embedding::Embedding(std::int64_t count, std::int64_t dim, Device device) {
    const NoGradGuard guard;
    weight = register_parameter("weight", randn({count, dim}).to(device));
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(weight, indices); }

LayerNorm::LayerNorm(std::int64_t dim, double epsilon, Device device) : eps(epsilon) {
    weight = register_parameter("weight", ones({dim}, DType::F32, device));
    bias = register_parameter("bias", zeros({dim}, DType::F32, device));
}

Tensor LayerNorm::forward(const Tensor& input) { return layer_norm(input, weight, bias, eps); }

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules)
    : modules_(std::move(modules)) {
    for (std::size_t i = 0; i < modules_.size(); ++i) {
        register_module(std::to_string(i), modules_[i]);
    }
}

Tensor Sequential::forward(const Tensor& input) {
    Tensor x = input;
    for (const auto& module : modules_) {
        x = module->forward(x);
    }
    return x;
}

}  // namespace kael::nn
