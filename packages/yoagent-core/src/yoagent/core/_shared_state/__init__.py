"""The shared key-value store and its ``shared_state`` tool."""
