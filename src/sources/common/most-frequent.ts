// Choosing a number's main label (category, caller type) from its comments, one rule for every upstream.
import { dateSortKey } from './text.js';

interface Tally {
  count: number;
  newestKey: string;
  firstIndex: number;
}

/**
 * The most frequent non-empty label; a tie goes to the label with the most recent date
 * (DD/MM/YYYY), then to the one met first (pages list the newest first). "" when none.
 */
export function mostFrequentLabel(entries: readonly { label: string; date: string }[]): string {
  const tallies = new Map<string, Tally>();
  entries.forEach(({ label, date }, index) => {
    if (label === '') return;
    const tally = tallies.get(label) ?? { count: 0, newestKey: '', firstIndex: index };
    tally.count += 1;
    const key = dateSortKey(date);
    if (key > tally.newestKey) tally.newestKey = key;
    tallies.set(label, tally);
  });
  let best = '';
  let bestTally: Tally | null = null;
  for (const [label, tally] of tallies) {
    const better =
      bestTally === null ||
      tally.count > bestTally.count ||
      (tally.count === bestTally.count &&
        (tally.newestKey > bestTally.newestKey ||
          (tally.newestKey === bestTally.newestKey && tally.firstIndex < bestTally.firstIndex)));
    if (better) {
      best = label;
      bestTally = tally;
    }
  }
  return best;
}
