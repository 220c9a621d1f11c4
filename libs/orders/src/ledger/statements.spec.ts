import { csvCell, statementCsv } from './statements.repository';

/** Issue 24, item 5: a statement opened in a spreadsheet app runs nothing (CSV injection, OWASP). */
describe('statement CSV', () => {
  it('a text cell that would start a formula gets a leading apostrophe; numbers stay numbers', () => {
    for (const evil of ['=HYPERLINK("http://x")', '+1+1', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd']) expect(csvCell(evil).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell(-1200)).toBe('-1200');
    expect(csvCell('ACME-BOOKS-FIXED')).toBe('ACME-BOOKS-FIXED');
  });

  it('quotes as RFC 4180 wants: commas, quotes and line breaks inside a cell', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
  });

  it('a header line, then one line per client and gift card, CRLF', () => {
    const csv = statementCsv('2026-11-28', [{ client: '=evil', giftCardCode: 'G', currency: 'EUR', cards: 1, faceValue: 1000, cost: 965, surplusCards: 0, surplus: 0, inDoubt: 0 }]);
    expect(csv).toBe(`date,client,gift_card_code,currency,cards,face_value,cost,surplus_cards,surplus,in_doubt\r\n2026-11-28,"'=evil",G,EUR,1,1000,965,0,0,0\r\n`);
  });
});
