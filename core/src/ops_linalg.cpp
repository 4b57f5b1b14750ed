// matmul: numpy rules for 1-d operands, broadcast batches, transposed views passed as flags.
#include <atomic>

#include "autograd/record.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kael/tensor_iterator.h"
#include "kernel_calls.h"

namespace kael {

namespace {

struct MatrixOperand {
    Tensor tensor;
    std::int64_t batch_stride = 0;
    bool transposed = false;
};

// Brings a [..., r, c] operand into a form the kernel reads: one matrix reused by every batch,
// contiguous batches, or contiguous transposed batches.
MatrixOperand prepare(const Tensor& operand, const Shape& batch) {
    const std::int64_t rows = operand.size(-2);
    const std::int64_t columns = operand.size(-1);
    std::int64_t operand_batches = 1;
    for (std::int64_t d = 0; d + 2 < operand.dim(); ++d) {
        operand_batches *= operand.shape()[d];
    }
    MatrixOperand result;
    Tensor matrices = operand;
    if (operand_batches == 1) {
        while (matrices.dim() > 2) {
            matrices = matrices.select(0, 0);
        }
    } else {
        Shape full = batch;
        full.push_back(rows);
        full.push_back(columns);
        matrices = operand.expand(full);
        result.batch_stride = rows * columns;
    }
    if (matrices.is_contiguous()) {
        result.tensor = matrices;
    } else if (matrices.transpose(-2, -1).is_contiguous()) {
        result.tensor = matrices;
        result.transposed = true;
    } else {
        result.tensor = matrices.contiguous();
    }
    return result;
}

std::atomic<MatmulPrecision> matmul_precision{MatmulPrecision::Highest};

}  // namespace

void set_float32_matmul_precision(MatmulPrecision precision) {
    matmul_precision.store(precision, std::memory_order_relaxed);
}

MatmulPrecision float32_matmul_precision() {
    return matmul_precision.load(std::memory_order_relaxed);
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
    if (const auto cast = autocast::lower({a_in, b_in})) {
        const autocast::Applied applied;
        return matmul((*cast)[0], (*cast)[1]);
    }
    const autograd::Recording recording({a_in, b_in});
    detail::check_same_device({a_in, b_in}, "matmul");
    if (a_in.dim() == 0 || b_in.dim() == 0) {
        throw ValueError("matmul: both operands need at least one dimension, got shapes " +
                         to_string(a_in.shape()) + " and " + to_string(b_in.shape()));
    }
    const DType dtype = promote(a_in.dtype(), b_in.dtype());
    if (dtype == DType::Bool) {
        throw TypeError("matmul: not supported for bool tensors");
    }
    const bool a_vector = a_in.dim() == 1;
    const bool b_vector = b_in.dim() == 1;
    const Tensor a = (a_vector ? a_in.unsqueeze(0) : a_in).to(dtype);
    const Tensor b = (b_vector ? b_in.unsqueeze(1) : b_in).to(dtype);
    if (a.size(-1) != b.size(-2)) {
        throw ValueError("matmul: shapes " + to_string(a_in.shape()) + " and " +
                         to_string(b_in.shape()) + " cannot be multiplied (" +
                         std::to_string(a.size(-1)) + " != " + std::to_string(b.size(-2)) + ")");
    }
    const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
    const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
    const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
    std::int64_t batches = 1;
    for (const std::int64_t size : batch) {
        batches *= size;
    }
    const MatrixOperand left = prepare(a, batch);
    const MatrixOperand right = prepare(b, batch);
    Shape out_shape = batch;
    out_shape.push_back(a.size(-2));
    out_shape.push_back(b.size(-1));
    Tensor out = empty(out_shape, dtype, a.device());
    kael_matmul_sizes sizes{};
    sizes.struct_size = sizeof(sizes);
    sizes.batches = batches;
    sizes.rows = a.size(-2);
    sizes.inner = a.size(-1);
    sizes.columns = b.size(-1);
    sizes.a_batch_stride = left.batch_stride;
    sizes.b_batch_stride = right.batch_stride;
    sizes.a_transposed = left.transposed ? 1 : 0;
    sizes.b_transposed = right.transposed ? 1 : 0;
    if (batches > 1 && right.batch_stride == 0 && !left.transposed &&
        left.batch_stride == sizes.rows * sizes.inner) {
        // Contiguous batches of a times one b are a single taller product: one GEMM.
        sizes.rows *= batches;
        sizes.batches = 1;
        sizes.a_batch_stride = 0;
    }
    detail::matmul(out, left.tensor, right.tensor, sizes);
    if (a_vector) {
        out = out.squeeze(-2);
    }
    if (b_vector) {
        out = out.squeeze(-1);
    }
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "MatmulBackward", autograd::matmul_backward(a_in, b_in));
}

}  // namespace kael
