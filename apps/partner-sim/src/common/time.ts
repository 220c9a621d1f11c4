/** Timestamps as the spec writes them: UTC offset, millisecond precision (2027-11-22T10:00:00.000+00:00). */
export function isoWithOffset(at: Date | number): string {
  return new Date(at).toISOString().replace('Z', '+00:00');
}
