"""Multi-agent best-arm identification (papers 002 and 003)."""
