#include "fashion_mnist.h"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "kael/autograd.h"

namespace kael::examples {

namespace {

std::vector<std::uint8_t> read_gzip(const std::string& path) {
    const std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
    if (!file) {
        throw ValueError("cannot open " + path +
                         " (install the Debian package dataset-fashion-mnist)");
    }
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint8_t> chunk(1 << 20);
    int read = 0;
    while ((read = gzread(file.get(), chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) {
        bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + read);
    }
    if (read < 0) {
        throw ValueError("cannot decompress " + path);
    }
    return bytes;
}

std::uint32_t big_endian(const std::vector<std::uint8_t>& bytes, std::size_t at) {
    return (std::uint32_t{bytes[at]} << 24) | (std::uint32_t{bytes[at + 1]} << 16) |
           (std::uint32_t{bytes[at + 2]} << 8) | std::uint32_t{bytes[at + 3]};
}

}  // namespace

Dataset load_fashion_mnist(const std::string& folder, const std::string& split) {
    const std::string image_path = folder + "/" + split + "-images-idx3-ubyte.gz";
    const std::string label_path = folder + "/" + split + "-labels-idx1-ubyte.gz";
    const std::vector<std::uint8_t> images = read_gzip(image_path);
    const std::vector<std::uint8_t> labels = read_gzip(label_path);
    if (images.size() < 16 || big_endian(images, 0) != 0x803) {
        throw ValueError(image_path + " is not an IDX image file");
    }
    if (labels.size() < 8 || big_endian(labels, 0) != 0x801) {
        throw ValueError(label_path + " is not an IDX label file");
    }
    const std::size_t count = big_endian(images, 4);
    const std::size_t pixels = std::size_t{big_endian(images, 8)} * big_endian(images, 12);
    if (big_endian(labels, 4) != count || images.size() != 16 + count * pixels ||
        labels.size() != 8 + count) {
        throw ValueError(image_path + " and " + label_path + " disagree in size");
    }
    std::vector<float> image_values(count * pixels);
    for (std::size_t i = 0; i < image_values.size(); ++i) {
        image_values[i] = static_cast<float>(images[16 + i]) / 255.0f;
    }
    std::vector<std::int64_t> label_values(labels.begin() + 8, labels.end());
    const auto n = static_cast<std::int64_t>(count);
    return {tensor(image_values, {n, static_cast<std::int64_t>(pixels)}),
            tensor(label_values, {n})};
}

double test_accuracy(nn::Module& model, const Dataset& data, const Device& device,
                     const Shape& image_shape) {
    const NoGradGuard guard;
    model.eval();
    const std::int64_t count = data.images.size(0);
    std::int64_t correct = 0;
    for (std::int64_t start = 0; start < count; start += 1000) {
        const std::int64_t stop = std::min(count, start + 1000);
        const Tensor images = data.images.slice(0, start, stop).reshape(image_shape);
        const Tensor hits =
            eq(argmax(model(images.to(device)), 1), data.labels.slice(0, start, stop).to(device));
        correct += sum(hits).item<std::int64_t>();
    }
    model.train();
    return static_cast<double>(correct) / static_cast<double>(count);
}

}  // namespace kael::examples
