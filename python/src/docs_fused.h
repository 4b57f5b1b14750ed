#pragma once
// Docstrings of kael's fused neural-network functions (bind_ops.cpp's bind_nn_functions;
// kael.nn.functional gives them PyTorch's arguments, docs_nn_functional.h):
// a text signature, then what the op does, its arguments and an example.
namespace kael::python::docs::fused {

inline constexpr const char* cross_entropy = R"doc(cross_entropy(input, target, reduction='mean')
--

The cross entropy between logits input [N, C] and class indices target [N] (int64), in one
fused kernel per row (log_softmax and the pick of the target's entry together).

Args:
    input (Tensor): f32 or f64 logits, [N, C]; target (Tensor): int64 in [0, C), [N].
    reduction (str): 'mean', 'sum' or 'none'.

kael.nn.functional.cross_entropy adds PyTorch's weight, ignore_index and label_smoothing.

Example:

    >>> kael.cross_entropy(kael.zeros(2, 4), kael.tensor([0, 3]))
)doc";

inline constexpr const char* layer_norm = R"doc(layer_norm(input, weight=None, bias=None, eps=1e-05)
--

Layer normalisation over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias, in
one fused kernel per row.

Args:
    input (Tensor): f32 or f64, [..., C]; weight, bias (Tensor, optional): [C]; eps (float).

Returns a differentiable tensor. kael.nn.functional.layer_norm takes PyTorch's arguments.

Example:

    >>> kael.layer_norm(kael.tensor([[1.0, 2.0, 3.0]]))
)doc";

inline constexpr const char* embedding = R"doc(embedding(weight, indices)
--

The rows of weight [V, C] at int64 indices of any shape: [*indices.shape, C]. Note the order:
kael.nn.functional.embedding(input, weight) takes PyTorch's.

Example:

    >>> kael.embedding(kael.eye(3), kael.tensor([2, 0])) if hasattr(kael, "eye") else None
)doc";

inline constexpr const char* dropout = R"doc(dropout(input, p=0.5, training=True)
--

Zeroes each element with probability p and scales the rest by 1/(1-p) while training; the
identity otherwise. The mask comes from kael's seeded generator.

Args:
    input (Tensor): floating; p (float) in [0, 1); training (bool).

Example:

    >>> kael.dropout(kael.ones(4), p=0.5, training=False)
)doc";

inline constexpr const char* linear = R"doc(linear(input, weight, bias=None)
--

input @ weight.T + bias, in one matmul with the bias fused where the device can.

Args:
    input (Tensor): [..., in]; weight (Tensor): [out, in]; bias (Tensor, optional): [out].

Example:

    >>> kael.linear(kael.ones(2, 3), kael.ones(4, 3)).shape
)doc";

inline constexpr const char* scaled_dot_product_attention = R"doc(scaled_dot_product_attention(query, key, value, is_causal=False, scale=None)
--

softmax(query @ key.T * scale [+ causal mask]) @ value in one fused kernel where the device has
it; scale defaults to 1/sqrt(head size).

Args:
    query (Tensor): [..., L, E]; key (Tensor): [..., S, E]; value (Tensor): [..., S, Ev];
        is_causal (bool): position i attends to 0..i only; scale (float, optional).

Returns a differentiable tensor [..., L, Ev].

Example:

    >>> q = kael.rand(1, 2, 4, 8)
    >>> kael.scaled_dot_product_attention(q, q, q, is_causal=True).shape
)doc";

}  // namespace kael::python::docs::fused
