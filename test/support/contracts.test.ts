import { describe, expect, it } from 'vitest';
import { parseExposition } from './contracts.js';

const CLEAN = `# HELP app_requests_total Requests answered
# TYPE app_requests_total counter
app_requests_total{route="/a",status_code="200"} 3
app_requests_total{route="/a",status_code="500"} 0
# HELP app_up 1 when up
# TYPE app_up gauge
app_up 1
# HELP app_duration_seconds Time to answer
# TYPE app_duration_seconds histogram
app_duration_seconds_bucket{le="0.1"} 1
app_duration_seconds_bucket{le="+Inf"} 2
app_duration_seconds_sum 0.5
app_duration_seconds_count 2
`;

function problemsOf(text: string): string[] {
  return parseExposition(text).problems;
}

describe('the exposition reader', () => {
  it('accepts a well-formed exposition and reads its families, labels and values', () => {
    const { families, problems } = parseExposition(CLEAN);
    expect(problems).toEqual([]);
    expect([...families.keys()]).toEqual(['app_requests_total', 'app_up', 'app_duration_seconds']);
    expect(families.get('app_requests_total')?.samples[0]).toEqual({
      name: 'app_requests_total',
      labels: { route: '/a', status_code: '200' },
      value: 3,
    });
    expect(families.get('app_duration_seconds')?.samples.map((s) => s.name)).toEqual([
      'app_duration_seconds_bucket',
      'app_duration_seconds_bucket',
      'app_duration_seconds_sum',
      'app_duration_seconds_count',
    ]);
    expect(families.get('app_duration_seconds')?.samples[1]?.labels).toEqual({ le: '+Inf' });
    expect(families.get('app_duration_seconds')?.samples[2]?.value).toBe(0.5);
  });

  it('reads escaped quotes, backslashes and newlines in label values', () => {
    const text = '# HELP x_total x\n# TYPE x_total counter\nx_total{a="say \\"hi\\"",b="c:\\\\d",c="1\\n2"} 1\n';
    const { families, problems } = parseExposition(text);
    expect(problems).toEqual([]);
    expect(families.get('x_total')?.samples[0]?.labels).toEqual({ a: 'say "hi"', b: 'c:\\d', c: '1\n2' });
  });

  it('flags what promtool check metrics flags: _total on a gauge, a counter without _total, camelCase, non-base units', () => {
    expect(
      problemsOf(
        '# HELP nodejs_active_handles_total Handles\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 4\n',
      ),
    ).toEqual(['nodejs_active_handles_total: non-counter metrics should not have "_total" suffix']);
    expect(problemsOf('# HELP app_requests Requests\n# TYPE app_requests counter\napp_requests 1\n')).toEqual([
      'app_requests: counter metrics should have "_total" suffix',
    ]);
    expect(problemsOf('# HELP appRequests_total R\n# TYPE appRequests_total counter\nappRequests_total 1\n')).toEqual([
      'appRequests_total: metric names should be written in snake_case, not camelCase',
    ]);
    expect(
      problemsOf(
        '# HELP app_latency_milliseconds L\n# TYPE app_latency_milliseconds gauge\napp_latency_milliseconds 1\n',
      ),
    ).toEqual(['app_latency_milliseconds: use base unit instead of "milliseconds"']);
  });

  it('flags a missing HELP or TYPE, a duplicate series, and samples of one family split apart', () => {
    expect(problemsOf('# TYPE a_total counter\na_total 1\n')).toEqual(['a_total: no HELP line']);
    expect(problemsOf('# HELP a_total A\na_total 1\n')).toEqual([
      'a_total: no TYPE line',
      'a_total: non-counter metrics should not have "_total" suffix',
    ]);
    expect(problemsOf('# HELP a_total\n# TYPE a_total counter\na_total 1\n')).toEqual(['a_total: no help text']);
    expect(problemsOf('# HELP a_total A\n# TYPE a_total counter\na_total{x="1"} 1\na_total{x="1"} 2\n')).toEqual([
      'line 4: duplicate series a_total{x="1"}',
    ]);
    expect(
      problemsOf('# HELP a_total A\n# TYPE a_total counter\na_total 1\n# HELP b B\n# TYPE b gauge\nb 1\na_total 2\n'),
    ).toEqual(['line 7: samples of a_total are not grouped together']);
    expect(problemsOf('# HELP b B\n# TYPE b gauge\nc 1\n')).toEqual(['line 3: c has no HELP/TYPE of its own family']);
  });

  it('flags bad label syntax, bad values and a missing final newline', () => {
    const head = '# HELP a_total A\n# TYPE a_total counter\n';
    expect(problemsOf(`${head}a_total{x="1} 1\n`)).toEqual(['line 3: label "x" has an unterminated value']);
    expect(problemsOf(`${head}a_total{1x="1"} 1\n`)).toEqual(['line 3: bad label name "1x"']);
    expect(problemsOf(`${head}a_total{x=1} 1\n`)).toEqual(['line 3: label "x" lacks ="value"']);
    expect(problemsOf(`${head}a_total{x="\\t"} 1\n`)).toEqual(['line 3: label "x" has an invalid escape']);
    expect(problemsOf(`${head}a_total{x="1",x="2"} 1\n`)).toEqual(['line 3: label "x" repeated']);
    expect(problemsOf(`${head}a_total one\n`)).toEqual(['line 3: bad value "one"']);
    expect(problemsOf(`${head}a_total -1\n`)).toEqual(['a_total: a counter must be a non-negative number']);
    expect(problemsOf(`${head}a_total 1`)).toEqual(['the exposition does not end with a newline']);
  });
});
