// The Proxy page's action bodies (src/console/proxy-actions.ts): each action's Redis command, and every
// malformed body refused with a message saying what is expected.
import { describe, expect, it } from 'vitest';
import { actionCommand, parseAction } from '../../src/console/proxy-actions.js';

describe('proxy console actions', () => {
  it('reads each action into its Redis command', () => {
    expect(parseAction('{"action":"client-kill","id":"12"}')).toEqual({ action: 'client-kill', id: '12' });
    expect(actionCommand({ action: 'client-kill', id: '12' })).toEqual(['CLIENT', 'KILL', 'ID', '12']);
    expect(parseAction('{"action":"slowlog-reset","id":"ignored"}')).toEqual({ action: 'slowlog-reset' });
    expect(actionCommand({ action: 'slowlog-reset' })).toEqual(['SLOWLOG', 'RESET']);
    expect(actionCommand({ action: 'resetstat' })).toEqual(['CONFIG', 'RESETSTAT']);
  });

  it('refuses a body that is not JSON, an unknown action, and a kill without a client id', () => {
    const error = (text: string) => (parseAction(text) as { error: string }).error;
    expect(error('kill 12')).toBe('the action body is not JSON: {"action": "client-kill", "id": "12"}');
    expect(error('null')).toBe('unknown action undefined: one of client-kill, slowlog-reset, resetstat');
    expect(error('{"action":"flushall"}')).toBe('unknown action "flushall": one of client-kill, slowlog-reset, resetstat');
    expect(error('{"action":"__proto__"}')).toContain('unknown action');
    for (const id of [undefined, 12, '', '1 2', '-1', 'x', '12345678901234567890'])
      expect(error(JSON.stringify({ action: 'client-kill', id })), String(id)).toBe(
        'client-kill needs the client id: {"action": "client-kill", "id": "12"}',
      );
  });
});
