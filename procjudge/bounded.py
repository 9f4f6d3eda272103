"""One bounded reader for every compressed or archived input: JSON Lines in ``.gz`` or ``.zst``,
and the members of an archive (an Inspect ``.eval`` zip).

What it guarantees, whatever the bytes:

- a stream cut short is an error, never a shorter file read as complete (a gzip member or a zstd
  frame that does not end, trailing bytes that are not another one);
- a corrupt stream is an error naming the file (``zlib.error``, ``ZstdError``: never an internal
  error);
- decompression stops at ``limits.decompressed_bytes``, at ``limits.ratio`` times the compressed
  size once ``limits.ratio_after`` bytes are out (a 3 KB file holding 100 MiB of newlines is
  refused in a moment), and at ``limits.lines`` lines; the error names the limit and the policy
  key that raises it;
- memory stays bounded: compressed input goes in small pieces, so that no single call can expand
  beyond what one piece holds (512 bytes of zstd can hold 16 MiB).

The limits are ``Policy.limits`` (``procjudge policy show``), so that a batch worker or a Dask task
applies the same ones as the command that started it.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from typing import IO, Any, Protocol

from .policy import Limits


class InputLimit(ValueError):
    """An input beyond a limit, or a compressed stream that is corrupt or cut short: one line."""


class _Decompressor(Protocol):
    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes) -> bytes: ...


def _gzip() -> _Decompressor:
    return zlib.decompressobj(wbits=31)


def _zstd() -> _Decompressor:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+

        return zstd.ZstdDecompressor()  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise InputLimit("reading .zst needs Python 3.14 or the zstandard package: "
                         "pip install 'procjudge[inspect]'") from None
    return zstandard.ZstdDecompressor().decompressobj()  # type: ignore[no-any-return,unused-ignore]


# Compressed bytes handed to one decompress call: small enough that its output is bounded (deflate
# expands at most ~1,032 times, zstd past 30,000 times: 512 bytes can give 16 MiB), large enough to cost nothing.
_PIECE = {"gz": 64 * 1024, "zst": 512}
_CODECS: dict[str, Callable[[], _Decompressor]] = {"gz": _gzip, "zst": _zstd}


def codec_of(path: str) -> str | None:
    """``gz`` or ``zst`` by the path's suffix; None for an uncompressed file."""
    lowered = path.lower()
    return "gz" if lowered.endswith(".gz") else "zst" if lowered.endswith(".zst") else None


def _mib(count: int) -> str:
    return f"{count / 2**20:,.0f} MiB" if count >= 2**20 else f"{count:,} bytes"


class Decompressed(io.RawIOBase):
    """The decompressed bytes of a gzip or zstd stream (several members or frames in a row are
    read as one), within the limits; errors are :class:`InputLimit`."""

    def __init__(self, raw: IO[bytes], codec: str, limits: Limits) -> None:
        super().__init__()
        self.raw, self.codec, self.limits = raw, codec, limits
        self.decompressor: _Decompressor | None = _CODECS[codec]()
        self.fed = False  # bytes given to the current member or frame
        self.pending, self.offset = b"", 0
        self.compressed = self.out = 0
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.offset >= len(self.pending) and not self.done:
            self.pending, self.offset = b"", 0
            self._step()
        count = min(len(buffer), len(self.pending) - self.offset)
        buffer[:count] = memoryview(self.pending)[self.offset:self.offset + count]
        self.offset += count
        return count

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()

    def _step(self) -> None:
        piece = self.raw.read(_PIECE[self.codec])
        if not piece:
            if self.fed:
                raise InputLimit(f"the {self.codec} stream is cut short after {self.out:,} decompressed bytes "
                                 "(an incomplete file: was it still being written or copied?)")
            self.done = True
            return
        self.compressed += len(piece)
        self._feed(piece)

    def _feed(self, piece: bytes) -> None:
        while piece:
            if self.decompressor is None:
                self.decompressor = _CODECS[self.codec]()
            try:
                out = self.decompressor.decompress(piece)
            except Exception as exc:  # noqa: BLE001 - zlib.error, ZstdError: whatever the library raises
                raise InputLimit(f"a corrupt {self.codec} stream after {self.out:,} decompressed bytes: "
                                 f"{str(exc)[:200] or type(exc).__name__}") from None
            self.fed = True
            self._count(out)
            piece = b""
            if self.decompressor.eof:  # a member or frame ended; another may follow
                rest = self.decompressor.unused_data
                self.decompressor, self.fed = None, False
                if rest.strip(b"\0") == b"" and self.codec == "gz":
                    rest = b""  # gzip's zero padding (tape blocks) is no member
                piece = rest

    def _count(self, out: bytes) -> None:
        self.out += len(out)
        limits = self.limits
        if self.out > limits.decompressed_bytes:
            raise InputLimit(f"decompresses to more than {_mib(limits.decompressed_bytes)} "
                             "(limits.decompressed_bytes in the policy)")
        if self.out > limits.ratio_after and self.out > limits.ratio * max(1, self.compressed):
            raise InputLimit(f"expands more than {limits.ratio:,} times ({_mib(self.compressed)} compressed, "
                             f"{_mib(self.out)} out so far): a decompression bomb? (limits.ratio in the policy)")
        self.pending = self.pending[self.offset:] + out if self.offset < len(self.pending) else out
        self.offset = 0


def open_input(path: str, limits: Limits) -> IO[bytes]:
    """A binary stream of a file's bytes, decompressed by its suffix (``.gz``, ``.zst``) within
    the limits; InputLimit when the codec is missing, OSError when the file cannot be opened."""
    codec = codec_of(path)
    if codec is None:
        return open(path, "rb")
    raw = open(path, "rb")  # noqa: SIM115 - closed with the stream
    try:
        return io.BufferedReader(Decompressed(raw, codec, limits), 1024 * 1024)
    except BaseException:  # a missing codec: the file is closed again
        raw.close()
        raise


def line_limit(limits: Limits, number: int) -> InputLimit | None:
    """The error for a file whose ``number``-th line is past ``limits.lines``, else None."""
    if number > limits.lines:
        return InputLimit(f"more than {limits.lines:,} lines (limits.lines in the policy); the rest is not read")
    return None


def member(data: bytes, limits: Limits, name: str) -> bytes:
    """An archive member's bytes, checked before they are parsed: at most ``member_bytes``, and
    at most ``member_containers`` JSON arrays and objects (what parsing would build, at some
    fifty bytes each, is what costs the memory: 100 MB of ``[[],[],...`` is gigabytes)."""
    if len(data) > limits.member_bytes:
        raise InputLimit(f"{name} is {len(data):,} bytes uncompressed; members are limited to "
                         f"{limits.member_bytes:,} (limits.member_bytes in the policy)")
    containers = data.count(b"[") + data.count(b"{")
    if containers > limits.member_containers:
        raise InputLimit(f"{name} holds {containers:,} arrays and objects; members are limited to "
                         f"{limits.member_containers:,} (limits.member_containers in the policy)")
    return data
