import type { LedgerRequest } from '../ledger/ledger';

/** What the simulator learns about a request as it goes through the hooks, the guard and the handler. */
export interface SimRequestContext {
  /** The request's row in the ledger (partner endpoints only). */
  entry: LedgerRequest | null;
  /** POST /cards: the caller's X-RequestId, or the one we generated. */
  requestId: string | null;
  body: ParsedBody;
  /** The body's text exactly as it came (the callback receiver checks a signature over it). */
  rawBody: string | null;
}

/** The body as our parser saw it: nothing, JSON, or text that is not JSON (answered with 400 by the handlers). */
export type ParsedBody = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'invalid'; raw: string };

declare module 'fastify' {
  interface FastifyRequest {
    sim: SimRequestContext;
  }
}
