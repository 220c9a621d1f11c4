import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics-registry';

/**
 * Prometheus scrape endpoint, on the API's port and on the worker's WORKER_PORT. No API key: it is meant to
 * be scraped on the internal network (do not route /metrics through a public ingress). It carries counts,
 * durations, queue depths, the circuit state and the partner balance: no request ID, order id, card data,
 * key or partner credential.
 */
@Controller('metrics')
@ApiTags('operations')
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get()
  @ApiOperation({ summary: 'Prometheus metrics (cardpull_*)', description: 'No API key: scrape it on the internal network only. Holds no secret.' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format 0.0.4', schema: { type: 'string' } })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('cache-control', 'no-store')
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
