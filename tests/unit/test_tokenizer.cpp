// GPT2Tokenizer on the installed GPT-2 vocabulary: known ids, special tokens, round trips,
// streaming, invalid UTF-8 and file errors. (The corpus comparison with the JS encoder is in
// python/tests/test_tokenizer.py.)
#define BOOST_TEST_MODULE tokenizer
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "kael/error.h"
#include "kael/tokenizer.h"

using kael::GPT2Tokenizer;
using Ids = std::vector<std::int64_t>;
namespace fs = std::filesystem;

namespace {

// The build tree's copy; its absence fails every test with installed()'s message (what to run).
const GPT2Tokenizer& gpt2() {
    static const GPT2Tokenizer tokenizer = GPT2Tokenizer::installed();
    return tokenizer;
}

bool message_has(const kael::Error& error, const std::string& text) {
    BOOST_TEST_MESSAGE(error.what());
    return std::string(error.what()).find(text) != std::string::npos;
}

struct TempDir {
    fs::path path = fs::temp_directory_path() /
                    ("kael_tokenizer_" + std::to_string(std::random_device{}()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name, std::ios::binary) << text;
        return (path / name).string();
    }
};

// from_files(vocab, merges) raises a ValueError whose message holds expected.
void check_value_error(const std::string& vocab, const std::string& merges,
                       const std::string& expected) {
    BOOST_CHECK_EXCEPTION((void)GPT2Tokenizer::from_files(vocab, merges), kael::ValueError,
                          [&](const kael::Error& e) { return message_has(e, expected); });
}

}  // namespace

BOOST_AUTO_TEST_CASE(known_ids) {
    BOOST_TEST(gpt2().encode("Hello world") == (Ids{15496, 995}), boost::test_tools::per_element());
    BOOST_TEST(gpt2().encode(" the cat, sat.\n") == (Ids{262, 3797, 11, 3332, 13, 198}),
               boost::test_tools::per_element());
    BOOST_TEST(gpt2().vocab_size() == 50257);
    BOOST_TEST(gpt2().eos_token_id() == 50256);
    BOOST_TEST(gpt2().token_bytes(995) == " world");
}

BOOST_AUTO_TEST_CASE(end_of_text) {
    BOOST_TEST(gpt2().encode("<|endoftext|>") == (Ids{50256}), boost::test_tools::per_element());
    BOOST_TEST(gpt2().encode("a<|endoftext|>b") == (Ids{64, 50256, 65}),
               boost::test_tools::per_element());
    const Ids plain = gpt2().encode("<|endoftext|>", false);
    BOOST_TEST(plain.size() > 1);
    BOOST_TEST(gpt2().decode(plain) == "<|endoftext|>");
    BOOST_TEST(gpt2().decode({50256}) == "<|endoftext|>");
}

BOOST_AUTO_TEST_CASE(decode_inverts_encode) {
    for (const std::string text :
         {"", " ", "it's we'll 'S", "  leading and trailing  ", "tabs\t\tand\r\nlines\n\n",
          "naïve café Привет 漢字 مرحبا नमस्ते", "👨‍👩‍👧‍👦 👍🏽 🇩🇪", "digits 1234567890123",
          "\xc2\xa0nbsp\xe3\x80\x80ideographic\xef\xbb\xbf bom"}) {
        BOOST_TEST(gpt2().decode(gpt2().encode(text)) == text);
    }
}

BOOST_AUTO_TEST_CASE(invalid_utf8_reads_as_replacement_characters) {
    const Ids replaced = gpt2().encode("a\xef\xbf\xbd" "b");
    BOOST_TEST(gpt2().encode("a\xff" "b") == replaced, boost::test_tools::per_element());
    BOOST_TEST(gpt2().encode("a\xf0\x9f\x98" "b") == replaced, boost::test_tools::per_element());
    // An encoded surrogate is three invalid bytes, each one U+FFFD (as JS TextDecoder).
    BOOST_TEST(gpt2().encode("a\xed\xa0\x80" "b") ==
                   gpt2().encode("a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "b"),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stream_holds_back_split_characters) {
    const std::string text = "ok 👍🏽 漢字!";
    const Ids ids = gpt2().encode(text);
    kael::TokenTextStream stream(gpt2());
    std::string joined;
    bool held_back = false;
    for (const std::int64_t id : ids) {
        const std::string piece = stream.push(id);
        held_back = held_back || piece.empty();
        BOOST_TEST(piece.find("\xef\xbf\xbd") == std::string::npos);
        joined += piece;
    }
    joined += stream.finish();
    BOOST_TEST(joined == text);
    BOOST_TEST(held_back);
    BOOST_TEST(stream.push(gpt2().encode("👍").front()).empty());
    BOOST_TEST(stream.finish() == "\xef\xbf\xbd");
}

BOOST_AUTO_TEST_CASE(out_of_range_ids) {
    for (const std::int64_t id : {std::int64_t{50257}, std::int64_t{-1}}) {
        BOOST_CHECK_EXCEPTION((void)gpt2().decode({15496, id}), kael::ValueError,
                              [&](const kael::Error& e) {
                                  return message_has(e, "token id " + std::to_string(id));
                              });
    }
    BOOST_CHECK_THROW((void)gpt2().token_bytes(1 << 20), kael::ValueError);
}

BOOST_AUTO_TEST_CASE(file_errors_name_file_and_line) {
    const TempDir dir;
    const std::string vocab = dir.write("vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
    const std::string merges = dir.write("merges.txt", "#version: 0.2\na b\n");
    check_value_error(vocab, merges, "no token for byte");
    check_value_error(dir.write("bad.json", "{\"a\": 0,\n\"b\": }"), merges, "bad.json:2:");
    const std::string gpt2_vocab = gpt2().source().substr(0, gpt2().source().find(" and "));
    check_value_error(gpt2_vocab, dir.write("three.bpe", "#version: 0.2\n\xc4\xa0 t x\n"),
                      "three.bpe:2:");
    check_value_error(gpt2_vocab, dir.write("unknown.bpe", "#version: 0.2\nzzqq t\n"),
                      "unknown.bpe:2:");
    BOOST_CHECK_THROW((void)GPT2Tokenizer::from_files(dir.path / "none.json", merges),
                      kael::OSError);
    BOOST_CHECK_EXCEPTION((void)GPT2Tokenizer::from_folder(dir.path.string() + "/empty"),
                          kael::ValueError,
                          [&](const kael::Error& e) { return message_has(e, "is not a folder"); });
}

BOOST_AUTO_TEST_CASE(threads_share_one_tokenizer) {
    const std::string text = "The quick brown 🦊 jumps over the lazy dog, again and again. ";
    const Ids expected = gpt2().encode(text);
    std::vector<std::thread> threads;
    std::vector<int> same(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            const GPT2Tokenizer copy = gpt2();  // copies share the table and its cache
            for (int i = 0; i < 200; ++i) same[t] += copy.encode(text) == expected ? 1 : 0;
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (const int count : same) BOOST_TEST(count == 200);
}
