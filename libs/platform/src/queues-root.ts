import { BullModule } from '@nestjs/bullmq';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { ConnectionOptions } from 'bullmq';
import { bullConnection, closeConnection, queuePrefix, type RedisTarget } from '@cardpull/queue';

const PRODUCER_CONNECTION = Symbol('PRODUCER_CONNECTION');

/** Closes the queues' shared client when it is ours to close (a Redis Cluster client, see bullConnection). */
@Injectable()
class ProducerConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(PRODUCER_CONNECTION) private readonly connection: ConnectionOptions) {}
  async onApplicationShutdown(): Promise<void> {
    await closeConnection(this.connection);
  }
}

/**
 * BullMQ's root for an app's queues: one Redis node (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES),
 * with the queues' prefix (a hash tag on a cluster), and the shared client closed with the application.
 */
@Module({})
export class QueuesRootModule {
  static forTarget(target: RedisTarget): DynamicModule {
    const connection = bullConnection(target, 'producer');
    return {
      module: QueuesRootModule,
      imports: [BullModule.forRoot({ connection, prefix: queuePrefix(target) })],
      providers: [{ provide: PRODUCER_CONNECTION, useValue: connection }, ProducerConnectionCloser],
      exports: [BullModule],
    };
  }
}
