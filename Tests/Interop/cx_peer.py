#!/usr/bin/env python3
"""Independent reference peer for the crypto-lab cx/1 exchange, written only from
docs/protocol.md (§1 framing, §2 cx/1) to cross-check another implementation.

Two ways to talk (CLI: see main()):
- files, one frame per file: `request`, `open` (client), `respond` (server);
- TCP sockets: `exchange` (client: one connection, --count exchanges) and `serve`
  (server: many connections, one thread each, until SIGTERM or SIGINT).

Exit codes: 0 ok. `open`, `exchange`: 1 protocol failure (the JSON line names the stage),
2 local or usage problem (stage "usage"). `respond`: 2 error dictionary written, 3 unreadable
frame (nothing written: the server would just drop the connection, §1). `serve`: 0 after
SIGTERM/SIGINT, having printed `stopped: C connections, E exchanges, K error answers`.
Needs `cryptography` (ML-KEM/ML-DSA) and, for RSA < 1024 bits, the `openssl` tool.
"""
import argparse, json, os, plistlib, signal, socket, socketserver, struct, subprocess, sys, threading

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization as ser
from cryptography.hazmat.primitives.asymmetric import ed25519, mldsa, mlkem, padding, rsa, x25519
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap, aes_key_wrap

# ---------------------------------------------------------------- constants
MAX_FRAME = 5 * 1024 * 1024                        # §1 default maxFrameBytes
BPLIST = b"bplist00"                               # §1, §2.2
SUITES = ("classic", "rsa-modern", "x25519", "pq")  # §2.4
RSA_BITS = {"classic": (512, 1024, 2048), "rsa-modern": (2048, 3072, 4096)}  # §2.4
RSA_DEFAULT = {"classic": 512, "rsa-modern": 2048}                          # §2.4
WRAP_INFO = b"crypto-lab cx/1 wrap"                # §2.4 HKDF info
LOREM = (b'Lorem ipsum dolor sit amet, consectetur adipisicing elit, sed do eiusmod '
         b'tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, '
         b'quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo '
         b'consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse '
         b'cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non '
         b'proident, sunt in culpa qui officia deserunt mollit.')  # §2.5
assert len(LOREM) == 426
PAYLOAD = LOREM + b"\x00"                          # §2.5: 427 bytes

class Fail(Exception):
    """A protocol failure: `stage` is the JSON stage (open) or error code (respond);
    `code` is the server's error code when the stage is "server-error"."""
    def __init__(self, stage, msg, code=None):
        super().__init__(msg)
        self.stage = stage
        self.code = code

def payload(n=None):
    """§2.5: default 427-byte block; payloadBytes N = first N bytes of the block repeated."""
    if n is None:
        return PAYLOAD
    return (PAYLOAD * (n // len(PAYLOAD) + 1))[:n]

# ---------------------------------------------------------------- framing (§1)
def frame(body, framing):
    if not 1 <= len(body) <= MAX_FRAME:
        raise ValueError(f"body length {len(body)} outside 1..{MAX_FRAME} (§1)")
    hdr = struct.pack(">I", len(body)) if framing == "u32be" else struct.pack("<Q", len(body))
    return hdr + body

def unframe(data, framing):
    """Return the body of a file holding exactly one frame; ValueError otherwise."""
    hl, fmt = (4, ">I") if framing == "u32be" else (8, "<Q")
    if len(data) < hl:
        raise ValueError(f"short length header ({len(data)} bytes)")
    (n,) = struct.unpack(fmt, data[:hl])
    if not 1 <= n <= MAX_FRAME:                    # zero/oversized: rejected before body
        raise ValueError(f"frame length {n} outside 1..{MAX_FRAME}")
    if len(data) - hl != n:
        raise ValueError(f"frame announces {n} body bytes, file has {len(data) - hl}")
    return data[hl:]

def read_file(path):
    with open(path, "rb") as f:
        return f.read()

def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)

def bplist(d):                     # plistlib: int -> plist integer, bool -> plist boolean
    return plistlib.dumps(d, fmt=plistlib.FMT_BINARY)

def parse_dict(body):
    """Parse a bplist00 body whose top level must be a dict with string keys (§1)."""
    if not body.startswith(BPLIST):
        raise ValueError("body is not a bplist00")
    d = plistlib.loads(body, fmt=plistlib.FMT_BINARY)
    if not isinstance(d, dict) or not all(isinstance(k, str) for k in d):
        raise ValueError("top level is not a dictionary with string keys")
    return d

def field(d, key, typ, optional=False):
    """Strict typed lookup. bool is excluded from int (crypto7 is an integer, §2.3)."""
    if key not in d:
        if optional:
            return None
        raise ValueError(f"missing key {key!r}")
    v = d[key]
    if type(v) is not typ:                         # exact type: rejects bool for int
        raise ValueError(f"{key!r} is {type(v).__name__}, expected {typ.__name__}")
    return v

# ---------------------------------------------------------------- keys (§2.4 encodings)
def rsa_generate(bits):
    if bits >= 1024:
        return rsa.generate_private_key(65537, bits)
    # cryptography refuses < 1024 bits; classic's 512-bit default comes from openssl.
    pem = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                          f"rsa_keygen_bits:{bits}"], check=True, capture_output=True).stdout
    return ser.load_pem_private_key(pem, None)

