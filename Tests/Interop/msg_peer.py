#!/usr/bin/env python3
"""Independent msg/1 client for crypto-lab, written only from the documentation:
the msg/1 reference above all (then in README.md, later in docs/messaging.md, now
docs/protocol.md §4), and the framing docs/protocol.md §1 gives (`server.framing`: each
body after its length, u32be by default). It shares no code with the Swift implementation.

HPKE (RFC 9180, base mode, DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / ChaCha20-Poly1305,
or, for a server that announces `hpke` = "xwing" with its captchas, X-Wing (MLKEM768-X25519)
/ HKDF-SHA256 / AES-256-GCM) is the `cryptography` library's (48 or later: `hpke.Suite`, which takes `info` and no
associated data, as msg/1 needs). A second HPKE, written here by hand on the X25519,
HMAC-SHA256 and ChaCha20-Poly1305 primitives, checks it in `selftest`: the hand-written one
reproduces the RFC's published test vector A.2.1, and each opens what the other sealed, so
the library's output is the documented enc ‖ ciphertext.

Commands (each prints one JSON object on stdout):
  selftest                                  HPKE: RFC 9180 A.2.1, the library against it
  converse HOST PORT NAME_PREFIX            the whole msg/1 conversation on one connection
  login-as HOST PORT USERNAME PASSWORD      captcha + login (+ logout on success)
  read-chat HOST PORT USERNAME PASSWORD PEER PRIVATE_KEY_HEX
                                            log in, fetch the chat with PEER, unwrap its key
                                            with the raw X25519 private key, decrypt it all

`converse` also prints its users' private keys (hex, under "keys": raw X25519, or for
X-Wing the ML-KEM-768 seed ‖ the X25519 key) and passwords, so that a test can read the chat with another client: test
accounts only. It learns the server's HPKE suite from the first captcha and makes its
users' keys of that kind.

Exit codes: 0 ok; 1 a mismatch with the documented behaviour (`converse`, `selftest`,
`read-chat`) or a refused login (`login-as`, the JSON's "error" is the server's code);
2 usage or a local, network or framing problem.
"""
import hashlib
import hmac
import json
import os
import plistlib
import re
import socket
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric import mlkem
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

