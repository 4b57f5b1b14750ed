#pragma once
// Docstrings of kael.nn.functional (bind_nn_functional.cpp): PyTorch's signatures and options.
namespace kael::python::docs {

inline constexpr const char* silu = R"doc(silu(input)
--

input * sigmoid(input) elementwise (swish), differentiable.

Args:
    input (Tensor): floating, any shape and device.

Returns:
    Tensor: input's shape and dtype.

Example:
    >>> kael.nn.functional.silu(kael.zeros(2)).tolist()
    [0.0, 0.0])doc";

inline constexpr const char* cross_entropy = R"doc(cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)
--

The cross entropy of logits and targets, as torch.nn.functional.cross_entropy. With the
default options on [N, C] logits this is one fused kernel; the others are composed (log_softmax,
gather, masks) and differentiate through autograd.

Args:
    input (Tensor): floating logits [N, C], [N, C, d1, ...] or [C].
    target (Tensor): int64 class indices [N, d1, ...] (or 0-d), or class probabilities of
        input's shape.
    weight (Tensor): [C] rescaling weight per class.
    ignore_index (int): index targets equal to it add nothing and are not counted.
    reduction (str): 'none' (loss per target), 'mean' (divided by the summed weights of the
        counted targets; NaN when all are ignored) or 'sum'.
    label_smoothing (float): in [0, 1]; targets mix with the uniform distribution.

Returns:
    Tensor: 0-d, or target's shape for reduction='none'.

Example:
    >>> logits = kael.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> loss = kael.nn.functional.cross_entropy(logits, kael.tensor([0, -100]))
    >>> round(loss.item(), 4)
    0.1269)doc";

inline constexpr const char* nll_loss = R"doc(nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean')
--

The negative log-likelihood of log-probabilities (log_softmax's output), as
torch.nn.functional.nll_loss: -input[n, target[n]] * weight[target[n]], reduced.

Args:
    input (Tensor): floating [N, C], [N, C, d1, ...] or [C].
    target (Tensor): int64 class indices [N, d1, ...].
    weight (Tensor): [C] weight per class.
    ignore_index (int): targets to skip.
    reduction (str): 'none', 'mean' (divided by the summed weights) or 'sum'.

Returns:
    Tensor: 0-d, or target's shape for reduction='none'.

Example:
    >>> log_probs = kael.tensor([[-0.5, -1.0]])
    >>> kael.nn.functional.nll_loss(log_probs, kael.tensor([1])).item()
    1.0)doc";

inline constexpr const char* mse_loss = R"doc(mse_loss(input, target, reduction='mean')
--

(input - target)^2, reduced: 'none', 'mean' or 'sum'; target broadcasts against input.

Example:
    >>> kael.nn.functional.mse_loss(kael.tensor([1.0, 3.0]), kael.tensor([0.0, 0.0])).item()
    5.0)doc";

inline constexpr const char* l1_loss = R"doc(l1_loss(input, target, reduction='mean')
--

|input - target|, reduced: 'none', 'mean' or 'sum'; target broadcasts against input.

Example:
    >>> kael.nn.functional.l1_loss(kael.tensor([1.0, -3.0]), kael.zeros(2)).item()
    2.0)doc";

inline constexpr const char* binary_cross_entropy = R"doc(binary_cross_entropy(input, target, weight=None, reduction='mean')
--

-(target * log(input) + (1 - target) * log(1 - input)) with the logs clamped at -100, as
torch.nn.functional.binary_cross_entropy.

Args:
    input (Tensor): probabilities in [0, 1], floating.
    target (Tensor): input's shape, values in [0, 1].
    weight (Tensor): broadcast against input, multiplies each term.
    reduction (str): 'none', 'mean' or 'sum'.

Example:
    >>> p = kael.tensor([0.5, 0.5])
    >>> round(kael.nn.functional.binary_cross_entropy(p, kael.tensor([1.0, 0.0])).item(), 4)
    0.6931)doc";

inline constexpr const char* binary_cross_entropy_with_logits = R"doc(binary_cross_entropy_with_logits(input, target, weight=None, reduction='mean', pos_weight=None)
--

