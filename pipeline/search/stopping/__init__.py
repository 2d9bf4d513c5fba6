"""When a search may stop: its own estimate of its recall of the core."""
