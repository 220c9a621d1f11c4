import {
  PROFILE_SETTINGS,
  classify,
  costOf,
  discountInForce,
  discountPpm,
  parseBalance,
  parseCardEnvelope,
  parseGiftCards,
  parseInventory,
  type GiftCard,
  type PartnerProfile,
  type ProfileFinding,
  type ProfileSettingName,
  type ProfileSettings,
  type SignatureForm,
} from '@cardpull/partner-client';
import { ProbeCapReached, ProbeTransport, errorCode, header, isEnvelope, probeRequestId, type ProbeAnswer, type ProbeCredentials, type ProbeEvidence } from './probe-transport';

/** Commits the order of the probe's one card (its request ID) before any call carries the ID (invariant 1). */
export interface ProbeBuyer {
  order(giftCard: GiftCard, amount: number): Promise<{ orderId: string; requestId: string }>;
}

export interface ProbeOptions {
  credentials: ProbeCredentials;
  env: 'staging' | 'production';
  /** The settings the findings may contradict, as configured. */
  configured: ProfileSettings;
  timeoutMs: number;
  /** The most partner calls the whole probe may make. */
  maxCalls: number;
  /** Reads sent in the rate-limit burst (capped at BURST_MAX). */
  burst: number;
  /** Who commits the probe's one card; null: nothing is bought (the points that need a card cannot tell). */
  buyer: ProbeBuyer | null;
  /** The most the one card may cost, in minor units (production: the flag's money; staging: no cap). */
  spendCapMinor?: number;
  /** How long after the first send of the card the repeat goes (it must find the pull still running). */
  repeatAfterMs?: number;
  log?: (line: string) => void;
}

export const BURST_MAX = 50;
/** A gift card code no partner lists: a pull naming it cannot make a card. */
export const NO_SUCH_GIFT_CARD = 'cardpull-probe-no-such-gift-card';
/** Shifts of the Timestamp tried (seconds), each way, until one is refused. */
const CLOCK_SHIFTS_S = [5, 30, 120, 600, 1800];
/** Below this window (s) our Date-based estimate of the partner's clock (about ±1 s) would not be safe. */
const MIN_SAFE_WINDOW_S = 5;

/**
 * `npm run probe`: a bounded script of calls against the configured partner that learns its readings of the
 * points its specification leaves "not shown", each a finding with its verdict ("as we assume", "differs",
 * "could not tell"), its evidence and the setting it implies. At most one card is bought (the smallest
 * face value, committed as an order first, which the worker then finishes like any other); every other call
 * is one no partner can make a card of (a gift card that does not exist, an amount of 0, a read).
 */
export async function runProbe(o: ProbeOptions): Promise<PartnerProfile> {
  const t = new ProbeTransport(o.credentials, o.timeoutMs, o.maxCalls);
  const findings: ProfileFinding[] = [];
  const add = (f: ProfileFinding) => {
    findings.push(f);
    o.log?.(`${f.point}: ${verdictText(f)}: ${f.finding}`);
  };
  let spent: PartnerProfile['spent'] = { cards: 0, face_value: 0 };
  let catalog: GiftCard[] = [];
  try {
    const form = await signatureForm(t, o, add);
    if (form) {
      catalog = await catalogPoint(t, form, o, add);
      dateHeader(t, add);
      await clockWindow(t, form, add);
      await errorsPoint(t, form, catalog, add);
      spent = await buyPoints(t, form, catalog, o, add);
      await rateLimit(t, form, o, add);
    }
  } catch (error) {
    if (!(error instanceof ProbeCapReached)) throw error;
    add({ point: 'cap', title: 'Calls', verdict: 'could_not_tell', finding: `${error.message}: the points after it were not probed`, evidence: [] });
  }
  return {
    version: 1,
    probed_at: new Date().toISOString(),
    partner: { env: o.env, base_url: o.credentials.baseUrl },
    findings,
    latency: t.latency(),
    spent,
    calls: t.calls,
    catalog: { gift_cards: catalog.length, fixed: catalog.filter((g) => g.facial_values.type === 'fixed').length, free: catalog.filter((g) => g.facial_values.type === 'free').length },
  } as PartnerProfile;
}

