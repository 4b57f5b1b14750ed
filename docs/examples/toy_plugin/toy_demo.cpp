// Computes on toy:0 from C++ and shows which calls the toy plugin ran and which fell back.
#include <kael/ops.h>
#include <kael/registry.h>

#include <iostream>

int main() {
    const kael::Device toy("toy:0");  // a ValueError listing the registered types without it
    kael::reset_fallback_counts();
    const kael::Tensor a = kael::arange(0, 6).reshape({2, 3}).to(toy);
    const kael::Tensor b = kael::full({2, 3}, 0.5, kael::DType::F32, toy);
    const kael::Tensor sum = kael::relu(a * b - 1.0);  // on the plugin
    const kael::Tensor total = kael::sum(sum);         // no reduce slot: the cpu plugin
    std::cout << "on " << sum.device().str() << ": " << sum.cpu() << "\n";
    std::cout << "sum " << total.item_double() << "\n";
    for (const auto& [slot, count] : kael::fallback_counts()) {
        std::cout << "fell back: " << slot << " x" << count << "\n";
    }
    const bool right = total.item_double() == 3.0;
    std::cout << (right ? "toy demo ok" : "toy demo WRONG") << "\n";
    return right ? 0 : 1;
}
