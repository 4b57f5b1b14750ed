// Parsing and checking safetensors headers: a SAX handler (no DOM, so nesting is bounded and a
// repeated name is seen; nlohmann's DOM keeps the last silently), then the byte-range checks.
#include "safetensors_header.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "kael/error.h"
#include "nn_internal.h"

namespace kael::detail {

namespace {

using nn::detail::printable_name;
using Json = nlohmann::json;

// Where the handler stands in the only shape a header may have:
// {"name": {"dtype": str, "shape": [int...], "data_offsets": [int, int]}, "__metadata__": {str: str}}
enum class Level { Outside, Root, Metadata, Entry, Array, Done };
enum class Field { None, Dtype, Shape, Offsets };

class HeaderHandler : public nlohmann::json_sax<Json> {
public:
    std::vector<SafetensorsEntry> entries;
    std::map<std::string, std::string> metadata;
    std::string error;  // why parsing stopped, when it did

    bool null() override { return unexpected("null"); }
    bool boolean(bool) override { return unexpected("a boolean"); }
    bool number_integer(number_integer_t value) override {
        return value < 0 ? unexpected("a negative number") : number(static_cast<std::uint64_t>(value));
    }
    bool number_unsigned(number_unsigned_t value) override { return number(value); }
    bool number_float(number_float_t, const string_t&) override {
        return unexpected("a number that is not an integer (or is too large)");
    }
    bool binary(binary_t&) override { return unexpected("binary data"); }
    bool string(string_t& value) override {
        if (level_ == Level::Metadata) {
            metadata[key_] = value;
            return true;
        }
        if (level_ == Level::Entry && field_ == Field::Dtype) {
            entry_.dtype = value;
            return true;
        }
        return unexpected("a string");
    }
    bool start_object(std::size_t) override {
        if (level_ == Level::Outside) {
            level_ = Level::Root;
            return true;
        }
        if (level_ != Level::Root) {
            return unexpected("an object");
        }
        if (entry_.name == "__metadata__") {
            level_ = Level::Metadata;
        } else {
            level_ = Level::Entry;
            seen_.clear();
        }
        return true;
    }
    bool key(string_t& key) override {
        if (level_ == Level::Root) {
            if (!names_.insert(key).second) {
                return fail("the name " + printable_name(key) + " appears twice");
            }
            entry_ = SafetensorsEntry{key, {}, {}, 0, 0};
            return true;
        }
        if (level_ == Level::Metadata) {
            if (metadata.count(key) != 0) {
                return fail("__metadata__ has the key " + printable_name(key) + " twice");
            }
            key_ = key;
            return true;
        }
        field_ = key == "dtype" ? Field::Dtype
                 : key == "shape" ? Field::Shape
                 : key == "data_offsets" ? Field::Offsets
                                         : Field::None;
        if (field_ == Field::None) {
            return fail("tensor " + printable_name(entry_.name) + " has an unexpected field " +
                        printable_name(key) + " (only dtype, shape and data_offsets)");
        }
        if (!seen_.insert(key).second) {
            return fail("tensor " + printable_name(entry_.name) + " has the field " + key + " twice");
        }
        return true;
    }
    bool end_object() override {
        if (level_ == Level::Entry) {
            if (seen_.size() != 3) {
                return fail("tensor " + printable_name(entry_.name) +
                            " needs dtype, shape and data_offsets");
            }
            entries.push_back(entry_);
            level_ = Level::Root;
        } else if (level_ == Level::Metadata) {
            level_ = Level::Root;
        } else {
            level_ = Level::Done;
        }
        return true;
    }
    bool start_array(std::size_t) override {
        if (level_ != Level::Entry || field_ == Field::Dtype) {
            return unexpected("an array");
        }
        level_ = Level::Array;
        offsets_.clear();
        return true;
    }
    bool end_array() override {
        level_ = Level::Entry;
        if (field_ == Field::Offsets) {
            if (offsets_.size() != 2) {
                return fail("tensor " + printable_name(entry_.name) +
                            ": data_offsets must be two integers [begin, end]");
            }
            entry_.begin = offsets_[0];
            entry_.end = offsets_[1];
        }
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        return fail(std::string("the header is not valid JSON (") + e.what() + ")");
    }

private:
    bool number(std::uint64_t value) {
        if (level_ != Level::Array) {
            return unexpected("a number");
        }
        if (field_ == Field::Shape) {
            if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                return unexpected("a size too large");
            }
            if (entry_.shape.size() == static_cast<std::size_t>(kMaxRank)) {
                return fail("tensor " + printable_name(entry_.name) + " has more than " +
                            std::to_string(kMaxRank) + " dimensions");
            }
            entry_.shape.push_back(static_cast<std::int64_t>(value));
        } else if (offsets_.size() < 2) {
            offsets_.push_back(value);
        } else {
            return fail("tensor " + printable_name(entry_.name) +
                        ": data_offsets must be two integers [begin, end]");
        }
        return true;
    }
    // A value of the wrong kind where it stands, described by what the header must hold there.
    bool unexpected(const std::string& found) {
        if (level_ == Level::Outside) {
            return fail("the header is " + found + ", not a JSON object");
        }
        if (level_ == Level::Metadata) {
            return fail("__metadata__ value of " + printable_name(key_) + " is " + found +
                        ", not a string");
        }
        if (level_ == Level::Root) {
            return fail(entry_.name == "__metadata__"
                            ? "__metadata__ is " + found + ", not an object"
                            : "tensor " + printable_name(entry_.name) + " is " + found +
                                  ", not an object");
        }
        const std::string tensor = "tensor " + printable_name(entry_.name) + ": ";
        if (field_ == Field::Dtype) {
            return fail(tensor + "dtype is " + found + ", not a string");
        }
        if (field_ == Field::Shape) {
            return fail(tensor + "shape must be an array of non-negative integers, found " + found);
        }
        return fail(tensor + "data_offsets must be two non-negative integers, found " + found);
    }
    bool fail(const std::string& why) {
        if (error.empty()) {
            error = why;
        }
        return false;
    }