export function verdictText(f: Pick<ProfileFinding, 'verdict' | 'setting'>): string {
  if (f.verdict === 'as_assumed') return 'as we assume';
  if (f.verdict === 'could_not_tell') return 'could not tell';
  return f.setting ? `differs: set ${f.setting.name}=${f.setting.value}` : 'differs';
}

type Add = (f: ProfileFinding) => void;

/** A finding that decides a setting: as assumed when the configured value is the implied one. */
function decided(o: ProbeOptions, name: ProfileSettingName, value: string, f: { point: string; title: string; finding: string; evidence: unknown[] }): ProfileFinding {
  if (!(PROFILE_SETTINGS[name] as readonly string[]).includes(value)) throw new Error(`${name} cannot be ${value}`);
  return { ...f, verdict: o.configured[name] === value ? 'as_assumed' : 'differs', setting: { name, value } };
}

/** 1. Both token forms on GET /balance: which the partner accepts decides PARTNER_SIGNATURE_FORM. */
async function signatureForm(t: ProbeTransport, o: ProbeOptions, add: Add): Promise<SignatureForm | null> {
  const results = new Map<SignatureForm, { answer: ProbeAnswer | null; evidence: ProbeEvidence }>();
  for (const form of ['example', 'formula'] as const) {
    results.set(form, await t.trySend({ endpoint: 'GET /balance', method: 'GET', path: '/balance', form, purpose: `a read signed in the ${form} form` }));
  }
  const accepted = (['example', 'formula'] as const).filter((f) => ok(results.get(f)!.answer));
  const evidence = [...results.values()].map((r) => r.evidence);
  const base = { point: 'signature_form', title: 'Signature form (with or without the identifier)', evidence };
  if (accepted.length === 2) {
    add({ ...base, verdict: 'as_assumed', finding: 'both forms are accepted: either setting works' });
    return o.configured.PARTNER_SIGNATURE_FORM;
  }
  if (accepted.length === 1) {
    const form = accepted[0]!;
    const other = form === 'example' ? 'formula' : 'example';
    add(decided(o, 'PARTNER_SIGNATURE_FORM', form, { ...base, finding: `only the ${form} form is accepted (the ${other} form: ${describe(results.get(other)!.answer)})` }));
    return form;
  }
  add({ ...base, verdict: 'could_not_tell', finding: `neither form is accepted (${describe(results.get('example')!.answer)}): check PARTNER_API_KEY, PARTNER_IDENTIFIER and PARTNER_SHARED_KEY; nothing else was probed` });
  return null;
}

/** The catalog: its size, and what its discounts say of their unit (a value above 1 cannot be a fraction). */
async function catalogPoint(t: ProbeTransport, form: SignatureForm, o: ProbeOptions, add: Add): Promise<GiftCard[]> {
  const { answer, evidence } = await t.trySend({ endpoint: 'GET /gift_cards', method: 'GET', path: '/gift_cards', form, purpose: 'the catalog' });
  const cards = answer && ok(answer) ? parseGiftCards(answer.body) : undefined;
  if (!cards) {
    add({ point: 'catalog', title: 'Catalog', verdict: 'could_not_tell', finding: `the catalog could not be read (${describe(answer)})`, evidence: [evidence] });
    return [];
  }
  const fixed = cards.filter((g) => g.facial_values.type === 'fixed').length;
  add({ point: 'catalog', title: 'Catalog', verdict: 'as_assumed', finding: `${cards.length} gift card(s): ${fixed} fixed, ${cards.length - fixed} free`, evidence: [evidence] });
  return cards;
}

