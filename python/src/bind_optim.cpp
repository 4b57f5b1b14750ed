// kael._optim: the C++ steps that kael.optim's Python optimizers call once per parameter group,
// and gradient clipping for kael.nn.utils. Per-parameter work stays in C++ so step() is fast.
#include <map>
#include <string>

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

// exp_avg and exp_avg_sq of a parameter's state (zeros on its first step), where it now is.
void add_moments(py::dict& d, const Tensor& parameter, bool first, std::vector<Tensor>& exp_avgs,
                 std::vector<Tensor>& exp_avg_sqs, const char* op) {
    if (first) {
        d["exp_avg"] = zeros(parameter.shape(), parameter.dtype(), parameter.device());
        d["exp_avg_sq"] = zeros(parameter.shape(), parameter.dtype(), parameter.device());
    }
    exp_avgs.push_back(buffer_on_device(d, "exp_avg", parameter, op));
    exp_avg_sqs.push_back(buffer_on_device(d, "exp_avg_sq", parameter, op));
}

// state['step'] as a 0-d count on the parameter's device, for the capturable step: made (zero)
// on the first step, one tensor shared by the parameters that start together so the count is
// stepped once; a number or a tensor elsewhere (a loaded state dict) is moved there, which a
// recording cannot do.
Tensor count_on_device(py::dict& d, const Tensor& parameter, std::map<std::string, Tensor>& fresh,
                       const char* op) {
    if (!d.contains("step")) {
        Tensor& count = fresh[parameter.device().str()];
        if (!count.defined()) {
            count = zeros({}, DType::F32, parameter.device());
        }
        d["step"] = count;
        return count;
    }
    const py::handle saved = d["step"];
    if (is_tensor(saved)) {
        const Tensor count = tensor_of(saved);
        if (count.device() == parameter.device() && count.dim() == 0 &&
            is_floating(count.dtype())) {
            return count;
        }
    }
    if (recording_device_graph()) {
        throw ValueError(std::string(op) + ": state['step'] is not yet a count on " +
                         parameter.device().str() + "; one step outside the recording moves it");
    }
    const double value = is_tensor(saved) ? tensor_of(saved).item_double()
                                          : to_double(saved, op, "state['step']");
    Tensor count = full({}, value, DType::F32, parameter.device());
    d["step"] = count;
    return count;
}

void adam_step(py::handle params, py::handle state, double lr, double beta1, double beta2,
               double eps, double weight_decay, bool decoupled, bool capturable,
               py::handle lr_tensor) {
    const char* op = decoupled ? "AdamW.step" : "Adam.step";
    if (!capturable) {
        check_not_recording(op);  // before any state changes
    }
    Stepped s = with_grads(params, state, op);
    const optim::AdamHyper hyper{lr, beta1, beta2, eps, weight_decay, decoupled};
    if (capturable) {
        std::vector<Tensor> exp_avgs, exp_avg_sqs, counts;
        std::map<std::string, Tensor> fresh;
        for (std::size_t i = 0; i < s.params.size(); ++i) {
            py::dict& d = s.states[i];
            const Tensor& parameter = s.params[i];
            const bool first = !d.contains("step");
            counts.push_back(count_on_device(d, parameter, fresh, op));
            add_moments(d, parameter, first, exp_avgs, exp_avg_sqs, op);
        }
        const Tensor rate = lr_tensor.is_none() ? Tensor{} : tensor_argument(lr_tensor, op, "lr");
        optim::adam_step_on_device(s.params, s.grads, exp_avgs, exp_avg_sqs, counts, rate, hyper);
        return;
    }
    std::vector<Tensor> exp_avgs, exp_avg_sqs;
    std::vector<std::int64_t> steps;
    for (std::size_t i = 0; i < s.params.size(); ++i) {
        py::dict& d = s.states[i];
        const Tensor& parameter = s.params[i];
        const bool first = !d.contains("step");
        if (first) {
            d["step"] = 0.0;
        }
        const py::handle saved = d["step"];  // a float, or a 0-d tensor from another program
        const double step = (is_tensor(saved) ? tensor_of(saved).item_double()
                                              : to_double(saved, op, "state['step']")) + 1;
        d["step"] = step;
        steps.push_back(static_cast<std::int64_t>(step));
        add_moments(d, parameter, first, exp_avgs, exp_avg_sqs, op);
    }
    optim::adam_step(s.params, s.grads, exp_avgs, exp_avg_sqs, steps, hyper);
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
                     py::arg("decoupled"), py::arg("capturable") = false,
                     py::arg("lr_tensor") = py::none());
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
