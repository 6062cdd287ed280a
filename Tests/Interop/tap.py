#!/usr/bin/env python3
"""A wire tap: a TCP relay that forwards every byte between clients and one upstream
server and appends all of them, both directions, to a capture file.

usage: tap.py UPSTREAM_HOST UPSTREAM_PORT CAPTURE_FILE
Prints "listening on 127.0.0.1:PORT" once ready; runs until killed.
"""
import socket
import sys
import threading

upstream = (sys.argv[1], int(sys.argv[2]))
capture = open(sys.argv[3], "ab", buffering=0)
lock = threading.Lock()


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            with lock:
                capture.write(data)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client):
    server = socket.create_connection(upstream)
    threading.Thread(target=pump, args=(client, server), daemon=True).start()
    threading.Thread(target=pump, args=(server, client), daemon=True).start()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(256)
print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
while True:
    connection, _ = listener.accept()
    serve(connection)