# ---------------------------------------------------------------- constants (from the docs)
MAX_FRAME = 5 * 1024 * 1024                 # docs/protocol.md §1: default maxFrameBytes
PASSWORD_LABEL = "crypto-lab msg/1 password"  # docs/protocol.md §4.7: the first line of a sealed password's info
CHAT_KEY_LABEL = "crypto-lab msg/1 chat key"  # docs/protocol.md §4.7: the first line of a wrapped chat key's info
# docs/protocol.md §4.7: HPKE base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305.
SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)
# docs/protocol.md §4.7: with `hpke` = "xwing", X-Wing (MLKEM768-X25519), HKDF-SHA256, AES-256-GCM;
# a public key is the ML-KEM-768 key (1,184 bytes) then the X25519 key (32).
XWING_SUITE = hpke.Suite(hpke.KEM.MLKEM768_X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
PUBLIC_KEY_BYTES = {"x25519": 32, "xwing": 1184 + 32}
CAPTCHA_RE = re.compile(r"^[A-Z0-9]{5}$")    # docs/protocol.md §4.2: the 5-character challenge, A–Z0–9
NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # docs/protocol.md §4.4: user names


class Mismatch(Exception):
    """The server did not behave as docs/protocol.md §4 says."""


class ServerRefused(Exception):
    """An error answer (`ok` false): `code` is its `error`."""

    def __init__(self, op, answer):
        self.op = op
        self.answer = answer
        self.code = answer.get("error")
        super().__init__(f"{op}: server answered error {self.code!r}: {answer.get('message')!r}")


# ---------------------------------------------------------------- HPKE: the library's
def seal(public_key, info, plaintext):
    """docs/protocol.md §4.7: single-shot HPKE to a public key, empty associated data; enc ‖ ciphertext
    (which is what the library returns: `selftest` checks it against the hand-written HPKE). The
    key's size says its suite: 32 bytes X25519, 1,216 X-Wing (ML-KEM-768 key ‖ X25519 key)."""
    if len(public_key) == PUBLIC_KEY_BYTES["xwing"]:
        key = hpke.MLKEM768X25519PublicKey(
            mlkem.MLKEM768PublicKey.from_public_bytes(public_key[:1184]),
            X25519PublicKey.from_public_bytes(public_key[1184:]),
        )
        return XWING_SUITE.encrypt(plaintext, key, info=info)
    return SUITE.encrypt(plaintext, X25519PublicKey.from_public_bytes(public_key), info=info)


def open_sealed(private_key, info, sealed):
    """Opens enc ‖ ciphertext; raises InvalidTag on any mismatch."""
    suite = XWING_SUITE if isinstance(private_key, XWingKey) else SUITE
    return suite.decrypt(sealed, private_key.library if isinstance(private_key, XWingKey) else private_key, info=info)


class XWingKey:
    """An X-Wing private key: the library's, and the public key as msg/1 sends it. Its bytes
    here (`private_bytes_raw`, `from_private`) are the ML-KEM-768 seed (64) ‖ the X25519 key (32):
    this peer's own format, for `converse` to hand to `read-chat`."""

    def __init__(self, mlkem_key=None, x25519_key=None):
        self.mlkem = mlkem_key or mlkem.MLKEM768PrivateKey.generate()
        self.x25519 = x25519_key or X25519PrivateKey.generate()
        self.library = hpke.MLKEM768X25519PrivateKey(self.mlkem, self.x25519)

    @staticmethod
    def from_private(raw):
        return XWingKey(mlkem.MLKEM768PrivateKey.from_seed_bytes(raw[:64]), X25519PrivateKey.from_private_bytes(raw[64:]))

    def private_bytes_raw(self):
        return self.mlkem.private_bytes_raw() + self.x25519.private_bytes_raw()

    def public_bytes(self):
        return self.mlkem.public_key().public_bytes_raw() + self.x25519.public_key().public_bytes_raw()


def new_key(suite):
    return XWingKey() if suite == "xwing" else X25519PrivateKey.generate()


def public_bytes(key):
    return key.public_bytes() if isinstance(key, XWingKey) else raw_public(key)


# ---------------------------------------------------------------- HPKE (RFC 9180), by hand
# Kept as a cross-check of the library in `selftest` (the library has no way to fix the
# ephemeral key, so it cannot be checked against the RFC's vector directly).
KEM_ID, KDF_ID, AEAD_ID = 0x0020, 0x0001, 0x0003
N_SECRET, N_ENC, N_PK, N_SK = 32, 32, 32, 32   # DHKEM(X25519, HKDF-SHA256), RFC 9180 §7.1
N_K, N_N, N_H = 32, 12, 32                     # ChaCha20-Poly1305, HKDF-SHA256
MODE_BASE = 0x00


def i2osp(value, length):
    return value.to_bytes(length, "big")


KEM_SUITE_ID = b"KEM" + i2osp(KEM_ID, 2)
HPKE_SUITE_ID = b"HPKE" + i2osp(KEM_ID, 2) + i2osp(KDF_ID, 2) + i2osp(AEAD_ID, 2)


def hkdf_extract(salt, ikm):
    # RFC 5869 §2.2: an absent salt is HashLen zero bytes.
    return hmac.new(salt if salt else bytes(N_H), ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    if length > 255 * N_H:
        raise ValueError("HKDF-Expand length too large")
    okm, block, counter = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        okm += block
        counter += 1
    return okm[:length]


def labeled_extract(suite_id, salt, label, ikm):
    return hkdf_extract(salt, b"HPKE-v1" + suite_id + label + ikm)


def labeled_expand(suite_id, prk, label, info, length):
    labeled_info = i2osp(length, 2) + b"HPKE-v1" + suite_id + label + info
    return hkdf_expand(prk, labeled_info, length)


def raw_public(private_key):
    return private_key.public_key().public_bytes_raw()


def derive_key_pair(ikm):
    """RFC 9180 §7.1.3 DeriveKeyPair for X25519."""
    dkp_prk = labeled_extract(KEM_SUITE_ID, b"", b"dkp_prk", ikm)
    sk = labeled_expand(KEM_SUITE_ID, dkp_prk, b"sk", b"", N_SK)
    return X25519PrivateKey.from_private_bytes(sk)


def extract_and_expand(dh, kem_context):
    eae_prk = labeled_extract(KEM_SUITE_ID, b"", b"eae_prk", dh)
    return labeled_expand(KEM_SUITE_ID, eae_prk, b"shared_secret", kem_context, N_SECRET)


def encap(pk_r, sk_e=None):
    """DHKEM Encap: (shared_secret, enc). `sk_e` fixes the ephemeral key (test vectors)."""
    sk_e = sk_e or X25519PrivateKey.generate()
    dh = sk_e.exchange(X25519PublicKey.from_public_bytes(pk_r))
    enc = raw_public(sk_e)
    return extract_and_expand(dh, enc + pk_r), enc


def decap(enc, sk_r):
    dh = sk_r.exchange(X25519PublicKey.from_public_bytes(enc))
    return extract_and_expand(dh, enc + raw_public(sk_r))


def key_schedule(shared_secret, info):
    """Base mode (psk and psk_id empty): the context's key, base_nonce and intermediates."""
    psk, psk_id = b"", b""
    psk_id_hash = labeled_extract(HPKE_SUITE_ID, b"", b"psk_id_hash", psk_id)
    info_hash = labeled_extract(HPKE_SUITE_ID, b"", b"info_hash", info)
    context = bytes([MODE_BASE]) + psk_id_hash + info_hash
    secret = labeled_extract(HPKE_SUITE_ID, shared_secret, b"secret", psk)
    return {
        "key_schedule_context": context,
        "secret": secret,
        "key": labeled_expand(HPKE_SUITE_ID, secret, b"key", context, N_K),
        "base_nonce": labeled_expand(HPKE_SUITE_ID, secret, b"base_nonce", context, N_N),
        "exporter_secret": labeled_expand(HPKE_SUITE_ID, secret, b"exp", context, N_H),
    }


def hpke_seal(pk_r, info, aad, plaintext, sk_e=None):
    """Single-shot SealBase; returns enc (32 bytes) ‖ ciphertext (with its 16-byte tag).
    Sequence number 0, so the nonce is base_nonce itself."""
    shared, enc = encap(pk_r, sk_e)
    ks = key_schedule(shared, info)
    return enc + ChaCha20Poly1305(ks["key"]).encrypt(ks["base_nonce"], plaintext, aad)


def hpke_open(sk_r, info, aad, sealed):
    """Single-shot OpenBase of enc ‖ ciphertext; raises InvalidTag on any mismatch."""
    if len(sealed) < N_ENC + 16:
        raise InvalidTag()
    enc, ciphertext = sealed[:N_ENC], sealed[N_ENC:]
    ks = key_schedule(decap(enc, sk_r), info)
    return ChaCha20Poly1305(ks["key"]).decrypt(ks["base_nonce"], ciphertext, aad)


# RFC 9180 Appendix A.2.1: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, mode 0.
RFC9180_A21 = {
    "info": "4f6465206f6e2061204772656369616e2055726e",
    "ikmE": "909a9b35d3dc4713a5e72a4da274b55d3d3821a37e5d099e74a647db583a904b",
    "pkEm": "1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a",
    "skEm": "f4ec9b33b792c372c1d2c2063507b684ef925b8c75a42dbcbf57d63ccd381600",
    "pkRm": "4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a",
    "skRm": "8057991eef8f1f1af18f4a9491d16a1ce333f695d4db8e38da75975c4478e0fb",
    "enc": "1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a",
    "shared_secret": "0bbe78490412b4bbea4812666f7916932b828bba79942424abb65244930d69a7",
    "key_schedule_context": "00431df6cd95e11ff49d7013563baf7f11588c75a6611ee2a4404a49306ae4cfc5b"
                            "69c5718a60cc5876c358d3f7fc31ddb598503f67be58ea1e798c0bb19eb9796",
    "secret": "5b9cd775e64b437a2335cf499361b2e0d5e444d5cb41a8a53336d8fe402282c6",
    "key": "ad2744de8e17f4ebba575b3f5f5a8fa1f69c2a07f6e7500bc60ca6e3e3ec1c91",
    "base_nonce": "5c4d98150661b848853b547f",
    "exporter_secret": "a3b010d4994890e2c6968a36f64470d3c824c8f5029942feb11e7a74b2921922",
    "pt": "4265617574792069732074727574682c20747275746820626561757479",
    "aad0": "436f756e742d30",
    "ct0": "1c5250d8034ec2b784ba2cfd69dbdb8af406cfe3ff938e131f0def8c8b60b4db21993c62ce81883d2dd1b51a28",
}


def selftest():
    v = {k: bytes.fromhex(x) for k, x in RFC9180_A21.items()}
    checks = {}

    def check(name, got, want):
        if got != want:
            raise Mismatch(f"RFC 9180 A.2.1 {name}: got {got.hex()}, want {want.hex()}")
        checks[name] = True

    sk_e = derive_key_pair(v["ikmE"])
    check("DeriveKeyPair(ikmE) = skEm", sk_e.private_bytes_raw(), v["skEm"])
    check("pkEm", raw_public(sk_e), v["pkEm"])
    sk_r = X25519PrivateKey.from_private_bytes(v["skRm"])
    check("pkRm", raw_public(sk_r), v["pkRm"])
    shared, enc = encap(v["pkRm"], sk_e)
    check("enc", enc, v["enc"])
    check("shared_secret", shared, v["shared_secret"])
    check("Decap shared_secret", decap(enc, sk_r), v["shared_secret"])
    ks = key_schedule(shared, v["info"])
    for name in ("key_schedule_context", "secret", "key", "base_nonce", "exporter_secret"):
        check(name, ks[name], v[name])
    sealed = hpke_seal(v["pkRm"], v["info"], v["aad0"], v["pt"], sk_e)
    check("seal sequence 0 = enc || ct0", sealed, v["enc"] + v["ct0"])
    check("open sequence 0", hpke_open(sk_r, v["info"], v["aad0"], sealed), v["pt"])

    # The library against the hand-written HPKE, both ways, with msg/1's info and no
    # associated data: its output is enc (32 bytes) ‖ ciphertext ‖ tag, as documented.
    recipient = X25519PrivateKey.generate()
    message, info = os.urandom(32), chat_key_info("alice", "bob", 1)
    boxed = seal(raw_public(recipient), info, message)
    if len(boxed) != N_ENC + len(message) + 16:
        raise Mismatch("the library's sealed length is not 32 + plaintext + 16")
    check("library sealed, hand-written opens", hpke_open(recipient, info, b"", boxed), message)
    by_hand = hpke_seal(raw_public(recipient), info, b"", message)
    check("hand-written sealed, library opens", open_sealed(recipient, info, by_hand), message)
    check("library round trip", open_sealed(recipient, info, boxed), message)
    for name, args in {
        "wrong info refused": (recipient, chat_key_info("alice", "bob", 2), boxed),
        "password info refused": (recipient, PASSWORD_LABEL.encode(), boxed),
        "wrong key refused": (X25519PrivateKey.generate(), info, boxed),
        "flipped bit refused": (recipient, info, boxed[:-1] + bytes([boxed[-1] ^ 1])),
    }.items():
        try:
            open_sealed(*args)
        except InvalidTag:
            checks[name] = True
        else:
            raise Mismatch(f"HPKE {name}: opened anyway")
    return {"ok": True, "vector": "RFC 9180 A.2.1", "checks": checks}


# ---------------------------------------------------------------- msg/1 cryptography (docs/protocol.md §4.7)
def password_info(op, field, *binding):
    """docs/protocol.md §4.7: `crypto-lab msg/1 password` \\n op \\n field \\n binding…, in UTF-8."""
    return "\n".join([PASSWORD_LABEL, op, field, *binding]).encode()


def seal_password(password, server_key, op, field, *binding):
    """docs/protocol.md §4.7: HPKE to `serverKey` with the password info and empty associated data; the
    password travels as its UTF-8 bytes."""
    return seal(server_key, password_info(op, field, *binding), password.encode())


def chat_key_info(user1, user2, version):
    """docs/protocol.md §4.7: `crypto-lab msg/1 chat key\\n<lower name>\\n<higher name>\\nv<keyVersion>`
    (names ordered by their UTF-8 bytes)."""
    low, high = sorted([user1, user2], key=lambda n: n.encode())
    return f"{CHAT_KEY_LABEL}\n{low}\n{high}\nv{version}".encode()


def wrap_chat_key(key, public_key, user1, user2, version):
    return seal(public_key, chat_key_info(user1, user2, version), key)


def unwrap_chat_key(wrapped, private_key, user1, user2, version):
    try:
        key = open_sealed(private_key, chat_key_info(user1, user2, version), wrapped)
    except InvalidTag:
        raise Mismatch(f"the wrapped chat key v{version} does not open with HPKE as documented")
    if len(key) != 32:
        raise Mismatch(f"the unwrapped chat key is {len(key)} bytes, not 32")
    return key


def encrypt_message(key, sender, text):
    """docs/protocol.md §4.7: AES-256-GCM, 12-byte random nonce ‖ ciphertext ‖ 16-byte tag, AAD = sender."""
    nonce = os.urandom(12)
    return nonce + AESGCM(key).encrypt(nonce, text, sender.encode())


def decrypt_message(key, sender, blob):
    if len(blob) < 28:
        raise Mismatch(f"a message ciphertext of {len(blob)} bytes, under the documented 28")
    try:
        return AESGCM(key).decrypt(blob[:12], blob[12:], sender.encode())
    except InvalidTag:
        raise Mismatch(f"a message from {sender} does not decrypt with AES-256-GCM as documented")


def unpack_fetched(blob):
    """docs/protocol.md §4.6: per message id (u64), keyVersion (u32), name length (u8), name,
    ciphertext length (u32), ciphertext; big-endian."""
    messages, at = [], 0
    while at < len(blob):
        try:
            ident, version, name_len = struct.unpack_from(">QIB", blob, at)
            at += 13
            name = blob[at:at + name_len].decode()
            if len(name.encode()) != name_len:
                raise struct.error("short name")
            at += name_len
            (ct_len,) = struct.unpack_from(">I", blob, at)
            at += 4
            ciphertext = blob[at:at + ct_len]
            if len(ciphertext) != ct_len:
                raise struct.error("short ciphertext")
            at += ct_len
        except (struct.error, UnicodeDecodeError) as e:
            raise Mismatch(f"fetch's packed messages do not parse as documented at byte {at}: {e}")
        messages.append({"id": ident, "keyVersion": version, "sender": name, "ciphertext": ciphertext})
    return messages


def pack_rekeyed(messages):
    """docs/protocol.md §4.6: per message id (u64), length (u32), ciphertext; big-endian."""
    return b"".join(struct.pack(">QI", m["id"], len(m["ciphertext"])) + m["ciphertext"] for m in messages)


# ---------------------------------------------------------------- framing and requests
class Connection:
    """One TCP connection; frames are a u32 big-endian length then a binary plist body."""

    def __init__(self, host, port, timeout=30.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self):
        self.sock.close()

    def _read_exactly(self, count):
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError(f"the server closed the connection after {len(data)} of {count} bytes")
            data += chunk
        return bytes(data)

    def call(self, op, fields=None):
        """Sends {op, fields…} and returns the answer dictionary (ok true or false)."""
        request = {"op": op, **(fields or {})}
        body = plistlib.dumps(request, fmt=plistlib.FMT_BINARY, sort_keys=False)
        self.sock.sendall(struct.pack(">I", len(body)) + body)
        (length,) = struct.unpack(">I", self._read_exactly(4))
        if not 1 <= length <= MAX_FRAME:
            raise Mismatch(f"{op}: answer frame length {length} outside 1…{MAX_FRAME}")
        answer_body = self._read_exactly(length)
        if not answer_body.startswith(b"bplist00"):
            raise Mismatch(f"{op}: the answer is not a binary property list")
        answer = plistlib.loads(answer_body)
        if not isinstance(answer, dict):
            raise Mismatch(f"{op}: the answer's top level is {type(answer).__name__}, not a dictionary")
        if not isinstance(answer.get("ok"), bool):
            raise Mismatch(f"{op}: the answer's `ok` is {answer.get('ok')!r}, not a boolean: {answer!r}")
        if not answer["ok"]:
            if not isinstance(answer.get("error"), str) or not isinstance(answer.get("message"), str):
                raise Mismatch(f"{op}: an error answer without `error` and `message` strings: {answer!r}")
        return answer

    def ok(self, op, fields=None):
        answer = self.call(op, fields)
        if not answer["ok"]:
            raise ServerRefused(op, answer)
        return answer

    def refused(self, op, fields, code):
        """Sends a request that must be refused with `code`; returns the answer."""
        answer = self.call(op, fields)
        if answer["ok"]:
            raise Mismatch(f"{op}: expected error {code!r}, the server answered ok: {answer!r}")
        if answer["error"] != code:
            raise Mismatch(f"{op}: expected error {code!r}, got {answer['error']!r}: {answer.get('message')!r}")
        return answer


def field(answer, name, kind, op):
    value = answer.get(name)
    # A plist boolean is a Python bool, which is also an int: keep them apart.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Mismatch(f"{op}: answer field `{name}` is {value!r}, not {kind.__name__}")
    return value


def read_captcha(answer, op):
    """captchaId (string), captcha (5 characters A–Z0–9), serverKey (data: 32 bytes for hpke
    "x25519", 1,216 for "xwing"), hpke (string; absent: "x25519")."""
    captcha = {
        "id": field(answer, "captchaId", str, op),
        "challenge": field(answer, "captcha", str, op),
        "serverKey": field(answer, "serverKey", bytes, op),
        "hpke": answer.get("hpke", "x25519"),
    }
    if not CAPTCHA_RE.match(captcha["challenge"]):
        raise Mismatch(f"{op}: captcha {captcha['challenge']!r} is not 5 characters of A–Z0–9")
    if captcha["hpke"] not in PUBLIC_KEY_BYTES:
        raise Mismatch(f"{op}: hpke {captcha['hpke']!r} is neither x25519 nor xwing")
    if len(captcha["serverKey"]) != PUBLIC_KEY_BYTES[captcha["hpke"]]:
        raise Mismatch(f"{op}: serverKey is {len(captcha['serverKey'])} bytes, not an {captcha['hpke']} key")
    return captcha


class User:
    def __init__(self, name, password, suite="x25519"):
        if not NAME_RE.match(name):
            raise ValueError(f"user name {name!r} is not 1–64 characters of A–Z a–z 0–9 . _ -")
        self.name = name
        self.password = password
        self.key = new_key(suite)
        self.public_key = public_bytes(self.key)
        self.token = None


class Client:
    """msg/1 operations over one connection; remembers the last captcha's serverKey."""

    def __init__(self, connection):
        self.c = connection
        self.server_key = None

    def captcha(self):
        captcha = read_captcha(self.c.ok("captcha"), "captcha")
        self.server_key = captcha["serverKey"]
        return captcha

    def register(self, user):
        captcha = self.captcha()
        self.c.ok("register", {
            "username": user.name,
            "password": seal_password(user.password, captcha["serverKey"], "register", "password",
                                      user.name, captcha["id"]),
            "publicKey": user.public_key,
            "captchaId": captcha["id"],
            "captcha": captcha["challenge"],
        })

    def login_request(self, name, password, captcha, answer=None):
        return {
            "username": name,
            "password": seal_password(password, captcha["serverKey"], "login", "password", name, captcha["id"]),
            "captchaId": captcha["id"],
            "captcha": captcha["challenge"] if answer is None else answer,
        }

    def login(self, user, password=None, captcha=None):
        captcha = captcha or self.captcha()
        answer = self.c.ok("login", self.login_request(user.name, password or user.password, captcha))
        user.token = field(answer, "token", str, "login")
        return captcha

    def fetch(self, user, peer, after=None):
        request = {"token": user.token, "with": peer}
        if after is not None:
            request["after"] = after
        answer = self.c.ok("fetch", request)
        version = field(answer, "keyVersion", int, "fetch")
        wrapped = field(answer, "wrappedKey", bytes, "fetch")
        messages = unpack_fetched(field(answer, "messages", bytes, "fetch"))
        count = field(answer, "count", int, "fetch")
        if count != len(messages):
            raise Mismatch(f"fetch: `count` is {count}, but `messages` packs {len(messages)}")
        key = unwrap_chat_key(wrapped, user.key, user.name, peer, version)
        texts = []
        for m in messages:
            if m["keyVersion"] != version:
                raise Mismatch(f"fetch: message {m['id']} is under v{m['keyVersion']}, the answer says v{version}")
            texts.append(decrypt_message(key, m["sender"], m["ciphertext"]))
        return version, key, messages, texts

    def send(self, user, peer, key, version, text):
        answer = self.c.ok("send", {
            "token": user.token, "to": peer,
            "ciphertext": encrypt_message(key, user.name, text), "keyVersion": version,
        })
        return field(answer, "id", int, "send")


# ---------------------------------------------------------------- commands
def converse(host, port, prefix):
    checks = {}
    new_password = "interop pass A2 " + os.urandom(6).hex()
    conn = Connection(host, port)
    client = Client(conn)
    try:
        # The server's HPKE suite, from a first captcha: the users' keys are of its kind.
        suite = client.captcha()["hpke"]
        alice = User(f"{prefix}-a", "interop pass A " + os.urandom(6).hex(), suite)
        bob = User(f"{prefix}-b", "interop pass B " + os.urandom(6).hex(), suite)
        texts = [f"interop message {i} from {alice.name} {os.urandom(8).hex()}".encode() for i in (1, 2, 3)]
        # A msg/1 body (it has `op`) holding a container: badRequest with `ok` false, and the
        # connection stays open (the registrations below go over it).
        conn.refused("register", {"username": {"nested": "x"}, "password": [1, 2]}, "badRequest")
        checks["containerValueBadRequest"] = True

        # Accounts.
        client.register(alice)
        client.register(bob)
        checks["register"] = True

        # A wrong captcha answer: badCaptcha, with a fresh captcha in the answer.
        first = client.captcha()
        wrong = "".join("B" if ch == "A" else "A" for ch in first["challenge"])
        answer = conn.refused("login", client.login_request(alice.name, alice.password, first, answer=wrong),
                              "badCaptcha")
        fresh = read_captcha(answer, "login (badCaptcha)")
        if fresh["id"] == first["id"]:
            raise Mismatch("badCaptcha: the new captchaId is the refused one")
        client.server_key = fresh["serverKey"]
        checks["badCaptchaWithFreshCaptcha"] = True

        # A wrong password, answered with the captcha that badCaptcha gave: badCredentials.
        answer = conn.refused("login", client.login_request(alice.name, "not the password 123", fresh),
                              "badCredentials")
        if "until" in answer:
            field(answer, "until", int, "login (badCredentials)")
        checks["badCredentials"] = True

        # The right passwords.
        used = client.login(alice)
        client.login(bob)
        checks["login"] = True
        # Captchas are single-use: the one alice just logged in with is refused.
        answer = conn.refused("login", client.login_request(alice.name, alice.password, used), "badCaptcha")
        client.server_key = read_captcha(answer, "login (replayed captcha)")["serverKey"]
        checks["captchaSingleUse"] = True

        # Public keys.
        answer = conn.ok("peerKey", {"token": alice.token, "username": bob.name})
        if field(answer, "publicKey", bytes, "peerKey") != bob.public_key:
            raise Mismatch("peerKey: not the public key bob registered")
        checks["peerKey"] = True

        # Open the chat with a fresh key wrapped for both.
        key1 = os.urandom(32)
        answer = conn.ok("openChat", {
            "token": alice.token, "with": bob.name,
            "wrappedKeySelf": wrap_chat_key(key1, alice.public_key, alice.name, bob.name, 1),
            "wrappedKeyPeer": wrap_chat_key(key1, bob.public_key, alice.name, bob.name, 1),
        })
        if field(answer, "keyVersion", int, "openChat") != 1:
            raise Mismatch(f"openChat: keyVersion {answer['keyVersion']}, not 1")
        checks["openChat"] = True

        # Three messages from alice; bob fetches and decrypts them.
        ids = [client.send(alice, bob.name, key1, 1, text) for text in texts]
        if sorted(set(ids)) != ids:
            raise Mismatch(f"send: ids {ids} are not increasing")
        version, key, messages, got = client.fetch(bob, alice.name, after=0)
        if version != 1 or key != key1:
            raise Mismatch("fetch (bob): not key version 1 with the key alice made")
        if got != texts or [m["id"] for m in messages] != ids or any(m["sender"] != alice.name for m in messages):
            raise Mismatch("fetch (bob): the messages differ from what alice sent")
        checks["fetchDecrypt"] = True

        # Rekey as alice: fetch everything, decrypt, re-encrypt under a new key.
        version, key, messages, history = client.fetch(alice, bob.name)
        if version != 1 or key != key1 or history != texts:
            raise Mismatch("fetch (alice): her own history does not decrypt to what she sent")
        key2 = os.urandom(32)
        reencrypted = [{"id": m["id"], "ciphertext": encrypt_message(key2, m["sender"], text)}
                       for m, text in zip(messages, history)]
        answer = conn.ok("rekey", {
            "token": alice.token, "with": bob.name, "keyVersion": 1,
            "wrappedKeySelf": wrap_chat_key(key2, alice.public_key, alice.name, bob.name, 2),
            "wrappedKeyPeer": wrap_chat_key(key2, bob.public_key, alice.name, bob.name, 2),
            "messages": pack_rekeyed(reencrypted),
        })
        rekeyed = field(answer, "keyVersion", int, "rekey")
        if rekeyed != 2:
            raise Mismatch(f"rekey: keyVersion {rekeyed}, not 2")
        checks["rekey"] = True

        # A send under the stale version 1: conflict.
        conn.refused("send", {
            "token": alice.token, "to": bob.name,
            "ciphertext": encrypt_message(key1, alice.name, b"stale"), "keyVersion": 1,
        }, "conflict")
        checks["staleSendConflict"] = True

        # Bob again: all three under key version 2 (and nothing from the refused send).
        version, key, messages, got = client.fetch(bob, alice.name, after=0)
        if version != 2 or key != key2:
            raise Mismatch(f"fetch after rekey (bob): key version {version}, or not the new key")
        if got != texts or [m["id"] for m in messages] != ids:
            raise Mismatch("fetch after rekey (bob): the messages differ from the history")
        checks["fetchAfterRekey"] = True

        # Change alice's password (the current one and the new one sealed), log out.
        conn.ok("changePassword", {
            "token": alice.token,
            "currentPassword": seal_password(alice.password, client.server_key, "changePassword",
                                             "currentPassword", alice.token),
            "newPassword": seal_password(new_password, client.server_key, "changePassword",
                                         "newPassword", alice.token),
        })
        old_password, alice.password = alice.password, new_password
        checks["changePassword"] = True
        old_token = alice.token
        conn.ok("logout", {"token": alice.token})
        conn.refused("fetch", {"token": old_token, "with": bob.name}, "notLoggedIn")
        checks["logout"] = True

        # The old password no longer works; the new one does.
        captcha = client.captcha()
        conn.refused("login", client.login_request(alice.name, old_password, captcha), "badCredentials")
        client.login(alice)
        conn.ok("logout", {"token": alice.token})
        conn.ok("logout", {"token": bob.token})
        checks["newPasswordLogin"] = True
    finally:
        conn.close()
    return {
        "ok": True,
        "messages": len(texts),
        "rekeyedVersion": rekeyed,
        "users": [alice.name, bob.name],
        "texts": [t.decode() for t in texts],
        "passwords": [old_password, bob.password, new_password],
        "hpke": suite,
        "keys": {u.name: u.key.private_bytes_raw().hex() for u in (alice, bob)},
        "checks": checks,
    }


def login_as(host, port, username, password):
    conn = Connection(host, port)
    try:
        client = Client(conn)
        captcha = client.captcha()
        answer = conn.call("login", client.login_request(username, password, captcha))
        if not answer["ok"]:
            return {"ok": False, "error": answer["error"], "message": answer["message"]}
        token = field(answer, "token", str, "login")
        conn.ok("logout", {"token": token})
        return {"ok": True}
    finally:
        conn.close()


def read_chat(host, port, username, password, peer, private_key_hex):
    user = User(username, password)
    raw = bytes.fromhex(private_key_hex)
    user.key = XWingKey.from_private(raw) if len(raw) == 96 else X25519PrivateKey.from_private_bytes(raw)
    user.public_key = public_bytes(user.key)
    conn = Connection(host, port)
    try:
        client = Client(conn)
        client.login(user)
        version, _, messages, texts = client.fetch(user, peer, after=0)
        conn.ok("logout", {"token": user.token})
    finally:
        conn.close()
    return {
        "ok": True,
        "keyVersion": version,
        "messages": [{"id": m["id"], "sender": m["sender"], "text": t.decode(errors="replace")}
                     for m, t in zip(messages, texts)],
    }


def emit(obj, status):
    print(json.dumps(obj))
    sys.stdout.flush()
    sys.exit(status)


def main(argv):
    usage = ("usage: msg_peer.py selftest | converse HOST PORT NAME_PREFIX | "
             "login-as HOST PORT USERNAME PASSWORD | "
             "read-chat HOST PORT USERNAME PASSWORD PEER PRIVATE_KEY_HEX")
    try:
        if argv[:1] == ["selftest"] and len(argv) == 1:
            emit(selftest(), 0)
        elif argv[:1] == ["converse"] and len(argv) == 4:
            emit(converse(argv[1], int(argv[2]), argv[3]), 0)
        elif argv[:1] == ["login-as"] and len(argv) == 5:
            result = login_as(argv[1], int(argv[2]), argv[3], argv[4])
            emit(result, 0 if result["ok"] else 1)
        elif argv[:1] == ["read-chat"] and len(argv) == 7:
            emit(read_chat(argv[1], int(argv[2]), *argv[3:]), 0)
        else:
            emit({"ok": False, "error": usage}, 2)
    except (Mismatch, ServerRefused) as e:
        emit({"ok": False, "error": str(e)}, 1)
    except (OSError, ValueError, plistlib.InvalidFileException) as e:
        emit({"ok": False, "error": f"{type(e).__name__}: {e}"}, 2)


if __name__ == "__main__":
    main(sys.argv[1:])