def rsa_pub_der(pub):
    """PKCS#1 RSAPublicKey DER (not SubjectPublicKeyInfo)."""
    return pub.public_bytes(ser.Encoding.DER, ser.PublicFormat.PKCS1)

def rsa_pub_load(der):
    """Load PKCS#1 RSAPublicKey DER strictly: it must re-encode to the same bytes, which
    rejects SubjectPublicKeyInfo and non-canonical DER."""
    try:
        pub = ser.load_der_public_key(der)
    except Exception as e:
        raise ValueError(f"not an RSA public key: {e}")
    if not isinstance(pub, rsa.RSAPublicKey) or rsa_pub_der(pub) != der:
        raise ValueError("not a PKCS#1 RSAPublicKey DER")
    return pub

def client_pub_load(suite, raw):
    """Decode the client's cryptoP for `suite` (§2.1/§2.4); ValueError if unusable."""
    if suite in RSA_BITS:
        pub = rsa_pub_load(raw)
        if pub.key_size not in RSA_BITS[suite]:
            raise ValueError(f"{pub.key_size}-bit RSA not allowed for {suite} {RSA_BITS[suite]}")
        return pub
    if suite == "x25519":
        if len(raw) != 32:
            raise ValueError(f"X25519 key is {len(raw)} bytes, expected 32")
        return x25519.X25519PublicKey.from_public_bytes(raw)
    if len(raw) != 1184:
        raise ValueError(f"ML-KEM-768 key is {len(raw)} bytes, expected 1184")
    return mlkem.MLKEM768PublicKey.from_public_bytes(raw)

def private_to_file(suite, priv):
    """Key file format (private to this tool): RSA = PKCS#8 DER, X25519 = raw 32 bytes,
    ML-KEM-768 = 64-byte seed."""
    if suite in RSA_BITS:
        return priv.private_bytes(ser.Encoding.DER, ser.PrivateFormat.PKCS8, ser.NoEncryption())
    return priv.private_bytes_raw()

def private_from_file(suite, data):
    if suite in RSA_BITS:
        return ser.load_der_private_key(data, None)
    if suite == "x25519":
        return x25519.X25519PrivateKey.from_private_bytes(data)
    return mlkem.MLKEM768PrivateKey.from_seed_bytes(data)

def client_pub_bytes(suite, priv):
    if suite in RSA_BITS:
        return rsa_pub_der(priv.public_key())
    return priv.public_key().public_bytes_raw()

# ---------------------------------------------------------------- primitives (§2.4)
OAEP = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
PSS = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
ZERO_IV = bytes(16)

def kek(z, salt):
    return HKDF(hashes.SHA256(), 32, salt, WRAP_INFO).derive(z)

def aes_cbc(key, data, encrypt):
    c = Cipher(algorithms.AES(key), modes.CBC(ZERO_IV))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()

