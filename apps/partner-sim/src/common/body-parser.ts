import type { FastifyInstance } from 'fastify';

/**
 * One parser for every content type (the spec says JSON; a missing or wrong Content-Type is not an error
 * of the spec's table). It never fails: a body that is not JSON is remembered as such, so the signature is
 * checked first (401 before 400) and the handler then answers 400 bad_request with the partner's envelope.
 */
export function registerBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (req, raw, done) => {
    const text = typeof raw === 'string' ? raw : raw.toString('utf8');
    req.sim.rawBody = text;
    if (text.trim() === '') {
      req.sim.body = { kind: 'none' };
      done(null, undefined);
      return;
    }
    try {
      const value: unknown = JSON.parse(text);
      req.sim.body = { kind: 'json', value };
      done(null, value);
    } catch {
      req.sim.body = { kind: 'invalid', raw: text };
      done(null, undefined);
    }
  });
}
