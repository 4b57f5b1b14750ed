// reduce_rows_f32's folds compiled for AVX-512 (this file only).
#define KAEL_ROWS_TABLE kAvx512
#include "reduce_rows_f32.inc"
