#pragma once
// safetensors files (Hugging Face's interchange format): an 8-byte little-endian header length,
// a JSON header naming each tensor's dtype, shape and byte range, then the raw little-endian
// data. Files are mapped and checked whole before any tensor is read; no code runs on load.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kael/tensor.h"

namespace kael {

struct SafetensorsEntry {
    std::string name;
    std::string dtype;        // as written in the file: "F32", "F16", "BF16", ...
    Shape shape;
    std::uint64_t begin = 0;  // byte offsets inside the data section
    std::uint64_t end = 0;
};

// A safetensors file, memory-mapped read-only; the header is checked whole when it opens:
// its size (100 MB at most), JSON, unique names, known dtypes, byte lengths matching shapes,
// and byte ranges that cover the data exactly (no overlap, no hole, nothing after the last).
// The mapping is private but shares pages with the file: truncating the file while it is open
// is the caller's to avoid (reads past the new end fault, as with any mapped file).
class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string& path);  // ValueError (broken file) / OSError (cannot open)
    SafetensorsFile(SafetensorsFile&& other) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;
    ~SafetensorsFile();

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] const std::vector<SafetensorsEntry>& entries() const { return entries_; }  // in data-offset order
    [[nodiscard]] const SafetensorsEntry* find(const std::string& name) const;  // nullptr if absent
    [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // A new host (cpu) tensor with the entry's values: F32/F64/I64/BOOL as they are, F16 and
    // BF16 converted to F32, I32/I16/I8/U8 converted to I64; any other dtype is a TypeError
    // naming the tensor and its dtype. Unknown name: a ValueError naming it.
    [[nodiscard]] Tensor read(const std::string& name) const;

private:
    std::string path_;
    const unsigned char* map_ = nullptr;  // the whole file
    std::uint64_t map_size_ = 0;
    const unsigned char* data_ = nullptr;  // the data section, past the header
    std::vector<SafetensorsEntry> entries_;
    std::map<std::string, std::size_t> by_name_;  // index into entries_
    std::map<std::string, std::string> metadata_;
};

// Writes every tensor (any device, any layout, any kael dtype; F32->"F32", F64->"F64",
// I64->"I64", Bool->"BOOL") atomically, like Module::save; names must be unique and non-empty
// (and not "__metadata__"). The header lists "__metadata__" (when not empty) then the tensors in
// the order given, padded with spaces to a multiple of 8 bytes; the data follows in that order.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Every tensor of the file, read as SafetensorsFile::read does, in data-offset order.
std::vector<std::pair<std::string, Tensor>> load_safetensors(const std::string& path);

}  // namespace kael
