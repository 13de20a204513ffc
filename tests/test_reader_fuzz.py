"""Property tests: whatever bytes or JSON lines a file holds, reading and analysing it raises nothing
but `ReadError` (quality.md, "Bad input"), and the file is never modified."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from loopscan.analysis.session import analyze_path
from loopscan.readers import ReadError, open_events

FORMATS = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
FIXTURE_LINES = [
    line for path in sorted(FORMATS.iterdir()) for line in path.read_bytes().splitlines(keepends=True)
]
HEADER = FIXTURE_LINES[0]

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def consume(path: Path, data: bytes) -> None:
    """Write `data`, read it every way loopscan does; only ReadError may escape."""
    path.write_bytes(data)
    mtime = path.stat().st_mtime_ns
    try:
        with open_events(str(path)) as (events, diag):
            for _ in events:
                pass
        assert diag.bad_lines >= 0
        assert all(n.startswith(f"{path}") for n in diag.notes)
        result = analyze_path(str(path), trace=True)
        json.dumps(result.to_json())
    except ReadError as err:
        assert str(err).startswith(f"{path}: ")
    assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime


# --- strategies -------------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
    st.sampled_from(["", "exec", "toolCall", "text", "assistant", "toolResult", "user", "28", "1e3",
                     "call_1", "stop", "toolUse", "error", "delivery-mirror", "openclaw:prompt-error"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def maybe(value_strategy):
    """A field's plausible value, or any JSON value (a wrong type), or (None ->) absent."""
    return st.one_of(value_strategy, json_values)


blocks = st.fixed_dictionaries(
    {},
    optional={
        "type": maybe(st.sampled_from(["text", "toolCall", "thinking", "image"])),
        "text": maybe(st.text(max_size=30)),
        "id": maybe(st.sampled_from(["call_1", "call_2", "call_3"])),
        "name": maybe(st.sampled_from(["exec", "Bash", "read", "process", " Exec ", "", "command_status"])),
        "arguments": maybe(st.one_of(
            st.fixed_dictionaries({"command": st.sampled_from(["ls", "npm test"])}),
            st.fixed_dictionaries({"action": st.sampled_from(["poll", "log"]), "sessionId": st.just("s")}),
            st.just('{"command":"ls"}'),
        )),
    },
)
usages = st.fixed_dictionaries(
    {},
    optional={
        name: maybe(st.integers(min_value=0, max_value=10**7))
        for name in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    } | {"cost": maybe(st.fixed_dictionaries({"total": maybe(st.floats(0, 10))}))},
)
details = st.fixed_dictionaries(
    {},
    optional={
        "status": maybe(st.sampled_from(["completed", "failed", "running", "error", "approval-pending", "blocked"])),
        "exitCode": maybe(st.integers(-1, 255)),
        "aggregated": maybe(st.text(max_size=20)),
        "tool": maybe(st.just("exec")),
        "error": maybe(st.text(max_size=20)),
        "tail": maybe(st.text(max_size=10)),
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": maybe(st.sampled_from(["user", "assistant", "toolResult", "custom", "bashExecution", "x"])),
        "content": maybe(st.one_of(st.text(max_size=20), st.lists(maybe(blocks), max_size=4))),
        "usage": maybe(usages),
        "stopReason": maybe(st.sampled_from(["stop", "toolUse", "error", "aborted", "length"])),
        "errorMessage": maybe(st.text(max_size=20)),
        "model": maybe(st.sampled_from(["m1", "delivery-mirror", "gateway-injected"])),
        "provider": maybe(st.sampled_from(["anthropic", "openclaw"])),
        "toolCallId": maybe(st.sampled_from(["call_1", "call_2", "call_3"])),
        "toolName": maybe(st.sampled_from(["exec", "read", "process"])),
        "details": maybe(details),
        "isError": maybe(st.booleans()),
        "timestamp": maybe(st.integers(0, 2**45)),
        "__openclaw": maybe(st.fixed_dictionaries({}, optional={"runId": maybe(st.sampled_from(["r1", " ", "r2"]))})),
    },
)
entries = st.fixed_dictionaries(
    {},
    optional={
        "type": maybe(st.sampled_from(["session", "message", "compaction", "model_change", "custom", "label",
                                       "branch_summary", "custom_message", "thinking_level_change", "mystery"])),
        "id": maybe(st.text("0123456789abcdef", min_size=8, max_size=8)),
        "parentId": maybe(st.none()),
        "timestamp": maybe(st.sampled_from(["2026-03-01T12:00:00.000Z", "2026-03-01", "not a date", ""])),
        "version": maybe(st.integers(0, 5)),
        "message": maybe(messages),
        "customType": maybe(st.sampled_from(["openclaw:prompt-error", "model-snapshot"])),
        "data": maybe(st.fixed_dictionaries({}, optional={"error": json_values, "runId": json_values,
                                                          "provider": json_values, "model": json_values})),
        "tokensBefore": maybe(st.integers(0, 10**6)),
        "fromHook": maybe(st.booleans()),
        "provider": json_values,
        "modelId": json_values,
    },
)


def dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


# --- properties ---------------------------------------------------------------------------------------


@FUZZ
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes(workdir, data):
    consume(workdir / "bytes.jsonl", data)


@FUZZ
@given(lines=st.lists(json_values, max_size=12), header=st.booleans())
def test_arbitrary_json_lines(workdir, lines, header):
    data = (HEADER if header else b"") + b"".join(dumps(v) + b"\n" for v in lines)
    consume(workdir / "json.jsonl", data)


@FUZZ
@given(lines=st.lists(entries, max_size=15), header=st.booleans(), array=st.booleans())
def test_entry_shaped_lines_with_random_field_types(workdir, lines, header, array):
    if array:  # the same entries as one exported JSON array
        data = dumps(([json.loads(HEADER)] if header else []) + lines)
    else:
        data = (HEADER if header else b"") + b"".join(dumps(v) + b"\n" for v in lines)
    consume(workdir / "entries.jsonl", data)


@FUZZ
@given(
    picks=st.lists(st.integers(0, len(FIXTURE_LINES) - 1), min_size=1, max_size=25),
    cuts=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 40), st.binary(max_size=6)), max_size=4),
    gz=st.booleans(),
    gz_cut=st.integers(0, 200),
)
def test_mutated_real_lines(workdir, picks, cuts, gz, gz_cut):
    """Real fixture lines, shuffled and damaged (bytes deleted / replaced), optionally gzipped and cut."""
    data = bytearray(HEADER + b"".join(FIXTURE_LINES[i] for i in picks))
    for at, length, insert in cuts:
        at %= len(data) + 1
        data[at:at + length] = insert
    data = bytes(data)
    if gz:
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
            f.write(data)
        data = buf.getvalue()
        data = data[: max(0, len(data) - gz_cut)]
    consume(workdir / "mutated.jsonl", data)