/** The Date header: present (we sign with the partner's time from it), and how far the partner's clock is from ours. */
function dateHeader(t: ProbeTransport, add: Add): void {
  const base = { point: 'date_header', title: "The partner's clock (Date header)" };
  if (!t.dateReadings.length) {
    add({ ...base, verdict: 'differs', finding: 'answers carry no Date header: requests are signed with our own clock, which must then be kept in time (NTP)', evidence: [] });
    return;
  }
  const offsetS = Math.round(t.clock.offsetMs() / 100) / 10;
  add({ ...base, verdict: 'as_assumed', finding: `Date headers present; the partner's clock is ${Math.abs(offsetS)} s ${offsetS >= 0 ? 'ahead of' : 'behind'} ours (requests are signed with its time)`, evidence: [{ readings: t.dateReadings.length, offset_s: offsetS }] });
}

/** The accepted Timestamp window, each way, and the code of a refusal beyond it. */
async function clockWindow(t: ProbeTransport, form: SignatureForm, add: Add): Promise<void> {
  const evidence: ProbeEvidence[] = [];
  const widest = { ahead: 0, behind: 0 };
  const refusedAt: Partial<Record<'ahead' | 'behind', number>> = {};
  const codes = new Set<string>();
  for (const [way, sign] of [['ahead', 1], ['behind', -1]] as const) {
    for (const shift of CLOCK_SHIFTS_S) {
      const r = await t.trySend({ endpoint: 'GET /balance', method: 'GET', path: '/balance', form, shiftS: sign * shift, purpose: `a Timestamp ${shift} s ${way} of the partner's clock` });
      evidence.push(r.evidence);
      if (ok(r.answer)) {
        widest[way] = shift;
        continue;
      }
      refusedAt[way] = shift;
      if (r.answer?.status === 401) codes.add(errorCode(r.answer.body) ?? `401 without a code`);
      break;
    }
  }
  const window = Math.min(widest.ahead, widest.behind);
  const bound = (way: 'ahead' | 'behind') => (refusedAt[way] ? `accepted ${widest[way]} s ${way}, refused ${refusedAt[way]} s` : `accepted up to ${widest[way]} s ${way} (no refusal met)`);
  add({
    point: 'clock_window',
    title: 'Timestamp window',
    verdict: window >= MIN_SAFE_WINDOW_S ? 'as_assumed' : 'differs',
    finding:
      window >= MIN_SAFE_WINDOW_S
        ? `${bound('ahead')}; ${bound('behind')}: wide enough for signing with the partner's time`
        : `${bound('ahead')}; ${bound('behind')}: narrower than ${MIN_SAFE_WINDOW_S} s, the error of our estimate of the partner's clock; expect 401s`,
    evidence,
  });
  const known = [...codes].every((c) => c === 'unauthorized' || c === 'invalid_signature');
  add({
    point: 'stale_timestamp_code',
    title: 'Refusal of a stale Timestamp',
    verdict: !codes.size ? 'could_not_tell' : known ? 'as_assumed' : 'differs',
    finding: !codes.size ? 'no Timestamp was refused' : `401 ${[...codes].join(', ')}${known ? ': read as credentials, after one re-send with the partner\'s time' : ': a code we do not read as credentials'}`,
    evidence: [],
  });
}

/**
 * The envelopes of bad input, the 404 of an unknown pull request and the order of the checks, with calls that
 * cannot make a card: a gift card that does not exist, an amount of 0.
 */
