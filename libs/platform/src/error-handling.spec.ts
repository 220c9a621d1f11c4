import { EnvelopeExceptionFilter, isDatabaseUnavailable } from './error-handling';

describe('errors of the database: unavailable (no statement ran) is a 503 to retry, a failed statement a 500', () => {
  const filter = new EnvelopeExceptionFilter();
  const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

  it.each([
    ['no connection of the pool in time (pg-pool)', pgError('timeout exceeded when trying to connect')],
    ['a connection that timed out while opening (pg)', pgError('Connection terminated due to connection timeout')],
    ['nothing listens', pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['the server shutting down', pgError('terminating connection due to administrator command', '57P01')],
  ])('%s: 503 database_unavailable', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    const { httpStatus, body } = filter.toEnvelope(error);
    expect([httpStatus, body.errors[0]!.code, body.status]).toEqual([503, 'database_unavailable', 'service_unavailable']);
  });

  it.each([
    ['a unique violation', pgError('duplicate key value violates unique constraint', '23505')],
    ['a statement timeout', pgError('canceling statement due to statement timeout', '57014')],
    ['not an error object', 'boom'],
  ])('%s: 500 internal_error', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(filter.toEnvelope(error)).toMatchObject({ httpStatus: 500, body: { errors: [{ code: 'internal_error' }] } });
  });
});
