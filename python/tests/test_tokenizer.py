"""kael.GPT2Tokenizer against the gpt-3-encoder package's JavaScript encoder (run by node) on a
corpus built at test time, plus the API's examples, files and errors."""
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import kael
import tokenizer_corpus

FETCH_HINT = "run scripts/install_deps.sh (it fetches gpt-3-encoder), then cmake again"
DRIVER = """
const fs = require('fs');
const encoder = require(process.argv[2]);
const lines = JSON.parse(fs.readFileSync(process.argv[3], 'utf-8'));
fs.writeFileSync(process.argv[4], JSON.stringify(lines.map(line => encoder.encode(line))));
"""


@pytest.fixture(scope="module")
def tokenizer():
    try:
        return kael.GPT2Tokenizer.from_pretrained()
    except ValueError as error:
        pytest.fail(f"{error}\n{FETCH_HINT}")


@pytest.fixture(scope="module")
def js_encoder():
    """(node, Encoder.js): from CTest's environment, else node on PATH and the fetched copy."""
    node = os.environ.get("KAEL_NODE") or shutil.which("node")
    script = pathlib.Path(os.environ.get("KAEL_GPT2_JS_ENCODER") or tokenizer_corpus.ROOT /
                          "third_party/gpt-3-encoder/package/Encoder.js")
    if not node or not os.path.exists(node):
        pytest.fail(f"node (KAEL_NODE={node}) is needed for the reference encoder; {FETCH_HINT}")
    if not script.is_file():
        pytest.fail(f"the reference encoder {script} is missing; {FETCH_HINT}")
    return node, script


def js_encode(js_encoder, lines, folder):
    node, script = js_encoder
    (folder / "driver.js").write_text(DRIVER)
    (folder / "lines.json").write_text(json.dumps(lines))
    subprocess.run([node, str(folder / "driver.js"), str(script), str(folder / "lines.json"),
                    str(folder / "ids.json")], check=True, timeout=600)
    return json.loads((folder / "ids.json").read_text())


def test_ids_match_the_javascript_encoder_on_the_corpus(tokenizer, js_encoder, tmp_path):
    lines = tokenizer_corpus.build()
    expected = js_encode(js_encoder, lines, tmp_path)
    differing = []
    tokens = 0
    for line, js_ids in zip(lines, expected, strict=True):
        ids = tokenizer.encode(line, allow_special=False)
        tokens += len(ids)
        if ids != js_ids:
            differing.append((line, ids, js_ids))
    report = "\n".join(f"{line!r}\n  kael: {ids}\n  js:   {js_ids}"
                       for line, ids, js_ids in differing[:5])
    assert not differing, f"{len(differing)} of {len(lines)} lines differ:\n{report}"
    assert len(lines) > 5000 and tokens > 100000
    print(f"corpus: {len(lines)} lines, {tokens} tokens, identical to the JS encoder")


def test_decode_inverts_encode_on_the_corpus(tokenizer):
    for line in tokenizer_corpus.build():
        for allow_special in (False, True):
            assert tokenizer.decode(tokenizer.encode(line, allow_special)) == line


def test_known_ids(tokenizer):
    assert tokenizer.encode("Hello world") == [15496, 995]
    assert tokenizer.encode(" the cat, sat.\n") == [262, 3797, 11, 3332, 13, 198]
    assert tokenizer.decode([15496, 995]) == "Hello world"
    assert tokenizer.vocab_size == len(tokenizer) == 50257
    assert tokenizer.eos_token_id == 50256
    assert tokenizer.token_bytes(995) == b" world"
    assert "vocab_size=50257" in repr(tokenizer)


def test_end_of_text_is_special_unless_disallowed(tokenizer, js_encoder, tmp_path):
    assert tokenizer.encode("<|endoftext|>") == [50256]
    assert tokenizer.encode("a<|endoftext|>b") == [64, 50256, 65]
    plain = tokenizer.encode("<|endoftext|>", allow_special=False)
    assert 50256 not in plain and plain == js_encode(js_encoder, ["<|endoftext|>"], tmp_path)[0]
    assert tokenizer.decode([50256]) == "<|endoftext|>"


def test_invalid_text_reads_as_replacement_characters(tokenizer):
    replaced = tokenizer.encode("a\ufffdb")
    assert tokenizer.encode(b"a\xffb") == replaced
    assert tokenizer.encode("a\ud800b") == replaced  # a lone surrogate, as JS TextEncoder
    assert tokenizer.encode(b"a\xf0\x9f\x98b") == replaced  # a truncated character is one U+FFFD
    assert tokenizer.decode(tokenizer.encode(b"caf\xc3\xa9")) == "café"


