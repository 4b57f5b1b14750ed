// kael.nn's convolution, pooling and batch/group normalisation (nn_conv.h): the C++ layers as
// bases of the Python classes in kael/nn/_conv_layers.py (which give PyTorch's signatures),
// and the functional forms.
#include "bind_nn.h"
#include "kael/nn_conv.h"

namespace kael::python {

namespace {

namespace F = nn::functional;

void set_weight(nn::Module& layer, const Tensor& value) {
    layer.set_parameter("weight", value);
}
void set_bias(nn::Module& layer, const Tensor& value) {
    layer.set_parameter("bias", value);
}

F::PoolOptions pool_options(const Shape& kernel, const Shape& stride, const Shape& padding,
                            const Shape& dilation, bool ceil_mode, bool count_include_pad,
                            std::optional<std::int64_t> divisor_override) {
    F::PoolOptions options;
    options.kernel = kernel;
    options.stride = stride;
    options.padding = padding;
    options.dilation = dilation;
    options.ceil_mode = ceil_mode;
    options.count_include_pad = count_include_pad;
    options.divisor_override = divisor_override;
    return options;
}

void bind_functional(py::module_& functional) {
    using py::arg;
    functional.def("sliding_windows", &F::sliding_windows, arg("input"), arg("kernel"),
                   arg("stride"), arg("dilation"), py::call_guard<py::gil_scoped_release>(),
                   "input [N, C, *S] -> [N, *O, C, *K]: every window of the kernel.");
    functional.def(
        "convolution_library",
        [](py::handle device) { return F::convolution_library(to_device(device)); }, arg("device"),
        "What device's plugin convolves with (oneDNN, cuDNN), or \"\" (composed).");
    functional.def(
        "pad_mode",
        py::overload_cast<const Tensor&, const Shape&, const std::string&, double>(&F::pad),
        arg("input"), arg("pad"), arg("mode"), arg("value") = 0.0,
        "pad() with mode constant, reflect, replicate or circular.");
    functional.def(
        "conv",
        [](const Tensor& input, const Tensor& weight, py::handle bias, const Shape& stride,
           const Shape& padding, const Shape& dilation, std::int64_t groups) {
            const Tensor b = optional_tensor(bias, "conv", "bias");
            const py::gil_scoped_release released;
            return F::conv(input, weight, b, stride, padding, dilation, groups);
        },
        arg("input"), arg("weight"), arg("bias"), arg("stride"), arg("padding"), arg("dilation"),
        arg("groups"), "conv1d/2d/3d by weight's rank, padding as sizes.");
    functional.def(
        "conv_named",
        [](const Tensor& input, const Tensor& weight, py::handle bias, const Shape& stride,
           const std::string& padding, const Shape& dilation, std::int64_t groups) {
            const Tensor b = optional_tensor(bias, "conv", "bias");
            const py::gil_scoped_release released;
            return F::conv(input, weight, b, stride, padding, dilation, groups);
        },
        arg("input"), arg("weight"), arg("bias"), arg("stride"), arg("padding"), arg("dilation"),
        arg("groups"), "conv1d/2d/3d with padding 'same' or 'valid'.");
    functional.def(
        "conv_transpose",
        [](const Tensor& input, const Tensor& weight, py::handle bias, const Shape& stride,
           const Shape& padding, const Shape& output_padding, std::int64_t groups,
           const Shape& dilation) {
            const Tensor b = optional_tensor(bias, "conv_transpose", "bias");
            const py::gil_scoped_release released;
            return F::conv_transpose(input, weight, b, stride, padding, output_padding, groups,
                                     dilation);
        },
        arg("input"), arg("weight"), arg("bias"), arg("stride"), arg("padding"),
        arg("output_padding"), arg("groups"), arg("dilation"),
        "conv_transpose1d/2d/3d by weight's rank.");
    functional.def("fold_windows", &F::fold_windows, arg("windows"), arg("shape"), arg("kernel"),
                   arg("stride"), arg("dilation"), py::call_guard<py::gil_scoped_release>(),
                   "windows [N, *O, C, *K] summed into [N, C, *S] where each was read.");
    functional.def(
        "max_pool",
        [](const Tensor& input, std::int64_t spatial, const Shape& kernel, const Shape& stride,
           const Shape& padding, const Shape& dilation, bool ceil_mode, bool with_indices) {
            const F::PoolOptions options =
                pool_options(kernel, stride, padding, dilation, ceil_mode, true, std::nullopt);
            if (with_indices) {
                return F::max_pool_with_indices(input, spatial, options);
            }
            return std::pair<Tensor, Tensor>{F::max_pool(input, spatial, options), Tensor()};
        },
        arg("input"), arg("spatial"), arg("kernel"), arg("stride"), arg("padding"), arg("dilation"),
        arg("ceil_mode"), arg("with_indices") = true, py::call_guard<py::gil_scoped_release>(),
        "(values, indices) of max pooling over `spatial` trailing dims (indices undefined "
        "without with_indices).");
    functional.def(
        "avg_pool",
        [](const Tensor& input, std::int64_t spatial, const Shape& kernel, const Shape& stride,
           const Shape& padding, bool ceil_mode, bool count_include_pad,
           std::optional<std::int64_t> divisor_override) {
            return F::avg_pool(input, spatial,
                               pool_options(kernel, stride, padding, {1}, ceil_mode,
                                            count_include_pad, divisor_override));
        },
        arg("input"), arg("spatial"), arg("kernel"), arg("stride"), arg("padding"),
        arg("ceil_mode"), arg("count_include_pad"), arg("divisor_override"),
        py::call_guard<py::gil_scoped_release>(), "Average pooling over `spatial` trailing dims.");
    functional.def("adaptive_avg_pool", &F::adaptive_avg_pool, arg("input"), arg("output_size"),
                   py::call_guard<py::gil_scoped_release>(), "Adaptive average pooling.");
    functional.def("adaptive_max_pool", &F::adaptive_max_pool_with_indices, arg("input"),
                   arg("output_size"), py::call_guard<py::gil_scoped_release>(),
                   "(values, indices) of adaptive max pooling.");
    functional.def(
        "batch_norm",
        [](const Tensor& input, py::handle running_mean, py::handle running_var, py::handle weight,
           py::handle bias, bool training, double momentum, double eps) {
            const Tensor mean = optional_tensor(running_mean, "batch_norm", "running_mean");
            const Tensor var = optional_tensor(running_var, "batch_norm", "running_var");
            const Tensor w = optional_tensor(weight, "batch_norm", "weight");
            const Tensor b = optional_tensor(bias, "batch_norm", "bias");
            const py::gil_scoped_release released;
            return F::batch_norm(input, mean, var, w, b, training, momentum, eps);
        },
        arg("input"), arg("running_mean"), arg("running_var"), arg("weight"), arg("bias"),
        arg("training"), arg("momentum"), arg("eps"), "Batch normalisation over dim 1.");
    functional.def(
        "group_norm",
        [](const Tensor& input, std::int64_t groups, py::handle weight, py::handle bias,
           double eps) {
            const Tensor w = optional_tensor(weight, "group_norm", "weight");
            const Tensor b = optional_tensor(bias, "group_norm", "bias");
            const py::gil_scoped_release released;
            return F::group_norm(input, groups, w, b, eps);
        },
        arg("input"), arg("num_groups"), arg("weight"), arg("bias"), arg("eps"),
        "Group normalisation.");
}

}  // namespace

void bind_conv_layers(py::module_& nn_module) {
    using py::arg;
    py::class_<nn::Conv, nn::Module, std::shared_ptr<nn::Conv>>(
        nn_module, "_Conv", "The C++ layer under kael.nn.Conv1d, Conv2d and Conv3d.")
        .def(py::init([](std::int64_t spatial, std::int64_t in, std::int64_t out,
                         const Shape& kernel, const Shape& stride, const Shape& padding,
                         const std::string& padding_name, const Shape& dilation,
                         std::int64_t groups, bool bias, const std::string& padding_mode,
                         py::handle device, bool transposed, const Shape& output_padding) {
                 nn::ConvOptions options{in,      out,          kernel,     stride,
                                         padding, padding_name, dilation,   groups,
                                         bias,    padding_mode, transposed, output_padding};
                 return std::make_shared<nn::Conv>(spatial, options, to_device(device));
             }),
             arg("spatial"), arg("in_channels"), arg("out_channels"), arg("kernel_size"),
             arg("stride"), arg("padding"), arg("padding_name"), arg("dilation"), arg("groups"),
             arg("bias"), arg("padding_mode"), arg("device"), arg("transposed") = false,
             arg("output_padding") = Shape{0})
        .def_property(
            "weight", [](const nn::Conv& m) { return m.weight; }, set_weight,
            "The weight [out_channels, in_channels / groups, *kernel_size].")
        .def_property(
            "bias", [](const nn::Conv& m) { return tensor_or_none(m.bias); }, set_bias,
            "The bias [out_channels], or None.")
        .def_property_readonly(
            "_options",
            [](const nn::Conv& m) {
                const nn::ConvOptions& o = m.options;
                py::dict d;
                d["in_channels"] = o.in_channels;
                d["out_channels"] = o.out_channels;
                d["kernel_size"] = py::tuple(py::cast(o.kernel_size));
                d["stride"] = py::tuple(py::cast(o.stride));
                d["padding"] = o.padding_name.empty() ? py::object(py::tuple(py::cast(o.padding)))
                                                      : py::object(py::str(o.padding_name));
                d["dilation"] = py::tuple(py::cast(o.dilation));
                d["groups"] = o.groups;
                d["padding_mode"] = o.padding_mode;
                d["output_padding"] = py::tuple(py::cast(o.output_padding));
                return d;
            },
            "The layer's sizes, as PyTorch's attributes.");
    py::class_<nn::Pool, nn::Module, std::shared_ptr<nn::Pool>>(
        nn_module, "_Pool", "The C++ layer under kael.nn's MaxPool and AvgPool.")
        .def(py::init([](std::int64_t spatial, bool max, const Shape& kernel, const Shape& stride,
                         const Shape& padding, const Shape& dilation, bool ceil_mode,
                         bool count_include_pad, std::optional<std::int64_t> divisor_override) {
                 return std::make_shared<nn::Pool>(
                     spatial, max,
                     pool_options(kernel, stride, padding, dilation, ceil_mode, count_include_pad,
                                  divisor_override));
             }),
             arg("spatial"), arg("max"), arg("kernel_size"), arg("stride"), arg("padding"),
             arg("dilation"), arg("ceil_mode"), arg("count_include_pad"), arg("divisor_override"));
    py::class_<nn::AdaptivePool, nn::Module, std::shared_ptr<nn::AdaptivePool>>(
        nn_module, "_AdaptivePool", "The C++ layer under kael.nn's adaptive pools.")
        .def(py::init([](bool max, const Shape& size) {
                 return std::make_shared<nn::AdaptivePool>(max, size);
             }),
             arg("max"), arg("output_size"));
    py::class_<nn::BatchNorm, nn::Module, std::shared_ptr<nn::BatchNorm>>(
        nn_module, "_BatchNorm", "The C++ layer under kael.nn.BatchNorm1d, 2d and 3d.")
        .def(py::init([](std::int64_t spatial, std::int64_t features, double eps,
                         std::optional<double> momentum, bool affine, bool track,
                         py::handle device) {
                 return std::make_shared<nn::BatchNorm>(spatial, features, eps, momentum, affine,
                                                        track, to_device(device));
             }),
             arg("spatial"), arg("num_features"), arg("eps"), arg("momentum"), arg("affine"),
             arg("track_running_stats"), arg("device"))
        .def_property(
            "weight", [](const nn::BatchNorm& m) { return tensor_or_none(m.weight); }, set_weight,
            "The scale [num_features], or None.")
        .def_property(
            "bias", [](const nn::BatchNorm& m) { return tensor_or_none(m.bias); }, set_bias,
            "The shift [num_features], or None.")
        .def_readwrite("eps", &nn::BatchNorm::eps, "Added to the variance.")
        .def_readwrite("momentum", &nn::BatchNorm::momentum,
                       "The running statistics' step (None: cumulative average).")
        .def_readonly("num_features", &nn::BatchNorm::num_features, "Channels.");
    py::class_<nn::GroupNorm, nn::Module, std::shared_ptr<nn::GroupNorm>>(
        nn_module, "_GroupNorm", "The C++ layer under kael.nn.GroupNorm.")
        .def(py::init([](std::int64_t groups, std::int64_t channels, double eps, bool affine,
                         py::handle device) {
                 return std::make_shared<nn::GroupNorm>(groups, channels, eps, affine,
                                                        to_device(device));
             }),
             arg("num_groups"), arg("num_channels"), arg("eps"), arg("affine"), arg("device"))
        .def_property(
            "weight", [](const nn::GroupNorm& m) { return tensor_or_none(m.weight); }, set_weight,
            "The scale [num_channels], or None.")
        .def_property(
            "bias", [](const nn::GroupNorm& m) { return tensor_or_none(m.bias); }, set_bias,
            "The shift [num_channels], or None.")
        .def_readonly("num_groups", &nn::GroupNorm::num_groups, "Groups of channels.")
        .def_readonly("eps", &nn::GroupNorm::eps, "Added to the variance.");
    py::module_ functional = nn_module.def_submodule("_conv", "kael.nn.functional's convolution");
    bind_functional(functional);
}

}  // namespace kael::python
