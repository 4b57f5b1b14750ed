#pragma once
// Docstrings of kael.nn.Module (bind_nn.cpp, bind_nn_module_tree.cpp): a text signature, then
// what the method does, its arguments and result, and for the class an example.
namespace kael::python::docs {

inline constexpr const char* Module = R"doc(Base of every layer: subclass it, assign layers and parameters as attributes, define forward.

Attributes that are modules or leaf tensors requiring grad (kael.nn.Parameter) are registered
when assigned, so parameters(), to(), state_dict() and the optimizers see them; register_buffer
adds tensors that are saved and moved but not trained. Printing a module shows its tree as
PyTorch does.

Example:
    >>> class Net(kael.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = kael.nn.Linear(4, 8)
    ...         self.register_buffer("scale", kael.ones(8))
    ...     def forward(self, x):
    ...         return kael.relu(self.hidden(x)) * self.scale
    >>> net = Net()
    >>> net(kael.ones(2, 4)).shape
    (2, 8)
    >>> net
    Net(
      (hidden): Linear(in_features=4, out_features=8, bias=True)
    ))doc";

inline constexpr const char* module_init = R"doc(__init__(self)
--

Creates an empty module; a subclass's __init__ calls it first (super().__init__()).)doc";
inline constexpr const char* module_forward = R"doc(forward(self, input)
--

The module's computation; subclasses define it. Call the module (module(x)) rather than
forward directly.)doc";
inline constexpr const char* module_call = R"doc(__call__(self, *args, **kwargs)
--

Runs forward(*args, **kwargs).)doc";
inline constexpr const char* parameters = R"doc(parameters(self)
--

Every parameter of the module and its descendants (a tied tensor once), in registration order.

Returns:
    list of Tensor: leaf tensors that require grad.)doc";
inline constexpr const char* named_parameters = R"doc(named_parameters(self, remove_duplicate=True)
--

(dotted name, parameter) pairs, e.g. ("hidden.weight", w); a tied tensor once, under its first
name, unless remove_duplicate is False.)doc";
inline constexpr const char* get_submodule = R"doc(get_submodule(self, target)
--

The submodule at a dotted path ('blocks.0.attention'); ValueError naming the missing part.)doc";
inline constexpr const char* get_parameter = R"doc(get_parameter(self, target)
--

The parameter at a dotted path ('head.weight'); ValueError when there is none.)doc";
inline constexpr const char* set_parameter = R"doc(set_parameter(self, target, value)
--

Makes the parameter at a dotted path the tensor value (a leaf requiring grad is used as it is):
model.set_parameter('head.weight', model.get_parameter('embedding.weight')) ties the two.)doc";
inline constexpr const char* parameter_count = R"doc(parameter_count(self)
--

The number of elements of every parameter (tied ones once).)doc";
inline constexpr const char* state_dict = R"doc(state_dict(self)
--

Every parameter (all the names of a tied one) and persistent buffer by dotted name, in
PyTorch's order (own parameters, own buffers, then each child).

Returns:
    dict of str to Tensor: detached tensors sharing the module's memory (requires_grad False).)doc";
inline constexpr const char* load_state_dict = R"doc(load_state_dict(self, state_dict, strict=True)
--

Copies every parameter and persistent buffer from state_dict (matched by name) after checking
them all, so a failure changes nothing; dtypes convert, shapes must match (ValueError).

Args:
    state_dict (dict of str to Tensor): as state_dict() returns it (torch tensors: convert first).
    strict (bool): missing or unexpected names are a ValueError; False returns them instead.

Returns:
    IncompatibleKeys: (missing_keys, unexpected_keys).)doc";
inline constexpr const char* zero_grad = R"doc(zero_grad(self)
--

Sets every parameter's grad to None.)doc";
inline constexpr const char* module_to = R"doc(to(self, *args, **kwargs)
--

