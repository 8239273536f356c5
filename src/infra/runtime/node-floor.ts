// The oldest Node line the service runs on: 24 LTS (supported until 2028-04-30). `engines` only
// warns, so the launcher and the CLI refuse an older Node themselves, saying how to get the right
// one (docs/dependencies.md): the npm scripts run on the Node the `node` devDependency installs.

export const NODE_FLOOR_MAJOR = 24;

/** Why this Node cannot run the service, or undefined when it can. */
export function nodeFloorProblem(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (Number.isInteger(major) && major >= NODE_FLOOR_MAJOR) return undefined;
  return `phone-reputation needs Node.js ${NODE_FLOOR_MAJOR} or newer, and this is ${version}: run it through npm (\`npm start\`, \`npx phone-rep …\`), which uses the Node that \`npm ci\` installed in node_modules/.bin, or put that folder first on PATH`;
}