    Level level_ = Level::Outside;
    Field field_ = Field::None;
    SafetensorsEntry entry_;
    std::vector<std::uint64_t> offsets_;
    std::set<std::string> names_;
    std::set<std::string> seen_;  // fields of the current entry
    std::string key_;             // the current metadata key
};

std::string bytes_text(std::uint64_t count) {
    return std::to_string(count) + (count == 1 ? " byte" : " bytes");
}

// Each tensor's byte length must be what its dtype and shape need.
void check_lengths(const std::vector<SafetensorsEntry>& entries, std::uint64_t data_size,
                   const std::string& path) {
    for (const SafetensorsEntry& entry : entries) {
        const std::string tensor = "tensor " + printable_name(entry.name);
        const std::uint64_t size = safetensors_itemsize(entry.dtype);
        if (size == 0) {
            throw_invalid_safetensors(path, tensor + " has the unknown dtype " +
                                                printable_name(entry.dtype));
        }
        if (entry.begin > entry.end) {
            throw_invalid_safetensors(path, tensor + " has data_offsets [" +
                                                std::to_string(entry.begin) + ", " +
                                                std::to_string(entry.end) + "] that end before they begin");
        }
        if (entry.end > data_size) {
            throw_invalid_safetensors(path, tensor + " ends at byte " + std::to_string(entry.end) +
                                                ", past the end of the data (" +
                                                bytes_text(data_size) + ")");
        }
        // A shape with a 0 needs no bytes however large its other sizes; otherwise the product
        // is checked for overflow as it grows (it cannot exceed the data once it matches).
        const bool empty = std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end();
        std::uint64_t needed = empty ? 0 : size;
        bool overflows = false;
        for (const std::int64_t extent : entry.shape) {
            const auto n = static_cast<std::uint64_t>(extent);
            overflows = overflows || (n != 0 && needed > std::numeric_limits<std::uint64_t>::max() / n);
            needed *= n;
        }
        if (overflows || needed != entry.end - entry.begin) {
            throw_invalid_safetensors(
                path, tensor + " has " + bytes_text(entry.end - entry.begin) + " but dtype " +
                          entry.dtype + " and shape " + to_string(entry.shape) + " need " +
                          (overflows ? "more than 2^64" : std::to_string(needed)));
        }
    }
}

// The entries, sorted by offset, must cover [0, data_size) exactly once.
void check_coverage(const std::vector<SafetensorsEntry>& entries, std::uint64_t data_size,
                    const std::string& path) {
    std::uint64_t covered = 0;
    const SafetensorsEntry* previous = nullptr;
    for (const SafetensorsEntry& entry : entries) {
        if (entry.begin < covered) {
            throw_invalid_safetensors(path, "tensors " + printable_name(previous->name) + " and " +
                                                printable_name(entry.name) + " overlap");
        }
        if (entry.begin > covered) {
            throw_invalid_safetensors(path, "bytes " + std::to_string(covered) + " to " +
                                                std::to_string(entry.begin) +
                                                " of the data belong to no tensor (a hole before " +
                                                printable_name(entry.name) + ")");
        }
        covered = entry.end;
        previous = &entry;
    }
    if (covered < data_size) {
        throw_invalid_safetensors(path, "the data have " + bytes_text(data_size) +
                                            " but the last tensor ends at byte " +
                                            std::to_string(covered) +
                                            " (trailing bytes belong to no tensor)");
    }
}

}  // namespace

std::uint64_t safetensors_itemsize(const std::string& dtype) {
    static const std::map<std::string, std::uint64_t> sizes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
        {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
        {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
    const auto found = sizes.find(dtype);
    return found == sizes.end() ? 0 : found->second;
}

void throw_invalid_safetensors(const std::string& path, const std::string& what) {
    throw ValueError("load_safetensors: '" + path + "' is not a valid safetensors file: " + what);
}

SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t data_size,
                                           const std::string& path) {
    HeaderHandler handler;
    bool parsed = false;
    try {
        parsed = Json::sax_parse(json.begin(), json.end(), &handler);
    } catch (const Json::exception& e) {  // the handler reports parse errors; this is a net
        handler.error = std::string("the header is not valid JSON (") + e.what() + ")";
    }
    if (!parsed) {
        throw_invalid_safetensors(path, handler.error.empty() ? "the header is not valid JSON"
                                                              : handler.error);
    }
    SafetensorsHeader header{std::move(handler.entries), std::move(handler.metadata)};
    check_lengths(header.entries, data_size, path);
    std::stable_sort(header.entries.begin(), header.entries.end(),
                     [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                         return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                     });
    check_coverage(header.entries, data_size, path);
    return header;
}

}  // namespace kael::detail
