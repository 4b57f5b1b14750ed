"""Process-wide settings of the device backends, as torch.backends.

    import kael
    kael.backends.cuda.matmul.allow_tf32 = True   # f32 products on TF32 tensor cores
    kael.backends.cudnn.benchmark = True          # recorded (kael does not call cuDNN)
"""
from . import cuda, cudnn, mps  # noqa: F401
