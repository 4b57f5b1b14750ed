#pragma once
// How the emulated plugin runs device tasks: every work item on the calling thread, backwards,
// so a task that relies on item i - 1 having run before item i fails here as it may on a GPU,
// and fails the same way on every run.
#include <cstdint>

#include "kael/kernels/element_functions.h"

namespace kael::emulated {

template <typename Task>
void for_each(std::int64_t count, const Task& task) {
    for (std::int64_t item = count; item-- > 0;) {
        task(item);
    }
}

// One thread needs no atomics; Plus wraps int64 the way an atomic add on the bits does.
template <typename T>
void atomic_add(T* target, T value) {
    *target = kernels::Plus<T>{}(*target, value);
}

}  // namespace kael::emulated