async function errorsPoint(t: ProbeTransport, form: SignatureForm, catalog: GiftCard[], add: Add): Promise<void> {
  const real = catalog[0];
  const amount = real ? smallestAmount(real) : 1000;
  const sends = [
    { what: 'an unknown gift card', expect: [404, 'gift_card_not_found'] as const, body: { card: { amount, gift_card_code: NO_SUCH_GIFT_CARD } } },
    ...(real ? [{ what: 'an amount of 0', expect: [422, 'invalid_amount'] as const, body: { card: { amount: 0, gift_card_code: real.code } } }] : []),
  ];
  const evidence: ProbeEvidence[] = [];
  const problems: string[] = [];
  let zeroAmountId: string | undefined;
  for (const s of sends) {
    const requestId = probeRequestId();
    if (s.expect[1] === 'invalid_amount') zeroAmountId = requestId;
    const r = await t.trySend({ endpoint: 'POST /cards', method: 'POST', path: '/cards', body: s.body, requestId, form, purpose: `bad input: ${s.what}` });
    evidence.push(r.evidence);
    if (!r.answer) problems.push(`${s.what}: no answer (${r.evidence.error})`);
    else if (!isEnvelope(r.answer.body)) problems.push(`${s.what}: ${r.answer.status} without the spec's error envelope`);
    else if (r.answer.status !== s.expect[0] || errorCode(r.answer.body) !== s.expect[1]) problems.push(`${s.what}: ${r.answer.status} ${errorCode(r.answer.body)} (the spec: ${s.expect[0]} ${s.expect[1]})`);
  }
  add({
    point: 'error_envelope',
    title: 'Errors of bad input',
    verdict: problems.length ? 'differs' : 'as_assumed',
    finding: problems.length
      ? `${problems.join('; ')}: cardpull believes an error only in the spec's envelope and status, anything else is an unknown outcome (the same request ID again)`
      : 'the spec\'s envelope, with the spec\'s status and code',
    evidence,
  });

  const unknown = probeRequestId();
  const r = await t.trySend({ endpoint: 'GET /pull_requests/:id', method: 'GET', path: `/pull_requests/${unknown}`, form, purpose: 'a pull request that does not exist' });
  const code = r.answer ? errorCode(r.answer.body) : undefined;
  const known = r.answer?.status === 404 && (code === 'pull_request_not_found' || code === 'card_not_found');
  add({
    point: 'pull_request_not_found',
    title: 'The 404 of an unknown pull request',
    verdict: !r.answer ? 'could_not_tell' : known ? 'as_assumed' : 'differs',
    finding: !r.answer
      ? `no answer (${r.evidence.error})`
      : known
        ? `404 ${code}: read as not found (never proof the ID is dead)`
        : `${r.answer.status} ${code ?? 'without a code'}: read as an unknown outcome; an order whose creation was lost waits on its ID and needs a person sooner`,
    evidence: [r.evidence],
  });

  if (real && zeroAmountId) await checkOrder(t, form, zeroAmountId, amount, real, add);
}

/**
 * The order of the checks: a request ID whose first send was refused (amount 0) sent again with a body that
 * names no gift card. A partner that looks at the ID first answers the first refusal again; one that checks
 * the body first answers gift_card_not_found. Neither can make a card. Both are safe for cardpull: a
 * business error answered to a re-send is never taken as the ID's fate.
 */
async function checkOrder(t: ProbeTransport, form: SignatureForm, requestId: string, amount: number, real: GiftCard, add: Add): Promise<void> {
  const evidence: ProbeEvidence[] = [];
  const sync = await t.trySend({ endpoint: 'POST /cards', method: 'POST', path: '/cards', requestId, form, body: { card: { amount, gift_card_code: NO_SUCH_GIFT_CARD } }, purpose: 'the refused request ID again, with an unknown gift card' });
  evidence.push(sync.evidence);
  const asyncId = probeRequestId();
  const create = (gift_card_code: string, a: number, purpose: string) =>
    t.trySend({ endpoint: 'POST /pull_requests', method: 'POST', path: '/pull_requests', requestId: asyncId, form, body: { pull_request: { amount: a, gift_card_code, request_id: asyncId } }, purpose });
  const first = await create(real.code, 0, 'a pull request of amount 0');
  evidence.push(first.evidence);
  const again = await create(NO_SUCH_GIFT_CARD, amount, 'the same request ID again, with an unknown gift card');
  evidence.push(again.evidence);
  const code = sync.answer ? errorCode(sync.answer.body) : undefined;
  const asyncCode = again.answer ? `${again.answer.status} ${errorCode(again.answer.body) ?? ''}`.trim() : 'no answer';
  const order = code === 'gift_card_not_found' ? 'the body first (before the request ID)' : code === 'invalid_amount' ? 'the request ID first (the first refusal answered again)' : undefined;
  add({
    point: 'check_order',
    title: 'Order of the checks on a repeated request ID',
    verdict: order ? 'as_assumed' : 'could_not_tell',
    finding: order
      ? `checks ${order}; a repeated pull request ID: ${asyncCode}. cardpull reads any order safely: a business error answered to a re-send is never the ID's fate`
      : `the repeat answered ${sync.answer ? `${sync.answer.status} ${code ?? ''}` : 'nothing'}`,
    evidence,
  });
}

