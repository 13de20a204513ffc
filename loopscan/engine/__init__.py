"""The detector engine: OpenClaw's tool-loop detection, replayable per release profile.

Pure: no I/O, no CLI. Config (`config`), call identity and hashing (`identity`, `hashing`,
`outcome`), the detectors (`detect`), the post-compaction guard (`guard`) and the replay (`replay`).
"""
