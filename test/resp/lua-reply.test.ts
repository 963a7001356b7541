// fromLuaReply: a reply that went through Lua's conversion (a transaction run as one upstream
// script) turned back into what Redis sends, by reply shape.
import { describe, expect, it } from 'vitest';
import { fromLuaReply } from '../../src/resp/lua-reply.js';
import { arrayOf, mapOf } from '../../src/resp/reply-shape.js';

const r = (s: string): Buffer => Buffer.from(s);
const text = (b: Buffer): string => b.toString('latin1');

describe('fromLuaReply', () => {
  it('a null bulk is the null array where the reply is an array (Lua cannot tell them apart), `_` in RESP3', () => {
    expect(text(fromLuaReply(r('$-1\r\n'), arrayOf('bulk'), 2))).toBe('*-1\r\n');
    expect(text(fromLuaReply(r('$-1\r\n'), { ...arrayOf('bulk'), nil: 'bulk' }, 2))).toBe('$-1\r\n');
    expect(text(fromLuaReply(r('$-1\r\n'), 'bulk', 2))).toBe('$-1\r\n');
    expect(text(fromLuaReply(r('$-1\r\n'), 'any', 2))).toBe('$-1\r\n');
    expect(text(fromLuaReply(r('$-1\r\n'), arrayOf('bulk'), 3))).toBe('_\r\n');
  });

  it('a status reply that arrived as a bulk string is a status again; other replies pass', () => {
    expect(text(fromLuaReply(r('$2\r\nOK\r\n'), 'status', 2))).toBe('+OK\r\n');
    expect(text(fromLuaReply(r('$2\r\nOK\r\n'), 'bulk', 2))).toBe('$2\r\nOK\r\n');
    expect(text(fromLuaReply(r('-ERR x\r\n'), 'status', 2))).toBe('-ERR x\r\n');
    expect(text(fromLuaReply(r(':3\r\n'), 'int', 2))).toBe(':3\r\n');
  });

  it('RESP3 connections get the RESP3 form of the shape', () => {
    expect(text(fromLuaReply(r('*2\r\n$1\r\nf\r\n$1\r\nv\r\n'), mapOf('bulk'), 3))).toBe('%1\r\n$1\r\nf\r\n$1\r\nv\r\n');
  });
});
