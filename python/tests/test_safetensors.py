"""kael.safetensors and Module.save_safetensors/load_safetensors: round trips, files written by
hand (as other writers lay them out) read back exactly, and every broken file rejected."""
import json
import os
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import kael
import kael.nn as nn
from kael.safetensors import load_file, safe_open, save_file


def write_raw(path, header, data=b"", header_bytes=None):
    """A safetensors file of header (a dict, or header_bytes as they are) and data."""
    text = header_bytes if header_bytes is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def read_header(path):
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + length]), raw[8 + length:], length


# ---- round trips -------------------------------------------------------------------------------

def test_round_trip_of_every_dtype_and_layout(tmp_path, device):
    tensors = {
        "f32": kael.tensor([[1.5, -2.0, 3.25]], device=device),
        "f64": kael.tensor([1e-300, -0.0, 2.5], dtype=kael.float64, device=device),
        "i64": kael.tensor([-(2**63), 2**63 - 1, 0], dtype=kael.int64, device=device),
        "bool": kael.tensor([True, False, True], device=device),
        "empty": kael.zeros(0, 3, device=device),
        "scalar": kael.tensor(4.0, device=device),
        "transposed": kael.arange(6, device=device).reshape(2, 3).float().T,
    }
    path = tmp_path / "all.safetensors"
    save_file(tensors, path, metadata={"format": "kael", "note": "héllo"})
    loaded = load_file(path, device=device)
    assert list(loaded) == list(tensors)  # data in the dict's order
    for name, original in tensors.items():
        assert loaded[name].dtype == original.dtype, name
        assert loaded[name].shape == original.shape, name
        assert loaded[name].device == kael.device(device)
        assert loaded[name].tolist() == original.tolist(), name
    with safe_open(str(path)) as f:
        assert f.metadata() == {"format": "kael", "note": "héllo"}
        assert f.keys() == list(tensors)
        assert f.get_tensor("transposed").tolist() == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(ValueError, match="closed"):
        f.keys()


def test_written_layout_is_the_reference_layout(tmp_path):
    path = tmp_path / "w.safetensors"
    save_file({"b": kael.ones(2, 3), "a": kael.tensor([1, 2], dtype=kael.int64)},
              os.fsencode(path))
    header, data, length = read_header(path)
    assert length % 8 == 0
    raw = path.read_bytes()[8:8 + length]
    assert raw.rstrip(b" ") == json.dumps(header, separators=(",", ":")).encode()
    assert header == {"b": entry("F32", [2, 3], 0, 24), "a": entry("I64", [2], 24, 40)}
    assert "__metadata__" not in header
    assert np.frombuffer(data[:24], "<f4").tolist() == [1.0] * 6
    assert np.frombuffer(data[24:], "<i8").tolist() == [1, 2]


