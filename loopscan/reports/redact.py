"""Secret redaction: every report format is made from a redacted document.

Transcripts hold whatever commands printed: API keys, tokens, passwords. `redact_text` replaces the
secret part of each match with `[REDACTED]`, keeping enough context (the header or variable name)
for a reader to see what was there. `redact_document` applies it to every string of a report.
"""

from __future__ import annotations

import re
from typing import Any

MARK = "[REDACTED]"

# (pattern, replacement); replacements keep a named prefix group where there is one.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*)", re.S),
     f"-----BEGIN PRIVATE KEY----- {MARK} -----END PRIVATE KEY-----"),
    (re.compile(r"\b(?P<keep>[a-z][a-z0-9+.-]*://[^/\s:@\"']+):[^/\s@\"']+@", re.I), rf"\g<keep>:{MARK}@"),
    (re.compile(r"(?P<keep>\bAuthorization\b[\"']?\s*[:=]\s*[\"']?)(?:(?:Bearer|Basic|Token|Bot)\s+)?[^\s\"',;]+", re.I),
     rf"\g<keep>{MARK}"),
    (re.compile(r"(?P<keep>\bBearer\s+)[A-Za-z0-9._~+/=-]{6,}", re.I), rf"\g<keep>{MARK}"),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{8,}"), MARK),
    (re.compile(r"\bsk-(?:proj-|svcacct-|or-v1-)?[A-Za-z0-9_-]{16,}"), MARK),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), MARK),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{8,}"), MARK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MARK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), MARK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"), MARK),
    # name=value / name: value / "name": "value" for password-, token- and key-like names
    (re.compile(
        r"(?P<keep>[\"']?\b[A-Za-z0-9_.-]*(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
        r"private[_-]?key|client[_-]?secret)[A-Za-z0-9_.-]*[\"']?\s*(?:=|:)\s*[\"']?)"
        r"(?!\[REDACTED\])(?!\d+\b)[^\s\"'&,;}]{3,}",
        re.I,
    ), rf"\g<keep>{MARK}"),
    # --password VALUE, --token VALUE (space-separated flags)
    (re.compile(r"(?P<keep>--(?:password|pass|passwd|token|api-key|apikey|secret|access-key)\s+)(?!\[REDACTED\])[^\s\"']+", re.I),
     rf"\g<keep>{MARK}"),
    # mysql / mariadb -pSECRET
    (re.compile(r"(?P<keep>\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)(?!\[REDACTED\])[^\s\"']+"),
     rf"\g<keep>{MARK}"),
]


# Every rule above needs one of these anchors: a string without any cannot hold a secret.
_MAYBE = re.compile(r"sk-|gh[pousr]_|github_pat_|xox|AKIA|ASIA|AIza|eyJ|bearer|authorization|pass|pwd|secret|"
                    r"token|key|://|mysql|mariadb", re.I)


def redact_text(text: str) -> str:
    if not _MAYBE.search(text):
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_document(value: Any, skip: frozenset[str] = frozenset()) -> Any:
    """A copy of a JSON-like document with every string value redacted.

    Keys are loopscan's own names and are kept; `skip` names top-level parts made only of loopscan's
    own numbers and names (token series, the resolved config), left as they are."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: v if k in skip else redact_document(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_document(v) for v in value]
    return value
