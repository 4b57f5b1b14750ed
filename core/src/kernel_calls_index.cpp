// The index and sequence families' kernel calls (kernel_calls.h): gather, scatter_add,
// check_indices, sort, topk, cumsum and the scan slot.
#include <algorithm>
#include <span>

#include "backend.h"
#include "dims.h"
#include "kael/autograd.h"
#include "kernel_calls.h"
#include "kernel_run.h"

namespace kael::detail {

void gather(const Tensor& out, const Tensor& data, const Tensor& index,
            const kael_index_layout& layout) {
    if (out.numel() == 0) {
        return;
    }
    run("gather", {out}, {data, index}, KAEL_SLOT_CHECK(gather),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->gather(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              ins[0].device_data(),
                              static_cast<const std::int64_t*>(ins[1].device_data()), &layout),
                          "gather");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX});
}

void scatter_add(const Tensor& data, const Tensor& index, const Tensor& source,
                 const kael_index_layout& layout) {
    if (index.numel() == 0) {
        return;
    }
    run("scatter_add", {data}, {index, source}, KAEL_SLOT_CHECK(scatter_add),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->scatter_add(
                              device, abi(outs[0].dtype()), outs[0].device_data(),
                              static_cast<const std::int64_t*>(ins[0].device_data()),
                              ins[1].device_data(), &layout),
                          "scatter_add");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::Widen, KAEL_DTYPE_FLAG_LOW_PRECISION_INDEX});
}

void check_indices(const Tensor& index, std::int64_t low, std::int64_t high, std::int64_t axis,
                   const char* op, const char* what) {
    if (index.numel() == 0) {
        return;
    }
    const NoGradGuard no_grad;
    const Tensor contiguous = index.contiguous();
    const auto call = [&](const Backend& backend, int device, const Tensor& indices) {
        backend.check(backend.table()->check_indices(
                          device, static_cast<const std::int64_t*>(indices.device_data()),
                          indices.numel(), low, high, axis, op, what),
                      "check_indices");
    };
    const Backend& backend = backend_for(contiguous.device());
    if (KAEL_HAS_SLOT(backend.table(), check_indices)) {
        try {
            call(backend, contiguous.device().index, contiguous);
            return;
        } catch (const UnsupportedByPlugin&) {
            if (&backend == &cpu_backend()) {
                throw;
            }
        }
    }
    const Backend& host = cpu_backend();
    if (!KAEL_HAS_SLOT(host.table(), check_indices)) {
        throw_missing_on_cpu(host, "check_indices");
    }
    count_fallback(backend, "check_indices");
    call(host, 0, contiguous.to(kCPU));
}

void sort(const Tensor& values, const Tensor& indices, const Tensor& input,
          std::int64_t chunk_size, std::int64_t rows, bool descending) {
    if (chunk_size == 0 || rows == 0) {
        return;
    }
    run("sort", {values, indices}, {input}, KAEL_SLOT_CHECK(sort),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->sort(
                              device, abi(ins[0].dtype()), outs[0].device_data(),
                              static_cast<std::int64_t*>(outs[1].device_data()),
                              ins[0].device_data(), chunk_size, rows, descending ? 1 : 0),
                          "sort");
        });
}

void topk(const Tensor& values, const Tensor& indices, const Tensor& input,
          std::int64_t chunk_size, std::int64_t rows, std::int64_t k, bool largest) {
    if (k == 0 || rows == 0) {
        return;
    }
    run("topk", {values, indices}, {input}, KAEL_SLOT_CHECK(topk),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->topk(
                              device, abi(ins[0].dtype()), outs[0].device_data(),
                              static_cast<std::int64_t*>(outs[1].device_data()),
                              ins[0].device_data(), chunk_size, rows, k, largest ? 1 : 0),
                          "topk");
        });
}

void cumsum(const Tensor& out, const Tensor& input, std::int64_t chunk_size, std::int64_t rows) {
    if (chunk_size == 0 || rows == 0) {
        return;
    }
    run("cumsum", {out}, {input}, KAEL_SLOT_CHECK(cumsum),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->cumsum(device, abi(outs[0].dtype()),
                                                  abi(ins[0].dtype()), outs[0].device_data(),
                                                  ins[0].device_data(), chunk_size, rows),
                          "cumsum");
        });
}

bool has_scan(const Tensor& t) {
    const kael_plugin* table = t.impl().storage->backend().table();
    return KAEL_HAS_SLOT(table, scan);
}

void scan(kael_reduce_op op, const Tensor& out, const Tensor& contiguous_in, std::int64_t outer,
          std::int64_t size, std::int64_t inner) {
    if (outer == 0 || size == 0 || inner == 0) {
        return;
    }
    run(
        "scan", {out}, {contiguous_in}, KAEL_SLOT_CHECK(scan),
        [&](const Backend& backend, int device, const auto& outs, const auto& ins) {
            backend.check(backend.table()->scan(device, op, abi(outs[0].dtype()),
                                                abi(ins[0].dtype()), outs[0].device_data(),
                                                ins[0].device_data(), outer, size, inner),
                          op == KAEL_REDUCE_PROD ? "cumprod" : "cumsum");
        },
        Aliasing::None,
        LowPrecisionUse{LowPrecision::WidenWriteOnly, KAEL_DTYPE_FLAG_LOW_PRECISION_SCAN});
}

Tensor scanned(kael_reduce_op op, const Tensor& a, std::int64_t d) {
    const Tensor input = a.contiguous();
    Tensor out = empty(a.shape(), is_floating(a.dtype()) ? a.dtype() : DType::I64, a.device());
    const LineSizes line = line_sizes(input.shape(), d);
    scan(op, out, input, line.outer, line.size, line.inner);
    return out;
}

}  // namespace kael::detail
