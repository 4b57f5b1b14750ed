// vector_math's 16-lane loops, compiled for AVX-512 (this file only; see vector_math_wide.h).
#define KAEL_LANES 16
#define KAEL_VECTOR __m512
#define KAEL_LOAD _mm512_loadu_ps
#define KAEL_STORE _mm512_storeu_ps
#define KAEL_MVEC(name) _ZGVeN16v_##name
#define KAEL_MVEC2(name) _ZGVeN16vv_##name
#define KAEL_POWER power_avx512
#define KAEL_APPLY apply_avx512
#include "vector_math_lanes.inc"
