/** A complete HTTP answer, kept as data so a sync pull's first answer can be stored and replayed. */
export interface SimAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Defaults to JSON. */
  contentType?: string;
}

export const ok = (body: unknown): SimAnswer => ({ status: 200, body });
