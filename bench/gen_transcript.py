"""Write a synthetic but realistic OpenClaw v3 session transcript (JSONL) of about N MB.

    python bench/gen_transcript.py --size-mb 300 --out bench/data/t300.jsonl [--seed 1]

The file is streamed to disk (never held in memory) and is deterministic for a given seed and
size. Shape (see /work/shared/spec/transcript-format.md):

- a v3 `session` header, then runs: a `user` message, assistant turns (thinking block of a few KB,
  a short text block, 1-3 toolCall blocks: exec `{command}`, read `{path}`, write `{path, content}`,
  edit, process poll), each answered by toolResult messages (exec details
  `{status:"completed", exitCode, durationMs, aggregated, cwd}`, read / write / process results),
  and a final `stopReason:"stop"` reply;
- usage with a growing context (cacheRead), cache writes, Anthropic-like costs; a compaction when
  the context passes ~170k tokens; the odd error retry, model snapshot, thinking-level change;
- mostly small lines (median about 1 KB) and about one line in 60 a large tool output of
  50-500 KB (a `cat` of a log or source file, a test run; text with newlines, some non-ASCII);
- repeated commands across runs and "stuck" stretches (the same command, the same output, 4-16
  times; polling a background process with no new output) so the loop detectors warn all through
  the file, and one 40-call doom loop at about 92% of the file that a default config blocks.

Speed: the text is sliced out of corpora built once per seed and serialised with orjson, so
300 MB takes a few seconds. "MB" is 10**6 bytes here and in bench/run.py.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import sys
import time

import orjson

MB = 1_000_000
LARGE_EVERY = 60  # about one line in this many is a large tool output
LARGE_MIN, LARGE_MAX = 50_000, 500_000  # bytes of the large line

_WORDS = (
    "the a an of to in is it that for on with as this be by are was from or at not have but which "
    "file config service request response error timeout retry cache token context session agent "
    "model output input build test deploy server client port socket process memory disk network "
    "check verify update install run start stop restart log status health endpoint database query "
    "index schema migration branch commit merge patch diff module package dependency version path "
    "directory permission user group container image volume cluster node pod queue worker job task "
    "should would could might need want try see look find fix change add remove keep use call read "
    "write open close parse load save send receive return fail pass succeed wait poll again still "
    "now then first next last maybe probably likely actually instead however because so if when"
).split()
# a little non-ASCII, as real transcripts have (accents, CJK, symbols, emoji)
_UNICODE = ["café", "naïve", "Zürich", "größe", "日本語", "中文测试", "привет", "→", "✓", "✗", "…", "—", "€", "🚀", "🔥", "µs"]
_CWD = "/home/node/.openclaw/workspace"
_PATHS = [
    "src/server.ts", "src/index.ts", "src/routes/api.ts", "src/db/pool.ts", "package.json", "tsconfig.json",
    "README.md", "scripts/deploy.sh", "config/app.yaml", "tests/api.test.ts", "src/worker/queue.py",
    "app/main.py", "app/models.py", "requirements.txt", "Dockerfile", "docker-compose.yml", ".env.example",
    "src/components/Header.tsx", "src/lib/cache.ts", "notes/TODO.md", "logs/app.log", "MEMORY.md",
]
_SMALL_CMDS = [
    "git status", "git diff --stat", "ls -la", "ls src", "pwd", "cat package.json", "npm run build",
    "npm test -- --runInBand", "python -m pytest -q", "curl -s http://localhost:3000/health",
    "docker ps", "docker compose logs --tail 20 api", "node --version", "df -h", "free -m",
    "grep -rn TODO src | head -20", "tail -n 30 logs/app.log", "systemctl status nginx --no-pager",
    "pip install -r requirements.txt", "git log --oneline -5", "wc -l src/*.ts", "env | sort | head",
]
_STUCK_CMDS = [
    ("curl -s http://localhost:8080/api/status", "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused", 7),
    ("npm test", "FAIL tests/api.test.ts\n  ● api › returns 200\n\n    expect(received).toBe(expected)\n\n    Expected: 200\n    Received: 500\n\nTests: 1 failed, 11 passed, 12 total", 1),
    ("docker compose up -d db && sleep 2 && pg_isready -h localhost", "localhost:5432 - no response", 2),
    ("cat /tmp/build.lock", "cat: /tmp/build.lock: No such file or directory", 1),
    ("python manage.py migrate", "django.db.utils.OperationalError: could not connect to server: Connection refused", 1),
    ("git push origin main", "error: failed to push some refs to 'origin'\nhint: Updates were rejected because the remote contains work that you do not have locally.", 1),
]
_BIG_CMDS = [
    "cat logs/app.log", "journalctl -u api --no-pager -n 5000", "cat dist/bundle.js", "npm test 2>&1",
    "docker compose logs api", "cat data/export.csv", "find / -name '*.conf' 2>/dev/null", "kubectl logs deploy/api",
]
_MODELS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages", (3.0, 15.0, 0.30, 3.75)),
    ("anthropic", "claude-opus-4-1", "anthropic-messages", (15.0, 75.0, 1.50, 18.75)),
    ("opencode", "minimax-m2.5-free", "anthropic-messages", (0.0, 0.0, 0.0, 0.0)),
]
_POLL_NAMES = ["delta-shore", "dawn-valley", "quiet-ember", "amber-field"]


class _Corpus:
    """Text built once per seed; every piece of a line is a cheap slice of one of these."""

    def __init__(self, rng: random.Random):
        self.prose = self._prose(rng, 200_000)
        self.log = self._log(rng, 1_200_000)
        self.code = self._code(rng, 200_000)
        self.signatures = [base64.b64encode(rng.randbytes(rng.randint(200, 700))).decode() for _ in range(64)]

    @staticmethod
    def _prose(rng: random.Random, size: int) -> str:
        out, n = [], 0
        words, uni = _WORDS, _UNICODE
        while n < size:
            k = rng.randint(6, 22)
            sentence = " ".join(rng.choice(words) for _ in range(k))
            if rng.random() < 0.05:
                sentence += " " + rng.choice(uni)
            sentence = sentence[0].upper() + sentence[1:] + rng.choice((". ", ". ", "? ", ".\n\n", ": "))
            out.append(sentence)
            n += len(sentence)
        return "".join(out)

    @staticmethod
    def _log(rng: random.Random, size: int) -> str:
        out, n = [], 0
        levels = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
        t = 1_771_000_000
        words, uni = _WORDS, _UNICODE
        while n < size:
            t += rng.randint(0, 3)
            line = (
                f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t))}.{rng.randint(0, 999):03d}Z "
                f"{rng.choice(levels):5} [{rng.choice(('api', 'worker', 'db', 'http', 'cache'))}] "
                + " ".join(rng.choice(words) for _ in range(rng.randint(4, 16)))
            )
            r = rng.random()
            if r < 0.04:
                line += f" user={rng.choice(uni)} latency={rng.randint(1, 900)}µs"
            elif r < 0.10:
                line += f' path="/api/v1/{rng.choice(words)}" status={rng.choice((200, 200, 404, 500))}\t{{"ms": {rng.randint(1, 999)}}}'
            elif r < 0.12:
                line += "\n    at Object.<anonymous> (/app/src/server.ts:42:13)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)"
            line += "\n"
            out.append(line)
            n += len(line)
        return "".join(out)

    @staticmethod
    def _code(rng: random.Random, size: int) -> str:
        out, n, i = [], 0, 0
        words = _WORDS
        while n < size:
            i += 1
            a, b = rng.choice(words), rng.choice(words)
            chunk = (
                f"export async function {a}{b.capitalize()}{i}(req: Request, res: Response) {{\n"
                f"  const {a} = await db.query(\"SELECT * FROM {b} WHERE id = $1\", [req.params.id]);\n"
                f"  if (!{a}) {{\n    return res.status(404).json({{ error: \"{b} not found\" }});\n  }}\n"
                f"  // {' '.join(rng.choice(words) for _ in range(rng.randint(3, 10)))}\n"
                f"  return res.json({{ {a}, ok: true }});\n}}\n\n"
            )
            out.append(chunk)
            n += len(chunk)
        return "".join(out)

    def slice(self, rng: random.Random, text: str, length: int, lines: bool = False) -> str:
        """About `length` characters of `text`, starting at a random point (a line start if `lines`)."""
        length = min(length, len(text) - 1)
        start = rng.randrange(0, len(text) - length)
        if start:  # begin at a line start (`lines`) or at least at a word start
            cut = text.find("\n" if lines else " ", start, start + 2000)
            if cut >= 0 and cut + 1 + length <= len(text):
                start = cut + 1
        return text[start : start + length]


class _Writer:
    """Builds the entries of one session and writes them, one JSON line each, as they are made."""

    stuck_rate = 0.25  # share of runs that get stuck on one call for 4-16 repeats
    doom_times = 40  # calls of the doom loop

    def __init__(self, out, seed: int, target: int, corpus: _Corpus | None = None):
        self.out = out
        self.rng = rng = random.Random(seed)
        # a corpus can be shared by many small sessions (bench/gen_night.py): building one takes ~0.15 s
        self.corpus = corpus if corpus is not None else _Corpus(rng)
        self.target = target
        self.written = 0
        self.lines = 0
        self.parent: str | None = None
        self.ms = 1_771_996_735_857 + rng.randint(0, 10**9)
        self.call_n = 0
        self.context = 12_000
        self.model = _MODELS[0]
        self.next_large = rng.randint(LARGE_EVERY // 2, LARGE_EVERY * 3 // 2)
        self.seen_cmds: list[str] = []
        # no compaction inside a short stuck stretch: the post-compaction guard would block the
        # session there, and the bench wants the detectors working through the whole file
        self.quiet_compaction = False

    # --- plumbing ---------------------------------------------------------------------------------

    def _id(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def _iso(self) -> str:
        ms = self.ms
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"

    def _tick(self, lo: int, hi: int) -> None:
        self.ms += self.rng.randint(lo, hi)

    def _emit(self, obj: dict) -> None:
        data = orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
        self.out.write(data)
        self.written += len(data)
        self.lines += 1

    def _entry(self, type_: str, **fields) -> str:
        eid = self._id()
        obj = {"type": type_, "id": eid, "parentId": self.parent, "timestamp": self._iso()}
        obj.update(fields)
        self._emit(obj)
        self.parent = eid
        return eid

    def _large_due(self) -> bool:
        return self.lines >= self.next_large

    def _large_done(self) -> None:
        self.next_large = self.lines + self.rng.randint(LARGE_EVERY // 2, LARGE_EVERY * 3 // 2)

    # --- the session ------------------------------------------------------------------------------

    def write(self) -> None:
        rng = self.rng
        sid = f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-a{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}"
        self._emit({"type": "session", "version": 3, "id": sid, "timestamp": self._iso(), "cwd": _CWD})
        self._entry("model_change", provider=self.model[0], modelId=self.model[1])
        self._entry("thinking_level_change", thinkingLevel="medium")
        # Stuck stretches stay under the critical threshold (20) so the detectors keep working all
        # through the file (warnings fire); one real doom loop near the end gets the session blocked.
        doom_at = int(self.target * 0.92)
        while self.written < doom_at:
            self._run()
        self._run(doom=True)
        while self.written < self.target:
            self._run()

    def _run(self, doom: bool = False) -> None:
        rng = self.rng
        self._tick(30_000, 900_000)
        if rng.random() < 0.08:
            self.model = rng.choice(_MODELS)
            self._entry("custom", customType="model-snapshot",
                        data={"timestamp": self.ms, "provider": self.model[0], "modelApi": self.model[2], "modelId": self.model[1]})
        text = self.corpus.slice(rng, self.corpus.prose, rng.randint(40, 600))
        self._entry("message", message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self.ms})
        if doom:
            self._turn()
            self._stuck(times=self.doom_times)
            self._final()
            return
        if rng.random() < 0.03:
            self._prompt_error()
            return
        stuck = rng.random() < self.stuck_rate
        turns = rng.randint(1, 8)
        for i in range(turns):
            if stuck and i == turns // 2:
                self._stuck(rng.randint(4, 16))
            self._turn()
        self._final()

    def _usage(self, output: int) -> dict:
        rng = self.rng
        inp = rng.randint(1, 40) if self.model[0] == "anthropic" else rng.randint(200, 3000)
        write = rng.randint(200, 6000)
        read = self.context
        self.context += write + rng.randint(0, 800)
        pi, po, pr, pw = self.model[3]
        c_in, c_out, c_read, c_write = inp * pi / 1e6, output * po / 1e6, read * pr / 1e6, write * pw / 1e6
        return {
            "input": inp, "output": output, "cacheRead": read, "cacheWrite": write,
            "totalTokens": inp + output + read + write,
            "cost": {"input": c_in, "output": c_out, "cacheRead": c_read, "cacheWrite": c_write,
                     "total": c_in + c_out + c_read + c_write},
        }

    def _assistant(self, content: list, stop: str, output: int) -> None:
        provider, model, api, _ = self.model
        self._tick(2_000, 40_000)
        self._entry("message", message={
            "role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
            "usage": self._usage(output), "stopReason": stop, "responseId": f"msg_{self.rng.getrandbits(96):024x}",
            "timestamp": self.ms,
        })
        if self.context > 170_000 and not self.quiet_compaction:
            self._compaction()

    def _thinking(self) -> dict:
        rng, c = self.rng, self.corpus
        n = int(rng.lognormvariate(7.4, 0.7))  # median ~1.6 KB, "a few KB" typical, a tail to ~15 KB
        return {"type": "thinking", "thinking": c.slice(rng, c.prose, min(n, 20_000)), "thinkingSignature": rng.choice(c.signatures)}

    def _turn(self) -> None:
        rng, c = self.rng, self.corpus
        content = []
        if rng.random() < 0.85:
            content.append(self._thinking())
        if rng.random() < 0.6:
            content.append({"type": "text", "text": c.slice(rng, c.prose, rng.randint(20, 400))})
        k = rng.choice((1, 1, 1, 1, 2, 2, 3))
        calls = [self._call(large=(j == 0 and self._large_due())) for j in range(k)]
        content.extend(call for call, _ in calls)
        self._assistant(content, "toolUse", rng.randint(40, 1500))
        if rng.random() < 0.02:  # a failover retry before the results come in, as real files show
            self._retry_error()
        for call, result in calls:
            self._tick(20, 8_000)
            result(call)

    def _call(self, large: bool):
        rng = self.rng
        self.call_n += 1
        cid = f"toolu_{rng.getrandbits(96):024x}"
        if large:
            self._large_done()
            if rng.random() < 0.6:
                cmd = rng.choice(_BIG_CMDS)
                return self._block(cid, "exec", {"command": cmd}), lambda call: self._exec_result(call, cmd, big=True)
            path = rng.choice(("logs/app.log", "dist/bundle.js", "data/export.csv", "src/generated/schema.ts"))
            return self._block(cid, "read", {"path": path}), lambda call: self._read_result(call, path, big=True)
        r = rng.random()
        if r < 0.55:
            if self.seen_cmds and rng.random() < 0.3:
                cmd = rng.choice(self.seen_cmds)  # the same command again, later
            else:
                cmd = rng.choice(_SMALL_CMDS)
                if rng.random() < 0.5:
                    cmd += f" {rng.choice(_PATHS)}" if not cmd.startswith(("curl", "git log")) else ""
                if len(self.seen_cmds) < 200:
                    self.seen_cmds.append(cmd)
            return self._block(cid, "exec", {"command": cmd}), lambda call: self._exec_result(call, cmd)
        if r < 0.78:
            path = rng.choice(_PATHS)
            return self._block(cid, "read", {"path": path}), lambda call: self._read_result(call, path)
        if r < 0.90:
            path = rng.choice(_PATHS)
            body = self.corpus.slice(rng, self.corpus.code, rng.randint(200, 3000), lines=True)
            return (self._block(cid, "write", {"path": path, "content": body}),
                    lambda call: self._result(call, f"Successfully wrote {len(body.encode())} bytes to {path}"))
        path = rng.choice(_PATHS)
        old = self.corpus.slice(rng, self.corpus.code, rng.randint(40, 300), lines=True)
        new = self.corpus.slice(rng, self.corpus.code, rng.randint(40, 300), lines=True)
        return (self._block(cid, "edit", {"path": path, "oldText": old, "newText": new}),
                lambda call: self._result(call, f"Successfully replaced text in {path}."))

    def _block(self, cid: str, name: str, args: dict) -> dict:
        return {"type": "toolCall", "id": cid, "name": name, "arguments": args}

    def _result(self, call: dict, text: str, details: dict | None = None, is_error: bool = False) -> None:
        msg = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
               "content": [{"type": "text", "text": text}]}
        if details is not None:
            msg["details"] = details
        msg["isError"] = is_error
        msg["timestamp"] = self.ms
        self._entry("message", message=msg)

    def _exec_output(self, cmd: str, big: bool) -> str:
        rng, c = self.rng, self.corpus
        if big:
            n = rng.randint(LARGE_MIN // 2, LARGE_MAX // 2)  # the line holds the text twice (aggregated)
            src = c.code if ("bundle" in cmd or rng.random() < 0.2) else c.log
            return c.slice(rng, src, n, lines=True)
        r = rng.random()
        if r < 0.15:
            return ""
        if r < 0.6:
            return c.slice(rng, c.log, rng.randint(60, 900), lines=True)
        return c.slice(rng, c.prose, rng.randint(30, 600))

    def _exec_result(self, call: dict, cmd: str, big: bool = False, output: str | None = None, code: int | None = None) -> None:
        rng = self.rng
        if output is None:
            output = self._exec_output(cmd, big)
        if code is None:
            code = 0 if rng.random() < 0.85 else rng.choice((1, 1, 2, 127))
        text = output or "(no output)"
        if code:
            text += f"\n\n(Command exited with code {code})"
        details = {"status": "completed", "exitCode": code, "durationMs": rng.randint(5, 20_000),
                   "aggregated": output, "cwd": _CWD}
        self._result(call, text, details)

    def _read_result(self, call: dict, path: str, big: bool = False) -> None:
        rng, c = self.rng, self.corpus
        if big:
            src = c.log if path.endswith((".log", ".csv")) else c.code
            text = c.slice(rng, src, rng.randint(LARGE_MIN, LARGE_MAX), lines=True)
        elif rng.random() < 0.05:
            self._result(call, f'{{"status":"error","tool":"read","error":"ENOENT: no such file or directory, access \'{_CWD}/{path}\'"}}',
                         {"status": "error", "tool": "read", "error": f"ENOENT: no such file or directory, access '{_CWD}/{path}'"})
            return
        else:
            text = c.slice(rng, c.code, rng.randint(100, 2500), lines=True)
        self._result(call, text)

    def _stuck(self, times: int) -> None:
        """A loop: one command, one output, many turns; or polling a process that never finishes."""
        rng, c = self.rng, self.corpus
        self.quiet_compaction = times < 20
        try:
            self._stuck_calls(times)
        finally:
            self.quiet_compaction = False

    def _stuck_calls(self, times: int) -> None:
        rng, c = self.rng, self.corpus
        if times < 20 and rng.random() < 0.35:
            name = rng.choice(_POLL_NAMES)
            cmd = "npm run dev"
            cid = f"toolu_{rng.getrandbits(96):024x}"
            call = self._block(cid, "exec", {"command": cmd, "background": True, "yieldMs": 10_000})
            self._assistant([self._thinking(), call], "toolUse", rng.randint(40, 600))
            tail = c.slice(rng, c.log, 300, lines=True)
            self._result(call, f"Command still running (session {name}, pid {rng.randint(1000, 60000)}). Use process (list/poll/log/write/kill/clear/remove) for follow-up.",
                         {"status": "running", "sessionId": name, "pid": rng.randint(1000, 60000), "startedAt": self.ms, "cwd": _CWD, "tail": tail})
            for _ in range(times):
                cid = f"toolu_{rng.getrandbits(96):024x}"
                call = self._block(cid, "process", {"action": "poll", "sessionId": name})
                content = [call] if rng.random() < 0.5 else [self._thinking(), call]
                self._assistant(content, "toolUse", rng.randint(30, 300))
                self._tick(5_000, 15_000)
                self._result(call, "(no new output)\n\nProcess still running.",
                             {"status": "running", "sessionId": name, "aggregated": tail, "name": cmd, "retryInMs": 5000})
            return
        cmd, out, code = rng.choice(_STUCK_CMDS)
        for _ in range(times):
            cid = f"toolu_{rng.getrandbits(96):024x}"
            call = self._block(cid, "exec", {"command": cmd})
            content = [self._thinking(), call] if rng.random() < 0.7 else [call]
            self._assistant(content, "toolUse", rng.randint(40, 600))
            self._tick(200, 5_000)
            self._exec_result(call, cmd, output=out, code=code)

    def _final(self) -> None:
        rng, c = self.rng, self.corpus
        content = []
        if rng.random() < 0.5:
            content.append(self._thinking())
        content.append({"type": "text", "text": c.slice(rng, c.prose, rng.randint(60, 1500))})
        self._assistant(content, "stop", rng.randint(30, 900))

    def _retry_error(self) -> None:
        provider, model, api, _ = self.model
        zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
        self._entry("message", message={
            "role": "assistant", "content": [], "api": api, "provider": provider, "model": model, "usage": zero,
            "stopReason": "error", "errorMessage": self.rng.choice(("terminated", "Connection error.", "429 rate_limit_error")),
            "timestamp": self.ms,
        })

    def _prompt_error(self) -> None:
        provider, model, api, _ = self.model
        self._entry("custom", customType="openclaw:prompt-error", data={
            "timestamp": self.ms, "runId": f"{self.rng.getrandbits(64):016x}", "sessionId": "bench",
            "provider": provider, "model": model, "api": api,
            "error": self.rng.choice(("aborted", "request timed out", "LLM idle timeout (60s): no response from model")),
        })

    def _compaction(self) -> None:
        rng, c = self.rng, self.corpus
        before = self.context
        self.context = rng.randint(15_000, 30_000)
        self._entry("compaction", summary=c.slice(rng, c.prose, rng.randint(2_000, 8_000)),
                    firstKeptEntryId=self.parent, tokensBefore=before, fromHook=rng.random() < 0.3)


def generate(path: str, size_mb: float, seed: int = 1) -> tuple[int, int]:
    """Write the transcript to `path` (via a temporary name, renamed at the end). Returns (bytes, lines)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb", buffering=1 << 20) as out:
            writer = _Writer(out, seed, int(size_mb * MB))
            writer.write()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return writer.written, writer.lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, required=True, help="approximate size in MB (10**6 bytes)")
    parser.add_argument("--out", required=True, help="output path (.jsonl)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1); same seed + size, same file")
    args = parser.parse_args(argv)
    if args.size_mb <= 0:
        parser.error("--size-mb must be positive")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    t0 = time.perf_counter()
    size, lines = generate(args.out, args.size_mb, args.seed)
    dt = time.perf_counter() - t0
    print(f"wrote {args.out}: {size / MB:.1f} MB, {lines:,} lines in {dt:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
