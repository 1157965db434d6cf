"""The reference ACP backend: in-process facade, SQLite store, HTTP server."""
