/**
 * vitest globalSetup: before any test starts, the machine's prerequisites are made true or the run
 * stops with one line naming what is missing and the command that fixes it (ops/lib/prerequisites.ts).
 * Without this, a missing sipp or a stopped Redis shows up as tests waiting for peers that never come.
 */
import { ensurePrerequisites, PrerequisiteError } from '../ops/lib/prerequisites.js';

export default async function setup(): Promise<void> {
  try {
    await ensurePrerequisites();
  } catch (err) {
    if (!(err instanceof PrerequisiteError)) throw err;
    // One line, not a stack trace: the message is the whole diagnosis.
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
