#!/usr/bin/env python3
"""TCP relay used by scripts/redis-suite.sh --acl-users: Redis' test suite has no password option, and
a proxy started with --acl-users needs every connection to authenticate. The relay opens a connection
to the proxy for each client, sends `AUTH default <password>` first (its +OK is not passed on), then
copies bytes both ways. The client's own AUTH <user> <password> (ACL users) goes through unchanged.

    redis-suite-auth-relay.py LISTEN_PORT TARGET_PORT   (password in RELAY_PASSWORD)
"""
import asyncio
import os
import sys


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def serve(target_port: int, password: bytes, client_r, client_w) -> None:
    try:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_w.close()
        return
    up_w.write(b"*3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$%d\r\n%s\r\n" % (len(password), password))
    await up_w.drain()
    line = await up_r.readline()
    if line != b"+OK\r\n":
        sys.stderr.write(f"auth relay: the proxy refused AUTH default: {line!r}\n")
        client_w.close()
        up_w.close()
        return
    await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))


async def main() -> None:
    listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
    password = os.environ["RELAY_PASSWORD"].encode()
    server = await asyncio.start_server(lambda r, w: serve(target_port, password, r, w), "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


asyncio.run(main())
