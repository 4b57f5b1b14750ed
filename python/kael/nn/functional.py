"""kael.nn.functional: torch.nn.functional's layer functions and losses, with PyTorch's
argument names, orders and defaults (the math is in the C++ core, kael/nn_functional.h).

    import kael.nn.functional as F
    loss = F.cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.1)
"""
from .. import _kael
from .._kael._nn._functional import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, dropout, embedding,
    l1_loss, layer_norm, linear, mse_loss, nll_loss, one_hot, scaled_dot_product_attention,
    silu)

from ._composed_functional import (  # noqa: F401,E402
    cosine_similarity, elu, hardswish, huber_loss, kl_div, leaky_relu, mish, normalize,
    smooth_l1_loss, softplus)

from ._conv_functional import (  # noqa: F401,E402
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, batch_norm,
    conv1d, conv2d, conv3d, group_norm, instance_norm, max_pool1d, max_pool2d, max_pool3d, pad)
from ._resampling import interpolate, pixel_shuffle, pixel_unshuffle, unfold  # noqa: F401,E402
from ._conv_transpose import (conv_transpose1d, conv_transpose2d,  # noqa: F401,E402
                              conv_transpose3d, fold)

# The top-level ops already have PyTorch's signatures.
relu = _kael.relu
gelu = _kael.gelu
sigmoid = _kael.sigmoid
tanh = _kael.tanh
softmax = _kael.softmax
log_softmax = _kael.log_softmax

__all__ = ["relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax",
           "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "layer_norm", "dropout", "embedding", "linear",
           "scaled_dot_product_attention", "one_hot", "pad", "leaky_relu", "elu", "softplus",
           "mish", "hardswish", "normalize", "cosine_similarity", "smooth_l1_loss",
           "huber_loss", "kl_div", "conv1d", "conv2d", "conv3d", "max_pool1d", "max_pool2d",
           "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "batch_norm", "group_norm",
           "instance_norm", "interpolate", "pixel_shuffle", "pixel_unshuffle", "unfold",
           "fold", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
