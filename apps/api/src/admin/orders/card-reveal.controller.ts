import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiError } from '@cardpull/platform';
import { field, sendPage, Session } from '../admin-http';
import { ADMIN_HOME, crossSite } from '../auth/admin-guard';
import { AdminSessions, type AdminRequest, type AdminSession } from '../auth/admin-sessions.service';
import { isUuid } from '../../orders/order-input';
import { cardRevealView } from '../views/card-reveal.view';
import { CardReveals } from './card-reveal.service';

const MAX_REASON = 500;

/**
 * Reveal of a card kept for a refund or reuse, from the order page: admins only (not viewers, not with
 * ADMIN_READ_ONLY), with the page's CSRF token, from the page's own origin, and a reason. The answer shows
 * the card once; every refusal shows nothing and records nothing.
 */
@ApiExcludeController() // HTML for people, with cookie sessions: not part of the /v1 contract
@Controller('admin')
export class CardRevealController {
  constructor(
    private readonly reveals: CardReveals,
    private readonly sessions: AdminSessions,
  ) {}

  @Post('orders/:id/reveal-card')
  async reveal(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string, @Body() body: unknown) {
    if (!session.canAct) throw new ApiError(403, 'read_only', 'Read-only: this user may look but not reveal a card');
    if (!this.sessions.csrfValid(session, field(body, 'csrf'))) {
      throw new ApiError(403, 'csrf_token_invalid', 'Missing or wrong CSRF token: reload the page and try again');
    }
    // The cookie is SameSite=Strict and the token is checked; a secret's page also refuses what the browser says came from elsewhere.
    if (crossSite(req)) throw new ApiError(403, 'cross_site_request', 'A card is revealed only from the order page itself');
    const refuse = (message: string) => {
      this.sessions.setFlash(req, reply, { kind: 'error', message });
      return reply.redirect(isUuid(id) ? `/admin/orders/${id}` : ADMIN_HOME, 303);
    };
    if (!isUuid(id)) return refuse(`No order ${id}`);
    const partnerCardId = field(body, 'card').trim();
    const reason = field(body, 'reason').trim().slice(0, MAX_REASON);
    if (!partnerCardId) return refuse('No card was named: use the form of the card on the order page');
    if (!reason) return refuse(`Card ${partnerCardId} was not revealed: a reason is required to reveal a card`);
    const result = await this.reveals.reveal(id, partnerCardId, session.user, reason);
    if (!result.ok) return refuse(result.message);
    return sendPage(reply, cardRevealView(result.revealed, { session }));
  }
}
