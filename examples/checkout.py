#!/usr/bin/env python3
"""A checkout against cardpull's internal API in Python, with requests: the two calls of
examples/checkout-handler.ts without the client library.

    CARDPULL_URL=http://127.0.0.1:3000 CARDPULL_API_KEY=... \\
        python3 examples/checkout.py <cart id> <gift card code> <amount>

Creates the order for the cart (the cart id is the Idempotency-Key: run it twice, get the same order),
waits up to 20 s for it, reads it back by id, and prints the result as one JSON line.
"""
import json
import os
import random
import sys
import time

import requests

BASE_URL = os.environ.get("CARDPULL_URL", "http://127.0.0.1:3000").rstrip("/")
API_KEY = os.environ.get("CARDPULL_API_KEY", "")
FINAL = {"completed", "failed", "needs_attention"}


class CardpullError(Exception):
    """An error answer: `code` from the envelope {"errors": [{"code", "message"}], "status"}."""

    def __init__(self, status, body):
        error = (body or {}).get("errors", [{}])[0] if isinstance(body, dict) else {}
        self.status = status
        self.code = error.get("code", "http_%d" % status)
        self.body = body
        super().__init__("%s (%d): %s" % (self.code, status, error.get("message", "")))


def call(session, method, path, attempts=5, **kwargs):
    """One call, tried again on no answer, 5xx and 429 (Retry-After honoured), with backoff and jitter.
    A POST is sent again with the same Idempotency-Key, so a retry never orders a second card."""
    for attempt in range(1, attempts + 1):
        try:
            res = session.request(method, BASE_URL + path, **kwargs)
        except (requests.ConnectionError, requests.Timeout):
            if attempt == attempts:
                raise
            time.sleep(random.uniform(0, min(8.0, 0.25 * 2 ** (attempt - 1))))
            continue
        if res.status_code < 400:
            return res.json()
        body = res.json() if res.headers.get("content-type", "").startswith("application/json") else res.text
        if (res.status_code == 429 or res.status_code >= 500) and attempt < attempts:
            retry_after = res.headers.get("retry-after", "")
            delay = int(retry_after) if retry_after.isdigit() else 0
            time.sleep(max(delay, random.uniform(0, min(8.0, 0.25 * 2 ** (attempt - 1)))))
            continue
        raise CardpullError(res.status_code, body)


def create_order(session, cart_id, gift_card_code, amount, wait=20):
    """POST /v1/orders with the cart's Idempotency-Key; ?wait= holds the answer until the order is final."""
    return call(
        session,
        "POST",
        "/v1/orders",
        params={"wait": wait},
        json={"gift_card_code": gift_card_code, "amount": amount, "metadata": {"cart_id": cart_id}},
        headers={"Idempotency-Key": "cart-" + cart_id},
        timeout=wait + 30,
    )["order"]


def get_order(session, order_id, wait=0):
    """GET /v1/orders/{id}, with the same long-poll."""
    return call(session, "GET", "/v1/orders/" + order_id, params={"wait": wait}, timeout=wait + 30)["order"]


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: checkout.py <cart id> <gift card code> <amount>")
    cart_id, gift_card_code, amount = argv[1], argv[2], int(argv[3])
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + API_KEY
    try:
        order = create_order(session, cart_id, gift_card_code, amount)
    except CardpullError as error:
        print(json.dumps({"status": "failed", "reason": "%s: %s" % (error.code, error)}))
        return
    if order["status"] not in FINAL:
        order = get_order(session, order["id"], wait=20)
    again = get_order(session, order["id"])
    card = again["card"]
    print(json.dumps({
        "status": again["status"],
        "order_id": again["id"],
        "idempotency_key": again["idempotency_key"],
        "card": {"code": card["code"], "pin_code": card["pin_code"], "expire_at": card["expire_at"]} if card else None,
    }))


if __name__ == "__main__":
    main(sys.argv)
