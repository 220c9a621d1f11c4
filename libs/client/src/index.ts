/**
 * @cardpull/client: the client of cardpull's internal API for Node 20+ (global fetch, node:crypto; no other
 * dependency). It imports nothing of the rest of the repository, so it is published on its own.
 */
export * from './api-types';
export * from './callbacks';
export * from './client';
export * from './errors';
