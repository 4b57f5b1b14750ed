"""Process-wide settings of the device backends, as torch.backends.

    import kael
    kael.backends.cuda.matmul.allow_tf32 = True   # f32 products on TF32 tensor cores
    kael.backends.cudnn.benchmark = True          # recorded (the plugin picks its algorithms)
    kael.backends.mps.is_available()              # False: no Metal plugin
"""
from . import cuda, cudnn, mps  # noqa: F401
