/** @type {import('jest').Config} */
const libs = 'config|logger|db|partner-client|queue|testing|vault|orders|platform|ops|sim-contract|traffic|client';
module.exports = {
  rootDir: '.',
  moduleFileExtensions: ['js', 'json', 'ts'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.tmp/', '/reports/'],
  // Another build unpacked under .tmp (bench/compare.ts) holds package.json files of the same names.
  modulePathIgnorePatterns: ['<rootDir>/.tmp/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  moduleNameMapper: {
    [`^@cardpull/(${libs})$`]: '<rootDir>/libs/$1/src',
    [`^@cardpull/(${libs})/(.*)$`]: '<rootDir>/libs/$1/src/$2',
  },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60_000,
  // Two cores here: suites start real HTTP servers, workers and child processes.
  maxWorkers: 2,
};
