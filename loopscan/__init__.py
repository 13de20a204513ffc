"""loopscan: offline forensics of AI-agent session transcripts (doom loops, their cost, and the
loop-detector config that would have stopped them)."""

__version__ = "0.1.0"