def pkcs7_pad(m):
    n = 16 - len(m) % 16
    return m + bytes([n]) * n

def pkcs7_unpad(m):
    """Strict PKCS#7 removal; §2.4 classic pads only when len % 16 != 0, so a pad of
    16 (a whole extra block) is rejected too."""
    n = m[-1] if m else 0
    if not 1 <= n <= 15 or m[-n:] != bytes([n]) * n:
        raise ValueError("bad PKCS#7 padding")
    return m[:-n]

def server_sign_key(suite, bits):
    if suite in RSA_BITS:
        return rsa_generate(bits)
    if suite == "x25519":
        return ed25519.Ed25519PrivateKey.generate()
    return mldsa.MLDSA65PrivateKey.generate()

def sign(suite, key, msg):
    if suite == "classic":
        return key.sign(msg, padding.PKCS1v15(), hashes.SHA1())
    if suite == "rsa-modern":
        return key.sign(msg, PSS, hashes.SHA256())
    if suite == "x25519":
        return key.sign(msg)
    return key.sign(msg, b"")                      # ML-DSA-65, empty context

def verify(suite, pub_raw, sig, msg):
    """Raise InvalidSignature on a bad signature."""
    if suite == "classic":
        rsa_pub_load(pub_raw).verify(sig, msg, padding.PKCS1v15(), hashes.SHA1())
    elif suite == "rsa-modern":
        rsa_pub_load(pub_raw).verify(sig, msg, PSS, hashes.SHA256())
    elif suite == "x25519":
        ed25519.Ed25519PublicKey.from_public_bytes(pub_raw).verify(sig, msg)
    else:
        mldsa.MLDSA65PublicKey.from_public_bytes(pub_raw).verify(sig, msg, b"")

def server_pub_check(suite, raw, client_bits):
    """Decode stage: the server's cryptoP must have the suite's encoding (§2.4)."""
    if suite in RSA_BITS:
        bits = rsa_pub_load(raw).key_size
        if bits != client_bits:                    # §2.4: "RSA, same encoding and size"
            raise ValueError(f"server RSA key is {bits} bits, client's is {client_bits}")
    elif suite == "x25519":
        ed25519.Ed25519PublicKey.from_public_bytes(raw)
    else:
        if len(raw) != 1952:
            raise ValueError(f"ML-DSA-65 key is {len(raw)} bytes, expected 1952")
        mldsa.MLDSA65PublicKey.from_public_bytes(raw)

# ---------------------------------------------------------------- request (§2.1, §2.2)
def client_keypair(suite, rsa_bits=None):
    """The client's key pair for `suite`: (private key, cryptoP bytes)."""
    if suite in RSA_BITS:
        priv = rsa_generate(rsa_bits or RSA_DEFAULT[suite])
    elif suite == "x25519":
        priv = x25519.X25519PrivateKey.generate()
    else:
        priv = mlkem.MLKEM768PrivateKey.generate()
    return priv, client_pub_bytes(suite, priv)

def request_body(suite, pub, legacy):
    """§2.1 request dictionary, or §2.2 the bare PKCS#1 key."""
    return pub if legacy else bplist({"suite": suite, "cryptoP": pub})

def cmd_request(a):
    if a.legacy and a.suite != "classic":
        sys.exit("--legacy is only valid with --suite classic (§2.2)")
    priv, pub = client_keypair(a.suite, a.rsa_bits)
    write_file(a.key_out, private_to_file(a.suite, priv))
    write_file(a.out, frame(request_body(a.suite, pub, a.legacy), a.framing))
    print(json.dumps({"ok": True, "suite": a.suite, "legacy": a.legacy, "cryptoP_len": len(pub)}))

# ---------------------------------------------------------------- respond (§2.3)
def parse_request(body):
    """Return (suite, raw cryptoP, legacy?) or raise Fail(code, msg); the key is not
    decoded yet (client_pub_load), so a suite the server does not offer is reported as
    such whatever key came with it."""
    if not body.startswith(BPLIST):                # §2.2 legacy: bare PKCS#1 DER
        return "classic", body, True
    try:
        d = parse_dict(body)
        suite = field(d, "suite", str)
        raw = field(d, "cryptoP", bytes)
    except Exception as e:
        raise Fail("badRequest", str(e))
    if suite not in SUITES:
        raise Fail("unknownSuite", f"unknown suite {suite!r}")
    return suite, raw, False

