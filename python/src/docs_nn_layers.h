#pragma once
// Docstrings of the kael.nn layers (bind_nn_layers.cpp, bind_nn_shape_attention.cpp).
namespace kael::python::docs {

inline constexpr const char* Linear = R"doc(y = x W^T + b over the last dim, as torch.nn.Linear (weight [out, in], bias [out], both
uniform in +-1/sqrt(in_features)).

Example:
    >>> layer = kael.nn.Linear(784, 256)
    >>> layer(kael.ones(2, 784)).shape
    (2, 256)
    >>> layer
    Linear(in_features=784, out_features=256, bias=True))doc";
inline constexpr const char* Linear_init = R"doc(__init__(self, in_features, out_features, bias=True, *, device=None)
--

A layer from in_features to out_features inputs (float32, on device; cpu by default).)doc";
inline constexpr const char* weight = "The weight parameter; assigning a tensor ties or replaces it.";
inline constexpr const char* bias = "The bias parameter (None without one); assigning replaces it.";
inline constexpr const char* in_features = "The size of each input's last dim.";
inline constexpr const char* out_features = "The size of each output's last dim.";

inline constexpr const char* Embedding = R"doc(Rows of a weight [num_embeddings, embedding_dim] picked by int64 indices, as
torch.nn.Embedding; weights start standard normal, the padding_idx row at zero (it gets no
gradient).

Example:
    >>> table = kael.nn.Embedding(10, 4, padding_idx=0)
    >>> table(kael.tensor([[1, 0, 3]])).shape
    (1, 3, 4)
    >>> table
    Embedding(10, 4, padding_idx=0))doc";
inline constexpr const char* Embedding_init = R"doc(__init__(self, num_embeddings, embedding_dim, padding_idx=None, *, device=None)
--

A table of num_embeddings rows of embedding_dim floats; padding_idx (may be negative) marks a
row that stays zero-initialized and untrained.)doc";
inline constexpr const char* padding_idx = "The padding row's index (non-negative), or None.";

inline constexpr const char* LayerNorm = R"doc(Normalizes the last dim to zero mean and unit variance, then scales by weight and adds bias,
as torch.nn.LayerNorm with elementwise_affine=True.

Example:
    >>> norm = kael.nn.LayerNorm(8)
    >>> norm(kael.randn(2, 8)).shape
    (2, 8)
    >>> norm
    LayerNorm((8,), eps=1e-05, elementwise_affine=True))doc";
inline constexpr const char* LayerNorm_init =
    R"doc(__init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, *, device=None)
--

normalized_shape (int or tuple of ints): the trailing dims normalized together; eps is added to
the variance; elementwise_affine=False leaves out weight and bias, bias=False the bias alone
(both then None, as torch's).)doc";
inline constexpr const char* eps = "The number added to the variance.";

inline constexpr const char* ReLU = R"doc(max(x, 0) elementwise, as torch.nn.ReLU.

Example:
    >>> kael.nn.ReLU()(kael.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0])doc";
inline constexpr const char* Sigmoid = R"doc(1 / (1 + exp(-x)) elementwise, as torch.nn.Sigmoid.

Example:
    >>> kael.nn.Sigmoid()(kael.zeros(2)).tolist()
    [0.5, 0.5])doc";
inline constexpr const char* Tanh = R"doc(tanh(x) elementwise, as torch.nn.Tanh.

Example:
    >>> kael.nn.Tanh()(kael.zeros(1)).tolist()
    [0.0])doc";
inline constexpr const char* SiLU = R"doc(x * sigmoid(x) elementwise (swish), as torch.nn.SiLU.

Example:
    >>> kael.nn.SiLU()(kael.zeros(1)).tolist()
    [0.0])doc";
inline constexpr const char* Identity = R"doc(Returns its input unchanged (a placeholder), as torch.nn.Identity.

Example:
    >>> x = kael.ones(3)
    >>> kael.nn.Identity()(x) is x
    True)doc";
inline constexpr const char* no_argument_init = R"doc(__init__(self)
--

The layer; it has no parameters.)doc";
inline constexpr const char* Identity_init = R"doc(__init__(self, *args, **kwargs)
--

The layer; its arguments are ignored, as PyTorch's.)doc";

inline constexpr const char* GELU = R"doc(x * Phi(x) elementwise (erf form, or the tanh approximation), as torch.nn.GELU.

Example:
    >>> kael.nn.GELU(approximate="tanh")
    GELU(approximate='tanh'))doc";
inline constexpr const char* GELU_init = R"doc(__init__(self, approximate='none')
--

approximate: 'none' (exact, with erf) or 'tanh'.)doc";

inline constexpr const char* Dropout = R"doc(In training mode zeroes each element with probability p and scales the rest by 1 / (1 - p);
in eval mode returns its input, as torch.nn.Dropout.