/**
 * The one card: a sync pull of the smallest face value, its request ID committed as an order first. Sent,
 * then sent again while it runs (the shape of "come back later"), then again once answered (the same card,
 * never a second). The balance before and after tells its unit, and the discount's when the card has one.
 */
async function buyPoints(t: ProbeTransport, form: SignatureForm, catalog: GiftCard[], o: ProbeOptions, add: Add): Promise<NonNullable<PartnerProfile['spent']>> {
  const none = { cards: 0, face_value: 0 };
  const cannot = (why: string) => {
    for (const [point, title] of BUY_POINTS) add({ point, title, verdict: 'could_not_tell', finding: why, evidence: [] });
    discountFromCatalog(catalog, o, add, null);
    return none;
  };
  if (!o.buyer) return cannot('no card was bought (--no-buy)');
  const choice = await chooseCard(t, form, catalog, o);
  if (!choice) return cannot(o.spendCapMinor !== undefined ? `no gift card in stock costs at most ${o.spendCapMinor} (--production-spend)` : 'no gift card in stock to buy one card of');
  const { giftCard, amount } = choice;
  const before = await readBalance(t, form);
  const { orderId, requestId } = await o.buyer.order(giftCard, amount);
  o.log?.(`bought through order ${orderId} (request ID ${requestId}): ${giftCard.code} ${amount}`);
  const body = { card: { amount, gift_card_code: giftCard.code } };
  const send = (purpose: string, noRetry = false) => t.trySend({ endpoint: 'POST /cards', method: 'POST', path: '/cards', requestId, form, body, purpose, noRetry });
  const firstP = send('the probe\'s one card');
  await new Promise((r) => setTimeout(r, o.repeatAfterMs ?? 150));
  // Its answer is the finding, whatever its status (a 503 may be how this partner says "come back later").
  const repeat = await send('the same request ID while the first send runs', true);
  const first = await firstP;
  const firstCard = first.answer && ok(first.answer) ? parseCardEnvelope(first.answer.body)?.card : undefined;
  const after = firstCard ? await send('the same request ID once answered') : null;
  const balanceAfter = await readBalance(t, form);
  const spent = { cards: 1, face_value: amount, order_id: orderId, request_id: requestId };

  // "Come back later": what the repeat while the pull runs answered, and how cardpull reads it.
  const repeatCard = repeat.answer && ok(repeat.answer) ? parseCardEnvelope(repeat.answer.body)?.card : undefined;
  const read = repeat.answer ? classify('createCard', repeat.answer.status, repeat.answer.body, parseCardEnvelope) : null;
  const retryAfter = repeat.answer ? header(repeat.answer, 'retry-after') : undefined;
  const repeatShape = repeat.answer ? `${repeat.answer.status}${errorCode(repeat.answer.body) ? ` ${errorCode(repeat.answer.body)}` : ''}${retryAfter ? ` with Retry-After ${retryAfter}` : ''}` : `no answer (${repeat.evidence.error})`;
  const comeBack: ProfileFinding = { point: 'come_back_later', title: '"Come back later" (a sync repeat while the pull runs)', verdict: 'could_not_tell', finding: '', evidence: [first.evidence, repeat.evidence] };
  if (repeatCard && firstCard && repeatCard.id === firstCard.id) comeBack.finding = `the first send had answered already (the same card came back): the pull is faster than ${o.repeatAfterMs ?? 150} ms`;
  else if (repeatCard && firstCard) Object.assign(comeBack, { verdict: 'differs', finding: `the repeat answered ANOTHER card (${repeatCard.id}, the first ${firstCard.id}): a second card was issued for one request ID; both are kept on order ${orderId} by the worker; tell the partner` });
  else if (read && read.kind !== 'success') Object.assign(comeBack, { verdict: 'as_assumed', finding: `${repeatShape}: cardpull reads it as ${read.kind === 'unknown' ? `an unknown outcome (${read.reason})` : read.kind}, the same request ID later${retryAfter ? ', not before its Retry-After' : ''}` });
  else comeBack.finding = `the repeat answered ${repeatShape}`;
  add(comeBack);

  const afterCard = after?.answer && ok(after.answer) ? parseCardEnvelope(after.answer.body)?.card : undefined;
  add({
    point: 'repeat_after_end',
    title: 'A sync repeat once answered',
    verdict: !firstCard || !after ? 'could_not_tell' : afterCard?.id === firstCard.id ? 'as_assumed' : 'differs',
    finding: !firstCard
      ? `the first send answered ${describe(first.answer) || first.evidence.error}: no card to compare (the worker settles order ${orderId} on the same request ID)`
      : afterCard?.id === firstCard.id
        ? 'the same card again, no second card'
        : afterCard
          ? `ANOTHER card (${afterCard.id}): a second card for one request ID; the worker keeps every card it is answered`
          : `answered ${describe(after!.answer)} instead of the card`,
    evidence: after ? [after.evidence] : [],
  });
  add({
    point: 'card_amount',
    title: 'Amounts in minor units',
    verdict: !firstCard ? 'could_not_tell' : firstCard.amount === amount ? 'as_assumed' : 'differs',
    finding: !firstCard ? 'no card to compare' : firstCard.amount === amount ? `the card's amount is the ordered ${amount}` : `ordered ${amount}, the card says ${firstCard.amount}: the worker keeps it as a mismatch`,
    evidence: [],
  });
  unitsPoints(catalog, giftCard, amount, before, balanceAfter, firstCard !== undefined, o, add);
  return spent;
}

