import pino from 'pino';

const { chindingsSym } = pino.symbols;

type Child = (this: pino.Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => pino.Logger;

/**
 * Makes the children of `root` (and theirs) lazy: `child(bindings)` without options costs an object, and
 * the bindings are serialized, redacted and stringified (pino's `chindings`) only when a line is written
 * through that child or one of its own (or `bindings()` is asked). pino does that work at once, for every
 * child: pino-http makes two per HTTP request, nestjs-pino one more per `assign`, the worker one per job,
 * and with the redaction paths (REDACT_PATHS, a wildcard among them) that came to about a tenth of the
 * API's CPU per order while most requests write nothing below `warn` (docs/BENCHMARKS.md, issue 22).
 * The bindings are copied (one level) when the child is made; a value that is an object (pino-http's
 * `req`) is read when the child is first written through. Children with options are made as pino makes
 * them (they are rare: pino-http's one at start-up).
 */
export function lazyChildren<L extends pino.Logger>(root: L): L {
  const eager = root.child as unknown as Child;
  function child(this: pino.Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions): pino.Logger {
    if (options != null) return eager.call(this, bindings, options);
    if (!bindings) throw Error('missing bindings for child Pino');
    const parent = this;
    const own = { ...bindings };
    const instance = Object.create(parent) as pino.Logger;
    let chindings: string | undefined;
    Object.defineProperty(instance, chindingsSym, {
      configurable: true,
      get(this: pino.Logger) {
        // Read through a grandchild made by pino itself (asChindings starts from its parent's), or written to.
        chindings ??= (eager.call(parent, own) as unknown as Record<symbol, string>)[chindingsSym]!;
        return chindings;
      },
      set(this: pino.Logger, value: string) {
        // pino assigns a child's own chindings (and setBindings replaces them): an own value, here or below.
        Object.defineProperty(this, chindingsSym, { value, writable: true, configurable: true, enumerable: true });
      },
    });
    parent.onChild(instance);
    return instance;
  }
  Object.defineProperty(root, 'child', { value: child, writable: true, configurable: true });
  return root;
}
