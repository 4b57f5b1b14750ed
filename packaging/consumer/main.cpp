// Computes a small matmul with kael on cpu and prints it with the plugin that served it, then
// runs an nn layer (libkael_nn) over it.
#include <kael/nn.h>
#include <kael/ops.h>
#include <kael/registry.h>

#include <iostream>
#include <vector>

int main() {
    const kael::Tensor a = kael::arange(0, 6).view({2, 3});
    const kael::Tensor b = kael::tensor(std::vector<float>{10, 20, 30});
    const kael::Tensor c = kael::matmul(a + b, a.T());  // [[85, 274], [94, 310]]
    const double total = kael::sum(c).item_double();
    std::cout << c << "\n" << "sum " << total << "\n";
    for (const kael::PluginRecord& plugin : kael::plugins()) {
        if (plugin.name == "cpu") {
            std::cout << "cpu plugin " << plugin.path << "\n";
        }
    }
    if (total != 763.0) {
        std::cerr << "kael_consumer: expected sum 763, got " << total << "\n";
        return 1;
    }
    kael::nn::Linear layer(2, 3);
    const kael::Tensor y = layer.forward(c);
    if (y.shape() != kael::Shape{2, 3}) {
        std::cerr << "kael_consumer: nn::Linear gave shape " << y.shape().size() << "-d\n";
        return 1;
    }
    std::cout << "kael consumer ok\n";
    return 0;
}
