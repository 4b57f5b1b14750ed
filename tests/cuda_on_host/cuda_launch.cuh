#pragma once
// Stands in for plugins/cuda/cuda_launch.cuh when run.py builds the elementwise kernels for the
// host: one std::thread per CUDA thread of a block, a std::barrier for __syncthreads, blocks one
// after another (every block of the grid runs), __shared__ as a static shared by the threads.
#include <barrier>
#include <cstdint>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>
#define __device__
#define __global__
#define __host__
#define __launch_bounds__(...)
#define __shared__ static
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<>* g_barrier = nullptr;
inline void __syncthreads() {
    g_barrier->arrive_and_wait();
}
inline unsigned __umulhi(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
inline long g_launches = 0;
inline std::vector<std::string> g_kernels;
template <typename Body>
void emulate(dim3 grid, dim3 block, const Body& body, const char* name) {
    ++g_launches;
    g_kernels.push_back(name);
    gridDim = grid;
    blockDim = block;
    const unsigned n = block.x * block.y * block.z;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                std::barrier<> barrier(n);
                g_barrier = &barrier;
                std::vector<std::thread> threads;
                for (unsigned t = 0; t < n; ++t)
                    threads.emplace_back([&, t] {
                        threadIdx =
                            dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
                        blockIdx = dim3(bx, by, bz);
                        body();
                    });
                for (auto& th : threads) th.join();
            }
}
namespace kael::cuda {
inline constexpr int kThreadsPerBlock = 256;
inline std::int64_t blocks_for(std::int64_t items, int per_block = kThreadsPerBlock) {
    return (items + per_block - 1) / per_block;
}
inline void check_launch(const std::type_info&, const char*, int) {}
inline void begin_small_grid() {}  // no early launches on the host
}  // namespace kael::cuda
