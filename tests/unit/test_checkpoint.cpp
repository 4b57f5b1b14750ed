// Module::save and Module::load: atomic writes, checked errors, checksums, non-regular files.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "kael/error.h"
#include "kael/nn.h"
#include "nn_test_support.h"

using kael::Tensor;
namespace nn = kael::nn;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the temporary one, removed with everything in it when the test ends.
struct TempDir {
    fs::path path;
    TempDir()
        : path(fs::temp_directory_path() /
               ("kael_checkpoint_" + std::to_string(std::random_device{}()))) {
        fs::create_directory(path);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] std::size_t entries() const {
        return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {}));
    }
};

std::vector<char> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::vector<double>> snapshot(const nn::Module& module) {
    std::vector<std::vector<double>> values;
    for (const Tensor& parameter : module.parameters()) values.push_back(v(parameter));
    return values;
}

template <typename Error> auto message_has(const std::string& text) {
    return [text](const Error& error) {
        const bool found = std::string(error.what()).find(text) != std::string::npos;
        if (!found) BOOST_TEST_MESSAGE("message: " << error.what());
        return found;
    };
}

auto os_error(int code) {
    return [code](const kael::OSError& error) {
        BOOST_TEST_MESSAGE("OSError " << error.code() << ": " << error.what());
        return error.code() == code && !error.path().empty();
    };
}

// Lowers the file size limit (ulimit -f) with SIGXFSZ ignored, as `trap '' XFSZ` does, so a
// write past it fails with EFBIG instead of killing the process; restores both at the end.
struct FileSizeLimit {
    rlimit saved{};
    void (*saved_handler)(int);
    explicit FileSizeLimit(rlim_t bytes) : saved_handler(std::signal(SIGXFSZ, SIG_IGN)) {
        getrlimit(RLIMIT_FSIZE, &saved);
        rlimit lowered = saved;
        lowered.rlim_cur = bytes;
        BOOST_REQUIRE_EQUAL(setrlimit(RLIMIT_FSIZE, &lowered), 0);
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, saved_handler);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint)

BOOST_AUTO_TEST_CASE(failed_save_past_the_file_size_limit_keeps_the_old_file) {
    kael::manual_seed(40);
    const TempDir folder;
    const fs::path path = folder.path / "model.kael";
    nn::Linear small(4, 4);
    small.save(path.string());
    const std::vector<char> old_bytes = read_bytes(path);
    nn::Linear large(200, 200);  // 160 kB of weights, past a 100 kB limit
    {
        const FileSizeLimit limit(100 * 1024);
        BOOST_CHECK_EXCEPTION(large.save(path.string()), kael::OSError, os_error(EFBIG));
    }
    BOOST_TEST((read_bytes(path) == old_bytes));
    BOOST_TEST(folder.entries() == 1U);  // no temporary file left behind
    nn::Linear reloaded(4, 4);
    reloaded.load(path.string());
    BOOST_TEST((snapshot(reloaded) == snapshot(small)));
}

BOOST_AUTO_TEST_CASE(save_refuses_devices_folders_and_nul_bytes) {
    kael::manual_seed(41);
    nn::Linear layer(3, 2);
    // /dev/full would swallow the file (every write fails); it is refused before writing.
    BOOST_CHECK_EXCEPTION(layer.save("/dev/full"), kael::ValueError,
                          message_has<kael::ValueError>("character device"));
    struct stat info {};
    BOOST_REQUIRE_EQUAL(::stat("/dev/full", &info), 0);
    BOOST_TEST(S_ISCHR(info.st_mode));
    const TempDir folder;
    BOOST_CHECK_EXCEPTION(layer.save(folder.path.string()), kael::OSError, os_error(EISDIR));
    BOOST_CHECK_EXCEPTION(layer.save((folder.path / "absent" / "m.kael").string()),
                          kael::OSError, os_error(ENOENT));
    const std::string with_nul = (folder.path / "a").string() + std::string(1, '\0') + "b";
    BOOST_CHECK_EXCEPTION(layer.save(with_nul), kael::ValueError,
                          message_has<kael::ValueError>("NUL"));
    BOOST_TEST(folder.entries() == 0U);  // neither "a" nor a temporary file
}

BOOST_AUTO_TEST_CASE(save_replaces_the_target_of_a_symlink) {
    kael::manual_seed(42);
    const TempDir folder;
    nn::Linear layer(3, 2);
    layer.save((folder.path / "real.kael").string());
    fs::create_symlink(folder.path / "real.kael", folder.path / "link.kael");
    nn::Linear other(3, 2);
    other.save((folder.path / "link.kael").string());
    BOOST_TEST(fs::is_symlink(folder.path / "link.kael"));
    layer.load((folder.path / "real.kael").string());
    BOOST_TEST((snapshot(layer) == snapshot(other)));
}

