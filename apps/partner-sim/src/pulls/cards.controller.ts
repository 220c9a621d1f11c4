import { Controller, Get, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ok } from '../common/answer';
import { PartnerError } from '../common/partner-error';
import { SignatureGuard } from '../auth/signature.guard';
import { ResponderService } from '../faults/responder.service';
import { SimStateService } from '../state/sim-state.service';
import { SyncPullsService } from './sync-pulls.service';

@Controller('partners/v1/cards')
@UseGuards(SignatureGuard)
export class CardsController {
  constructor(
    private readonly syncPulls: SyncPullsService,
    private readonly state: SimStateService,
    private readonly responder: ResponderService,
  ) {}

  @Post()
  pull(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.syncPulls.pull(req, reply);
  }

  @Get(':id')
  show(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const giftCardCode = this.state.world.cards.get(id)?.gift_card_code;
    return this.responder.read(req, reply, { kind: 'read', giftCardCode }, () => {
      const card = this.state.world.cards.get(id);
      return card ? ok({ card }) : new PartnerError(404, 'card_not_found', `Card ${id} not found`).toAnswer();
    });
  }
}
