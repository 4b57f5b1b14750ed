// Where GPT-2's vocabulary files are: the folders GPT2Tokenizer::installed() tries, in order.
#include <cstdlib>
#include <filesystem>

#include <boost/dll/runtime_symbol_info.hpp>

#include "kael/error.h"
#include "tokenizer_internal.h"

namespace kael::tokenizer_detail {

namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& path) {
    std::error_code error;
    return fs::is_regular_file(path, error);
}

}  // namespace

std::optional<VocabularyFiles> files_in(const std::string& folder) {
    const fs::path root(folder);
    // Hugging Face's names first: a saved Hugging Face folder may hold both pairs.
    for (const auto& [vocab, merges] : {std::pair{"vocab.json", "merges.txt"},
                                        std::pair{"encoder.json", "vocab.bpe"}}) {
        if (is_file(root / vocab) && is_file(root / merges)) {
            return VocabularyFiles{(root / vocab).string(), (root / merges).string()};
        }
    }
    return std::nullopt;
}

VocabularyFiles installed_files() {
    std::vector<std::string> places;
    if (const char* chosen = std::getenv("KAEL_GPT2_VOCAB_DIR"); chosen != nullptr && *chosen) {
        places.emplace_back(chosen);
    }
    // Found from the core library's own address (dladdr), not the executable: under Python the
    // executable is python. The build tree mirrors the install tree, so this serves both.
    std::error_code error;
    const fs::path library = boost::dll::this_line_location(error);
    if (!error) {
        places.push_back((library.parent_path() / KAEL_GPT2_FROM_LIBDIR).lexically_normal().string());
    }
    places.emplace_back(KAEL_GPT2_BUILD_DIR);
    places.emplace_back(KAEL_GPT2_INSTALL_DIR);
    for (const std::string& place : places) {
        if (std::optional<VocabularyFiles> files = files_in(place)) return *files;
    }
    std::string looked;
    for (const std::string& place : places) looked += "\n  " + place;
    throw ValueError(
        "GPT2Tokenizer: GPT-2's vocabulary (encoder.json + vocab.bpe, or vocab.json + merges.txt) "
        "is in none of these folders:" + looked +
        "\nscripts/install_deps.sh fetches it (then re-run cmake), or set KAEL_GPT2_VOCAB_DIR");
}

}  // namespace kael::tokenizer_detail
