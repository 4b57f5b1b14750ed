// The cuda plugin's elementwise runner on host threads (see run.py) against the shared Element
// task run in order: each case names the kernel it must take and must match byte for byte.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "elementwise.cu"

using namespace kael;

namespace {

struct InOrder {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        for (std::int64_t item = 0; item < count; ++item) {
            task(item);
        }
    }
};

int failures = 0;

// Bytes of seeded noise (a quarter of them 0x3f, so floats are often ordinary numbers).
struct Buffer {
    std::vector<unsigned char> bytes;
    explicit Buffer(std::size_t count) : bytes(count + 64) {
        std::mt19937 random(static_cast<unsigned>(count));
        for (auto& byte : bytes) {
            byte = random() % 2 != 0 ? 0x3f : static_cast<unsigned char>(random() & 0xff);
        }
    }
};

// An operand: its buffer, the byte offset of its first element and its byte strides.
struct Op {
    Buffer* buf;
    std::int64_t offset;
    std::vector<std::int64_t> strides;
};

// With KAEL_CUDA_INDEX32_LIMIT=0 only flat_elements keeps its place; the rest are strided rows.
std::string expected_kernel(const char* kernel) {
    const char* limit = std::getenv("KAEL_CUDA_INDEX32_LIMIT");
    const bool wide = limit != nullptr && std::string(limit) == "0";
    return wide && std::string(kernel) != "flat_elements" ? "strided_rows" : kernel;
}

void check(const char* name, const char* kernel, kael_element_op op, kael_dtype out_dt,
           kael_dtype in_dt, std::vector<std::int64_t> shape, std::vector<Op> ops,
           double param = 0) {
    kael_element_layout l{};
    l.struct_size = sizeof(l);
    l.dims = shape.size();
    l.operands = ops.size();
    l.count = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        l.shape[d] = shape[d];
        l.count *= shape[d];
    }
    for (size_t o = 0; o < ops.size(); ++o) {
        for (size_t d = 0; d < shape.size(); ++d) l.strides[o][d] = ops[o].strides[d];
    }
    auto params = kael_element_params{sizeof(kael_element_params), {param, 1.0}, {1, 2}};
    std::vector<unsigned char> saved = ops[0].buf->bytes;
    for (size_t o = 0; o < ops.size(); ++o) l.base[o] = ops[o].buf->bytes.data() + ops[o].offset;
    g_kernels.clear();
    cuda::CudaElementRunner runner{l};
    if (op < 0)
        kernels::dispatch_convert<true>(out_dt, in_dt, l.operands, runner);
    else
        kernels::dispatch_elementwise<true>(op, out_dt, in_dt, l.operands, &params, runner);
    std::vector<unsigned char> got = ops[0].buf->bytes;
    ops[0].buf->bytes = saved;
    for (size_t o = 0; o < ops.size(); ++o) l.base[o] = ops[o].buf->bytes.data() + ops[o].offset;
    kernels::tasks::ElementRunner<InOrder> reference{l};
    if (op < 0)
        kernels::dispatch_convert<true>(out_dt, in_dt, l.operands, reference);
    else
        kernels::dispatch_elementwise<true>(op, out_dt, in_dt, l.operands, &params, reference);
    const std::string took = g_kernels.empty() ? "no kernel" : g_kernels[0];
    const bool same = got == ops[0].buf->bytes;
    const bool right_kernel = took == expected_kernel(kernel);
    failures += !same || !right_kernel;
    std::printf("%-30s %-16s %s\n", name, took.c_str(),
                !same          ? "MISMATCH"
                : right_kernel ? "ok"
                               : "ok, but the wrong kernel");
}

}  // namespace