def wrap(suite, client_pub, session):
    """§2.4 wrap of the session key -> cryptoK."""
    if suite == "classic":
        return client_pub.encrypt(session, padding.PKCS1v15())
    if suite == "rsa-modern":
        return client_pub.encrypt(session, OAEP)
    if suite == "x25519":
        e = x25519.X25519PrivateKey.generate()
        epub = e.public_key().public_bytes_raw()
        cpub = client_pub.public_bytes_raw()
        try:
            z = e.exchange(client_pub)
        except ValueError as ex:                   # all-zero shared secret (low-order key)
            raise Fail("badPublicKey", f"X25519: {ex}")
        return epub + aes_key_wrap(kek(z, epub + cpub), session)
    z, ct = client_pub.encapsulate()               # cryptography returns (secret, ct)
    return ct + aes_key_wrap(kek(z, ct), session)

def fresh_server_key(rsa_bits=None):
    """A `signing_key` for answer(): a new key per call; RSA sized --rsa-bits or, as §2.4
    says ("same encoding and size"), like the client's key."""
    def make(suite, client_pub):
        return server_sign_key(suite, (rsa_bits or client_pub.key_size) if suite in RSA_BITS else None)
    return make

def answer(body, msg, signing_key, offered=SUITES):
    """Answer one request body (§2.3). Returns (response body, error code or None, suite,
    legacy). `signing_key(suite, client_pub)` gives the server's private signing key;
    `offered` lists the suites served (a known suite outside it is `unsupported`)."""
    suite, legacy = None, not body.startswith(BPLIST)
    try:
        suite, raw, legacy = parse_request(body)
        if suite not in offered:
            raise Fail("unsupported", f"this server offers {', '.join(offered)}, not {suite!r}")
        try:
            client_pub = client_pub_load(suite, raw)
        except Exception as e:
            raise Fail("badPublicKey", f"{'legacy request: ' if legacy else ''}{e}")
        skey = signing_key(suite, client_pub)
        resp = {} if legacy else {"suite": suite}  # §2.3: no suite echo for legacy
        if suite in RSA_BITS:
            resp["cryptoP"] = rsa_pub_der(skey.public_key())
        else:
            resp["cryptoP"] = skey.public_key().public_bytes_raw()
        if suite == "classic":
            session = os.urandom(16)
            padded = len(msg) % 16 != 0            # pad only when not a multiple of 16
            resp["cryptoM"] = aes_cbc(session, pkcs7_pad(msg) if padded else msg, True)
            resp["crypto7"] = 1 if padded else 0   # int, never bool -> plist integer
        else:
            session, nonce = os.urandom(32), os.urandom(12)
            resp["cryptoM"] = AESGCM(session).encrypt(nonce, msg, suite.encode())
            resp["cryptoN"] = nonce
            resp["crypto7"] = 0
        resp["cryptoS"] = sign(suite, skey, msg)
        resp["cryptoK"] = wrap(suite, client_pub, session)
    except Fail as f:
        return bplist({"error": f.stage, "message": str(f)}), f.stage, suite, legacy
    return bplist(resp), None, suite, legacy

def cmd_respond(a):
    try:
        body = unframe(read_file(a.inp), a.framing)
    except (OSError, ValueError) as e:             # §1: drop the connection, no answer
        print(json.dumps({"ok": False, "error": "framing", "message": str(e)}))
        return 3
    msg = payload(a.payload_bytes)
    out, code, suite, legacy = answer(body, msg, fresh_server_key(a.rsa_bits))
    write_file(a.out, frame(out, a.framing))
    if code is not None:
        message = plistlib.loads(out)["message"]
        print(json.dumps({"ok": False, "error": code, "message": message}))
        return 2
    print(json.dumps({"ok": True, "suite": suite, "legacy": legacy, "payload_len": len(msg)}))
    return 0