def test_torch_reads_kael_files_by_the_reference_layout(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.safetensors"
    save_file({"w": kael.tensor([[1.0, 2.0], [3.0, 4.0]]), "m": kael.tensor([True, False])}, path)
    header, data, _ = read_header(path)
    kinds = {"F32": torch.float32, "BOOL": torch.bool}
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        chunk = bytearray(data[begin:end])
        out[name] = torch.frombuffer(chunk, dtype=kinds[info["dtype"]]).reshape(info["shape"])
    assert out["w"].tolist() == [[1.0, 2.0], [3.0, 4.0]] and out["m"].tolist() == [True, False]


def test_hand_written_files_read_back_exactly(tmp_path):
    values = np.array([1.0, -2.5, 65504.0, 6e-8, np.inf, -0.0], dtype=np.float16)
    bf16_source = np.array([1.0, -3.140625, 1e30, -np.inf], dtype=np.float32)
    bf16 = (bf16_source.view(np.uint32) >> 16).astype(np.uint16)
    ints = {"I32": np.array([-7, 2**31 - 1], "<i4"), "I16": np.array([-300, 5], "<i2"),
            "I8": np.array([-128, 127], "i1"), "U8": np.array([0, 255], "u1")}
    pieces = [("half", "F16", [2, 3], values.astype("<f2").tobytes()),
              ("brain", "BF16", [4], bf16.astype("<u2").tobytes()),
              ("flags", "BOOL", [3], bytes([0, 1, 7]))]
    pieces += [(name.lower(), name, [2], array.tobytes()) for name, array in ints.items()]
    pieces.append(("odd", "F64", [1], np.array([0.1], "<f8").tobytes()))  # unaligned: offset 39
    header, data = {"__metadata__": {"source": "hand"}}, b""
    for name, dtype, shape, raw in pieces:
        header[name] = entry(dtype, shape, len(data), len(data) + len(raw))
        data += raw
    loaded = load_file(write_raw(tmp_path / "h.safetensors", header, data))
    # F16 and BF16 are read as they are stored, bit for bit.
    assert loaded["half"].dtype == kael.float16 and loaded["brain"].dtype == kael.bfloat16
    np.testing.assert_array_equal(loaded["half"].numpy().view("<u2"),
                                  values.astype("<f2").view("<u2").reshape(2, 3))
    assert np.signbit(loaded["half"].float().numpy()[1, 2])
    expected_bf16 = (bf16.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(loaded["brain"].float().numpy(), expected_bf16)
    assert loaded["brain"].tolist()[:2] == [1.0, -3.140625]
    assert loaded["flags"].tolist() == [False, True, True]
    narrow = {"I32": kael.int32, "I16": kael.int16, "I8": kael.int8, "U8": kael.uint8}
    for name, array in ints.items():
        assert loaded[name.lower()].dtype == narrow[name]  # as stored
        assert loaded[name.lower()].tolist() == array.tolist()
    assert loaded["odd"].tolist() == [0.1]


def test_f16_subnormals_and_nan(tmp_path):
    bits = np.array([0x0001, 0x03FF, 0x8001, 0x7E00, 0x7C00, 0xFBFF], dtype="<u2")
    path = write_raw(tmp_path / "s.safetensors", {"h": entry("F16", [6], 0, 12)}, bits.tobytes())
    got = load_file(path)["h"].numpy()
    expected = bits.view(np.float16).astype(np.float32)
    assert got[0] == 2.0 ** -24 and got[2] == -(2.0 ** -24)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got[3])


def test_unsupported_dtype_is_a_type_error_when_read(tmp_path):
    path = write_raw(tmp_path / "u.safetensors", {"u": entry("U32", [1], 0, 4)}, b"\0" * 4)
    with safe_open(path) as f:
        assert f.keys() == ["u"]
        with pytest.raises(TypeError, match="'u' has dtype U32"):
            f.get_tensor("u")
        with pytest.raises(ValueError, match="no tensor 'v'"):
            f.get_tensor("v")


def test_save_file_argument_errors(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match="dict"):
        save_file([("a", kael.ones(1))], path)
    with pytest.raises(TypeError, match="'a' is a list"):
        save_file({"a": [1.0]}, path)
    with pytest.raises(TypeError, match="str to str"):
        save_file({"a": kael.ones(1)}, path, metadata={"k": 1})
    with pytest.raises(ValueError, match="must not be empty"):
        save_file({"": kael.ones(1)}, path)
    with pytest.raises(ValueError, match="__metadata__"):
        save_file({"__metadata__": kael.ones(1)}, path)
    assert not path.exists()


# ---- rejected files ----------------------------------------------------------------------------

GOOD = {"w": entry("F32", [2], 0, 8)}

BROKEN = {
    "header length past the end": (None, struct.pack("<Q", 1000) + b"{}", "past the end of the file"),
    "header over 100 MB": (None, struct.pack("<Q", 100_000_001) + b"{}", "over the limit"),
    "invalid JSON": ((b'{"w": {', b""), None, "not valid JSON"),
    "invalid UTF-8": ((b'{"\xff": 1}', b""), None, "not valid JSON"),
    "not an object": ((b"[]", b""), None, "not a JSON object"),
    "duplicate key": ((b'{"w":' + json.dumps(GOOD["w"]).encode() + b',"w":' +
                       json.dumps(entry("F32", [2], 8, 16)).encode() + b"}", b"\0" * 16),
                      None, "'w' appears twice"),
    "unknown dtype": (({"w": entry("F12", [2], 0, 8)}, b"\0" * 8), None, "'w' has the unknown dtype 'F12'"),
    "wrong byte length": (({"w": entry("F32", [3], 0, 8)}, b"\0" * 8), None, "'w' has 8 bytes"),
    "overlap": (({"a": entry("F32", [2], 0, 8), "w": entry("F32", [1], 4, 8)}, b"\0" * 8),
                None, "'a' and 'w' overlap"),
    "hole": (({"a": entry("F32", [1], 0, 4), "w": entry("F32", [1], 8, 12)}, b"\0" * 12),
             None, "hole before 'w'"),
    "trailing bytes": ((GOOD, b"\0" * 12), None, "trailing bytes"),
    "offsets past the end": ((GOOD, b"\0" * 4), None, "'w' ends at byte 8, past the end"),
    "end before begin": (({"w": entry("F32", [0], 8, 0)}, b""), None, "'w' has data_offsets"),
    "negative shape": (({"w": entry("F32", [-2], 0, 8)}, b"\0" * 8), None, "'w': shape"),
    "float shape": (({"w": entry("F32", [2.0], 0, 8)}, b"\0" * 8), None, "'w': shape"),
    "shape not a list": (({"w": entry("F32", 2, 0, 8)}, b"\0" * 8), None, "'w': shape"),
    "huge shape": (({"w": entry("F32", [2**62, 2**62], 0, 8)}, b"\0" * 8), None, "more than 2^64"),
    "rank 65": (({"w": entry("U8", [1] * 65, 0, 1)}, b"\0"), None, "more than 64 dimensions"),
    "one offset": (({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0]}}, b"\0" * 8),
                   None, "'w': data_offsets must be two"),
    "missing field": (({"w": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), None, "'w' needs dtype"),
    "extra field": (({"w": dict(GOOD["w"], extra=1)}, b"\0" * 8), None, "unexpected field 'extra'"),
    "entry not an object": (({"w": [1]}, b""), None, "'w' is an array, not an object"),
    "dtype not a string": (({"w": entry(4, [2], 0, 8)}, b"\0" * 8), None, "'w': dtype is a number"),
    "non-string metadata": (({"__metadata__": {"k": 1}, **GOOD}, b"\0" * 8), None,
                            "__metadata__ value of 'k' is a number, not a string"),
    "metadata not an object": (({"__metadata__": "x", **GOOD}, b"\0" * 8), None,
                               "__metadata__ is a string"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_files_are_value_errors_naming_the_file(tmp_path, case):
    contents, raw, expected = BROKEN[case]
    path = tmp_path / "broken.safetensors"
    if raw is not None:
        path.write_bytes(raw)
    else:
        header, data = contents
        if isinstance(header, bytes):
            write_raw(path, None, data, header_bytes=header)
        else:
            write_raw(path, header, data)
    with pytest.raises(ValueError) as caught:
        load_file(path)
    message = str(caught.value)
    assert str(path) in message and expected in message, message


@pytest.mark.parametrize("size", [0, 3, 7])
def test_files_shorter_than_the_length_are_rejected(tmp_path, size):
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x01" * size)
    with pytest.raises(ValueError, match="fewer than the 8"):
        safe_open(path)


def test_fifos_folders_and_missing_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO"):
        load_file(fifo)
    with pytest.raises(IsADirectoryError):
        load_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "absent")
    with pytest.raises(ValueError, match="is a FIFO"):
        save_file({"a": kael.ones(1)}, fifo)
    with pytest.raises(IsADirectoryError):
        save_file({"a": kael.ones(1)}, tmp_path)


def test_empty_file_of_no_tensors(tmp_path):
    path = tmp_path / "none.safetensors"
    save_file({}, path)
    assert load_file(path) == {}
    assert len(path.read_bytes()) == 16  # the length, then "{}" padded to 8


def _valid_file_bytes():
    header = {"__metadata__": {"k": "v"}, "a": entry("F16", [2, 2], 0, 8),
              "b": entry("I64", [1], 8, 16), "c": entry("BOOL", [0], 16, 16)}
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + bytes(range(16))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_files_fail_only_with_value_errors(tmp_path, data):
    raw = bytearray(_valid_file_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    path = tmp_path / "mutated.safetensors"
    path.write_bytes(bytes(raw))
    try:
        for tensor in load_file(path).values():
            tensor.tolist()
    except ValueError as error:
        assert str(path) in str(error)
    except TypeError as error:  # a dtype mutated into another the format defines
        assert "has dtype" in str(error)


# ---- modules -----------------------------------------------------------------------------------

def make_model(device="cpu"):
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)


def test_module_round_trip(tmp_path, device):
    kael.manual_seed(5)
    model = make_model(device)
    path = tmp_path / "model.safetensors"
    model.save_safetensors(path)
    header, _, _ = read_header(path)
    assert list(header) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    other = make_model(device)
    assert other.load_safetensors(path) == ([], [])
    assert [p.tolist() for p in other.parameters()] == [p.tolist() for p in model.parameters()]
    assert all(p.device == kael.device(device) for p in other.parameters())


def test_module_load_checks_before_changing_anything(tmp_path):
    model = make_model()
    path = tmp_path / "model.safetensors"
    save_file({"0.weight": kael.zeros(4, 3), "0.bias": kael.zeros(4), "2.weight": kael.zeros(5, 4),
               "2.bias": kael.zeros(2)}, path)
    before = [p.tolist() for p in model.parameters()]
    with pytest.raises(ValueError, match="size mismatch for '2.weight'"):
        model.load_safetensors(path)
    assert [p.tolist() for p in model.parameters()] == before
    single = nn.Linear(3, 4)
    with pytest.raises(ValueError, match="unexpected"):
        single.load_safetensors(tmp_path / "model.safetensors")
    save_file({"weight": kael.ones(4, 3), "extra": kael.ones(1)}, path)
    result = single.load_safetensors(path, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert single.weight.tolist() == [[1.0] * 3] * 4


def test_module_loads_half_precision_files(tmp_path):
    model = nn.Linear(2, 1)
    weight = np.array([[0.5, -1.25]], dtype=np.float16)
    bias = (np.array([3.0], dtype=np.float32).view(np.uint32) >> 16).astype("<u2")
    header = {"weight": entry("F16", [1, 2], 0, 4), "bias": entry("BF16", [1], 4, 6)}
    path = write_raw(tmp_path / "half.safetensors", header, weight.tobytes() + bias.tobytes())
    model.load_safetensors(path)
    assert model.weight.tolist() == [[0.5, -1.25]] and model.bias.tolist() == [3.0]
