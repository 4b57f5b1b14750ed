// reduce_rows_f32's folds for the baseline ISA, and the choice among the three.
#define KAEL_ROWS_TABLE kBaseline
#include "reduce_rows_f32.inc"
#include "vector_math.h"

namespace kael::cpu::rows_f32 {

const Table& table() {
#if defined(__x86_64__)
    switch (vector_math::chosen_isa()) {
        case vector_math::Isa::Avx512: return kAvx512;
        case vector_math::Isa::Avx2: return kAvx2;
        default: break;
    }
#endif
    return kBaseline;
}

}  // namespace kael::cpu::rows_f32
