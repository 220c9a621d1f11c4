import * as fc from 'fast-check';

/**
 * `size` values per run, sent together. A failing batch shrinks to each of its values alone first, then the
 * failing one shrinks as its own arbitrary would: a counterexample is one request, found in few requests
 * (fc.array would shrink every element of the batch, resending the whole batch at each step).
 */
class BatchArbitrary<T> extends fc.Arbitrary<T[]> {
  constructor(
    private readonly arb: fc.Arbitrary<T>,
    private readonly size: number,
  ) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T[]> {
    const values = Array.from({ length: this.size }, () => this.arb.generate(mrng, biasFactor));
    return new fc.Value(
      values.map((v) => v.value),
      values,
    );
  }

  canShrinkWithoutContext(_value: unknown): _value is T[] {
    return false;
  }

  shrink(_value: T[], context: unknown): fc.Stream<fc.Value<T[]>> {
    const values = context as fc.Value<T>[];
    const alone = (v: fc.Value<T>) => new fc.Value([v.value], [v]);
    if (values.length > 1) return fc.Stream.of(...values.map(alone));
    const [only] = values;
    return only ? this.arb.shrink(only.value_, only.context).map(alone) : fc.Stream.nil();
  }
}

export const batchOf = <T>(arb: fc.Arbitrary<T>, size: number): fc.Arbitrary<T[]> => new BatchArbitrary(arb, size);
