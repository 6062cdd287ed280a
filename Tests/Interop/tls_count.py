#!/usr/bin/env python3
"""Counts each TLS 1.3 connection's handshake bytes on the wire, independently of the lab:
a TCP relay between clients and one upstream server that reads the TLS record headers
(RFC 8446 §5.1) going from client to server.

A client's handshake flight ends with its Finished, the first record of type
application_data (23) it sends (the ClientHello is type 22, the compatibility
ChangeCipherSpec type 20). Its `sent` is every byte up to and including that record; its
`received` is every byte the server had sent before that record: the server's flight,
which the client must have read whole to make its Finished, and nothing after it (the
server's session tickets answer the Finished).

usage: tls_count.py UPSTREAM_HOST UPSTREAM_PORT
Prints "listening on 127.0.0.1:PORT" once ready, then one JSON line per connection whose
handshake it saw: {"sent": N, "received": M}. Runs until killed.
"""
import json
import socket
import sys
import threading

upstream = (sys.argv[1], int(sys.argv[2]))
out_lock = threading.Lock()


class Connection:
    def __init__(self):
        self.lock = threading.Lock()
        self.from_server = 0
        self.from_client = bytearray()
        self.done = False


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def client_to_server(conn, client, server):
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            with conn.lock:
                if not conn.done:
                    conn.from_client += data
                    offset = 0
                    while offset + 5 <= len(conn.from_client):
                        kind = conn.from_client[offset]
                        length = int.from_bytes(conn.from_client[offset + 3:offset + 5], "big")
                        end = offset + 5 + length
                        if end > len(conn.from_client):
                            break
                        if kind == 23:
                            conn.done = True
                            say(json.dumps({"sent": end, "received": conn.from_server}))
                            break
                        offset = end
            server.sendall(data)
    except OSError:
        pass
    finally:
        close_both(client, server)


def server_to_client(conn, server, client):
    try:
        while True:
            data = server.recv(65536)
            if not data:
                break
            with conn.lock:
                conn.from_server += len(data)
            client.sendall(data)
    except OSError:
        pass
    finally:
        close_both(client, server)


def close_both(client, server):
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    say(f"listening on 127.0.0.1:{listener.getsockname()[1]}")
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(upstream)
        conn = Connection()
        threading.Thread(target=client_to_server, args=(conn, client, server), daemon=True).start()
        threading.Thread(target=server_to_client, args=(conn, server, client), daemon=True).start()


main()
