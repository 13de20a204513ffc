"""The outcome hash of a tool result (detector.md section 4), per profile.

`classify` decides what the detector saw (section 5b); `outcome_hash` turns a result into the
`resultHash` OpenClaw would have recorded, plus the unknown-tool name a thrown error names.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from loopscan.engine.hashing import UNDEFINED, digest
from loopscan.engine.noise import mask_failure, mask_volatile
from loopscan.engine.profiles import Profile

# JavaScript's String.prototype.trim() set (WhiteSpace + LineTerminator).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

_UNKNOWN_TOOL = (
    re.compile(r"unknown tool[:\s]+[\"']?([a-z0-9_.-]+)[\"']?", re.IGNORECASE),
    re.compile(r"tool\s+[\"']?([a-z0-9_.-]+)[\"']?\s+(?:not found|is not available)", re.IGNORECASE),
)
SEND_LIKE_MESSAGE_ACTIONS = frozenset(
    {"send", "broadcast", "reply", "thread-reply", "sendWithEffect", "sendAttachment", "upload-file", "sticker", "poll"}
)
VOLATILE_SEND_KEYS = frozenset(
    {
        "messageId", "message_id", "messageIds", "platformMessageId", "platformMessageIds", "fileId",
        "file_id", "fileKey", "pollId", "poll_id", "receipt", "runId", "idempotencyKey", "ts",
        "timestamp", "sentAt", "deliveredAt", "createdAt",
    }
)
# Channel plugins that dock a `send`-style tool of their own (OpenClaw's messaging tool send actions).
PROVIDER_SEND_TOOLS = frozenset(
    {"telegram", "discord", "slack", "whatsapp", "signal", "imessage", "feishu", "lark", "msteams", "matrix",
     "googlechat", "mattermost", "line", "zalo", "nostr", "bluebubbles"}
)
PROVIDER_SEND_ACTIONS = frozenset({"send", "sendMessage", "send_message", "reply", "sendAttachment"})


class Outcome(NamedTuple):
    result_hash: str | None
    unknown_tool: str | None = None


VETO = "veto"  # 2026.8: the detector's own veto, recorded as the outcome it vetoed (see Replay)
NOT_EVALUATED = "rejected"  # 5a: the agent loop rejected the call before OpenClaw's wrapper ran
THROWN = "thrown"  # 5b: the tool threw; OpenClaw's adapter wrote {status:error, tool, error}
NORMAL = "normal"  # 5c


def classify(details: Any, is_error: bool) -> str:
    if isinstance(details, dict):
        if details.get("status") == "error" and isinstance(details.get("error"), str) and isinstance(
            details.get("tool"), str
        ):
            return THROWN
        if is_error and not details:
            return NOT_EVALUATED
        return NORMAL
    return NOT_EVALUATED if is_error else NORMAL


def join_text(texts: tuple[str, ...]) -> str:
    """OpenClaw's extractTextContent: text blocks joined with newlines, trimmed."""
    if not texts:
        return ""
    return (texts[0] if len(texts) == 1 else "\n".join(texts)).strip(JS_WHITESPACE)


def unknown_tool_name(message: str) -> str | None:
    raw = message.strip(JS_WHITESPACE)
    if not raw:
        return None
    for pattern in _UNKNOWN_TOOL:
        match = pattern.search(raw)
        if match:
            return match.group(1).strip().lower() or None
    return None


def thrown_outcome(message: str, profile: Profile) -> Outcome:
    return Outcome("error:" + digest(message), unknown_tool_name(message) if profile.unknown_tool_detector else None)


def update_plan_shape(value: Any) -> Any:
    """The status-pattern fingerprint OpenClaw reduces update_plan params and details to."""
    if not isinstance(value, dict):
        return value
    plan = value.get("plan") if isinstance(value.get("plan"), list) else []
    statuses, presence = [], []
    for entry in plan:
        if isinstance(entry, dict):
            status = entry.get("status")
            statuses.append(status if isinstance(status, str) else None)
            step = entry.get("step")
            presence.append(isinstance(step, str) and bool(step.strip(JS_WHITESPACE)))
        else:
            statuses.append(None)
            presence.append(False)
    explanation = value.get("explanation")
    return {
        "planLength": len(plan),
        "statuses": statuses,
        "stepPresence": presence,
        "hasExplanation": isinstance(explanation, str) and bool(explanation.strip(JS_WHITESPACE)),
    }