const BUY_POINTS = [
  ['come_back_later', '"Come back later" (a sync repeat while the pull runs)'],
  ['repeat_after_end', 'A sync repeat once answered'],
  ['card_amount', 'Amounts in minor units'],
  ['balance_unit', 'Unit of balance.amount'],
] as const;

/** The smallest face value of the catalog that is in stock (staging: preferring one with a discount, to tell its unit); at most 3 inventory reads. */
async function chooseCard(t: ProbeTransport, form: SignatureForm, catalog: GiftCard[], o: ProbeOptions): Promise<{ giftCard: GiftCard; amount: number } | null> {
  const now = new Date();
  const priced = catalog
    .map((giftCard) => ({ giftCard, amount: smallestAmount(giftCard), discounted: discountInForce(giftCard, now) > 0 }))
    .filter((c) => c.amount > 0 && (o.spendCapMinor === undefined || c.amount <= o.spendCapMinor))
    .sort((a, b) => a.amount - b.amount || Number(b.discounted) - Number(a.discounted));
  const ordered = o.env === 'staging' ? [...priced.filter((c) => c.discounted), ...priced.filter((c) => !c.discounted)] : priced;
  for (const c of ordered.slice(0, 3)) {
    const { answer } = await t.trySend({ endpoint: 'GET /inventories/:id', method: 'GET', path: `/inventories/${encodeURIComponent(c.giftCard.code)}`, form, purpose: `stock of ${c.giftCard.code}` });
    const inventory = answer && ok(answer) ? parseInventory(answer.body) : undefined;
    const e2e = inventory?.inventories.end_to_end_api;
    const stock = inventory?.inventories.stocks.find((s) => s.facial_value === c.amount);
    const inStock = e2e && e2e.enabled !== false && (e2e.available_amount === 'unlimited' || (stock && stock.owned_quantity + stock.shared_quantity > 0) || Number(e2e.available_amount) >= c.amount);
    if (inStock) return c;
  }
  return null;
}

