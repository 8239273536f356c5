import { describe, expect, it } from 'vitest';
import { NODE_FLOOR_MAJOR, nodeFloorProblem } from './node-floor.js';

describe('the Node floor', () => {
  it('accepts Node 24 and later, and this process (the suite runs on the floor or newer)', () => {
    expect(nodeFloorProblem('24.0.0')).toBeUndefined();
    expect(nodeFloorProblem('26.10.0')).toBeUndefined();
    expect(nodeFloorProblem()).toBeUndefined();
    expect(NODE_FLOOR_MAJOR).toBe(24);
  });

  it('refuses an older Node, naming it and the way to run the right one', () => {
    const problem = nodeFloorProblem('20.20.2');
    expect(problem).toContain('needs Node.js 24 or newer, and this is 20.20.2');
    expect(problem).toContain('npm start');
    expect(nodeFloorProblem('not a version')).toBeDefined();
  });
});
