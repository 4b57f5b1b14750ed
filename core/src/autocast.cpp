// Autocast's thread-local state and casts (kael/autocast.h).
#include "kael/autocast.h"

#include <map>
#include <memory>

#include "kael/error.h"

namespace kael::autocast {
namespace {

struct State {
    std::map<std::string, DType, std::less<>> lower;  // device type -> dtype, where on
    int depth = 0;     // regions entered
    int applying = 0;  // autocast ops running (their nested ops run as given)
    // A leaf's cast per outermost region, keyed by the leaf's impl (kept alive by the key).
    std::map<std::shared_ptr<TensorImpl>, Tensor> casts;
};

State& state() {
    thread_local State current;
    return current;
}

bool active(const State& s, const Tensor& t) {
    return t.defined() && s.applying == 0 && s.lower.count(t.device().type()) != 0;
}

Tensor cached_cast(const Tensor& t, DType dtype) {
    State& s = state();
    if (t.is_leaf() && t.requires_grad()) {
        const auto found = s.casts.find(t.impl_ptr());
        if (found != s.casts.end() && found->second.dtype() == dtype) {
            return found->second;
        }
        Tensor made = t.to(dtype);
        s.casts[t.impl_ptr()] = made;
        return made;
    }
    return t.to(dtype);
}

}  // namespace

Region::Region(const std::string& device_type, DType dtype, bool enabled)
    : device_type_(device_type) {
    if (enabled && !is_low_precision(dtype)) {
        throw ValueError("autocast: the lower dtype must be bfloat16 or float16, got " +
                         to_string(dtype));
    }
    State& s = state();
    const auto found = s.lower.find(device_type);
    if (found != s.lower.end()) {
        previous_ = found->second;
    }
    if (enabled) {
        s.lower[device_type] = dtype;
    } else {
        s.lower.erase(device_type);
    }
    ++s.depth;
}

Region::~Region() {
    State& s = state();
    if (previous_) {
        s.lower[device_type_] = *previous_;
    } else {
        s.lower.erase(device_type_);
    }
    if (--s.depth == 0) {
        s.casts.clear();
    }
}

bool is_enabled(const std::string& device_type) { return state().lower.count(device_type) != 0; }

bool applies(const Tensor& first) { return active(state(), first); }

Applied::Applied() { ++state().applying; }
Applied::~Applied() { --state().applying; }

// The inputs with those of dtype `from` (any low-precision dtype when it is nullopt) cast to
// `to` (the region's lower dtype when nullopt: those casts of leaves are cached), or nothing
// when autocast does not apply.
std::optional<std::vector<Tensor>> cast_inputs(const std::vector<Tensor>& inputs,
                                               std::optional<DType> from, std::optional<DType> to) {
    const State& s = state();
    if (inputs.empty() || !active(s, inputs.front())) {
        return std::nullopt;
    }
    const DType target = to ? *to : s.lower.at(inputs.front().device().type());
    std::vector<Tensor> cast = inputs;
    for (Tensor& t : cast) {
        if (t.defined() && (from ? t.dtype() == *from : is_low_precision(t.dtype()))) {
            t = to ? t.to(target) : cached_cast(t, target);
        }
    }
    return cast;
}

std::optional<std::vector<Tensor>> lower(const std::vector<Tensor>& inputs) {
    return cast_inputs(inputs, DType::F32, std::nullopt);  // f64 stays, as PyTorch leaves it
}

std::optional<std::vector<Tensor>> full(const std::vector<Tensor>& inputs) {
    return cast_inputs(inputs, std::nullopt, DType::F32);
}

}  // namespace kael::autocast
