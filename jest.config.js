/** @type {import('jest').Config} */
const paths = {
  '^@cardpull/(config|logger|db|partner-client|queue|testing|vault|orders)$': '<rootDir>/libs/$1/src',
  '^@cardpull/(config|logger|db|partner-client|queue|testing|vault|orders)/(.*)$': '<rootDir>/libs/$1/src/$2',
};
module.exports = {
  rootDir: '.',
  moduleFileExtensions: ['js', 'json', 'ts'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  moduleNameMapper: paths,
  testEnvironment: 'node',
};