# ---------------------------------------------------------------- open (client side, §2.3)
def open_body(suite, legacy, priv, sent, body, want):
    """Check one response body (§2.3) to a request whose cryptoP was `sent`, made with
    `priv`. Returns the verified plaintext, or raises Fail(stage, msg)."""
    # decode: plist, strict types (§1, §2.3)
    try:
        d = parse_dict(body)
    except Exception as e:
        raise Fail("decode", str(e))
    if "error" in d:                               # §2.3 error dictionary
        raise Fail("server-error", f"{d.get('error')!r}: {d.get('message')!r}", d.get("error"))
    try:
        echo = field(d, "suite", str, optional=True)
        if legacy and echo is not None:
            raise ValueError(f"suite {echo!r} present in answer to a legacy request")
        if not legacy and echo != suite:
            raise ValueError(f"suite echo {echo!r} != {suite!r}")
        spub = field(d, "cryptoP", bytes)
        ctext = field(d, "cryptoM", bytes)
        p7 = field(d, "crypto7", int)
        sig = field(d, "cryptoS", bytes)
        wrapped = field(d, "cryptoK", bytes)
        nonce = field(d, "cryptoN", bytes, optional=True)
        if p7 not in (0, 1):
            raise ValueError(f"crypto7 = {p7}, expected 0 or 1")
        if suite == "classic":
            if nonce is not None:
                raise ValueError("cryptoN present for classic (§2.3: IV is 16 zero bytes)")
        else:
            if nonce is None or len(nonce) != 12:
                raise ValueError("cryptoN missing or not 12 bytes")
            if p7 != 0:
                raise ValueError("crypto7 = 1 for an AES-GCM suite (only classic pads)")
        client_bits = priv.key_size if suite in RSA_BITS else None
        server_pub_check(suite, spub, client_bits)
    except Exception as e:
        raise Fail("decode", str(e))

    # unwrap cryptoK (§2.4)
    try:
        if suite == "classic":
            session = priv.decrypt(wrapped, padding.PKCS1v15())
        elif suite == "rsa-modern":
            session = priv.decrypt(wrapped, OAEP)
        elif suite == "x25519":
            if len(wrapped) != 32 + 40:
                raise ValueError(f"cryptoK is {len(wrapped)} bytes, expected 72")
            epub = wrapped[:32]
            z = priv.exchange(x25519.X25519PublicKey.from_public_bytes(epub))
            session = aes_key_unwrap(kek(z, epub + sent), wrapped[32:])
        else:
            if len(wrapped) != 1088 + 40:
                raise ValueError(f"cryptoK is {len(wrapped)} bytes, expected 1128")
            ct = wrapped[:1088]
            session = aes_key_unwrap(kek(priv.decapsulate(ct), ct), wrapped[1088:])
        want_len = 16 if suite == "classic" else 32
        if len(session) != want_len:
            raise ValueError(f"session key is {len(session)} bytes, expected {want_len}")
    except (ValueError, InvalidUnwrap) as e:
        raise Fail("unwrap", str(e) or type(e).__name__)

    # decrypt cryptoM (§2.4), removing PKCS#7 iff crypto7 == 1 (§2.3)
    try:
        if suite == "classic":
            if len(ctext) % 16:
                raise ValueError(f"CBC ciphertext length {len(ctext)} not a multiple of 16")
            plain = aes_cbc(session, ctext, False)
            if p7 == 1:
                plain = pkcs7_unpad(plain)
        else:
            plain = AESGCM(session).decrypt(nonce, ctext, suite.encode())
    except (ValueError, InvalidTag) as e:
        raise Fail("decrypt", str(e) or type(e).__name__)

    # verify cryptoS over the decrypted bytes with the server's cryptoP
    try:
        verify(suite, spub, sig, plain)
    except (InvalidSignature, ValueError) as e:
        raise Fail("verify", str(e) or "signature does not verify")

    # payload (§2.5)
    if plain != want:
        raise Fail("payload", f"plaintext ({len(plain)} bytes) != expected ({len(want)} bytes)")
    return plain

