// Python indexing: t[key] and t[key] = value.
#include <vector>

#include "bind_common.h"
#include "kael/ops.h"

namespace kael::python {

namespace {

bool is_index_int(py::handle item) {
    return !PyBool_Check(item.ptr()) && (PyLong_Check(item.ptr()) || PyIndex_Check(item.ptr())) &&
           !py::isinstance<Tensor>(item);
}

bool is_bool_mask(py::handle key) {
    return py::isinstance<Tensor>(key) && key.cast<Tensor>().dtype() == DType::Bool;
}

// Index lists and int64 tensors select along one dimension (PyTorch's advanced indexing, for
// one index at a time).
bool is_gather_index(py::handle item) {
    return (py::isinstance<Tensor>(item) && !is_bool_mask(item)) ||
           py::isinstance<py::list>(item);
}

std::vector<py::handle> key_items(py::handle key) {
    std::vector<py::handle> items;
    if (py::isinstance<py::tuple>(key)) {
        for (const py::handle item : py::reinterpret_borrow<py::tuple>(key)) items.push_back(item);
    } else {
        items.push_back(key);
    }
    return items;
}

Tensor select_by_index(const Tensor& result, std::int64_t dim, py::handle item) {
    Tensor index = py::isinstance<Tensor>(item) ? item.cast<Tensor>()
                                                 : tensor_from_data(item, DType::I64, kCPU);
    if (index.dtype() != DType::I64) {
        throw py::index_error("tensors used as indices must be int64 or bool, got " +
                              to_string(index.dtype()));
    }
    index = index.to(result.device());
    const Tensor picked = index_select(result, dim, index.flatten());
    Shape shape(result.shape().begin(), result.shape().begin() + dim);
    shape.insert(shape.end(), index.shape().begin(), index.shape().end());
    shape.insert(shape.end(), result.shape().begin() + dim + 1, result.shape().end());
    return picked.reshape(shape);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
    if (mask.shape() != self.shape()) {
        throw py::index_error("a bool mask index must have the tensor's shape " +
                              to_string(self.shape()) + ", got " + to_string(mask.shape()));
    }
    // The result's length depends on the data, so the positions are found on the host.
    const std::vector<bool> flags = mask.to_vector<bool>();
    std::vector<std::int64_t> positions;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i]) positions.push_back(static_cast<std::int64_t>(i));
    }
    const Tensor index = tensor(positions, {static_cast<std::int64_t>(positions.size())});
    return index_select(self.reshape({-1}), 0, index.to(self.device()));
}

}  // namespace

Tensor get_item(const Tensor& self, py::handle key) {
    if (is_bool_mask(key)) return masked_select(self, key.cast<Tensor>());
    const std::vector<py::handle> items = key_items(key);
    std::int64_t consuming = 0;
    for (const py::handle item : items) {
        if (!item.is_none() && item.ptr() != Py_Ellipsis) ++consuming;
    }
    if (consuming > self.dim()) {
        throw py::index_error("too many indices for a tensor of dimension " +
                              std::to_string(self.dim()));
    }
    Tensor result = self;
    std::int64_t dim = 0;
    bool seen_ellipsis = false;
    for (const py::handle item : items) {
        if (item.is_none()) {
            result = result.unsqueeze(dim++);
        } else if (item.ptr() == Py_Ellipsis) {
            if (seen_ellipsis) throw py::index_error("an index can only have one ellipsis");
            seen_ellipsis = true;
            dim += self.dim() - consuming;
        } else if (is_index_int(item)) {
            result = result.select(dim, to_int64(item, "index", "an int index"));
        } else if (PySlice_Check(item.ptr())) {
            Py_ssize_t start = 0;
            Py_ssize_t stop = 0;
            Py_ssize_t step = 0;
            if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
            if (step <= 0) {
                throw py::value_error("slices with a negative step are not supported (kael views "
                                      "have non-negative strides); use flip-free indexing");
            }
            PySlice_AdjustIndices(static_cast<Py_ssize_t>(result.size(dim)), &start, &stop, step);
            result = result.slice(dim++, start, stop, step);
        } else if (is_gather_index(item)) {
            const Tensor picked = select_by_index(result, dim, item);
            dim += picked.dim() - result.dim() + 1;
            result = picked;
        } else {
            throw py::type_error("tensor indices must be ints, slices, None, Ellipsis, int64 "
                                 "tensors or lists, or a bool mask; got " +
                                 std::string(py::str(py::type::of(item).attr("__name__"))));
        }
    }
    return result;
}

void set_item(const Tensor& self, py::handle key, py::handle value) {
    if (is_bool_mask(key)) {
        Tensor target = self;
        target.copy_(where(key.cast<Tensor>(), operand(value, self), self));
        return;
    }
    for (const py::handle item : key_items(key)) {
        if (is_gather_index(item)) {
            throw py::type_error("assignment through an index tensor or list is not supported "
                                 "(it would write a copy); use scatter_add_ or a slice");
        }
    }
    Tensor target = get_item(self, key);
    target.copy_(operand(value, target));
}

}  // namespace kael::python
