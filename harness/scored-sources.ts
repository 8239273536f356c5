// Sources whose primary slot gives each number a chosen 1-9 score (with a caller type) and whose
// other slots know nothing: the verdict of every number is then the score's, for tests of what
// phone clients receive.
import { fakeSource, type FakeSources } from './lookup.js';

export function scoredSources(scores: Readonly<Record<string, number>>, callerType = 'Démarchage'): FakeSources {
  return {
    primary: fakeSource('primary', (number) => {
      const score = scores[number.e164];
      if (score === undefined) return { status: 'not_found' };
      return {
        status: 'ok',
        data: {
          score,
          searches: 10,
          commentsCount: 1,
          commentList: [{ author: 'a', text: 'x', date: '01/01/2026', callerType }],
        },
      };
    }),
    community: fakeSource('community', () => ({ status: 'not_found' })),
    signals: fakeSource('signals', () => ({ status: 'not_found' })),
  };
}
