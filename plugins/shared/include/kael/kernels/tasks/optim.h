#pragma once
// Optimizer updates, one work item per parameter element: a fused Adam/AdamW step reads param,
// grad, m and v once and writes param, m and v once, where the composed update makes a dozen
// passes and temporaries.
#include <cmath>
#include <cstdint>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/launch.h"

namespace kael::kernels::tasks {

// The update in T (as the composed ops compute it), in the order the core's Adam writes it.
template <typename T>
struct AdamStep {
    T* param;
    T* m;
    T* v;
    const T* grad;
    T lr;
    T beta1;
    T beta2;
    T eps;
    T weight_decay;
    T first_correction;
    T second_correction;
    const double* factors;  // lr and both corrections in device memory (ABI 1.15), or null
    bool decoupled;

    // This step with lr and the corrections read from factors (once per thread, when the
    // kernel runs: a recorded step then follows the device's count).
    [[nodiscard]] KAEL_HD AdamStep resolved() const {
        AdamStep out = *this;
        if (factors != nullptr) {
            out.lr = T(factors[0]);
            out.first_correction = T(factors[1]);
            out.second_correction = T(factors[2]);
            out.factors = nullptr;
        }
        return out;
    }

    // One element's update in registers; the CUDA plugin's vector kernel calls it too.
    KAEL_HD void update(T& value, T g, T& first, T& second) const {
        if (weight_decay != T(0)) {
            if (decoupled) {
                value = value * (T(1) - lr * weight_decay);
            } else {
                g = g + value * weight_decay;
            }
        }
        first = first * beta1 + g * (T(1) - beta1);
        second = second * beta2 + (g * g) * (T(1) - beta2);
        value = value - (first / first_correction) / (sqrt(second / second_correction) + eps) * lr;
    }

    [[nodiscard]] std::int64_t cost() const { return 1; }  // an item is one element

    KAEL_HD void operator()(std::int64_t i) const {
        if (factors != nullptr) {
            resolved()(i);
            return;
        }
        T value = param[i];
        T first = m[i];
        T second = v[i];
        update(value, grad[i], first, second);
        m[i] = first;
        v[i] = second;
        param[i] = value;
    }
};

template <typename T>
AdamStep<T> adam_step(void* param, void* m, void* v, const void* grad,
                      const kael_adam_params& params) {
    return AdamStep<T>{static_cast<T*>(param), static_cast<T*>(m), static_cast<T*>(v),
                       static_cast<const T*>(grad), T(params.lr), T(params.beta1),
                       T(params.beta2), T(params.eps), T(params.weight_decay),
                       T(params.first_correction), T(params.second_correction),
                       params.struct_size >= KAEL_ADAM_PARAMS_SIZE_1_15 ? params.device_factors
                                                                        : nullptr,
                       params.decoupled != 0};
}

// Whether an adam call has work (false for count 0); plugin::invalid / unsupported otherwise.
inline bool check_adam(kael_dtype dtype, const void* param, const void* m, const void* v,
                       const void* grad, std::int64_t count, const kael_adam_params* params) {
    if (params == nullptr || params->struct_size < KAEL_ADAM_PARAMS_SIZE_1_2) {
        plugin::invalid("adam: kael_adam_params is null or its struct_size too small");
    }
    if (count < 0) {
        plugin::invalid("adam: negative count");
    }
    if (dtype != KAEL_DTYPE_F32 && dtype != KAEL_DTYPE_F64) {
        plugin::unsupported(std::string("adam: parameters of dtype ") + plugin::dtype_name(dtype));
    }
    if (count == 0) {
        return false;
    }
    if (param == nullptr || m == nullptr || v == nullptr || grad == nullptr) {
        plugin::invalid("adam: null param, m, v or grad");
    }
    return true;
}

template <typename Launcher>
void launch_adam(kael_dtype dtype, void* param, void* m, void* v, const void* grad,
                 std::int64_t count, const kael_adam_params* params) {
    if (!check_adam(dtype, param, m, v, grad, count, params)) {
        return;
    }
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        Launcher::for_each(count, adam_step<T>(param, m, v, grad, *params));
    };
    if (dtype == KAEL_DTYPE_F32) {
        run(0.0F);
    } else {
        run(0.0);
    }
}

// The arrays of an adam_many call (plugin::invalid when one is missing); each tensor is then
// checked as check_adam checks an adam call.
inline void check_adam_many(std::int64_t count, void* const* params, void* const* m, void* const* v,
                            const void* const* grads, const std::int64_t* sizes,
                            const kael_adam_params* const* steps) {
    if (count < 0) {
        plugin::invalid("adam_many: negative tensor count");
    }
    if (count > 0 && (params == nullptr || m == nullptr || v == nullptr || grads == nullptr ||
                      sizes == nullptr || steps == nullptr)) {
        plugin::invalid("adam_many: null tensor array");
    }
}

// adam_many as one launch_adam per tensor, for plugins that gain nothing from fusing them.
template <typename Launcher>
void launch_adam_many(kael_dtype dtype, std::int64_t count, void* const* params, void* const* m,
                      void* const* v, const void* const* grads, const std::int64_t* sizes,
                      const kael_adam_params* const* steps) {
    check_adam_many(count, params, m, v, grads, sizes, steps);
    for (std::int64_t i = 0; i < count; ++i) {
        launch_adam<Launcher>(dtype, params[i], m[i], v[i], grads[i], sizes[i], steps[i]);
    }
}

}  // namespace kael::kernels::tasks
