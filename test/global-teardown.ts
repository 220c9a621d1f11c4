import { dropDatabase } from '../libs/testing/src/test-db';

/** Drops this run's template database (suite databases are dropped by their suites). */
export default async function globalTeardown(): Promise<void> {
  await dropDatabase(`cardpull_tpl_${process.env.CARDPULL_TEST_RUN ?? process.pid}`);
}
