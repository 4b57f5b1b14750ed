// The released values of plugin_api.h, written out by hand as ABI 1.0-1.8 released them: a plugin
// built against any of those headers passes these numbers, so they never change (new ones are
// appended). Also the op tables' other columns against known facts, and the rules
// element_dispatch.h generates from them.
#define BOOST_TEST_MODULE abi_values
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kael/kernels/element_dispatch.h"
#include "kael/kernels/tasks/reduce.h"
#include "kael/plugin_api.h"

namespace {

struct Released {
    std::string name;  // the header's suffix, lower case: KAEL_OP_<NAME>, and the op's name
    int value;
    std::uint32_t since_minor;
};

// Every element op ever released, with the minor that released it.
const std::vector<Released> kReleasedElementOps = {{"identity", 0, 0},
                                                   {"negate", 1, 0},
                                                   {"abs", 2, 0},
                                                   {"sign", 3, 0},
                                                   {"exp", 4, 0},
                                                   {"log", 5, 0},
                                                   {"sqrt", 6, 0},
                                                   {"rsqrt", 7, 0},
                                                   {"sin", 8, 0},
                                                   {"cos", 9, 0},
                                                   {"tanh", 10, 0},
                                                   {"sigmoid", 11, 0},
                                                   {"relu", 12, 0},
                                                   {"gelu_exact", 13, 0},
                                                   {"gelu_tanh", 14, 0},
                                                   {"square", 15, 0},
                                                   {"reciprocal", 16, 0},
                                                   {"logical_not", 17, 0},
                                                   {"plus", 18, 0},
                                                   {"minus", 19, 0},
                                                   {"multiply", 20, 0},
                                                   {"divide", 21, 0},
                                                   {"power", 22, 0},
                                                   {"maximum", 23, 0},
                                                   {"minimum", 24, 0},
                                                   {"equal", 25, 0},
                                                   {"not_equal", 26, 0},
                                                   {"less", 27, 0},
                                                   {"less_equal", 28, 0},
                                                   {"greater", 29, 0},
                                                   {"greater_equal", 30, 0},
                                                   {"logical_and", 31, 0},
                                                   {"logical_or", 32, 0},
                                                   {"relu_backward", 33, 0},
                                                   {"sigmoid_backward", 34, 0},
                                                   {"where", 35, 0},
                                                   {"clamp", 36, 0},
                                                   {"masked_fill", 37, 0},
                                                   {"gelu_exact_backward", 38, 2},
                                                   {"gelu_tanh_backward", 39, 2},
                                                   {"floor", 40, 6},
                                                   {"ceil", 41, 6},
                                                   {"round", 42, 6},
                                                   {"trunc", 43, 6},
                                                   {"frac", 44, 6},
                                                   {"fmod", 45, 6},
                                                   {"remainder", 46, 6},
                                                   {"floor_divide", 47, 6},
                                                   {"isnan", 48, 6},
                                                   {"isinf", 49, 6},
                                                   {"isfinite", 50, 6},
                                                   {"isposinf", 51, 6},
                                                   {"isneginf", 52, 6},
                                                   {"log1p", 53, 6},
                                                   {"expm1", 54, 6},
                                                   {"erf", 55, 6},
                                                   {"erfc", 56, 6},
                                                   {"log2", 57, 6},
                                                   {"log10", 58, 6},
                                                   {"exp2", 59, 6},
                                                   {"silu", 60, 6},
                                                   {"silu_backward", 61, 6},
                                                   {"bitwise_and", 62, 6},
                                                   {"bitwise_or", 63, 6},
                                                   {"bitwise_xor", 64, 6},
                                                   {"bitwise_not", 65, 6},
                                                   {"left_shift", 66, 6},
                                                   {"right_shift", 67, 6}};

const std::vector<Released> kReleasedReduceOps = {
    {"sum", 0, 0},    {"prod", 1, 0},   {"max", 2, 0},     {"min", 3, 0},
    {"argmax", 4, 0}, {"argmin", 5, 0}, {"variance", 6, 2}, {"norm2", 7, 7},
    {"logsumexp", 8, 9}};

std::string lower(std::string text) {
    for (char& c : text) {
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    return text;
}

// The header's rows as (suffix in lower case, value, since), in row order.
std::vector<Released> header_element_ops() {
#define KAEL_TEST_ROW(op, value, name, inputs, in, out, params, since) \
    {lower(#op), KAEL_OP_##op, since},
    return {KAEL_ELEMENT_OPS(KAEL_TEST_ROW)};
#undef KAEL_TEST_ROW
}

std::vector<Released> header_reduce_ops() {
#define KAEL_TEST_ROW(op, value, name, in, out, empty, since) {lower(#op), KAEL_REDUCE_##op, since},
    return {KAEL_REDUCE_OPS(KAEL_TEST_ROW)};
#undef KAEL_TEST_ROW
}

// Each released op keeps its value and since in the header (KAEL_OP_<NAME>); new rows may follow.
void check_released(const std::vector<Released>& released, const std::vector<Released>& header,
                    int count) {
    BOOST_TEST(count == static_cast<int>(header.size()));
    BOOST_TEST(header.size() >= released.size());
    for (const Released& op : released) {
        BOOST_TEST_CONTEXT(op.name) {
            const auto row = std::find_if(header.begin(), header.end(),
                                          [&](const Released& row) { return row.name == op.name; });
            BOOST_TEST_REQUIRE((row != header.end()), "released op " << op.name << " is gone");
            BOOST_TEST(row->value == op.value);
            BOOST_TEST(row->since_minor == op.since_minor);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(element_op_values_are_as_released) {
    check_released(kReleasedElementOps, header_element_ops(), KAEL_OP_COUNT);
    for (const Released& op : kReleasedElementOps) {
        BOOST_TEST(kael::kernels::element_op_name(op.value) == op.name);
        BOOST_TEST(kael::kernels::kElementOps[op.value].since_minor == op.since_minor);
    }
    BOOST_TEST(kael::kernels::element_op_name(-1) == std::string("unknown op"));
    BOOST_TEST(kael::kernels::element_op_name(KAEL_OP_COUNT) == std::string("unknown op"));
}

BOOST_AUTO_TEST_CASE(reduce_op_values_are_as_released) {
    check_released(kReleasedReduceOps, header_reduce_ops(), KAEL_REDUCE_COUNT);
    for (const Released& op : kReleasedReduceOps) {
        BOOST_TEST(kael::kernels::tasks::reduce_op_name(op.value) == op.name);
    }
}

BOOST_AUTO_TEST_CASE(dtype_status_and_kind_values_are_as_released) {
    BOOST_TEST(KAEL_DTYPE_F32 == 0);
    BOOST_TEST(KAEL_DTYPE_F64 == 1);
    BOOST_TEST(KAEL_DTYPE_I64 == 2);
    BOOST_TEST(KAEL_DTYPE_BOOL == 3);
    BOOST_TEST(KAEL_DTYPE_COUNT >= 4);
    BOOST_TEST(KAEL_STATUS_OK == 0);
    BOOST_TEST(KAEL_STATUS_INVALID_ARGUMENT == 1);
    BOOST_TEST(KAEL_STATUS_UNSUPPORTED == 2);
    BOOST_TEST(KAEL_STATUS_OUT_OF_MEMORY == 3);
    BOOST_TEST(KAEL_STATUS_DEVICE_ERROR == 4);
    BOOST_TEST(KAEL_STATUS_INTERNAL == 5);
    BOOST_TEST(KAEL_STATUS_INDEX_ERROR == 6);  // since 1.2
    BOOST_TEST(KAEL_PLUGIN_KIND_CPU == 0);
    BOOST_TEST(KAEL_PLUGIN_KIND_GPU == 1);
    BOOST_TEST(KAEL_PLUGIN_KIND_EMULATED == 2);
    BOOST_TEST(KAEL_ABI_MAJOR == 1);
    BOOST_TEST(KAEL_ABI_MINOR >= 6);
    BOOST_TEST(KAEL_MEMORY_HOST_ADDRESSABLE == 1U);  // since 1.5
}

// Where each table slot and field sits: a released offset never moves (slots only append).
BOOST_AUTO_TEST_CASE(table_offsets_are_as_released) {
    BOOST_TEST(offsetof(kael_plugin, fill) == 144U);                    // 1.0's kernel slots
    BOOST_TEST(offsetof(kael_plugin, sort) == 200U);                    // 1.1
    BOOST_TEST(offsetof(kael_plugin, softmax) == 216U);                 // 1.2
    BOOST_TEST(offsetof(kael_plugin, capture_begin) == 320U);           // 1.3
    BOOST_TEST(offsetof(kael_plugin, adam_many) == 368U);               // 1.4
    BOOST_TEST(offsetof(kael_plugin, memory_flags) == 376U);            // 1.5
    BOOST_TEST(offsetof(kael_plugin, dlpack_device_type) == 380U);
    BOOST_TEST(offsetof(kael_plugin, scan) == 384U);                    // 1.7
    BOOST_TEST(offsetof(kael_plugin, reduce_indexed) == 392U);          // 1.8
    BOOST_TEST(offsetof(kael_plugin, reduce_dims_finished) == 400U);    // 1.9
    BOOST_TEST(offsetof(kael_plugin, extension) == 408U);               // 1.10
    BOOST_TEST(offsetof(kael_plugin, dtype_flags) == 416U);             // 1.11
    BOOST_TEST((KAEL_DTYPE_BF16 == 4 && KAEL_DTYPE_F16 == 5));
    BOOST_TEST((KAEL_DTYPE_I32 == 6 && KAEL_DTYPE_I16 == 7 && KAEL_DTYPE_I8 == 8 &&
                KAEL_DTYPE_U8 == 9 && KAEL_DTYPE_COUNT == 10));  // 1.14
    BOOST_TEST(KAEL_MODEL_KERNELS_SIZE_1_10 == 104U);
    BOOST_TEST(KAEL_ELEMENT_LAYOUT_SIZE_1_0 == 376U);
    BOOST_TEST(KAEL_ELEMENT_PARAMS_SIZE_1_0 == 40U);
    BOOST_TEST(KAEL_INDEX_LAYOUT_SIZE_1_0 == 280U);
    BOOST_TEST(KAEL_MATMUL_SIZES_SIZE_1_0 == 64U);
    BOOST_TEST(offsetof(kael_matmul_sizes, precision) == 64U);  // 1.12
    BOOST_TEST((KAEL_MATMUL_PRECISION_HIGHEST == 0 && KAEL_MATMUL_PRECISION_HIGH == 1 &&
                KAEL_MATMUL_PRECISION_MEDIUM == 2));
    BOOST_TEST((KAEL_DTYPE_FLAG_LOW_PRECISION == 1U && KAEL_DTYPE_FLAG_LOW_PRECISION_MATMUL == 2U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_ELEMENTWISE == 4U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_REDUCE == 8U));
    BOOST_TEST((KAEL_DTYPE_FLAG_LOW_PRECISION_ATTENTION == 16U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_ROWS == 32U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX == 64U && KAEL_DTYPE_FLAG_NARROW_INT == 128U));
    BOOST_TEST((KAEL_DTYPE_FLAG_LOW_PRECISION_INDEXED == 256U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_SCAN == 512U &&
                KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS == 1024U));
    BOOST_TEST(KAEL_DEVICE_PROPERTIES_SIZE_1_0 == 160U);
    BOOST_TEST(KAEL_ATTENTION_LAYOUT_SIZE_1_2 == 160U);
    BOOST_TEST(KAEL_ADAM_PARAMS_SIZE_1_2 == 72U);
    BOOST_TEST(KAEL_ADAM_PARAMS_SIZE_1_15 == 80U);  // device_factors appended
}

// KAEL_PLUGIN_SLOTS is the table's function slots, all of them, in order, each typed by its
// kael_<slot>_fn, with minors that never fall and the function slots after 1.0's header fields.
#define KAEL_TEST_SLOT_TYPE(slot, since)                                                      \
    static_assert(std::is_same_v<decltype(kael_plugin::slot), kael_##slot##_fn*>, #slot); \
    static_assert((since) <= KAEL_ABI_MINOR, #slot);
KAEL_PLUGIN_SLOTS(KAEL_TEST_SLOT_TYPE)
#undef KAEL_TEST_SLOT_TYPE

BOOST_AUTO_TEST_CASE(the_slot_list_is_the_table_in_order) {
    struct Slot {
        const char* name;
        std::size_t offset;
        std::uint32_t since;
    };
#define KAEL_TEST_SLOT(slot, since) Slot{#slot, offsetof(kael_plugin, slot), since},
    const std::vector<Slot> slots = {KAEL_PLUGIN_SLOTS(KAEL_TEST_SLOT)};
#undef KAEL_TEST_SLOT
    BOOST_TEST(std::string(slots.front().name) == "last_error");
    BOOST_TEST(slots.front().offset == offsetof(kael_plugin, build_info) + sizeof(const char*));
    for (std::size_t i = 1; i < slots.size(); ++i) {
        BOOST_TEST_CONTEXT("slot " << slots[i].name) {
            BOOST_TEST(slots[i].since >= slots[i - 1].since);
            // The next pointer, except across 1.5's two 32-bit fields.
            const std::size_t gap = slots[i].offset - slots[i - 1].offset;
            BOOST_TEST((gap == sizeof(void*) ||
                        (std::string(slots[i].name) == "scan" && gap == 2 * sizeof(void*))));
        }
    }
    // Then 1.11's two 32-bit fields, dtype_flags and reserved.
    BOOST_TEST(slots.back().offset + sizeof(void*) + 8 == sizeof(kael_plugin));
}

// The model extension's kernels: in KAEL_MODEL_KERNELS's order, each typed as the table slot
// of its name.
#define KAEL_TEST_MODEL_KERNEL(kernel)                                                      \
    static_assert(std::is_same_v<decltype(kael_model_kernels::kernel), kael_##kernel##_fn*>, \
                  #kernel);
KAEL_MODEL_KERNELS(KAEL_TEST_MODEL_KERNEL)
#undef KAEL_TEST_MODEL_KERNEL

BOOST_AUTO_TEST_CASE(the_model_kernel_list_is_the_extension_in_order) {
    std::vector<std::size_t> offsets;
#define KAEL_TEST_MODEL_OFFSET(kernel) offsets.push_back(offsetof(kael_model_kernels, kernel));
    KAEL_MODEL_KERNELS(KAEL_TEST_MODEL_OFFSET)
#undef KAEL_TEST_MODEL_OFFSET
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        BOOST_TEST(offsets[i] == sizeof(std::size_t) + i * sizeof(void*));
    }
    BOOST_TEST(offsets.back() + sizeof(void*) == sizeof(kael_model_kernels));
}

BOOST_AUTO_TEST_CASE(element_op_columns_match_known_facts) {
    using namespace kael::kernels;
    struct Facts {
        kael_element_op op;
        int inputs;
        int input_class;
        bool writes_bool;
        bool uses_params;
    };
    const Facts facts[] = {
        {KAEL_OP_WHERE, 3, KAEL_OP_INPUTS_ANY, false, false},  // (condition, a, b) -> a's dtype
        {KAEL_OP_EQUAL, 2, KAEL_OP_INPUTS_ANY, true, false},
        {KAEL_OP_LOGICAL_NOT, 1, KAEL_OP_INPUTS_ANY, true, false},
        {KAEL_OP_PLUS, 2, KAEL_OP_INPUTS_ANY, false, false},
        {KAEL_OP_ABS, 1, KAEL_OP_INPUTS_ANY, false, false},
        {KAEL_OP_EXP, 1, KAEL_OP_INPUTS_FLOATING, false, false},
        {KAEL_OP_DIVIDE, 2, KAEL_OP_INPUTS_NUMERIC, false, false},
        {KAEL_OP_CLAMP, 1, KAEL_OP_INPUTS_ANY, false, true},
        {KAEL_OP_MASKED_FILL, 2, KAEL_OP_INPUTS_ANY, false, true},
        {KAEL_OP_GELU_TANH_BACKWARD, 2, KAEL_OP_INPUTS_FLOATING, false, false},
        {KAEL_OP_FLOOR, 1, KAEL_OP_INPUTS_FLOATING, false, false},  // since 1.6
        {KAEL_OP_REMAINDER, 2, KAEL_OP_INPUTS_NUMERIC, false, false},
        {KAEL_OP_ISFINITE, 1, KAEL_OP_INPUTS_FLOATING, true, false},
        {KAEL_OP_SILU_BACKWARD, 2, KAEL_OP_INPUTS_FLOATING, false, false},
        {KAEL_OP_BITWISE_NOT, 1, KAEL_OP_INPUTS_INTEGER, false, false},
        {KAEL_OP_RIGHT_SHIFT, 2, KAEL_OP_INPUTS_INTEGER, false, false},
    };
    for (const Facts& fact : facts) {
        BOOST_TEST_CONTEXT(element_op_name(fact.op)) {
            BOOST_TEST(element_input_count(fact.op) == fact.inputs);
            BOOST_TEST(element_op_info(fact.op).input_class == fact.input_class);
            BOOST_TEST(writes_bool(fact.op) == fact.writes_bool);
            BOOST_TEST(uses_params(fact.op) == fact.uses_params);
        }
    }
    int bool_writers = 0;
    for (const ElementOpInfo& info : kElementOps) {
        bool_writers += info.writes == KAEL_OP_WRITES_BOOL;
    }
    // logical_not, six comparisons, logical_and, logical_or; since 1.6 the five isnan...
    BOOST_TEST(bool_writers == 14);
}

BOOST_AUTO_TEST_CASE(reduce_op_columns_match_known_facts) {
    using kael::kernels::tasks::reduce_out_dtype;
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_SUM, KAEL_DTYPE_F32) == KAEL_DTYPE_F32);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_SUM, KAEL_DTYPE_BOOL) == KAEL_DTYPE_I64);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_PROD, KAEL_DTYPE_I64) == KAEL_DTYPE_I64);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_MAX, KAEL_DTYPE_BOOL) == KAEL_DTYPE_BOOL);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_ARGMIN, KAEL_DTYPE_F64) == KAEL_DTYPE_I64);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_VARIANCE, KAEL_DTYPE_F32) == KAEL_DTYPE_F64);
    const auto& variance = kael::kernels::tasks::kReduceOps[KAEL_REDUCE_VARIANCE];
    BOOST_TEST(variance.input_class == KAEL_OP_INPUTS_FLOATING);
    BOOST_TEST(variance.empty_has_value);
    BOOST_TEST(!kael::kernels::tasks::kReduceOps[KAEL_REDUCE_MAX].empty_has_value);
    BOOST_TEST(reduce_out_dtype(KAEL_REDUCE_NORM2, KAEL_DTYPE_F32) == KAEL_DTYPE_F32);
    const auto& norm2 = kael::kernels::tasks::kReduceOps[KAEL_REDUCE_NORM2];
    BOOST_TEST(norm2.input_class == KAEL_OP_INPUTS_FLOATING);
    BOOST_TEST(norm2.empty_has_value);
}