int main() {
    const std::int64_t F = 4;
    {  // {R, C}: a contiguous, t stored {C, R} and read transposed; partial tiles both ways
        const std::int64_t R = 45, C = 70;
        Buffer a(R * C * 4), o(R * C * 4), t(R * C * 4);
        check("a + b.T (tiled)", "tiled_elements", KAEL_OP_PLUS, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {R, C}, {{&o, 0, {C * F, F}}, {&a, 0, {C * F, F}}, {&t, 0, {F, R * F}}});
        check("copy transposed (tiled)", "tiled_elements", KAEL_OP_IDENTITY, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {R, C}, {{&o, 0, {C * F, F}}, {&t, 0, {F, R * F}}});
        check("copy into transposed out", "tiled_elements", KAEL_OP_IDENTITY, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {R, C}, {{&o, 0, {F, R * F}}, {&a, 0, {C * F, F}}});
        check("sub out.T = a + b.T", "tiled_elements", KAEL_OP_MINUS, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {R, C},
              {{&o, 0, {F, R * F}}, {&a, 0, {C * F, F}}, {&t, 0, {F, R * F}}});
        check("gelu of transpose (rows)", "strided_rows", KAEL_OP_GELU_EXACT, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {R, C}, {{&o, 0, {C * F, F}}, {&t, 0, {F, R * F}}});
    }
    {
        const std::int64_t R = 33, C = 41;
        Buffer d(R * C * 8), o(R * C * 8);
        check("convert f64->f32 transposed", "tiled_elements", (kael_element_op)-1, KAEL_DTYPE_F32,
              KAEL_DTYPE_F64, {R, C}, {{&o, 0, {C * 4, 4}}, {&d, 0, {8, R * 8}}});
        check("convert f32->i64 transposed", "tiled_elements", (kael_element_op)-1, KAEL_DTYPE_I64,
              KAEL_DTYPE_F32, {R, C}, {{&o, 0, {C * 8, 8}}, {&d, 0, {4, R * 4}}});
        // bfloat16 and float16 (two bytes) both ways, read and written transposed.
        check("convert f32->bf16 transposed", "tiled_elements", (kael_element_op)-1,
              KAEL_DTYPE_BF16, KAEL_DTYPE_F32, {R, C}, {{&o, 0, {C * 2, 2}}, {&d, 0, {4, R * 4}}});
        check("convert f16->f32 transposed", "tiled_elements", (kael_element_op)-1, KAEL_DTYPE_F32,
              KAEL_DTYPE_F16, {R, C}, {{&o, 0, {C * 4, 4}}, {&d, 0, {2, R * 2}}});
        check("convert bf16->f16 rows", "strided_rows", (kael_element_op)-1, KAEL_DTYPE_F16,
              KAEL_DTYPE_BF16, {R, C}, {{&o, 0, {C * 2, 2}}, {&d, 0, {C * 2, 2}}});
        // Low-precision elementwise ops (f32 arithmetic, one rounding) on every path.
        check("bf16 a + b.T (rows: only f32 and copies tile)", "strided_rows", KAEL_OP_PLUS,
              KAEL_DTYPE_BF16, KAEL_DTYPE_BF16, {R, C}, {{&o, 0, {C * 2, 2}}, {&d, 0, {C * 2, 2}}, {&d, 2, {2, R * 2}}});
        check("f16 silu of transpose (rows)", "strided_rows", KAEL_OP_SILU, KAEL_DTYPE_F16,
              KAEL_DTYPE_F16, {R, C}, {{&o, 0, {C * 2, 2}}, {&d, 0, {2, R * 2}}});
        check("bf16 gelu_tanh flat (16-byte packs)", "flat_elements", KAEL_OP_GELU_TANH,
              KAEL_DTYPE_BF16, KAEL_DTYPE_BF16, {R * C}, {{&o, 0, {2}}, {&d, 0, {2}}});
        check("copy bool transposed", "tiled_elements", KAEL_OP_IDENTITY, KAEL_DTYPE_BOOL,
              KAEL_DTYPE_BOOL, {R, C}, {{&o, 0, {C, 1}}, {&d, 0, {1, R}}});
        check("i64 plus transposed (rows)", "strided_rows", KAEL_OP_PLUS, KAEL_DTYPE_I64,
              KAEL_DTYPE_I64, {R, C},
              {{&o, 0, {C * 8, 8}}, {&d, 0, {8, R * 8}}, {&d, 8, {C * 8, 8}}});
    }
    {  // batched transposed {B, K, I}: input unit along K
        const std::int64_t B = 3, K = 36, I = 40;
        Buffer a(B * K * I * 4), o(B * K * I * 4);
        check("batched transposed copy", "tiled_elements", KAEL_OP_IDENTITY, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {B, K, I},
              {{&o, 0, {K * I * F, I * F, F}}, {&a, 0, {K * I * F, F, K * F}}});
        check("batched a + a.T", "tiled_elements", KAEL_OP_MULTIPLY, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {B, K, I},
              {{&o, 0, {K * I * F, I * F, F}},
               {&a, 0, {K * I * F, F, K * F}},
               {&a, 4, {K * I * F, I * F, F}}});
        check("batch stride 0 + transposed", "tiled_elements", KAEL_OP_PLUS, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {B, K, I},
              {{&o, 0, {K * I * F, I * F, F}}, {&a, 0, {0, F, K * F}}, {&a, 0, {0, I * F, F}}});
    }
    {
        Buffer a(9 * 16 * 4), r(16 * 4), o(9 * 16 * 4), m(9 * 16);
        check("a + row (vector rows)", "vector_rows", KAEL_OP_PLUS, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {9, 12}, {{&o, 0, {48, 4}}, {&a, 0, {48, 4}}, {&r, 0, {0, 4}}});
        check("a + row odd (rows)", "strided_rows", KAEL_OP_PLUS, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {9, 13}, {{&o, 0, {52, 4}}, {&a, 0, {52, 4}}, {&r, 0, {0, 4}}});
        check("a + col (tiled splat col)", "tiled_elements", KAEL_OP_PLUS, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {9, 12}, {{&o, 0, {48, 4}}, {&a, 0, {48, 4}}, {&r, 0, {4, 0}}});
        check("row slices (vector rows)", "vector_rows", KAEL_OP_DIVIDE, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {6, 12}, {{&o, 0, {48, 4}}, {&a, 16, {64, 4}}, {&a, 32, {64, 4}}});
        check("misaligned rows", "strided_rows", KAEL_OP_DIVIDE, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {6, 12}, {{&o, 0, {48, 4}}, {&a, 4, {68, 4}}, {&a, 8, {68, 4}}});
        check("where mask rows, scalar", "vector_rows", KAEL_OP_WHERE, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {4, 32},
              {{&o, 0, {128, 4}}, {&m, 0, {0, 1}}, {&r, 4, {0, 0}}, {&a, 0, {128, 4}}});
        check("masked_fill mask rows", "vector_rows", KAEL_OP_MASKED_FILL, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {4, 32}, {{&o, 0, {128, 4}}, {&a, 0, {128, 4}}, {&m, 0, {0, 1}}},
              -1.5);
        check("equal rows (bool out)", "strided_rows", KAEL_OP_LESS, KAEL_DTYPE_BOOL,
              KAEL_DTYPE_F32, {9, 12}, {{&m, 0, {12, 1}}, {&a, 0, {48, 4}}, {&r, 0, {0, 4}}});
    }
    {
        Buffer a(1003 * 8), o(1003 * 8);
        check("flat gelu 1003", "flat_elements", KAEL_OP_GELU_EXACT, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {1003}, {{&o, 0, {4}}, {&a, 0, {4}}});
        check("flat f64 add + scalar", "flat_elements", KAEL_OP_PLUS, KAEL_DTYPE_F64,
              KAEL_DTYPE_F64, {1003}, {{&o, 0, {8}}, {&a, 0, {8}}, {&a, 8, {0}}});
        check("flat misaligned (rows)", "strided_rows", KAEL_OP_SQUARE, KAEL_DTYPE_F32,
              KAEL_DTYPE_F32, {1003}, {{&o, 4, {4}}, {&a, 4, {4}}});
        check("flat bool not", "flat_elements", KAEL_OP_LOGICAL_NOT, KAEL_DTYPE_BOOL,
              KAEL_DTYPE_BOOL, {1003}, {{&o, 0, {1}}, {&a, 0, {1}}});
        check("0-d", "strided_rows", KAEL_OP_NEGATE, KAEL_DTYPE_F32, KAEL_DTYPE_F32, {},
              {{&o, 0, {}}, {&a, 0, {}}});
        check("strided 3d", "strided_rows", KAEL_OP_MAXIMUM, KAEL_DTYPE_F32, KAEL_DTYPE_F32,
              {3, 5, 7}, {{&o, 0, {140, 28, 4}}, {&a, 0, {8, 24, 120}}, {&a, 0, {4, 12, 60}}});
    }
    std::printf("%d failures\n", failures);
    return failures != 0;
}
