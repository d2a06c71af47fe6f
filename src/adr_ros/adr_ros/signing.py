"""Messages of a run signed with the run's key: HMAC-SHA256 over the message's fields, its type, the run id, the
sender and a sequence (the scheme Jupyter uses on its message bus, standard library only).

Every message, service request/response and action goal/result/feedback of the ADR graph carries an
``adr_interfaces/Signature`` field ``signature``: ``sender`` (the signing node), ``sequence`` (strictly increasing per
sender: the sender's clock in nanoseconds, or one more than its last) and ``mac``. The MAC covers every field of the
message, the signature's sender and sequence included (``mac`` taken as zeros), in a canonical encoding (field by
field: numbers and arrays by their bytes, strings and sequences with their lengths), and also the run's start (a
nonce drawn at every launch: nothing of an earlier start of the same run verifies after a resume) and, for a message
meant for one node (a goal, an answer), that node's name. A receiver drops, before any
other processing, a message that is unsigned, signed with another key or for another run, or whose sequence is not
above the last one it accepted from that sender on that channel (a replay; on a channel whose messages may be
reordered, the action results of goals queued at one instance and the goal requests an instance's executor threads
check, a sequence inside a reorder window below the last is accepted once), and counts and logs the first of each
kind (``Verifier``).

The key: 32 random bytes, hex in a file readable by the user only (``create_key_file``), beside the run
(``<run_dir>/run.key``: the launcher creates it, a resumed run reuses it); never on the wire. A worker host gets it
by a copy (docs/node_graph.md, "Signed messages"). What it does not protect: anyone who can read the key file (the
same user, root, a host it was copied to) signs as well as the nodes do.
"""
from __future__ import annotations

import array
import hashlib
import hmac
import os
import secrets
import stat
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

KEY_BYTES = 32
KEY_FILE = "run.key"
ZERO_MAC = bytes(32)


def _as_field(mac: bytes) -> np.ndarray:
    """The uint8[32] field's value (rosidl keeps fixed-size uint8 arrays as numpy arrays)."""
    return np.frombuffer(mac, dtype=np.uint8).copy()
REASONS = ("unsigned", "bad_signature", "replayed")


class KeyError_(ValueError):  # noqa: N801 - KeyError is a builtin with other semantics
    """A key file that cannot be used; the message says which and why."""


def create_key_file(path: str | Path) -> Path:
    """A new random key in ``path`` (mode 0600), unless a usable one is there already (a resumed run keeps its key)."""
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(KEY_BYTES) + "\n")
        try:
            os.link(temporary, path)  # whole or not at all; another process's key, made at the same moment, wins
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    read_key(path)  # refuse a corrupt one rather than replace it silently
    return path


def default_deploy_key() -> Path:
    """The deployment key of this user: ``$ROS_HOME/adr/deploy.key`` (``~/.ros/adr/deploy.key``). The deploy
    launcher and ``adr-standin-arm`` both use it unless told otherwise, so a deployment on one machine is signed
    without a step of its own; the arm's computer and a real rig's tracker get a copy."""
    home = os.environ.get("ROS_HOME") or os.path.join(os.path.expanduser("~"), ".ros")
    return Path(home) / "adr" / "deploy.key"


def read_key(path: str | Path) -> bytes:
    """The key in ``path``: a file owned by the user running this process and readable by nobody else (anyone who
    could write or plant it could sign as the run: a key planted by another user was trusted)."""
    path = Path(path)
    try:
        info = path.stat()
        text = path.read_text().strip()
    except OSError as error:
        raise KeyError_(f"key file {path}: {error.strerror or error}") from None
    mode = info.st_mode
    if info.st_uid != os.geteuid():
        raise KeyError_(f"key file {path} belongs to another user (uid {info.st_uid}, this process runs as uid "
                        f"{os.geteuid()}); use a key of your own (a run's launcher creates <run_dir>/run.key)")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyError_(f"key file {path} is readable by others (mode {stat.S_IMODE(mode):o}); chmod 600 it")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise KeyError_(f"key file {path} does not hold a hex key") from None
    if len(key) != KEY_BYTES:
        raise KeyError_(f"key file {path} holds {len(key)} bytes, not {KEY_BYTES}")
    return key


