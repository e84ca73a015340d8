"""Command-line applications and their tools (the HTML replay viewer)."""