def open_response(a):
    """Return the verified plaintext of the files named in `a`, or raise Fail(stage, msg)."""
    suite = a.suite
    # Local inputs: our private key and the request we sent (its cryptoP is `clientKey`).
    try:
        priv = private_from_file(suite, read_file(a.key))
        req = unframe(read_file(a.request), a.framing)
        if a.legacy:
            sent = req
        else:
            rd = parse_dict(req)
            if field(rd, "suite", str) != suite:
                raise ValueError("request suite differs from --suite")
            sent = field(rd, "cryptoP", bytes)
        if sent != client_pub_bytes(suite, priv):
            raise ValueError("request's cryptoP does not match --key")
    except Exception as e:
        raise Fail("usage", str(e))
    try:
        body = unframe(read_file(a.inp), a.framing)
    except Exception as e:
        raise Fail("decode", str(e))
    return open_body(suite, a.legacy, priv, sent, body, payload(a.payload_bytes))

def cmd_open(a):
    if a.legacy and a.suite != "classic":
        sys.exit("--legacy is only valid with --suite classic (§2.2)")
    try:
        plain = open_response(a)
    except Fail as f:
        print(json.dumps({"ok": False, "stage": f.stage, "error": str(f)}))
        return 2 if f.stage == "usage" else 1
    except Exception as e:                         # a bug here, not a verdict on the peer
        print(json.dumps({"ok": False, "stage": "internal", "error": repr(e)}))
        return 2
    print(json.dumps({"ok": True, "plaintext_hex": plain.hex()}))
    return 0

# ---------------------------------------------------------------- sockets (§1)
class Closed(Exception):
    """The peer closed the connection cleanly between frames."""

def recv_exact(sock, n):
    """Read exactly n bytes, looping over short reads (§1: never a single read)."""
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

def read_frame(sock, framing, max_frame=MAX_FRAME):
    """Read one whole frame's body. Raises Closed on EOF before a frame starts, ValueError on
    a zero or oversized length (checked before any body byte is read) or a short frame,
    socket.timeout when the peer stays idle past the socket's timeout."""
    hl, fmt = (4, ">I") if framing == "u32be" else (8, "<Q")
    hdr = recv_exact(sock, hl)
    if not hdr:
        raise Closed()
    if len(hdr) < hl:
        raise ValueError(f"connection closed inside the {hl}-byte length ({len(hdr)} bytes)")
    (n,) = struct.unpack(fmt, hdr)
    if not 1 <= n <= max_frame:
        raise ValueError(f"frame length {n} outside 1..{max_frame}")
    body = recv_exact(sock, n)
    if len(body) != n:
        raise ValueError(f"connection closed after {len(body)} of {n} body bytes")
    return body

def send_frame(sock, body, framing):
    sock.sendall(frame(body, framing))

def host_port(text):
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)

# ---------------------------------------------------------------- exchange (socket client)
def cmd_exchange(a):
    """One connection, --count exchanges, each fully verified (open_body). The key pair is
    made once for the run (§2.6 default) unless --keys per-exchange."""
    if a.legacy and a.suite != "classic":
        print(json.dumps({"ok": False, "stage": "usage", "error": "--legacy needs --suite classic (§2.2)"}))
        return 2
    want = payload(a.payload_bytes)
    done, stage = 0, "keygen"

    def result(ok, **extra):
        print(json.dumps({"ok": ok, "suite": a.suite, "legacy": a.legacy, "framing": a.framing,
                          "keys": a.keys, "exchanges": done, **extra}), flush=True)
        return 0 if ok else 1

    try:
        priv, pub = client_keypair(a.suite, a.rsa_bits)
        stage = "connect"
        sock = socket.create_connection(a.connect, timeout=a.timeout)
    except Exception as e:
        return result(False, stage=stage, error=str(e) or type(e).__name__)
    with sock:
        for i in range(a.count):
            try:
                if i and a.keys == "per-exchange":
                    stage = "keygen"
                    priv, pub = client_keypair(a.suite, a.rsa_bits)
                stage = "send"
                send_frame(sock, request_body(a.suite, pub, a.legacy), a.framing)
                stage = "receive"
                try:
                    body = read_frame(sock, a.framing)
                except Closed:
                    raise ValueError("the server closed the connection instead of answering")
                open_body(a.suite, a.legacy, priv, pub, body, want)
                done += 1
            except Fail as f:
                extra = {}
                if f.stage == "server-error":      # §2.3: the server answers, then closes
                    extra["code"] = f.code
                    try:
                        extra["closed"] = recv_exact(sock, 1) == b""
                    except OSError:
                        extra["closed"] = False
                return result(False, stage=f.stage, error=str(f), exchange=i + 1, **extra)
            except (OSError, ValueError) as e:     # socket.timeout is an OSError
                return result(False, stage=stage, error=str(e) or type(e).__name__, exchange=i + 1)
    return result(True)

