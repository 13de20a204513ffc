"""stableStringify / digest must equal OpenClaw's JavaScript byte for byte."""

import hashlib
import json

import pytest
from hypothesis import given, strategies as st

from loopscan.engine.hashing import UNDEFINED, _exact, digest, js_number, stable_json
from loopscan.readers.decode import JSFloat


@pytest.mark.parametrize(
    "value,js",
    [
        (1.0, "1"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (-0.0, "0"), (0.1, "0.1"),
        (1e-7, "1e-7"), (0.000001, "0.000001"), (123.456, "123.456"), (1.5e-10, "1.5e-10"),
        (2.5e25, "2.5e+25"), (-3.75, "-3.75"), (1e16, "10000000000000000"), (5e-324, "5e-324"),
    ],
)
def test_js_number_formats_like_javascript(value, js):
    assert js_number(value) == js


def test_stable_json_sorts_keys_without_spaces():
    assert stable_json({"b": 1, "a": {"d": [1, 2], "c": None}}) == b'{"a":{"c":null,"d":[1,2]},"b":1}'


def test_floats_read_from_json_print_the_javascript_way():
    assert stable_json({"x": JSFloat(3.0), "y": JSFloat(1e21), "z": JSFloat(0.5)}) == b'{"x":3,"y":1e+21,"z":0.5}'


def test_strings_escape_like_json_stringify():
    s = "quote\" back\\ nl\n tab\t ctl\x01 del\x7f uni é \u2028 /"
    assert stable_json(s) == json.dumps(s, ensure_ascii=False).encode()


def test_lone_surrogates_are_removed_like_sanitize_surrogates():
    assert stable_json({"k": "a\ud800b"}) == b'{"k":"ab"}'


def test_undefined_prints_as_javascript_undefined():
    assert stable_json({"status": UNDEFINED}) == b'{"status":undefined}'


def test_digest_is_sha256_of_stable_json():
    value = {"command": "ls -la"}
    assert digest(value) == hashlib.sha256(b'{"command":"ls -la"}').hexdigest()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).map(JSFloat) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_fast_path_equals_exact_recursive_form(value):
    assert stable_json(value) == _exact(value).encode("utf-8", "surrogatepass")


def test_keys_sort_by_utf16_units_like_javascript():
    # U+E000 sorts after U+10000 in code points but before it in UTF-16 (a surrogate pair starts D800)
    assert stable_json({"\ue000": 1, "\U00010000": 2}) == '{"\U00010000":2,"\ue000":1}'.encode()