async function readBalance(t: ProbeTransport, form: SignatureForm): Promise<number | undefined> {
  const { answer } = await t.trySend({ endpoint: 'GET /balance', method: 'GET', path: '/balance', form, purpose: 'the balance around the probe\'s card' });
  return answer && ok(answer) ? parseBalance(answer.body)?.balance.amount : undefined;
}

/**
 * The units of balance.amount and of discount, from what the probe's one card drew: each reading of the two
 * gives a cost, and the balance's fall matches one of them (or nothing, when the account moved for other
 * reasons meanwhile, or the environment's money is not drawn: could not tell).
 */
function unitsPoints(catalog: GiftCard[], giftCard: GiftCard, amount: number, before: number | undefined, after: number | undefined, bought: boolean, o: ProbeOptions, add: Add): void {
  const d = discountInForce(giftCard, new Date());
  const costs = (['percent', 'fraction'] as const).flatMap((unit) => {
    try {
      return [{ unit, cost: costOf(amount, discountPpm(d, unit)) }];
    } catch {
      return [];
    }
  });
  const fall = before !== undefined && after !== undefined ? before - after : undefined;
  const matches =
    fall === undefined || !bought
      ? []
      : (['major', 'minor'] as const).flatMap((balanceUnit) => {
          const minor = balanceUnit === 'major' ? Math.round(fall * 100) : fall;
          if (!Number.isInteger(minor)) return [];
          return costs.filter((c) => Math.abs(c.cost - minor) <= 1).map((c) => ({ balanceUnit, discountUnit: c.unit, cost: c.cost }));
        });
  const evidence = [{ gift_card: giftCard.code, amount, discount: d, balance_before: before, balance_after: after }];
  const balanceUnits = [...new Set(matches.map((m) => m.balanceUnit))];
  const fraction = before !== undefined && !Number.isInteger(before);
  const base = { point: 'balance_unit', title: 'Unit of balance.amount', evidence };
  if (balanceUnits.length === 1) {
    add(decided(o, 'PARTNER_BALANCE_UNIT', balanceUnits[0]!, { ...base, finding: `the balance fell by ${round6(fall!)} for a card of ${amount} costing ${matches[0]!.cost}: ${balanceUnits[0] === 'major' ? 'currency units' : 'minor units'}` }));
  } else if (fraction) {
    add(decided(o, 'PARTNER_BALANCE_UNIT', 'major', { ...base, finding: `the balance ${before} has decimals: currency units (the card's draw did not tell: ${fall === undefined ? 'no balance read' : `fell by ${round6(fall)}`})` }));
  } else {
    add({ ...base, verdict: 'could_not_tell', finding: fall === undefined ? 'the balance could not be read' : `the balance fell by ${round6(fall)}, which no reading of a card of ${amount} explains (the account moved meanwhile, or this environment draws no money)` });
  }
  const discountUnits = [...new Set(matches.filter((m) => balanceUnits.length === 1 && m.balanceUnit === balanceUnits[0]).map((m) => m.discountUnit))];
  discountFromCatalog(catalog, o, add, discountUnits.length === 1 && d > 0 ? { unit: discountUnits[0]!, giftCard: giftCard.code, discount: d, fall: fall! } : null);
}

