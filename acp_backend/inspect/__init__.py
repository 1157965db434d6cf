"""``context.inspect``: what is known about one position of a file."""
