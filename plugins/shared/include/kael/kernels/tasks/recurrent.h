#pragma once
// The LSTM and GRU cells (KAEL_EXTENSION_RECURRENT) as device tasks: one item per (row, unit),
// which reads that unit's gates from both products, so a step is one launch forward and one
// backward instead of a dozen elementwise ops each way. Computed in float (double for f64) and
// stored in the dtype; the saved gates are the activated ones the backward needs.
#include <cstdint>
#include <type_traits>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/element_functions.h"
#include "kael/kernels/low_precision.h"
#include "kael/kernels/tasks/launch.h"
#include "kael/plugin_extensions.h"

namespace kael::kernels::tasks {

template <typename S>
using CellCompute = std::conditional_t<std::is_same_v<S, double>, double, float>;

// Items are (row, unit) pairs of [batch, hidden]; gate k of an item's unit lies at gate(item, k)
// of [batch, gates * hidden] (4 for the LSTM, 3 for the GRU).
struct CellUnits {
    std::int64_t hidden;
    std::int64_t gates;
    KAEL_HD std::int64_t gate(std::int64_t item, std::int64_t k) const {
        return (item / hidden * gates + k) * hidden + item % hidden;
    }
};

template <typename S>
struct LstmCellForward {
    const S* x_gates;
    const S* h_gates;
    const S* cell;
    S* hidden_out;
    S* cell_out;
    S* saved;
    CellUnits units;

    [[nodiscard]] std::int64_t cost() const { return 9; }  // elements an item reads
    KAEL_HD void operator()(std::int64_t item) const {
        using C = CellCompute<S>;
        C gate[4];
        for (std::int64_t k = 0; k < 4; ++k) {
            const std::int64_t at = units.gate(item, k);
            const C sum = convert_value<C>(x_gates[at]) + convert_value<C>(h_gates[at]);
            gate[k] = k == 2 ? math::tanh(sum) : stable_sigmoid(sum);
            saved[at] = convert_value<S>(gate[k]);
        }
        const C next = gate[1] * convert_value<C>(cell[item]) + gate[0] * gate[2];
        cell_out[item] = convert_value<S>(next);
        hidden_out[item] = convert_value<S>(gate[3] * math::tanh(next));
    }
};

template <typename S>
struct LstmCellBackward {
    const S* saved;
    const S* cell;
    const S* cell_out;
    const S* grad_hidden;
    const S* grad_cell_out;  // may be null: zero
    S* grad_gates;
    S* grad_cell;
    CellUnits units;

    [[nodiscard]] std::int64_t cost() const { return 11; }  // elements an item reads
    KAEL_HD void operator()(std::int64_t item) const {
        using C = CellCompute<S>;
        const auto gate_at = [&](std::int64_t k) { return units.gate(item, k); };
        const C input = convert_value<C>(saved[gate_at(0)]);
        const C forget = convert_value<C>(saved[gate_at(1)]);
        const C candidate = convert_value<C>(saved[gate_at(2)]);
        const C output = convert_value<C>(saved[gate_at(3)]);
        const C squashed = math::tanh(convert_value<C>(cell_out[item]));
        const C grad_h = convert_value<C>(grad_hidden[item]);
        const C grad_next =
            (grad_cell_out != nullptr ? convert_value<C>(grad_cell_out[item]) : C(0)) +
            grad_h * output * (C(1) - squashed * squashed);
        grad_gates[gate_at(0)] = convert_value<S>(grad_next * candidate * input * (C(1) - input));
        grad_gates[gate_at(1)] =
            convert_value<S>(grad_next * convert_value<C>(cell[item]) * forget * (C(1) - forget));
        grad_gates[gate_at(2)] =
            convert_value<S>(grad_next * input * (C(1) - candidate * candidate));
        grad_gates[gate_at(3)] = convert_value<S>(grad_h * squashed * output * (C(1) - output));
        grad_cell[item] = convert_value<S>(grad_next * forget);
    }
};

template <typename S>
struct GruCellForward {
    const S* x_gates;
    const S* h_gates;
    const S* hidden_in;
    S* hidden_out;
    S* saved;
    CellUnits units;

    [[nodiscard]] std::int64_t cost() const { return 7; }  // elements an item reads
    KAEL_HD void operator()(std::int64_t item) const {
        using C = CellCompute<S>;
        const auto at = [&](std::int64_t k) { return units.gate(item, k); };
        const auto sum = [&](std::int64_t k) {
            return convert_value<C>(x_gates[at(k)]) + convert_value<C>(h_gates[at(k)]);
        };
        const C reset = stable_sigmoid(sum(0));
        const C update = stable_sigmoid(sum(1));
        const C candidate =
            math::tanh(convert_value<C>(x_gates[at(2)]) + reset * convert_value<C>(h_gates[at(2)]));
        saved[at(0)] = convert_value<S>(reset);
        saved[at(1)] = convert_value<S>(update);
        saved[at(2)] = convert_value<S>(candidate);
        const C previous = convert_value<C>(hidden_in[item]);
        hidden_out[item] = convert_value<S>(candidate + update * (previous - candidate));
    }
};

template <typename S>
struct GruCellBackward {
    const S* saved;
    const S* h_gates;
    const S* hidden_in;
    const S* grad_hidden;
    S* grad_x_gates;
    S* grad_h_gates;
    S* grad_hidden_in;
    CellUnits units;