# ---------------------------------------------------------------- serve (socket server)
class CXServer(socketserver.ThreadingTCPServer):
    """cx/1 over TCP: one thread per connection, one shared set of server keys."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, a):
        super().__init__(address, CXConnection)
        self.a = a
        self.offered = tuple(a.suites)
        self.msg = payload(a.payload_bytes)
        self.lock = threading.Lock()
        self.keys = {}                             # (suite, bits) -> signing key, per run
        self.connections = self.exchanges = self.errors = 0
        if a.keys == "per-run":                    # §2.6: made once at start
            for suite in self.offered:             # RSA: the default size; others lazily
                self.key_for(suite, (a.rsa_bits or RSA_DEFAULT[suite]) if suite in RSA_BITS else None)

    def key_for(self, suite, bits):
        with self.lock:
            key = self.keys.get((suite, bits))
        if key is None:
            key = server_sign_key(suite, bits)
            with self.lock:                        # two threads may race: keep the first
                key = self.keys.setdefault((suite, bits), key)
        return key

    def signing_key(self, suite, client_pub):
        bits = (self.a.rsa_bits or client_pub.key_size) if suite in RSA_BITS else None
        if self.a.keys == "per-exchange":
            return server_sign_key(suite, bits)
        return self.key_for(suite, bits)

    def count(self, **deltas):
        with self.lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

def log(text):
    print(text, file=sys.stderr, flush=True)

class CXConnection(socketserver.BaseRequestHandler):
    def handle(self):
        srv, sock, peer = self.server, self.request, "%s:%s" % self.client_address[:2]
        srv.count(connections=1)
        sock.settimeout(srv.a.idle_timeout)
        while True:
            try:
                body = read_frame(sock, srv.a.framing, srv.a.max_frame_bytes)
            except Closed:
                return
            except socket.timeout:
                log(f"{peer}: idle for {srv.a.idle_timeout} s, closing")
                return
            except (OSError, ValueError) as e:     # §1: close at once, no answer
                log(f"{peer}: closing: {e}")
                return
            out, code, suite, legacy = answer(body, srv.msg, srv.signing_key, srv.offered)
            try:
                send_frame(sock, out, srv.a.framing)
            except OSError as e:
                log(f"{peer}: send failed: {e}")
                return
            if code is not None:                   # §2.3: error answer, then close
                srv.count(errors=1)
                log(f"{peer}: answered {code} ({suite or '?'}{', legacy' if legacy else ''}), closing")
                return
            srv.count(exchanges=1)

def cmd_serve(a):
    for s in a.suites:
        if s not in SUITES:
            sys.exit(f"--suites: unknown suite {s!r}; expected some of {', '.join(SUITES)}")
    # A parent may have spawned us with these blocked (Foundation's Process keeps the
    # spawning thread's mask): unblock them so SIGTERM stops the server.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    server = CXServer((a.host, a.port), a)
    stopping = threading.Event()

    def stop(signum, _frame):
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    host, port = server.server_address[:2]
    print(f"listening on {host}:{port}", flush=True)
    print(f"suites: {', '.join(server.offered)} (framing {a.framing}, keys {a.keys}, "
          f"payload {len(server.msg)} bytes)", flush=True)
    with server:
        server.serve_forever(poll_interval=0.1)
    print(f"stopped: {server.connections} connections, {server.exchanges} exchanges, "
          f"{server.errors} error answers", flush=True)
    return 0

# ---------------------------------------------------------------- CLI
def cmd_public_key(a):
    """Prints {"public": hex}: the wire encoding (§2.6) of the private key's public half."""
    data = bytes.fromhex(a.private)
    if a.type == "rsa":
        public = rsa_pub_der(ser.load_der_private_key(data, None).public_key())
    elif a.type == "x25519":
        public = x25519.X25519PrivateKey.from_private_bytes(data).public_key().public_bytes_raw()
    elif a.type == "ed25519":
        public = ed25519.Ed25519PrivateKey.from_private_bytes(data).public_key().public_bytes_raw()
    elif a.type == "mlkem768":
        public = mlkem.MLKEM768PrivateKey.from_seed_bytes(data).public_key().public_bytes_raw()
    else:
        public = mldsa.MLDSA65PrivateKey.from_seed_bytes(data).public_key().public_bytes_raw()
    print(json.dumps({"public": public.hex()}))

