import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { root, tracked } from '../support/repo-paths';

// A reader of the repository cannot open the tracker an issue number points at, so no hand-written file
// (source, test, script, manifest or doc) names one: a comment or a test name says what the code
// guarantees instead. Generated files (proto/gen, the SDK's generated types, the lockfile) follow their
// sources, which are checked here.

/** Written by a generator from files this test reads, or by npm. */
const GENERATED = [/^proto\/gen\//, /\/generated\//, /(^|\/)package-lock\.json$/];

/**
 * The ways a text points at an issue: the word and its number (with a space, "#", "-" or "_" between),
 * the plural with a list of numbers, and a bare "#" and number after an opening bracket or a word that
 * cites one (the cases below spell each out). The verb stays free ("issues 1,000 licences"), and so do
 * colours and anchors.
 */
const ISSUE_REFERENCE = new RegExp(
  [
    String.raw`\bissue\s*[#_-]?\s*\d`,
    String.raw`\bissues\s*#\d`,
    String.raw`\bissues\s+\d+(?:\s*,\s*\d+)*\s+(?:and|or)\s+\d`,
    String.raw`(?:\(|\b(?:see|fixes|fixed|closes|closed|resolves|resolved)\s+)#\d+\b`,
  ].join('|'),
  'i',
);

/** Tracked files and new ones not yet added (git's ignore rules apply), minus the generated ones. */
const handWritten = () =>
  [...new Set([...tracked(), ...tracked('--others', '--exclude-standard')])]
    .filter((file) => !GENERATED.some((re) => re.test(file)))
    .filter((file) => existsSync(join(root, file)) && statSync(join(root, file)).isFile());

/** "path:line: text" for each line of a text file that names an issue (binary files are skipped). */
function issueReferences(file: string): string[] {
  const bytes = readFileSync(join(root, file));
  if (bytes.includes(0)) return [];
  return bytes
    .toString('utf8')
    .split('\n')
    .flatMap((line, i) => (ISSUE_REFERENCE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('references to issues', () => {
  // Built from pieces so that this file's own text names no issue.
  const says = (...parts: string[]) => parts.join('');

  // Named by the form they show, so that no test name names an issue either.
  it.each([
    ['a comment', says('// Imports (iss', 'ue 32): a file arrives in pieces')],
    ['a test name', says("it('the alerts cover what Iss", "ue 31 names')")],
    ['the word, "#" and a number', says('see iss', 'ue #', '3')],
    ['the word, "-" and a number', says('(iss', 'ue-31)')],
    ['the word in capitals, "_" and a number', says('ISS', 'UE_7')],
    ['the plural and a list', says('iss', 'ues 28 and 29')],
    ['the plural and a list with "#"', says('iss', 'ues #', '3 and #', '4')],
    ['a bare number in brackets', says('(#', '2', '7)')],
    ['a bare number after a closing word', says('fixes #', '1', '2')],
  ])('the pattern finds %s', (_form, text) => {
    expect(ISSUE_REFERENCE.test(text)).toBe(true);
  });

  it.each([
    "it('issues 1,000 licences in one batch')",
    'a burst of 10,000 at 32 connections issues 354/s',
    'color: #333;',
    'docs/api.md#imports',
    'licenses.issue(request)',
    'the issued key',
  ])('the pattern leaves %s alone', (text) => {
    expect(ISSUE_REFERENCE.test(text)).toBe(false);
  });

  it('no hand-written file of the repository names an issue', () => {
    const files = handWritten();
    // The walk reaches sources, tests and docs alike (a broken listing would pass vacuously).
    for (const expected of ['README.md', 'docs/architecture.md', 'gateway/src/app.ts', 'proto/events.ts'])
      expect(files).toContain(expected);
    expect(files.flatMap(issueReferences)).toEqual([]);
  });
});