    [[nodiscard]] std::int64_t cost() const { return 6; }  // elements an item reads
    KAEL_HD void operator()(std::int64_t item) const {
        using C = CellCompute<S>;
        const auto at = [&](std::int64_t k) { return units.gate(item, k); };
        const C reset = convert_value<C>(saved[at(0)]);
        const C update = convert_value<C>(saved[at(1)]);
        const C candidate = convert_value<C>(saved[at(2)]);
        const C grad = convert_value<C>(grad_hidden[item]);
        const C previous = convert_value<C>(hidden_in[item]);
        const C grad_n = grad * (C(1) - update) * (C(1) - candidate * candidate);
        const C grad_r = grad_n * convert_value<C>(h_gates[at(2)]) * reset * (C(1) - reset);
        const C grad_z = grad * (previous - candidate) * update * (C(1) - update);
        grad_x_gates[at(0)] = convert_value<S>(grad_r);
        grad_x_gates[at(1)] = convert_value<S>(grad_z);
        grad_x_gates[at(2)] = convert_value<S>(grad_n);
        grad_h_gates[at(0)] = convert_value<S>(grad_r);
        grad_h_gates[at(1)] = convert_value<S>(grad_z);
        grad_h_gates[at(2)] = convert_value<S>(grad_n * reset);
        grad_hidden_in[item] = convert_value<S>(grad * update);
    }
};

template <typename Visit>
void with_cell_dtype(kael_dtype dtype, std::int64_t batch, std::int64_t hidden, Visit&& visit) {
    if (batch < 0 || hidden < 0) {
        plugin::invalid("LSTM cell sizes must be non-negative");
    }
    with_float_storage_dtype("the LSTM cell", dtype, visit);
}

// The kael_recurrent table of a plugin whose Launcher runs these tasks; kSelect makes the call's
// device current (or checks it).
template <typename Launcher, void (*kSelect)(std::int32_t)>
struct RecurrentTasks {
    static kael_status forward(int32_t device, kael_dtype dtype, int64_t batch, int64_t hidden,
                               const void* x_gates, const void* h_gates, const void* cell,
                               void* hidden_out, void* cell_out, void* saved) {
        return plugin::guarded("lstm_cell_forward", [&] {
            kSelect(device);
            with_cell_dtype(dtype, batch, hidden, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                Launcher::for_each(
                    batch * hidden,
                    LstmCellForward<S>{static_cast<const S*>(x_gates),
                                       static_cast<const S*>(h_gates), static_cast<const S*>(cell),
                                       static_cast<S*>(hidden_out), static_cast<S*>(cell_out),
                                       static_cast<S*>(saved), CellUnits{hidden, 4}});
            });
        });
    }
    static kael_status backward(int32_t device, kael_dtype dtype, int64_t batch, int64_t hidden,
                                const void* saved, const void* cell, const void* cell_out,
                                const void* grad_hidden, const void* grad_cell_out,
                                void* grad_gates, void* grad_cell) {
        return plugin::guarded("lstm_cell_backward", [&] {
            kSelect(device);
            with_cell_dtype(dtype, batch, hidden, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                Launcher::for_each(
                    batch * hidden,
                    LstmCellBackward<S>{
                        static_cast<const S*>(saved), static_cast<const S*>(cell),
                        static_cast<const S*>(cell_out), static_cast<const S*>(grad_hidden),
                        static_cast<const S*>(grad_cell_out), static_cast<S*>(grad_gates),
                        static_cast<S*>(grad_cell), CellUnits{hidden, 4}});
            });
        });
    }
    static kael_status gru_forward(int32_t device, kael_dtype dtype, int64_t batch, int64_t hidden,
                                   const void* x_gates, const void* h_gates, const void* hidden_in,
                                   void* hidden_out, void* saved) {
        return plugin::guarded("gru_cell_forward", [&] {
            kSelect(device);
            with_cell_dtype(dtype, batch, hidden, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                Launcher::for_each(
                    batch * hidden,
                    GruCellForward<S>{static_cast<const S*>(x_gates),
                                      static_cast<const S*>(h_gates),
                                      static_cast<const S*>(hidden_in), static_cast<S*>(hidden_out),
                                      static_cast<S*>(saved), CellUnits{hidden, 3}});
            });
        });
    }
    static kael_status gru_backward(int32_t device, kael_dtype dtype, int64_t batch, int64_t hidden,
                                    const void* saved, const void* h_gates, const void* hidden_in,
                                    const void* grad_hidden, void* grad_x_gates, void* grad_h_gates,
                                    void* grad_hidden_in) {
        return plugin::guarded("gru_cell_backward", [&] {
            kSelect(device);
            with_cell_dtype(dtype, batch, hidden, [&](auto tag) {
                using S = TagType<decltype(tag)>;
                Launcher::for_each(
                    batch * hidden,
                    GruCellBackward<S>{static_cast<const S*>(saved), static_cast<const S*>(h_gates),
                                       static_cast<const S*>(hidden_in),
                                       static_cast<const S*>(grad_hidden),
                                       static_cast<S*>(grad_x_gates), static_cast<S*>(grad_h_gates),
                                       static_cast<S*>(grad_hidden_in), CellUnits{hidden, 3}});
            });
        });
    }
    static const kael_recurrent* table() {
        static const kael_recurrent made = {sizeof(kael_recurrent), forward, backward, gru_forward,
                                            gru_backward};
        return &made;
    }
};

}  // namespace kael::kernels::tasks
