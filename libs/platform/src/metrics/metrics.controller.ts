import { Controller, Get, Header, Inject, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Registry } from 'prom-client';
import { ApiKeyGuard, RequireScope } from '../auth/api-key.guard';
import { METRICS_REGISTRY } from './metrics-registry';

/**
 * Prometheus scrape endpoint, on the API's port and on the worker's WORKER_PORT, for an API key with the
 * scope metrics:read (Prometheus: `authorization: { credentials: <key> }`). It carries counts, durations,
 * queue depths, the circuit state and the partner balance: no request ID, order id, card data, key or
 * partner credential.
 */
@Controller('metrics')
@UseGuards(ApiKeyGuard)
@ApiTags('operations')
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get()
  @RequireScope('metrics:read')
  @ApiOperation({ summary: 'Prometheus metrics (cardpull_*)', description: 'Needs an API key with the scope metrics:read. Holds no secret.' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format 0.0.4', schema: { type: 'string' } })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('cache-control', 'no-store')
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
