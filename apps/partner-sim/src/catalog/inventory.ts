import type { Inventory } from '@cardpull/partner-client';
import type { SimWorld } from '../state/world';

/**
 * The Inventory resource. Not shown by the spec, our choices: end_to_end_api.enabled is always true;
 * available_amount is "unlimited" for unlimited stock, otherwise the total face value of the remaining
 * stock in minor units, as text ("125000"); stocks has one entry per facial value with shared_quantity 0
 * ([] for unlimited stock).
 */
export function inventoryOf(world: SimWorld, code: string): Inventory | null {
  const giftCard = world.giftCards.get(code);
  const stock = world.stocks.get(code);
  if (!giftCard || !stock) return null;
  const stocks = stock.unlimited
    ? []
    : [...stock.quantities.entries()]
        .sort(([a], [b]) => a - b)
        .map(([facial_value, owned_quantity]) => ({ facial_value, owned_quantity, shared_quantity: 0 }));
  const total = stocks.reduce((sum, s) => sum + s.facial_value * s.owned_quantity, 0);
  return {
    inventories: {
      gift_card: { code: giftCard.code, name: giftCard.name },
      end_to_end_api: { enabled: true, available_amount: stock.unlimited ? 'unlimited' : String(total) },
      stocks,
    },
  };
}

/** The inventory_unlimited reading: what the Inventory of unlimited stock looks like ("unlimited", stocks []). */
export function unlimitedInventory(inventory: Inventory): Inventory {
  return { inventories: { ...inventory.inventories, end_to_end_api: { ...inventory.inventories.end_to_end_api, available_amount: 'unlimited' }, stocks: [] } };
}