def _feed(digest: Any, value: Any) -> None:
    """A canonical encoding of a message value into ``digest``: every field in declaration order, numbers and arrays
    by their bytes, strings and sequences with their lengths. (Not the CDR bytes: rclpy's serializer leaves its
    alignment padding uninitialized, so the same message serializes to different bytes.)"""
    if hasattr(value, "get_fields_and_field_types"):
        for name in value.get_fields_and_field_types():
            _feed(digest, getattr(value, name))
        return
    if isinstance(value, (array.array, np.ndarray, bytes, bytearray, memoryview)):
        raw = memoryview(value).tobytes() if not isinstance(value, np.ndarray) else value.tobytes()
        digest.update(b"a" + len(raw).to_bytes(8, "little") + raw)
    elif isinstance(value, str):
        raw = value.encode()
        digest.update(b"s" + len(raw).to_bytes(8, "little") + raw)
    elif isinstance(value, bool):
        digest.update(b"b1" if value else b"b0")
    elif isinstance(value, int):
        digest.update(b"i" + value.to_bytes(16, "little", signed=True))
    elif isinstance(value, float):
        digest.update(b"f" + struct.pack("<d", value))
    elif isinstance(value, (list, tuple)):
        kinds = {type(item) for item in value}
        if kinds == {bool}:  # bool[] fields are Python lists: one update, not one per element
            digest.update(b"B" + len(value).to_bytes(8, "little") + bytes(value))
        elif kinds == {float}:
            digest.update(b"F" + len(value).to_bytes(8, "little") + struct.pack(f"<{len(value)}d", *value))
        else:
            digest.update(b"l" + len(value).to_bytes(8, "little"))
            for item in value:
                _feed(digest, item)
    else:
        raise TypeError(f"cannot sign a field of type {type(value).__name__}")


def _type_name(message: Any) -> bytes:
    cls = type(message)
    return f"{cls.__module__}.{cls.__qualname__}".encode()


def node_path(namespace: str, name: str) -> str:
    """A node's fully qualified name ('/adr_sim_0', '/ns/adr_sim_0'): what it signs as, and what a message for it
    names as its receiver."""
    return f"{namespace.rstrip('/')}/{name}"


class Signer:
    """Signs this node's messages for ``run_id`` as ``sender``, in the start ``start`` of the run.

    The MAC also covers the run's start (a random nonce the launcher draws at every launch, resume included: nothing
    signed in an earlier start of the same run verifies in this one) and, for a message meant for one node, that
    receiver's name (``sign(msg, to=...)``: a goal signed for adr_sim_0 does not verify at adr_sim_1; an answer is
    signed for the node that signed the request)."""

    def __init__(self, key: bytes, run_id: str, sender: str,
                 clock: Callable[[], int] = time.time_ns, start: str = "") -> None:
        self._key, self.run_id, self.sender, self._clock, self.start = key, run_id, sender, clock, start
        self._last = 0
        self._lock = threading.Lock()

    def _next_sequence(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, self._clock())
            return self._last

    def mac(self, message: Any, to: str = "") -> bytes:
        """The MAC of ``message`` as it is (its signature's sender and sequence included, its mac taken as zeros),
        for receiver ``to`` ('' : every receiver of a topic)."""
        signature = message.signature
        kept = bytes(signature.mac)
        signature.mac = _as_field(ZERO_MAC)
        try:
            digest = hmac.new(self._key, digestmod=hashlib.sha256)
            for part in (b"adr-signature-2", _type_name(message), self.run_id.encode(), self.start.encode(),
                         to.encode()):
                digest.update(len(part).to_bytes(8, "little"))
                digest.update(part)
            _feed(digest, message)
        finally:
            signature.mac = _as_field(kept)
        return digest.digest()

    def sign(self, message: Any, to: str = "") -> Any:
        """Fill ``message.signature`` (sender, the next sequence, the MAC; for receiver ``to``) and return it."""
        signature = message.signature
        signature.sender = self.sender
        signature.sequence = self._next_sequence()
        signature.mac = _as_field(ZERO_MAC)
        signature.mac = _as_field(self.mac(message, to))
        return message


