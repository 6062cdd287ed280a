#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (Fuzz/Corpus/<target>/seed-*) from docs/protocol.md alone.

The bodies are encoded by Python's plistlib, not by the lab, so the seeds also carry an
independent encoder's layout of every message. Keys are real (python `cryptography`): the
seeds reach past key parsing into the suites. Run it again after a protocol change:

    python3 Fuzz/make-seeds.py
"""

import json
import os
import plistlib
import shutil
import struct
import subprocess
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa, x25519

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(ROOT)


def bplist(value):
    return plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=False)


def rsa_der(bits):
    if bits < 1024:
        # `cryptography` refuses keys under 1024 bits; the 2009 sample's 512 comes from openssl.
        private = subprocess.run(["openssl", "genrsa", str(bits)], check=True, capture_output=True).stdout
        return subprocess.run(
            ["openssl", "rsa", "-RSAPublicKey_out", "-outform", "DER"],
            input=private,
            check=True,
            capture_output=True,
        ).stdout
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)


def raw(public_key):
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def write(target, name, data):
    folder = os.path.join(ROOT, "Corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as handle:
        handle.write(data)


def main():
    for target in ("frame", "cx", "msg", "scenario"):
        shutil.rmtree(os.path.join(ROOT, "Corpus", target), ignore_errors=True)

    classic = rsa_der(512)
    modern = rsa_der(2048)
    x_key = raw(x25519.X25519PrivateKey.generate().public_key())
    requests = {
        "classic": bplist({"suite": "classic", "cryptoP": classic}),
        "rsa-modern": bplist({"suite": "rsa-modern", "cryptoP": modern}),
        "x25519": bplist({"suite": "x25519", "cryptoP": x_key}),
        "pq": bplist({"suite": "pq", "cryptoP": bytes(range(256)) * 4 + bytes(160)}),
        "legacy": classic,
        "unknown-suite": bplist({"suite": "rot13", "cryptoP": x_key}),
    }
    # cx: byte 0 even = a server reads the rest (byte 0 >> 1 picks the server); odd = a client.
    for index, (name, body) in enumerate(requests.items()):
        write("cx", "request-" + name, bytes([(index % 2) << 1]) + body)
    signer = raw(ed25519.Ed25519PrivateKey.generate().public_key())
    replies = {
        "x25519": {
            "suite": "x25519",
            "cryptoP": signer,
            "cryptoM": bytes(48),
            "crypto7": 0,
            "cryptoS": bytes(64),
            "cryptoK": bytes(72),
            "cryptoN": bytes(12),
        },
        "classic": {
            "cryptoP": classic,
            "cryptoM": bytes(32),
            "crypto7": 1,
            "cryptoS": bytes(64),
            "cryptoK": bytes(64),
        },
        "error": {"error": "badPublicKey", "message": "not a key"},
    }
    for index, (name, reply) in enumerate(replies.items()):
        write("cx", "reply-" + name, bytes([1 + (index << 1)]) + bplist(reply))

    # frame: byte 0 = style (bit 0) and chunk size, byte 1 = the limit / 16; then the stream.
    stream = b"".join(struct.pack(">I", len(body)) + body for body in requests.values())
    write("frame", "u32be-requests", bytes([0x0E, 0xFF]) + stream)
    write("frame", "u32be-bytewise", bytes([0x00, 0x10]) + struct.pack(">I", 5) + b"hello" + struct.pack(">I", 2))
    write("frame", "u64le-request", bytes([0x21, 0x20]) + struct.pack("<Q", 60) + bytes(60))
    write("frame", "zero-length", bytes([0x04, 0x01]) + struct.pack(">I", 0))
    write("frame", "oversized", bytes([0x06, 0x00]) + struct.pack(">I", 17) + bytes(17))
    # One byte after a whole frame: the smallest truncated header, a truncated frame for both.
    write("frame", "one-byte-left", bytes([0x00, 0x01]) + struct.pack(">I", 1) + b"A" + b"\x00")

    # msg: one request per op (docs/protocol.md §4.2); a token is replaced by a live one.
    token = "token-replaced-by-the-fuzzer"
    # A sealed password's shape: HPKE's 32-byte encapsulated key, then the ciphertext and its
    # tag (the binding is in HPKE's info, the associated data empty). The fuzzer has no server
    # key to seal to, so none opens: the seed reaches the captcha and sealing checks.
    sealed = bytes(32) + b"password" + bytes(16)
    wrapped = bytes(32) + bytes(12) + bytes(48)
    messages = {
        "captcha": {"op": "captcha"},
        "register": {
            "op": "register",
            "username": "carol",
            "password": sealed,
            "publicKey": x_key,
            "captchaId": "c-1",
            "captcha": "ABCDE",
        },
        "login": {"op": "login", "username": "alice", "password": sealed, "captchaId": "c-1", "captcha": "ABCDE"},
        "changePassword": {"op": "changePassword", "token": token, "currentPassword": sealed, "newPassword": sealed},
        "publishKey": {"op": "publishKey", "token": token, "publicKey": x_key},
        "peerKey": {"op": "peerKey", "token": token, "username": "bob"},
        "openChat": {"op": "openChat", "token": token, "with": "bob", "wrappedKeySelf": wrapped, "wrappedKeyPeer": wrapped},
        "send": {"op": "send", "token": token, "to": "bob", "ciphertext": bytes(60), "keyVersion": 1},
        "fetch": {"op": "fetch", "token": token, "with": "bob", "after": 0, "limit": 10},
        "rekey": {
            "op": "rekey",
            "token": token,
            "with": "bob",
            "keyVersion": 2,
            "wrappedKeySelf": wrapped,
            "wrappedKeyPeer": wrapped,
            "messages": struct.pack(">QI", 1, 40) + bytes(40),
        },
        "logout": {"op": "logout", "token": "not-alice"},
        "unknown-op": {"op": "teleport"},
        # msg/1 bodies (they have `op`) with a value no body may hold: badRequest, kept open.
        "container-value": {"op": "register", "username": {"nested": "x"}, "password": [1, 2]},
        "op-container": {"op": ["login"]},
        "serverStats": {"op": "serverStats"},
    }
    for name, request in messages.items():
        write("msg", name, bplist(request))

    for folder, _, files in os.walk(os.path.join(REPO, "Scenarios")):
        for file in sorted(files):
            if file.endswith(".json"):
                with open(os.path.join(folder, file), "rb") as handle:
                    write("scenario", file[: -len(".json")], handle.read())
    write("scenario", "not-an-object", json.dumps([1, 2, 3]).encode())
    write("scenario", "wrong-types", json.dumps({"clients": {"count": "16"}, "flows": [{"suite": 3}]}).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
