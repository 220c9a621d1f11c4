/**
 * Local defaults: with nothing set, the service talks to the simulator on 127.0.0.1:4010 with the
 * simulator's own default credentials, and to the local Postgres and Redis. Every default below is
 * listed in .env.example. The development keys are public: PARTNER_ENV=production refuses them.
 */
export const LOCAL_DEFAULTS = {
  PARTNER_API_KEY: 'sim-api-key',
  PARTNER_IDENTIFIER: 'sim-identifier',
  PARTNER_SHARED_KEY: '6b1f0c3e5a7d9b2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d',
  CARD_ENCRYPTION_KEYS: 'dev-1:ZGV2ZWxvcG1lbnQta2V5LW5vdC1mb3ItcHJvZHVjdGk=',
  API_KEYS: 'local:local-dev-key',
} as const;