class Verifier:
    """Checks what a node receives on its channels; counts and logs the first drop of each kind per channel."""

    def __init__(self, signer: Signer, log: Callable[[str], None]) -> None:
        self._signer, self._log = signer, log
        self.on_drop: Callable[[str], None] | None = None  # e.g. the node's diagnostics counter
        self._last: dict[tuple[str, str], int] = {}  # (channel, sender) -> the highest sequence accepted
        self._seen: dict[tuple[str, str], set[int]] = {}  # sequences accepted inside a reorder window
        self.dropped: Counter[tuple[str, str]] = Counter()  # (channel, reason) -> count
        self._lock = threading.Lock()

    def accept(self, message: Any, channel: str, reorder_window_ns: int = 0, to_me: bool = False) -> bool:
        """True when ``message`` is signed with the run's key, for this run and this start of it (and, ``to_me``,
        for this node), and newer than the last one accepted from its sender on ``channel``; otherwise False
        (counted, the first of each kind logged).

        ``reorder_window_ns`` > 0 (for channels whose messages may arrive out of the order they were signed in, e.g.
        the results of two goals queued at one action server) also accepts a sequence up to that much below the
        highest one accepted, once: the anti-replay window of IPsec (RFC 4303, 3.4.3), with the sequences seen
        inside the window remembered so that none is accepted twice."""
        reason = self.reason(message, channel, reorder_window_ns, to_me)
        if reason is None:
            return True
        with self._lock:
            self.dropped[(channel, reason)] += 1
            first = self.dropped[(channel, reason)] == 1
        if self.on_drop is not None:
            self.on_drop(reason)
        if first:
            sender = getattr(getattr(message, "signature", None), "sender", "") or "?"
            self._log(f"dropped a message on {channel}: {reason} (sender {sender!r}); further ones are counted")
        return False

    def reason(self, message: Any, channel: str, reorder_window_ns: int = 0, to_me: bool = False) -> str | None:
        signature = getattr(message, "signature", None)
        if signature is None or not signature.sender or bytes(signature.mac) == ZERO_MAC:
            return "unsigned"
        receiver = self._signer.sender if to_me else ""
        if not hmac.compare_digest(bytes(signature.mac), self._signer.mac(message, receiver)):
            return "bad_signature"
        key = (channel, signature.sender)
        sequence = signature.sequence
        with self._lock:
            highest = self._last.get(key, 0)
            if sequence <= highest - reorder_window_ns:
                return "replayed"
            seen = self._seen.setdefault(key, set()) if reorder_window_ns > 0 else None
            if sequence <= highest:  # inside the window: new only if not seen
                if seen is None or sequence in seen:
                    return "replayed"
            else:
                self._last[key] = highest = sequence
            if seen is not None:
                seen.add(sequence)
                if len(seen) > 64:  # forget what fell out of the window
                    seen.difference_update([s for s in seen if s <= highest - reorder_window_ns])
        return None

    def counts(self) -> dict[str, int]:
        """Drops per reason over every channel (diagnostics, the final log line)."""
        totals: Counter[str] = Counter()
        for (_, reason), count in self.dropped.items():
            totals[reason] += count
        return dict(totals)


class RunSigning:
    """A node's signer and verifier for one run: ``sign(msg)`` before publishing or answering, ``accept(msg,
    channel)`` first thing in every callback (False: drop it). Drops are counted per kind in ``verifier``."""

    def __init__(self, key: bytes, run_id: str, sender: str, log: Callable[[str], None], start: str = "") -> None:
        self.signer = Signer(key, run_id, sender, start=start)
        self.verifier = Verifier(self.signer, log)

    @classmethod
    def from_file(cls, key_file: str | Path, run_id: str, sender: str, log: Callable[[str], None],
                  start: str = "") -> RunSigning:
        return cls(read_key(key_file), run_id, sender, log, start)

    @property
    def name(self) -> str:
        """The name this node signs as (its fully qualified node name)."""
        return self.signer.sender

    def sign(self, message: Any, to: str = "") -> Any:
        """Sign ``message`` (for the node ``to``; '': a topic's every receiver)."""
        return self.signer.sign(message, to)

    def answer(self, response: Any, request: Any) -> Any:
        """Sign ``response`` for the node that signed ``request`` (a service's or action's answer)."""
        return self.signer.sign(response, str(getattr(getattr(request, "signature", None), "sender", "")))

    def accept(self, message: Any, channel: str, reorder_window_ns: int = 0, to_me: bool = False) -> bool:
        """First thing in every callback (False: drop it). ``to_me``: a message signed for this node only (a goal,
        a request's answer)."""
        return self.verifier.accept(message, channel, reorder_window_ns, to_me)

    def count_drops(self, count: Callable[[str], None]) -> None:
        """Also count every drop as ``dropped_<reason>`` (a node's /diagnostics counters)."""
        self.verifier.on_drop = lambda reason: count(f"dropped_{reason}")
