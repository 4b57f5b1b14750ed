"""torch.nn's Transformer layers with PyTorch's signatures, submodule names (so state_dicts
load either way) and numerics: TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer, TransformerDecoder and Transformer (norm_first, relu/gelu or a
callable activation, batch_first, masks, key padding masks), over kael's MultiheadAttention
(its fused attention kernel where no mask or dropout asks for the composed path)."""
import copy

from .. import _kael
from .._kael import Tensor, _nn


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return _kael.relu
    if activation == "gelu":
        return _kael.gelu
    raise ValueError(f"activation should be relu/gelu, not {activation!r}")


def _layers(layer, count):
    from . import ModuleList
    return ModuleList([copy.deepcopy(layer) for _ in range(count)])


def _parts(d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, bias, device,
           cross):
    from . import Dropout, LayerNorm, Linear, MultiheadAttention
    parts = {"self_attn": MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                             batch_first=batch_first, device=device)}
    if cross:
        parts["multihead_attn"] = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, device=device)
    parts["linear1"] = Linear(d_model, dim_feedforward, bias=bias, device=device)
    parts["dropout"] = Dropout(dropout)
    parts["linear2"] = Linear(dim_feedforward, d_model, bias=bias, device=device)
    for i in (1, 2, 3) if cross else (1, 2):
        parts[f"norm{i}"] = LayerNorm(d_model, eps=layer_norm_eps, device=device)
        parts[f"dropout{i}"] = Dropout(dropout)
    return parts


class _TransformerLayer(_nn.Module):
    _cross = False  # the decoder's attention over the encoder's memory

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        for name, module in _parts(d_model, nhead, dim_feedforward, dropout, layer_norm_eps,
                                   batch_first, bias, device, self._cross).items():
            setattr(self, name, module)
        self.norm_first, self.activation = norm_first, _activation(activation)
        if dtype is not None:
            self.to(dtype)


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention and a feed-forward block, each with a residual and LayerNorm (after it,
    or before it with norm_first), as torch.nn.TransformerEncoderLayer.

    Example:
        >>> layer = kael.nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
        >>> layer(kael.randn(2, 5, 16)).shape
        (2, 5, 16)
    """


    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """The layer's output, shaped like src."""
        if not isinstance(src, Tensor):
            raise TypeError(f"TransformerEncoderLayer: src must be a Tensor, not "
                            f"{type(src).__name__}")
        x = src
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), src_mask, src_key_padding_mask,
                                         is_causal)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._self_attention(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward(x))

    def _self_attention(self, x, mask, padding, is_causal):
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False, is_causal=is_causal and mask is None)[0]
        return self.dropout1(out)

    def _feed_forward(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's memory and a feed-forward block, as
    torch.nn.TransformerDecoderLayer.

    Example:
        >>> layer = kael.nn.TransformerDecoderLayer(d_model=16, nhead=4)
        >>> layer(kael.randn(5, 2, 16), kael.randn(7, 2, 16)).shape
        (5, 2, 16)
    """
    _cross = True

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """The layer's output, shaped like tgt."""
        x = tgt

        def self_block(y):
            return self.dropout1(self.self_attn(
                y, y, y, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,
                need_weights=False, is_causal=tgt_is_causal and tgt_mask is None)[0])

        def cross_block(y):
            return self.dropout2(self.multihead_attn(
                y, memory, memory, attn_mask=memory_mask,
                key_padding_mask=memory_key_padding_mask, need_weights=False)[0])

        def feed_forward(y):
            return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(y)))))
        if self.norm_first:
            x = x + self_block(self.norm1(x))
            x = x + cross_block(self.norm2(x))
            return x + feed_forward(self.norm3(x))
        x = self.norm1(x + self_block(x))
        x = self.norm2(x + cross_block(x))
        return self.norm3(x + feed_forward(x))


class TransformerEncoder(_nn.Module):
    """num_layers copies of an encoder layer (and a final norm), as
    torch.nn.TransformerEncoder.

    Example:
        >>> layer = kael.nn.TransformerEncoderLayer(16, 4)
        >>> kael.nn.TransformerEncoder(layer, num_layers=2)(kael.randn(5, 2, 16)).shape
        (5, 2, 16)
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers, self.num_layers, self.norm = _layers(encoder_layer, num_layers), num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Every layer in turn, then the norm."""
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(_nn.Module):
    """num_layers copies of a decoder layer (and a final norm), as
    torch.nn.TransformerDecoder.

    Example:
        >>> layer = kael.nn.TransformerDecoderLayer(16, 4)
        >>> decoder = kael.nn.TransformerDecoder(layer, num_layers=2)
        >>> decoder(kael.randn(5, 2, 16), kael.randn(7, 2, 16)).shape
        (5, 2, 16)
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers, self.num_layers, self.norm = _layers(decoder_layer, num_layers), num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Every layer in turn over memory, then the norm."""
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal))
        return self.norm(x) if self.norm is not None else x


class Transformer(_nn.Module):
    """An encoder-decoder Transformer, as torch.nn.Transformer (each stack ends in a
    LayerNorm).

    Example:
        >>> model = kael.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1,
        ...                             num_decoder_layers=1, dim_feedforward=32)
        >>> model(kael.randn(7, 2, 16), kael.randn(5, 2, 16)).shape
        (5, 2, 16)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        from . import LayerNorm
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                       norm_first=norm_first, bias=bias, device=device)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, device=device))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, device=device))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        if dtype is not None:
            self.to(dtype)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """The decoder's output over the encoded src, shaped like tgt."""
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """[sz, sz] float mask: 0 on and below the diagonal, -inf above (query i sees keys
        j <= i), as torch.nn.Transformer.generate_square_subsequent_mask.

        Example:
            >>> kael.nn.Transformer.generate_square_subsequent_mask(2).tolist()
            [[0.0, -inf], [0.0, 0.0]]
        """
        import kael
        mask = kael.full((sz, sz), float("-inf"), dtype=dtype or kael.float32)
        return kael.triu(mask, diagonal=1).to(device or "cpu")
