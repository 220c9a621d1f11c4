import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import type { Inventory } from '@cardpull/partner-client';
import { PartnerError } from '../common/partner-error';
import { inventoryOf } from '../catalog/inventory';
import { FaultRegistry } from '../faults/fault-registry';
import { faultSpecSchema, type Fault } from '@cardpull/sim-contract';
import { simClockSchema, simLimitsSchema, simReadingsSchema, type LedgerView, type SimClockView, type SimLimitsView, type SimReadings, type SimStateView } from '@cardpull/sim-contract';
import { SimStateService } from '../state/sim-state.service';
import { balanceBodySchema, chargeBodySchema, parseControlBody, stockBodySchema } from './control-bodies';
import { setStock } from './stock';
import { CallbackInbox } from './callback-receiver';

/**
 * The fault-injection and inspection API (registered only when SIM_CONTROL is on; no signature). It answers
 * with card codes and PINs (the ledger): never expose it where strangers can reach it.
 */
@Controller('_sim')
export class ControlController {
  constructor(
    @Inject(SIM_CONFIG) private readonly config: SimConfig,
    private readonly state: SimStateService,
    private readonly faults: FaultRegistry,
    private readonly callbacks: CallbackInbox,
  ) {}

  /**
   * Back to the seed: catalog, stocks, balance, pulls, pull requests, cards, ledger, the faults of SIM_FAULTS
   * alone, the limits and clock of the settings, the default readings; the received callbacks are forgotten.
   */
  @Post('reset')
  @HttpCode(200)
  reset(): { reset: true } {
    this.state.reset();
    this.faults.reset();
    this.callbacks.clear();
    return { reset: true };
  }

  @Put('balance')
  setBalance(@Req() req: FastifyRequest): { balance: { amount: number } } {
    const { amount } = parseControlBody(req, balanceBodySchema);
    this.state.world.balance = amount;
    return { balance: { amount: this.state.world.balance } };
  }

  /**
   * A charge the partner makes without issuing a card (a fee, a mistake): the balance drops by `amount`
   * (currency units) and nothing else changes, which is what cardpull's balance drift check must notice.
   */
  @Post('charge')
  @HttpCode(200)
  charge(@Req() req: FastifyRequest): { balance: { amount: number } } {
    const { amount } = parseControlBody(req, chargeBodySchema);
    this.state.world.balanceCents -= Math.round(amount * 100);
    return { balance: { amount: this.state.world.balance } };
  }

  @Put('stock')
  setStock(@Req() req: FastifyRequest): Inventory {
    const body = parseControlBody(req, stockBodySchema);
    setStock(this.state.world, body);
    return inventoryOf(this.state.world, body.gift_card_code)!;
  }

  @Post('faults')
  addFault(@Req() req: FastifyRequest): { id: string } {
    return { id: this.faults.add(parseControlBody(req, faultSpecSchema)).id };
  }

  @Get('faults')
  listFaults(): { faults: Fault[] } {
    return { faults: this.faults.list() };
  }

  @Delete('faults')
  clearFaults(): { cleared: number } {
    return { cleared: this.faults.clear() };
  }

  @Delete('faults/:id')
  @HttpCode(204)
  removeFault(@Param('id') id: string): void {
    if (!this.faults.remove(id)) throw new PartnerError(404, 'fault_not_found', `Fault ${id} not found`);
  }

  /** Replaces the partner's rate limits (until the next reset, which restores SIM_LIMITS); counts start again. */
  @Put('limits')
  setLimits(@Req() req: FastifyRequest): SimLimitsView {
    this.state.limiter.reset(parseControlBody(req, simLimitsSchema));
    return this.state.limiter.view();
  }

  @Get('limits')
  limits(): SimLimitsView {
    return this.state.limiter.view();
  }

  /** The partner's clock: its offset from the machine's, its Timestamp window and its answer beyond it (until the next reset). */
  @Put('clock')
  setClock(@Req() req: FastifyRequest): SimClockView {
    return this.state.clock.set(parseControlBody(req, simClockSchema));
  }

  @Get('clock')
  clock(): SimClockView {
    return this.state.clock.view();
  }

  /** The shapes of its answers on the spec's silent points (signature forms, codes, units), until the next reset. */
  @Put('readings')
  setReadings(@Req() req: FastifyRequest): SimReadings {
    return this.state.setReadings(parseControlBody(req, simReadingsSchema));
  }

  @Get('readings')
  readings(): SimReadings {
    return { ...this.state.readings };
  }

  @Get('ledger')
  ledger(@Query('since') since?: string): LedgerView {
    const sinceMs = since === undefined ? undefined : Date.parse(since);
    if (sinceMs !== undefined && Number.isNaN(sinceMs)) {
      throw PartnerError.badRequest(`since must be an ISO 8601 time, got ${since}`);
    }
    return this.state.world.ledger.view(sinceMs);
  }

  @Get('state')
  view(): SimStateView {
    const world = this.state.world;
    const stocks: SimStateView['stocks'] = {};
    for (const [code, stock] of world.stocks) {
      stocks[code] = stock.unlimited
        ? { unlimited: true }
        : { unlimited: false, quantities: Object.fromEntries([...stock.quantities].map(([fv, q]) => [String(fv), q])) };
    }
    return {
      mode: this.config.SIM_MODE,
      balance: world.balance,
      stocks,
      counts: { cards: world.cards.size, pull_requests: world.pullRequests.size, sync_pulls: world.syncPulls.size },
    };
  }
}
