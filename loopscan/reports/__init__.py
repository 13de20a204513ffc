"""Reports: documents built from analysis results, redacted, then rendered in a format.

Every format renders the same redacted document, so a secret removed from one is removed from all.
"""

from __future__ import annotations

from typing import Any

from loopscan.reports.redact import redact_document


# parts of an analyze document that hold no transcript text
_OWN = frozenset({"schema", "config", "summary", "tokens"})


def analyze_document(result: Any, redact: bool = True) -> dict[str, Any]:
    doc = result.to_json()
    return redact_document(doc, _OWN) if redact else doc