Example:
    >>> drop = kael.nn.Dropout(p=0.1)
    >>> drop.eval()(kael.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    >>> drop
    Dropout(p=0.1, inplace=False))doc";
inline constexpr const char* Dropout_init = R"doc(__init__(self, p=0.5, inplace=False)
--

p in [0, 1): the probability of zeroing; inplace writes the result into the input.)doc";
inline constexpr const char* dropout_p = "The probability of zeroing an element.";

inline constexpr const char* Softmax = R"doc(exp(x) / sum(exp(x)) along dim, as torch.nn.Softmax.

Example:
    >>> kael.nn.Softmax(dim=1)(kael.zeros(1, 2)).tolist()
    [[0.5, 0.5]])doc";
inline constexpr const char* Softmax_init = R"doc(__init__(self, dim=None)
--

dim (int): the dim that sums to one; None takes PyTorch's legacy choice (0 for 0-, 1- and
3-d inputs, else 1).)doc";
inline constexpr const char* LogSoftmax = R"doc(log(softmax(x)) along dim, computed stably, as torch.nn.LogSoftmax.

Example:
    >>> kael.nn.LogSoftmax(dim=-1)(kael.zeros(2)).exp().tolist()
    [0.5, 0.5])doc";
inline constexpr const char* softmax_dim = "The dim softmax runs along (None: PyTorch's legacy choice).";

inline constexpr const char* Flatten = R"doc(Merges dims start_dim..end_dim into one (a view where possible), as torch.nn.Flatten.

Example:
    >>> kael.nn.Flatten()(kael.ones(2, 3, 4)).shape
    (2, 12))doc";
inline constexpr const char* Flatten_init = R"doc(__init__(self, start_dim=1, end_dim=-1)
--

The first and last dims merged (negative counts from the end).)doc";
inline constexpr const char* Unflatten = R"doc(Splits dim into unflattened_size (one entry may be -1), as torch.nn.Unflatten.

Example:
    >>> kael.nn.Unflatten(1, (2, 5))(kael.ones(3, 10)).shape
    (3, 2, 5))doc";
inline constexpr const char* Unflatten_init = R"doc(__init__(self, dim, unflattened_size)
--

dim (int): the dim split; unflattened_size (tuple of ints): its new sizes.)doc";
inline constexpr const char* start_dim = "The first dim merged.";
inline constexpr const char* end_dim = "The last dim merged.";
inline constexpr const char* unflatten_dim = "The dim split.";
inline constexpr const char* unflattened_size = "The sizes the dim is split into.";

inline constexpr const char* MultiheadAttention = R"doc(Multi-head attention as torch.nn.MultiheadAttention: query, key and value projected by
in_proj_weight [3E, E] (+ in_proj_bias), split into num_heads heads, attended and projected by
out_proj. The parameter names are PyTorch's, so a torch state_dict loads (after converting its
tensors). Without weights and masks the fused attention kernel runs.

Example:
    >>> attention = kael.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = kael.randn(3, 5, 8)
    >>> output, weights = attention(x, x, x)
    >>> output.shape, weights.shape
    ((3, 5, 8), (3, 5, 5)))doc";
inline constexpr const char* MultiheadAttention_init = R"doc(__init__(self, embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False, *, device=None)
--

embed_dim (E) must be divisible by num_heads; dropout is applied to the attention weights in
training mode; batch_first takes inputs [N, L, E] instead of [L, N, E].)doc";
inline constexpr const char* MultiheadAttention_forward = R"doc(forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)
--

Attention of query [L, N, E] over key and value [S, N, E] ([N, L, E] with batch_first;
[L, E] unbatched), on one device and floating dtype.

Args:
    key_padding_mask (Tensor): [N, S]; bool True ignores that key, floats are added.
    need_weights (bool): also return the attention weights (composed path).
    attn_mask (Tensor): [L, S] or [N * num_heads, L, S]; bool True forbids, floats are added.
    average_attn_weights (bool): weights averaged over heads [N, L, S], else [N, H, L, S].
    is_causal (bool): query i sees only keys j <= i (combined with attn_mask when given).

Returns:
    (Tensor, Tensor or None): output shaped like query, and the weights or None.)doc";
inline constexpr const char* in_proj_weight = "The query, key and value projections stacked: [3E, E].";
inline constexpr const char* in_proj_bias = "Their biases [3E], or None.";
inline constexpr const char* out_proj = "The output projection (a Linear from E to E features).";
inline constexpr const char* embed_dim = "E, the model's width.";
inline constexpr const char* num_heads = "The number of heads.";
inline constexpr const char* head_dim = "E / num_heads.";
inline constexpr const char* attention_dropout = "The dropout probability of the attention weights.";
inline constexpr const char* batch_first = "True when inputs are [N, L, E].";

}  // namespace kael::python::docs