/** The discount's unit: a value above 1 cannot be a fraction; else the probe's card tells, when it had a discount. */
function discountFromCatalog(catalog: GiftCard[], o: ProbeOptions, add: Add, fromCard: { unit: 'percent' | 'fraction'; giftCard: string; discount: number; fall: number } | null): void {
  const values = catalog.flatMap((g) => [g.discount, ...g.next_discounts.map((n) => n.value)]).filter((v) => typeof v === 'number');
  const max = values.length ? Math.max(...values) : 0;
  const base = { point: 'discount_unit', title: 'Unit of discount', evidence: [{ largest_discount: max, discounts: values.length }] };
  if (max > 1) {
    add(decided(o, 'PARTNER_DISCOUNT_UNIT', 'percent', { ...base, finding: `a discount of ${max} cannot be a fraction: percent` }));
  } else if (fromCard) {
    add(decided(o, 'PARTNER_DISCOUNT_UNIT', fromCard.unit, { ...base, finding: `every discount is at most 1; the probe's card (${fromCard.giftCard}, discount ${fromCard.discount}) drew ${fromCard.unit === 'fraction' ? 'the discount as a fraction' : 'the discount as a percentage'} (the balance fell by ${round6(fromCard.fall)})` }));
  } else {
    add({ ...base, verdict: 'could_not_tell', finding: max === 0 ? 'no gift card has a discount' : `every discount is at most 1 (largest ${max}): a percentage or a fraction, and no card's draw told which` });
  }
}

/** A short burst of reads: does the partner limit them, how does it say so (429, Retry-After)? */
async function rateLimit(t: ProbeTransport, form: SignatureForm, o: ProbeOptions, add: Add): Promise<void> {
  const n = Math.min(o.burst, BURST_MAX, Math.max(0, o.maxCalls - t.calls));
  const started = performance.now();
  const answers: { status: number | null; retryAfter?: string; code?: string }[] = [];
  for (let i = 0; i < n; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, () => t.trySend({ endpoint: 'GET /balance', method: 'GET', path: '/balance', form, purpose: 'a burst of reads', noRetry: true })),
    );
    answers.push(...batch.map((r) => ({ status: r.answer?.status ?? null, retryAfter: r.answer ? header(r.answer, 'retry-after') : undefined, code: r.answer ? errorCode(r.answer.body) : undefined })));
  }
  const seconds = (performance.now() - started) / 1000;
  const refused = answers.filter((a) => a.status === 429 || a.status === 503);
  const afters = [...new Set(refused.map((a) => a.retryAfter ?? 'none'))];
  const base = { point: 'rate_limit', title: 'Rate limits (a burst of reads)', evidence: [{ calls: n, seconds: Math.round(seconds * 100) / 100, statuses: countBy(answers.map((a) => String(a.status))), retry_after: afters }] };
  if (!n) return add({ ...base, verdict: 'could_not_tell', finding: 'no calls left under the cap for a burst' });
  if (!refused.length) {
    add({ ...base, verdict: 'could_not_tell', finding: `no limit met: ${n} reads in ${seconds.toFixed(2)} s (${Math.round(n / seconds)}/s) all answered` });
    return;
  }
  add({
    ...base,
    verdict: 'as_assumed',
    finding: `${refused.length} of ${n} reads refused ${[...new Set(refused.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`))].join(', ')}, Retry-After: ${afters.join(', ')}; cardpull waits out a Retry-After and paces the fleet (without one, it halves its rate)`,
  });
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The smallest face value a gift card offers (0 when it offers none). */
export function smallestAmount(giftCard: GiftCard): number {
  const f = giftCard.facial_values;
  const smallest = f.type === 'fixed' ? Math.min(...f.amounts) : f.min_amount;
  return Number.isFinite(smallest) ? smallest : 0;
}

/** A balance difference without the float noise of two decimals subtracted. */
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

const ok = (answer: ProbeAnswer | null | undefined): boolean => !!answer && answer.status >= 200 && answer.status < 300;

function describe(answer: ProbeAnswer | null | undefined): string {
  if (!answer) return 'no answer';
  const code = errorCode(answer.body);
  return `${answer.status}${code ? ` ${code}` : ''}`;
}