BOOST_AUTO_TEST_CASE(load_refuses_fifos_and_folders_without_blocking) {
    kael::manual_seed(43);
    const TempDir folder;
    const fs::path fifo = folder.path / "pipe.kael";
    BOOST_REQUIRE_EQUAL(::mkfifo(fifo.c_str(), 0600), 0);
    nn::Linear layer(3, 2);
    BOOST_CHECK_EXCEPTION(layer.load(fifo.string()), kael::ValueError,
                          message_has<kael::ValueError>("FIFO"));
    BOOST_CHECK_EXCEPTION(layer.save(fifo.string()), kael::ValueError,
                          message_has<kael::ValueError>("FIFO"));
    BOOST_CHECK_EXCEPTION(layer.load(folder.path.string()), kael::OSError, os_error(EISDIR));
    BOOST_CHECK_EXCEPTION(layer.load((folder.path / "absent").string()), kael::OSError,
                          os_error(ENOENT));
    BOOST_CHECK_EXCEPTION(layer.load(std::string("a\0b", 3)), kael::ValueError,
                          message_has<kael::ValueError>("NUL"));
}

BOOST_AUTO_TEST_CASE(load_detects_flipped_and_trailing_bytes) {
    kael::manual_seed(44);
    const TempDir folder;
    const fs::path path = folder.path / "m.kael";
    nn::Linear layer(6, 5);
    layer.save(path.string());
    const std::vector<char> bytes = read_bytes(path);
    const auto before = snapshot(layer);
    for (const std::size_t at : {bytes.size() / 2, bytes.size() - 10, bytes.size() - 1}) {
        BOOST_TEST_CONTEXT("byte " << at << " flipped") {
            std::vector<char> flipped = bytes;
            flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
            write_bytes(path, flipped);
            BOOST_CHECK_EXCEPTION(layer.load(path.string()), kael::ValueError,
                                  message_has<kael::ValueError>("checksum"));
            BOOST_TEST((snapshot(layer) == before));
        }
    }
    std::vector<char> longer = bytes;
    longer.push_back('x');
    write_bytes(path, longer);
    BOOST_CHECK_EXCEPTION(layer.load(path.string()), kael::ValueError,
                          message_has<kael::ValueError>("1 bytes after the last parameter"));
    BOOST_TEST((snapshot(layer) == before));
}

// Version 1 files (no checksum) still load; a corrupt name in one gives a readable message.
BOOST_AUTO_TEST_CASE(version_1_files_load_and_corrupt_names_are_escaped) {
    kael::manual_seed(45);
    const TempDir folder;
    const fs::path path = folder.path / "m.kael";
    nn::Linear layer(3, 2);
    layer.save(path.string());
    std::vector<char> bytes = read_bytes(path);
    BOOST_REQUIRE(bytes.size() > 32);
    bytes[7] = '1';
    // No CRC-32; erase rather than resize, which GCC's sanitizer build misreads as a huge memset.
    bytes.erase(bytes.end() - 4, bytes.end());
    write_bytes(path, bytes);
    nn::Linear other(3, 2);
    other.load(path.string());
    BOOST_TEST((snapshot(other) == snapshot(layer)));
    // The first name ("weight") starts after the magic, the count and its length.
    bytes[8 + 8 + 8] = static_cast<char>(0xff);
    write_bytes(path, bytes);
    BOOST_CHECK_EXCEPTION(other.load(path.string()), kael::ValueError,
                          message_has<kael::ValueError>("'\\xffeight'"));
}

BOOST_AUTO_TEST_CASE(load_rejects_sizes_larger_than_the_file) {
    kael::manual_seed(46);
    const TempDir folder;
    const fs::path path = folder.path / "m.kael";
    nn::Linear layer(3, 2, false);
    layer.save(path.string());
    std::vector<char> bytes = read_bytes(path);
    // magic, count, name length, "weight", dtype, rank: then the first size.
    const std::size_t first_size = 8 + 8 + 8 + 6 + 4 + 8;
    const std::int64_t huge = std::int64_t{1} << 40;
    std::memcpy(bytes.data() + first_size, &huge, sizeof(huge));
    write_bytes(path, bytes);
    BOOST_CHECK_EXCEPTION(layer.load(path.string()), kael::ValueError,
                          message_has<kael::ValueError>("cannot hold"));
}

BOOST_AUTO_TEST_CASE(round_trip_on_every_device) {
    for (const kael::Device& device : test_devices()) {
        BOOST_TEST_CONTEXT(device.str()) {
            kael::manual_seed(47);
            const TempDir folder;
            nn::Linear layer(3, 2, true, device);
            layer.save((folder.path / "m.kael").string());
            nn::Linear other(3, 2, true, device);
            other.load((folder.path / "m.kael").string());
            BOOST_TEST((snapshot(other) == snapshot(layer)));
            BOOST_TEST((other.weight.device() == device));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