def test_decode_replaces_partial_characters(tokenizer):
    thumbs = tokenizer.encode("👍")
    assert len(thumbs) > 1
    assert tokenizer.decode(thumbs[:1]) == "\ufffd"
    assert b"".join(tokenizer.token_bytes(i) for i in thumbs) == "👍".encode()


def test_stream_yields_whole_characters(tokenizer):
    text = "I 👍🏽 this: 漢字 👨‍👩‍👧 ok"
    ids = tokenizer.encode(text)
    stream = kael.TokenTextStream(tokenizer)
    pieces = [stream.push(i) for i in ids]
    pieces.append(stream.finish())
    assert "".join(pieces) == text
    assert "" in pieces  # a character split across tokens was held back
    assert all("\ufffd" not in piece for piece in pieces)
    assert stream.push(tokenizer.encode("👍")[0]) == ""
    assert stream.finish() == "\ufffd"  # an unfinished character, then a fresh start
    assert stream.push(tokenizer.encode("a")[0]) == "a"


def test_from_pretrained_reads_a_hugging_face_folder(tokenizer, tmp_path):
    vocab, merges = tokenizer.source.split(" and ")
    shutil.copy(vocab, tmp_path / "vocab.json")
    shutil.copy(merges, tmp_path / "merges.txt")
    copy = kael.GPT2Tokenizer.from_pretrained(tmp_path)
    assert str(tmp_path / "vocab.json") in copy.source
    assert copy.encode("Hello world") == [15496, 995]
    same = kael.GPT2Tokenizer.from_files(str(tmp_path / "vocab.json"), tmp_path / "merges.txt")
    assert same.encode(" the cat, sat.\n") == [262, 3797, 11, 3332, 13, 198]


# (file name, its text, whether it replaces the vocabulary or the merges, the error expected)
CORRUPT_FILES = [
    ("bad.json", '{"a": 0,\n "b": }', "vocab", r"bad\.json:2: not valid JSON"),
    ("list.json", "[1, 2]", "vocab", r"list\.json: expected a JSON object"),
    ("ids.json", '{"a": "zero"}', "vocab", r"ids\.json: token 'a' has id \"zero\""),
    ("three.bpe", "#version: 0.2\nĠ t\nĠ a x\n", "merges", r"three\.bpe:3: expected two tokens"),
    ("unknown.bpe", "#version: 0.2\nĠ t\nzzqq t\n", "merges",
     r"unknown\.bpe:3: token 'zzqq' is not in the vocabulary"),
]


@pytest.mark.parametrize("name, text, replaces, message", CORRUPT_FILES,
                         ids=[case[0] for case in CORRUPT_FILES])
def test_corrupt_files_name_file_and_line(tokenizer, tmp_path, name, text, replaces, message):
    files = dict(zip(("vocab", "merges"), tokenizer.source.split(" and ")))
    files[replaces] = tmp_path / name
    files[replaces].write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        kael.GPT2Tokenizer.from_files(files["vocab"], files["merges"])


def test_missing_files(tokenizer, tmp_path):
    merges = tokenizer.source.split(" and ")[1]
    with pytest.raises(FileNotFoundError, match="missing.json"):
        kael.GPT2Tokenizer.from_files(tmp_path / "missing.json", merges)
    # A folder without vocabulary files uses the installed copy; a folder that is not there
    # is an error.
    assert kael.GPT2Tokenizer.from_pretrained(tmp_path).source == tokenizer.source
    with pytest.raises(ValueError, match="is not a folder"):
        kael.GPT2Tokenizer.from_pretrained(tmp_path / "absent")


def test_out_of_range_ids_are_value_errors(tokenizer):
    for bad in (50257, -1, 2 ** 40):
        with pytest.raises(ValueError, match=f"token id {bad} is not in the vocabulary"):
            tokenizer.decode([15496, bad])
    with pytest.raises(ValueError, match="token id 50257"):
        tokenizer.token_bytes(50257)
    with pytest.raises(TypeError):
        tokenizer.decode("Hello")
    with pytest.raises(TypeError):
        tokenizer.encode(12)


def test_installed_copy_follows_the_environment(tmp_path):
    env = dict(os.environ, KAEL_GPT2_VOCAB_DIR=str(tmp_path))
    script = "import kael; print(kael.GPT2Tokenizer.from_pretrained().source)"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert str(tmp_path) not in out  # an empty folder is passed over, the next place serves


def test_threads_share_one_tokenizer(tokenizer):
    lines = tokenizer_corpus.build(generated=200)[-400:]
    expected = [tokenizer.encode(line) for line in lines]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(tokenizer.encode, lines)) == expected
