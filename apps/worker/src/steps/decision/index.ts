export * from './decision.types';
export * from './decide';
export { acknowledged, backoffDelay, hadUnknown, mismatchOf, pollDelay, pullRequestSeen, windowExpired, windowStart } from './facts';
export * from './resume';
