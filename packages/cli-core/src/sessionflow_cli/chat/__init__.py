"""The chat: the terminal chat, one-shot runs (`-p`), and following a turn's events."""