def args_hash(tool: str, params: Any, profile: Profile) -> str:
    """`toolName:sha256(stableStringify(params))` (update_plan reduced to its shape in 2026.6+)."""
    if tool == "update_plan" and profile.update_plan_shape:
        params = update_plan_shape(params)
    return f"{tool}:{digest(params)}"


def is_known_poll(tool: str, params: Any) -> bool:
    if tool == "command_status":
        return True
    return tool == "process" and isinstance(params, dict) and params.get("action") in ("poll", "log")


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _exec_hash(details: dict, texts: tuple[str, ...], profile: Profile) -> str | None:
    status = _str_or_none(details.get("status"))
    if not status:
        return None
    if status == "running":
        return digest({"status": status, "tail": _str_or_none(details.get("tail")) or ""})
    if status in ("completed", "failed"):
        exit_code = details.get("exitCode")
        aggregated = details.get("aggregated")
        aggregated = aggregated.strip(JS_WHITESPACE) if isinstance(aggregated, str) else ""
        output = aggregated or join_text(texts)
        if profile.noise_tolerant_exec:
            output = mask_volatile(output)
        elif profile.exec_failure_identity and status == "failed":
            output = mask_failure(output)
        return digest(
            {
                "status": status,
                "exitCode": exit_code if isinstance(exit_code, (int, float)) and not isinstance(exit_code, bool) else None,
                "timedOut": details.get("timedOut") is True,
                "output": output,
            }
        )
    if status in ("approval-pending", "approval-unavailable"):
        return digest(
            {
                "status": status,
                "reason": _str_or_none(details.get("reason")),
                "host": _str_or_none(details.get("host")),
                "command": _str_or_none(details.get("command")) or "",
                "warningText": _str_or_none(details.get("warningText")) or "",
            }
        )
    return None


def _is_send(tool: str, params: Any) -> bool:
    if tool == "sessions_send":
        return True
    args = params if isinstance(params, dict) else {}
    action = _str_or_none(args.get("action"))  # any JSON value may sit here: only a string names an action
    if tool == "message":
        return action in SEND_LIKE_MESSAGE_ACTIONS
    return tool in PROVIDER_SEND_TOOLS and action in PROVIDER_SEND_ACTIONS


def _is_message_object(value: dict) -> bool:
    return (
        isinstance(value.get("id"), str)
        and isinstance(value.get("text"), str)
        and (
            isinstance(value.get("direction"), str)
            or isinstance(value.get("senderId"), str)
            or isinstance(value.get("accountId"), str)
            or isinstance(value.get("conversation"), dict)
        )
    )


def strip_send_ids(value: Any) -> Any:
    if isinstance(value, list):
        return [strip_send_ids(v) for v in value]
    if not isinstance(value, dict):
        return value
    drop_id = _is_message_object(value)
    return {
        k: strip_send_ids(v)
        for k, v in value.items()
        if k not in VOLATILE_SEND_KEYS and not (k == "id" and drop_id)
    }


def outcome_hash(tool: str, params: Any, details: Any, texts: tuple[str, ...], is_error: bool, profile: Profile) -> Outcome:
    """The outcome OpenClaw records for a result the detector saw (classify() != NOT_EVALUATED)."""
    if classify(details, is_error) == THROWN:
        return thrown_outcome(details["error"], profile)
    details = details if isinstance(details, dict) else {}
    if details.get("status") == "blocked" and details.get("deniedReason") == "tool-loop":
        if profile.loop_veto_unhashed:
            return Outcome(None)
        if profile.veto_extends_streak:
            return Outcome(VETO)
    if tool == "exec" and profile.exec_outcome_hash:
        hashed = _exec_hash(details, texts, profile)
        if hashed:
            return Outcome(hashed)
    if tool == "process" and isinstance(params, dict) and params.get("action") in ("poll", "log"):
        action = params["action"]
        fields: dict[str, Any] = {"action": action, "status": details.get("status", UNDEFINED)}
        if action == "log":
            for key in ("totalLines", "totalChars", "truncated"):
                fields[key] = details.get(key)
        fields["exitCode"] = details.get("exitCode")
        fields["exitSignal"] = details.get("exitSignal")
        if action == "poll":
            fields["aggregated"] = details.get("aggregated")
        fields["text"] = join_text(texts)
        return Outcome(digest(fields))
    if profile.strip_send_ids and _is_send(tool, params):
        return Outcome(digest(strip_send_ids(details)))
    plan = tool == "update_plan" and profile.update_plan_shape
    return Outcome(digest({"details": update_plan_shape(details) if plan else details, "text": "" if plan else join_text(texts)}))
