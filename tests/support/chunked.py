"""HTTP/1.1 chunked bodies, read back as a client would."""

from __future__ import annotations


def dechunked(body: bytes, *, whole: bool = False) -> bytes:
    """A chunked body's data. By default its last chunk may be cut short (a
    stream read up to some point); ``whole``: the body must be complete and
    well framed, each chunk's data ended by CRLF, the last chunk at its end."""
    data, at = bytearray(), 0
    while (line_end := body.find(b"\r\n", at)) > at:
        size = int(body[at:line_end], 16)
        start = line_end + 2
        data += body[start : start + size]
        at = start + size + 2
        if whole:
            assert body[start + size : at] == b"\r\n", "a chunk's data is not followed by CRLF"
            if size == 0:
                assert at == len(body), "bytes after the last chunk"
                return bytes(data)
    assert not whole, "no last chunk"
    return bytes(data)
