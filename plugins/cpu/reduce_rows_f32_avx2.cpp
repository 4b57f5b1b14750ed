// reduce_rows_f32's folds compiled for AVX2 (this file only).
#define KAEL_ROWS_TABLE kAvx2
#include "reduce_rows_f32.inc"
