// A convolutional network on Fashion-MNIST from C++: two Conv2d + BatchNorm2d + ReLU +
// MaxPool2d blocks and two Linear layers (kael/nn_conv.h), AdamW, batch 64. Two epochs reach
// above 90% test accuracy, as python/examples/fashion_mnist_cnn.py and the same network in
// PyTorch do.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>

#include "fashion_mnist.h"
#include "kael/autograd.h"
#include "kael/nn.h"
#include "kael/nn_conv.h"
#include "kael/optim.h"
#include "kael/registry.h"
#include "progress.h"

namespace {

using kael::nn::Module;

std::shared_ptr<Module> block(std::int64_t in, std::int64_t out, const kael::Device& device) {
    kael::nn::ConvOptions options;
    options.in_channels = in;
    options.out_channels = out;
    options.kernel_size = {3};
    options.padding = {1};
    kael::nn::functional::PoolOptions pool;
    pool.kernel = {2};
    return std::make_shared<kael::nn::Sequential>(std::vector<std::shared_ptr<Module>>{
        std::make_shared<kael::nn::Conv>(2, options, device),
        std::make_shared<kael::nn::BatchNorm>(2, out, 1e-5, 0.1, true, true, device),
        std::make_shared<kael::nn::ReLU>(), std::make_shared<kael::nn::Pool>(2, true, pool)});
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Trains a CNN on Fashion-MNIST and reports test accuracy per epoch"};
    std::string device_name = "cpu";
    std::string data_folder = kael::examples::kFashionMnistFolder;
    int epochs = 2;
    std::int64_t batch = 64;
    double lr = 2e-3;
    std::int64_t max_steps = -1;
    std::uint64_t seed = 0;
    app.add_option("--device", device_name, "cpu, cuda or cuda:N");
    app.add_option("--data", data_folder, "folder with the *-idx?-ubyte.gz files");
    app.add_option("--epochs", epochs);
    app.add_option("--batch", batch);
    app.add_option("--lr", lr);
    app.add_option("--max-steps", max_steps, "stop each epoch after this many steps (smoke runs)");
    app.add_option("--seed", seed);
    CLI11_PARSE(app, argc, argv);
    try {
        const kael::Device device(device_name);
        kael::require_device(device);
        kael::manual_seed(seed);
        const auto train = kael::examples::load_fashion_mnist(data_folder, "train");
        const auto test = kael::examples::load_fashion_mnist(data_folder, "t10k");
        kael::nn::Sequential model(
            {block(1, 32, device), block(32, 64, device), std::make_shared<kael::nn::Flatten>(),
             std::make_shared<kael::nn::Linear>(64 * 7 * 7, 128, true, device),
             std::make_shared<kael::nn::ReLU>(),
             std::make_shared<kael::nn::Linear>(128, 10, true, device)});
        kael::optim::AdamW optimizer(model.parameters(), lr);
        std::cout << model.repr() << "\n";
        const std::int64_t count = train.images.size(0);
        const std::int64_t steps = count / batch;
        const kael::Tensor images = train.images.reshape({-1, 1, 28, 28}).to(device);
        const kael::Tensor labels = train.labels.to(device);
        std::mt19937_64 shuffler(seed);
        double final_accuracy = 0;
        for (int epoch = 1; epoch <= epochs; ++epoch) {
            std::vector<std::int64_t> order(static_cast<std::size_t>(count));
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), shuffler);
            const kael::Tensor permutation = kael::tensor(order).to(device);
            const std::int64_t epoch_steps = max_steps > 0 ? std::min(steps, max_steps) : steps;
            kael::examples::Progress progress("epoch " + std::to_string(epoch), epoch_steps);
            for (std::int64_t step = 0; step < epoch_steps; ++step) {
                const kael::Tensor rows = permutation.slice(0, step * batch, (step + 1) * batch);
                const kael::Tensor loss =
                    kael::cross_entropy(model(kael::index_select(images, 0, rows)),
                                        kael::index_select(labels, 0, rows));
                optimizer.zero_grad();
                loss.backward();
                optimizer.step();
                if (step % 50 == 0 || step + 1 == epoch_steps) {
                    progress.update(step + 1, "loss " + std::to_string(loss.item<float>()));
                }
            }
            kael::synchronize(device);
            const double seconds = progress.seconds();
            final_accuracy = kael::examples::test_accuracy(model, test, device, {-1, 1, 28, 28});
            std::printf("epoch %d: %.2f s, test accuracy %.2f%%\n", epoch, seconds,
                        100 * final_accuracy);
        }
        std::printf("final test accuracy %.2f%%\n", 100 * final_accuracy);
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "cnn_fashion_mnist: " << error.what() << "\n";
        return 1;
    }
}
