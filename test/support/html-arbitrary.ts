// fast-check generators of hostile HTML for parser property tests: random text, and documents
// stitched from real markers, broken tags, entities and control characters.
import fc from 'fast-check';

const FRAGMENTS = [
  '<div', '<div>', '</div>', '<p>', '</p>', '<td>', '<tr>', '<span>', '</span>', '<script>', '</script>', '<!--', '-->',
  '<style>', '<strong class="rank r1">', '<span class="date">', '<p class="comment-text">', '<div class="comment-item">',
  '<div class="comment-item comment-disabled">', '<div id="count-comments">', '<div id="progress-bar-inner">',
  '<div id="filter-rank-only">', '<strong class="comment-heading">', 'Niveau de danger :', 'Nombre de commentaires :',
  'Nombre de visites :', 'Dernière évaluation :', 'Dernière visite :', '<div class="ai-number-stats-panel">',
  '<div class="ai-row-1-cell">', '<div id="securityLevelValue" data-security-level="', '<div class="ai-assessment-body">',
  '<div class="ai-comment-text">', '<span class="ai-assessment-date">', '<span class="ai-spam-reason ai-sr-x">',
  'Commentaire de l\'utilisateur (', '84', '%', '×', '\u00a0', '\u202f', '0', '12 mars 2024', '31.02.2026', '2026-11-20',
  '&amp;', '&#0;', '&#x110000;', '&valueOf;', '&', '<', '>', '"', "'", '=', ':', '\u0000', '\u202e', '\ud800', ' ', '\n',
  '<constructor>', '<__proto__>', '<a_b', 'Dangereux', 'Gênant', 'r5', 'class=', 'id=',
];

export const hostileHtml = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 })), { maxLength: 120 }).map((parts) => parts.join('')),
  );

/** Every date the parsers output is DD/MM/YYYY or "". */
export const isOutputDate = (date: string): boolean => date === '' || /^\d{2}\/\d{2}\/\d{4}$/.test(date);

/** Scraped text holds no tag and no control or bidi character. */
export const isPlainText = (text: string): boolean =>
  // eslint-disable-next-line no-control-regex -- checking that control characters are gone is the point
  !/<\/?[a-zA-Z][^<>]*>|[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(text) && text.length <= 1000;
