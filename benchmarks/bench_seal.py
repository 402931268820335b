"""What a private session costs per datagram: python benchmarks/bench_seal.py [--n N].

Prints the CPU µs to seal and to open a datagram of each size (a presence, a stroke, a full
packet), to refuse a forgery from a new sender id (what a stranger's datagram costs), the key
derivation's time, and to prove and check an op (viewers), with the load average; each
against a floor measured in the same run (a plain ``bytes`` copy of the same size, decoding
the op). Throughput with and
without a passphrase: run benchmarks/bench_transport.py twice, once with WHITEBOARD_PASSPHRASE
set in its environment (every `whiteboard peer` it starts then seals), as docs/security.md
describes."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import time

from whiteboard.board import decode_op, encode_op, synthetic_stroke
from whiteboard.security import (
    OpAuthority,
    Opener,
    Sealer,
    SealError,
    SessionKey,
    derive_session_key,
)
from whiteboard.security.keys import session_key_from_view_code

SIZES = (120, 476, 1428)  # a presence, a stroke of the app's size, a full RMP datagram


def per_call_us(action: object, n: int) -> float:
    assert callable(action)
    start = time.process_time()
    for _ in range(n):
        action()
    return (time.process_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    start = time.perf_counter()
    key = derive_session_key(
        "a long and private passphrase", "239.255.1.2:5000", "bench", viewers=True
    )
    print(f"key derivation (scrypt 2^15, 8, 1): {(time.perf_counter() - start) * 1000:.0f} ms")
    for size in SIZES:
        payload = os.urandom(size)
        sealer = Sealer(key)
        sealed = [sealer.seal(payload) for _ in range(args.n)]
        seal_us = per_call_us(lambda p=payload, s=sealer: s.seal(p), args.n)
        opener = Opener(key, window=args.n * 2)
        queue = iter(sealed)
        open_us = per_call_us(lambda q=queue, o=opener: o.open(next(q)), args.n)
        copy_us = per_call_us(lambda p=payload: bytes(bytearray(p)), args.n)
        print(
            f"{size:5d} bytes: seal {seal_us:5.1f} µs, open {open_us:5.1f} µs "
            f"(a copy of the bytes {copy_us:4.2f} µs; seal+open {seal_us + open_us:5.1f} µs)"
        )
    forged = [b"WBs\x01" + key.key_id + os.urandom(16) + os.urandom(476) for _ in range(2000)]
    opener = Opener(key)
    queue = iter(forged)

    def refuse() -> None:
        with contextlib.suppress(SealError):
            opener.open(next(queue))

    print(f"a forgery from a new sender id refused: {per_call_us(refuse, len(forged)):.1f} µs")
    proofs(key, max(1000, args.n // 10))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def proofs(key: SessionKey, n: int) -> None:
    """What proving an op costs its author, and checking it each member: a drawer by the
    MAC, a viewer by the signature (docs/security.md, Proofs); against decoding the op."""
    stroke = synthetic_stroke(0x5EED_0001, 1, random.Random(1))
    op_bytes = encode_op(stroke)
    drawer = OpAuthority.of(key)
    viewer = OpAuthority.of(session_key_from_view_code(key.view_code()))
    proof = drawer.prove(op_bytes)
    prove_us = per_call_us(lambda: drawer.prove(op_bytes), n)
    mac_us = per_call_us(lambda: drawer.check(op_bytes, proof), n)
    signature_us = per_call_us(lambda: viewer.check(op_bytes, proof), n)
    decode_us = per_call_us(lambda: decode_op(op_bytes), n)
    print(
        f"a {len(op_bytes)}-byte stroke: prove {prove_us:5.1f} µs, check by MAC (drawers) "
        f"{mac_us:4.1f} µs, by signature (viewers) {signature_us:5.1f} µs (decoding it "
        f"{decode_us:4.1f} µs; MAC / decode {mac_us / decode_us:.2f}x)"
    )


if __name__ == "__main__":
    main()
