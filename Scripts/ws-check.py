#!/usr/bin/env python3
"""Reads a WebSocket beside clients that never read, as the web tests of aqjack do (docs/WEB.md),
with nothing but Python's standard library.

  ws-check.py PORT [--path /live] [--stalled N] [--seconds S]

Opens N WebSocket connections to 127.0.0.1:PORT/PATH that never read (their receive buffers
kept small, so the server's writes to them soon fill every buffer), then one that reads text
messages for S seconds. Prints one JSON object: {"messages": count read, "maxGap": the longest
wait between two messages in seconds, "bytes": payload bytes read}. Exit 1 with a message on
standard error when a handshake fails or the server closes the reading connection.
"""
import argparse
import base64
import json
import os
import socket
import struct
import sys
import time


def open_websocket(port, path, receive_buffer=None):
    connection = socket.socket()
    if receive_buffer:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    connection.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        byte = connection.recv(1)
        if not byte:
            raise RuntimeError("the server closed the connection during the handshake")
        head += byte
    status = head.split(b"\r\n")[0]
    if b" 101 " not in status:
        raise RuntimeError(f"handshake refused: {status!r}")
    return connection


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise RuntimeError("the server closed the reading connection")
        data += chunk
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--path", default="/live")
    parser.add_argument("--stalled", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    try:
        stalled = [open_websocket(args.port, args.path, 4096) for _ in range(args.stalled)]
        reader = open_websocket(args.port, args.path)
        reader.settimeout(30)
        times, payload = [], 0
        start = time.time()
        while time.time() - start < args.seconds:
            head = read_exactly(reader, 2)
            length = head[1] & 0x7F
            if length == 126:
                length = struct.unpack(">H", read_exactly(reader, 2))[0]
            elif length == 127:
                length = struct.unpack(">Q", read_exactly(reader, 8))[0]
            read_exactly(reader, length)
            if head[0] & 0x0F == 1:
                times.append(time.time())
                payload += length
        gaps = [later - earlier for earlier, later in zip(times, times[1:])]
        print(json.dumps({"messages": len(times), "maxGap": max(gaps) if gaps else None, "bytes": payload}))
        for connection in stalled + [reader]:
            connection.close()
        return 0
    except Exception as error:
        print(f"ws-check.py: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
