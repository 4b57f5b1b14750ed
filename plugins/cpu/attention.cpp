// Attention through the shared reference bodies (kael/kernels/tasks/attention.h), items split
// over the worker threads: each item is a whole row of scores, so even small calls are worth it.
#include <cstdint>

#include "cpu_kernels.h"
#include "kael/kernels/plugin_support.h"
#include "kael/kernels/tasks/attention.h"

namespace kael::cpu {
namespace {

struct Launcher {
    template <typename Task>
    static void for_each(std::int64_t count, const Task& task) {
        parallel_ranges(count, 2, [&task](int64_t begin, int64_t end) {
            for (int64_t item = begin; item < end; ++item) {
                task(item);
            }
        });
    }
    static void* allocate(std::int64_t bytes) { return ::operator new(static_cast<size_t>(bytes)); }
    static void release(void* block) { ::operator delete(block); }
};

}  // namespace

kael_status attention(int32_t device, kael_dtype dtype, void* out, void* lse, const void* q,
                      const void* k, const void* v, const kael_attention_layout* layout) {
    return plugin::guarded("cpu.attention", [&] {
        check_device(device);
        kernels::tasks::launch_attention<Launcher>(dtype, out, lse, q, k, v, layout);
    });
}

kael_status attention_backward(int32_t device, kael_dtype dtype, void* grad_q, void* grad_k,
                               void* grad_v, const void* grad_out, const void* q, const void* k,
                               const void* v, const void* out, const void* lse,
                               const kael_attention_layout* layout) {
    return plugin::guarded("cpu.attention_backward", [&] {
        check_device(device);
        kernels::tasks::launch_attention_backward<Launcher>(dtype, grad_q, grad_k, grad_v,
                                                            grad_out, q, k, v, out, lse, layout);
    });
}

}  // namespace kael::cpu
