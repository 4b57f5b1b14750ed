// kael._optim: the C++ steps that kael.optim's Python optimizers call once per parameter group,
// and gradient clipping for kael.nn.utils. Per-parameter work stays in C++ so step() is fast.
#include "bind_nn.h"
#include "docs_optim.h"
#include "kael/clip_grad.h"
#include "kael/device_graph.h"
#include "kael/ops.h"
#include "kael/optim.h"

namespace kael::python {

namespace {

// The parameters that have a gradient, with their state dicts (state[p], created on demand as
// in PyTorch's defaultdict), so parameters without one get no state.
struct Stepped {
    std::vector<Tensor> params;
    std::vector<Tensor> grads;
    std::vector<py::dict> states;
};

Stepped with_grads(py::handle params, py::handle state, const char* op) {
    Stepped out;
    for (py::handle object : py::reinterpret_borrow<py::iterable>(params)) {
        const Tensor parameter = tensor_argument(object, op, "a parameter");
        Tensor grad = parameter.grad();
        if (!grad.defined()) {
            continue;
        }
        out.params.push_back(parameter);
        out.grads.push_back(std::move(grad));
        out.states.push_back(state[object].cast<py::dict>());
    }
    return out;
}

// A state tensor where its parameter now is (Module.to between steps moves parameters).
Tensor buffer_on_device(py::dict& state, const char* key, const Tensor& parameter,
                        const char* op) {
    Tensor buffer = tensor_argument(state[key], op, key);
    if (buffer.device() != parameter.device()) {
        buffer = buffer.to(parameter.device());
        state[key] = buffer;
    }
    return buffer;
}

void sgd_step(py::handle params, py::handle state, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov) {
    Stepped s = with_grads(params, state, "SGD.step");
    std::vector<Tensor> buffers(s.params.size());
    for (std::size_t i = 0; i < s.params.size() && momentum != 0; ++i) {
        if (s.states[i].contains("momentum_buffer") && !s.states[i]["momentum_buffer"].is_none()) {
            buffers[i] = buffer_on_device(s.states[i], "momentum_buffer", s.params[i], "SGD.step");
            // The step holds the only reference, so the old buffer's memory is reused at once.
            s.states[i]["momentum_buffer"] = py::none();
        }
    }
    optim::sgd_step(s.params, s.grads, buffers,
                    optim::SGDHyper{lr, momentum, dampening, weight_decay, nesterov});
    for (std::size_t i = 0; i < s.params.size() && momentum != 0; ++i) {
        s.states[i]["momentum_buffer"] = buffers[i];
    }
}

void adam_step(py::handle params, py::handle state, double lr, double beta1, double beta2,
               double eps, double weight_decay, bool decoupled) {
    const char* op = decoupled ? "AdamW.step" : "Adam.step";
    check_not_recording(op);  // before any state changes
    Stepped s = with_grads(params, state, op);
    std::vector<Tensor> exp_avgs, exp_avg_sqs;
    std::vector<std::int64_t> steps;
    for (std::size_t i = 0; i < s.params.size(); ++i) {
        py::dict& d = s.states[i];
        const Tensor& parameter = s.params[i];
        if (!d.contains("step")) {
            d["step"] = 0.0;
            d["exp_avg"] = zeros(parameter.shape(), parameter.dtype(), parameter.device());
            d["exp_avg_sq"] = zeros(parameter.shape(), parameter.dtype(), parameter.device());
        }
        const py::handle saved = d["step"];  // a float, or a 0-d tensor from another program
        const double step = (is_tensor(saved) ? tensor_of(saved).item_double()
                                              : to_double(saved, op, "state['step']")) + 1;
        d["step"] = step;
        steps.push_back(static_cast<std::int64_t>(step));
        exp_avgs.push_back(buffer_on_device(d, "exp_avg", parameter, op));
        exp_avg_sqs.push_back(buffer_on_device(d, "exp_avg_sq", parameter, op));
    }
    optim::adam_step(s.params, s.grads, exp_avgs, exp_avg_sqs, steps,
                     optim::AdamHyper{lr, beta1, beta2, eps, weight_decay, decoupled});
}

std::vector<Tensor> tensor_list(py::handle parameters, const char* op) {
    std::vector<Tensor> out;
    for (py::handle object : py::reinterpret_borrow<py::iterable>(parameters)) {
        out.push_back(tensor_argument(object, op, "a parameter"));
    }
    return out;
}

}  // namespace

void bind_optim(py::module_& optim_module) {
    optim_module.def("sgd_step", &sgd_step, docs::sgd_step, py::arg("params"), py::arg("state"),
                     py::kw_only(), py::arg("lr"), py::arg("momentum") = 0.0,
                     py::arg("dampening") = 0.0, py::arg("weight_decay") = 0.0,
                     py::arg("nesterov") = false);
    optim_module.def("adam_step", &adam_step, docs::adam_step, py::arg("params"),
                     py::arg("state"), py::kw_only(), py::arg("lr"), py::arg("beta1"),
                     py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
                     py::arg("decoupled"));
    optim_module.def(
        "clip_grad_norm_",
        [](py::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
            return nn::clip_grad_norm_(tensor_list(parameters, "clip_grad_norm_"), max_norm,
                                       norm_type, error_if_nonfinite);
        },
        docs::clip_grad_norm, py::arg("parameters"), py::arg("max_norm"),
        py::arg("norm_type") = 2.0, py::arg("error_if_nonfinite") = false);
    optim_module.def(
        "clip_grad_value_",
        [](py::handle parameters, double clip_value) {
            nn::clip_grad_value_(tensor_list(parameters, "clip_grad_value_"), clip_value);
        },
        docs::clip_grad_value, py::arg("parameters"), py::arg("clip_value"));
}

}  // namespace kael::python