binary_cross_entropy(sigmoid(input), target) computed stably from logits, as
torch.nn.functional.binary_cross_entropy_with_logits.

Args:
    input (Tensor): logits, floating.
    target (Tensor): input's shape, values in [0, 1].
    weight (Tensor): broadcast against input, multiplies each term.
    reduction (str): 'none', 'mean' or 'sum'.
    pos_weight (Tensor): [C], scales the positive term of each class (last dim).

Example:
    >>> loss = kael.nn.functional.binary_cross_entropy_with_logits(kael.zeros(2), kael.ones(2))
    >>> round(loss.item(), 4)
    0.6931)doc";

inline constexpr const char* functional_layer_norm = R"doc(layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05)
--

Normalizes over the last len(normalized_shape) dims, then scales and shifts, as
torch.nn.functional.layer_norm (the fused kernel; several dims are merged into one first).

Args:
    input (Tensor): floating, whose last dims are normalized_shape.
    normalized_shape (int or tuple of ints): the normalized dims.
    weight, bias (Tensor): normalized_shape, or None.
    eps (float): added to the variance.

Example:
    >>> y = kael.nn.functional.layer_norm(kael.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 3) for v in y[0].tolist()]
    [-1.0, 1.0])doc";

inline constexpr const char* functional_dropout = R"doc(dropout(input, p=0.5, training=True, inplace=False)
--

Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training; returns
input itself otherwise. inplace writes the result into input.

Example:
    >>> kael.nn.functional.dropout(kael.ones(3), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0])doc";

inline constexpr const char* functional_embedding = R"doc(embedding(input, weight, padding_idx=None)
--

Rows of weight [V, D] picked by the int64 indices input (PyTorch's order: indices first); the
result has shape input.shape + [D]. Rows picked at padding_idx give weight no gradient.

Example:
    >>> weight = kael.arange(6.0).view(3, 2)
    >>> kael.nn.functional.embedding(kael.tensor([2, 0]), weight).tolist()
    [[4.0, 5.0], [0.0, 1.0]])doc";

inline constexpr const char* functional_linear = R"doc(linear(input, weight, bias=None)
--

input [..., in] @ weight [out, in]^T + bias [out], as torch.nn.functional.linear.

Example:
    >>> kael.nn.functional.linear(kael.ones(1, 2), kael.ones(3, 2)).tolist()
    [[2.0, 2.0, 2.0]])doc";

inline constexpr const char* functional_attention = R"doc(scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None)
--

softmax(query @ key^T * scale + mask) @ value, as torch.nn.functional.scaled_dot_product_attention.
Without a mask or dropout, 3- and 4-d inputs run the fused kernel (scores never stored).

Args:
    query (Tensor): [..., L, E], floating.
    key, value (Tensor): [..., S, E], query's dtype and device.
    attn_mask (Tensor): broadcast to [..., L, S]; bool True takes part (PyTorch's convention),
        floats are added to the scores.
    dropout_p (float): dropout on the attention weights.
    is_causal (bool): query i sees keys j <= i.
    scale (float): defaults to 1 / sqrt(E).

Returns:
    Tensor: [..., L, E].

Example:
    >>> q = kael.randn(1, 2, 4, 8)
    >>> kael.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    (1, 2, 4, 8))doc";

inline constexpr const char* one_hot = R"doc(one_hot(tensor, num_classes=-1)
--

int64 [*tensor.shape, num_classes] of zeros with a one at each class index; num_classes -1
takes max + 1.

Example:
    >>> kael.nn.functional.one_hot(kael.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]])doc";

inline constexpr const char* pad = R"doc(pad(input, pad, mode='constant', value=0.0)
--

input extended with value: pad holds (before, after) pairs starting from the last dim (negative
amounts crop), as torch.nn.functional.pad in constant mode. Differentiable.

Example:
    >>> kael.nn.functional.pad(kael.ones(1, 2), (1, 0)).tolist()
    [[0.0, 1.0, 1.0]])doc";

}  // namespace kael::python::docs
