import { isUnder, normalisedPath } from './request-path';

describe('normalisedPath: the path as the router reads it, whatever the spelling (plain paths take a shortcut, issue 22)', () => {
  it.each([
    ['/v1/orders', '/v1/orders'],
    ['/v1/orders/', '/v1/orders'],
    ['/v1/orders?limit=1&x=/../docs', '/v1/orders'],
    ['/', '/'],
    ['', '/'],
    ['/docs/json', '/docs/json'],
    ['/%64ocs/json', '/docs/json'],
    ['/docs/./json', '/docs/json'],
    ['/x/../docs/json', '/docs/json'],
    ['//docs/json', '/docs/json'],
    ['/docs//json/', '/docs/json'],
    ['\\docs\\json', '/docs/json'],
    ['/a.b/c', '/a.b/c'],
    ['/%zz/a', '/%zz/a'],
    ['/a#b/c', '/a#b/c'],
  ])('%s -> %s', (url, path) => {
    expect(normalisedPath(url)).toBe(path);
  });

  it('isUnder matches the normal form, case aside', () => {
    expect(isUnder('/DOCS/json?x=1', '/docs')).toBe(true);
    expect(isUnder('/docsx', '/docs')).toBe(false);
    expect(isUnder('/v1/orders', '/docs')).toBe(false);
  });
});
