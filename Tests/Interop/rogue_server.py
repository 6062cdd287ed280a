#!/usr/bin/env python3
"""A rogue cx/1 server, for HostileServerTests: what a hostile server can make a `lab run`
write into its reports and print on its terminal.

    rogue_server.py

Listens on two loopback ports and prints them: `cx on 127.0.0.1:P` and `http on 127.0.0.1:Q`.

- cx (docs/protocol.md §1, u32be frames of binary plists): every cx/1 request gets an error
  answer (§2.3) whose `error` code and `message` are markup and terminal controls, and the
  connection is closed; a `serverStats` request gets a crypto-lab/server-stats/1 document whose
  provider, machine, group, step and error-code strings are the same, its counts growing with
  each answer (so that the lab's before-and-after difference keeps them).
- http: the attacker's listener the payloads point at. Each request is printed on a line of
  its own, `fetched PATH`, before it is answered, one request at a time: a test that fetches
  `/canary` itself and waits for its line has seen every fetch that came before.
"""
import http.server
import json
import plistlib
import socket
import struct
import threading


def payloads(port):
    fetch = f"http://127.0.0.1:{port}"
    return {
        "script": f"<script>document.title='pwned';fetch('{fetch}/script')</script>",
        "img": f"<img src=x onerror=\"fetch('{fetch}/onerror')\">",
        "svg": f"<svg onload=\"fetch('{fetch}/svg')\">",
        "image": f"![x]({fetch}/markdown-image) [y](javascript:fetch('{fetch}/link'))",
        "attribute": f"\"><img src={fetch}/attribute>",
        "terminal": "\x1b]0;pwned-title\x07\x1b[2J\x1b[31m",
        "c1": "\u009b31m\u202eevil\u2066",
        "table": "a|b\n## injected\r\n| x |",
    }


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def send(sock, body):
    data = plistlib.dumps(body, fmt=plistlib.FMT_BINARY)
    sock.sendall(struct.pack(">I", len(data)) + data)


class Rogue:
    def __init__(self, http_port):
        self.p = payloads(http_port)
        self.answers = 0
        self.lock = threading.Lock()

    def stats(self):
        with self.lock:
            self.answers += 1
            n = self.answers
        p = self.p
        histogram = {"significantDigits": 3, "lowestDiscernibleValue": 1, "counts": [[1000, 5 * n]]}
        return {
            "format": "crypto-lab/server-stats/1",
            "provider": {"name": p["img"] + p["terminal"], "version": p["script"]},
            "machine": {"hostname": p["svg"] + p["c1"], "cpu": p["image"], "cores": 2,
                        "memoryBytes": 1 << 30, "os": p["table"], "kernel": p["attribute"] + p["terminal"]},
            "transport": "tcp",
            "startedAt": 1767225600000,
            "groups": [{
                "name": "x25519" + p["script"],
                "answered": 5 * n,
                "errors": {p["img"] + p["terminal"]: 2 * n},
                "steps": [{"step": p["svg"] + p["terminal"], "histogram": histogram}],
            }],
        }

    def connection(self, sock):
        with sock:
            while True:
                header = read_exact(sock, 4)
                if header is None:
                    return
                body = read_exact(sock, struct.unpack(">I", header)[0])
                if body is None:
                    return
                try:
                    request = plistlib.loads(body)
                except Exception:
                    request = {}
                if isinstance(request, dict) and request.get("op") == "serverStats":
                    stats = json.dumps(self.stats(), separators=(",", ":")).encode()
                    send(sock, {"op": "serverStats", "ok": True, "stats": stats})
                    continue
                p = self.p
                send(sock, {"error": p["script"] + p["terminal"],
                            "message": p["img"] + " " + p["svg"] + " " + p["image"] + " " + p["attribute"]
                            + " " + p["terminal"] + " " + p["c1"] + " " + p["table"]})
                return


class Fetches(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(f"fetched {self.path}", flush=True)
        self.send_response(200)
        self.send_header("Content-Type", "image/gif")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()

    def log_message(self, *arguments):
        pass


def main():
    web = http.server.HTTPServer(("127.0.0.1", 0), Fetches)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    rogue = Rogue(web.server_address[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"http on 127.0.0.1:{web.server_address[1]}", flush=True)
    print(f"cx on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=rogue.connection, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    main()
