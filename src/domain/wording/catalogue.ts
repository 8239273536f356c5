// The words the service shows to people, one catalogue per language with the same keys: risk
// levels, source statuses and reasons, the caller-ID line of the text routes, and every fixed
// word of the lookup page (labels, hints, errors, empty states, relative dates, what to do next).
// The server's text answers and the page both read this one module; nothing else keeps a copy of
// these words. The page gets its language's catalogue inlined as JSON by the server
// (src/http/plugins/web-page.ts); the sources of the advice are in docs/web-page.md.
//
// The module has no import and only plain data and functions, so that its compiled form could
// also be served to the browser as it is.
export const LANGUAGES = ['fr', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

/** French is the reference catalogue: its keys are the keys of every other one. */
const fr = {
  'risk.trustworthy': 'Fiable',
  'risk.neutral': 'Neutre',
  'risk.suspicious': 'Suspect',
  // No score, though sources answered (a withheld caller is `cid.withheld`, never this: a French
  // phone shows "Inconnu" for a withheld number, so none of these words is that one).
  'risk.unknown': 'Pas de note',
  // No score because no source could answer (every one asked failed or is still on its way).
  'risk.notChecked': 'Non vérifié',
  // No score because no source covers the number (none was asked: today, a number outside the French plan).
  'risk.notCovered': 'Non couvert',

  // The caller-ID line (`/cid`): a phone's display, short, no punctuation a dialplan could misread.
  'cid.suspicious': 'SPAM? {score}/9 {category}',
  'cid.neutral': 'Neutre {score}/9',
  'cid.trustworthy': 'Fiable {score}/9',
  'cid.npv': 'Appel automatisé (NPV)',
  'cid.callCentre': 'Plateforme d’appels',
  'cid.outsideHours': 'Hors horaires légaux',
  'cid.unknown': 'Pas de note',
  'cid.notChecked': 'Non vérifié',
  'cid.notCovered': 'Non vérifié (étranger)',
  'cid.withheld': 'Masqué',
  'cid.invalid': 'Numéro invalide',
  // A rule of the operator's lists decides (docs/lists.md): `/cid` without the rule's label, and the page.
  // "Administrateur", not "opérateur": a French reader takes "l’opérateur" for Orange or SFR.
  'cid.listBlock': 'Bloqué par l’administrateur',
  'cid.listAllow': 'Autorisé par l’administrateur',
  // The deployment's own reporters (docs/reports.md "In the answers"): spam reporters and the
  // rating most of them gave (`report.*`), or the reporters who vouched for the caller.
  'cid.reported': 'SIGNALÉ {count}× {category}',
  'cid.reportedLegitimate': 'SIGNALÉ FIABLE {count}×',
  // The ratings' words (src/domain/reports/ratings.ts: the closed set every reporter's rating maps onto).
  'report.legitimate': 'Légitime',
  'report.missed': 'Appel manqué',
  'report.ping': 'Appel bref',
  'report.poll': 'Sondage',
  'report.advertising': 'Démarchage',
  'report.gamble': 'Jeux',
  'report.fraud': 'Arnaque',
  'report.political': 'Politique',
  'report.other': 'Autre',
  // The lookup page, after the operator's rule, when people of this deployment reported the number (meta.reports).
  'reports.spam#one': '{count} personne de ce service a signalé ce numéro comme indésirable ({category}).',
  'reports.spam#other': '{count} personnes de ce service ont signalé ce numéro comme indésirable ({category}).',
  'reports.legitimate#one': '{count} personne de ce service a signalé ce numéro comme fiable.',
  'reports.legitimate#other': '{count} personnes de ce service ont signalé ce numéro comme fiable.',
  'reports.blocked': 'Les appels de ce numéro sont refusés.',
  'reports.warned': 'Les appels de ce numéro sont signalés comme suspects.',
  // The lookup page, first in the results (a report or a 502), when a rule of the operator's lists decides.
  'list.block':
    'Bloqué par l’administrateur de ce service (règle {rule}) : les appels de ce numéro sont refusés, quoi qu’en disent les sources.',
  'list.allow':
    'Autorisé par l’administrateur de ce service (règle {rule}) : les appels de ce numéro passent, quoi qu’en disent les sources.',
  'list.label': 'Libellé : {label}',

  // ---- The lookup page (src/web/static). `{name}` is filled by the page; the server fills the
  // static ones into index.html before it is sent, so the page is in its language before its
  // script runs.
  'page.title': 'Réputation téléphonique : faut-il se méfier de ce numéro ?',
  'page.titleNumber': '{number} – Réputation téléphonique',
  'page.description':
    'Vérifiez un numéro de téléphone français : type de ligne, opérateur d’origine, plage d’appels automatisés (numéros polyvalents vérifiés, NPV), et ce qu’en disent trois sites de réputation, avec une note de 1 à 9 et quoi faire ensuite.',
  'page.heading': 'Réputation téléphonique',
  'page.tagline':
    'Faut-il décrocher ou rappeler ? Ce qu’est ce numéro, ce qu’en disent trois sources de réputation, et quoi faire ensuite.',
  'switch.label': 'Langue de la page',
  'switch.fr': 'FR',
  'switch.en': 'EN',
  'switch.frName': 'Français',
  'switch.enName': 'English',
  'form.label': 'Numéro de téléphone',
  'form.placeholder': '06 12 34 56 78 ou +33 6 12 34 56 78',
  'form.button': 'Vérifier',
  'form.hint': 'Chiffres nationaux (espaces, points et tirets acceptés), ou format international avec + ou 00.',
  'status.loading': 'Recherche en cours…',
  'report.label': 'Résultat de la recherche',
  'footer.data': 'Données de tellows, numeroinconnu.fr et telguarder, lues pour vous.',
  'footer.api': 'Référence de l’API',
  // The setup section (index.html, at the foot of the page): the SpamBlocker config for a phone,
  // as a QR code and a link. The app's buttons are named as its English interface names them
  // (docs/integrations/spamblocker.md).
  'setup.title': 'Filtrer les appels d’un téléphone Android (SpamBlocker)',
  'setup.steps':
    'Scannez ce code avec le téléphone, ou ouvrez le lien sur le téléphone : il affiche la configuration. Copiez-la en entier, puis dans SpamBlocker : Settings, section Instant Query, ligne Query API, New, Import ; collez-la dans la zone de texte et touchez Import.',
  'setup.qrAlt': 'Code QR : l’adresse de la configuration SpamBlocker de ce service',
  'setup.link': 'Ouvrir la configuration SpamBlocker (query.json)',

  'verdict.title': 'Verdict',
  'verdict.scale': '/ 9',
  'verdict.fromPrimary': 'Note donnée par la source principale.',
  'verdict.derived': 'Note calculée à partir des pourcentages de la communauté et des signalements.',
  'verdict.noRating': 'Aucune source n’a de note pour ce numéro.',
  'verdict.notChecked': 'Aucune source n’a pu répondre : ce numéro n’a pas été vérifié.',
  'verdict.notCovered': 'Aucune source ne couvre ce numéro : aucune n’a été interrogée.',
  'gauge.label': 'Jauge de la note',
  'gauge.none': 'Pas de note',
  'gauge.value': 'Note {score} sur 9 : {risk}',
  'gauge.trustworthy': 'fiable',
  'gauge.neutral': 'neutre',
  'gauge.suspicious': 'suspect',

  // What to do next (sources and dates in docs/web-page.md).
  'advice.title': 'Que faire ?',
  'advice.suspicious':
    'Ne rappelez pas ce numéro et ne répondez pas à ses messages. Ne donnez jamais à un appelant un code reçu par SMS, un mot de passe ou vos coordonnées bancaires, même s’il dit appeler de votre banque ou d’un service public.',
  'advice.neutral':
    'Une note de 5 sur 9 est au milieu de l’échelle (1 : fiable, 9 : suspect) : les avis sur ce numéro sont partagés. Si vous n’attendez pas cet appel, laissez l’appelant laisser un message.',
  'advice.unknown':
    'Aucune source n’a de note pour ce numéro : cela ne dit ni qu’il est fiable, ni qu’il est dangereux. Si vous ne connaissez pas l’appelant, laissez-le laisser un message.',
  'advice.notChecked':
    'Ce numéro n’a pas pu être vérifié : cela ne dit ni qu’il est fiable, ni qu’il est dangereux. Si vous ne connaissez pas l’appelant, laissez-le laisser un message.',
  'advice.notCovered':
    'Aucune des sources lues ici ne couvre ce numéro (elles lisent les numéros français) : il n’a pas été vérifié, ce qui ne dit ni qu’il est fiable, ni qu’il est dangereux. Si vous ne connaissez pas l’appelant, laissez-le laisser un message.',
  'advice.trustworthy':
    'Les sources n’ont pas de signalement inquiétant pour ce numéro. Cela ne prouve pas qui appelle : un numéro affiché peut être usurpé, alors ne donnez ni code ni coordonnées bancaires sur la seule foi d’un appel.',
  'advice.npv':
    'Ce numéro est dans une plage de numéros polyvalents vérifiés (NPV), que l’ARCEP réserve depuis le 1er janvier 2023 aux systèmes d’appels et de messages automatisés : l’appel vient d’un automate qui compose pour une entreprise. Ce n’est pas forcément une fraude.',
  'advice.callCentre':
    'Ce numéro est dans un bloc fixe ou non géographique attribué par l’ARCEP à un opérateur dont les numéros servent aux centres d’appels et au démarchage (Aircall, Onoff, Twilio, Diabolocom…) : souvent du démarchage, parfois une entreprise que vous connaissez. Si vous lui faites confiance, l’administrateur de ce service peut l’autoriser par une règle (liste d’autorisation).',
  'advice.callCentreSource': 'La liste des opérateurs et ses sources',
  'advice.outsideHours':
    'L’appel arrive hors des horaires où la loi permet le démarchage téléphonique (décret n° 2022-1313 : du lundi au vendredi, de 10 h à 13 h et de 14 h à 20 h, jamais un jour férié) : un automate ou un centre d’appels qui démarche à cette heure enfreint la loi. Depuis le 11 août 2026, le démarchage demande aussi votre accord préalable.',
  'withheld.title': 'Appels masqués',
  'withheld.text':
    'Depuis le 1er janvier 2026, les opérateurs présentent comme masqués les appels venus de l’étranger qui affichent un numéro de mobile français non authentifié : un faux 06 ou 07 d’un centre d’appels étranger arrive désormais masqué. Un appel masqué n’a pas de numéro à vérifier ; ce service lui applique le réglage VERDICT_WITHHELD de l’administrateur (autoriser par défaut, ou avertir, bloquer). Hôpitaux et police masquent souvent leur numéro : un foyer qui en reçoit peu peut les bloquer, un bureau préférera avertir.',
  'advice.answeredNone': 'Aucune des {total} sources n’a répondu.',
  'advice.answered#one': '{count} source sur {total} a répondu.',
  'advice.answered#other': '{count} sources sur {total} ont répondu.',
  'advice.reportTitle': 'Signaler',
  'advice.report33700': 'Signaler un appel ou un SMS indésirable au 33700',
  'advice.report33700Sms': 'Un SMS indésirable se transfère gratuitement au 33700.',
  'advice.reportSignalConso': 'Signaler un démarchage abusif sur SignalConso',

  'facts.title': 'Le numéro',
  'facts.national': 'Format national',
  'facts.international': 'Format international',
  'facts.type': 'Type de ligne',
  'facts.npv': 'Numéro polyvalent vérifié (NPV : appels automatisés)',
  'facts.carrier': 'Opérateur d’origine',
  'facts.region': 'Région',
  'facts.yes': 'oui',
  'facts.no': 'non',
  'facts.npvBadgeTitle': 'Plage réservée aux appels et messages automatisés',
  // meta.hints (src/domain/hints.ts), as the badges beside the number's facts.
  'hint.npv': 'NPV : appels automatisés',
  'hint.technical_platform': 'Plateforme technique d’opérateur',
  'hint.call_centre_operator': 'Plateforme d’appels',
  'hint.outside_legal_hours': 'Hors horaires légaux de démarchage',

  // phoneInfo.type in words (libphonenumber's types, docs/numbering.md).
  'line.mobile': 'mobile',
  'line.fixed_line': 'fixe',
  'line.fixed_line_or_mobile': 'fixe ou mobile',
  'line.toll_free': 'numéro gratuit',
  'line.premium_rate': 'numéro surtaxé',
  'line.shared_cost': 'numéro à coût partagé',
  'line.voip': 'voix sur IP',
  'line.personal_number': 'numéro personnel',
  'line.pager': 'radiomessagerie',
  'line.uan': 'numéro d’accès universel',
  'line.voicemail': 'messagerie vocale',
  'line.unknown': 'type inconnu',
  'line.nonGeographic': 'numéro non géographique (09)',
  'line.technicalPlatform': 'plateforme technique d’opérateur (09)',

  // phoneInfo.region of the French plan (docs/numbering.md), keyed by the French name the API gives.
  'region.France': 'France',
  'region.Île-de-France': 'Île-de-France',
  'region.Nord-Ouest': 'Nord-Ouest',
  'region.Nord-Est': 'Nord-Est',
  'region.Sud-Est': 'Sud-Est',
  'region.Sud-Ouest': 'Sud-Ouest',
  'region.La Réunion': 'La Réunion',
  'region.Mayotte': 'Mayotte',
  'region.Guadeloupe': 'Guadeloupe',
  'region.Saint-Martin': 'Saint-Martin',
  'region.Saint-Barthélemy': 'Saint-Barthélemy',
  'region.Martinique': 'Martinique',
  'region.Guyane': 'Guyane',
  'region.Saint-Pierre-et-Miquelon': 'Saint-Pierre-et-Miquelon',

  'slot.primary': 'Source principale (tellows)',
  'slot.community': 'Communauté (numeroinconnu.fr)',
  'slot.signals': 'Signalements (telguarder)',

  // meta.sources.<slot>.status, and the reason when there is one.
  'status.ok': 'a répondu',
  'status.okStale': 'copie plus ancienne',
  'status.okStaleReason': 'copie plus ancienne (la source {reason})',
  'status.not_found': 'aucune fiche pour ce numéro',
  'status.blocked': 'bloquée',
  'status.blockedReason': 'bloquée : {reason}',
  'status.error': 'erreur',
  'status.errorReason': 'erreur : {reason}',
  'status.skipped': 'non interrogée',
  'status.skippedReason': 'non interrogée : {reason}',
  'status.pending': 'réponse encore attendue',
  'status.unknown': 'état inconnu',
  'reason.timeout': 'n’a pas répondu à temps',
  'reason.connection': 'n’a pas pu être jointe',
  'reason.http_5xx': 'a eu une erreur de serveur',
  'reason.http_status': 'a répondu avec un statut inattendu',
  'reason.too_large': 'a envoyé une page trop grande pour être lue',
  'reason.redirect': 'a redirigé vers une adresse inattendue',
  'reason.decoding': 'a envoyé une page impossible à décoder',
  'reason.invalid_json': 'a envoyé des données illisibles',
  'reason.parse': 'a envoyé une page illisible',
  'reason.auth': 'a refusé notre clé d’API',
  'reason.circuit_open': 'est en panne : mise en pause un moment',
  'reason.aborted': 'a été annulée',
  'reason.http_403': 'nous a refusés (403) : en pause',
  'reason.http_429': 'nous a demandé de ralentir (429) : en pause',
  'reason.challenge': 'a répondu par un captcha',
  'reason.paused': 'est en pause après nous avoir refusés',
  'reason.budget': 'quota de requêtes épuisé pour cette minute',
  'reason.queue': 'trop de requêtes en cours vers ce site, rien n’a été envoyé',
  'reason.not_covered': 'ne couvre pas ce numéro',
  'reason.unknown': 'raison inconnue',
  'failures.title': 'Sources qui n’ont pas pu répondre',

  // A count's words: one key per plural category of the language (Intl.PluralRules: French
  // says `one` for 0 and 1), `#other` for the rest; see countWords below.
  'figure.score': 'note',
  'figure.searches#one': 'recherche',
  'figure.searches#other': 'recherches',
  'figure.comments#one': 'commentaire',
  'figure.comments#other': 'commentaires',
  'figure.danger': 'danger',
  'figure.visits#one': 'visite',
  'figure.visits#other': 'visites',
  'figure.topCategory': 'catégorie principale',
  'figure.lastComment': 'dernier commentaire',
  'figure.spamScore': 'score de spam',
  'figure.reports#one': 'signalement',
  'figure.reports#other': 'signalements',
  'figure.callerType': 'type d’appelant',
  'comments.none': 'Aucun commentaire.',
  'format.percent': '{value} %',

  'date.today': 'aujourd’hui',
  'date.yesterday': 'hier',
  'date.days#one': 'il y a {count} jour',
  'date.days#other': 'il y a {count} jours',
  'date.months#one': 'il y a {count} mois',
  'date.months#other': 'il y a {count} mois',
  'date.years#one': 'il y a {count} an',
  'date.years#other': 'il y a {count} ans',

  'error.emptyTitle': 'Pas encore de numéro',
  'error.emptyText': 'Saisissez d’abord un numéro de téléphone.',
  'error.invalidTitle': 'Ce numéro n’est pas lisible',
  'error.invalidText': 'Format de numéro invalide. Essayez 06 12 34 56 78 ou +33 6 12 34 56 78.',
  'error.tooManyTitle': 'Doucement',
  'error.tooManyText': 'Trop de requêtes : réessayez dans {seconds} s.',
  'error.tooManyTextMoment': 'Trop de requêtes : réessayez dans un instant.',
  'error.allFailedTitle': 'Aucune source n’a pu répondre',
  'error.allFailedText':
    'Toutes les sources de données ont échoué : les sites de réputation n’ont pas pu être joints. Réessayez plus tard.',
  'error.busyTitle': 'Service occupé',
  'error.busyText': 'Le service redémarre ou est surchargé : réessayez dans un instant.',
  'error.otherTitle': 'Un problème est survenu',
  'error.otherText': 'Un problème est survenu (HTTP {status}). Réessayez plus tard.',
  'error.unreachableTitle': 'Service injoignable',
  'error.unreachableText': 'Le service n’a pas pu être joint. Vérifiez votre connexion et réessayez.',
} as const;

export type WordKey = keyof typeof fr;

/** A word that depends on a count: the keys `<key>#<plural category>`, of which `#other` always exists. */
export type CountKey = { [K in WordKey]: K extends `${infer Base}#other` ? Base : never }[WordKey];

const en: Record<WordKey, string> = {
  'risk.trustworthy': 'Trustworthy',
  'risk.neutral': 'Neutral',
  'risk.suspicious': 'Suspicious',
  'risk.unknown': 'No score',
  'risk.notChecked': 'Not checked',
  'risk.notCovered': 'Not covered',

  'cid.suspicious': 'SPAM? {score}/9 {category}',
  'cid.neutral': 'Neutral {score}/9',
  'cid.trustworthy': 'Trusted {score}/9',
  'cid.npv': 'Automated call (NPV)',
  'cid.callCentre': 'Call centre',
  'cid.outsideHours': 'Outside legal hours',
  'cid.unknown': 'No score',
  'cid.notChecked': 'Not checked',
  'cid.notCovered': 'Not checked (foreign)',
  'cid.withheld': 'Withheld',
  'cid.invalid': 'Invalid number',
  'cid.listBlock': 'Blocked by the administrator',
  'cid.listAllow': 'Allowed by the administrator',
  'cid.reported': 'REPORTED {count}× {category}',
  'cid.reportedLegitimate': 'REPORTED SAFE {count}×',
  'report.legitimate': 'Legitimate',
  'report.missed': 'Missed call',
  'report.ping': 'Ping call',
  'report.poll': 'Poll',
  'report.advertising': 'Marketing',
  'report.gamble': 'Gambling',
  'report.fraud': 'Fraud',
  'report.political': 'Political',
  'report.other': 'Other',
  'reports.spam#one': '{count} person of this service reported this number as unwanted ({category}).',
  'reports.spam#other': '{count} people of this service reported this number as unwanted ({category}).',
  'reports.legitimate#one': '{count} person of this service reported this number as trustworthy.',
  'reports.legitimate#other': '{count} people of this service reported this number as trustworthy.',
  'reports.blocked': 'Calls from this number are refused.',
  'reports.warned': 'Calls from this number are flagged as suspicious.',
  'list.block':
    'Blocked by this service’s administrator (rule {rule}): calls from this number are refused, whatever the sources say.',
  'list.allow':
    'Allowed by this service’s administrator (rule {rule}): calls from this number go through, whatever the sources say.',
  'list.label': 'Label: {label}',

  'page.title': 'Phone reputation: should you trust this number?',
  'page.titleNumber': '{number} – Phone reputation',
  'page.description':
    'Look up a French phone number: its line type, original carrier and automated-calling range (NPV, French “numéros polyvalents vérifiés”), what three reputation sites say about it, with a trust score from 1 to 9, and what to do next.',
  'page.heading': 'Phone reputation',
  'page.tagline':
    'Should you pick up or call back? What the number is, what three reputation sources say about it, and what to do next.',
  'switch.label': 'Page language',
  'switch.fr': 'FR',
  'switch.en': 'EN',
  'switch.frName': 'Français',
  'switch.enName': 'English',
  'form.label': 'Phone number',
  'form.placeholder': '06 12 34 56 78 or +33 6 12 34 56 78',
  'form.button': 'Look up',
  'form.hint': 'National digits (spaces, dots and dashes allowed), or international with + or 00.',
  'status.loading': 'Looking up…',
  'report.label': 'Lookup result',
  'footer.data': 'Data from tellows, numeroinconnu.fr and telguarder, read on your behalf.',
  'footer.api': 'API reference',
  'setup.title': 'Screen the calls of an Android phone (SpamBlocker)',
  'setup.steps':
    'Scan this code with the phone, or open the link on the phone: it shows the configuration. Copy all of it, then in SpamBlocker: Settings, section Instant Query, row Query API, New, Import; paste it into the text box and tap Import.',
  'setup.qrAlt': 'QR code: the address of this service’s SpamBlocker configuration',
  'setup.link': 'Open the SpamBlocker configuration (query.json)',

  'verdict.title': 'Verdict',
  'verdict.scale': '/ 9',
  'verdict.fromPrimary': 'Score from the primary source.',
  'verdict.derived': 'Score derived from the community and signals percentages.',
  'verdict.noRating': 'No source has a rating for this number.',
  'verdict.notChecked': 'No source could answer: this number was not checked.',
  'verdict.notCovered': 'No source covers this number: none was asked.',
  'gauge.label': 'Score gauge',
  'gauge.none': 'No score',
  'gauge.value': 'Score {score} of 9: {risk}',
  'gauge.trustworthy': 'trustworthy',
  'gauge.neutral': 'neutral',
  'gauge.suspicious': 'suspicious',

  'advice.title': 'What to do',
  'advice.suspicious':
    'Do not call this number back and do not answer its messages. Never give a caller a code you received by text message, a password or your bank details, even if they say they are calling from your bank or a public service.',
  'advice.neutral':
    'A score of 5 out of 9 is the middle of the scale (1: trustworthy, 9: suspicious): opinions about this number are mixed. If you are not expecting the call, let the caller leave a message.',
  'advice.unknown':
    'No source has a rating for this number: that says neither that it is safe nor that it is dangerous. If you do not know the caller, let them leave a message.',
  'advice.notChecked':
    'This number could not be checked: that says neither that it is safe nor that it is dangerous. If you do not know the caller, let them leave a message.',
  'advice.notCovered':
    'None of the sources read here covers this number (they read French numbers): it was not checked, which says neither that it is safe nor that it is dangerous. If you do not know the caller, let them leave a message.',
  'advice.trustworthy':
    'The sources have no worrying reports about this number. That does not prove who is calling: a displayed number can be spoofed, so do not give codes or bank details on the strength of a call alone.',
  'advice.npv':
    'This number is in an NPV range (French “numéros polyvalents vérifiés”, verified multi-purpose numbers), which ARCEP (the French telecoms regulator) has reserved since 1 January 2023 for automated calling and messaging systems: the call comes from a machine dialling for a business. It is not necessarily fraud.',
  'advice.callCentre':
    'This number is in a fixed or non-geographic block that ARCEP allocated to an operator whose numbers serve call centres and telemarketing (Aircall, Onoff, Twilio, Diabolocom…): often canvassing, sometimes a business you know. If you trust it, this service’s administrator can let it through with a rule (allow list).',
  'advice.callCentreSource': 'The list of operators and its sources',
  'advice.outsideHours':
    'The call comes outside the hours when French law allows telephone canvassing (Décret n° 2022-1313: Monday to Friday, 10:00–13:00 and 14:00–20:00, never on a public holiday): an automated caller or call centre canvassing now breaks the law. Since 11 August 2026, canvassing also needs your prior consent.',
  'withheld.title': 'Withheld calls',
  'withheld.text':
    'Since 1 January 2026, French operators present as withheld the calls from abroad that show an unauthenticated French mobile number: a spoofed 06 or 07 from a foreign call centre now arrives withheld. A withheld call has no number to check; this service answers it with the administrator’s VERDICT_WITHHELD setting (allow by default, or warn, block). Hospitals and the police often withhold their number: a household that gets few such calls may block them, an office would rather warn.',
  'advice.answeredNone': 'None of the {total} sources answered.',
  'advice.answered#one': '{count} of {total} sources answered.',
  'advice.answered#other': '{count} of {total} sources answered.',
  'advice.reportTitle': 'Report it',
  'advice.report33700': 'Report an unwanted call or text message to 33700',
  'advice.report33700Sms': 'An unwanted text message can be forwarded free of charge to 33700.',
  'advice.reportSignalConso': 'Report abusive telephone canvassing on SignalConso',

  'facts.title': 'The number',
  'facts.national': 'National',
  'facts.international': 'International',
  'facts.type': 'Line type',
  'facts.npv': 'NPV range (verified multi-purpose numbers: automated calls)',
  'facts.carrier': 'Original carrier',
  'facts.region': 'Region',
  'facts.yes': 'yes',
  'facts.no': 'no',
  'facts.npvBadgeTitle': 'Range reserved for automated calls and messages',
  'hint.npv': 'NPV: automated calls',
  'hint.technical_platform': 'Operator technical platform',
  'hint.call_centre_operator': 'Call centre',
  'hint.outside_legal_hours': 'Outside legal calling hours',

  'line.mobile': 'mobile',
  'line.fixed_line': 'landline',
  'line.fixed_line_or_mobile': 'landline or mobile',
  'line.toll_free': 'toll-free number',
  'line.premium_rate': 'premium-rate number',
  'line.shared_cost': 'shared-cost number',
  'line.voip': 'internet telephony (VoIP)',
  'line.personal_number': 'personal number',
  'line.pager': 'pager',
  'line.uan': 'universal access number',
  'line.voicemail': 'voicemail',
  'line.unknown': 'unknown type',
  'line.nonGeographic': 'non-geographic number (09)',
  'line.technicalPlatform': 'operator technical platform (09)',

  'region.France': 'France',
  'region.Île-de-France': 'Île-de-France (Paris region)',
  'region.Nord-Ouest': 'north-west France',
  'region.Nord-Est': 'north-east France',
  'region.Sud-Est': 'south-east France',
  'region.Sud-Ouest': 'south-west France',
  'region.La Réunion': 'Réunion',
  'region.Mayotte': 'Mayotte',
  'region.Guadeloupe': 'Guadeloupe',
  'region.Saint-Martin': 'Saint Martin',
  'region.Saint-Barthélemy': 'Saint Barthélemy',
  'region.Martinique': 'Martinique',
  'region.Guyane': 'French Guiana',
  'region.Saint-Pierre-et-Miquelon': 'Saint Pierre and Miquelon',

  'slot.primary': 'Primary (tellows)',
  'slot.community': 'Community (numeroinconnu.fr)',
  'slot.signals': 'Signals (telguarder)',

  'status.ok': 'answered',
  'status.okStale': 'older copy',
  'status.okStaleReason': 'older copy (source {reason})',
  'status.not_found': 'no entry for this number',
  'status.blocked': 'blocked',
  'status.blockedReason': 'blocked: {reason}',
  'status.error': 'error',
  'status.errorReason': 'error: {reason}',
  'status.skipped': 'not asked',
  'status.skippedReason': 'not asked: {reason}',
  'status.pending': 'answer still on its way',
  'status.unknown': 'status unknown',
  'reason.timeout': 'did not answer in time',
  'reason.connection': 'could not be reached',
  'reason.http_5xx': 'had a server error',
  'reason.http_status': 'answered with an unexpected status',
  'reason.too_large': 'sent a page too large to read',
  'reason.redirect': 'redirected somewhere unexpected',
  'reason.decoding': 'sent a page we could not decode',
  'reason.invalid_json': 'sent data we could not read',
  'reason.parse': 'sent a page we could not read',
  'reason.auth': 'refused our API key',
  'reason.circuit_open': 'is failing; paused for a moment',
  'reason.aborted': 'was cancelled',
  'reason.http_403': 'refused us (403); paused',
  'reason.http_429': 'asked us to slow down (429); paused',
  'reason.challenge': 'answered with a captcha',
  'reason.paused': 'is paused after refusing us',
  'reason.budget': 'request budget exhausted for this minute',
  'reason.queue': 'too many requests already in flight to this site; nothing was sent',
  'reason.not_covered': 'does not cover this number',
  'reason.unknown': 'unknown reason',
  'failures.title': 'Sources that could not answer',

  'figure.score': 'score',
  'figure.searches#one': 'search',
  'figure.searches#other': 'searches',
  'figure.comments#one': 'comment',
  'figure.comments#other': 'comments',
  'figure.danger': 'danger',
  'figure.visits#one': 'visit',
  'figure.visits#other': 'visits',
  'figure.topCategory': 'top category',
  'figure.lastComment': 'last comment',
  'figure.spamScore': 'spam score',
  'figure.reports#one': 'report',
  'figure.reports#other': 'reports',
  'figure.callerType': 'caller type',
  'comments.none': 'No comments.',
  'format.percent': '{value}%',

  'date.today': 'today',
  'date.yesterday': 'yesterday',
  'date.days#one': '{count} day ago',
  'date.days#other': '{count} days ago',
  'date.months#one': '{count} month ago',
  'date.months#other': '{count} months ago',
  'date.years#one': '{count} year ago',
  'date.years#other': '{count} years ago',

  'error.emptyTitle': 'No number yet',
  'error.emptyText': 'Type a phone number first.',
  'error.invalidTitle': 'Not a phone number we can read',
  'error.invalidText': 'Invalid phone number format. Try 06 12 34 56 78 or +33 6 12 34 56 78.',
  'error.tooManyTitle': 'Slow down',
  'error.tooManyText': 'Too many requests — retry in {seconds} s.',
  'error.tooManyTextMoment': 'Too many requests — retry in a moment.',
  'error.allFailedTitle': 'No source could answer',
  'error.allFailedText': 'All data sources failed. The reputation sites could not be reached; try again later.',
  'error.busyTitle': 'Service busy',
  'error.busyText': 'The service is restarting or busy; try again in a moment.',
  'error.otherTitle': 'Something went wrong',
  'error.otherText': 'Something went wrong (HTTP {status}). Try again later.',
  'error.unreachableTitle': 'Service unreachable',
  'error.unreachableText': 'The service could not be reached. Check your connection and try again.',
};

export const CATALOGUES: Readonly<Record<Language, Readonly<Record<WordKey, string>>>> = { fr, en };

export function isLanguage(value: unknown): value is Language {
  return value === 'fr' || value === 'en';
}

/**
 * The words of `key` in `language`, with each `{name}` replaced by `params[name]`. A placeholder
 * without a value is left out (with the space before it), so a missing category never shows as
 * `{category}`.
 */
export function words(
  language: Language,
  key: WordKey,
  params: Readonly<Record<string, string | number>> = {},
): string {
  return CATALOGUES[language][key]
    .replace(/ ?\{(\w+)\}/g, (whole, name: string) => {
      const value = params[name];
      if (value === undefined || value === '') return '';
      return whole.startsWith(' ') ? ` ${value}` : String(value);
    })
    .trim();
}

const PLURAL_RULES: Readonly<Record<Language, Intl.PluralRules>> = {
  fr: new Intl.PluralRules('fr'),
  en: new Intl.PluralRules('en'),
};

/**
 * The words of a count in `language`: the key of the count's plural category (Intl.PluralRules:
 * `1 commentaire`, `0 commentaire`, `2 commentaires`; `1 comment`, `0 comments`), else its
 * `#other` form, with `{count}` filled. The page applies the same rule to the same keys.
 */
export function countWords(
  language: Language,
  key: CountKey,
  count: number,
  params: Readonly<Record<string, string | number>> = {},
): string {
  const catalogue: Readonly<Record<string, string>> = CATALOGUES[language];
  const categoryKey = `${key}#${PLURAL_RULES[language].select(count)}`;
  const chosen = (categoryKey in catalogue ? categoryKey : `${key}#other`) as WordKey;
  return words(language, chosen, { ...params, count });
}
