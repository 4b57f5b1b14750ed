#pragma once
// Fused cross_entropy, forward and backward: the reference bodies, one item per row (log-sum-exp
// and loss in one online pass; the backward writes softmax minus the target without a one-hot).
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "kael/kernels/tasks/softmax.h"

namespace kael::kernels::tasks {

// A target outside [0, classes) may reach a kernel while its deferred check is pending: such a
// row reads nothing (a NaN loss, no gradient) and the check reports the error.
KAEL_HD inline bool valid_target(std::int64_t target, std::int64_t classes) {
    return target >= 0 && target < classes;
}

template <typename T>
struct CrossEntropyRows {
    const T* logits;
    const std::int64_t* targets;
    T* losses;
    T* lse;
    std::int64_t classes;

    [[nodiscard]] std::int64_t cost() const { return classes; }

    KAEL_HD void operator()(std::int64_t row) const {
        const T* row_logits = logits + row * classes;
        auto state = LogSumExp<double, T>::none();
        for (std::int64_t c = 0; c < classes; ++c) {
            state.add(row_logits[c]);
        }
        lse[row] = static_cast<T>(state.log_total());
        const std::int64_t target = targets[row];
        losses[row] = valid_target(target, classes)
                          ? static_cast<T>(state.minus_log_softmax(row_logits[target]))
                          : T(NAN);
    }
};

// grad_logits = grad_losses[row * grad_stride] * (exp(logits - lse) - (c == target)).
template <typename T>
struct CrossEntropyBackwardRows {
    const T* grad_losses;
    const T* logits;
    const T* lse;
    const std::int64_t* targets;
    T* grad_logits;
    std::int64_t grad_stride;
    std::int64_t classes;

    [[nodiscard]] std::int64_t cost() const { return classes; }

    KAEL_HD void operator()(std::int64_t row) const {
        const double g = grad_losses[row * grad_stride];
        const double row_lse = lse[row];
        const T* x = logits + row * classes;
        T* grad = grad_logits + row * classes;
        for (std::int64_t c = 0; c < classes; ++c) {
            grad[c] = static_cast<T>(g * exp_in<T>(static_cast<double>(x[c]) - row_lse));
        }
        const std::int64_t target = targets[row];
        if (valid_target(target, classes)) {
            grad[target] =
                static_cast<T>(g * (exp_in<T>(static_cast<double>(x[target]) - row_lse) - 1.0));
        }
    }
};

// Validates a cross_entropy or cross_entropy_backward call; false when there are no rows.
// low_precision: bf16/f16 logits pass too (a plugin that computes them; losses and lse f32).
inline bool check_cross_entropy_call(const char* entry, kael_dtype dtype,
                                     std::initializer_list<const void*> buffers, std::int64_t rows,
                                     std::int64_t classes, bool low_precision = false) {
    if (!low_precision || (dtype != KAEL_DTYPE_BF16 && dtype != KAEL_DTYPE_F16)) {
        check_float_dtype(entry, dtype);
    }
    if (rows < 0 || classes < 0) {
        plugin::invalid(std::string(entry) + ": negative rows or classes");
    }
    if (rows == 0) {
        return false;
    }
    if (classes == 0) {
        plugin::invalid(std::string(entry) + ": rows without classes have no target");
    }
    check_not_null(entry, buffers);
    return true;
}

template <typename Launcher>
void launch_cross_entropy(kael_dtype dtype, void* losses, void* lse, const void* logits,
                          const std::int64_t* targets, std::int64_t rows, std::int64_t classes) {
    if (!check_cross_entropy_call("cross_entropy", dtype, {losses, lse, logits, targets}, rows,
                                  classes)) {
        return;
    }
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        if constexpr (is_floating_v<T>) {
            Launcher::for_each(
                rows, CrossEntropyRows<T>{static_cast<const T*>(logits), targets,
                                          static_cast<T*>(losses), static_cast<T*>(lse), classes});
        }
    });
}

template <typename Launcher>
void launch_cross_entropy_backward(kael_dtype dtype, void* grad_logits, const void* grad_losses,
                                   std::int64_t grad_stride, const void* logits, const void* lse,
                                   const std::int64_t* targets, std::int64_t rows,
                                   std::int64_t classes) {
    if (!check_cross_entropy_call("cross_entropy_backward", dtype,
                                  {grad_logits, grad_losses, logits, lse, targets}, rows,
                                  classes)) {
        return;
    }
    if (grad_stride != 0 && grad_stride != 1) {
        plugin::invalid("cross_entropy_backward: grad_stride must be 0 or 1, got " +
                        std::to_string(grad_stride));
    }
    with_dtype(dtype, [&](auto tag) {
        using T = TagType<decltype(tag)>;
        if constexpr (is_floating_v<T>) {
            Launcher::for_each(
                rows, CrossEntropyBackwardRows<T>{
                          static_cast<const T*>(grad_losses), static_cast<const T*>(logits),
                          static_cast<const T*>(lse), targets, static_cast<T*>(grad_logits),
                          grad_stride, classes});
        }
    });
}

}  // namespace kael::kernels::tasks
