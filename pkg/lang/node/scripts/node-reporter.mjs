// redfix's node:test reporter: each test's file, describe blocks, title,
// state and error, written as one JSON document in the shape of jest's
// --json report when the run ends.
export default async function* reporter(source) {
  const files = new Map();
  const stacks = new Map();
  const file = (name) => {
    const key = name || '';
    if (!files.has(key)) {
      files.set(key, { name: key, status: 'passed', message: '', assertionResults: [] });
    }
    return files.get(key);
  };
  const stack = (err) => {
    if (!err) return '';
    const cause = err.cause && err.failureType === 'testCodeFailure' ? err.cause : err;
    return String((cause && (cause.stack || cause.message)) || cause);
  };
  const stderr = new Map();
  for await (const ev of source) {
    const d = ev.data || {};
    if (ev.type === 'test:stderr') {
      // What a file's process printed: why a file that did not load failed.
      const prev = stderr.get(d.file) || '';
      if (prev.length < 16384) stderr.set(d.file, prev + d.message);
      continue;
    }
    if (ev.type === 'test:start') {
      const s = stacks.get(d.file) || [];
      s[d.nesting] = d.name;
      s.length = d.nesting + 1;
      stacks.set(d.file, s);
      continue;
    }
    if (ev.type !== 'test:pass' && ev.type !== 'test:fail') continue;
    const details = d.details || {};
    const r = file(d.file);
    if (details.type === 'suite') {
      const err = details.error;
      if (ev.type === 'test:fail' && err && err.failureType !== 'subtestsFailed') {
        r.status = 'failed';
        r.message += (r.message ? '\n' : '') + d.name + '\n' + stack(err);
      }
      continue;
    }
    const s = (stacks.get(d.file) || []).slice(0, d.nesting);
    if (d.nesting === 0 && d.file && (d.name === d.file || details.error?.failureType === 'testCodeFailure' && !stacks.has(d.file))) {
      // The file itself failed (it did not load): no test of it ran.
      if (ev.type === 'test:fail') {
        r.status = 'failed';
        r.message += (r.message ? '\n' : '') + (stderr.get(d.file) || stack(details.error));
      }
      continue;
    }
    let status = ev.type === 'test:pass' ? 'passed' : 'failed';
    if (d.skip !== undefined || d.todo !== undefined) status = 'pending';
    r.assertionResults.push({
      ancestorTitles: s,
      title: d.name,
      status,
      failureMessages: ev.type === 'test:fail' ? [stack(details.error)] : [],
    });
    if (status === 'failed') r.status = 'failed';
  }
  yield JSON.stringify({ testResults: [...files.values()] });
}