def main():
    def nonneg(s):
        if int(s) < 0:
            raise argparse.ArgumentTypeError("must be >= 0")
        return int(s)

    def positive(s):
        if int(s) < 1:
            raise argparse.ArgumentTypeError("must be >= 1")
        return int(s)

    def suite_list(s):
        return [x.strip() for x in s.split(",") if x.strip()]

    p = argparse.ArgumentParser(description="cx/1 reference peer (docs/protocol.md §1-§2)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("request", help="client: make key pair, write request frame")
    o = sub.add_parser("open", help="client: check the server's response frame")
    s = sub.add_parser("respond", help="server: answer a request frame")
    x = sub.add_parser("exchange", help="client over TCP: --count verified exchanges on one connection")
    v = sub.add_parser("serve", help="server over TCP until SIGTERM/SIGINT")
    for sp in (r, o, s, x, v):
        sp.add_argument("--framing", choices=("u32be", "u64le"), default="u32be")
    for sp in (r, o, x):
        sp.add_argument("--suite", choices=SUITES, required=True)
        sp.add_argument("--legacy", action="store_true")   # §2.2, classic only
    for sp in (r, s, x, v):
        sp.add_argument("--rsa-bits", type=int)
    for sp in (r, s):
        sp.add_argument("--out", required=True)
    for sp in (o, s):
        sp.add_argument("--in", dest="inp", required=True)
    for sp in (o, s, x, v):
        sp.add_argument("--payload-bytes", type=nonneg)
    for sp in (x, v):
        sp.add_argument("--keys", choices=("per-run", "per-exchange"), default="per-run")
    r.add_argument("--key-out", required=True)
    o.add_argument("--key", required=True)
    o.add_argument("--request", required=True)
    x.add_argument("--connect", type=host_port, required=True, metavar="HOST:PORT")
    x.add_argument("--count", type=positive, default=1)
    x.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the server")
    v.add_argument("--host", default="127.0.0.1")
    v.add_argument("--port", type=nonneg, default=0)
    v.add_argument("--suites", type=suite_list, default=list(SUITES), metavar="LIST")
    v.add_argument("--max-frame-bytes", type=positive, default=MAX_FRAME)
    v.add_argument("--idle-timeout", type=float, default=30.0, help="seconds")
    k = sub.add_parser("public-key", help="the public key of a private key (the lab's fixed keys)")
    k.add_argument("--type", choices=("rsa", "x25519", "ed25519", "mlkem768", "mldsa65"), required=True)
    k.add_argument("--private", required=True, help="hex: PKCS#1 or PKCS#8 DER for RSA, raw key or seed otherwise")
    a = p.parse_args()
    commands = {"request": cmd_request, "open": cmd_open, "respond": cmd_respond,
                "exchange": cmd_exchange, "serve": cmd_serve, "public-key": cmd_public_key}
    return commands[a.cmd](a) or 0

if __name__ == "__main__":
    sys.exit(main())
