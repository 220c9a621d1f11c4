import { transportFailure } from './partner-client';

const fail = (code: string | undefined, name = 'Error', message = 'x') => transportFailure(Object.assign(new Error(message), { name, ...(code ? { code } : {}) }));

describe('a call that threw: timeout, never connected, or a connection broken after the request may have been written', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])('%s happens before a byte is written -> not_connected (nothing reached the partner)', (code) => {
    expect(fail(code)).toMatchObject({ kind: 'unknown', reason: 'not_connected', message: expect.stringContaining(code) });
  });

  it.each(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'EHOSTUNREACH', 'ETIMEDOUT'])('%s may come after the request was written -> network (the partner may have started work)', (code) => {
    expect(fail(code)).toMatchObject({ kind: 'unknown', reason: 'network' });
  });

  it('our deadline (AbortSignal) or undici’s header/body timeouts -> timeout (the partner may still be working)', () => {
    expect(fail(undefined, 'TimeoutError')).toMatchObject({ reason: 'timeout' });
    expect(fail('UND_ERR_HEADERS_TIMEOUT')).toMatchObject({ reason: 'timeout' });
    expect(fail('UND_ERR_BODY_TIMEOUT')).toMatchObject({ reason: 'timeout' });
  });
});