to(device), to(dtype), to(device, dtype) or keywords device=, dtype=: moves every parameter
(with its grad) and buffer to device, and converts the floating-point ones to dtype (a floating
dtype; integer and bool buffers keep theirs), in place, so optimizers built before keep
working; returns self.)doc";
inline constexpr const char* module_half = R"doc(half(self)
--

to(kael.float16); returns self.)doc";
inline constexpr const char* module_bfloat16 = R"doc(bfloat16(self)
--

to(kael.bfloat16); returns self.)doc";
inline constexpr const char* module_float = R"doc(float(self)
--

to(kael.float32); returns self.)doc";
inline constexpr const char* module_double = R"doc(double(self)
--

to(kael.float64); returns self.)doc";
inline constexpr const char* module_cuda = R"doc(cuda(self, index=0)
--

to('cuda:index'); returns self.)doc";
inline constexpr const char* module_cpu = R"doc(cpu(self)
--

to('cpu'); returns self.)doc";
inline constexpr const char* train = R"doc(train(self, mode=True)
--

Sets training mode (dropout active) on the module and every descendant; returns self.)doc";
inline constexpr const char* eval = R"doc(eval(self)
--

train(False): dropout off; returns self.)doc";
inline constexpr const char* training = "True in training mode; setting it changes this module only.";
inline constexpr const char* module_save = R"doc(save(self, path)
--

Writes every parameter and persistent buffer to a checksummed kael file, atomically.)doc";
inline constexpr const char* module_load = R"doc(load(self, path)
--

Reads a file save() wrote, as load_state_dict(strict=True) does.)doc";
inline constexpr const char* save_safetensors = R"doc(save_safetensors(self, path)
--

Writes every parameter and persistent buffer to a safetensors file, atomically.)doc";
inline constexpr const char* load_safetensors = R"doc(load_safetensors(self, path, strict=True)
--

Reads a safetensors file as load_state_dict does (F16/BF16 convert); a failure changes nothing.)doc";
inline constexpr const char* extra_repr = R"doc(extra_repr(self)
--

What the module prints inside its parentheses ('in_features=4, out_features=8, bias=True');
override it in a subclass to describe its settings. '' by default.)doc";
inline constexpr const char* module_repr = R"doc(__repr__(self)
--

The module tree as PyTorch prints it.)doc";
inline constexpr const char* register_buffer = R"doc(register_buffer(self, name, tensor, persistent=True)
--

Adds a tensor the module keeps but does not train (running statistics, masks, class weights):
readable as self.name, moved by to(), listed by buffers(), never by parameters(). Assigning a
tensor to self.name replaces it.

Args:
    name (str): an attribute name not used yet (KeyError otherwise).
    tensor (Tensor): stored detached.
    persistent (bool): whether state_dict(), save() and load_state_dict() include it.)doc";
inline constexpr const char* module_getattr = R"doc(__getattr__(self, name)
--

The buffer registered under name; AttributeError when there is none.)doc";
inline constexpr const char* named_buffers = R"doc(named_buffers(self)
--

(dotted name, buffer) pairs of the module and its descendants, persistent or not.)doc";
inline constexpr const char* buffers = R"doc(buffers(self)
--

Every buffer of the module and its descendants.)doc";
inline constexpr const char* named_children = R"doc(named_children(self)
--

(name, module) pairs of the direct children, in registration order.)doc";
inline constexpr const char* children = R"doc(children(self)
--

The direct child modules, in registration order.)doc";
inline constexpr const char* named_modules = R"doc(named_modules(self)
--

(dotted name, module) pairs of the module itself (name '') and every descendant, depth first,
each module once.)doc";
inline constexpr const char* modules = R"doc(modules(self)
--

The module itself and every descendant, depth first, each once.)doc";
inline constexpr const char* apply = R"doc(apply(self, fn)
--

Calls fn(module) on every descendant, children before parents, then on self (PyTorch's order,
e.g. to initialize weights); returns self.)doc";
inline constexpr const char* requires_grad_ = R"doc(requires_grad_(self, requires_grad=True)
--

Sets requires_grad on every parameter (False freezes the module); returns self.)doc";

}  // namespace kael::python::docs
