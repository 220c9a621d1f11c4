import type { IncomingMessage } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { BOARD_PATH } from './auth/admin-guard';
import type { AdminSessions } from './auth/admin-sessions.service';

type BoardMode = 'act' | 'look';
const MODE_CONSTRAINT = 'cardpullBoard';

/**
 * The job dashboard (bull-board) for the orders and callbacks queues at /admin/queues, behind the admin
 * session (the guard hook must be installed first).
 *
 * bull-board's read-only mode belongs to the board, not to a request, so two boards are mounted at the same
 * path: one that can act (admins) and one read-only (viewers, and everyone with ADMIN_READ_ONLY). A Fastify
 * route constraint derived from the session cookie picks the board for each request; the guard hook also
 * refuses dashboard actions from viewers, so the read-only board is not the only line of defence.
 */
export function mountJobDashboard(instance: FastifyInstance, queues: Queue[], sessions: AdminSessions, readOnly: boolean): void {
  const modeOf = (req: IncomingMessage): BoardMode | undefined => {
    if (!req.url?.startsWith(BOARD_PATH)) return undefined;
    return sessions.read(req)?.canAct ? 'act' : 'look';
  };
  instance.addConstraintStrategy({
    name: MODE_CONSTRAINT,
    storage() {
      const handlers = new Map<string, unknown>();
      return { get: (mode: string) => (handlers.get(mode) ?? null) as never, set: (mode: string, store: unknown) => void handlers.set(mode, store) };
    },
    deriveConstraint: (req: IncomingMessage) => modeOf(req) as string,
    mustMatchWhenDerived: true,
  });
  const modes: BoardMode[] = readOnly ? ['look'] : ['act', 'look'];
  for (const mode of modes) {
    const adapter = new FastifyAdapter();
    adapter.setBasePath(BOARD_PATH);
    createBullBoard({
      queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: mode === 'look', description: DESCRIPTIONS[q.name] ?? '' })),
      serverAdapter: adapter,
      options: {
        uiConfig: {
          boardTitle: mode === 'look' ? 'Jobs (read-only)' : 'cardpull jobs',
          miscLinks: [{ text: 'Operations page', url: '/admin' }],
        },
      },
    });
    void instance.register(async (scope) => {
      // Every route of this board (its page, API and assets) answers only requests of its mode.
      scope.addHook('onRoute', (route) => {
        route.constraints = { ...route.constraints, [MODE_CONSTRAINT]: mode };
      });
      scope.addHook('onSend', async (_req, reply, payload) => (typeof payload === 'string' && isHtml(reply.getHeader('content-type')) ? withoutRemoteLinks(payload) : payload));
      await scope.register(adapter.registerPlugin(), { prefix: BOARD_PATH });
    });
  }
}

const isHtml = (type: unknown): boolean => typeof type === 'string' && type.startsWith('text/html');

/**
 * bull-board's page links its fonts from another origin (a stylesheet of web fonts). The dashboard must work
 * offline and load nothing from elsewhere: every <link> to another origin is dropped, and its styles fall
 * back to the system's fonts (their own font stacks name them). Its scripts, styles and images are served
 * from here already.
 */
export function withoutRemoteLinks(page: string): string {
  return page.replace(/<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\/[^>]*>\s*/gi, '');
}

const DESCRIPTIONS: Record<string, string> = {
  orders: 'Order steps (triggers only: every order lives in Postgres, and the sweeper re-creates lost jobs)',
  callbacks: 'Caller callback deliveries (the outbox is in Postgres)',
};
