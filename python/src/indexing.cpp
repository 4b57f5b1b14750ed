// Python indexing: t[key] and t[key] = value, with numpy's and PyTorch's rules. Ints, slices,
// None and Ellipsis make a view (PyTorch's order: ints select first); index tensors, lists and
// bool masks then go to the core's index / index_put_ over that view.
#include <pybind11/numpy.h>

#include <vector>

#include "bind_common.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

enum class ItemKind { None, Ellipsis, Int, Slice, Tensor };

struct KeyItem {
    ItemKind kind;
    py::handle object;
    Tensor tensor;  // the index tensor or mask, for ItemKind::Tensor
};

// The dimensions of the indexed tensor the view plus index list stand for.
struct ParsedKey {
    Tensor view;
    std::vector<Tensor> indices;  // one entry per view dimension (masks: one per mask)
    bool advanced = false;
};

bool is_index_int(py::handle item) {
    return !PyBool_Check(item.ptr()) && !py::isinstance<Tensor>(item) &&
           (PyLong_Check(item.ptr()) || PyIndex_Check(item.ptr()));
}

bool is_index_sequence(py::handle item) {
    return py::isinstance<py::list>(item) || py::isinstance<py::tuple>(item) ||
           py::isinstance<py::array>(item);
}

// Lists and arrays of ints become i64 index tensors, of bools masks (numpy's reading).
Tensor sequence_index(py::handle item) {
    Tensor index = tensor_from_data(item, std::nullopt, kCPU);
    if (index.numel() == 0 && index.dtype() != DType::Bool) return index.to(DType::I64);
    return index;
}

KeyItem classify(py::handle item) {
    if (item.is_none()) return {ItemKind::None, item, {}};
    if (item.ptr() == Py_Ellipsis) return {ItemKind::Ellipsis, item, {}};
    // A Python bool is a 0-d mask: True adds a dimension of size 1, False one of size 0.
    if (PyBool_Check(item.ptr())) {
        return {ItemKind::Tensor, item, tensor_bool({item.ptr() == Py_True}).reshape({})};
    }
    // numpy arrays define __index__ too (for one element): they are index arrays here.
    if (is_index_int(item) && !py::isinstance<py::array>(item)) return {ItemKind::Int, item, {}};
    if (PySlice_Check(item.ptr())) return {ItemKind::Slice, item, {}};
    Tensor index;
    if (py::isinstance<Tensor>(item)) {
        index = item.cast<Tensor>();
    } else if (is_index_sequence(item)) {
        index = sequence_index(item);
    } else {
        throw py::type_error(
            "tensor indices must be ints, slices, None, Ellipsis, int64 or bool "
            "tensors, or lists of them; got " +
            std::string(py::str(py::type::of(item).attr("__name__"))));
    }
    if (index.dtype() != DType::I64 && index.dtype() != DType::I32 &&
        index.dtype() != DType::Bool && index.dtype() != DType::U8) {
        throw py::index_error("tensors used as indices must be int64, int32, uint8 or bool, got " +
                              to_string(index.dtype()));
    }
    if (index.dtype() == DType::U8) {  // PyTorch 2 reads it as a mask and warns
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "indexing with dtype kael.uint8 is deprecated, please use a dtype "
                         "kael.bool instead",
                         1) < 0) {
            throw py::error_already_set();
        }
        index = index.to(DType::Bool);
    }
    return {ItemKind::Tensor, item, index};
}

// An int index with negative values counted from the end; IndexError (not a cast error) for
// values that do not fit in 64 bits.
std::int64_t int_index(py::handle item, std::int64_t size, std::int64_t dim) {
    const py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!number) throw py::error_already_set();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
    if (overflow == 0 && value == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0 || value < -size || value >= size) {
        throw py::index_error("index " + std::string(py::str(number)) +
                              " is out of bounds for dimension " + std::to_string(dim) +
                              " with size " + std::to_string(size));
    }
    return value;
}

std::int64_t consumed_dims(const KeyItem& item) {
    switch (item.kind) {
        case ItemKind::None:
        case ItemKind::Ellipsis: return 0;
        case ItemKind::Int:
        case ItemKind::Slice: return 1;
        case ItemKind::Tensor: return item.tensor.dtype() == DType::Bool ? item.tensor.dim() : 1;
    }
    return 0;
}

ParsedKey parse_key(const Tensor& self, py::handle key) {
    std::vector<KeyItem> items;
    if (py::isinstance<py::tuple>(key)) {
        for (const py::handle item : py::reinterpret_borrow<py::tuple>(key)) {
            items.push_back(classify(item));
        }
    } else {
        items.push_back(classify(key));
    }
    std::int64_t consuming = 0;
    bool seen_ellipsis = false;
    for (const KeyItem& item : items) {
        consuming += consumed_dims(item);
        if (item.kind == ItemKind::Ellipsis) {
            if (seen_ellipsis) throw py::index_error("an index can only have one ellipsis");
            seen_ellipsis = true;
        }
    }
    if (consuming > self.dim()) {
        throw py::index_error("too many indices for a tensor of dimension " +
                              std::to_string(self.dim()));
    }
    ParsedKey parsed{self, {}, false};
    Tensor& view = parsed.view;
    std::int64_t dim = 0;
    for (const KeyItem& item : items) {
        switch (item.kind) {
            case ItemKind::None:
                view = view.unsqueeze(dim++);
                parsed.indices.emplace_back();
                break;
            case ItemKind::Ellipsis:
                for (std::int64_t d = 0; d < self.dim() - consuming; ++d) {
                    parsed.indices.emplace_back();
                }
                dim += self.dim() - consuming;
                break;
            case ItemKind::Int:
                view = view.select(dim, int_index(item.object, view.size(dim), dim));
                break;
            case ItemKind::Slice: {
                Py_ssize_t start = 0;
                Py_ssize_t stop = 0;
                Py_ssize_t step = 0;
                if (PySlice_Unpack(item.object.ptr(), &start, &stop, &step) < 0) {
                    throw py::error_already_set();
                }
                if (step <= 0) {
                    throw py::value_error(
                        "slices with a negative step are not supported (kael "
                        "views have non-negative strides)");
                }
                PySlice_AdjustIndices(static_cast<Py_ssize_t>(view.size(dim)), &start, &stop, step);
                view = view.slice(dim++, start, stop, step);
                parsed.indices.emplace_back();
                break;
            }
            case ItemKind::Tensor:
                parsed.indices.push_back(item.tensor);
                parsed.advanced = true;
                dim += consumed_dims(item);
                break;
        }
    }
    return parsed;
}

// The value of t[key] = value as a tensor on target's device: tensors as they are, Python
// numbers as weak scalars, lists and arrays converted to target's dtype.
Tensor value_tensor(py::handle value, const Tensor& target) {
    if (py::isinstance<Tensor>(value)) return value.cast<Tensor>().to(target.device());
    if (is_index_sequence(value)) return tensor_from_data(value, target.dtype(), target.device());
    return operand(value, target);
}

}  // namespace

Tensor get_item(const Tensor& self, py::handle key) {
    const ParsedKey parsed = parse_key(self, key);
    if (!parsed.advanced) return parsed.view;
    return index(parsed.view, parsed.indices);
}

void set_item(const Tensor& self, py::handle key, py::handle value) {
    ParsedKey parsed = parse_key(self, key);
    const Tensor values = value_tensor(value, parsed.view);
    if (!parsed.advanced) {
        parsed.view.copy_(values);
        return;
    }
    index_put_(parsed.view, parsed.indices, values);
}

}  // namespace kael::python
