-- An attempt whose outcome was unknown (its order's money in in_doubt) that ends with a card which is not
-- the order's (a mismatch: the attempt succeeded, the card is kept as a surplus at its own cost, the order
-- needs attention): the ID's outcome is known, so the order's money goes back to reserved ('resolved').
-- Found by the chaos run. An attempt settled by the order's own card needs nothing here (the card's movement
-- takes what the order holds, wherever it is), and a re-send of the ID (state 'sent') settles nothing.
DROP TRIGGER attempts_ledger ON "attempts";
CREATE TRIGGER attempts_ledger AFTER UPDATE OF state ON "attempts" FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state
        AND (NEW.state = 'unknown' OR (NEW.state IN ('failed_definitive', 'succeeded') AND NEW.unknown_since IS NOT NULL)))
  EXECUTE FUNCTION cardpull_ledger_on_attempt();
