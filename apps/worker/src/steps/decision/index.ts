export * from './decision.types';
export * from './decide';
export { acknowledged, conditionToCheck, hadUnknown, mismatchOf, pollDelay, pullRequestSeen, windowExpired } from './facts';
export * from './resume';
