// vector_math's 8-lane loops, compiled for AVX2 + FMA (this file only; see vector_math_wide.h).
#define KAEL_LANES 8
#define KAEL_VECTOR __m256
#define KAEL_LOAD _mm256_loadu_ps
#define KAEL_STORE _mm256_storeu_ps
#define KAEL_MVEC(name) _ZGVdN8v_##name
#define KAEL_MVEC2(name) _ZGVdN8vv_##name
#define KAEL_POWER power_avx2
#define KAEL_APPLY apply_avx2
#include "vector_math_lanes.inc"
