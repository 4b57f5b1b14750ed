// kael._kael._distributed: the stores and process groups of kael/distributed.h, which
// kael/distributed/__init__.py shapes as torch.distributed. Blocking calls release the GIL, so
// a thread of the same process (or a store server) is never held up by one waiting.
#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include "bind_common.h"
#include "kael/distributed.h"

namespace kael::python {

namespace {

using namespace kael::distributed;
using Released = py::call_guard<py::gil_scoped_release>;

std::chrono::milliseconds milliseconds(double seconds) {
    if (!(seconds > 0)) {
        throw ValueError("timeout must be a positive number of seconds, got " +
                         std::to_string(seconds));
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

py::bytes as_bytes(const std::string& value) {
    return py::bytes(value);
}

std::string as_value(py::handle value) {
    if (py::isinstance<py::bytes>(value)) return value.cast<std::string>();
    if (py::isinstance<py::str>(value)) return value.cast<std::string>();
    throw TypeError("Store.set: value must be bytes or str, got " + type_name(value));
}

}  // namespace

void bind_distributed(py::module_& module) {
    py::module_ d = module.def_submodule("_distributed", "kael.distributed internals");
    // Registered after kael's own translator, so it is tried first (pybind11 tries the newest).
    py::register_exception<DistBackendError>(d, "DistBackendError", PyExc_RuntimeError);
    d.def("backend_available", &kael::distributed::backend_available, py::arg("backend"));
    py::enum_<ReduceOp>(d, "ReduceOp",
                        R"doc(The reductions of all_reduce, reduce and reduce_scatter_tensor, as
torch.distributed.ReduceOp: SUM, AVG (floating tensors), PRODUCT, MIN, MAX.

Example:
    >>> kael.distributed.ReduceOp.SUM
    <ReduceOp.SUM: 0>)doc")
        .value("SUM", ReduceOp::Sum)
        .value("AVG", ReduceOp::Avg)
        .value("PRODUCT", ReduceOp::Product)
        .value("MIN", ReduceOp::Min)
        .value("MAX", ReduceOp::Max);

    py::class_<Store, std::shared_ptr<Store>>(
        d, "Store", R"doc(A key-value store processes meet through, as c10d's Store: set, get (waits
for the key until the timeout), add (an atomic counter), check and wait.

Example:
    >>> import os, tempfile
    >>> store = kael.distributed.FileStore(os.path.join(tempfile.mkdtemp(), "store"))
    >>> store.set("x", b"1")
    >>> store.get("x")
    b'1')doc")
        .def(
            "set",
            [](Store& s, const std::string& key, py::handle value) {
                const std::string bytes = as_value(value);
                const py::gil_scoped_release released;
                s.set(key, bytes);
            },
            py::arg("key"), py::arg("value"), "Stores value (bytes or str) under key.")
        .def(
            "get",
            [](Store& s, const std::string& key) {
                std::string value;
                {
                    const py::gil_scoped_release released;
                    value = s.get(key);
                }
                return as_bytes(value);
            },
            py::arg("key"), "The bytes under key, waiting for it until the timeout.")
        .def("add", &Store::add, py::arg("key"), py::arg("amount"), Released(),
             "Adds amount to the counter under key (0 at first) and returns the new value.")
        .def("check", &Store::check, py::arg("keys"), Released(), "Whether every key is set now.")
        .def("wait", &Store::wait, py::arg("keys"), Released(),
             "Waits until every key is set (DeviceError after the timeout).")
        .def_property(
            "timeout",
            [](const Store& s) { return static_cast<double>(s.timeout().count()) / 1000; },
            [](Store& s, double seconds) { s.set_timeout(milliseconds(seconds)); },
            "The timeout of get and wait, in seconds.");

    py::class_<TCPStore, Store, std::shared_ptr<TCPStore>>(
        d, "TCPStore",
        R"doc(TCPStore(host_name, port, world_size=None, is_master=False, timeout=300.0): a store served
over TCP by the process with is_master (port 0 picks a free one: see .port), reached by the
others at host_name:port, as torch.distributed.TCPStore.

Example:
    >>> store = kael.distributed.TCPStore("127.0.0.1", 0, is_master=True)
    >>> store.add("count", 2)
    2)doc")
        .def(py::init([](const std::string& host, int port, py::handle /*world_size*/,
                         bool is_master, double timeout) {
                 const py::gil_scoped_release released;
                 return std::make_shared<TCPStore>(host, port, is_master, milliseconds(timeout));
             }),
             py::arg("host_name"), py::arg("port"), py::arg("world_size") = py::none(),
             py::arg("is_master") = false, py::arg("timeout") = 300.0)
        .def_property_readonly("port", &TCPStore::port, "The port served.");

    py::class_<FileStore, Store, std::shared_ptr<FileStore>>(
        d, "FileStore",
        R"doc(FileStore(file_name, world_size=None, timeout=300.0): a store in one file that every process
opens (one machine, or a shared file system), as torch.distributed.FileStore.

Example:
    >>> import os, tempfile
    >>> store = kael.distributed.FileStore(os.path.join(tempfile.mkdtemp(), "store"))
    >>> store.add("n", 1)
    1)doc")
        .def(py::init([](const std::string& path, py::handle /*world_size*/, double timeout) {
                 return std::make_shared<FileStore>(path, milliseconds(timeout));
             }),
             py::arg("file_name"), py::arg("world_size") = py::none(), py::arg("timeout") = 300.0);

    py::class_<ProcessGroup, std::shared_ptr<ProcessGroup>>(d, "ProcessGroup",
                                                            "A group of processes (see "
                                                            "kael.distributed.init_process_group).")
        .def(py::init([](std::shared_ptr<Store> store, int rank, int size,
                         const std::string& backend, double timeout, const std::string& prefix) {
                 return std::make_shared<ProcessGroup>(std::move(store), rank, size, backend,
                                                       milliseconds(timeout), prefix);
             }),
             py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("backend"),
             py::arg("timeout"), py::arg("prefix"))
        .def("rank", &ProcessGroup::rank)
        .def("size", &ProcessGroup::size)
        .def_property_readonly("backend", &ProcessGroup::backend)
        .def("all_reduce", &ProcessGroup::all_reduce, py::arg("tensor"), py::arg("op"), Released())
        .def("broadcast", &ProcessGroup::broadcast, py::arg("tensor"), py::arg("src"), Released())
        .def("reduce", &ProcessGroup::reduce, py::arg("tensor"), py::arg("dst"), py::arg("op"),
             Released())
        .def("all_gather_into_tensor", &ProcessGroup::all_gather_into_tensor, py::arg("out"),
             py::arg("tensor"), Released())
        .def("all_gather", &ProcessGroup::all_gather, py::arg("outs"), py::arg("tensor"),
             Released())
        .def("reduce_scatter_tensor", &ProcessGroup::reduce_scatter_tensor, py::arg("out"),
             py::arg("tensor"), py::arg("op"), Released())
        .def("all_to_all_single",
             py::overload_cast<const Tensor&, const Tensor&>(&ProcessGroup::all_to_all_single),
             py::arg("out"), py::arg("tensor"), Released())
        .def("all_to_all_single",
             py::overload_cast<const Tensor&, const Tensor&, const std::vector<std::int64_t>&,
                               const std::vector<std::int64_t>&>(&ProcessGroup::all_to_all_single),
             py::arg("out"), py::arg("tensor"), py::arg("out_splits"), py::arg("in_splits"),
             Released())
        .def("send", &ProcessGroup::send, py::arg("tensor"), py::arg("dst"), py::arg("tag"),
             Released())
        .def("recv", &ProcessGroup::recv, py::arg("tensor"), py::arg("src"), py::arg("tag"),
             Released())
        .def("barrier", &ProcessGroup::barrier, Released());
}

}  // namespace kael::python
